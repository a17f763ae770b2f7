"""A/B comparison of two live arms from their impression logs.

Each result page gets five metrics: ``CTR`` (clicks / results shown), ``clicks@k`` (clicks in
the top k), ``RR`` (1 / position of the first click, 0 without a click), ``abandonment`` (1 when
the page got no click) and, when the logs have timestamps, ``time_to_first_click`` (first click
time minus the page's earliest timestamp; pages without a click have none). Pages are averaged
per unit (``query``, ``session`` or ``page``), and the arms compared on the unit means, B minus A:

- ``unit="query"``: paired over the queries both arms logged; CI by paired bootstrap
  (`rankgate.stats.bootstrap_ci`) and the paired t-test (`rankgate.stats.paired_t_test`).
- ``unit="session"`` or ``"page"``: the arms' units are independent samples; Welch's t-test and
  its confidence interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rankgate.errors import ConfigError, InputError
from rankgate.online.logs import ClickLog

UNITS = ("query", "session", "page")


def page_metrics(log: ClickLog, *, k: int = 5) -> dict[str, np.ndarray]:
    """Per page metric values (see the module docstring), ``clicks@k`` named with its k."""
    starts = log.page_start[:-1]
    shown = np.diff(log.page_start).astype(np.float64)
    clicks = np.add.reduceat(log.clicked.astype(np.float64), starts)
    top = np.add.reduceat((log.clicked & (log.position <= k)).astype(np.float64), starts)
    big = np.iinfo(np.int32).max
    first = np.minimum.reduceat(np.where(log.clicked, log.position, big), starts)
    out = {
        "CTR": clicks / shown,
        f"clicks@{k}": top,
        "RR": np.where(first < big, 1.0 / np.minimum(first, big), 0.0),
        "abandonment": (clicks == 0).astype(np.float64),
    }
    if log.timestamp is not None:
        t = log.timestamp
        shown_at = np.minimum.reduceat(t, starts)
        clicked_at = np.minimum.reduceat(np.where(log.clicked, t, np.inf), starts)
        out["time_to_first_click"] = np.where(np.isfinite(clicked_at), clicked_at - shown_at, np.nan)
    return out


def unit_means(log: ClickLog, unit: str, *, k: int = 5) -> tuple[list[str], dict[str, np.ndarray]]:
    """(unit keys, {metric: per-unit mean over its pages}); NaN where a unit has no value."""
    if unit not in UNITS:
        raise ConfigError(f"unit must be one of {', '.join(UNITS)}. Got {unit!r} instead.", key_path="unit")
    metrics = page_metrics(log, k=k)
    if unit == "page":
        return [str(i) for i in range(log.pages)], metrics
    if unit == "query":
        group, keys = log.page_query, log.query_ids
    else:
        codes, group = np.unique(log.session[log.page_start[:-1]], return_inverse=True)
        keys = [str(c) for c in codes.tolist()]
    size = len(keys)
    out = {}
    for name, values in metrics.items():
        ok = ~np.isnan(values)
        total = np.bincount(group[ok], weights=values[ok], minlength=size)
        count = np.bincount(group[ok], minlength=size)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[name] = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return list(keys), out


@dataclass(frozen=True)
class AbResult:
    """Per metric: both arms' means, B - A with its CI, the test and its p-value."""

    unit: str
    k: int
    confidence: float
    rows: list[dict[str, Any]]
    counts: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "unit": self.unit,
            "k": self.k,
            "confidence": self.confidence,
            "metrics": self.rows,
            "counts": self.counts,
        }


def _paired_row(a: np.ndarray, b: np.ndarray, confidence: float, seed: int) -> dict[str, Any]:
    from rankgate.stats import bootstrap_ci, paired_t_test

    ok = ~(np.isnan(a) | np.isnan(b))
    a, b = a[ok], b[ok]
    if len(a) < 2:
        return {
            "a": _mean(a),
            "b": _mean(b),
            "delta": None,
            "ci": None,
            "p_value": None,
            "test": "paired t",
            "n": len(a),
        }
    test = paired_t_test(a, b)
    low, high = bootstrap_ci(b - a, confidence=confidence, seed=seed)
    p = test.p_value if np.isfinite(test.p_value) else 1.0
    return {
        "a": float(a.mean()),
        "b": float(b.mean()),
        "delta": float((b - a).mean()),
        "ci": [low, high],
        "p_value": p,
        "test": "paired t, bootstrap CI",
        "n": len(a),
    }


def _welch_row(a: np.ndarray, b: np.ndarray, confidence: float) -> dict[str, Any]:
    from scipy import stats

    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    row: dict[str, Any] = {
        "a": _mean(a),
        "b": _mean(b),
        "delta": None,
        "ci": None,
        "p_value": None,
        "test": "Welch t",
        "n_a": len(a),
        "n_b": len(b),
    }
    if len(a) < 2 or len(b) < 2:
        return row
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    delta = float(b.mean() - a.mean())
    se = float(np.sqrt(va + vb))
    if se == 0:
        return row | {"delta": delta, "ci": [delta, delta], "p_value": 1.0 if delta == 0 else 0.0}
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
    p = float(2 * stats.t.sf(abs(delta) / se, df))
    return row | {"delta": delta, "ci": [delta - half, delta + half], "p_value": p}


def _mean(x: np.ndarray) -> float | None:
    return float(x.mean()) if len(x) else None


def ab_compare(
    log_a: ClickLog, log_b: ClickLog, *, unit: str = "query", k: int = 5, confidence: float = 0.95, seed: int = 0
) -> AbResult:
    """Compare arm B with arm A (see the module docstring)."""
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1). Got {confidence} instead.", key_path="confidence")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be an int >= 1. Got {k!r} instead.", key_path="k")
    keys_a, means_a = unit_means(log_a, unit, k=k)
    keys_b, means_b = unit_means(log_b, unit, k=k)
    names = [n for n in means_a if n in means_b]
    counts = {"pages_a": log_a.pages, "pages_b": log_b.pages, "units_a": len(keys_a), "units_b": len(keys_b)}
    rows = []
    if unit == "query":
        index_b = {q: i for i, q in enumerate(keys_b)}
        shared = [(i, index_b[q]) for i, q in enumerate(keys_a) if q in index_b]
        if not shared:
            raise InputError("the two logs share no query; compare with --unit session or page")
        ia, ib = (np.array(x, dtype=np.int64) for x in zip(*shared, strict=True))
        counts["shared_queries"] = len(shared)
        for name in names:
            rows.append({"metric": name} | _paired_row(means_a[name][ia], means_b[name][ib], confidence, seed))
    else:
        for name in names:
            rows.append({"metric": name} | _welch_row(means_a[name], means_b[name], confidence))
    return AbResult(unit, k, confidence, rows, counts)
