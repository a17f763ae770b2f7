"""Escaping of user-given text (ids, names, tags, notes) for each output format that needs it.

Each function makes text inert in one format: a spreadsheet cell (`csv_cell`), XML 1.0
(`xml_text`), GitHub Markdown (`markdown_text`, `code_span`), and trec_eval's whitespace-split
lines (`trec_id`, which refuses what the format cannot hold).
"""

from __future__ import annotations

import re

from rankgate.errors import InputError

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """``value`` safe to open in a spreadsheet: text that starts like a formula gets a leading ``'``.

    OWASP's CSV-injection advice: a cell starting with ``= + - @``, a tab or a carriage return is
    run as a formula by Excel, LibreOffice and Google Sheets. Numbers (``-0.5``, ``-inf``) stay numbers.

    >>> [csv_cell(v) for v in ["=HYPERLINK(1)", "@cmd", "-0.25", "q1", 0.5, "-x"]]
    ["'=HYPERLINK(1)", "'@cmd", '-0.25', 'q1', 0.5, "'-x"]
    """
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value


# XML 1.0 allows tab, newline, carriage return and everything from U+0020 except surrogates, U+FFFE, U+FFFF
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 forbids (each becomes U+FFFD, so the change shows).

    >>> xml_text("q\\x1b[31m\\x00")
    'q\\ufffd[31m\\ufffd'
    """
    return _XML_FORBIDDEN.sub("\ufffd", text)


_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
# Markdown punctuation that can start emphasis, code, a link or image, strikethrough, a heading or a table cell
_MD_PUNCT = re.compile(r"([\\`*\[\]()!#~|])")
# `_` opens emphasis only at a word's edge (CommonMark), so names like retrieval_recall_at_5 stay as they are
_MD_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
# a mention is @name not preceded by a word character (recall@5 is not one)
_MD_MENTION = re.compile(r"(?<![0-9A-Za-z])@")
_MD_AUTOLINK = re.compile(r"(?i)(://|www\.)")
_ZWJ = "\u200d"


def markdown_text(text: object) -> str:
    """``text`` rendered literally by GitHub Markdown, inside a paragraph or a table cell.

    Markdown punctuation is backslash-escaped (no emphasis, code, link or image: never ``![`` or
    ``](``), HTML is written as entities, ``@name`` and bare URLs get a zero-width joiner so
    GitHub neither notifies nor links, and line breaks and control characters go.

    >>> markdown_text("![x](https://e.vil/a.png) @octocat <b>")
    '\\\\!\\\\[x\\\\]\\\\(https\\u200d://e.vil/a.png\\\\) @\\u200doctocat &lt;b&gt;'
    >>> markdown_text("retrieval_recall_at_5 recall@5 bike-maintenance")
    'retrieval_recall_at_5 recall@5 bike-maintenance'
    """
    s = _CONTROLS.sub(" ", str(text))
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_PUNCT.sub(r"\\\1", s)
    s = _MD_UNDERSCORE.sub(r"\\_", s)
    s = _MD_MENTION.sub("@" + _ZWJ, s)
    return _MD_AUTOLINK.sub(lambda m: _ZWJ + m.group(1), s)


def code_span(text: object) -> str:
    """``text`` as a Markdown code span, whatever backticks it holds (nothing inside one renders).

    >>> code_span("dense_v2"), code_span("a`b"), code_span("`x")
    ('`dense_v2`', '``a`b``', '`` `x ``')
    """
    s = _CONTROLS.sub(" ", str(text))
    longest = max((len(run) for run in re.findall("`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def trec_id(qid: str) -> str:
    """``qid`` for a trec_eval line, which splits on whitespace: an id holding any is refused.

    >>> trec_id("q1"), trec_id("q\\xa0x")
    ('q1', 'q\\xa0x')
    >>> trec_id("q\\t1")
    Traceback (most recent call last):
    rankgate.errors.InputError: query id 'q\\t1' holds whitespace, which --format trec (trec_eval's \
whitespace-separated lines) cannot hold; use --format jsonl, csv or json
    """
    from rankgate.core.ids import TREC_SEPARATORS

    if qid and not any(c in TREC_SEPARATORS for c in qid):
        return qid  # U+00A0 and the like are id characters to trec_eval, which splits on ASCII whitespace only
    what = "holds whitespace" if qid else "is empty"
    raise InputError(
        f"query id {qid!r} {what}, which --format trec (trec_eval's whitespace-separated lines) "
        "cannot hold; use --format jsonl, csv or json"
    )


def plain(text: object) -> str:
    """``text`` with control characters (escape sequences, newlines) shown as ``\\xNN``.

    >>> plain("q1: \\x1b[31mred\\nline")
    'q1: \\\\x1b[31mred\\\\x0aline'
    """
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))
