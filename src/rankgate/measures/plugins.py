"""Measures from outside rankgate: a registration call, the ``rankgate.measures`` entry points, a check.

A plugin measure is a `MeasureSpec` like the built-in ones. Its kernel may be written one query
at a time on numpy arrays (`QueryArrays`), with `measure_spec` wrapping it into the block kernel
rankgate runs; its reference is a slow, obviously-right twin on doc ids, as for the built-ins.

- `register_measure(...)` registers one in this process (a notebook, a script, a conftest).
- A distribution makes it available everywhere with an entry point in the group
  ``rankgate.measures`` naming a `MeasureSpec`, a list of them, or a function returning either.
  The group is read once, the first time a measure name is not found among the built-ins or the
  measures are listed (``rankgate measures``), so a plugin never slows down the built-ins.
- `check_measure(...)` checks a kernel against its reference on randomized inputs with the
  awkward cases (ties, graded and negative grades, unjudged docs, empty rankings, queries
  without relevant documents), on both kinds of block rankgate builds, as the built-ins are
  checked. Put it in the plugin's tests.

The guide is docs/measures-plugins.md.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any, Literal

from rankgate.errors import MeasureError
from rankgate.measures import registry
from rankgate.measures.registry import Alias, Measure, MeasureSpec, ParamAlias, ParamSpec, all_specs, register

if TYPE_CHECKING:
    import numpy as np

    from rankgate.measures.block import RankedBlock
    from rankgate.measures.reference import Reference

ENTRY_POINT_GROUP = "rankgate.measures"

__all__ = [
    "ENTRY_POINT_GROUP",
    "QueryArrays",
    "QueryKernel",
    "check_measure",
    "load_entry_points",
    "measure_spec",
    "per_query",
    "register_measure",
    "temporarily_registered",
]


@dataclass(frozen=True)
class QueryArrays:
    """One query, as a per-query kernel sees it.

    Attributes:
        grades: int64, the grade of the document at each rank (``grades[0]`` is rank 1), 0 when
            the document is unjudged; the top ``k`` only when the measure has a cutoff ``k``.
        judged: bool, same length: the document at that rank has a judgment (grades may be < 0).
        judgments: int64, every grade judged for the query, largest first (the ideal ranking).
        max_grade: the largest grade in the whole qrels (for ERR-like gains).
    """

    grades: np.ndarray
    judged: np.ndarray
    judgments: np.ndarray
    max_grade: int


QueryKernel = Callable[[QueryArrays, Measure], float]


class per_query:
    """The block kernel that runs ``fn`` (a `QueryKernel`) on each query of a block.

    Rankgate's blocks may be sparse (judged rows only, with their ranks and each query's depth);
    the arrays handed to ``fn`` are always the dense ranking, so ``fn`` needs to know neither.
    """

    def __init__(self, fn: QueryKernel) -> None:
        self.fn = fn

    def __repr__(self) -> str:
        return f"per_query({getattr(self.fn, '__qualname__', self.fn)!r})"

    def __call__(self, block: RankedBlock, measure: Measure) -> np.ndarray:
        import numpy as np

        iq, ig, _ = block.ideal_grades()
        starts = np.searchsorted(iq, np.arange(block.n_queries + 1))
        out = np.zeros(block.n_queries, dtype=np.float64)
        for q in range(block.n_queries):
            depth = int(block.depth[q]) if measure.cutoff is None else min(int(block.depth[q]), measure.cutoff)
            rows = slice(int(block.offsets[q]), int(block.offsets[q + 1]))
            ranks = block.rank[rows]
            keep = ranks < depth
            grades = np.zeros(depth, dtype=np.int64)
            judged = np.zeros(depth, dtype=bool)
            grades[ranks[keep]] = block.grade[rows][keep]
            judged[ranks[keep]] = block.judged[rows][keep]
            judgments = ig[starts[q] : starts[q + 1]].astype(np.int64)
            out[q] = float(self.fn(QueryArrays(grades, judged, judgments, int(block.max_grade)), measure))
        return out


def measure_spec(
    *,
    name: str,
    summary: str,
    definition: str,
    kernel: QueryKernel,
    reference: Reference,
    params: tuple[ParamSpec, ...] = (),
    cutoff: Literal["none", "optional", "required"] = "optional",
    higher_is_better: bool = True,
    bounds: tuple[float, float] = (0.0, 1.0),
    aggregate: Literal["mean", "sum"] = "mean",
    aliases: tuple[Alias, ...] = (),
    param_aliases: tuple[ParamAlias, ...] = (),
    examples: tuple[str, ...] = (),
) -> MeasureSpec:
    """A `MeasureSpec` whose kernel is the per-query ``kernel``; the arguments are `MeasureSpec`'s.

    A vectorized kernel (all queries of a `RankedBlock` at once, as the built-ins) needs no
    wrapping: build the `MeasureSpec` directly and pass it to `rankgate.measures.registry.register`.
    """
    return MeasureSpec(
        name=name,
        summary=summary,
        definition=definition,
        kernel=per_query(kernel),
        reference=reference,
        params=params,
        cutoff=cutoff,
        higher_is_better=higher_is_better,
        bounds=bounds,
        aggregate=aggregate,
        aliases=aliases,
        param_aliases=param_aliases,
        examples=examples,
    )


def register_measure(**spec: Any) -> MeasureSpec:
    """Register a measure in this process: ``register_measure(name=..., kernel=..., reference=..., ...)``.

    Takes `measure_spec`'s arguments. Afterwards the name reads everywhere a measure name is read
    (``rankgate.evaluate``, the command line, gates).

    Raises:
        ValueError: the name or one of its aliases is already a measure.
    """
    return register(measure_spec(**spec))


@contextlib.contextmanager
def temporarily_registered(*specs: MeasureSpec) -> Iterator[None]:
    """Register ``specs`` for the ``with`` block only: for a plugin's tests, which must not leak measures.

    >>> spec = measure_spec(name="Zero", summary="0", definition="0", kernel=lambda q, m: 0.0,
    ...                     reference=lambda ranking, judgments, m, max_grade: 0.0)
    >>> with temporarily_registered(spec):
    ...     check_measure("Zero@3", seeds=range(2)) > 0
    True
    >>> "Zero" in [s.name for s in all_specs(plugins=False)]
    False
    """
    all_specs(plugins=False)
    saved = dict(registry._REGISTRY), dict(registry._WORDS)
    try:
        for spec in specs:
            register(spec)
        yield
    finally:
        registry._REGISTRY.clear()
        registry._REGISTRY.update(saved[0])
        registry._WORDS.clear()
        registry._WORDS.update(saved[1])


_loaded = False


def load_entry_points() -> bool:
    """Register the measures of the ``rankgate.measures`` entry points, once per process.

    Returns whether that registered any.

    Raises:
        MeasureError: an entry point cannot be loaded, gives something other than measure specs,
            or names a measure that already exists; the message names the entry point.
    """
    global _loaded
    if _loaded:
        return False
    _loaded = True
    before = len(all_specs(plugins=False))
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        for spec in _specs_of(entry):
            _register_from(entry, spec)
    return len(all_specs(plugins=False)) > before


def _describe(entry: metadata.EntryPoint) -> str:
    dist = getattr(entry, "dist", None)
    source = f" from {dist.name} {dist.version}" if dist is not None else ""
    return f"the measure plugin {entry.name!r} ({entry.value}{source})"


def _specs_of(entry: metadata.EntryPoint) -> list[MeasureSpec]:
    try:
        obj = entry.load()
        if callable(obj) and not isinstance(obj, MeasureSpec):
            obj = obj()
    except Exception as exc:  # a third party's import or factory: whatever it raises, say whose it is
        raise MeasureError(f"Cannot load {_describe(entry)}: {type(exc).__name__}: {exc}") from exc
    specs = [obj] if isinstance(obj, MeasureSpec) else list(obj) if isinstance(obj, list | tuple) else None
    if specs is None or not all(isinstance(s, MeasureSpec) for s in specs):
        raise MeasureError(f"{_describe(entry)} gives {type(obj).__name__}; it must give MeasureSpec values.")
    return specs


def _register_from(entry: metadata.EntryPoint, spec: MeasureSpec) -> None:
    if any(s is spec for s in all_specs(plugins=False)):  # the plugin's module registered it on import
        return
    try:
        register(spec)
    except ValueError as exc:
        raise MeasureError(f"Cannot register {_describe(entry)}: {exc}.") from None


# -- the check -------------------------------------------------------------------------


def check_measure(names: str | Iterable[str], *, seeds: Iterable[int] = range(20), n_queries: int = 12) -> int:
    """Check the kernel of each measure against its reference on randomized inputs.

    Each name (``"MyMeasure@5"``, ``"MyMeasure(alpha=0.5)"``) is parsed, then evaluated on
    random qrels and runs, by the kernel on a dense and on a sparse block (the two kinds rankgate
    builds), and by the reference one query at a time in trec_eval's order; the values must agree
    to 1e-12. Returns the number of values compared.

    Raises:
        AssertionError: the first disagreement: measure, seed, query, both values.
    """
    from rankgate.measures.parse import parse_measure

    measures = [parse_measure(n) for n in ([names] if isinstance(names, str) else names)]
    compared = 0
    for seed in seeds:
        qrels, run = random_collection(seed, n_queries=n_queries)
        qids = sorted(set(qrels) | set(run))
        max_grade = max((g for d in qrels.values() for g in d.values()), default=0)
        blocks = {kind: _block(qids, qrels, run, max_grade, sparse=kind == "sparse") for kind in ("dense", "sparse")}
        for m in measures:
            for kind, block in blocks.items():
                got = m.spec.kernel(block.head(m.cutoff), m)
                assert len(got) == len(qids), f"{m}: the kernel gave {len(got)} values for {len(qids)} queries"
                for i, qid in enumerate(qids):
                    expected = float(m.spec.reference(trec_order(run.get(qid, {})), qrels.get(qid, {}), m, max_grade))
                    value = float(got[i])
                    same = value == expected or math.isclose(value, expected, rel_tol=0.0, abs_tol=1e-12)
                    assert same, (
                        f"{m}, seed {seed}, query {qid} ({kind} block): kernel {value!r} != reference {expected!r}"
                    )
                    compared += 1
    return compared


def trec_order(scores: Mapping[str, float]) -> list[str]:
    """trec_eval's order: score descending, then doc id descending (byte-wise)."""
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0].encode()), reverse=True)]


def random_collection(
    seed: int, *, n_queries: int = 12, n_docs: int = 40, max_depth: int = 25
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Random qrels and run with ties, grades -1..3, queries on one side only, empty rankings."""
    import numpy as np

    rng = np.random.default_rng(seed)
    docs = [f"d{i}" if i % 4 else f"D{i}" for i in range(n_docs)]  # byte-wise ties: "d9" > "d10" > "D8"
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi in range(n_queries):
        qid, kind = f"q{qi}", rng.random()
        if kind > 0.1:
            judged = rng.choice(n_docs, size=int(rng.integers(1, 15)), replace=False)
            grades = rng.choice([-1, 0, 0, 1, 1, 2, 3], size=len(judged))
            if rng.random() < 0.1:
                grades = np.minimum(grades, 0)  # no relevant document
            qrels[qid] = {docs[d]: int(g) for d, g in zip(judged, grades, strict=True)}
        if kind < 0.9 or kind > 0.95:
            depth = int(rng.integers(0 if rng.random() < 0.05 else 1, max_depth))
            picked = rng.choice(n_docs, size=min(depth, n_docs), replace=False)
            run[qid] = {
                docs[d]: float(s) for d, s in zip(picked, rng.integers(0, 12, size=len(picked)) / 4.0, strict=True)
            }
    return qrels, run


def _block(
    qids: Sequence[str],
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    max_grade: int,
    *,
    sparse: bool,
) -> RankedBlock:
    """The block rankgate would build for ``qids``: every ranked row, or (sparse) the judged ones."""
    import numpy as np

    from rankgate.measures.block import RankedBlock

    rows: list[tuple[int, int, bool, int]] = []  # query, grade, judged, rank
    qrel_rows: list[tuple[int, int]] = []
    depth = []
    for q, qid in enumerate(qids):
        judgments = qrels.get(qid, {})
        ranking = trec_order(run.get(qid, {}))
        depth.append(len(ranking))
        rows.extend(
            (q, judgments.get(d, 0), d in judgments, r) for r, d in enumerate(ranking) if d in judgments or not sparse
        )
        qrel_rows.extend((q, g) for g in judgments.values())
    row = np.array(rows, dtype=np.int64).reshape(-1, 4)
    qrel = np.array(qrel_rows, dtype=np.int64).reshape(-1, 2)
    return RankedBlock(
        n_queries=len(qids),
        row_query=row[:, 0],
        grade=row[:, 1],
        judged=row[:, 2].astype(bool),
        qrel_query=qrel[:, 0],
        qrel_grade=qrel[:, 1],
        max_grade=max_grade,
        rank=row[:, 3] if sparse else None,
        depth=np.array(depth, dtype=np.int64) if sparse else None,
    )
