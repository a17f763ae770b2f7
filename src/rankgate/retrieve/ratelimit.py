"""Client-side rate limits and server-asked pauses, shared by all workers (`rankgate label`, `rankgate retrieve`).

Each limit is a bucket refilled continuously at ``rate / 60`` per second that holds at most
10 seconds' worth (``burst_seconds``), so a run starts without a minute-long burst. A request
larger than the bucket may take it into debt (a single request is never blocked forever).
A 429 answer pauses every worker (`RateLimiter.pause`) for the time the server asked.
The clock and the sleep function are injectable, so tests run without waiting.
`retry_after_seconds` reads a ``Retry-After`` header.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]
MAX_RETRY_AFTER = 600.0


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or an HTTP date), or None.

    >>> retry_after_seconds("2"), retry_after_seconds("0.5"), retry_after_seconds("soon")
    (2.0, 0.5, None)
    """
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


class TokenBucket:
    """A continuously refilled bucket of ``rate_per_minute`` units per minute.

    >>> now = [0.0]
    >>> b = TokenBucket(60, clock=lambda: now[0], burst_seconds=2)
    >>> b.wait_time(2)
    0.0
    >>> b.take(2); b.wait_time(1)
    1.0
    >>> now[0] = 0.5; b.wait_time(1)
    0.5
    """

    def __init__(self, rate_per_minute: float, *, clock: Clock = time.monotonic, burst_seconds: float = 10.0) -> None:
        if not rate_per_minute > 0:
            raise ValueError(f"The 'rate_per_minute' parameter must be > 0. Got {rate_per_minute!r} instead.")
        self.rate = rate_per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_seconds)
        self._clock = clock
        self._level = self.capacity
        self._stamp = clock()

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
        self._stamp = now

    def wait_time(self, amount: float) -> float:
        """Seconds until ``amount`` may be taken (0 if now); requests above capacity wait for a full bucket."""
        self._refill()
        need = min(amount, self.capacity)
        return 0.0 if self._level >= need else (need - self._level) / self.rate

    def take(self, amount: float) -> None:
        """Take ``amount`` now (the level may go below zero: debt paid by later refills)."""
        self._refill()
        self._level -= amount

    def give_back(self, amount: float) -> None:
        """Return ``amount`` (negative: take more), e.g. after the real token usage is known."""
        self._refill()
        self._level = min(self.capacity, self._level + amount)


class RateLimiter:
    """Requests-per-minute and tokens-per-minute limits, plus a shared pause after a 429.

    Args:
        requests_per_minute: None for no request limit.
        tokens_per_minute: None for no token limit.
        clock: monotonic clock in seconds.
        sleep: an awaitable sleep (``asyncio.sleep``; tests pass a fake).
        burst_seconds: how many seconds' worth of requests and tokens a bucket holds (the burst).
    """

    def __init__(
        self,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        burst_seconds: float = 10.0,
    ) -> None:
        def bucket(rate: float | None) -> TokenBucket | None:
            return TokenBucket(rate, clock=clock, burst_seconds=burst_seconds) if rate else None

        self.requests = bucket(requests_per_minute)
        self.tokens = bucket(tokens_per_minute)
        self._clock = clock
        self._sleep = sleep
        self._paused_until = 0.0
        self._lock = asyncio.Lock()
        self.waited = 0.0

    def pause(self, seconds: float) -> None:
        """Hold every request back for ``seconds`` from now (the server said to slow down)."""
        self._paused_until = max(self._paused_until, self._clock() + seconds)

    async def acquire(self, tokens: int) -> None:
        """Wait until one request of about ``tokens`` tokens may be sent, then count it."""
        async with self._lock:  # one waiter at a time: first come, first served
            while True:
                delay = max(0.0, self._paused_until - self._clock())
                if self.requests is not None:
                    delay = max(delay, self.requests.wait_time(1))
                if self.tokens is not None:
                    delay = max(delay, self.tokens.wait_time(tokens))
                if delay <= 0:
                    break
                self.waited += delay
                await self._sleep(delay)
            if self.requests is not None:
                self.requests.take(1)
            if self.tokens is not None:
                self.tokens.take(tokens)

    def settle(self, estimated: int, actual: int) -> None:
        """Correct the token count once the server reported the real usage."""
        if self.tokens is not None:
            self.tokens.give_back(estimated - actual)
