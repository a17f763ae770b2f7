"""Reading the texts a judge needs: a corpus and queries in BEIR JSONL, JSON or TSV, and checking they fit.

The reader is `rankgate.io.texts` (shared with the benchmark datasets and ``rankgate retrieve``);
a judge sees a document as its title, a blank line, and its text. `require_some_text` stops a
command whose ids find no text at all (``--queries`` and ``--corpus`` swapped, the wrong file),
which would otherwise judge an empty pool and succeed with empty outputs.

>>> import tempfile, pathlib
>>> f = pathlib.Path(tempfile.mkdtemp()) / "corpus.jsonl"
>>> _ = f.write_text('{"_id": "d1", "title": "Tea", "text": "Brew at 80 C."}\\n')
>>> read_texts(f)
{'d1': 'Tea\\n\\nBrew at 80 C.'}
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from rankgate.errors import InputError
from rankgate.io.texts import ID_KEYS, TEXT_KEYS, read_texts

__all__ = ["ID_KEYS", "TEXT_KEYS", "read_texts", "require_some_text"]


def require_some_text(
    wanted: Iterable[str],
    texts: Collection[str],
    *,
    subject: str,
    option: str,
    path: str,
    other: Collection[str] | None = None,
    other_option: str = "",
    ask: str = "is it the right file?",
) -> None:
    """Raise `InputError` when no id of ``wanted`` is among ``texts`` (read from ``option PATH``).

    Some ids without text are only left out (and counted) by the commands; none at all is a
    wrong file. When the ids are those of ``other`` (the file given as ``other_option``), the
    two options were most likely swapped, and the message says so; else it asks ``ask``.
    No ids wanted: nothing to check.

    >>> require_some_text(["q1"], {"d1": "Tea"}, subject="run query", option="--queries", path="corpus.jsonl",
    ...                   other={"q1": "tea?"}, other_option="--corpus")
    Traceback (most recent call last):
    ...
    rankgate.errors.InputError: no run query has text in --queries corpus.jsonl; did you swap --queries and --corpus? \
('q1' is an id of --corpus)
    """
    first = swapped = None
    for i in wanted:  # one pass, nothing kept: a run's doc ids are millions, and the first usually has text
        if i in texts:
            return
        first = i if first is None else first
        if swapped is None and other is not None and i in other:
            swapped = i
    if first is None:
        return
    if swapped is not None:
        hint = f"did you swap {option} and {other_option}? ({swapped!r} is an id of {other_option})"
    else:
        hint = f"{ask} (e.g. {first!r} is not in it)"
    raise InputError(f"no {subject} has text in {option} {path}; {hint}")
