"""A pytest plugin: assert retrieval quality on a labeled set in a project's own tests.

Installed with rankgate (entry point ``pytest11: rankgate``), it provides the
``rankgate_check`` fixture::

    def test_retrieval_quality(rankgate_check):
        rankgate_check("tests/data/qrels.txt", "tests/data/run.txt", {"R@5": 0.85, "RR@10": 0.6})

and, without the fixture, `assert_quality`::

    from rankgate.pytest_plugin import assert_quality

    def test_search():
        run = {qid: my_search(text) for qid, text in QUERIES.items()}
        assert_quality(QRELS, run, {"recall@5": 0.85, "mrr@10": 0.6})

Qrels and runs may be paths, `Qrels`/`Run` objects, dicts or DataFrames; measure names may be
any name rankgate accepts (``recall@5``, ``ndcg_cut.10``, ``nDCG@10``). Each value is a floor:
the mean over the queries must be at least that much (differences under 1e-9 are float
noise). A failure lists every measure below its floor, its value, the floor and the worst
queries. The fixture also records the values as the test's ``user_properties`` (they show in
``--junitxml`` reports).

Nothing heavy is imported until a check runs, so the plugin costs pytest's start-up nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from rankgate.evaluation.results import Results

__all__ = ["QualityFailure", "assert_quality", "check_quality", "rankgate_check"]

EPS = 1e-9  # as in rankgate.gate.decide: 0.8499999999 meets a floor of 0.85
WORST_QUERIES = 5


@dataclass(frozen=True)
class Shortfall:
    """One measure below its floor."""

    measure: str  # canonical name
    asked_as: str  # the name the test used
    value: float
    floor: float
    worst: list[tuple[str, float]]  # (query id, value), lowest first
    zeros: int  # queries that score 0
    n_queries: int


class QualityFailure(AssertionError):
    """Retrieval quality below a floor; ``shortfalls`` and ``results`` say by how much and where."""

    def __init__(self, message: str, shortfalls: list[Shortfall], results: Results) -> None:
        super().__init__(message)
        self.shortfalls = shortfalls
        self.results = results


def check_quality(
    qrels: Any,
    run: Any,
    floors: Mapping[str, float],
    *,
    worst: int = WORST_QUERIES,
    **options: Any,
) -> tuple[Results, list[Shortfall]]:
    """Evaluate ``run`` and list the measures whose mean is below their floor.

    Args:
        qrels: a path, `Qrels`, ``{qid: {docid: grade}}`` or a DataFrame.
        run: a path, `Run`, ``{qid: {docid: score}}`` or a DataFrame.
        floors: ``{measure name: lowest acceptable mean}``, e.g. ``{"R@5": 0.85}``.
        worst: how many of the lowest-scoring queries a shortfall keeps.
        **options: evaluation semantics passed to `rankgate.evaluate` (``queries``, ``ties``,
            ``rel``, ``empty``, ``duplicates``, ``judged_only``).

    Returns:
        The `Results` and the shortfalls (empty when every floor is met).

    Raises:
        ConfigError: ``floors`` is empty, a floor is not a finite number, or two names are
            the same measure.
        MeasureError: a measure name is unknown.
        InputError: the qrels or the run cannot be read.
    """
    from rankgate.errors import ConfigError
    from rankgate.evaluation.evaluate import evaluate
    from rankgate.measures.parse import parse_measure

    if not isinstance(floors, Mapping) or not floors:
        raise ConfigError(
            "floors must be a non-empty mapping of measure names to minimum values, e.g. {'R@5': 0.85}. "
            f"Got {floors!r} instead."
        )
    if isinstance(worst, bool) or not isinstance(worst, int) or worst < 0:
        raise ConfigError(f"The 'worst' parameter must be an int >= 0. Got {worst!r} instead.")
    asked: dict[str, str] = {}
    limits: list[float] = []
    measures = []
    for name, floor in floors.items():
        key = f"floors[{name!r}]"
        measure = parse_measure(name)
        if isinstance(floor, bool) or not isinstance(floor, int | float) or not math.isfinite(floor):
            raise ConfigError(f"The floor must be a finite number. Got {floor!r} instead.", key_path=key)
        if str(measure) in asked:
            raise ConfigError(f"{name!r} and {asked[str(measure)]!r} are the same measure ({measure})", key_path=key)
        asked[str(measure)] = str(name)
        measures.append(measure)
        limits.append(float(floor))

    results = evaluate(qrels, run, measures, **options)
    aggregate = results.aggregate
    shortfalls: list[Shortfall] = []
    for j, (measure, floor) in enumerate(zip(results.measures, limits, strict=True)):
        value = aggregate[str(measure)]
        if not math.isnan(value) and value >= floor - EPS:
            continue
        column = results.values[:, j]
        order = sorted(range(len(column)), key=lambda i: (float(column[i]), results.query_ids[i].encode()))
        shortfalls.append(
            Shortfall(
                measure=str(measure),
                asked_as=asked[str(measures[j])],
                value=value,
                floor=floor,
                worst=[(results.query_ids[i], float(column[i])) for i in order[:worst]],
                zeros=int((column == 0).sum()),
                n_queries=len(column),
            )
        )
    return results, shortfalls


def assert_quality(
    qrels: Any,
    run: Any,
    floors: Mapping[str, float],
    *,
    worst: int = WORST_QUERIES,
    **options: Any,
) -> Results:
    """Fail (`QualityFailure`, an AssertionError) when a measure's mean is below its floor.

    Takes the arguments of `check_quality`; returns the `Results` when every floor is met.

    >>> qrels = {"q1": {"d1": 1}, "q2": {"d9": 1}}
    >>> run = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}}
    >>> assert_quality(qrels, run, {"P@1": 0.5})["P@1"]
    0.5
    >>> assert_quality(qrels, run, {"recall@1": 0.9})
    Traceback (most recent call last):
    ...
    rankgate.pytest_plugin.QualityFailure: retrieval quality below the floor: 1 of 1 measure (2 queries evaluated)
      recall@1 (R@1) = 0.5000, floor 0.9000, short by 0.4000; 1 of 2 queries score 0
        worst queries: q2 = 0, q1 = 1
    """
    __tracebackhide__ = True
    results, shortfalls = check_quality(qrels, run, floors, worst=worst, **options)
    if shortfalls:
        raise QualityFailure(failure_message(results, shortfalls, floors), shortfalls, results)
    return results


def failure_message(results: Results, shortfalls: list[Shortfall], floors: Mapping[str, float]) -> str:
    """The text of a `QualityFailure`: one block per measure below its floor, then those that passed."""
    what = f"run {results.run_name!r}, " if results.run_name else ""
    evaluated = results.queries.get("evaluated", len(results.query_ids))
    lines = [
        f"retrieval quality below the floor: {len(shortfalls)} of {_count(len(floors), 'measure')} "
        f"({what}{_count(evaluated, 'query', 'queries')} evaluated)"
    ]
    for s in shortfalls:
        name = s.measure if s.asked_as == s.measure else f"{s.asked_as} ({s.measure})"
        if math.isnan(s.value):
            lines.append(f"  {name}: no query was evaluated, floor {s.floor:.4f}")
            continue
        line = f"  {name} = {s.value:.4f}, floor {s.floor:.4f}, short by {s.floor - s.value:.4f}"
        if s.zeros:
            line += f"; {s.zeros} of {s.n_queries} queries score 0"
        lines.append(line)
        if s.worst:
            lines.append("    worst queries: " + ", ".join(f"{qid} = {v:.4g}" for qid, v in s.worst))
    failed = {s.measure for s in shortfalls}
    aggregate = results.aggregate
    met = [
        f"{m} = {aggregate[m]:.4f} >= {floor:.4f}"
        for m, floor in zip(results.names, floors.values(), strict=True)
        if m not in failed
    ]
    if met:
        lines.append("  met: " + "; ".join(met))
    return "\n".join(lines)


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


CheckQuality = Callable[..., "Results"]


@pytest.fixture
def rankgate_check(request: pytest.FixtureRequest) -> CheckQuality:
    """``rankgate_check(qrels, run, floors, **options)``: `assert_quality`, recording the values.

    Each measure's mean is added to the test's ``user_properties`` as ``rankgate:<measure>``,
    so ``pytest --junitxml`` reports carry them, pass or fail.
    """

    def check(qrels: Any, run: Any, floors: Mapping[str, float], **options: Any) -> Results:
        __tracebackhide__ = True
        results, shortfalls = check_quality(qrels, run, floors, **options)
        for name, value in results.aggregate.items():
            request.node.user_properties.append((f"rankgate:{name}", value))
        if shortfalls:
            raise QualityFailure(failure_message(results, shortfalls, floors), shortfalls, results)
        return results

    return check
