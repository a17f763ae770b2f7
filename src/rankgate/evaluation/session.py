"""`Session`: judgments read once, evaluated against any number of runs on one engine.

`rankgate.evaluate` is a session of one run; ``compare``, ``gate``, ``store add`` and the demo
open one session and evaluate every run in it, so the qrels are read once whatever the engine
(in memory, out of core, Ray).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rankgate.core.qrels import Qrels
from rankgate.errors import ConfigError, InputError
from rankgate.evaluation.engines import Engine, Job, make_engine
from rankgate.evaluation.results import Results
from rankgate.evaluation.settings import Settings
from rankgate.measures.registry import Measure

DISJOINT: tuple[str, ...] = ("allow", "error")


@dataclass(frozen=True)
class Session:
    """A `Job` (qrels, measures, settings) and the `Engine` that evaluates runs against it.

    >>> s = Session.open({"q1": {"d1": 1}}, ["P@1", "RR"])
    >>> [s.evaluate(run)["RR"] for run in ({"q1": {"d1": 2.0}}, {"q1": {"d0": 3.0, "d1": 2.0}})]
    [1.0, 0.5]
    """

    job: Job
    engine: Engine
    disjoint: str = "allow"  # "error": a run sharing no query with the qrels is an InputError

    @classmethod
    def open(
        cls,
        qrels: Any,
        measures: str | Measure | Iterable[str | Measure],
        *,
        settings: Settings | Mapping[str, Any] | None = None,
        engine: str | Engine = "local",
        memory: str | int | None = None,
        partitions: int | None = None,
        ray_address: str | None = None,
        qrels_format: str | None = None,
        chunk_rows: int = 1_000_000,
        max_grade: int | None = None,
        disjoint: str = "allow",
    ) -> Session:
        """Check the options, pick the engine, then read ``qrels`` (once).

        Args:
            qrels: a `Qrels`, a path, ``{qid: {docid: grade}}``, ``{qid: [docid, ...]}`` or a DataFrame.
            measures: names such as ``"nDCG@10"`` or `Measure` values.
            settings: the policies (`Settings`, a mapping, or the defaults).
            engine, memory, partitions, ray_address: where runs are evaluated (`make_engine`).
            qrels_format: the qrels file's format (default: from its extension and content).
            chunk_rows, max_grade: as in `rankgate.evaluate`.
            disjoint: "error" refuses a run that shares no query with the qrels (a wrong file,
                which would otherwise score 0 everywhere); "allow" evaluates it (warnings say so).
        """
        if disjoint not in DISJOINT:
            raise ConfigError(f"The 'disjoint' parameter must be one of {DISJOINT}. Got {disjoint!r} instead.")
        chosen = make_engine(engine, memory=memory, partitions=partitions, ray_address=ray_address)
        job = Job.read(
            qrels,
            measures,
            Settings.of(settings),
            qrels_format=qrels_format,
            chunk_rows=chunk_rows,
            max_grade=max_grade,
        )
        return cls(job, chosen, disjoint)

    @property
    def qrels(self) -> Qrels:
        return self.job.qrels

    @property
    def measures(self) -> list[Measure]:
        return list(self.job.measures)

    @property
    def settings(self) -> Settings:
        return self.job.settings

    def evaluate(self, run: Any, *, name: str | None = None, run_format: str | None = None) -> Results:
        """Evaluate one run (a path, `Run`, dict or frame; on Ray a folder, glob or list of shards)."""
        results = self.engine.evaluate(self.job, run, name=name, run_format=run_format)
        if self.disjoint == "error":
            _check_shared_queries(self.job.qrels, results)
        return results

    def evaluate_all(
        self, runs: Sequence[Any], *, names: Sequence[str | None] | None = None, run_format: str | None = None
    ) -> list[Results]:
        """Evaluate every run in order; ``names`` gives each its name (default: its own)."""
        given = list(names) if names else [None] * len(runs)
        given += [None] * (len(runs) - len(given))
        return [self.evaluate(r, name=n, run_format=run_format) for r, n in zip(runs, given, strict=False)]


def _check_shared_queries(qrels: Qrels, results: Results) -> None:
    """A run with results but none for a qrels query is almost always the wrong file: refuse it."""
    facts = results.facts
    if facts is None or not facts.run_rows or not qrels.num_queries:
        return
    if results.queries.get("missing_from_run") != qrels.num_queries:
        return
    run = results.run_name or "the run"
    judged = qrels.source or "the qrels"
    example = f" (e.g. {facts.run_only_ids[0]!r})" if facts.run_only_ids else ""
    raise InputError(
        f"{run} shares no query with {judged}: its {results.queries.get('run_only', 0)} queries{example} "
        f"are not among the {qrels.num_queries} judged ones, so every score would be 0. Is it the run "
        "for these judgments? Pass --allow-disjoint (disjoint='allow') to evaluate it anyway"
    )
