"""Gate values the metric cannot take: a percent or points slip must not disable a gate.

On a 0-1 measure, ``threshold: 85`` (meant: 85%) is a floor that can never be met and
``regression_max: 3`` (meant: 3 points) a limit that can never fail. Each value is checked
against what the number its key compares can be, given the range [lo, hi] of the gated value
(the mean of per-query values within the measure's declared ``bounds``; for counts, their sum):

==============================  =========================  ===========================================
key                             compares                   accepted
==============================  =========================  ===========================================
``threshold``, ``max``          the value itself           lo <= v <= hi
``regression_max``              a drop, in metric units    v < hi - lo (a larger limit cannot fail)
``min_improvement``             a gain, in metric units    v <= hi - lo
``regression_max_relative``     a drop / the baseline      v < 1, when lo >= 0 and higher is better
``min_relative_improvement``    a gain / the baseline      v <= 1, when lo >= 0 and lower is better
==============================  =========================  ===========================================

A value outside is a `ConfigError` naming the key path and the value, with "did you mean
v / 100?" when that value would be accepted. Unbounded metrics (DCG, counts, latency) take any
floor, ceiling or absolute limit of their sign; negative limits and bars are refused by the
config's own validation.

>>> from rankgate.measures.parse import parse_measure
>>> value_range(parse_measure("R@5")), value_range(parse_measure("NumRel")), value_range(parse_measure("DCG@10"))
((0.0, 1.0), (0.0, inf), (0.0, inf))
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rankgate.errors import ConfigError
from rankgate.gate.figures import Figure
from rankgate.measures.registry import Measure

if TYPE_CHECKING:
    from rankgate.gate.config import GateSpec


KEYS = ("threshold", "max", "regression_max", "min_improvement", "regression_max_relative", "min_relative_improvement")


def value_range(metric: Measure | Figure) -> tuple[float, float]:
    """The range of the number a gate on ``metric`` compares (its aggregate over the gate's queries)."""
    if isinstance(metric, Figure):
        return (0.0, 1.0) if metric.fraction else (0.0, math.inf)  # times, sizes and rates are never negative
    low, high = metric.spec.bounds
    if metric.spec.aggregate == "sum":  # a sum over queries grows with their number
        return (0.0 if low >= 0 else -math.inf, 0.0 if high <= 0 else math.inf)
    return float(low), float(high)  # a mean (or geometric mean) stays within the per-query bounds


def check_values_in_range(gate: GateSpec, metric: Measure | Figure, key: str, source: str) -> None:
    """Refuse a floor, ceiling, limit or bar of ``gate`` that ``metric`` makes always pass or always fail.

    Args:
        gate: the gate as written.
        metric: its metric, parsed.
        key: the gate's key path, e.g. ``gates[1]``.
        source: the config file, for the message.

    Raises:
        ConfigError: at ``{key}.{the key}``, naming the value (and ``value / 100`` when that fits).
    """
    for name in KEYS:
        value = getattr(gate, name)
        why = None if value is None else why_refused(name, value, metric)
        if why is None:
            continue
        guess = value / 100  # the slip this catches: a percentage or points written for a fraction
        fits = why_refused(name, guess, metric) is None
        hint = f"; did you mean {_num(guess)}{_as_read(name, guess, metric)}?" if fits else ""
        raise ConfigError(why + hint, key_path=f"{key}.{name}", source=source)


def why_refused(name: str, value: float, metric: Measure | Figure) -> str | None:
    """Why ``value`` at key ``name`` makes a gate on ``metric`` always pass or always fail; None when it does not.

    >>> from rankgate.measures.parse import parse_measure
    >>> why_refused("threshold", 85, parse_measure("R@5"))
    'R@5 takes values from 0 to 1, so a floor of 85 can never be met'
    >>> why_refused("threshold", 85, parse_measure("DCG@10")) is None
    True
    """
    low, high = value_range(metric)
    span = high - low
    takes = f"{metric} takes values {_range_text(low, high)}"
    if name in ("threshold", "max"):
        if low <= value <= high:
            return None
        word = "floor" if name == "threshold" else "ceiling"
        # a floor above the range (a ceiling below it) can never be met; the other way round, never fail
        fate = "be met" if (value > high) == (name == "threshold") else "fail"
        return f"{takes}, so a {word} of {_num(value)} can never {fate}"
    if name == "regression_max":
        if value < span:
            return None
        return f"{takes}, so it cannot drop by more than {_num(span)}: an allowed drop of {_num(value)} can never fail"
    if name == "min_improvement":
        if value <= span:
            return None
        return f"{takes}, so it cannot gain more than {_num(span)}: a required gain of {_num(value)} can never be met"
    if low < 0:  # relative rules: only a value that is never negative has a largest relative fall
        return None
    higher = metric.higher_is_better if isinstance(metric, Figure) else metric.spec.higher_is_better
    fall = f"{metric} is never negative, so it cannot fall by more than 100% of the baseline"
    if name == "regression_max_relative" and higher and value >= 1:
        return f"{fall}: an allowed relative drop of {_num(value)} can never fail"
    if name == "min_relative_improvement" and not higher and value > 1:
        return f"{fall}: a required relative improvement of {_num(value)} can never be met"
    return None


def _as_read(name: str, value: float, metric: Measure | Figure) -> str:
    """How a person reads ``value``: " (85%)" for a floor on a 0-1 metric, " (3 points)" for its drop."""
    low, high = value_range(metric)
    if "relative" in name:
        return f" ({_num(value * 100)}%)"
    if high - low != 1:
        return ""
    if name in ("threshold", "max"):
        return f" ({_num(value * 100)}%)"
    points = _num(value * 100)
    return f" ({points} point{'' if points == '1' else 's'})"


def _range_text(low: float, high: float) -> str:
    """``from 0 to 1``, ``of 0 or more``."""
    if math.isinf(high):
        return f"of {_num(low)} or more"
    if math.isinf(low):
        return f"of {_num(high)} or less"
    return f"from {_num(low)} to {_num(high)}"


def _num(value: float) -> str:
    """A number as a person writes it: 0.03, 85, 1 (no float noise from dividing by 100)."""
    return f"{value:.12g}"
