"""Score normalisations, per run and per query, as ranx defines them (`ranx.normalization`).

Each takes one run's scores in evaluation order (rows grouped by query) and returns the
normalised scores of the same rows; ``borda`` alone also scores the documents a run missed,
so it returns a value for every fused slot. Denominators are floored at 1e-9, as in ranx.

- ``min-max``: ``(s - min) / (max - min)``.
- ``max``: ``s / max``.
- ``sum``: ``(s - min) / (sum - min * n)`` (the shifted scores sum to 1).
- ``z-score`` (ranx: ``zmuv``): ``(s - mean) / std`` (population standard deviation).
- ``rank``: ``1 - r / n`` for 0-based rank ``r`` among the run's ``n`` documents.
- ``borda``: ``1 - r / c`` over the ``c`` candidate documents of the query (any run's);
  a document the run missed gets ``0.5 - (n - 1) / (2 c)``.
- ``none``: the scores as they are.
"""

from __future__ import annotations

import numpy as np

from rankgate.fusion.align import Aligned, Member

NORMS: tuple[str, ...] = ("min-max", "max", "sum", "z-score", "rank", "borda", "none")
NORM_ALIASES = {"min_max": "min-max", "minmax": "min-max", "zmuv": "z-score", "zscore": "z-score"}
_FLOOR = 1e-9


def _per_query(member: Member, values: np.ndarray) -> np.ndarray:
    """Broadcast a per-query value (one per run query, ``member.starts`` order) onto the rows."""
    counts = np.diff(np.r_[member.starts, len(member.scores)])
    return np.repeat(values, counts)


def normalise(member: Member, norm: str, aligned: Aligned) -> tuple[np.ndarray, np.ndarray]:
    """(slots, normalised scores) of one run; see the module docstring."""
    s = member.scores
    if norm == "none" or len(s) == 0:
        return member.slots, s
    starts = member.starts
    counts = np.diff(np.r_[starts, len(s)]).astype(np.float64)
    if norm == "rank":
        return member.slots, 1 - member.ranks / _per_query(member, counts)
    if norm == "borda":
        return _borda(member, aligned)
    lo = np.minimum.reduceat(s, starts)
    if norm == "min-max":  # in place: the same operations as (s - lo) / max(hi - lo, floor), one temporary fewer
        hi = np.maximum.reduceat(s, starts)
        out = s - _per_query(member, lo)
        out /= _per_query(member, np.maximum(hi - lo, _FLOOR))
        return member.slots, out
    if norm == "max":
        hi = np.maximum.reduceat(s, starts)
        return member.slots, s / _per_query(member, np.maximum(hi, _FLOOR))
    if norm == "sum":
        den = np.add.reduceat(s, starts) - lo * counts
        return member.slots, (s - _per_query(member, lo)) / _per_query(member, np.maximum(den, _FLOOR))
    if norm == "z-score":
        mean = np.add.reduceat(s, starts) / counts
        dev = s - _per_query(member, mean)
        std = np.sqrt(np.add.reduceat(dev * dev, starts) / counts)
        return member.slots, dev / _per_query(member, np.maximum(std, _FLOOR))
    raise ValueError(f"unknown normalisation {norm!r}")


def _borda(member: Member, aligned: Aligned) -> tuple[np.ndarray, np.ndarray]:
    cand = aligned.candidates().astype(np.float64)
    length = member.lengths[aligned.slot_query].astype(np.float64)
    values = 0.5 - (length - 1) / (2 * cand)
    values[member.slots] = 1 - member.ranks / cand[member.slots]
    return np.arange(aligned.num_slots, dtype=np.int64), values
