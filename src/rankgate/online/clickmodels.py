"""Click models fitted to an impression log: position-based (EM), cascade and simplified DBN.

==========  =============================================================================
``pbm``     P(click) = examination(position) x attractiveness(query, doc); both estimated by
            EM on (pair, position) cells (Chuklin, Markov & de Rijke 2015, ch. 3-4; Wang et al.
            2018). Examination is reported relative to position 1 (identifiable only up to
            scale: users are assumed to examine the top result).
``cascade`` users scan down and stop at the first click; results above and at it were examined
            (Craswell et al. 2008). A page without clicks was examined to its end.
``sdbn``    simplified dynamic Bayesian network (Chapelle & Zhang 2009, with gamma = 1): results
            down to the last click were examined; attractiveness = clicks / examined,
            satisfaction = last clicks / clicks, relevance = attractiveness x satisfaction.
==========  =============================================================================

Estimates of pairs with fewer than ``min_impressions`` impressions are flagged ``weak``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankgate.errors import ConfigError
from rankgate.online.logs import ClickLog

MODELS = ("pbm", "cascade", "sdbn")


@dataclass(frozen=True, eq=False)
class ClickModelFit:
    """Per (query, doc) pair estimates of a click model.

    Attributes:
        model: ``"pbm"``, ``"cascade"`` or ``"sdbn"``.
        query_ids, doc_ids: id lists; ``pair_query`` and ``pair_doc`` index into them.
        impressions, clicks: per pair, rows and clicked rows in the log.
        attractiveness: per pair, P(click | examined).
        relevance: the score labels are derived from (attractiveness; x satisfaction for sdbn).
        stderr: per pair, an approximate standard error of ``relevance`` (pbm: from the observed
            Fisher information with examination held fixed; cascade, sdbn: binomial on the
            examined rows).
        weak: per pair, True when it had fewer than ``min_impressions`` impressions.
        examination: pbm: P(examined) of positions 1, 2, ... relative to position 1; else None.
        satisfaction: sdbn: P(satisfied | clicked) per pair; else None.
        iterations, converged: of the EM (pbm); 0 and True for the closed-form models.
    """

    model: str
    query_ids: list[str]
    doc_ids: list[str]
    pair_query: np.ndarray
    pair_doc: np.ndarray
    impressions: np.ndarray
    clicks: np.ndarray
    attractiveness: np.ndarray
    relevance: np.ndarray
    stderr: np.ndarray
    weak: np.ndarray
    min_impressions: int
    examination: np.ndarray | None = None
    satisfaction: np.ndarray | None = None
    iterations: int = 0
    converged: bool = True
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def ctr(self) -> np.ndarray:
        """Raw click-through rate per pair."""
        return self.clicks / np.maximum(self.impressions, 1)

    def pairs(self) -> list[tuple[str, str]]:
        """(query id, doc id) of every pair, in the fit's order."""
        q, d = self.query_ids, self.doc_ids
        return [(q[i], d[j]) for i, j in zip(self.pair_query.tolist(), self.pair_doc.tolist(), strict=True)]

    def summary(self) -> dict[str, Any]:
        """Counts and settings, for output."""
        out: dict[str, Any] = {
            "model": self.model,
            "pairs": len(self.impressions),
            "weak_pairs": int(self.weak.sum()),
            "min_impressions": self.min_impressions,
            "impressions": int(self.impressions.sum()),
            "clicks": int(self.clicks.sum()),
            "iterations": self.iterations,
            "converged": self.converged,
        }
        if self.examination is not None:
            out["examination"] = [round(float(v), 6) for v in self.examination]
        return out | self.settings


def _pairs_and_cells(log: ClickLog) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """(cell pair index, cell position index, cell rows, cell clicks, pair keys, positions) of the log.

    One sort of the rows' (query, doc, position) keys; pairs are runs of equal (query, doc) cells.
    """
    positions = int(log.position.max())
    docs = max(len(log.doc_ids), 1)
    key = (log.query * docs + log.doc) * positions + (log.position - 1)
    cells, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    clicks = np.bincount(inverse.ravel(), weights=log.clicked, minlength=len(cells))
    pair_key = cells // positions
    first = np.r_[True, pair_key[1:] != pair_key[:-1]]
    cell_pair = np.cumsum(first) - 1
    return (
        cell_pair,
        (cells % positions).astype(np.int64),
        counts.astype(np.float64),
        clicks,
        pair_key[first],
        positions,
    )


@dataclass(frozen=True, eq=False)
class _Cells:
    """Sufficient statistics of the PBM: rows ``n`` and clicks ``c`` per (pair, position) cell."""

    pair: np.ndarray
    pos: np.ndarray
    n: np.ndarray
    c: np.ndarray
    rows_at: np.ndarray
    rows_of: np.ndarray
    miss: np.ndarray

    def step(self, theta: np.ndarray, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One EM step, examination rescaled so position 1 is 1 (the likelihood does not change)."""
        t, g = theta[self.pos], gamma[self.pair]
        denom = np.maximum(1.0 - t * g, 1e-12)
        miss = self.miss
        examined = self.c + miss * (t * (1.0 - g) / denom)
        attractive = self.c + miss * ((1.0 - t) * g / denom)
        new_theta = np.bincount(self.pos, weights=examined, minlength=len(theta)) / np.maximum(self.rows_at, 1)
        new_gamma = np.bincount(self.pair, weights=attractive, minlength=len(gamma)) / self.rows_of
        top = new_theta[0] if new_theta[0] > 0 else 1.0
        new_theta = np.where(self.rows_at > 0, new_theta / top, 0.5)
        return np.clip(new_theta, 1e-6, 1.0), np.clip(new_gamma * top, 0.0, 1.0)

    def loglik(self, theta: np.ndarray, gamma: np.ndarray) -> float:
        p = np.clip(theta[self.pos] * gamma[self.pair], 1e-12, 1 - 1e-12)
        return float(np.sum(self.c * np.log(p) + self.miss * np.log1p(-p)))


def _squarem(cells: _Cells, theta: np.ndarray, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One SQUAREM cycle (Varadhan & Roland 2008): two EM steps, an extrapolation, a stabilising step;
    the plain two-step point when the extrapolated one has a lower likelihood (so the likelihood never falls)."""
    t1, g1 = cells.step(theta, gamma)
    t2, g2 = cells.step(t1, g1)
    r = np.r_[t1 - theta, g1 - gamma]
    v = np.r_[t2 - t1, g2 - g1] - r
    norm_v = float(np.sqrt(v @ v))
    if norm_v == 0:
        return t2, g2
    alpha = min(-float(np.sqrt(r @ r)) / norm_v, -1.0)
    x = np.r_[theta, gamma] - 2 * alpha * r + alpha**2 * v
    k = len(theta)
    t3, g3 = cells.step(np.clip(x[:k], 1e-6, 1.0), np.clip(x[k:], 0.0, 1.0))
    if cells.loglik(t3, g3) < cells.loglik(t2, g2):
        return t2, g2
    return t3, g3


def fit_pbm(log: ClickLog, *, min_impressions: int = 10, max_iter: int = 300, tol: float = 1e-4) -> ClickModelFit:
    """Fit the position-based model by EM on (pair, position) cells (see the module docstring).

    The E step gives, for each cell of ``n`` rows and ``c`` clicks at examination ``t`` and
    attractiveness ``g``, the expected examined rows ``c + (n - c) t(1 - g)/(1 - tg)`` and
    attractive rows ``c + (n - c)(1 - t)g/(1 - tg)``; the M step divides their sums by the rows of
    the position and of the pair. After each step examination is rescaled so position 1 is 1
    (attractiveness scaled inversely: the likelihood does not change). EM is accelerated by
    SQUAREM; ``max_iter`` counts its cycles (three EM steps each). Stops when no parameter moves
    more than ``tol``.
    """
    _check_min(min_impressions)
    cell_pair, cell_pos, n, c, pair_key, positions = _pairs_and_cells(log)
    pairs = len(pair_key)
    rows_at = np.bincount(cell_pos, weights=n, minlength=positions)
    rows_of = np.bincount(cell_pair, weights=n, minlength=pairs)
    clicks_of = np.bincount(cell_pair, weights=c, minlength=pairs)
    cells = _Cells(cell_pair, cell_pos, n, c, rows_at, rows_of, n - c)
    theta = np.full(positions, 0.5)
    gamma = np.clip(clicks_of / rows_of, 0.01, 0.99)
    converged, it = False, 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        new_theta, new_gamma = _squarem(cells, theta, gamma)
        change = max(float(np.abs(new_theta - theta).max()), float(np.abs(new_gamma - gamma).max()))
        theta, gamma = new_theta, new_gamma
        if change < tol:
            converged = True
            break
    # Observed Fisher information of each attractiveness, examination held fixed.
    t, g = theta[cell_pos], gamma[cell_pair]
    with np.errstate(divide="ignore", invalid="ignore"):
        info = np.where(c > 0, c / np.maximum(g, 1e-12) ** 2, 0.0) + (n - c) * t**2 / np.maximum(1 - t * g, 1e-12) ** 2
    stderr = 1.0 / np.sqrt(np.maximum(np.bincount(cell_pair, weights=info, minlength=pairs), 1e-12))
    exam = np.where(rows_at > 0, theta, np.nan)
    return _fit(
        "pbm",
        log,
        pair_key,
        rows_of,
        clicks_of,
        gamma,
        gamma,
        stderr,
        min_impressions,
        examination=exam,
        iterations=it,
        converged=converged,
        settings={"tol": tol, "max_iter": max_iter},
    )


def _page_click_bounds(log: ClickLog) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the position of its page's first and last click (inf / page end when none)."""
    starts = log.page_start[:-1]
    sizes = np.diff(log.page_start)
    big = np.iinfo(np.int32).max
    first = np.minimum.reduceat(np.where(log.clicked, log.position, big), starts)
    last = np.maximum.reduceat(np.where(log.clicked, log.position, 0), starts)
    page_end = np.maximum.reduceat(log.position, starts)
    last = np.where(last == 0, page_end, last)
    return np.repeat(first, sizes), np.repeat(last, sizes)


def _row_pairs(log: ClickLog) -> tuple[np.ndarray, np.ndarray]:
    docs = max(len(log.doc_ids), 1)
    pair_key, pair = np.unique(log.query * docs + log.doc, return_inverse=True)
    return pair_key, pair.ravel()


def fit_cascade(log: ClickLog, *, min_impressions: int = 10, model: str = "cascade") -> ClickModelFit:
    """The cascade model (``model="cascade"``) or the simplified DBN (``model="sdbn"``), in closed form."""
    _check_min(min_impressions)
    if model not in ("cascade", "sdbn"):
        raise ConfigError(f"model must be 'cascade' or 'sdbn'. Got {model!r} instead.", key_path="model")
    first, last = _page_click_bounds(log)
    pair_key, pair = _row_pairs(log)
    pairs = len(pair_key)
    if model == "cascade":
        examined = log.position <= np.where(first == np.iinfo(np.int32).max, last, first)
        counted = log.clicked & (log.position == first)
    else:
        examined = log.position <= last
        counted = log.clicked
    seen = np.bincount(pair, weights=examined, minlength=pairs)
    hits = np.bincount(pair, weights=counted, minlength=pairs)
    attractiveness = hits / np.maximum(seen, 1)
    relevance, satisfaction = attractiveness, None
    stderr = np.sqrt(attractiveness * (1 - attractiveness) / np.maximum(seen, 1))
    if model == "sdbn":
        last_clicks = np.bincount(pair, weights=log.clicked & (log.position == last), minlength=pairs)
        satisfaction = np.where(hits > 0, last_clicks / np.maximum(hits, 1), 0.0)
        relevance = attractiveness * satisfaction
        stderr = stderr * satisfaction
    impressions = np.bincount(pair, minlength=pairs).astype(np.float64)
    clicks = np.bincount(pair, weights=log.clicked, minlength=pairs)
    return _fit(
        model,
        log,
        pair_key,
        impressions,
        clicks,
        attractiveness,
        relevance,
        stderr,
        min_impressions,
        satisfaction=satisfaction,
    )


def fit_click_model(log: ClickLog, model: str = "pbm", *, min_impressions: int = 10, **options: Any) -> ClickModelFit:
    """Fit ``model`` (``"pbm"``, ``"cascade"`` or ``"sdbn"``) to ``log``."""
    if model == "pbm":
        return fit_pbm(log, min_impressions=min_impressions, **options)
    if model in ("cascade", "sdbn"):
        return fit_cascade(log, min_impressions=min_impressions, model=model)
    raise ConfigError(f"click model must be one of {', '.join(MODELS)}. Got {model!r} instead.", key_path="model")


def _check_min(min_impressions: int) -> None:
    if isinstance(min_impressions, bool) or not isinstance(min_impressions, int) or min_impressions < 1:
        raise ConfigError(
            f"min_impressions must be an int >= 1. Got {min_impressions!r} instead.", key_path="min_impressions"
        )


def _fit(
    model: str,
    log: ClickLog,
    pair_key: np.ndarray,
    impressions: np.ndarray,
    clicks: np.ndarray,
    attractiveness: np.ndarray,
    relevance: np.ndarray,
    stderr: np.ndarray,
    min_impressions: int,
    **extra: Any,
) -> ClickModelFit:
    docs = max(len(log.doc_ids), 1)
    return ClickModelFit(
        model=model,
        query_ids=log.query_ids,
        doc_ids=log.doc_ids,
        pair_query=pair_key // docs,
        pair_doc=pair_key % docs,
        impressions=impressions.astype(np.int64),
        clicks=clicks.astype(np.int64),
        attractiveness=attractiveness,
        relevance=relevance,
        stderr=stderr,
        weak=impressions < min_impressions,
        min_impressions=min_impressions,
        **extra,
    )
