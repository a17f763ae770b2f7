"""The fusion methods: ranx's definitions, as array operations over aligned runs.

Each method turns the aligned runs (`rankgate.fusion.align`) into one fused score per slot.
Sums add the runs in the order given, starting from 0, so that they equal ranx's to the bit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankgate.errors import ConfigError
from rankgate.fusion.align import Aligned

Scored = tuple[np.ndarray, np.ndarray]  # (slots, normalised scores) of one run
MIN_ODD = float(np.log(0.001 / 0.999))  # BayesFuse: the log-odds of a document a run missed
SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)], dtype=np.int64)


@dataclass(frozen=True)
class Method:
    """A fusion method: name, one-line definition, reference, and what it needs."""

    name: str
    title: str
    definition: str
    reference: str
    uses: str  # "scores" (normalised scores), "ranks", or "both"
    params: dict[str, Any] = field(default_factory=dict)  # name -> default (None: required)
    weighted: bool = False
    trained: bool = False
    aliases: tuple[str, ...] = ()


@dataclass
class Context:
    """What a method reads: the aligned runs, their normalised scores, parameters, training."""

    aligned: Aligned
    scored: list[Scored]
    params: dict[str, Any]
    weights: list[float]
    trained: list[Any]

    @property
    def size(self) -> int:
        return self.aligned.num_slots


def _total(ctx: Context, parts: Sequence[Scored], weights: Sequence[float] | None = None) -> np.ndarray:
    total = np.zeros(ctx.size)
    for i, (slots, values) in enumerate(parts):
        total[slots] += values if weights is None else weights[i] * values
    return total


def _count(ctx: Context, parts: Sequence[Scored]) -> np.ndarray:
    count = np.zeros(ctx.size, dtype=np.int64)
    for slots, _ in parts:
        count[slots] += 1
    return count


def _by_rank(ctx: Context, value: Callable[[int, np.ndarray], np.ndarray]) -> list[Scored]:
    """Each run's rows scored by ``value(run index, 0-based ranks)``."""
    return [(m.slots, value(i, m.ranks)) for i, m in enumerate(ctx.aligned.members)]


def _rrf(ctx: Context) -> np.ndarray:
    """Sum of ``w / (k + rank + 1)``, computed in place: the same operations, so the same bits."""
    k = float(ctx.params["k"])
    total = np.zeros(ctx.size)
    for m, w in zip(ctx.aligned.members, ctx.weights, strict=True):
        values = m.ranks.astype(np.float64)
        values += k
        values += 1
        np.divide(1.0, values, out=values)
        values *= w
        total[m.slots] += values
    return total


def comb_max(ctx: Context) -> np.ndarray:
    best = np.full(ctx.size, -np.inf)
    for slots, values in ctx.scored:
        best[slots] = np.maximum(best[slots], values)
    missed = _count(ctx, ctx.scored) < len(ctx.scored)
    best[missed] = np.maximum(best[missed], -1e9)  # ranx: a run that missed the document says -1e9
    return best


def comb_min(ctx: Context) -> np.ndarray:
    least = np.full(ctx.size, np.inf)
    for slots, values in ctx.scored:
        least[slots] = np.minimum(least[slots], values)
    missed = _count(ctx, ctx.scored) < len(ctx.scored)
    least[missed] = np.minimum(least[missed], 1e9)
    return least


def comb_med(ctx: Context) -> np.ndarray:
    table = np.full((len(ctx.scored), ctx.size), np.nan)
    for i, (slots, values) in enumerate(ctx.scored):
        table[i, slots] = values
    table.sort(axis=0)  # NaN (missed) last
    count = (~np.isnan(table)).sum(axis=0)
    cols = np.arange(ctx.size)
    upper = table[count // 2, cols]
    lower = table[np.maximum((count - 1) // 2, 0), cols]
    return np.where(count % 2 == 1, upper, (lower + upper) / 2)


def _weights_of_present(ctx: Context) -> np.ndarray:
    total = np.zeros(ctx.size)
    for (slots, _), w in zip(ctx.scored, ctx.weights, strict=True):
        total[slots] += w
    return total


def _borda_points(ctx: Context) -> list[Scored]:
    aligned = ctx.aligned
    cand = aligned.candidates().astype(np.float64)
    out: list[Scored] = []
    for m in aligned.members:
        points = (cand - m.lengths[aligned.slot_query] + 1) / 2
        points[m.slots] = cand[m.slots] - m.ranks
        out.append((np.arange(ctx.size, dtype=np.int64), points))
    return out


def _isr(ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    parts = _by_rank(ctx, lambda _, r: 1 / ((r + 1) ** 2).astype(np.float64))
    return _total(ctx, parts), _count(ctx, parts).astype(np.float64)


def _bayes(ctx: Context) -> np.ndarray:
    total = np.zeros(ctx.size)
    for m, odds in zip(ctx.aligned.members, ctx.trained, strict=True):
        values = np.full(ctx.size, MIN_ODD)
        inside = m.ranks < len(odds)  # ranx reads past its table here; rankgate says "missed"
        values[m.slots[inside]] = odds[m.ranks[inside]]
        total += values
    return total


def _pos(ctx: Context) -> np.ndarray:
    def value(i: int, r: np.ndarray) -> np.ndarray:
        padded = np.r_[np.asarray(ctx.trained[i], dtype=np.float64), 0.0]  # past the table: 0
        return padded[np.minimum(r, len(padded) - 1)]

    return _total(ctx, _by_rank(ctx, value))


def _prob(ctx: Context) -> np.ndarray:
    def value(i: int, r: np.ndarray) -> np.ndarray:
        m, probs = ctx.aligned.members[i], np.asarray(ctx.trained[i], dtype=np.float64)
        size = -(-m.lengths[ctx.aligned.slot_query[m.slots]] // len(probs))  # ceil(n / segments)
        seg = r // np.maximum(size, 1)
        return probs[seg] / (seg + 1)

    return _total(ctx, _by_rank(ctx, value))


def _seg(ctx: Context) -> np.ndarray:
    parts: list[Scored] = []
    for (slots, values), m, probs in zip(ctx.scored, ctx.aligned.members, ctx.trained, strict=True):
        seg = np.searchsorted(SEGFUSE_BOUNDS, m.ranks, side="right") - 1
        padded = np.r_[np.asarray(probs, dtype=np.float64), 0.0]  # past the last segment: 0
        p = padded[np.minimum(seg, len(padded) - 1)]
        parts.append((slots, p * (values + 1)))
    return _total(ctx, parts)


def _slide(ctx: Context) -> np.ndarray:
    w = int(ctx.params["w"])

    def value(i: int, r: np.ndarray) -> np.ndarray:
        m, probs = ctx.aligned.members[i], np.asarray(ctx.trained[i], dtype=np.float64)
        n = m.lengths[ctx.aligned.slot_query[m.slots]]
        a, b = np.maximum(r - w, 0), np.minimum(r + w, n - 1)
        cum = np.r_[0.0, np.cumsum(probs)]
        hi, lo = np.minimum(b + 1, len(probs)), np.minimum(a, len(probs))
        return (cum[hi] - cum[lo]) / (b - a + 1)

    return _total(ctx, _by_rank(ctx, value))


def _condorcet(ctx: Context) -> np.ndarray:
    from rankgate.fusion.condorcet import condorcet_scores

    return condorcet_scores(ctx.aligned)


def _method_table() -> dict[str, tuple[Method, Callable[[Context], np.ndarray]]]:
    from rankgate.fusion.catalog import CATALOG

    kernels: dict[str, Callable[[Context], np.ndarray]] = {
        "sum": lambda c: _total(c, c.scored),
        "mnz": lambda c: _total(c, c.scored) * _count(c, c.scored),
        "max": comb_max,
        "min": comb_min,
        "med": comb_med,
        "anz": lambda c: _total(c, c.scored) / _count(c, c.scored),
        "gmnz": lambda c: _total(c, c.scored) * _count(c, c.scored) ** float(c.params["gamma"]),
        "wsum": lambda c: _total(c, c.scored, c.weights),
        "wmnz": lambda c: _total(c, c.scored) * _weights_of_present(c),
        "mixed": lambda c: _total(c, c.scored, c.weights) * np.sqrt(_count(c, c.scored)),
        "rrf": _rrf,
        "isr": lambda c: np.multiply(*_isr(c)),
        "log_isr": lambda c: _isr(c)[0] * np.log(_isr(c)[1]),
        "logn_isr": lambda c: _isr(c)[0] * np.log(_isr(c)[1] + float(c.params["sigma"])),
        "rbc": lambda c: _total(c, _by_rank(c, lambda _, r: (1 - c.params["phi"]) * float(c.params["phi"]) ** r)),
        "bordafuse": lambda c: _total(c, _borda_points(c)),
        "w_bordafuse": lambda c: _total(c, _borda_points(c), c.weights),
        "condorcet": _condorcet,
        "bayesfuse": _bayes,
        "posfuse": _pos,
        "probfuse": _prob,
        "segfuse": _seg,
        "slidefuse": _slide,
        "mapfuse": lambda c: _total(c, _by_rank(c, lambda i, r: float(c.trained[i]) / (r + 1))),
    }
    return {name: (method, kernels[name]) for name, method in CATALOG.items()}


_TABLE: dict[str, tuple[Method, Callable[[Context], np.ndarray]]] = {}


def kernel(name: str) -> Callable[[Context], np.ndarray]:
    if not _TABLE:
        _TABLE.update(_method_table())
    return _TABLE[name][1]


def resolve(name: str) -> Method:
    """The method called ``name`` (canonical or alias, case and ``-``/``_`` insensitive)."""
    from rankgate.fusion.catalog import CATALOG

    key = name.strip().lower().replace("-", "_")
    for method in CATALOG.values():
        if key == method.name or key in {a.replace("-", "_") for a in method.aliases}:
            return method
    raise ConfigError(f"unknown fusion method {name!r}; choose one of {', '.join(CATALOG)}", key_path="method")
