"""`Results`: per-query values of each measure, their aggregates, and provenance."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankgate.evaluation.groups import UNTAGGED, GroupTable, Tags
from rankgate.measures.registry import Measure

QUERY_CASES: tuple[str, ...] = ("evaluated", "missing_from_run", "run_only", "no_relevant")


@dataclass
class Results:
    """The outcome of an evaluation.

    Attributes:
        measures: the measures, in the order asked for.
        query_ids: the evaluated queries (byte order); rows of ``values``.
        values: float64 matrix, one row per query and one column per measure.
        queries: how many queries fell into each case (see DESIGN.md "Semantics").
        settings: every semantic choice made (ties, query set, ...).
        warnings: degenerate but legal input noticed on the way.
        run_name: the run's name (file stem), when known.
        groups: aggregates per query group (tag value), when `with_groups` was called.
        chunks: what reading a run of chunks as documents did (`rankgate.core.chunks.ChunkCounts`),
            when the settings map chunks to documents.
    """

    measures: list[Measure]
    query_ids: list[str]
    values: np.ndarray
    queries: dict[str, int]
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    run_name: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    ci: dict[str, list[float] | None] | None = None  # bootstrap CI of each aggregate, when asked
    facts: Any = field(default=None, repr=False, compare=False)  # EvaluationFacts: merges warnings exactly
    groups: GroupTable | None = field(default=None, repr=False)  # per tag value, when asked (with_groups)
    chunks: Any = None  # ChunkCounts, when the run's chunk ids were mapped to documents

    def with_confidence_intervals(
        self, *, n_resamples: int = 10_000, confidence: float = 0.95, seed: int = 0
    ) -> Results:
        """Add a bootstrap confidence interval over queries to each mean aggregate.

        Queries are resampled with replacement (the same resamples for every measure); count
        measures (summed, not averaged) get no interval.
        """
        from rankgate.stats._common import check_resamples
        from rankgate.stats.bootstrap import bootstrap_ci_columns

        check_resamples(n_resamples, "bootstrap_ci_columns")  # also with no query: a bad option fails alike
        if len(self.query_ids) == 0:
            self.ci = {name: None for name in self.names}
            return self
        low, high = bootstrap_ci_columns(self.values, n_resamples=n_resamples, confidence=confidence, seed=seed)
        self.ci = {
            str(m): None if m.spec.aggregate != "mean" else [float(low[j]), float(high[j])]
            for j, m in enumerate(self.measures)
        }
        self.settings["ci"] = {
            "method": "bootstrap over queries, percentile",
            "n_resamples": n_resamples,
            "confidence": confidence,
            "seed": seed,
        }
        if self.groups is not None:
            from rankgate.evaluation.groups import with_group_intervals

            ci = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
            self.groups = with_group_intervals(self, self.groups, ci)
        return self

    def by_group(
        self, tags: Tags, *, group_by: Sequence[str] | None = None, untagged: str | None = UNTAGGED
    ) -> GroupTable:
        """The aggregates over each group of queries that share a tag value.

        Args:
            tags: ``{qid: {tag: value}}``, e.g. from `rankgate.io.tags.read_query_tags`.
            group_by: the tags to group by (default: every tag in ``tags``); a name that is
                no tag there raises `ConfigError` listing the tags there are.
            untagged: the group of the queries lacking a tag (``None``: leave them out).

        Returns:
            ``{tag: {value: Group}}``; each `rankgate.evaluation.groups.Group` has ``n``, ``small``
            (fewer than 10 queries), ``query_ids``, ``aggregate`` (as `aggregate`, over the
            group) and, when these results have intervals (`with_confidence_intervals`),
            ``ci`` with the same resampling settings.

        >>> import rankgate
        >>> res = rankgate.evaluate({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}},
        ...                         {"q1": {"a": 1.0}, "q2": {"x": 1.0}, "q3": {"c": 1.0}}, ["P@1"])
        >>> groups = res.by_group({"q1": {"tier": "A"}, "q2": {"tier": "A"}, "q3": {"tier": "B"}})
        >>> groups["tier"]["A"].n, groups["tier"]["A"].aggregate, groups["tier"]["B"].aggregate
        (2, {'P@1': 0.5}, {'P@1': 1.0})
        """
        from rankgate.evaluation.groups import group_results

        ci = None
        if self.ci is not None and isinstance(self.settings.get("ci"), dict):
            ci = {k: self.settings["ci"][k] for k in ("n_resamples", "confidence", "seed")}
        return group_results(self, tags, names=group_by, untagged=untagged, ci=ci)

    def with_groups(
        self, tags: Tags, *, group_by: Sequence[str] | None = None, untagged: str | None = UNTAGGED
    ) -> Results:
        """Keep `by_group`'s groups in ``groups`` (output as the ``groups`` key of `to_dict`)."""
        self.groups = self.by_group(tags, group_by=group_by, untagged=untagged)
        return self

    @property
    def names(self) -> list[str]:
        return [str(m) for m in self.measures]

    @property
    def aggregate(self) -> dict[str, float]:
        """Mean over evaluated queries (a sum for the counts, a geometric mean for gm_map; like trec_eval)."""
        from rankgate.measures.aggregate import aggregate_values

        return {str(m): aggregate_values(m.spec.aggregate, self.values[:, j]) for j, m in enumerate(self.measures)}

    @property
    def per_query(self) -> dict[str, dict[str, float]]:
        names = self.names
        return {
            qid: dict(zip(names, row.tolist(), strict=True))
            for qid, row in zip(self.query_ids, self.values, strict=True)
        }

    def column(self, measure: str | Measure) -> np.ndarray:
        """Per-query values of one measure, in ``query_ids`` order."""
        from rankgate.measures.parse import parse_measure

        m = parse_measure(measure)
        for j, have in enumerate(self.measures):
            if have == m or have.with_defaults(**self.settings.get("defaults", {})) == m:
                return self.values[:, j]
        raise KeyError(f"{m} was not evaluated (have: {', '.join(self.names)})")

    def __getitem__(self, measure: str | Measure) -> float:
        from rankgate.measures.parse import parse_measure

        name = str(parse_measure(measure))
        agg = self.aggregate
        if name not in agg:
            raise KeyError(f"{name} was not evaluated (have: {', '.join(self.names)})")
        return agg[name]

    def __repr__(self) -> str:
        agg = ", ".join(f"{k}={v:.4f}" for k, v in self.aggregate.items())
        return f"<Results {self.run_name or ''} over {len(self.query_ids)} queries: {agg}>"

    # -- export -------------------------------------------------------------------------
    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """The JSON contract of ``rankgate eval --format json`` (DESIGN.md)."""
        aggregate = {k: (None if math.isnan(v) else v) for k, v in self.aggregate.items()}
        out: dict[str, Any] = {"measures": self.names, "aggregate": aggregate}
        if per_query:
            out["per_query"] = self.per_query
        if self.ci is not None:
            out["ci"] = dict(self.ci)
        if self.groups is not None:
            from rankgate.evaluation.groups import groups_to_dict

            out["groups"] = groups_to_dict(self.groups)
        out["queries"] = dict(self.queries)
        if self.chunks is not None:
            out["chunks"] = self.chunks.to_dict()
        out["settings"] = dict(self.settings)
        out["warnings"] = list(self.warnings)
        if self.run_name is not None:
            out["run"] = self.run_name
        out["versions"] = dict(self.versions)
        return out

    def to_json(self, *, per_query: bool = False, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(per_query=per_query), indent=indent, allow_nan=False, default=_jsonable)

    def to_frame(self, backend: str = "pandas") -> Any:
        """Per-query values as a DataFrame (``backend``: "pandas" or "polars"), query id first."""
        import pyarrow as pa

        from rankgate.core.columns import arrow_to_frame

        data: dict[str, Any] = {"query_id": pa.array(list(self.query_ids), pa.string())}
        for j, name in enumerate(self.names):
            data[name] = pa.array(self.values[:, j])
        return arrow_to_frame(pa.table(data), backend)

    # -- merging ------------------------------------------------------------------------
    def select(self, measures: Sequence[str | Measure]) -> Results:
        """The same results restricted to ``measures`` (canonical names or values), in that order."""
        wanted = [str(m) for m in measures]
        missing = [m for m in wanted if m not in self.names]
        if missing:
            raise KeyError(f"no values of {', '.join(missing)} (have: {', '.join(self.names)})")
        columns = [self.names.index(m) for m in wanted]
        ci = {m: self.ci.get(m) for m in wanted} if self.ci is not None else None
        return Results(
            measures=[self.measures[j] for j in columns],
            query_ids=list(self.query_ids),
            values=self.values[:, columns],
            queries=dict(self.queries),
            settings=dict(self.settings),
            warnings=list(self.warnings),
            run_name=self.run_name,
            versions=dict(self.versions),
            ci=ci,
            chunks=self.chunks,
        )

    @classmethod
    def merge(cls, parts: Sequence[Results]) -> Results:
        """Combine results of disjoint query partitions of one evaluation, exactly.

        The merged per-query matrix is the union of the parts, in query-id order, so the
        aggregates equal those of evaluating everything at once.
        """
        if not parts:
            raise ValueError("merge() needs at least one Results")
        first = parts[0]
        for p in parts[1:]:
            if p.measures != first.measures:
                raise ValueError("cannot merge results of different measures")
            if p.settings != first.settings:
                raise ValueError("cannot merge results evaluated with different settings")
        ids = [q for p in parts for q in p.query_ids]
        if len(set(ids)) != len(ids):
            raise ValueError("cannot merge results whose query sets overlap")
        values = np.concatenate([p.values for p in parts]) if ids else np.zeros((0, len(first.measures)))
        order = sorted(range(len(ids)), key=lambda i: ids[i].encode())
        queries = {case: sum(p.queries.get(case, 0) for p in parts) for case in QUERY_CASES}
        facts = None
        if all(p.facts is not None for p in parts):
            from rankgate.evaluation.facts import EvaluationFacts

            facts = EvaluationFacts.merge([p.facts for p in parts])
            warnings = facts.warnings()
        else:
            warnings = []
            for p in parts:
                warnings.extend(w for w in p.warnings if w not in warnings)
        chunks = None
        if all(p.chunks is not None for p in parts):
            from rankgate.core.chunks import ChunkCounts
            from rankgate.evaluation.chunking import chunk_warnings

            chunks = ChunkCounts.merge([p.chunks for p in parts])
            if facts is not None:
                warnings += chunk_warnings(chunks, first.settings)
        return cls(
            measures=list(first.measures),
            query_ids=[ids[i] for i in order],
            values=values[order] if ids else values,
            queries=queries,
            settings=dict(first.settings),
            warnings=warnings,
            run_name=first.run_name,
            versions=dict(first.versions),
            facts=facts,
            chunks=chunks,
        )


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")
