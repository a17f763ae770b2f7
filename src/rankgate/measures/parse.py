"""Parse measure names: canonical (``nDCG(gain=exp)@10``), aliases (``ndcg_cut.10``, ``mrr@10``), lists.

Canonical names are read with Python's `ast` module and a whitelist of node types, never
`eval`: ``P(rel=2)@5`` is a call matrix-multiplied by an int. Aliases from trec_eval, ranx
and plain words are rewritten to canonical form first; ir_measures' spellings
(``nDCG(cutoff=20)``, ``nDCG(dcg='exp-log2')@10``) are read as what they mean.

A name may stand for several measures, as in trec_eval: ``ndcg_cut`` is nDCG at trec_eval's
nine default cutoffs and ``P.5,10`` is P@5 and P@10. `parse_measures` expands them;
`parse_measure`, where one measure is wanted, refuses them. Every refusal is a `MeasureError`.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterable
from typing import Any

from rankgate.errors import MeasureError
from rankgate.measures.name_hints import other_tool_hint, refuse_rbp_word, suggest
from rankgate.measures.registry import Measure, MeasureSpec, Reading, all_specs, dot_reading, get_spec, reading

# Longer names are refused before parsing: it bounds the parser's time and depth.
MAX_NAME_LENGTH = 200

# An alias with numbers: "ndcg_cut.10", "P_5", "mrr@10", "rbp.95", "P.5,10"; any case. The
# family word is the shortest prefix before the numbers, so "map_cut_100" reads as map_cut + 100.
# trec_eval's number parameters: "iprec_at_recall_0.10", "Rprec_mult.0.2,0.4", "utility.1,-1,0,0".
_NUMBER = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_WORD_PARAMS = re.compile(rf"^(?P<word>[A-Za-z_]+?)[._](?P<numbers>{_NUMBER}(?:,{_NUMBER})*)$")
_WORD_NUMBERS = re.compile(r"^(?P<word>[A-Za-z_\-]+?)(?P<sep>[._@])(?P<digits>[0-9]+(?:,[0-9]+)*)$")


def parse_measure(text: str | Measure) -> Measure:
    """Parse a name of one measure into a `Measure`.

    >>> str(parse_measure("ndcg_cut.10")), str(parse_measure("mrr@10")), str(parse_measure("map"))
    ('nDCG@10', 'RR@10', 'AP')
    >>> str(parse_measure("P(rel=2)@5")), str(parse_measure("nDCG(cutoff=20)"))
    ('P(rel=2)@5', 'nDCG@20')

    Raises:
        MeasureError: the name is not a measure, or names several (``ndcg_cut``, ``P.5,10``).
    """
    measures = read_name(text)
    if len(measures) == 1:
        return measures[0]
    listed = ", ".join(str(m) for m in measures)
    raise MeasureError(
        f"{str(text).strip()!r} names {len(measures)} measures ({listed}); one is needed here, "
        f"and it needs a cutoff, as in {str(measures[0])!r}."
    )


def parse_measures(texts: Iterable[str | Measure]) -> list[Measure]:
    """Parse several names, each to one or more measures, dropping repeats (first occurrence wins).

    >>> [str(m) for m in parse_measures(["success", "P_5,10", "P@5"])]
    ['Success@1', 'Success@5', 'Success@10', 'P@5', 'P@10']
    """
    out: list[Measure] = []
    for t in texts:
        for m in read_name(t):
            if m not in out:
                out.append(m)
    return out


def read_name(text: str | Measure) -> tuple[Measure, ...]:
    """The measures one name stands for, in trec_eval's order (``P.5,10``: P@5, P@10)."""
    if isinstance(text, Measure):
        return (text,)
    if not isinstance(text, str):
        raise MeasureError(f"A measure name must be a string. Got {text!r} instead.")
    name = text.strip()
    if not name:
        raise MeasureError("A measure name must not be empty.")
    if len(name) > MAX_NAME_LENGTH:
        raise MeasureError(f"A measure name must be at most {MAX_NAME_LENGTH} characters. Got {len(name)}.")
    if not (name.isascii() and name.isprintable()):
        raise MeasureError(f"A measure name is printable ASCII, as in 'nDCG@10'. Got {name!r}.")
    if re.search(r",\s", name) and "(" not in name:
        raise MeasureError(f"Cannot parse measure {name!r}: write a list without spaces, as in 'P_5,10'.")
    refuse_rbp_word(name)  # 'rbp' alone, ranx's 'rbp@95': read two ways
    level = _RANX_LEVEL.match(name)
    if level:
        return tuple(_with_level(m, int(level.group("level")), name) for m in read_name(level.group("name")))
    trec = _trec_eval_words(name)
    if trec is not None:
        return trec
    numbered = _WORD_NUMBERS.match(name)
    if numbered and (found := _numbered_reading(numbered.group("word"), numbered.group("sep"))) is not None:
        _refuse_trec_eval_dot(numbered.group("word"), numbered.group("sep"), found, name)
        return _numbered(found, numbered.group("sep"), numbered.group("digits"), name)
    found = reading(name)
    if found is not None and name not in _canonical_names():
        return _uncut(found, name, dict(found.fixed))
    try:
        return _parse_canonical(name)
    except MeasureError as e:
        hint = other_tool_hint(name)  # ir_measures' alpha_nDCG@10: a pointer to `rankgate diversity`
        if hint is None:
            raise
        raise MeasureError(hint) from e


def _numbered_reading(word: str, sep: str) -> Reading | None:
    """The reading of ``word`` before ``sep`` and digits: a ``dot_only`` alias's family for
    ``word.digits`` (ranx's ``rbp.95`` is WeightedRBP), else the word's own."""
    return (dot_reading(word) if sep == "." else None) or reading(word)


# ranx's relevance-level suffix: "ndcg@5-l2", "precision@10-l3".
_RANX_LEVEL = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9_\-]*?(?:[@._][0-9]+)?)-l(?P<level>[0-9]+)$")


def _with_level(m: Measure, level: int, name: str) -> Measure:
    """``m`` at ranx's relevance level: ``rel`` (binary measures), or ``min_grade`` (nDCG, DCG).

    >>> str(parse_measure("ndcg@5-l2")), str(parse_measure("precision@10-l3"))
    ('nDCG(min_grade=2)@5', 'P(rel=3)@10')
    """
    names = {p.name for p in m.spec.params}
    key = "rel" if "rel" in names else "min_grade" if "min_grade" in names else None
    if key is None:
        raise MeasureError(f"Cannot parse measure {name!r}: {m.name} has no relevance level (ranx's -lN).")
    return Measure.make(m.name, m.cutoff, **{**dict(m.params), key: level})


def _numbered(found: Reading, sep: str, digits: str, name: str) -> tuple[Measure, ...]:
    """``word.k``, ``word_k``, ``word@k``; trec_eval's lists ``word.a,b`` and ``word_a,b``."""
    numbers = digits.split(",")
    if len(numbers) > 1 and sep == "@":
        listed = ", ".join(f"'{name.split('@')[0]}@{n}'" for n in numbers)
        raise MeasureError(f"Cannot parse measure {name!r}: a list is trec_eval's 'word.a,b'; or write {listed}.")
    at_param = get_spec(found.family).at_param
    out = []
    for n in numbers:
        fixed = dict(found.fixed)
        if sep == "." and found.dot_param is not None:
            fixed[found.dot_param] = int(n) / 10 ** len(n)  # ranx: rbp.95 is p = 0.95
            out.append(Measure.make(found.family, None, **fixed))
        elif sep == "@" and at_param is not None:  # ir_measures: IPrec@1 is IPrec(recall=1)
            out.append(Measure.make(found.family, None, **{**fixed, at_param: int(n)}))
        else:
            out.append(Measure.make(found.family, int(n), **fixed))
    return tuple(dict.fromkeys(out))


def _refuse_trec_eval_dot(word: str, sep: str, found: Reading, name: str) -> None:
    r"""``map.5``: trec_eval's map (it ignores ``.5``) or AP@5? Refused with both readings.

    >>> try:
    ...     parse_measure("map.5")
    ... except MeasureError as e:
    ...     print(str(e).replace("), ", "),\n"))
    'map.5' can be read two ways: trec_eval reads it as 'map' over the whole ranking (trec_eval ignores '.5'),
    or AP at cutoff 5 (write 'AP@5' or trec_eval's 'map_cut.5').
    """
    from rankgate.measures.trec_names import TREC_EVAL_NO_CUTOFF

    if sep != "." or word.lower() not in TREC_EVAL_NO_CUTOFF:
        return
    trec_word = word.lower()
    digits = name.split(".", 1)[1]
    first = digits.split(",")[0]
    cut_word = TREC_EVAL_NO_CUTOFF[trec_word]
    if trec_word in ("ndcg", "dcg"):
        trec = f"trec_eval refuses it ('{trec_word}' takes gain pairs such as '{trec_word}.1=3,2=9')"
    else:
        trec = f"trec_eval reads it as {trec_word!r} over the whole ranking (trec_eval ignores '.{digits}')"
    cut = f"'{found.family}@{first}'" + (f" or trec_eval's '{cut_word}.{first}'" if cut_word else "")
    raise MeasureError(f"{name!r} can be read two ways: {trec}, or {found.family} at cutoff {first} (write {cut}).")


def _trec_eval_words(name: str) -> tuple[Measure, ...] | None:
    """trec_eval's names whose numbers are parameters (``iprec_at_recall_0.10``, ``utility.1,-1,0,0``),
    and its text lines (``runid``), which are refused: they are not numbers."""
    from rankgate.measures.trec_names import NUMBER_PARAMS, TEXT_FIELDS, not_read_refusal
    from rankgate.measures.trec_params import read_param_form

    if (refusal := not_read_refusal(name)) is not None:  # yaap, prefs_*, *_avgjg: refused by name
        raise MeasureError(refusal)
    if name.lower() in TEXT_FIELDS:
        raise MeasureError(
            f"{name!r} is a line of trec_eval's output, not a measure: {TEXT_FIELDS[name.lower()]}. "
            "'rankgate trec_eval' prints it."
        )
    if (param_form := read_param_form(name)) is not None:  # G.1=3,2=9, 11pt_avg.0.25,0.5
        return param_form
    matched = _WORD_PARAMS.match(name)
    word = (matched.group("word") if matched else name).lower()
    if word not in NUMBER_PARAMS:
        return None
    spec = NUMBER_PARAMS[word]
    if matched is None:
        values = spec.defaults
    else:
        numbers = tuple(float(x) for x in matched.group("numbers").split(","))
        if len(spec.params) == 1:
            values = tuple((x,) for x in numbers)
        elif len(numbers) == len(spec.params):
            values = (numbers,)
        else:
            raise MeasureError(
                f"{name!r} needs {len(spec.params)} numbers ({', '.join(spec.params)}), as in "
                f"'{matched.group('word')}.{','.join('1' for _ in spec.params)}'."
            )
    made = (Measure.make(spec.family, None, **dict(zip(spec.params, v, strict=True))) for v in values)
    return tuple(dict.fromkeys(made))


def _uncut(found: Reading, word: str, params: dict[str, Any]) -> tuple[Measure, ...]:
    """A family word without a cutoff: trec_eval's cut families stand for their default cutoffs.

    ``ndcg_cut`` is nDCG at 5, 10, ..., 1000, as in trec_eval. The same word in another case
    (``NDCG_CUT``, ``Recall``) is not trec_eval's spelling: read alone it would be the uncut
    measure, so it is refused with both readings rather than read one way silently.
    """
    if found.trec_eval is None:
        return (Measure.make(found.family, None, **params),)
    trec_word, cutoffs = found.trec_eval
    expanded = tuple(Measure.make(found.family, k, **params) for k in cutoffs)
    if word == trec_word or word.startswith(trec_word + "("):
        return expanded
    if get_spec(found.family).cutoff == "required":
        other = f"one {found.family} at a cutoff (write '{found.family}@10')"
    else:
        uncut = Measure.make(found.family, None, **params)
        other = f"{uncut} without a cutoff, over the whole ranking (write {str(uncut)!r})"
    raise MeasureError(
        f"{word!r} can be read two ways: trec_eval's {trec_word!r}, {found.family} at cutoffs "
        f"{', '.join(map(str, cutoffs))} (write {trec_word!r}), or {other}."
    )


def _canonical_names() -> set[str]:
    return {s.name for s in all_specs(plugins=False)}  # a plugin found by name is already registered


def _parse_canonical(name: str) -> tuple[Measure, ...]:
    """``Family``, ``Family@k``, ``Family(param=value, ...)@k``; ir_measures' ``cutoff=`` and parameter names."""
    hint = "Expected a name such as 'nDCG@10' or 'P(rel=2)@5'."
    try:
        with warnings.catch_warnings():  # Python's SyntaxWarning ("invalid decimal literal") is not for the user
            warnings.simplefilter("ignore")
            tree = ast.parse(name, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # bounded length: these stay cheap
        raise MeasureError(f"Cannot parse measure {name!r}. {hint}") from None
    at: ast.expr | None = None
    if isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.MatMult):
        at, tree = tree.right, tree.left
    call = tree if isinstance(tree, ast.Call) else None
    head = call.func if call is not None else tree
    if not isinstance(head, ast.Name):
        raise MeasureError(f"Cannot parse measure {name!r}. {hint}")
    found = reading(head.id)
    if found is None:
        raise MeasureError(f"Unknown measure {name!r}. {suggest(head.id)}")
    spec = get_spec(found.family)
    params = _call_params(call, spec, name) if call is not None else {}
    cutoff = None if at is None or spec.at_param is not None else _cutoff(at, name)
    if at is not None and spec.at_param is not None:  # ir_measures: IPrec@0.5 is IPrec(recall=0.5)
        if spec.at_param in params:
            raise MeasureError(f"{name!r} gives {spec.at_param!r} twice: as '{spec.at_param}=' and as '@'.")
        params[spec.at_param] = _at_value(at, spec, name)
    if "cutoff" in params:  # ir_measures: nDCG(cutoff=20) is nDCG@20
        given = params.pop("cutoff")
        if cutoff is not None:
            raise MeasureError(f"{name!r} gives the cutoff twice: as 'cutoff=' and as '@'.")
        if isinstance(given, bool) or not isinstance(given, int) or given < 1:
            raise MeasureError(f"The cutoff in {name!r} must be a whole number >= 1. Got {given!r} instead.")
        cutoff = given
    merged = {**dict(found.fixed), **params}
    if cutoff is None:
        return _uncut(found, name, merged)
    return (Measure.make(found.family, cutoff, **merged),)


def _cutoff(node: ast.expr, name: str) -> int:
    plain_digits = (ast.get_source_segment(name, node) or "").isdigit()  # not 1_0, 0x10 or 1e1
    if not (isinstance(node, ast.Constant) and isinstance(node.value, int) and plain_digits):
        raise MeasureError(f"The cutoff in {name!r} must be a whole number, as in 'nDCG@10'.")
    return node.value


def _at_value(node: ast.expr, spec: MeasureSpec, name: str) -> Any:
    value = _literal(node, name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MeasureError(f"In {name!r}, '@' sets {spec.name}'s {spec.at_param!r}: a number, as in '{spec.name}@0.5'.")
    return value


def _call_params(call: ast.Call, spec: MeasureSpec, name: str) -> dict[str, Any]:
    """The named parameters of ``Family(...)``, with other tools' parameter names translated."""
    if call.args:
        raise MeasureError(f"Parameters in {name!r} must be named, as in 'P(rel=2)@5'.")
    known = {p.name for p in spec.params} | {"cutoff"}
    translated = {a.word: a for a in spec.param_aliases}
    params: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise MeasureError(f"Cannot parse measure {name!r}.")
        key, value = kw.arg, _literal(kw.value, name)
        if key in translated:
            alias = translated[key]
            values = dict(alias.values)
            if value not in values:
                choices = ", ".join(repr(v) for v in values)
                hint = f" ({alias.hint})" if alias.hint else ""
                raise MeasureError(f"{spec.name} reads '{key}=' as one of {choices}{hint}. Got {value!r} in {name!r}.")
            key, value = alias.param, values[value]
        if key not in known:
            allowed = ", ".join(sorted(known - {"cutoff"})) or "none"
            raise MeasureError(f"{spec.name} has no parameter {kw.arg!r} (parameters: {allowed}). Got {name!r}.")
        if key in params:
            raise MeasureError(f"The parameter {key!r} is given twice in {name!r}.")
        params[key] = value
    return params


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
