"""An OpenAI-compatible chat-completions client with retries, rate limits, a cost cap and key scrubbing.

`ChatClient` posts to ``{base_url}/chat/completions`` (hosted APIs, vLLM, Ollama, llama.cpp,
LiteLLM...). Each attempt first reserves its worst-case cost (`CostMeter`) and waits for the
rate limits (`RateLimiter`). Answers 429, 408, 409, 425 and 5xx, timeouts and connection
errors are retried with exponential backoff and full jitter (a ``Retry-After`` header is
honoured instead, and pauses every worker); 401, 403 and 404 stop the run (a wrong key, model
or URL will not get better); other 4xx answers fail that one pair. The key only ever goes into
the ``Authorization`` header; every text that comes back is scrubbed of it.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rankgate.errors import BackendError, ConfigError
from rankgate.extras import require
from rankgate.label.cost import CostMeter, estimate_input_tokens, worst_case_input_tokens
from rankgate.label.ratelimit import RateLimiter
from rankgate.label.secret import Secret, display_url

if TYPE_CHECKING:
    import httpx

RETRY_STATUS = frozenset({408, 409, 425, 429})
FATAL_STATUS = frozenset({401, 403, 404})
MAX_RETRY_AFTER = 600.0

Sleep = Callable[[float], Awaitable[None]]


class TransientFailure(Exception):
    """Retries exhausted without an answer (the pair is retried on the next run)."""


class RequestRejected(Exception):
    """The server refused this one request (e.g. HTTP 400: prompt too long)."""


@dataclass
class ChatReply:
    """One answered chat completion."""

    content: str
    input_tokens: int
    output_tokens: int
    cost: float
    latency_ms: float
    attempts: int
    usage_reported: bool = True


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


class ChatClient:
    """A client of one model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    Use it as an async context manager (it owns an ``httpx.AsyncClient``).

    Args:
        base_url: e.g. ``https://api.openai.com/v1``, ``http://localhost:8000/v1`` (vLLM),
            ``http://localhost:11434/v1`` (Ollama).
        model: the model name the server knows.
        api_key: sent as ``Authorization: Bearer``; None sends no header (local servers).
        timeout: seconds for one request.
        max_retries: retries of one request after a retryable failure.
        backoff: base delay in seconds; attempt n waits uniform(0, min(max_backoff, backoff * 2**n)).
        max_backoff: cap of one backoff delay.
        temperature: sampling temperature (0: as deterministic as the server allows).
        max_tokens: cap on the answer's tokens (also the worst case of the cost cap).
        json_mode: ask for ``response_format: {"type": "json_object"}``.
        limiter: shared rate limits (none by default).
        meter: shared cost meter (no prices, no cap by default).
        sleep: awaitable sleep, injectable for tests.
        clock: monotonic clock of the default limiter (tests pass a fake that `sleep` advances).
        rng: random source of the jitter.
        transport: an ``httpx.AsyncBaseTransport`` (e.g. ``httpx.MockTransport``) for tests.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: Secret | None = None,
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        temperature: float = 0.0,
        max_tokens: int = 256,
        json_mode: bool = False,
        limiter: RateLimiter | None = None,
        meter: CostMeter | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        transport: Any = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"the base URL must start with http:// or https:// (got {display_url(base_url)!r})", key_path="base_url"
            )
        if not model:
            raise ConfigError("a model name is required", key_path="model")
        if max_retries < 0 or timeout <= 0 or backoff < 0 or max_tokens < 1:
            raise ConfigError("max_retries >= 0, timeout > 0, backoff >= 0 and max_tokens >= 1 are required")
        if transport is None:  # fail before the caller prints a cost estimate, not at the first request
            require("httpx", "label")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.json_mode = json_mode
        self.limiter = limiter or RateLimiter(sleep=sleep, clock=clock)
        self.meter = meter or CostMeter()
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self.retries = 0
        self.retry_reasons: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"ChatClient({display_url(self.base_url)!r}, model={self.model!r})"

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def describe(self) -> dict[str, object]:
        """Settings fit for the store and the output (the key never appears)."""
        return {
            "base_url": display_url(self.base_url),
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_mode": self.json_mode,
            "timeout_s": self.timeout,
            "max_retries": self.max_retries,
        }

    async def __aenter__(self) -> ChatClient:
        httpx = require("httpx", "label")
        headers = {"Content-Type": "application/json", "User-Agent": "rankgate-label"}
        if self._key is not None:
            headers["Authorization"] = f"Bearer {self._key.reveal()}"
        self._client = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(self.timeout),
            transport=self._transport,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def scrub(self, text: str) -> str:
        """``text`` without the key (servers sometimes echo it in error messages)."""
        return self._key.redact(text) if self._key is not None else text

    def _payload(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    def _count_retry(self, reason: str) -> None:
        self.retries += 1
        self.retry_reasons[reason] = self.retry_reasons.get(reason, 0) + 1

    def _backoff(self, attempt: int) -> float:
        return self._rng.uniform(0.0, min(self.max_backoff, self.backoff * (2**attempt)))

    async def complete(self, messages: list[dict[str, str]]) -> ChatReply:
        """The assistant's answer to ``messages``, retrying what can be retried.

        Raises:
            CostLimitReached: the next attempt could cross the cost cap (nothing was sent).
            TransientFailure: retries exhausted.
            RequestRejected: the server refused this request (4xx other than 401/403/404/408/409/425/429).
            BackendError: 401, 403 or 404: the run cannot go on.
        """
        httpx = require("httpx", "label")
        if self._client is None:
            raise RuntimeError("use ChatClient as 'async with ChatClient(...) as client'")
        payload = self._payload(messages)
        estimated = estimate_input_tokens(messages) + self.max_tokens
        worst_in = worst_case_input_tokens(messages)
        last = "no attempt made"
        for attempt in range(self.max_retries + 1):
            await self.limiter.acquire(estimated)
            reservation = await self.meter.reserve_when_possible(worst_in, self.max_tokens)
            started = time.perf_counter()
            try:
                response = await self._client.post(self.url, json=payload)
            except httpx.TimeoutException:
                # The server may have done (and billed) the work: count the worst case as spent.
                self.meter.settle(reservation, worst_in, self.max_tokens)
                self.meter.usage_missing += 1
                self.limiter.settle(estimated, estimated)
                last = f"timed out after {self.timeout:g} s"
                self._count_retry("timeout")
            except httpx.TransportError as e:
                self.meter.release(reservation)
                self.limiter.settle(estimated, 0)
                last = f"connection failed ({type(e).__name__}: {self.scrub(str(e)) or 'no detail'})"
                self._count_retry("connection")
            else:
                latency = (time.perf_counter() - started) * 1000
                status = response.status_code
                if status == 200:
                    try:
                        return self._reply(response, reservation, estimated, worst_in, latency, attempt + 1)
                    except _Malformed as e:
                        last = str(e)
                        self._count_retry("malformed")
                else:
                    self.meter.release(reservation)
                    self.limiter.settle(estimated, 0)
                    detail = self._error_detail(response)
                    if status in FATAL_STATUS:
                        raise BackendError(self._fatal_message(status, detail))
                    if status not in RETRY_STATUS and status < 500:
                        raise RequestRejected(f"HTTP {status} from {display_url(self.url)}: {detail}")
                    last = f"HTTP {status}: {detail}"
                    self._count_retry(str(status))
                    wait = retry_after_seconds(response.headers.get("retry-after"))
                    if wait is not None:
                        # Honour the server's wait, for every worker: the limiter holds them all.
                        self.limiter.pause(wait)
                        continue
            if attempt < self.max_retries:
                await self._sleep(self._backoff(attempt))
        raise TransientFailure(f"no answer after {self.max_retries + 1} attempts; last: {last}")

    def _reply(
        self, response: Any, reservation: float, estimated: int, worst_in: int, latency: float, attempts: int
    ) -> ChatReply:
        try:
            body = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
            self.meter.release(reservation)
            self.limiter.settle(estimated, 0)
            raise _Malformed("the server's reply is not JSON") from None
        usage = body.get("usage") if isinstance(body, dict) else None
        prompt_tokens = _count(usage.get("prompt_tokens")) if isinstance(usage, dict) else None
        reported = prompt_tokens is not None
        if prompt_tokens is not None and isinstance(usage, dict):
            tokens_in = prompt_tokens
            out = _count(usage.get("completion_tokens"))
            tokens_out = out if out is not None else self.max_tokens
        else:
            tokens_in, tokens_out = worst_in, self.max_tokens
            self.meter.usage_missing += 1
        cost = self.meter.settle(reservation, tokens_in, tokens_out)
        self.limiter.settle(estimated, tokens_in + tokens_out)
        try:
            content = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise _Malformed("the server's reply has no choices[0].message.content") from None
        if content is not None and not isinstance(content, str):
            raise _Malformed("choices[0].message.content is not a string")
        return ChatReply(self.scrub(content or ""), tokens_in, tokens_out, cost, latency, attempts, reported)

    def _error_detail(self, response: Any) -> str:
        text = ""
        try:
            body = response.json()
            error = body.get("error") if isinstance(body, dict) else None
            if isinstance(error, dict):
                text = str(error.get("message", ""))
            elif isinstance(error, str):
                text = error
            elif isinstance(body, dict) and "detail" in body:
                text = str(body["detail"])
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
            text = response.text
        text = " ".join(self.scrub(text).split())
        return (text[:197] + "...") if len(text) > 200 else (text or "no detail")

    def _fatal_message(self, status: int, detail: str) -> str:
        url = display_url(self.url)
        hint = {
            401: "the API key was refused; check the environment variable that holds it (--api-key-env)",
            403: "access denied; check the key's permissions for this model",
            404: "not found; check --base-url (OpenAI-compatible servers usually end in /v1) and --model",
        }[status]
        return f"judge endpoint {url} answered HTTP {status} ({detail}): {hint}"


class _Malformed(Exception):
    """A 200 answer that is not a chat completion (retried like a server error)."""


def _count(value: object) -> int | None:
    """A token count from a ``usage`` field, or None when it is not a whole number >= 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
