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
import json
import os
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
from rankgate.retrieve.ratelimit import retry_after_seconds

if TYPE_CHECKING:
    import httpx

RETRY_STATUS = frozenset({408, 409, 425, 429})
FATAL_STATUS = frozenset({401, 403, 404})
MAX_RESPONSE_BYTES = 1_000_000  # a verdict is a few hundred bytes; past this the body is not read further

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

        Every attempt that may be billed (a timeout, a connection dropped after the request went
        out, a body that is not a chat completion or is too large) counts its worst case toward
        the cost cap; only attempts that never reached the server, or that it refused with an
        error status, are free.

        Raises:
            CostLimitReached: the next attempt could cross the cost cap (nothing was sent).
            TransientFailure: retries exhausted (the message names the URL and the last cause).
            RequestRejected: the server refused this request (4xx other than 401/403/404/408/409/425/429).
            BackendError: 401, 403 or 404: the run cannot go on.
        """
        if self._client is None:
            raise RuntimeError("use ChatClient as 'async with ChatClient(...) as client'")
        payload = self._payload(messages)
        bill = _Bill(estimate_input_tokens(messages) + self.max_tokens, worst_case_input_tokens(messages))
        last = "no attempt made"
        for attempt in range(self.max_retries + 1):
            await self.limiter.acquire(bill.estimated)
            bill.reservation = await self.meter.reserve_when_possible(bill.worst_in, self.max_tokens)
            outcome = await self._attempt(payload, bill, attempt + 1)
            if isinstance(outcome, ChatReply):
                return outcome
            last, paused = outcome
            if attempt < self.max_retries and not paused:
                await self._sleep(self._backoff(attempt))
        url = display_url(self.url)
        where = "" if url in last else f"; endpoint {url}"
        raise TransientFailure(f"no answer after {self.max_retries + 1} attempts; last: {last}{where}")

    def _free(self, bill: _Bill) -> None:
        """The attempt never reached the server, or was refused: nothing was billed."""
        self.meter.release(bill.reservation)
        self.limiter.settle(bill.estimated, 0)

    def _worst(self, bill: _Bill, reason: str | None = None) -> None:
        """The server may have done (and billed) the work without a usable answer: count the worst case."""
        self.meter.settle(bill.reservation, bill.worst_in, self.max_tokens)
        self.meter.usage_missing += 1
        self.limiter.settle(bill.estimated, bill.estimated)
        if reason is not None:
            self._count_retry(reason)

    async def _attempt(self, payload: dict[str, Any], bill: _Bill, attempts: int) -> ChatReply | tuple[str, bool]:
        """One request: the reply, or (why it failed, whether a Retry-After pause replaces the backoff)."""
        httpx = require("httpx", "label")
        assert self._client is not None
        started = time.perf_counter()
        try:
            async with self._client.stream("POST", self.url, json=payload) as response:
                status = response.status_code
                body = await _read_capped(response, MAX_RESPONSE_BYTES)
        except httpx.TimeoutException:
            self._worst(bill, "timeout")
            return f"timed out after {self.timeout:g} s", False
        except (httpx.ConnectError, httpx.UnsupportedProtocol) as e:  # the request never left: free
            self._free(bill)
            self._count_retry("connection")
            return f"cannot connect to {display_url(self.url)} ({_cause(e, self.scrub)})", False
        except httpx.TransportError as e:  # dropped after the request went out: it may be billed
            self._worst(bill, "connection")
            return f"connection to {display_url(self.url)} dropped ({_cause(e, self.scrub)})", False
        latency = (time.perf_counter() - started) * 1000
        if body is None:
            self._worst(bill, "too-large")
            return f"the reply is larger than {MAX_RESPONSE_BYTES // 1_000_000} MB (not read further)", False
        if status == 200:
            try:
                return self._reply(body, bill, latency, attempts)
            except _Malformed as e:
                self._count_retry("malformed")
                return str(e), False
        self._free(bill)
        detail = self._error_detail(body)
        if status in FATAL_STATUS:
            raise BackendError(self._fatal_message(status, detail))
        if status not in RETRY_STATUS and status < 500:
            raise RequestRejected(f"HTTP {status} from {display_url(self.url)}: {detail}")
        self._count_retry(str(status))
        wait = retry_after_seconds(response.headers.get("retry-after"))
        if wait is not None:
            # Honour the server's wait, for every worker: the limiter holds them all.
            self.limiter.pause(wait)
        return f"HTTP {status}: {detail}", wait is not None

    def _reply(self, raw: bytes, bill: _Bill, latency: float, attempts: int) -> ChatReply:
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, ValueError, RecursionError):
            self._worst(bill)
            raise _Malformed("the server's reply is not JSON") from None
        usage = body.get("usage") if isinstance(body, dict) else None
        prompt_tokens = _count(usage.get("prompt_tokens")) if isinstance(usage, dict) else None
        reported = prompt_tokens is not None
        if prompt_tokens is not None and isinstance(usage, dict):
            tokens_in = prompt_tokens
            out = _count(usage.get("completion_tokens"))
            tokens_out = out if out is not None else self.max_tokens
        else:
            tokens_in, tokens_out = bill.worst_in, self.max_tokens
            self.meter.usage_missing += 1
        cost = self.meter.settle(bill.reservation, tokens_in, tokens_out)
        self.limiter.settle(bill.estimated, tokens_in + tokens_out)
        try:
            content = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise _Malformed("the server's reply has no choices[0].message.content") from None
        if content is not None and not isinstance(content, str):
            raise _Malformed("choices[0].message.content is not a string")
        return ChatReply(self.scrub(content or ""), tokens_in, tokens_out, cost, latency, attempts, reported)

    def _error_detail(self, raw: bytes) -> str:
        text = ""
        try:
            body = json.loads(raw)
            error = body.get("error") if isinstance(body, dict) else None
            if isinstance(error, dict):
                text = str(error.get("message", ""))
            elif isinstance(error, str):
                text = error
            elif isinstance(body, dict) and "detail" in body:
                text = str(body["detail"])
        except (UnicodeDecodeError, ValueError, RecursionError):
            text = raw.decode("utf-8", errors="replace")
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


@dataclass
class _Bill:
    """One request's rate-limit estimate, worst-case input tokens and its current cost reservation."""

    estimated: int
    worst_in: int
    reservation: float = 0.0


async def _read_capped(response: Any, limit: int) -> bytes | None:
    """The response body, or None as soon as it grows past ``limit`` bytes (the rest is never read)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _cause(error: Exception, scrub: Callable[[str], str]) -> str:
    """A transport error in words, naming the operating system's reason (e.g. "connection refused").

    httpx's own message is often only "All connection attempts failed"; the reason lies in its cause chain.
    """
    text = " ".join(scrub(str(error)).split()) or type(error).__name__
    seen: BaseException | None = error
    for _ in range(8):  # a bounded walk down __cause__ / __context__
        seen = seen.__cause__ or seen.__context__ if seen is not None else None
        if isinstance(seen, OSError) and seen.errno is not None:
            reason = os.strerror(seen.errno).lower()
            return text if reason in text.lower() else f"{reason}: {text}"
    return f"{type(error).__name__}: {text}"


class _Malformed(Exception):
    """A 200 answer that is not a chat completion (retried like a server error)."""


def _count(value: object) -> int | None:
    """A token count from a ``usage`` field, or None when it is not a whole number >= 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
