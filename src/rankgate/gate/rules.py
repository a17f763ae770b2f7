"""The rules a gate checks against its baseline: limits on a regression and bars of improvement.

Every rule is written as a *gain* in the metric's better direction (up for nDCG, down for
latency) that must reach a bar:

==============================  ===============================  ==========================
key                             holds when                       kind
==============================  ===============================  ==========================
``regression_max: a``           gain >= -a (absolute units)      limit
``regression_max_relative: r``  gain / baseline >= -r            limit
``min_improvement: a``          gain >= a                        bar
``min_relative_improvement: r`` gain / baseline >= r             bar
==============================  ===============================  ==========================

So ``min_relative_improvement: 0.03`` on recall is ``new >= old x 1.03`` and
``regression_max_relative: 0.2`` on p95 latency is ``new <= old x 1.2``.

Decided on the observed means (``mode: mean`` for limits, ``decide_on: mean`` for bars), a
rule holds or not. Decided on evidence (``mode: noninferiority``, ``decide_on: ci``), a rule
on per-query values holds when the whole paired-bootstrap CI clears the bar, fails when the
whole CI misses it, and is inconclusive otherwise. A relative rule is tested as the mean of
``new_q - (1 + b) old_q`` (b the signed bar, e.g. +0.03 or -0.05) against 0, which is exactly
``mean(new) >= (1 + b) mean(old)``; its CI is shown on the relative scale by dividing by the
baseline's mean and adding b.

Limits combine by ``regression_rule`` (``all``: each must hold; ``any``: one is enough);
bars always all must hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rankgate.stats.power import queries_needed
from rankgate.stats.summary import paired_summary

if TYPE_CHECKING:
    from rankgate.gate.config import Gate

# Differences this small are floating-point noise, not a drop: 0.88 - 0.85 is 0.030000000000000027.
EPS = 1e-9

# key -> (kind, relative, sign of the bar): a limit allows a loss (negative bar), a bar asks a gain.
RULES: dict[str, tuple[str, bool, int]] = {
    "regression_max": ("regression", False, -1),
    "regression_max_relative": ("regression", True, -1),
    "min_improvement": ("improvement", False, 1),
    "min_relative_improvement": ("improvement", True, 1),
}


@dataclass
class Check:
    """One rule's finding."""

    rule: str  # the config key
    kind: str  # "regression" | "improvement"
    relative: bool
    bar: float  # the signed bar on the gain: -0.03 for regression_max 0.03, +0.03 for an improvement
    gain: float | None  # observed gain (relative: as a fraction of the baseline)
    status: str  # pass | fail | inconclusive
    ci: tuple[float, float] | None = None  # CI of the gain, on the same scale (evidence rules only)
    queries_needed: int | None = None
    why: str | None = None  # why it is inconclusive

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "kind": self.kind,
            "relative": self.relative,
            "bar": self.bar,
            "gain": self.gain,
            "ci": list(self.ci) if self.ci else None,
            "status": self.status,
            "queries_needed": self.queries_needed,
            "inconclusive": self.why,
        }


def active_rules(gate: Gate) -> list[tuple[str, float]]:
    """The rules this gate sets, in table order, with their (unsigned) values."""
    return [(key, float(getattr(gate, key))) for key in RULES if getattr(gate, key) is not None]


def on_means(gate: Gate, base: float, cur: float) -> list[Check]:
    """Each rule decided on two observed values (operational figures, or ``mean`` rules)."""
    return [_on_means(gate, key, value, base, cur) for key, value in active_rules(gate)]


def _on_means(gate: Gate, key: str, value: float, base: float, cur: float) -> Check:
    kind, relative, sign = RULES[key]
    bar = sign * value
    gain = (cur - base) * (1 if gate.higher_is_better else -1)
    if relative:
        if base == 0:
            why = "the baseline is 0, so a relative change is undefined"
            return Check(key, kind, True, bar, None, "inconclusive", why=why)
        gain /= abs(base)
    return Check(key, kind, relative, bar, gain, "pass" if gain >= bar - EPS else "fail")


def on_queries(gate: Gate, base: np.ndarray, cur: np.ndarray, *, seed: int, n_resamples: int) -> list[Check]:
    """Each rule on paired per-query values: on the means or on the CI, as the gate says."""
    out = []
    for key, value in active_rules(gate):
        kind = RULES[key][0]
        evidence = gate.mode == "noninferiority" if kind == "regression" else gate.decide_on == "ci"
        base_mean, cur_mean = float(base.mean()), float(cur.mean())
        if not evidence:
            out.append(_on_means(gate, key, value, base_mean, cur_mean))
        else:
            out.append(_on_ci(gate, key, value, base, cur, seed=seed, n_resamples=n_resamples))
    return out


def _on_ci(
    gate: Gate, key: str, value: float, base: np.ndarray, cur: np.ndarray, *, seed: int, n_resamples: int
) -> Check:
    kind, relative, sign = RULES[key]
    bar = sign * value
    base_mean = float(base.mean())
    if relative and base_mean == 0:
        return Check(
            key,
            kind,
            True,
            bar,
            None,
            "inconclusive",
            why="the baseline's mean is 0, so a relative change is undefined",
        )
    direction = 1.0 if gate.higher_is_better else -1.0
    # The test statistic: mean over queries of direction * (cur - (1 + b) base) for a relative rule
    # (>= 0 is the rule holding), or direction * (cur - base) for an absolute one (>= b holding).
    scaled = base * (1.0 + direction * bar) if relative else base
    summary = paired_summary(scaled * direction, cur * direction, n_resamples=n_resamples,
                             confidence=gate.confidence, seed=seed)  # fmt: skip
    delta, low, high = float(summary.delta[0]), float(summary.ci_low[0]), float(summary.ci_high[0])
    target = 0.0 if relative else bar
    if relative:  # on the relative scale: b + statistic / |baseline mean|
        scale = abs(base_mean)
        gain = direction * (float(cur.mean()) - base_mean) / scale
        ci = (bar + low / scale, bar + high / scale)
    else:
        gain, ci = delta, (low, high)
    if low >= target - EPS:
        return Check(key, kind, relative, bar, gain, "pass", ci)
    if high < target - EPS:
        return Check(key, kind, relative, bar, gain, "fail", ci)
    sd, distance = float(summary.sd_delta[0]), abs(delta - target)
    needed = int(queries_needed(distance, sd, alpha=1 - gate.confidence)) if sd > 0 and distance > 0 else None
    scale_word = "relative change" if relative else "delta"
    what = "allowed drop" if kind == "regression" else "bar"
    why = f"the {gate.confidence:.0%} CI of the {scale_word} straddles the {what}"
    return Check(key, kind, relative, bar, gain, "inconclusive", ci, needed, why)


def combine(checks: list[Check], rule: str) -> str | None:
    """The status of checks of one kind: ``all`` must hold or ``any`` is enough; None when there are none."""
    if not checks:
        return None
    statuses = {c.status for c in checks}
    if rule == "any":
        return "pass" if "pass" in statuses else "inconclusive" if "inconclusive" in statuses else "fail"
    return "fail" if "fail" in statuses else "inconclusive" if "inconclusive" in statuses else "pass"
