"""`InMemory`: the engine of this process; reads the run whole and scores it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rankgate.evaluation.engines import Job, refuse_shards
from rankgate.evaluation.results import Results


@dataclass(frozen=True)
class InMemory:
    """Evaluates a run held in memory (a path, `Run`, dict or frame)."""

    def evaluate(self, job: Job, run: Any, *, name: str | None = None, run_format: str | None = None) -> Results:
        from rankgate.evaluation.driver import evaluate_in_memory
        from rankgate.io.coerce import as_run

        refuse_shards(run)
        r = as_run(run, duplicates=job.settings.duplicates, format=run_format, name=name)
        return evaluate_in_memory(
            job.qrels, r, job.measures, job.settings, chunk_rows=job.chunk_rows, max_grade=job.max_grade
        )
