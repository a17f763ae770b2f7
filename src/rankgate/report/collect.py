"""The report's inputs gathered by system: means, curves, per-query pairs, tag rows, gates, bench rows.

`collect` reads inputs classified and checked by `rankgate.report.inputs` and merges them by
system name: an eval's ``run``, a compare's systems, a gate's run and its baseline (named as
in its label, see `baseline_name`). The first value of a (system, measure) wins.

>>> from rankgate.report.inputs import as_inputs
>>> gate = {"verdict": "pass", "gates": [], "run": "new", "aggregate": {"P@10": 0.5}}
>>> collect(as_inputs([gate])).systems
{'new': {'P@10': 0.5}}
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankgate.report.inputs import Input


@dataclass
class PerQueryPair:
    """Per-query values of a baseline and a candidate, for the delta charts."""

    baseline: str
    candidate: str
    measures: list[str]
    base: Mapping[str, Mapping[str, float | None]]
    cand: Mapping[str, Mapping[str, float | None]]

    def deltas(self, measure: str) -> list[tuple[str, float]]:
        """``(qid, candidate - baseline)`` over the queries both hold a value for."""
        out = []
        for qid, values in self.cand.items():
            b, c = self.base.get(qid, {}).get(measure), values.get(measure)
            if b is not None and c is not None:
                out.append((qid, c - b))
        return out


@dataclass
class ReportData:
    """What the inputs hold, gathered by system name."""

    sources: list[tuple[str, str]] = field(default_factory=list)  # (source, kind)
    systems: dict[str, dict[str, float | None]] = field(default_factory=dict)
    system_ci: dict[str, dict[str, Any]] = field(default_factory=dict)
    gates: list[dict[str, Any]] = field(default_factory=list)
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    tag_rows: list[dict[str, Any]] = field(default_factory=list)
    curves: dict[str, dict[str, list[tuple[int, float | None]]]] = field(default_factory=dict)
    pairs: list[PerQueryPair] = field(default_factory=list)
    bench: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (system or file, text)
    settings: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, Any] = field(default_factory=dict)

    def add_tag_rows(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Add per-tag rows; a row for a (system, baseline, tag, value, measure) already held is skipped."""
        held = {_tag_key(r) for r in self.tag_rows}
        for row in rows:
            if _tag_key(row) not in held:
                held.add(_tag_key(row))
                self.tag_rows.append(dict(row))

    def add_system(self, name: str, aggregate: Mapping[str, Any] | None) -> None:
        mine = self.systems.setdefault(name, {})
        for measure, value in (aggregate or {}).items():
            mine.setdefault(measure, _finite(value))


def _tag_key(row: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(row.get(k)) for k in ("system", "baseline", "tag", "value", "measure"))


def _finite(value: Any) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def baseline_name(label: Any, run: str | None = None) -> str:
    """The system name in a gate's baseline label; ``NAME (baseline)`` when it is the run's own name.

    >>> baseline_name("run `dense`"), baseline_name("stored result 7 (dense, main 4f2a9c1e 2025-01-31 12:00 UTC)")
    ('dense', 'dense')
    >>> baseline_name("stored result 7 (dense, main 2025-01-31 12:00 UTC)", run="dense")
    'dense (baseline)'
    """
    import re

    text = str(label) if label else "baseline"
    if text.startswith("run `") and text.endswith("`"):
        text = text[5:-1]
    else:
        stored = re.fullmatch(r"stored result \d+ \((.+?), [^,]*\)", text)
        if stored:
            text = stored.group(1)
    return f"{text} (baseline)" if text == run else text


def collect(inputs: Sequence[Input]) -> ReportData:
    """Gather classified inputs (`as_inputs`) into one `ReportData`."""
    data = ReportData()
    first_per_query: tuple[str, Mapping[str, Any], list[str]] | None = None
    for item in inputs:
        kind, source, d = item["kind"], item["source"], item["data"]
        data.sources.append((source, kind))
        if kind in ("eval", "gate") and not data.settings:
            data.settings, data.versions = dict(d.get("settings") or {}), dict(d.get("versions") or {})
        if kind == "eval":
            name = str(d.get("run") or d.get("name") or _stem(source))
            data.add_system(name, d["aggregate"])
            if d.get("ci"):
                data.system_ci[name] = dict(d["ci"])
            _add_curves(data, name, d["aggregate"])
            data.warnings.extend((name, w) for w in d.get("warnings") or [])
            data.add_tag_rows(_group_rows(name, d.get("groups") or {}))
            if d.get("per_query"):
                if first_per_query is None:
                    first_per_query = (name, d["per_query"], list(d["measures"]))
                else:
                    base_name, base, base_measures = first_per_query
                    shared = [m for m in d["measures"] if m in base_measures]
                    if shared:
                        data.pairs.append(PerQueryPair(base_name, name, shared, base, d["per_query"]))
        elif kind == "gate":
            _collect_gate(data, d, source)
        elif kind == "compare":
            reference = str(d.get("baseline") or "baseline")
            for system, means in (d.get("means") or {}).items():
                data.add_system(str(system), means)
            data.comparisons.extend({**row, "baseline": reference} for row in d.get("comparisons") or [])
            data.add_tag_rows({**row, "baseline": reference} for row in d.get("by_tag") or [])
            data.warnings.extend((source, n) for n in d.get("notes") or [])
            systems = {str(x) for x in d.get("systems") or d.get("means") or []}
            data.warnings.extend(_system_warning(source, str(w), systems) for w in d.get("warnings") or [])
        elif kind == "cutoffs":
            for run, values in d["runs"].items():
                _add_curves(data, str(run), values, replace=True)
        elif kind == "bench":
            data.bench.extend({**row, "_source": source} for row in d["results"])
    return data


def _group_rows(system: str, groups: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per-tag rows of ``eval --tags`` (means per tag value, no baseline): as gate's without one."""
    return [
        {
            "system": system,
            "baseline": None,
            "tag": tag,
            "value": value,
            "n": g.get("n"),
            "small": bool(g.get("small")),
            "measure": measure,
            "mean": mean,
            "baseline_mean": None,
            "delta": None,
            "ci": (g.get("ci") or {}).get(measure),
        }
        for tag, values in groups.items()
        for value, g in values.items()
        for measure, mean in (g.get("aggregates") or {}).items()
    ]


def _stem(source: str) -> str:
    from rankgate.io.source import stem

    return stem(source.split("#", 1)[0])


def _collect_gate(data: ReportData, d: Mapping[str, Any], source: str) -> None:
    run = str(d.get("run") or "run")
    base = baseline_name(d.get("baseline"), run) if d.get("baseline") else None
    data.gates.append({**d, "_source": source, "_run": run, "_baseline": base})
    data.add_system(run, d.get("aggregate"))
    if base is not None:
        data.add_system(base, d.get("baseline_aggregate"))
    data.add_tag_rows(
        {**row, "system": run if row.get("system") in (None, "current") else str(row["system"]), "baseline": base}
        for row in d.get("by_tag") or []
    )
    data.warnings.extend((run, w) for w in d.get("warnings") or [])
    data.warnings.extend((source, n) for n in d.get("notes") or [])
    if d.get("per_query") and d.get("baseline_per_query") and base is not None:
        measures = [str(g["metric"]) for g in d.get("gates") or []] or list(d.get("aggregate") or {})
        data.pairs.append(
            PerQueryPair(base, run, list(dict.fromkeys(measures)), d["baseline_per_query"], d["per_query"])
        )


def _add_curves(data: ReportData, system: str, values: Mapping[str, Any], *, replace: bool = False) -> None:
    """Measures held at two or more cutoffs (``R@5``, ``R@10``...) become a curve of that family."""
    families: dict[str, list[tuple[int, float | None]]] = {}
    for name, value in values.items():
        family, _, k = str(name).rpartition("@")
        if family and k.isdigit():
            families.setdefault(family, []).append((int(k), _finite(value)))
    mine = data.curves.setdefault(system, {})
    for family, points in families.items():
        if len(points) < 2 or (family in mine and not replace):
            continue
        merged = dict(mine.get(family, []))
        merged.update(points)
        mine[family] = sorted(merged.items())
    if not mine:
        del data.curves[system]


def _system_warning(source: str, text: str, systems: set[str]) -> tuple[str, str]:
    """A compare warning ("system: text") under its system's name, so that the same warning read
    from the system's eval JSON is shown once, not once per input file."""
    system, sep, rest = text.partition(": ")
    return (system, rest) if sep and system in systems else (source, text)
