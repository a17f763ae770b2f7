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

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankgate.compat.trec_eval_requests import (
    NICKNAMES,
    RBP_NOTE,
    TREC_MEASURES,
    Printed,
    check_gain_order,
    expand_requests,
    ignored_notes,
    rbp_named,
)
from rankgate.compat.trec_nan import COUNTS, needs_counts, trec_eval_nan
from rankgate.core.columns import take_rows
from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import DuplicateError, InputError, MeasureError
from rankgate.evaluation.results import Results
from rankgate.evaluation.session import Session
from rankgate.evaluation.settings import Settings
from rankgate.io.readers import read_run
from rankgate.io.run_tag import last_run_tag
from rankgate.measures.registry import Measure

__all__ = ["NICKNAMES", "TREC_MEASURES", "Printed", "TrecEvalReport", "expand_requests", "trec_eval"]

# trec_eval's stand-in ranking for a query missing from the run under -c, and the values it
# then sets back to 0 (trec_eval.c, by printed name: num_ret, utility, rbp_resid, unj*, and relstring to '').
BOGUS_DOC = "ceci_nest_pas_un_docno"


def _reset_for_missing(name: str) -> bool:
    return name in ("num_ret", "utility", "rbp_resid", "relstring") or name.startswith("unj")


@dataclass
class TrecEvalReport:
    """What trec_eval prints, as values: per-query rows (if asked) then the summary rows.

    Attributes:
        printed: the printed measures, in trec_eval's order.
        per_query: ``(printed name, query id, value, integer)`` rows, queries in byte order.
        summary: ``(printed name, value, integer)`` rows, ``runid``'s value a string.
        results: rankgate's own `Results` behind the numbers (every evaluated query).
        notes: what a caller should tell the user beside the numbers (the CLI prints them on stderr).
    """

    printed: list[Printed]
    per_query: list[tuple[str, str, float | str, bool]] = field(default_factory=list)
    summary: list[tuple[str, float | str, bool]] = field(default_factory=list)
    results: Results | None = None
    notes: list[str] = field(default_factory=list)


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
        docs_in_collection: ``-N``: documents in the collection (the ``d`` term of ``utility.a,b,c,d``).

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
    if max_per_topic is not None and max_per_topic < 1:
        raise MeasureError(
            f"rankgate's trec_eval takes -M >= 1 (trec_eval's -M 0 evaluates empty rankings, which "
            f"rankgate's runs cannot hold). Got {max_per_topic}."
        )
    printed = expand_requests(measures, docs_in_collection=docs_in_collection or 0)
    wanted = list(dict.fromkeys(p.measure for p in printed if p.measure is not None))
    if not wanted or needs_counts(wanted):  # also when only text is asked
        wanted = list(dict.fromkeys([*wanted, *COUNTS]))
    if rel < 1:
        raise MeasureError(f"rankgate's trec_eval takes -l >= 1 (grades below it are not relevant). Got {rel}.")
    settings = Settings(queries="intersection", rel=rel, judged_only=judged_only)
    with _duplicates_refused("qrels"):
        session = Session.open(str(qrels), wanted, settings=settings)
    for m in wanted:
        check_gain_order(m, int(session.qrels.grades.max(initial=0)))
    with _duplicates_refused("a run"):
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
    report = TrecEvalReport(printed=printed, results=results, notes=ignored_notes(measures))
    if rbp_named(measures):  # asked for by name; all_trec's rbp line is the reference build's, unremarked
        report.notes.append(RBP_NOTE)
    if any(p.source.name == "ideal_dcg" for p in printed):
        report.notes.extend(_ideal_dcg_notes(session.qrels, results.query_ids))
    columns = _columns(printed, wanted, results, set(missing))
    for i, p in enumerate(printed):
        if p.source.kind == "string" and per_query:
            columns[i] = _relstrings(session.qrels, ranked, results.query_ids, p.length, judged_only)
            if missing and _reset_for_missing(p.name):  # trec_eval clears "relstring" only, by name
                columns[i] = [("''" if q in missing else s) for q, s in zip(results.query_ids, columns[i], strict=True)]
    if per_query:
        report.per_query = _per_query_rows(printed, columns, results.query_ids)
    if summary:
        report.summary = _summary_rows(printed, columns, results, wanted, last_run_tag(str(run)))
    return report


@contextmanager
def _duplicates_refused(what: str) -> Iterator[None]:
    """A duplicate in the qrels or run refused with a hint that fits trec_eval's command line.

    The readers' hint names ``--duplicates``, an option `rankgate eval` has and trec_eval lacks.
    """
    try:
        yield
    except DuplicateError as e:
        remedy = f"trec_eval refuses them too; `rankgate eval --duplicates first|max` reads such {what}"
        raise e.with_remedy(remedy) from None


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


def _ideal_dcg_notes(qrels: Qrels, query_ids: list[str]) -> list[str]:
    """A note when a query's judgments are all negative: trec_eval's ideal_dcg then reads stale counts."""
    wanted = set(query_ids)
    stale = sorted(q for q, docs in qrels.to_dict().items() if q in wanted and max(docs.values()) < 0)
    if not stale:
        return []
    return [
        f"note: {len(stale)} quer{'y has' if len(stale) == 1 else 'ies have'} only negative grades "
        f"({', '.join(stale[:3])}{', ...' if len(stale) > 3 else ''}): rankgate prints ideal_dcg 0 there; "
        "trec_eval 10.0-rc2 prints a value left from the query before (docs/semantics.md)."
    ]


def _missing_queries(qrels: Qrels, run: Run) -> list[str]:
    in_run = set(run.query_ids.to_pylist())
    return [q for q in qrels.query_ids.to_pylist() if q not in in_run]


def _relstrings(qrels: Qrels, run: Run, query_ids: list[str], length: int, judged_only: bool) -> list[str]:
    """trec_eval's relstring of each query: the grades of its top ``length`` docs, quoted.

    A grade prints as its digit (``>`` above 9), a doc the qrels do not list as ``-``, one
    listed with a negative grade as ``.``; under ``-J`` only the docs judged >= 0 are ranked.
    A query missing from the run (``-c``) shows trec_eval's stand-in doc, ``'-'`` (``''`` under -J).
    """
    order = run.ranking_order("trec")
    rank = np.arange(run.num_rows) - np.repeat(run.offsets[:-1], run.depths)
    rows = order if judged_only else order[rank < length]
    codes = np.repeat(np.arange(run.num_queries), run.depths)[slice(None) if judged_only else rank < length]
    docs = take_rows(run.doc_ids, rows).to_pylist()
    qids = run.query_ids.to_pylist()
    qids_in_run = set(qids)
    wanted = set(query_ids)
    grades = {q: g for q, g in qrels.to_dict().items() if q in wanted}
    found: dict[str, list[str]] = {q: [] for q in wanted}
    for code, doc in zip(codes.tolist(), docs, strict=True):
        qid = qids[code]
        chars = found.get(qid)
        if chars is None or len(chars) >= length:
            continue
        g = grades[qid].get(doc)
        if judged_only and (g is None or g < 0):
            continue
        chars.append("-" if g is None else "." if g < 0 else ">" if g > 9 else str(g))
    stand_in = "" if judged_only or length < 1 else "-"
    return [f"'{''.join(found[q]) if q in qids_in_run else stand_in}'" for q in query_ids]


def _columns(printed: list[Printed], wanted: list[Measure], results: Results, missing: set[str]) -> list[Any]:
    """Each printed measure's per-query values (in ``results.query_ids`` order), trec_eval's resets applied."""
    reset = np.array([q in missing for q in results.query_ids], dtype=bool)
    out: list[Any] = []
    for p in printed:
        if p.measure is None:
            out.append(np.ones(len(results.query_ids)))  # num_q: 1 per query; runid: unused
            continue
        column = results.values[:, wanted.index(p.measure)]
        if needs_counts([p.measure]):  # trec_eval's NaN for an empty ranking (rankgate.compat.trec_nan)
            num_ret, num_rel = (results.values[:, wanted.index(m)] for m in COUNTS)
            column = trec_eval_nan(p.measure, column, num_ret, num_rel)
        if reset.any() and _reset_for_missing(p.name):
            column = np.where(reset, 0.0, column)
        out.append(column)
    return out


def _per_query_rows(
    printed: list[Printed], columns: list[Any], query_ids: list[str]
) -> list[tuple[str, str, float | str, bool]]:
    shown = [(p, list(c)) for p, c in zip(printed, columns, strict=True) if p.source.per_query]
    return [(p.name, q, values[i], p.integer) for i, q in enumerate(query_ids) for p, values in shown]


def _summary_rows(
    printed: list[Printed], columns: list[Any], results: Results, wanted: list[Measure], runid: str
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
        if p.source.kind == "string":  # relstring: per query only
            continue
        assert p.measure is not None
        # added in query order, left to right, as trec_eval does (np.cumsum is sequential, not pairwise)
        total = float(np.cumsum(column)[-1])
        how = p.measure.spec.aggregate
        if how == "sum":
            rows.append((p.name, total, p.integer))
        elif how == "mean":
            rows.append((p.name, total / n, p.integer))
        else:  # another rule (a geometric mean): rankgate's own aggregate
            rows.append((p.name, results.aggregate[results.names[wanted.index(p.measure)]], p.integer))
    return rows
