"""`evaluate`: score a run against qrels with trec_eval's semantics, on any engine.

The one evaluation entry point of the library and the command line: it gathers the
`Settings`, opens a `Session` (reads the qrels once, picks the engine) and evaluates the run.
The scoring itself is `rankgate.evaluation.driver.evaluate_in_memory`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rankgate.evaluation.driver import versions as versions  # re-exported: it lived here
from rankgate.evaluation.engines import Engine
from rankgate.evaluation.results import Results
from rankgate.evaluation.session import Session
from rankgate.evaluation.settings import Settings
from rankgate.measures.registry import Measure


def evaluate(
    qrels: Any,
    run: Any,
    measures: str | Measure | Iterable[str | Measure],
    *,
    settings: Settings | Mapping[str, Any] | None = None,
    queries: str | None = None,
    ties: str | None = None,
    rel: int | None = None,
    empty: str | None = None,
    duplicates: str | None = None,
    judged_only: bool | None = None,
    drop_self: bool | None = None,
    engine: str | Engine = "local",
    memory: str | int | None = None,
    partitions: int | None = None,
    ray_address: str | None = None,
    name: str | None = None,
    qrels_format: str | None = None,
    run_format: str | None = None,
    chunk_rows: int = 1_000_000,
    max_grade: int | None = None,
    disjoint: str = "allow",
) -> Results:
    """Evaluate ``run`` against ``qrels``.

    Args:
        qrels: a `Qrels`, a path, ``{qid: {docid: grade}}``, ``{qid: [docid, ...]}`` or a DataFrame.
        run: a `Run`, a path, ``{qid: {docid: score}}`` or a DataFrame; with ``engine="ray"`` a
            folder, glob or list of shard files.
        measures: names such as ``"nDCG@10"``, ``"recall@100"``, ``"P(rel=2)@5"``, or `Measure` values.
        settings: the six policies at once (`Settings` or a mapping); the keywords below
            override single ones. Default: ``Settings()``.
        queries, ties, rel, empty, duplicates, judged_only, drop_self: each overrides one policy
            of ``settings``; `Settings` says what each means.
        engine: "local" (this process) or "ray" (a Ray cluster), or an `Engine`.
        memory: a budget such as "4GB": a run file larger than that is evaluated out of core.
        partitions: query partitions (out of core or Ray); on the local engine it forces out of core.
        ray_address: the Ray cluster (``engine="ray"`` only; default: the running one or a new local one).
        name: the run's name (default: its own, or the file stem).
        qrels_format, run_format: the files' formats (default: from extension and content).
        chunk_rows: ranked rows per block; bounds memory, never changes results.
        max_grade: the largest grade of the whole qrels, when ``qrels`` is one query partition
            of it (ERR's default gain ceiling); default: the largest grade in ``qrels``.
        disjoint: "error" refuses a run that shares no query with the qrels (the command line's
            default: a wrong file would score 0 everywhere); "allow" evaluates it, with warnings.

    Returns:
        `Results` with aggregates, per-query values, query accounting and settings; equal, bit
        for bit, on every engine.

    Examples:
        Ties in score are broken by doc id descending, as in trec_eval, so "d2" comes first:

        >>> qrels = {"q1": {"d1": 1}}
        >>> run = {"q1": {"d1": 5.0, "d2": 5.0}}
        >>> evaluate(qrels, run, "RR")["RR"]
        0.5
        >>> evaluate(qrels, run, "RR", ties="input")["RR"]
        1.0

        AP@k divides by every relevant doc of the query, not only those above the cutoff:

        >>> qrels = {"q1": {"a": 1, "b": 1}}
        >>> run = {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}}
        >>> evaluate(qrels, run, ["AP@1", "AP"]).aggregate
        {'AP@1': 0.5, 'AP': 0.8333333333333333}
    """
    given = {"queries": queries, "ties": ties, "rel": rel, "empty": empty, "duplicates": duplicates}
    flags = {"judged_only": judged_only, "drop_self": drop_self}
    policies = {k: v for k, v in {**given, **flags}.items() if v is not None}
    session = Session.open(
        qrels,
        measures,
        settings=Settings.of(settings, **policies),
        engine=engine,
        memory=memory,
        partitions=partitions,
        ray_address=ray_address,
        qrels_format=qrels_format,
        chunk_rows=chunk_rows,
        max_grade=max_grade,
        disjoint=disjoint,
    )
    return session.evaluate(run, name=name, run_format=run_format)
