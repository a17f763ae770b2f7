"""Statistical power of the two-sided paired t-test: detectable deltas and query counts.

With ``n`` queries, per-query deltas of SD ``sd`` and a true mean delta ``delta``, the
paired t statistic follows a noncentral t distribution with ``df = n - 1`` and
noncentrality ``nc = delta / sd * sqrt(n)``. With ``c = t.ppf(1 - alpha / 2, df)`` the
probability of a significant result is::

    power = nct.sf(c, df, nc) + nct.cdf(-c, df, nc)

`minimum_detectable_effect` solves ``power = target`` for ``delta`` (Brent's method) and
`queries_needed` finds the smallest ``n`` that reaches the target, starting from the normal
approximation ``n0 = ((z(1 - alpha / 2) + z(power)) * sd / delta) ** 2`` (the t-test never
needs fewer queries than that) and stepping up. These are exact t-test numbers, as in
G*Power's "Means: difference between two dependent means (matched pairs)"; the normal
approximation alone under-counts small samples (32 queries for d_z = 0.5; 34 are needed).

>>> queries_needed(0.5, 1.0)  # d_z = 0.5, alpha 0.05, power 0.8
34
>>> round(paired_t_power(0.5, 1.0, 34), 4)
0.8078
>>> round(minimum_detectable_effect(0.2, 100), 4)  # SD of deltas 0.2, 100 queries
0.0566
"""

from __future__ import annotations

import math
from typing import Any

from rankgate.errors import ConfigError
from rankgate.stats._common import check_fraction, check_int, check_real

# Powers this close to the target count as reaching it, so that the two functions invert
# each other: queries_needed(minimum_detectable_effect(sd, n), sd) == n.
POWER_TOLERANCE = 1e-9


def paired_t_power(delta: float, sd_delta: float, n: int, *, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test with ``n`` queries to detect a mean delta ``delta``.

    Args:
        delta: the true mean delta (its sign does not matter).
        sd_delta: the SD of per-query deltas (> 0).
        n: number of queries (>= 2).
        alpha: significance level.

    Returns:
        The probability that the test rejects at level ``alpha``.
    """
    func = "paired_t_power"
    d = abs(check_real(delta, "delta", func))
    sd = check_real(sd_delta, "sd_delta", func, minimum=0.0)
    queries = check_int(n, "n", func, minimum=2)
    level = check_fraction(alpha, "alpha", func)
    if sd == 0:
        return 1.0 if d > 0 else level
    return _power(d / sd, queries, level)


def minimum_detectable_effect(sd_delta: float, n: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true mean delta that ``n`` queries detect with the given power.

    Args:
        sd_delta: the SD of per-query deltas (ddof=1), e.g. from a past comparison.
        n: number of queries (>= 2).
        alpha: significance level of the two-sided test.
        power: wanted probability of detecting the delta (between ``alpha`` and 1).

    Returns:
        The delta, in the measure's units (``d_z * sd_delta``). 0.0 when ``sd_delta`` is 0.

    Raises:
        ConfigError: a bad argument.
    """
    func = "minimum_detectable_effect"
    sd = check_real(sd_delta, "sd_delta", func, minimum=0.0)
    queries = check_int(n, "n", func, minimum=2)
    level, target = _levels(alpha, power, func)
    if sd == 0:
        return 0.0
    from scipy.optimize import brentq

    high = 2.0 * _normal_dz(queries, level, target) + 1.0
    while _power(high, queries, level) < target:
        high *= 2.0
    dz = brentq(lambda x: _power(x, queries, level) - target, 0.0, high, xtol=1e-12, rtol=1e-12)
    return float(dz) * sd


def queries_needed(delta: float, sd_delta: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """The smallest number of queries that detects a true mean delta ``delta`` with the given power.

    Args:
        delta: the mean delta to detect (nonzero; its sign does not matter).
        sd_delta: the SD of per-query deltas (ddof=1), e.g. from a past comparison.
        alpha: significance level of the two-sided test.
        power: wanted probability of detecting the delta (between ``alpha`` and 1).

    Returns:
        The number of queries (>= 2, the fewest a t-test can use). 2 when ``sd_delta`` is 0.

    Raises:
        ConfigError: a bad argument (``delta`` of 0 included: no sample size detects it).
    """
    func = "queries_needed"
    d = abs(check_real(delta, "delta", func))
    if d == 0:
        raise ConfigError(
            f"The 'delta' parameter of {func} must be a nonzero number (no number of queries "
            f"detects a delta of 0). Got {delta!r} instead."
        )
    sd = check_real(sd_delta, "sd_delta", func, minimum=0.0)
    level, target = _levels(alpha, power, func)
    if sd == 0:
        return 2
    dz = d / sd
    n0 = (_z(1 - level / 2) + _z(target)) ** 2 / dz**2
    if n0 > 1e12:
        raise ConfigError(f"The 'delta' parameter of {func} is too small for this SD: it needs about {n0:.3g} queries.")
    n = max(2, math.ceil(n0))
    while _power(dz, n, level) < target - POWER_TOLERANCE:
        n += 1
    return n


def _levels(alpha: Any, power: Any, func: str) -> tuple[float, float]:
    level = check_fraction(alpha, "alpha", func)
    target = check_fraction(power, "power", func)
    if target <= level:
        raise ConfigError(
            f"The 'power' parameter of {func} must be greater than alpha ({level:g}). Got {target!r} instead."
        )
    return level, target


def _z(q: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(q))


def _normal_dz(n: int, alpha: float, power: float) -> float:
    return (_z(1 - alpha / 2) + _z(power)) / math.sqrt(n)


def _power(dz: float, n: int, alpha: float) -> float:
    from scipy.stats import nct, t

    df = n - 1
    crit = float(t.ppf(1 - alpha / 2, df))
    nc = dz * math.sqrt(n)
    upper = float(nct.sf(crit, df, nc))
    # The far lower tail underflows to NaN in scipy for nc >~ 7.5 (where it is < 1e-14).
    lower = float(nct.cdf(-crit, df, nc))
    return upper + (lower if math.isfinite(lower) else 0.0)
