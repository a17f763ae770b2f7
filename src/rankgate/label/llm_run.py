"""Judging with an LLM: one request per distinct text pair, answers from the cache, the estimate, the workers."""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import Any

from rankgate.errors import BackendError
from rankgate.label.cost import CostLimitReached, estimate_input_tokens, worst_case_input_tokens
from rankgate.label.llm import LLMJudge
from rankgate.label.outcome import Estimate, LabelInterrupted
from rankgate.label.progress import LabelProgress
from rankgate.label.store import CLAIMED, DONE, JudgmentStore, now_iso
from rankgate.label.types import STATUS_ERROR, STATUS_FAILED, STATUS_OK, Judgment, Pair

EXPECTED_OUTPUT_TOKENS = 40  # a JSON verdict with a one-sentence reason


def plan_requests(
    judge: LLMJudge, todo: Sequence[Pair], store: JudgmentStore
) -> tuple[list[Pair], dict[str, list[Pair]], list[tuple[Pair, Judgment]]]:
    """Split pairs into requests to send, pairs sharing a request's texts, and cache hits."""
    leaders: list[Pair] = []
    followers: dict[str, list[Pair]] = {}
    hits: list[tuple[Pair, Judgment]] = []
    for pair in todo:
        key = judge.cache_key(pair)
        if key in followers:
            followers[key].append(pair)
            continue
        hit = store.cached(key)
        if hit is not None:
            hits.append((pair, hit))
            continue
        followers[key] = []
        leaders.append(pair)
    return leaders, followers, hits


def estimate_requests(judge: LLMJudge, leaders: Sequence[Pair], cache_hits: int) -> Estimate:
    """Tokens and cost of sending ``leaders``: typical (a short verdict) and worst case (max_tokens)."""
    prices = judge.client.meter.prices
    max_tokens = judge.client.max_tokens
    tokens_in = worst_in = 0
    for pair in leaders:
        messages = judge.messages(pair)
        tokens_in += estimate_input_tokens(messages)
        worst_in += worst_case_input_tokens(messages)
    tokens_out = EXPECTED_OUTPUT_TOKENS * len(leaders)
    worst_out = max_tokens * len(leaders)
    return Estimate(
        requests=len(leaders),
        cache_hits=cache_hits,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost=prices.cost(tokens_in, tokens_out),
        worst_input_tokens=worst_in,
        worst_output_tokens=worst_out,
        worst_cost=prices.cost(worst_in, worst_out),
    )


def copy_judgment(source: Judgment, pair: Pair) -> Judgment:
    """A judgment of ``pair`` taken over from a judgment of the same texts (free)."""
    return dataclasses.replace(
        source,
        query_id=pair.query_id,
        doc_id=pair.doc_id,
        cached=True,
        attempts=0,
        input_tokens=0,
        output_tokens=0,
        cost=0.0,
        latency_ms=0.0,
        created_at=now_iso(),
        extra={},
    )


def judge_llm(
    judge: LLMJudge,
    leaders: list[Pair],
    followers: dict[str, list[Pair]],
    store: JudgmentStore,
    concurrency: int,
    progress: bool,
    counts: Counter[str],
) -> str | None:
    """Run the workers; returns "max-cost" when the cap stopped them, "claimed" when another run held pairs.

    Each request's texts are claimed in the store first (`JudgmentStore.claim`), so two runs on
    one store never pay twice for them. Fatal errors propagate. Ctrl-C (`KeyboardInterrupt`)
    raises `LabelInterrupted` carrying how many requests were in flight: sent, their answers
    not stored (its other counts are `label_pool`'s to fill in).
    """
    if not leaders:
        return None
    total = len(leaders) + sum(len(followers.get(judge.cache_key(p), [])) for p in leaders)
    state: dict[str, Any] = {"stop": None, "fatal": None, "processed": 0, "in_flight": 0}
    queue = iter(leaders)
    meter = judge.client.meter

    async def worker(bar: LabelProgress) -> None:
        while state["stop"] is None:
            pair = next(queue, None)
            if pair is None:
                return
            key = judge.cache_key(pair)
            shared = followers.get(key, [])
            claim = store.claim(key)
            if claim != CLAIMED:  # another run on this store answered these texts, or is asking now
                state["processed"] += _not_sent(claim, key, [pair, *shared], store, counts)
                bar.advance(1 + len(shared))
                continue
            state["in_flight"] += 1  # down again once answered; an interrupted request stays counted
            try:
                result = await judge.judge(pair)
            except CostLimitReached as e:
                state["in_flight"] -= 1
                state["stop"] = "max-cost"
                if e.partial is not None:  # paid-for requests of a pair left unanswered
                    store.put(e.partial)
                    counts["errors"] += 1 + len(shared)
                    state["processed"] += 1 + len(shared)  # begun, so not "not started"
                store.release(key)
                return
            except BaseException as e:  # released, so that a rerun or another run can take the pair
                store.release(key)
                if isinstance(e, KeyboardInterrupt):  # stop every worker, as asyncio.run's own Ctrl-C handler does
                    state["stop"] = "interrupted"
                    state["main"].cancel()
                    return
                if not isinstance(e, BackendError):
                    raise
                state["stop"], state["fatal"] = "fatal", e
                return
            store.put(result)  # stored before the claim goes: another run then finds it "done"
            state["in_flight"] -= 1
            store.release(key)
            _share(result, shared, store, counts)
            state["processed"] += 1 + len(shared)
            bar.advance(1 + len(shared), meter.spent if not meter.prices.free else None)

    async def main(bar: LabelProgress) -> None:
        state["main"] = asyncio.current_task()
        async with judge.client:
            await asyncio.gather(*(worker(bar) for _ in range(min(concurrency, len(leaders)))))

    try:
        with LabelProgress(progress, f"judging with {judge.model}", total, show_cost=not meter.prices.free) as bar:
            asyncio.run(main(bar))
    except KeyboardInterrupt:  # Ctrl-C while asyncio.run waited: it cancelled the workers
        state["stop"] = "interrupted"
    except asyncio.CancelledError:  # a worker met Ctrl-C and cancelled the others (above)
        if state["stop"] != "interrupted":
            raise
    return _ended(state, total, counts)


def _ended(state: dict[str, Any], total: int, counts: Counter[str]) -> str | None:
    """What stopped `judge_llm`'s workers: an exception to raise, or the stop reason it returns."""
    if state["stop"] == "interrupted":
        raise LabelInterrupted(in_flight=state["in_flight"])
    if state["fatal"] is not None:
        raise state["fatal"]
    if state["stop"] == "max-cost":
        counts["not_started"] += total - state["processed"]
        return "max-cost"
    return "claimed" if counts["claimed_elsewhere"] else None


def _share(result: Judgment, shared: list[Pair], store: JudgmentStore, counts: Counter[str]) -> None:
    """Count a stored answer, and copy it to the pairs sharing its texts (an answer that never came is not)."""
    counts[{STATUS_OK: "new", STATUS_FAILED: "failed", STATUS_ERROR: "errors"}[result.status]] += 1
    if result.status == STATUS_ERROR:
        counts["errors"] += len(shared)  # not stored: the next run asks again
    elif shared:
        store.put_many([copy_judgment(result, p) for p in shared])
        counts["cached" if result.ok else "failed"] += len(shared)


def _not_sent(claim: str, key: str, pairs: list[Pair], store: JudgmentStore, counts: Counter[str]) -> int:
    """Pairs whose texts another run on the store answered (copied, free) or is asking about (left); how many."""
    hit = store.cached(key) if claim == DONE else None
    if hit is None:  # busy: the other run stores them; a rerun picks them up
        counts["not_started"] += len(pairs)
        counts["claimed_elsewhere"] += len(pairs)
    else:
        store.put_unless_ok([copy_judgment(hit, p) for p in pairs])
        counts["cached"] += len(pairs)
    return len(pairs)
