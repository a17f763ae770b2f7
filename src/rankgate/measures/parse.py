"""Parse measure names: canonical (``nDCG(gain=exp)@10``) and aliases (``ndcg_cut.10``, ``mrr@10``).

Canonical names are read with Python's `ast` module and a whitelist of node types, never
`eval`: ``P(rel=2)@5`` is a call matrix-multiplied by an int. Aliases from trec_eval, ranx
and plain words are rewritten to canonical form first.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import Any

from rankgate.errors import MeasureError
from rankgate.measures.registry import Measure, Reading, all_specs, all_words, reading

# An alias with a number: "ndcg_cut.10", "P_5", "mrr@10", "rbp.95"; any case. The family word
# is the shortest prefix before the number, so "map_cut_100" reads as map_cut + 100.
_WORD_NUMBER = re.compile(r"^(?P<word>[A-Za-z_\-]+?)(?P<sep>[._@])(?P<digits>\d+)$")


def parse_measure(text: str | Measure) -> Measure:
    """Parse one measure name into a `Measure`.

    >>> str(parse_measure("ndcg_cut.10")), str(parse_measure("mrr@10")), str(parse_measure("map"))
    ('nDCG@10', 'RR@10', 'AP')
    >>> str(parse_measure("P(rel=2)@5"))
    'P(rel=2)@5'
    """
    if isinstance(text, Measure):
        return text
    if not isinstance(text, str):
        raise MeasureError(f"A measure name must be a string. Got {text!r} instead.")
    name = text.strip()
    if not name:
        raise MeasureError("A measure name must not be empty.")
    alias = _parse_alias(name)
    if alias is not None:
        return alias
    return _parse_canonical(name, original=text)


def parse_measures(texts: Iterable[str | Measure]) -> list[Measure]:
    """Parse several names, dropping repeats (first occurrence wins)."""
    out: list[Measure] = []
    for t in texts:
        m = parse_measure(t)
        if m not in out:
            out.append(m)
    return out


def _family(word: str, original: str) -> Reading:
    found = reading(word)
    if found is None:
        raise MeasureError(f"Unknown measure {original!r}. {_suggest(word)}")
    return found


def _parse_alias(name: str) -> Measure | None:
    m = _WORD_NUMBER.match(name)
    if m and (found := reading(m.group("word"))) is not None:
        digits = m.group("digits")
        fixed = dict(found.fixed)
        if m.group("sep") == "." and found.dot_param is not None:
            fixed[found.dot_param] = int(digits) / 10 ** len(digits)  # ranx: rbp.95 is p = 0.95
            return Measure.make(found.family, None, **fixed)
        return Measure.make(found.family, int(digits), **fixed)
    found = reading(name)
    if found is not None and name not in _canonical_names():
        return Measure.make(found.family, None, **dict(found.fixed))
    return None


def _canonical_names() -> set[str]:
    return {s.name for s in all_specs()}


def _parse_canonical(name: str, *, original: str) -> Measure:
    try:
        tree = ast.parse(name, mode="eval").body
    except SyntaxError:
        raise MeasureError(
            f"Cannot parse measure {original!r}. Expected a name such as 'nDCG@10' or 'P(rel=2)@5'."
        ) from None
    cutoff: int | None = None
    if isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.MatMult):
        k = tree.right
        plain_digits = (ast.get_source_segment(name, k) or "").isdigit()  # not 1_0, 0x10 or 1e1
        if not (isinstance(k, ast.Constant) and isinstance(k.value, int) and plain_digits):
            raise MeasureError(f"The cutoff in {original!r} must be a whole number, as in 'nDCG@10'.")
        cutoff = k.value
        tree = tree.left
    call = tree if isinstance(tree, ast.Call) else None
    head = call.func if call is not None else tree
    if not isinstance(head, ast.Name):
        raise MeasureError(f"Cannot parse measure {original!r}. Expected a name such as 'nDCG@10' or 'P(rel=2)@5'.")
    found = _family(head.id, original)
    params: dict[str, Any] = {}
    if call is not None:
        if call.args:
            raise MeasureError(f"Parameters in {original!r} must be named, as in 'P(rel=2)@5'.")
        for kw in call.keywords:
            if kw.arg is None:
                raise MeasureError(f"Cannot parse measure {original!r}.")
            if kw.arg in params:
                raise MeasureError(f"The parameter {kw.arg!r} is given twice in {original!r}.")
            params[kw.arg] = _literal(kw.value, original)
    merged = {**dict(found.fixed), **params}
    return Measure.make(found.family, cutoff, **merged)


def _literal(node: ast.expr, original: str) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str):
        return node.value
    if isinstance(node, ast.Name):  # gain=exp: a bare word is a string
        return node.id
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value
    raise MeasureError(f"Parameter values in {original!r} must be numbers or words.")


def _suggest(word: str) -> str:
    import difflib

    names = sorted(_canonical_names() | set(all_words()))
    close = difflib.get_close_matches(word, names, n=3, cutoff=0.6)
    close += [n for n in names if n.lower() == word.lower() and n not in close]
    hint = f"Did you mean {', '.join(repr(c) for c in close)}? " if close else ""
    return hint + "Run 'rankgate measures' for the list."
