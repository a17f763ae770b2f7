"""trec_eval's command line as a library call: its measure requests, its query set, its summary.

`trec_eval` evaluates a run the way ``trec_eval [-q] [-c] [-l N] [-J] [-M N] -m ... QRELS RUN``
does and returns a `TrecEvalReport`, the rows trec_eval prints, in its order; the text itself
is `rankgate.render.trec_eval.trec_eval_text`. The numbers are rankgate's own evaluation
(`Session`); this module speaks trec_eval's language on top of it:

- a request ``name[.params]`` names a trec_eval measure or a nickname (``official``,
  ``all_trec``, ``set``); its printed names (``P_5``, ``iprec_at_recall_0.10``) come from
  trec_eval's parameter rules (cutoffs sorted, the first ``-m`` with parameters wins), and each
  printed name is read by rankgate's measure parser into a canonical measure;
- measures are printed in trec_eval's table order, queries in byte order of their ids, the
  summary (``all``) last, with ``runid`` (the last run line's tag) and ``num_q``;
- without ``complete`` only queries in both files are evaluated; with it every qrels query is,
  one missing from the run being scored against trec_eval's stand-in ranking (a single unjudged
  document, ``num_ret`` then set back to 0), so that ``num_rel`` keeps its value.

>>> [p.name for p in expand_requests(["P.10,5", "map"])]
['map', 'P_5', 'P_10']
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import InputError, MeasureError
from rankgate.evaluation.results import Results
from rankgate.evaluation.session import Session
from rankgate.evaluation.settings import Settings
from rankgate.io.readers import read_run
from rankgate.io.trec import last_run_tag
from rankgate.measures.parse import parse_measure
from rankgate.measures.registry import Measure

Kind = Literal["runid", "num_q", "long", "float", "long_cuts", "double_cuts", "float_params", "pair_params", "string"]

_DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class TrecMeasure:
    """One of trec_eval's measures (a row of its measure table).

    Attributes:
        name: trec_eval's name, e.g. ``P``.
        kind: how its parameters read and its values print: ``long`` values print as integers,
            ``long_cuts`` / ``double_cuts`` are one value per cutoff (``P_5``,
            ``iprec_at_recall_0.10``), ``float_params`` / ``pair_params`` are one value whose
            printed name carries the parameters when given (``set_F_0.5``).
        defaults: the cutoffs used when the request gives none.
        per_query: whether ``-q`` prints it for each query (``gm_map`` is a summary only).
    """

    name: str
    kind: Kind
    defaults: tuple[float, ...] = ()
    per_query: bool = True


def _m(name: str, kind: Kind, defaults: tuple[float, ...] = (), per_query: bool = True) -> TrecMeasure:
    return TrecMeasure(name, kind, defaults, per_query)


_TENTHS = tuple(i / 10 for i in range(11))
_RPREC_MULT = tuple(i / 10 for i in range(2, 21, 2))

# trec_eval 10's measure table, in its order (the order in which it computes and prints).
TREC_MEASURES: tuple[TrecMeasure, ...] = (
    _m("runid", "runid", per_query=False),
    _m("num_q", "num_q", per_query=False),
    _m("num_ret", "long"),
    _m("num_rel", "long"),
    _m("num_rel_ret", "long"),
    _m("map", "float"),
    _m("gm_map", "float", per_query=False),
    _m("Rprec", "float"),
    _m("bpref", "float"),
    _m("recip_rank", "float"),
    _m("iprec_at_recall", "double_cuts", _TENTHS),
    _m("P", "long_cuts", _DEFAULT_CUTOFFS),
    _m("relstring", "string"),
    _m("recall", "long_cuts", _DEFAULT_CUTOFFS),
    _m("infAP", "float"),
    _m("gm_bpref", "float", per_query=False),
    _m("Rprec_mult", "double_cuts", _RPREC_MULT),
    _m("utility", "float_params"),
    _m("11pt_avg", "float_params"),
    _m("binG", "float"),
    _m("G", "pair_params"),
    _m("dcg", "pair_params"),
    _m("ideal_dcg", "pair_params"),
    _m("ndcg", "pair_params"),
    _m("ndcg_rel", "pair_params"),
    _m("Rndcg", "pair_params"),
    _m("ndcg_cut", "long_cuts", _DEFAULT_CUTOFFS),
    _m("map_cut", "long_cuts", _DEFAULT_CUTOFFS),
    _m("relative_P", "long_cuts", _DEFAULT_CUTOFFS),
    _m("success", "long_cuts", (1, 5, 10)),
    _m("set_P", "float"),
    _m("set_relative_P", "float"),
    _m("set_recall", "float"),
    _m("set_map", "float"),
    _m("set_F", "float_params"),
    _m("num_nonrel_judged_ret", "long"),
    _m("yaap", "float"),
    _m("rbp", "float_params"),
    _m("rbp_resid", "float_params"),
)
_BY_NAME = {m.name: m for m in TREC_MEASURES}


# trec_eval 10's nicknames (measures.c); a nickname marks each of its measures.
def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": _words("runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P"),
    "all_trec": _words(
        "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P recall "
        "infAP gm_bpref utility 11pt_avg ndcg relative_P Rprec_mult success map_cut ndcg_cut ndcg_rel Rndcg "
        "binG G set_P set_recall set_relative_P set_map set_F num_nonrel_judged_ret"
    ),
    "set": _words("runid num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P set_map set_F"),
}

# trec_eval's stand-in ranking for a query missing from the run under -c, and the values it
# then sets back to 0 (trec_eval.c: num_ret, utility, rbp_resid and the unj* measures).
BOGUS_DOC = "ceci_nest_pas_un_docno"


def _reset_for_missing(name: str) -> bool:
    return name in ("num_ret", "utility", "rbp_resid") or name.startswith("unj")


@dataclass(frozen=True)
class Printed:
    """One printed measure: trec_eval's name for it and the canonical measure that computes it.

    ``measure`` is None for ``runid`` and ``num_q``, which trec_eval prints from the files.
    """

    name: str
    source: TrecMeasure
    measure: Measure | None = None

    @property
    def integer(self) -> bool:
        return self.source.kind in ("long", "num_q")


@dataclass
class TrecEvalReport:
    """What trec_eval prints, as values: per-query rows (if asked) then the summary rows.

    Attributes:
        printed: the printed measures, in trec_eval's order.
        per_query: ``(printed name, query id, value, integer)`` rows, queries in byte order.
        summary: ``(printed name, value, integer)`` rows, ``runid``'s value a string.
        results: rankgate's own `Results` behind the numbers (every evaluated query).
    """

    printed: list[Printed]
    per_query: list[tuple[str, str, float, bool]] = field(default_factory=list)
    summary: list[tuple[str, float | str, bool]] = field(default_factory=list)
    results: Results | None = None


def expand_requests(requests: Iterable[str]) -> list[Printed]:
    """trec_eval's ``-m`` requests as printed measures, in trec_eval's order.

    A request is ``name`` or ``name.params``; a nickname marks all its measures. As in trec_eval,
    the first request of a measure that gives parameters sets them (``-m P.5 -m P.10`` is P_5
    alone) and long cutoffs are sorted. Each printed name is read by `parse_measure`.

    Raises:
        MeasureError: the name is not one of trec_eval's, its parameters are malformed, or
            rankgate has no measure for it (the message names it).
    """
    marked: set[str] = set()
    params: dict[str, str] = {}
    for request in requests:
        name, dot, given = str(request).partition(".")
        if dot and not given:
            raise MeasureError(f"trec_eval request {request!r} has a '.' but no parameters after it.")
        if dot:
            params.setdefault(name, given)
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in _BY_NAME:
            marked.add(name)
        else:
            raise MeasureError(
                f"{name!r} is not a trec_eval measure or nickname (request {request!r}); trec_eval's "
                f"nicknames are {', '.join(NICKNAMES)}; `rankgate measures` lists rankgate's names."
            )
    out: list[Printed] = []
    for m in TREC_MEASURES:
        if m.name in marked:
            out.extend(_printed(m, params.get(m.name)))
    return out


def _printed(m: TrecMeasure, given: str | None) -> list[Printed]:
    if m.kind in ("runid", "num_q"):
        return [Printed(m.name, m)]
    if m.kind == "string":
        raise MeasureError(f"trec_eval's {m.name!r} prints a string per query; rankgate does not compute it.")
    if m.kind in ("long", "float"):
        if given is not None:
            raise MeasureError(f"trec_eval's {m.name!r} takes no parameters. Got {m.name}.{given}.")
        return [Printed(m.name, m, _canonical(m.name, m.name))]
    if m.kind == "long_cuts":
        cuts = _long_cutoffs(m.name, given) if given is not None else [int(c) for c in m.defaults]
        return [Printed(f"{m.name}_{k}", m, _canonical(f"{m.name}_{k}", m.name)) for k in cuts]
    if m.kind == "double_cuts":
        values = _double_cutoffs(m.name, given) if given is not None else list(m.defaults)
        names = [f"{m.name}_{v:3.2f}" for v in values]
        return [Printed(n, m, _canonical(n, m.name)) for n in names]
    if given is not None:
        raise MeasureError(
            f"rankgate's trec_eval does not take parameters for {m.name!r} yet (got {m.name}.{given}); "
            "rankgate's own measure names can say them: see `rankgate measures`."
        )
    return [Printed(m.name, m, _canonical(m.name, m.name))]


def _long_cutoffs(name: str, given: str) -> list[int]:
    try:
        cuts = sorted(int(c) for c in given.split(","))
    except ValueError:
        raise MeasureError(f"The cutoffs of trec_eval's {name!r} must be whole numbers. Got {given!r}.") from None
    if cuts[0] <= 0:
        raise MeasureError(f"The cutoffs of trec_eval's {name!r} must be > 0. Got {given!r}.")
    if len(set(cuts)) != len(cuts):
        raise MeasureError(f"The cutoffs of trec_eval's {name!r} repeat a value. Got {given!r}.")
    return cuts


def _double_cutoffs(name: str, given: str) -> list[float]:
    try:
        values = sorted(float(c) for c in given.split(","))
    except ValueError:
        raise MeasureError(f"The cutoffs of trec_eval's {name!r} must be numbers. Got {given!r}.") from None
    if not all(math.isfinite(v) for v in values) or len(set(values)) != len(values):
        raise MeasureError(f"The cutoffs of trec_eval's {name!r} must be distinct finite numbers. Got {given!r}.")
    return values


def _canonical(printed: str, trec_name: str) -> Measure:
    try:
        return parse_measure(printed)
    except MeasureError as e:
        raise MeasureError(
            f"trec_eval's {trec_name!r} (printed as {printed!r}) is not available in rankgate: {e}"
        ) from None


def trec_eval(
    qrels: str | os.PathLike[str],
    run: str | os.PathLike[str],
    measures: Sequence[str] = ("official",),
    *,
    per_query: bool = False,
    complete: bool = False,
    summary: bool = True,
    rel: int = 1,
    judged_only: bool = False,
    max_per_topic: int | None = None,
    docs_in_collection: int | None = None,
) -> TrecEvalReport:
    """Evaluate a TREC run file as ``trec_eval`` would, with these options.

    Args:
        qrels, run: TREC files (``qid iter docid grade``; ``qid Q0 docid rank score tag``).
        measures: ``-m`` requests, e.g. ``["official"]``, ``["P.5,10", "ndcg_cut"]``.
        per_query: ``-q``: rows for each query too.
        complete: ``-c``: average over every qrels query (missing from the run: scored as trec_eval does).
        summary: ``not -n``: the summary rows.
        rel: ``-l``: the least grade that counts as relevant.
        judged_only: ``-J``: drop unjudged documents from each ranking first.
        max_per_topic: ``-M``: keep each query's top N documents (after ranking).
        docs_in_collection: ``-N``: read and checked; no measure rankgate computes uses it.

    Raises:
        MeasureError: a request trec_eval would refuse, or a measure rankgate lacks.
        InputError: a file trec_eval would refuse, with ``file:line``; or no query to evaluate.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "qrels").write_text("q1 0 a 1\\nq1 0 b 0\\n")
        >>> _ = (d / "run").write_text("q1 Q0 b 1 2.0 mine\\nq1 Q0 a 2 1.0 mine\\n")
        >>> report = trec_eval(d / "qrels", d / "run", ["map", "P.1,2"])
        >>> report.summary
        [('map', 0.5, False), ('P_1', 0.0, False), ('P_2', 0.5, False)]
    """
    for flag, value in (("-l", rel), ("-M", max_per_topic), ("-N", docs_in_collection)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise MeasureError(f"trec_eval's {flag} takes a whole number. Got {value!r}.")
    if max_per_topic is not None and max_per_topic < 0:
        raise MeasureError(f"trec_eval's -M takes a number >= 0. Got {max_per_topic}.")
    printed = expand_requests(measures)
    wanted = list(dict.fromkeys(p.measure for p in printed if p.measure is not None))
    if rel < 1:
        raise MeasureError(f"rankgate's trec_eval takes -l >= 1 (grades below it are not relevant). Got {rel}.")
    settings = Settings(queries="intersection", rel=rel, judged_only=judged_only)
    session = Session.open(str(qrels), wanted, settings=settings)
    ranked = read_run(run)
    if max_per_topic is not None:
        ranked = _truncated(ranked, max_per_topic)
    results = session.evaluate(ranked)
    missing = _missing_queries(session.qrels, ranked) if complete else []
    if missing:
        stand_in = Run.from_dict({q: {BOGUS_DOC: 1.0} for q in missing})
        results = Results.merge([results, session.evaluate(stand_in, name=results.run_name)])
    if not results.query_ids:
        raise InputError("No queries with both results and relevance info (as trec_eval says)", source=str(run))
    report = TrecEvalReport(printed=printed, results=results)
    columns = _columns(printed, wanted, results, set(missing))
    if per_query:
        report.per_query = _per_query_rows(printed, columns, results.query_ids)
    if summary:
        report.summary = _summary_rows(printed, columns, results, wanted, last_run_tag(str(run)))
    return report


def _truncated(run: Run, depth: int) -> Run:
    """``run`` with each query's documents past rank ``depth`` dropped (trec_eval's -M)."""
    order = run.ranking_order("trec")
    rank = np.arange(run.num_rows) - np.repeat(run.offsets[:-1], run.depths)
    keep = order[rank < depth]
    codes = np.repeat(np.arange(run.num_queries), run.depths)[rank < depth]
    return Run(
        run.query_ids.take(codes),
        run.doc_ids.take(keep),
        run.scores[keep],
        name=run.name,
        source=run.source,
    )


def _missing_queries(qrels: Qrels, run: Run) -> list[str]:
    in_run = set(run.query_ids.to_pylist())
    return [q for q in qrels.query_ids.to_pylist() if q not in in_run]


def _columns(printed: list[Printed], wanted: list[Measure], results: Results, missing: set[str]) -> list[np.ndarray]:
    """Each printed measure's per-query values (in ``results.query_ids`` order), trec_eval's resets applied."""
    reset = np.array([q in missing for q in results.query_ids], dtype=bool)
    out = []
    for p in printed:
        if p.measure is None:
            out.append(np.ones(len(results.query_ids)))  # num_q: 1 per query; runid: unused
            continue
        column = results.values[:, wanted.index(p.measure)]
        if reset.any() and _reset_for_missing(p.name):
            column = np.where(reset, 0.0, column)
        out.append(column)
    return out


def _per_query_rows(
    printed: list[Printed], columns: list[np.ndarray], query_ids: list[str]
) -> list[tuple[str, str, float, bool]]:
    shown = [(p, c.tolist()) for p, c in zip(printed, columns, strict=True) if p.source.per_query]
    return [(p.name, q, values[i], p.integer) for i, q in enumerate(query_ids) for p, values in shown]


def _summary_rows(
    printed: list[Printed], columns: list[np.ndarray], results: Results, wanted: list[Measure], runid: str
) -> list[tuple[str, float | str, bool]]:
    """trec_eval's summary: a running sum in query order, divided by the number of queries (counts: the sum)."""
    n = len(results.query_ids)
    rows: list[tuple[str, float | str, bool]] = []
    for p, column in zip(printed, columns, strict=True):
        if p.source.kind == "runid":
            rows.append((p.name, runid, False))
            continue
        if p.source.kind == "num_q":
            rows.append((p.name, float(n), True))
            continue
        assert p.measure is not None
        total = 0.0
        for v in column.tolist():
            total += v
        how = p.measure.spec.aggregate
        if how == "sum":
            rows.append((p.name, total, p.integer))
        elif how == "mean":
            rows.append((p.name, total / n, p.integer))
        else:  # another rule (a geometric mean): rankgate's own aggregate
            rows.append((p.name, results.aggregate[results.names[wanted.index(p.measure)]], p.integer))
    return rows
