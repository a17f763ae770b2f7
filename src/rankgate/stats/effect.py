"""Effect size and win/tie/loss counts of per-query deltas (candidate - baseline).

The effect size is Cohen's d_z for paired data: the mean delta over the SD of the deltas
(ddof=1), i.e. ``t / sqrt(n)``. It says how large the difference is relative to its
query-to-query noise; rough guides are 0.2 small, 0.5 medium, 0.8 large.

A query is a win when the candidate beats the baseline by more than ``eps``, a loss when it
trails by more than ``eps``, a tie otherwise (``eps=0``: exact equality). "Beats" means a
higher score; for a measure where lower is better, swap the arguments.

>>> round(effect_size([0.1, 0.2, 0.3]), 12)  # mean 0.2, SD 0.1
2.0
>>> win_tie_loss([0.5, 0.2, 0.3, 0.4], [0.6, 0.2, 0.1, 0.4])
WinTieLoss(wins=1, ties=2, losses=1)
>>> win_tie_loss([0.5, 0.2], [0.501, 0.1], eps=0.01)
WinTieLoss(wins=0, ties=1, losses=1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rankgate.stats._common import FloatArray, IntArray, as_pair, as_scores, check_real


@dataclass(frozen=True)
class WinTieLoss:
    """Per-query outcome counts of candidate against baseline."""

    wins: int
    ties: int
    losses: int


def effect_size(deltas: Any) -> float:
    """Cohen's d_z of per-query ``deltas``: ``mean / sd`` (ddof=1).

    With no spread (all deltas equal) it is 0.0 when the deltas are 0 and +-inf otherwise.

    Args:
        deltas: per-query deltas of one measure (1-D, at least 2 queries).

    Returns:
        The effect size.

    Raises:
        InputError: fewer than 2 queries or non-finite values.
    """
    d = as_scores(deltas, "deltas", "effect_size", ndim=1, min_rows=2)
    return float(_effect(d[:, None])[0])


def effect_size_columns(deltas: Any) -> FloatArray:
    """`effect_size` of each column of ``deltas`` (queries x measures)."""
    return _effect(as_scores(deltas, "deltas", "effect_size_columns", ndim=2, min_rows=2))


def _effect(d: FloatArray) -> FloatArray:
    mean = d.mean(axis=0)
    sd = d.std(axis=0, ddof=1)
    flat = sd == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = mean / sd
    out[flat] = np.where(mean[flat] == 0, 0.0, np.copysign(np.inf, mean[flat]))
    return out


def win_tie_loss(a: Any, b: Any, *, eps: float = 0.0) -> WinTieLoss:
    """Count the queries where ``b`` (candidate) wins, ties or loses against ``a`` (baseline).

    Args:
        a: baseline per-query scores (1-D).
        b: candidate per-query scores, same queries in the same order.
        eps: tie tolerance: ``|b - a| <= eps`` is a tie (default exact equality).

    Returns:
        A `WinTieLoss`.
    """
    a_arr, b_arr = as_pair(a, b, "win_tie_loss", min_rows=0)
    wins, ties, losses = _wtl((b_arr - a_arr)[:, None], eps, "win_tie_loss")
    return WinTieLoss(int(wins[0]), int(ties[0]), int(losses[0]))


def win_tie_loss_columns(deltas: Any, *, eps: float = 0.0) -> tuple[IntArray, IntArray, IntArray]:
    """`win_tie_loss` of each column of ``deltas`` (queries x measures, candidate - baseline).

    Returns:
        ``(wins, ties, losses)``: three int64 arrays with one count per column.
    """
    d = as_scores(deltas, "deltas", "win_tie_loss_columns", ndim=2, min_rows=0)
    return _wtl(d, eps, "win_tie_loss_columns")


def _wtl(d: FloatArray, eps: Any, func: str) -> tuple[IntArray, IntArray, IntArray]:
    tol = check_real(eps, "eps", func, minimum=0.0)
    wins = np.count_nonzero(d > tol, axis=0).astype(np.int64)
    losses = np.count_nonzero(d < -tol, axis=0).astype(np.int64)
    ties = d.shape[0] - wins - losses
    return wins, ties, losses
