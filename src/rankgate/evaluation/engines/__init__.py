"""Where an evaluation runs: in memory, out of core, or on a Ray cluster, behind one protocol.

An `Engine` evaluates one run against a `Job` (the judgments, read once, the measures and the
`Settings`) and returns per-query `Results`:

* `local.InMemory` reads the run and scores it in this process;
* `outofcore.OutOfCore` streams a TREC or Parquet run into query partitions on disk and
  evaluates them one group at a time within a memory budget;
* `ray.OnRay` spreads query partitions of a sharded run over a Ray cluster.

All three give the same `Results`, bit for bit: query partitions are independent and merge
exactly (`Results.merge`). `make_engine` turns the options (``engine=``, ``memory=``,
``partitions=``, ``ray_address=``) into one, checking them in one place.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from rankgate.errors import ConfigError

if TYPE_CHECKING:  # light at import: the command line reads ENGINES while building its options
    from rankgate.core.qrels import Qrels
    from rankgate.evaluation.results import Results
    from rankgate.evaluation.settings import Settings
    from rankgate.measures.registry import Measure

ENGINES: tuple[str, ...] = ("local", "ray")  # also bench --engine


@dataclass(frozen=True)
class Job:
    """What every run of an evaluation session is scored with.

    Attributes:
        qrels: the judgments, read once.
        measures: the measures, parsed, with the settings' ``rel`` applied.
        settings: the policies.
        chunk_rows: ranked rows per block; bounds memory, never changes results.
        max_grade: the largest grade of the whole qrels when ``qrels`` is a part of them.
    """

    qrels: Qrels
    measures: tuple[Measure, ...]
    settings: Settings
    chunk_rows: int = 1_000_000
    max_grade: int | None = None

    @classmethod
    def read(
        cls,
        qrels: Any,
        measures: str | Measure | Iterable[str | Measure],
        settings: Settings,
        *,
        qrels_format: str | None = None,
        chunk_rows: int = 1_000_000,
        max_grade: int | None = None,
    ) -> Job:
        """Check the options, parse the measures, then read ``qrels`` (a `Qrels`, path, dict or frame)."""
        from rankgate.io.coerce import as_qrels
        from rankgate.measures.parse import parse_measures
        from rankgate.measures.registry import Measure

        if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
            raise ConfigError(f"The 'chunk_rows' parameter must be an int >= 1. Got {chunk_rows!r} instead.")
        if isinstance(measures, str | Measure):
            measures = [measures]
        wanted = tuple(m.with_defaults(rel=settings.rel) for m in parse_measures(measures))
        if not wanted:
            raise ConfigError("No measure given: pass at least one, e.g. 'nDCG@10'.", key_path="measures")
        from rankgate.evaluation.chunking import check_chunk_map, judgments_of

        check_chunk_map(settings)
        q = as_qrels(judgments_of(qrels, settings, qrels_format=qrels_format), duplicates=settings.duplicates,
                     format=qrels_format)  # fmt: skip
        return cls(q, wanted, settings, chunk_rows, max_grade)

    @property
    def top_grade(self) -> int:
        """The gain ceiling every query partition shares (ERR, exponential gains)."""
        if self.max_grade is not None:
            return self.max_grade
        return int(self.qrels.grades.max()) if self.qrels.num_rows else 0


class Engine(Protocol):
    """Evaluates runs against a `Job`; every engine returns the in-memory `Results`, bit for bit."""

    def evaluate(self, job: Job, run: Any, *, name: str | None = None, run_format: str | None = None) -> Results:
        """Evaluate ``run`` (a path; on Ray also a folder, glob or list of shards; in memory also
        a `Run`, dict or frame), named ``name`` (default: its own name or file stem)."""
        ...


# Most query partitions one evaluation may use: each is a file (or a Ray task); 4096 split any
# run finely enough, and an absurd count (10**10) would fill the disk with empty files.
MAX_PARTITIONS = 4096
# File descriptors left for everything but the partition files (the run, the qrels, Python, SQLite).
FD_RESERVE = 64


def open_file_allowance() -> int:
    """How many partition files this process may keep open at once (its open-file limit less `FD_RESERVE`)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows has no RLIMIT_NOFILE
        return MAX_PARTITIONS
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_PARTITIONS
    return max(1, int(soft) - FD_RESERVE)


def check_partitions(partitions: Any, *, files: bool) -> int | None:
    """``partitions`` as an int in 1..`MAX_PARTITIONS` (and, when each is an open file, within the open-file limit).

    Raises:
        ConfigError: naming the parameter, the limit and how to raise it.
    """
    if partitions is None:
        return None
    if isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1:
        raise ConfigError(f"The 'partitions' parameter must be an int >= 1. Got {partitions!r} instead.")
    if partitions > MAX_PARTITIONS:
        raise ConfigError(
            f"The 'partitions' parameter must be at most {MAX_PARTITIONS} (one file per partition). "
            f"Got {partitions} instead."
        )
    allowed = open_file_allowance()
    if files and partitions > allowed:
        raise ConfigError(
            f"The 'partitions' parameter must be at most {allowed}: the out-of-core engine keeps one file open per "
            f"partition while it splits the run, and this process may open {allowed + FD_RESERVE} files (ulimit -n), "
            f"{FD_RESERVE} of them kept for the rest. Got {partitions} instead; give fewer partitions or raise the "
            "limit (ulimit -n)."
        )
    return partitions


def check_ray_address(engine: str | None, address: str | None) -> None:
    """A Ray address is only for the Ray engine (``--ray-address needs --engine ray``)."""
    if address is not None and engine != "ray":
        raise ConfigError("--ray-address needs --engine ray")


def make_engine(
    engine: str | Engine = "local",
    *,
    memory: str | int | None = None,
    partitions: int | None = None,
    ray_address: str | None = None,
) -> Engine:
    """The engine the options name: in memory by default, out of core with ``memory`` (when the
    run is larger than it) or ``partitions`` (always), Ray with ``engine="ray"``."""
    if not isinstance(engine, str):
        return engine
    if engine not in ENGINES:
        message = f"The 'engine' parameter must be one of {ENGINES}. Got {engine!r} instead."
        raise ConfigError(message, key_path="engine")
    check_ray_address(engine, ray_address)
    check_partitions(partitions, files=engine != "ray")
    if engine == "ray":
        from rankgate.evaluation.engines.ray import OnRay

        return OnRay(address=ray_address, partitions=partitions)
    if memory is None and partitions is None:
        from rankgate.evaluation.engines.local import InMemory

        return InMemory()
    from rankgate.evaluation.engines.outofcore import OutOfCore, parse_memory

    if memory is not None:
        parse_memory(memory)  # a bad budget fails before any reading
    return OutOfCore(memory=memory, partitions=partitions, when_larger=partitions is None)


def refuse_shards(run: Any) -> None:
    """Several shard files make one run only on Ray."""
    if isinstance(run, list | tuple):
        raise ConfigError("a run given as several shards needs --engine ray", key_path="run")
