"""The chat-completions client and the LLM judge: retries, backoff, Retry-After, rate limits,
strict parsing, cost accounting and key hygiene, against httpx's MockTransport (fast, exact)
and against the local fake server (the real HTTP path)."""

from __future__ import annotations

import asyncio
import json
import random
from collections import deque
from typing import Any

import httpx
import pytest

from rankgate.errors import BackendError, ConfigError
from rankgate.label.chat import ChatClient, TransientFailure, retry_after_seconds
from rankgate.label.cost import CostLimitReached, CostMeter, Prices, worst_case_input_tokens
from rankgate.label.llm import LLMJudge
from rankgate.label.prompts import Prompt
from rankgate.label.ratelimit import RateLimiter, TokenBucket
from rankgate.label.secret import Secret
from rankgate.label.types import STATUS_ERROR, STATUS_FAILED, STATUS_OK, Pair
from tests.label_support import FakeChatServer, grade_of

KEY = "sk-test-9f8e7d6c5b4a-SECRET"


class FakeTime:
    """A clock that only moves when someone sleeps; every sleep is recorded."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def completion(content: str, prompt_tokens: int = 100, completion_tokens: int = 10) -> dict[str, Any]:
    return {
        "choices": [{"message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


def scripted(*steps: Any) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A transport answering with ``steps`` in order: an httpx.Response, or an exception to raise."""
    plan = deque(steps)
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        step = plan.popleft()
        if isinstance(step, Exception):
            raise step
        return step

    return httpx.MockTransport(handler), seen


def client(transport: httpx.MockTransport, time_: FakeTime, **kwargs: Any) -> ChatClient:
    kwargs.setdefault("backoff", 1.0)
    return ChatClient(
        "http://judge.test/v1",
        "m1",
        api_key=Secret(KEY),
        transport=transport,
        sleep=time_.sleep,
        clock=time_.clock,
        rng=random.Random(7),
        **kwargs,
    )


def ask(c: ChatClient, content: str = "hello") -> Any:
    async def go() -> Any:
        async with c:
            return await c.complete([{"role": "user", "content": content}])

    return asyncio.run(go())


GOOD = httpx.Response(200, json=completion('{"relevance": 2, "reason": "ok"}'))


def test_a_request_carries_model_messages_and_the_key_only_in_the_header():
    t = FakeTime()
    transport, seen = scripted(GOOD)
    reply = ask(client(transport, t, max_tokens=64, json_mode=True))
    assert reply.content == '{"relevance": 2, "reason": "ok"}'
    assert (reply.input_tokens, reply.output_tokens, reply.attempts) == (100, 10, 1)
    request = seen[0]
    assert str(request.url) == "http://judge.test/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = json.loads(request.content)
    assert body == {
        "model": "m1",
        "messages": [{"role": "user", "content": "hello"}],
        "temperature": 0.0,
        "max_tokens": 64,
        "response_format": {"type": "json_object"},
    }
    assert t.sleeps == []


def test_429_honours_retry_after_and_500_backs_off_with_full_jitter():
    t = FakeTime()
    transport, seen = scripted(
        httpx.Response(429, headers={"Retry-After": "7"}, json={"error": {"message": "slow down"}}),
        httpx.Response(500, json={"error": {"message": "boom"}}),
        httpx.Response(503, text="unavailable"),
        GOOD,
    )
    c = client(transport, t, backoff=0.5)
    reply = ask(c)
    assert reply.attempts == 4 and len(seen) == 4
    # The 429 waits exactly what the server asked (through the shared limiter pause).
    assert t.sleeps[0] == 7.0
    # Then full jitter: attempt n waits uniform(0, backoff * 2**n); the draws are the seeded ones.
    rng = random.Random(7)
    assert t.sleeps[1:] == [rng.uniform(0, 0.5 * 2**1), rng.uniform(0, 0.5 * 2**2)]
    assert c.retry_reasons == {"429": 1, "500": 1, "503": 1}


def test_timeouts_and_connection_errors_are_retried_then_give_up():
    t = FakeTime()
    transport, seen = scripted(
        httpx.ReadTimeout("slow"),
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
    )
    c = client(transport, t, max_retries=2, backoff=0.1)
    with pytest.raises(TransientFailure, match=r"no answer after 3 attempts; last: timed out after 60 s"):
        ask(c)
    assert len(seen) == 3
    assert len(t.sleeps) == 2 and all(0 <= s <= 0.1 * 2**i for i, s in enumerate(t.sleeps))


def test_retry_after_as_http_date_and_bad_values():
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0
    assert retry_after_seconds("-3") == 0.0
    assert retry_after_seconds("99999") == 600.0
    assert retry_after_seconds(None) is None and retry_after_seconds("later") is None


@pytest.mark.parametrize("status", [401, 403, 404])
def test_401_403_404_stop_the_run_and_never_show_the_key(status):
    t = FakeTime()
    body = {"error": {"message": f"Incorrect API key provided: Bearer {KEY}"}}
    transport, seen = scripted(httpx.Response(status, json=body))
    with pytest.raises(BackendError) as info:
        ask(client(transport, t))
    message = str(info.value)
    assert f"HTTP {status}" in message and "***" in message
    assert KEY not in message and KEY not in repr(info.value)
    assert len(seen) == 1  # not retried


def test_other_4xx_fail_the_pair_without_retrying():
    t = FakeTime()
    transport, seen = scripted(httpx.Response(400, json={"error": {"message": "context length exceeded"}}))
    judge = LLMJudge(client(transport, t), Prompt.builtin("graded"))
    result = asyncio.run(_judge(judge, Pair("q1", "d1", "tea", "long text")))
    assert result.status == STATUS_FAILED and result.label is None
    assert "HTTP 400" in result.error and "context length exceeded" in result.error
    assert len(seen) == 1


async def _judge(judge: LLMJudge, pair: Pair) -> Any:
    async with judge.client:
        return await judge.judge(pair)


def test_unreadable_answers_are_retried_with_feedback_then_recorded_as_failed():
    t = FakeTime()
    transport, seen = scripted(
        httpx.Response(200, json=completion("It is relevant, 2.", 50, 5)),
        httpx.Response(200, json=completion('{"relevance": "2", "reason": "x"}', 60, 6)),
        httpx.Response(200, json=completion('{"relevance": 9}', 70, 7)),
    )
    judge = LLMJudge(client(transport, t), Prompt.builtin("graded"), parse_retries=2)
    result = asyncio.run(_judge(judge, Pair("q1", "d1", "tea", "text")))
    assert result.status == STATUS_FAILED and result.label is None  # never guessed
    assert (result.attempts, result.input_tokens, result.output_tokens) == (3, 180, 18)
    assert "must be one of the integers 0, 1, 2, 3 (got 9)" in result.error
    assert result.raw == '{"relevance": 9}'
    # The retry shows the model its reply and what was wrong.
    second = json.loads(seen[1].content)["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[2]["content"] == "It is relevant, 2."
    assert "not a single JSON object" in second[3]["content"]


def test_an_answer_after_one_unreadable_reply_is_kept_with_summed_usage():
    t = FakeTime()
    transport, _ = scripted(
        httpx.Response(200, json=completion("relevant!", 50, 5)),
        httpx.Response(200, json=completion('```json\n{"relevance": 3, "reason": "exact answer"}\n```', 80, 9)),
    )
    judge = LLMJudge(client(transport, t), Prompt.builtin("graded"))
    result = asyncio.run(_judge(judge, Pair("q1", "d1", "tea", "text")))
    assert (result.status, result.label, result.reason) == (STATUS_OK, 3, "exact answer")
    assert (result.attempts, result.input_tokens, result.output_tokens) == (2, 130, 14)
    assert result.error == "" and result.raw == ""


def test_exhausted_retries_make_an_error_judgment_retried_on_the_next_run():
    t = FakeTime()
    transport, _ = scripted(*[httpx.Response(500, json={}) for _ in range(3)])
    judge = LLMJudge(client(transport, t, max_retries=2), Prompt.builtin("graded"))
    result = asyncio.run(_judge(judge, Pair("q1", "d1", "tea", "text")))
    assert result.status == STATUS_ERROR and result.label is None
    assert "no answer after 3 attempts; last: HTTP 500" in result.error


def test_malformed_bodies_are_retried_like_server_errors():
    t = FakeTime()
    transport, seen = scripted(
        httpx.Response(200, content=b"<html>gateway</html>"),
        httpx.Response(200, json={"usage": {"prompt_tokens": 5, "completion_tokens": 0}}),
        GOOD,
    )
    c = client(transport, t, backoff=0.01)
    assert ask(c).content.startswith('{"relevance": 2')
    assert len(seen) == 3 and c.retry_reasons == {"malformed": 2}


def test_cost_is_settled_from_usage_and_missing_usage_counts_the_worst_case():
    t = FakeTime()
    prices = Prices(2.0, 10.0)
    meter = CostMeter(prices)
    no_usage = {"choices": [{"message": {"content": '{"relevance": 1, "reason": "x"}'}}]}
    transport, _ = scripted(GOOD, httpx.Response(200, json=no_usage))
    c = client(transport, t, meter=meter, max_tokens=50)
    first, second = ask(c, "hello"), ask(c, "hello")
    assert first.cost == pytest.approx((100 * 2.0 + 10 * 10.0) / 1e6)
    worst_in = worst_case_input_tokens([{"role": "user", "content": "hello"}])
    assert worst_in == 5 + 64
    assert not second.usage_reported and second.cost == pytest.approx((worst_in * 2.0 + 50 * 10.0) / 1e6)
    assert meter.spent == pytest.approx(first.cost + second.cost)
    assert meter.usage_missing == 1 and meter.in_flight == pytest.approx(0.0)


def test_the_cost_cap_refuses_a_request_that_could_cross_it():
    t = FakeTime()
    prices = Prices(1000.0, 1000.0)  # 0.001 a token
    worst = (5 + 64 + 20) * 0.001
    meter = CostMeter(prices, max_cost=worst * 1.5)
    transport, seen = scripted(GOOD)
    c = client(transport, t, meter=meter, max_tokens=20)
    assert ask(c).cost == pytest.approx(110 * 0.001)  # 0.110 spent, cap 0.1335
    with pytest.raises(CostLimitReached):
        ask(c)
    assert len(seen) == 1 and meter.spent <= meter.max_cost  # type: ignore[operator]


def test_the_cost_cap_is_reached_when_nothing_is_in_flight_despite_float_rounding():
    # Reservations of 0.1, 0.2 and 0.3 released again leave a float sum of 5.6e-17, not 0: a meter
    # that trusted the sum would think a request is in flight, and a worker would wait for it forever.
    meter = CostMeter(Prices(100_000.0, 0.0), max_cost=0.65)  # a token costs 0.1
    held = [meter.reserve(n, 0) for n in (1, 2, 3)]
    for reservation in held:
        meter.release(reservation)
    assert meter.pending == 0 and meter.in_flight == 0.0

    async def go() -> None:
        await asyncio.wait_for(meter.reserve_when_possible(7, 0), timeout=5)  # 0.7 > 0.65

    with pytest.raises(CostLimitReached):
        asyncio.run(go())


def test_rate_limits_space_requests_by_the_fake_clock():
    t = FakeTime()
    limiter = RateLimiter(requests_per_minute=60, tokens_per_minute=None, clock=t.clock, sleep=t.sleep)
    limiter.requests = TokenBucket(60, clock=t.clock, burst_seconds=1)  # one request a second, no burst

    async def go() -> None:
        for _ in range(4):
            await limiter.acquire(10)

    asyncio.run(go())
    assert t.sleeps == [1.0, 1.0, 1.0] and t.now == 3.0


def test_token_limit_and_settling_real_usage():
    t = FakeTime()
    limiter = RateLimiter(None, tokens_per_minute=600, clock=t.clock, sleep=t.sleep)  # 10 tokens/s, bucket 100

    async def go() -> None:
        await limiter.acquire(100)  # the whole bucket
        limiter.settle(100, 40)  # the request used 40: 60 come back
        await limiter.acquire(60)  # no wait
        await limiter.acquire(50)  # 50 short: 5 s

    asyncio.run(go())
    assert t.sleeps == [5.0]


def test_a_429_pauses_every_worker():
    t = FakeTime()
    limiter = RateLimiter(clock=t.clock, sleep=t.sleep)
    limiter.pause(3.0)

    async def go() -> None:
        await asyncio.gather(limiter.acquire(1), limiter.acquire(1))

    asyncio.run(go())
    assert t.sleeps == [3.0] and t.now == 3.0


def test_client_validates_its_settings_and_hides_the_key():
    with pytest.raises(ConfigError, match="must start with http"):
        ChatClient("judge.test/v1", "m")
    c = ChatClient("https://user:pw@judge.test/v1", "m", api_key=Secret(KEY))
    assert KEY not in repr(c) and "pw" not in repr(c)
    assert c.describe()["base_url"] == "https://judge.test/v1"
    assert KEY not in json.dumps(c.describe())


# -- against the real local server ----------------------------------------------------------


def run_judge(server: FakeChatServer, pairs: list[Pair], **kwargs: Any) -> list[Any]:
    async def go() -> list[Any]:
        c = ChatClient(server.url, "fake-model", api_key=Secret(KEY), backoff=0.01, **kwargs)
        judge = LLMJudge(c, Prompt.builtin("graded"))
        async with c:
            return list(await asyncio.gather(*(judge.judge(p) for p in pairs)))

    return asyncio.run(go())


def test_the_local_server_path_with_injected_faults():
    pairs = [Pair("q1", f"d{i}", "what is it", f"doc {i} rel={i % 4}") for i in range(6)]
    faults = deque(["429", "500", "timeout", "malformed", "garbage", "badlabel"])
    with FakeChatServer(queue=faults, slow_seconds=8.0) as server:
        results = run_judge(server, pairs, timeout=1.5)
        records = list(server.records)
    assert [r.label for r in results] == [grade_of(p.document) for p in pairs]
    assert all(r.status == STATUS_OK for r in results)
    assert len(records) == 6 + 6  # every fault cost exactly one extra request
    assert {r.authorization for r in records} == {f"Bearer {KEY}"}


def test_the_local_server_key_echo_is_scrubbed_from_stored_text():
    pair = Pair("q1", "d1", "what", "doc rel=2")
    with FakeChatServer(faults={"doc rel=2": ["echo", "echo", "echo"]}) as server:
        (result,) = run_judge(server, [pair])
    assert result.status == STATUS_FAILED
    assert KEY not in result.raw and KEY not in result.error and "***" in result.raw
