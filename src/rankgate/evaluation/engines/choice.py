"""Where an evaluation runs: in memory, out of core, or on a Ray cluster, behind one call.

`EngineChoice.evaluate` takes paths (a run may be a folder or glob of shards on Ray) and
returns per-query `Results` that equal an in-memory evaluation bit for bit, so `compare`,
`gate` and the store work on them as on any other results.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rankgate.core.qrels import Qrels
from rankgate.errors import ConfigError
from rankgate.evaluation.results import Results
from rankgate.measures.registry import Measure

ENGINES: tuple[str, ...] = ("local", "ray")  # also bench --engine


@dataclass(frozen=True)
class EngineChoice:
    """How to evaluate.

    Attributes:
        kind: ``local`` (this process) or ``ray``.
        address: the Ray cluster (None: the running one, or a new local one).
        memory: a budget such as ``"4GB"``: inputs that do not fit are evaluated out of core.
        partitions: query partitions (out of core or Ray); on the local engine it forces
            out-of-core evaluation.
    """

    kind: str = "local"
    address: str | None = None
    memory: str | None = None
    partitions: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ENGINES:
            raise ConfigError(f"must be local or ray. Got {self.kind!r} instead.", key_path="engine")
        if self.address is not None and self.kind != "ray":
            raise ConfigError("a Ray address needs the ray engine (--engine ray)", key_path="ray_address")

    def evaluate(
        self,
        qrels: str | os.PathLike[str],
        run: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        measures: str | Measure | Sequence[str | Measure],
        *,
        name: str | None = None,
        qrels_format: str | None = None,
        run_format: str | None = None,
        judgments: Qrels | None = None,
        **options: Any,
    ) -> Results:
        """Evaluate the run at ``run`` against ``qrels`` where this choice says.

        ``judgments`` are ``qrels`` already read: the in-memory path uses them instead of
        reading the file again (out of core and Ray read it in partitions themselves).
        ``options`` are `rankgate.evaluate`'s (``queries=``, ``ties=``, ``rel=``, ...).
        """
        formats: dict[str, Any] = {"qrels_format": qrels_format, "run_format": run_format}
        if self.kind == "ray":
            from rankgate.evaluation.engines.ray import evaluate_ray

            return evaluate_ray(
                qrels, run, measures, address=self.address, partitions=self.partitions, name=name, **formats, **options
            )
        if not isinstance(run, str | os.PathLike):
            raise ConfigError("a run given as several shards needs --engine ray", key_path="run")
        if self.partitions is not None or (self.memory is not None and not _fits(qrels, run, self.memory)):
            from rankgate.evaluation.engines.outofcore import evaluate_out_of_core

            return evaluate_out_of_core(
                qrels, run, measures, memory=self.memory or "2GB", partitions=self.partitions, name=name,
                **formats, **options,
            )  # fmt: skip
        from rankgate.evaluation.evaluate import evaluate
        from rankgate.io.readers import read_qrels, read_run

        duplicates = options.get("duplicates", "error")
        return evaluate(
            judgments if judgments is not None else read_qrels(qrels, format=qrels_format, duplicates=duplicates),
            read_run(run, format=run_format, duplicates=duplicates, name=name),
            measures,
            **options,
        )


def _fits(qrels: Any, run: Any, memory: str) -> bool:
    from rankgate.evaluation.engines.outofcore import fits_in_memory, parse_memory

    return bool(fits_in_memory(qrels, run, parse_memory(memory)))
