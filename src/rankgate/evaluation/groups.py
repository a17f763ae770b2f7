"""Query groups from query tags: which queries share a tag value, and each group's aggregates.

A tags file (`rankgate.io.tags.read_query_tags`) gives each query ``{tag: value}``, such as a
topic or a gold-set tier (``{"tier": "A+B"}``). For every tag, the evaluated queries fall into
one group per value; queries without that tag go to the group `UNTAGGED`, so that the groups
of a tag always add up to every evaluated query. Groups of fewer than `MIN_GROUP` queries
are marked small: their means and intervals say little.

>>> tags = {"q1": {"tier": "A"}, "q2": {"tier": "B"}, "q3": {"tier": "A"}}
>>> group_rows(tags, ["q1", "q2", "q3", "q4"])
{'tier': {'A': [0, 2], 'B': [1], '(untagged)': [3]}}
>>> group_rows(tags, ["q1", "q2", "q3", "q4"], untagged=None)  # compare's breakdown: no such group
{'tier': {'A': [0, 2], 'B': [1]}}
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rankgate.errors import ConfigError

if TYPE_CHECKING:
    from rankgate.evaluation.results import Results

MIN_GROUP = 10  # fewer queries than this: a group's mean, interval and p-value say little
UNTAGGED = "(untagged)"  # the group of the queries that lack a tag

Tags = Mapping[str, Mapping[str, str]]


def tag_names(tags: Tags) -> list[str]:
    """Every tag name in ``tags``, in order of first appearance."""
    seen: dict[str, None] = {}
    for per_query in tags.values():
        for key in per_query:
            seen.setdefault(key, None)
    return list(seen)


def check_tag_names(tags: Tags, names: Sequence[str], *, source: str | None = None) -> list[str]:
    """``names`` if every one is a tag of ``tags``; else a `ConfigError` naming the tags there are."""
    have = tag_names(tags)
    missing = [n for n in names if n not in have]
    if missing:
        where = source or "the query tags"
        listed = ", ".join(have) if have else "none"
        raise ConfigError(f"no tag {missing[0]!r} in {where} (its tags: {listed})")
    return list(dict.fromkeys(names))


def group_rows(
    tags: Tags,
    query_ids: Sequence[str],
    *,
    names: Sequence[str] | None = None,
    untagged: str | None = UNTAGGED,
) -> dict[str, dict[str, list[int]]]:
    """Row numbers of ``query_ids`` in each group: ``{tag: {value: [row, ...]}}``.

    Args:
        tags: ``{qid: {tag: value}}``; queries not in it have no tags.
        query_ids: the queries, in row order (e.g. `Results.query_ids`).
        names: the tags to group by, in this order (default: every tag, in order of first
            appearance); see `check_tag_names`.
        untagged: the value under which queries lacking a tag are grouped; ``None`` leaves
            them out (as ``rankgate compare``'s breakdown does). The group is left out when
            every query has the tag.

    Returns:
        Per tag, its values in `natural_order` (the untagged group last), each with the rows
        of its queries in ascending order.
    """
    wanted = list(names) if names is not None else tag_names(tags)
    out: dict[str, dict[str, list[int]]] = {}
    for key in wanted:
        members: dict[str, list[int]] = {}
        missing: list[int] = []
        for i, qid in enumerate(query_ids):
            value = tags.get(qid, {}).get(key)
            if value is None:
                missing.append(i)
            else:  # values from Python may be numbers: grouped by their text, as a file would give them
                members.setdefault(str(value), []).append(i)
        ordered = {value: members[value] for value in sorted(members, key=natural_order)}
        if untagged is not None and missing:
            ordered.setdefault(untagged, []).extend(missing)  # a real value spelled like it: merged
            ordered[untagged].sort()
        out[key] = ordered
    return out


def natural_order(value: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that puts numbers in numeric order inside strings ("tier 9" before "tier 10").

    >>> sorted(["10", "9", "b", "A", "a2", "a10", "10²"], key=natural_order)
    ['9', '10', '10²', 'A', 'a2', 'a10', 'b']
    """
    parts = re.split(r"([0-9]+)", str(value))  # ASCII digits only: "²" is text, not a number
    return tuple((0, int(p)) if i % 2 else (1, p) for i, p in enumerate(parts) if p)


@dataclass(frozen=True)
class Group:
    """The queries that share one value of one tag, and their aggregates.

    Attributes:
        tag: the tag's name (``"tier"``).
        value: its value (``"A"``), or `UNTAGGED`.
        query_ids: the group's queries, in the order of the results.
        aggregate: each measure's mean over the group (a sum for count measures).
        ci: each measure's bootstrap interval over the group's queries, when asked for
            (``None`` for count measures and for groups of one query).
    """

    tag: str
    value: str
    query_ids: tuple[str, ...]
    aggregate: dict[str, float]
    ci: dict[str, list[float] | None] | None = None

    @property
    def n(self) -> int:
        return len(self.query_ids)

    @property
    def small(self) -> bool:
        return self.n < MIN_GROUP

    def to_dict(self) -> dict[str, Any]:
        """``{"n", "small", "aggregates", "ci"?}`` (NaN as ``None``), as in ``eval --format json``."""
        out: dict[str, Any] = {
            "n": self.n,
            "small": self.small,
            "aggregates": {k: (None if math.isnan(v) else v) for k, v in self.aggregate.items()},
        }
        if self.ci is not None:
            out["ci"] = dict(self.ci)
        return out


GroupTable = dict[str, dict[str, Group]]


def group_results(
    results: Results,
    tags: Tags,
    *,
    names: Sequence[str] | None = None,
    untagged: str | None = UNTAGGED,
    ci: Mapping[str, Any] | None = None,
) -> GroupTable:
    """The aggregates of ``results`` over each group of queries (see `Results.by_group`).

    ``ci`` holds the keyword arguments of `Results.with_confidence_intervals`
    (``n_resamples``, ``confidence``, ``seed``) when each group should get intervals.
    """
    if names is not None:
        names = check_tag_names(tags, names)
    out: GroupTable = {}
    for key, values in group_rows(tags, results.query_ids, names=names, untagged=untagged).items():
        out[key] = {value: _group(results, key, value, rows, ci) for value, rows in values.items()}
    return out


def with_group_intervals(results: Results, groups: GroupTable, ci: Mapping[str, Any]) -> GroupTable:
    """``groups`` (of ``results``) again, each with its bootstrap intervals (``ci`` as above)."""
    position = {qid: i for i, qid in enumerate(results.query_ids)}
    return {
        key: {value: _group(results, key, value, [position[q] for q in g.query_ids], ci) for value, g in values.items()}
        for key, values in groups.items()
    }


def _group(results: Results, key: str, value: str, rows: Sequence[int], ci: Mapping[str, Any] | None) -> Group:
    part = _subset(results, rows)
    intervals: dict[str, list[float] | None] | None = None
    if ci is not None:
        if len(rows) >= 2:
            intervals = dict(part.with_confidence_intervals(**ci).ci or {})
        else:  # one query: an interval of width 0 would claim a certainty it lacks
            intervals = {name: None for name in results.names}
    return Group(key, value, tuple(part.query_ids), part.aggregate, intervals)


def groups_to_dict(groups: GroupTable) -> dict[str, dict[str, dict[str, Any]]]:
    """``{tag: {value: {"n", "small", "aggregates", "ci"?}}}``: the ``groups`` key of the JSON."""
    return {key: {value: g.to_dict() for value, g in values.items()} for key, values in groups.items()}


def _subset(results: Results, rows: Sequence[int]) -> Results:
    from rankgate.evaluation.results import Results

    return Results(
        measures=list(results.measures),
        query_ids=[results.query_ids[i] for i in rows],
        values=results.values[list(rows)],
        queries={},
        settings=dict(results.settings),
        run_name=results.run_name,
    )
