"""Gate decisions: each gate's status from the current results and, when there is one, a baseline.

A gate checks up to two things:

* the floor: the mean of its metric must be at least ``threshold``;
* the regression: against the baseline, on the queries both evaluated, the metric may drop
  by at most ``regression_max``. In ``mean`` mode the observed mean drop decides. In
  ``noninferiority`` mode the paired bootstrap CI of the delta decides: it passes when the
  whole interval lies above ``-regression_max``, fails when the whole interval lies below
  it (the drop beyond the margin is significant), and is inconclusive otherwise; the gate's
  ``on_inconclusive`` then says what that means for the verdict, and ``queries_needed``
  how many queries would settle it.

Against the baseline a gate may also set a relative limit (``regression_max_relative``, a
fraction of the baseline's value; ``regression_rule`` says whether ``all`` limits or ``any``
must hold) and bars of improvement (``min_improvement``, ``min_relative_improvement``, decided
on the means or, with ``decide_on: ci``, on the CI's lower bound): see `rankgate.gate.rules`.
A gate on an operational figure (`rankgate.gate.figures`) has one value and no per-query
values: it is decided on the observed values (`decide_figure`), with ``max`` as a ceiling.

A failed check gives ``fail`` for an ``error`` gate and ``warn`` for a ``warning`` gate.

Without a baseline (or, for a figure, without the baseline's figure) the limits cannot be
checked: the outcome lists them in ``unchecked``. A gate with nothing else to check (no floor,
no ceiling) then checked nothing at all: its status stays ``pass`` (nothing failed), and
``checked_nothing`` says so, for the notes and the renderers (a skipped JUnit test case).

A gate that matches no query at all (a misspelt tag, a run of other query ids) has nothing to
decide on: it is inconclusive, and counts as its ``on_no_queries`` (``fail`` unless the config
says ``warn`` or ``pass``), so a typo cannot turn a gate into one that always passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankgate.evaluation.results import Results
from rankgate.gate import rules
from rankgate.gate.config import Gate, GateConfig
from rankgate.gate.rules import EPS
from rankgate.stats.summary import paired_summary

Tags = Mapping[str, Mapping[str, str]]


@dataclass
class GateOutcome:
    """What one gate found."""

    gate: Gate
    status: str  # pass | warn | fail | inconclusive
    value: float | None  # mean of the metric over the gate's queries (current run)
    n_queries: int
    baseline: float | None = None  # the baseline's mean over the paired queries
    current_paired: float | None = None  # the current mean over those same queries
    delta: float | None = None  # current_paired - baseline
    ci: tuple[float, float] | None = None  # CI of delta (paired bootstrap)
    p_value: float | None = None  # paired t-test of delta = 0
    n_paired: int = 0
    failed: list[str] = field(default_factory=list)  # "floor", "regression"
    inconclusive: str | None = None  # why no decision could be made
    queries_needed: int | None = None
    relative_delta: float | None = None  # delta / |baseline|
    relative_ci: tuple[float, float] | None = None  # ci / |baseline|: the relative change's interval at a bar of 0
    checks: list[rules.Check] = field(default_factory=list)  # each baseline rule's finding
    source: str = "qrels"  # where the value came from: "qrels", or the --bench file of a figure
    unchecked: list[str] = field(default_factory=list)  # the rules (config keys) not checked for want of a baseline

    @property
    def counts_as(self) -> str:
        """The outcome this gate adds to the verdict: pass, warn or fail."""
        if self.status == "inconclusive":
            counts = self.gate.on_no_queries if self.n_queries == 0 else self.gate.on_inconclusive
            if counts == "fail" and self.gate.severity == "warning":
                return "warn"
            return counts
        return self.status

    @property
    def checked_nothing(self) -> bool:
        """Every rule of this passing gate went unchecked for want of a baseline (no floor, no ceiling)."""
        return self.status == "pass" and bool(self.unchecked) and self.gate.threshold is None and self.gate.max is None

    def to_dict(self) -> dict[str, Any]:
        """The per-gate object of ``rankgate gate --format json`` (DESIGN.md)."""
        g = self.gate
        return {
            "name": g.name,
            "metric": str(g.metric),
            "label": g.label,
            "severity": g.severity,
            "mode": g.mode,
            "status": self.status,
            "counts_as": self.counts_as,
            "value": self.value,
            "baseline": self.baseline,
            "current_paired": self.current_paired,
            "delta": self.delta,
            "ci": list(self.ci) if self.ci else None,
            "confidence": g.confidence,
            "p_value": self.p_value,
            "threshold": g.threshold,
            "regression_max": g.regression_max,
            "regression_max_relative": g.regression_max_relative,
            "regression_rule": g.regression_rule,
            "min_improvement": g.min_improvement,
            "min_relative_improvement": g.min_relative_improvement,
            "decide_on": g.decide_on,
            "max": g.max,
            "relative_delta": self.relative_delta,
            "relative_ci": list(self.relative_ci) if self.relative_ci else None,
            "checks": [c.to_dict() for c in self.checks],
            "unchecked": list(self.unchecked),
            "source": self.source,
            "n_queries": self.n_queries,
            "n_paired": self.n_paired,
            "failed": list(self.failed),
            "inconclusive": self.inconclusive,
            "on_inconclusive": g.on_inconclusive,
            "on_no_queries": g.on_no_queries,
            "queries_needed": self.queries_needed,
            "tags": {k: list(v) for k, v in g.tags.items()} if g.tags else None,
        }


def verdict(outcomes: Sequence[GateOutcome]) -> str:
    """``fail`` if any gate counts as failed, else ``warn`` if any warns, else ``pass``."""
    counted = {o.counts_as for o in outcomes}
    return "fail" if "fail" in counted else "warn" if "warn" in counted else "pass"


def decide(
    config: GateConfig,
    current: Results,
    baseline: Results | None,
    *,
    tags: Tags | None = None,
    figures: Mapping[int, tuple[float, float | None, str]] | None = None,
) -> list[GateOutcome]:
    """Decide every gate of ``config``.

    ``figures`` gives each operational gate (by its index in ``config.gates``) its value, the
    baseline's value (or None) and the file it came from (`rankgate.gate.runner` reads them).
    """
    out = []
    for i, gate in enumerate(config.gates):
        if gate.figure is None:
            out.append(
                decide_gate(gate, current, baseline, tags=tags, seed=config.seed, n_resamples=config.n_resamples)
            )
            continue
        if figures is None or i not in figures:
            from rankgate.errors import ConfigError

            raise ConfigError(
                f"{gate.figure} is an operational figure: pass the `rankgate bench --format json` file or "
                "the `rankgate retrieve` JSON summary with --bench FILE",
                key_path=f"gates[{i}].metric",
                source=config.source,
            )
        value, base, source = figures[i]
        out.append(decide_figure(gate, value, base, source=source))
    return out


def decide_gate(
    gate: Gate,
    current: Results,
    baseline: Results | None,
    *,
    tags: Tags | None = None,
    seed: int = 0,
    n_resamples: int = 10_000,
) -> GateOutcome:
    """Decide one gate (see the module docstring)."""
    if gate.figure is not None:
        raise ValueError(f"gate {gate.name!r} is on an operational figure: decide it with decide_figure")
    metric = str(gate.metric)
    queries = select_queries(current.query_ids, gate, tags)
    values = _column(current, metric, queries)
    if not queries:
        return GateOutcome(
            gate=gate,
            status="inconclusive",
            value=None,
            n_queries=0,
            inconclusive=f"no query matches this gate (on_no_queries: {gate.on_no_queries})",
        )
    if len(queries) < gate.min_queries:
        return GateOutcome(
            gate=gate,
            status="inconclusive",
            value=float(values.mean()),
            n_queries=len(queries),
            inconclusive=f"{len(queries)} queries match, fewer than min_queries ({gate.min_queries})",
        )
    out = GateOutcome(gate=gate, status="pass", value=float(values.mean()), n_queries=len(queries))
    if gate.threshold is not None and out.value is not None and out.value < gate.threshold - EPS:
        out.failed.append("floor")
    if baseline is not None and rules.active_rules(gate):
        _check_baseline(out, gate, current, baseline, queries, seed=seed, n_resamples=n_resamples)
    elif baseline is None:
        out.unchecked = [key for key, _ in rules.active_rules(gate)]
    _settle(out, gate)
    return out


def select_queries(query_ids: Sequence[str], gate: Gate, tags: Tags | None) -> list[str]:
    """The queries a gate looks at: all, or those whose tags match every one of its filters."""
    if not gate.tags:
        return list(query_ids)
    if tags is None:
        from rankgate.errors import ConfigError

        raise ConfigError(
            f"gate {gate.name!r} filters on tags but no query tags were given; pass --tags FILE or set tags_file",
            key_path="tags_file",
        )
    return [q for q in query_ids if all(tags.get(q, {}).get(key) in allowed for key, allowed in gate.tags.items())]


def _check_baseline(
    out: GateOutcome,
    gate: Gate,
    current: Results,
    baseline: Results,
    queries: list[str],
    *,
    seed: int,
    n_resamples: int,
) -> None:
    metric = str(gate.metric)
    held = set(baseline.query_ids)
    paired = [q for q in queries if q in held]
    out.n_paired = len(paired)
    if len(paired) < 2:
        out.inconclusive = f"the baseline shares {len(paired)} of this gate's queries; a comparison needs 2"
        return
    cur = _column(current, metric, paired)
    base = _column(baseline, metric, paired)
    out.baseline, out.current_paired = float(base.mean()), float(cur.mean())
    summary = paired_summary(base, cur, n_resamples=n_resamples, confidence=gate.confidence, seed=seed)
    out.delta = float(summary.delta[0])
    out.ci = (float(summary.ci_low[0]), float(summary.ci_high[0]))
    out.p_value = float(summary.p_value[0])
    if out.baseline:
        out.relative_delta = out.delta / abs(out.baseline)
        out.relative_ci = (out.ci[0] / abs(out.baseline), out.ci[1] / abs(out.baseline))
    _apply(out, gate, rules.on_queries(gate, base, cur, seed=seed, n_resamples=n_resamples))


def _apply(out: GateOutcome, gate: Gate, checks: list[rules.Check]) -> None:
    """Record the rules' checks and what they add to the gate's failures or doubts."""
    out.checks = checks
    for kind, rule in (("regression", gate.regression_rule), ("improvement", "all")):
        mine = [c for c in checks if c.kind == kind]
        status = rules.combine(mine, rule)
        if status == "fail":
            out.failed.append(kind)
        elif status == "inconclusive":
            doubtful = [c for c in mine if c.status == "inconclusive"]
            out.inconclusive = "; ".join(c.why for c in doubtful if c.why)
            needed = [c.queries_needed for c in doubtful if c.queries_needed]
            out.queries_needed = max(needed) if needed else None


def decide_figure(gate: Gate, value: float, baseline: float | None, *, source: str) -> GateOutcome:
    """Decide a gate on an operational figure: one value (and the baseline's), no per-query values."""
    out = GateOutcome(gate=gate, status="pass", value=value, n_queries=0, source=source)
    if gate.threshold is not None and value < gate.threshold - EPS:
        out.failed.append("floor")
    if gate.max is not None and value > gate.max + EPS:
        out.failed.append("ceiling")
    if baseline is not None:
        out.baseline, out.current_paired, out.delta = baseline, value, value - baseline
        out.relative_delta = out.delta / abs(baseline) if baseline else None
        _apply(out, gate, rules.on_means(gate, baseline, value))
    else:
        out.unchecked = [key for key, _ in rules.active_rules(gate)]
    _settle(out, gate)
    return out


def _settle(out: GateOutcome, gate: Gate) -> None:
    if out.failed:
        out.status = "fail" if gate.severity == "error" else "warn"
    elif out.inconclusive:
        out.status = "inconclusive"


def _column(results: Results, metric: str, queries: list[str]) -> np.ndarray:
    if metric not in results.names:
        from rankgate.errors import InputError

        raise InputError(
            f"the {'baseline' if results.run_name is None else repr(results.run_name)} results hold no values "
            f"of {metric} (have: {', '.join(results.names)}); evaluate it with that measure"
        )
    position = {q: i for i, q in enumerate(results.query_ids)}
    return results.values[[position[q] for q in queries], results.names.index(metric)]
