"""Token usage, prices and the cost cap.

Prices are in currency units (say US dollars) per million tokens, input and output apart.
`CostMeter` enforces ``max_cost`` before each request: it sends one only if the money spent,
plus the worst case of every request in flight, plus this request's worst case stays within
the cap. The worst case of a request is its prompt's UTF-8 byte count plus a chat-template
allowance (a byte-level tokenizer never makes more tokens than bytes) as input, and the
``max_tokens`` it asks for as output. So the cap is never crossed as long as the server bills
what it reports in ``usage`` and honours ``max_tokens``.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from typing import Any

from rankgate.errors import ConfigError

TEMPLATE_ALLOWANCE = 64  # tokens a chat template may add around the messages (worst case)
CHARS_PER_TOKEN = 4.0  # the usual estimate for English text with BPE tokenizers


@dataclass(frozen=True)
class Prices:
    """Price per million input and output tokens.

    >>> Prices(0.15, 0.60).cost(1_000_000, 500_000)
    0.45
    """

    input_per_million: float = 0.0
    output_per_million: float = 0.0

    def __post_init__(self) -> None:
        for name in ("input_per_million", "output_per_million"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise ConfigError(f"price must be a number >= 0. Got {value!r} instead.", key_path=name)

    @property
    def free(self) -> bool:
        return self.input_per_million == 0 and self.output_per_million == 0

    def cost(self, input_tokens: float, output_tokens: float) -> float:
        return (input_tokens * self.input_per_million + output_tokens * self.output_per_million) / 1_000_000


def estimate_input_tokens(messages: list[dict[str, str]]) -> int:
    """A typical token count of a prompt (about 4 characters a token, plus template overhead)."""
    chars = sum(len(m["content"]) for m in messages)
    return math.ceil(chars / CHARS_PER_TOKEN) + 4 * len(messages) + 3


def worst_case_input_tokens(messages: list[dict[str, str]]) -> int:
    """An upper bound on a prompt's token count: its UTF-8 bytes plus a template allowance."""
    return sum(len(m["content"].encode("utf-8")) for m in messages) + TEMPLATE_ALLOWANCE


class CostLimitReached(Exception):
    """Sending one more request could cross ``max_cost`` (raised by `CostMeter.reserve`).

    Attributes:
        partial: the judgment of a pair whose earlier requests were already paid for (an
            unreadable answer whose retry would cross the cap), to be stored so that its
            tokens and cost are not lost; None when nothing was sent for the pair.
    """

    partial: Any = None


@dataclass
class CostMeter:
    """Money and tokens spent so far, and the reservations of requests in flight.

    >>> meter = CostMeter(Prices(1.0, 1.0), max_cost=0.000010)
    >>> r = meter.reserve(4, 4)   # worst case 8 tokens = 0.000008
    >>> meter.reserve(2, 2)       # 0.000008 in flight + 0.000004 would cross 0.000010
    Traceback (most recent call last):
    ...
    rankgate.label.cost.CostLimitReached: the next request could cross max_cost 1e-05
    >>> round(meter.settle(r, 3, 1), 9)
    4e-06
    """

    prices: Prices = field(default_factory=Prices)
    max_cost: float | None = None
    spent: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    in_flight: float = 0.0
    usage_missing: int = 0
    pending: int = 0
    _event: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_cost is not None and not (math.isfinite(self.max_cost) and self.max_cost > 0):
            raise ConfigError(f"max_cost must be a number > 0. Got {self.max_cost!r} instead.", key_path="max_cost")

    def reserve(self, worst_input: int, worst_output: int) -> float:
        """Reserve a request's worst-case cost, or raise `CostLimitReached` if it could cross the cap."""
        worst = self.prices.cost(worst_input, worst_output)
        if self.max_cost is not None and self.spent + self.in_flight + worst > self.max_cost:
            raise CostLimitReached(f"the next request could cross max_cost {self.max_cost}")
        self.in_flight += worst
        self.pending += 1
        return worst

    async def reserve_when_possible(self, worst_input: int, worst_output: int) -> float:
        """`reserve`, waiting while requests in flight hold the room; raises only when none are.

        A request that does not fit beside the worst cases in flight may fit once they are
        billed what they really cost, so it waits for them; with nothing in flight the cap is reached.
        """
        while True:
            try:
                return self.reserve(worst_input, worst_output)
            except CostLimitReached:
                if self.pending == 0:
                    raise
            event = self._settled_event()
            event.clear()
            await event.wait()

    def _settled_event(self) -> asyncio.Event:
        loop = asyncio.get_running_loop()
        if self._event is None or self._event[0] is not loop:
            self._event = (loop, asyncio.Event())
        return self._event[1]

    def release(self, reservation: float) -> None:
        """Drop a reservation of a request that was never billed (no answer came).

        The reservations are counted, so that with none left ``in_flight`` is exactly 0 (a
        float sum that drifted to 1e-20 would keep waiters waiting for a request that never ends).
        """
        self.pending = max(0, self.pending - 1)
        self.in_flight = max(0.0, self.in_flight - reservation) if self.pending else 0.0
        if self._event is not None:
            self._event[1].set()

    def settle(self, reservation: float, input_tokens: int, output_tokens: int) -> float:
        """Replace a reservation by what the request really cost; returns that cost."""
        self.release(reservation)
        cost = self.prices.cost(input_tokens, output_tokens)
        self.spent += cost
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.requests += 1
        return cost

    def summary(self) -> dict[str, object]:
        return {
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.spent,
            "max_cost": self.max_cost,
            "usage_missing": self.usage_missing,
            "prices_per_million": {"input": self.prices.input_per_million, "output": self.prices.output_per_million},
        }
