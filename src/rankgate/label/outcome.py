"""What judging a pool takes and gave: the `Estimate` before it, the `LabelReport` after, or `LabelInterrupted`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from rankgate.errors import Interrupted
from rankgate.label.types import Judgment


@dataclass
class Estimate:
    """What judging the pool should take: requests, tokens and cost (typical and worst case)."""

    requests: int
    cache_hits: int
    input_tokens: int
    output_tokens: int
    cost: float
    worst_input_tokens: int
    worst_output_tokens: int
    worst_cost: float

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


@dataclass
class LabelReport:
    """The outcome of `label_pool`: counts, usage, why it stopped, and the pool's judgments.

    ``counts`` holds: ``pool`` (pairs), ``done_before`` (in the store already), ``new``
    (judged now), ``cached`` (answered from the cache now), ``failed`` (pairs of the pool whose
    stored answer is unreadable: now, or in an earlier run, ``failed_before``, which
    ``done_before`` counts too and only ``retry_failed`` asks again), ``errors`` (no answer now),
    ``no_signal`` (a weak judge had nothing to go on, e.g. too few impressions) and
    ``not_started`` (left for a later run by a budget). ``stop_reason`` is None when the run
    went through, else ``"max-cost"``, ``"max-judgments"``, ``"errors"`` or ``"claimed"``.
    """

    judge: dict[str, object]
    pool: dict[str, Any]
    per_query: dict[str, int]
    counts: dict[str, int]
    usage: dict[str, object]
    stop_reason: str | None
    judgments: list[Judgment] = field(default_factory=list)
    failed: list[Judgment] = field(default_factory=list)
    errors: list[Judgment] = field(default_factory=list)
    estimate: Estimate | None = None
    retries: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    dry_run: bool = False

    @property
    def complete(self) -> bool:
        """True when no pair of the pool is left unjudged for lack of budget or an answer."""
        return self.stop_reason is None

    def to_dict(self) -> dict[str, object]:
        return {
            "judge": self.judge,
            "pool": self.pool,
            "counts": self.counts,
            "estimate": self.estimate.to_dict() if self.estimate else None,
            "usage": self.usage,
            "retries": self.retries,
            "complete": self.complete,
            "stop_reason": self.stop_reason,
            "dry_run": self.dry_run,
            "elapsed_s": round(self.elapsed_s, 3),
        }


class LabelInterrupted(Interrupted):
    """Ctrl-C stopped judging: ``saved`` of the ``total`` pairs have a judgment in the store at ``store``
    (`rankgate.errors.Interrupted`; None for an in-memory store, which keeps nothing). ``saved``
    counts the pairs a rerun of the same call does not ask again."""

    def __init__(self, saved: int = 0, total: int = 0, store: str | None = None, in_flight: int = 0) -> None:
        super().__init__(saved, total, store, noun="judgments", in_flight=in_flight)
