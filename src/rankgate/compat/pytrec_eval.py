"""A drop-in for pytrec_eval: ``RelevanceEvaluator(qrels, {"map", "ndcg_cut.10"}).evaluate(run)``.

Change ``import pytrec_eval`` to ``from rankgate.compat import pytrec_eval`` and the same calls
return the same nested dict, ``{qid: {"map": ..., "ndcg_cut_10": ...}}``, with pytrec_eval's
measure keys (trec_eval's printed names), computed by rankgate: float64 scores and trec_eval's
tie-breaking (score descending, then doc id descending). Where the numbers can differ from
pytrec_eval's, and why, is in docs/migrating.md.

Measure requests are read as pytrec_eval reads them: ``name``, ``name.p``, ``name_p`` and lists
``name.p1,p2``; requests of one measure are merged (``P.5`` and ``P_10`` give P_5 and P_10) and a
bare cut family means trec_eval's default cutoffs unless a cutoff of it is also requested. Each
resulting key is read as `rankgate trec_eval` reads it (`rankgate.compat.trec_eval_requests.bare_measure`),
so a trec_eval name means trec_eval's measure (``rbp``, which pytrec_eval lacks, is trec_eval 10's),
and a query whose ranking is empty gets trec_eval's NaN where trec_eval's arithmetic gives one
(``iprec_at_recall_0.00``, ``11pt_avg``; `rankgate.compat.trec_nan`), as `rankgate trec_eval` prints it.

>>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
>>> run = {"q1": {"d1": 0.5, "d2": 0.9}, "q2": {"d3": 1.0}, "q9": {"d4": 1.0}}
>>> RelevanceEvaluator(qrels, {"map", "P.1,2"}).evaluate(run)
{'q1': {'map': 0.5, 'P_1': 0.0, 'P_2': 0.5}, 'q2': {'map': 1.0, 'P_1': 1.0, 'P_2': 0.5}}
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rankgate.compat.trec_eval_requests import bare_measure
from rankgate.compat.trec_nan import COUNTS, needs_counts, trec_eval_nan
from rankgate.errors import MeasureError
from rankgate.evaluation.evaluate import evaluate as _evaluate
from rankgate.measures.parse import parse_measure
from rankgate.measures.registry import Measure

# also supported_measures and supported_nicknames, made on first use (module __getattr__ below)
__all__ = ["RelevanceEvaluator", "compute_aggregated_measure"]

_LONG_CUTS: dict[str, tuple[int, ...]] = dict.fromkeys(
    ("P", "recall", "ndcg_cut", "map_cut", "relative_P"), (5, 10, 15, 20, 30, 100, 200, 500, 1000)
)
_LONG_CUTS["success"] = (1, 5, 10)
_DOUBLE_CUTS = {
    "iprec_at_recall": tuple(i / 10 for i in range(11)),
    "Rprec_mult": tuple(i / 5 for i in range(1, 11)),
}

# trec_eval's measure table order, the order of pytrec_eval's keys.
_TREC_ORDER = [
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
]

# pytrec_eval's nicknames (trec_eval 9's measure sets).
_OFFICIAL = "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P"
_SET = "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P set_map set_F"
_NICKNAMES = {"official": _OFFICIAL.split(), "set": _SET.split(), "all_trec": _TREC_ORDER}

_MIN_GEO_MEAN = 0.00001  # trec_eval's floor under a geometric mean


@dataclass(frozen=True)
class _Column:
    """One key of the output: what rankgate computes for it, and how the value is reported."""

    key: str
    measure: Measure | None  # None: a constant (num_q 1.0; runid, relstring 0.0, text in trec_eval)
    constant: float = 0.0
    log: bool = False  # gm_map, gm_bpref: pytrec_eval reports log(max(value, 1e-5)) per query


# Measures rankgate computes under another name in pytrec_eval's per-query output.
_SPECIAL: dict[str, Callable[[], _Column]] = {
    "num_q": lambda: _Column("num_q", None, constant=1.0),
    "runid": lambda: _Column("runid", None),
    "relstring": lambda: _Column("relstring", None),
    "gm_map": lambda: _Column("gm_map", parse_measure("AP"), log=True),
    "gm_bpref": lambda: _Column("gm_bpref", parse_measure("Bpref"), log=True),
}

_PARAMS = re.compile(r"^[0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*$")
_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
# trec_eval measures whose parameters are a list of numbers (set_F.0.5); pytrec_eval keys them by name alone
_NUMBER_PARAMS = frozenset({"utility", "11pt_avg", "set_F", "relstring"})


class RelevanceEvaluator:
    """pytrec_eval's evaluator: judgments and measures fixed once, then ``evaluate(run)`` per run.

    Args:
        query_relevance: ``{qid: {docid: grade}}``; queries without judgments are dropped.
        measures: pytrec_eval measure names or nicknames (``official``, ``set``, ``all_trec``).
        relevance_level: the least grade that counts as relevant (trec_eval ``-l``), >= 1.
        judged_docs_only_flag: drop unjudged documents from each ranking first (trec_eval ``-J``).

    Raises:
        ValueError: a measure rankgate does not compute (or pytrec_eval does not read), or a
            relevance level below 1; the message says which, as pytrec_eval's does.
    """

    def __init__(
        self,
        query_relevance: Mapping[str, Mapping[str, int]],
        measures: Iterable[str],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
    ) -> None:
        if isinstance(relevance_level, bool) or not isinstance(relevance_level, int) or relevance_level < 1:
            raise ValueError(f"relevance_level must be an int >= 1 in rankgate. Got {relevance_level!r}.")
        self._qrels = {str(q): {str(d): int(g) for d, g in docs.items()} for q, docs in query_relevance.items() if docs}
        self._columns = _columns(measures)
        self._rel = relevance_level
        self._judged_only = bool(judged_docs_only_flag)

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """Per-query values of the measures, for the queries in both the judgments and ``scores``.

        A query of ``scores`` with no documents is evaluated (it retrieved nothing), as in pytrec_eval.
        """
        qids = [q for q in scores if q in self._qrels]
        if not qids:
            return {}
        measures = list(dict.fromkeys(c.measure for c in self._columns if c.measure is not None))
        if needs_counts(measures):  # trec_eval's NaN for an empty ranking reads the counts
            measures = list(dict.fromkeys([*measures, *COUNTS]))
        per_query: dict[str, dict[str, float]] = {}
        if measures:
            qrels = {q: self._qrels[q] for q in qids}
            run = {q: {str(d): float(s) for d, s in scores[q].items()} for q in qids}
            results = _evaluate(
                qrels, run, measures, queries="qrels", empty="zero", rel=self._rel, judged_only=self._judged_only
            )
            per_query = results.per_query
        return {q: {c.key: _value(c, per_query.get(q, {}), self._rel) for c in self._columns} for q in qids}


def _value(column: _Column, values: Mapping[str, float], rel: int) -> float:
    if column.measure is None:
        return column.constant

    def at_rel(m: Measure) -> float:
        return float(values[str(m.with_defaults(rel=rel))])

    value = at_rel(column.measure)
    if needs_counts([column.measure]):
        num_ret, num_rel = (at_rel(m) for m in COUNTS)
        value = float(trec_eval_nan(column.measure, [value], [num_ret], [num_rel])[0])
    return math.log(max(value, _MIN_GEO_MEAN)) if column.log else value


def compute_aggregated_measure(measure: str, values: list[float]) -> float:
    """pytrec_eval's summary of per-query values: sum for ``num_*``, geometric mean for ``gm_*``, else mean."""
    import numpy as np

    if measure.startswith("num_"):
        return float(np.sum(values))
    if measure.startswith("gm_"):
        return float(np.exp(np.sum(values) / len(values)))
    return float(np.mean(values))


def _columns(measures: Iterable[str]) -> tuple[_Column, ...]:
    """The output keys of a measure request, merged as pytrec_eval merges them, in trec_eval's order."""
    if isinstance(measures, str):
        measures = [measures]
    wanted: dict[str, set[str]] = {}
    for name in _expand_nicknames(measures):
        base, params = _split(name)
        wanted.setdefault(base, set()).update(params)
    columns: list[_Column] = []
    for base in sorted(wanted, key=_trec_rank):
        columns.extend(_base_columns(base, wanted[base]))
    return tuple(columns)


def _expand_nicknames(measures: Iterable[str]) -> list[str]:
    out: list[str] = []
    for name in measures:
        if not isinstance(name, str):
            raise ValueError(f"unsupported measure {name!r}")
        # a nickname stands for the measures of its set that rankgate computes (docs/migrating.md)
        out.extend(n for n in _NICKNAMES[name] if n in _supported()) if name in _NICKNAMES else out.append(name)
    return out


def _split(name: str) -> tuple[str, list[str]]:
    """``P.5,10`` -> ("P", ["5", "10"]); ``map`` -> ("map", []); as pytrec_eval's regular expression reads it."""
    if name in _TREC_ORDER or name in _LONG_CUTS or name in _DOUBLE_CUTS:
        return name, []
    for base in sorted(_TREC_ORDER, key=len, reverse=True):
        for sep in "._":
            if name.startswith(base + sep) and _PARAMS.match(name[len(base) + 1 :]):
                return base, name[len(base) + 1 :].split(",")
    if _WORD.match(name) and _parses(name):  # a trec_eval name pytrec_eval lacks (trec_eval 10's rbp)
        return name, []
    raise ValueError(f"unsupported measure {name}")


def _trec_rank(base: str) -> int:
    return _TREC_ORDER.index(base) if base in _TREC_ORDER else len(_TREC_ORDER)


def _base_columns(base: str, params: set[str]) -> list[_Column]:
    if base in _SPECIAL:
        if params:
            raise ValueError(f"unsupported measure {base}.{','.join(sorted(params))}: {base} takes no parameters")
        return [_SPECIAL[base]()]
    if base in _LONG_CUTS:
        cutoffs = sorted({_long(base, p) for p in params}) if params else list(_LONG_CUTS[base])
        return [_column(f"{base}_{k}", f"{base}.{k}") for k in cutoffs]
    if base in _DOUBLE_CUTS:
        fractions = sorted({float(p) for p in params}) if params else list(_DOUBLE_CUTS[base])
        return [_column(f"{base}_{f:3.2f}", f"{base}.{f:g}") for f in fractions]
    if params and base not in _NUMBER_PARAMS:
        raise ValueError(f"unsupported measure {base}.{','.join(sorted(params))}: {base} takes no such parameters")
    if params:  # pytrec_eval's key is the measure's name alone ("set_F" for set_F.0.5), not trec_eval's set_F_0.5
        return [_column(base, f"{base}.{','.join(sorted(params))}")]
    return [_column(base, base)]


def _long(base: str, param: str) -> int:
    value = float(param)
    if value != int(value) or value < 1:
        raise ValueError(f"unsupported measure {base}.{param}: cutoffs are whole numbers >= 1")
    return int(value)


def _column(key: str, dotted: str) -> _Column:
    """The rankgate measure for one output key, read from the request (``set_F.0.5``), else from the
    key, a trec_eval printed name (``P_5``)."""
    for text in dict.fromkeys((dotted, key)):
        measure = _try_parse(text)
        if measure is not None:
            return _Column(key, measure)
    raise ValueError(f"unsupported measure {dotted}: {_why(dotted)}")


def _try_parse(text: str) -> Measure | None:
    try:
        return bare_measure(text)  # trec_eval's reading, as `rankgate trec_eval` has it
    except MeasureError:
        return None


def _parses(text: str) -> bool:
    return _try_parse(text) is not None


def _why(text: str) -> str:
    try:
        bare_measure(text)
    except MeasureError as exc:
        return str(exc)
    return ""  # pragma: no cover - only called after a failed parse


@functools.cache
def _supported() -> frozenset[str]:
    ok = set()
    for base in _TREC_ORDER:
        try:
            _columns([base])
        except ValueError:
            continue
        ok.add(base)
    return frozenset(ok)


def __getattr__(name: str) -> Any:
    # pytrec_eval exposes these as module attributes; computing them reads the measure registry,
    # so they are made on first use (PEP 562).
    if name == "supported_measures":
        return set(_supported())
    if name == "supported_nicknames":
        return {nick: set(names) & _supported() for nick, names in _NICKNAMES.items()}
    raise AttributeError(name)
