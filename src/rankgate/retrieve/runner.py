"""`retrieve`: ask a live retriever every query, with the operations a real service needs.

- Concurrency: ``concurrency`` requests in flight, each in a worker thread (adapters are blocking
  clients); the bookkeeping (cache, progress, retries) runs on one asyncio loop. The threads are
  daemons (`_Workers`), so a call that never returns cannot keep Ctrl-C from ending the process.
- Rate limit: ``rate`` requests per second at most (retries count), with a one-second burst
  (`rankgate.retrieve.ratelimit.RateLimiter`, the same limiter `rankgate label` uses).
- Retries: a `TransientFailure` (429, 5xx, timeout, dropped connection) is retried up to
  ``retries`` times after an exponential backoff with full jitter; when the service sent
  ``Retry-After``, every worker pauses that long instead. A `QueryFailed` is not retried.
- Cache: each answer is committed to the `AnswerCache` as it arrives (keyed by the retriever's
  identity and k), so a rerun after an interruption, even ``kill -9``, asks only for the rest;
  ``refresh`` asks every query again and replaces the stored answers.
- Latency: one figure per query, the time its requests took (each from sending it to parsing the
  answer or to its error or timeout), summed over its attempts; the waits between attempts
  (backoff, ``Retry-After``, the rate limit) are not counted. A failed query counts too, at the
  time it took, so a timeout counts at least the timeout (load-testing tools count failed
  requests the same way): the percentiles cannot look better because requests failed.
- Outputs: the run file is written atomically, and only when every query was answered (or with
  ``allow_failures``, from the answered ones); the JSONL file, one line per query with its hits,
  latency, attempts and error, is written in both cases.
- Interruption (Ctrl-C): `RetrieveInterrupted`, a `KeyboardInterrupt` that says how many answers
  the cache holds, so the caller can say that the same call resumes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import queue
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from rankgate.bench.progress import SILENT
from rankgate.errors import ConfigError, Interrupted, RankgateError
from rankgate.io.yaml import cut
from rankgate.retrieve.base import Hit, LiveRetriever, QueryFailed, TransientFailure
from rankgate.retrieve.cache import AnswerCache
from rankgate.retrieve.outcome import Answer, RetrieveReport, attempts, tidy
from rankgate.retrieve.progress import Counted
from rankgate.retrieve.ratelimit import RateLimiter

PathLike = str | os.PathLike[str]
SCORES = ("given", "ranks")
P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """When to ask a query again, and how long to wait first: the runner's policy, which ``bench``'s live rows share.

    A `TransientFailure` is retried up to ``retries`` times; a `QueryFailed` never. Before retry
    n (0-based) the wait is the service's ``Retry-After`` when it sent one, else uniform(0,
    min(max_backoff, backoff * 2**n)) (exponential backoff with full jitter).

    >>> policy = RetryPolicy(retries=2, backoff=0.5, max_backoff=1.0)
    >>> policy.wait(0, TransientFailure("HTTP 429", retry_after=3.0), random.Random(0))
    3.0
    >>> 0.0 <= policy.wait(5, TransientFailure("HTTP 500"), random.Random(0)) <= 1.0
    True
    """

    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 30.0

    def wait(self, attempt: int, failure: TransientFailure, rng: random.Random) -> float:
        """Seconds to wait before asking again after ``failure`` on (0-based) ``attempt``."""
        if failure.retry_after is not None:
            return failure.retry_after
        return rng.uniform(0.0, min(self.max_backoff, self.backoff * 2**attempt))


@dataclass
class Settings:
    """How to ask: the runner's knobs (see `retrieve`)."""

    k: int
    concurrency: int = 8
    rate: float | None = None
    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 30.0
    scores: str = "given"

    @property
    def retry(self) -> RetryPolicy:
        return RetryPolicy(self.retries, self.backoff, self.max_backoff)

    def check(self) -> None:
        if self.scores not in SCORES:
            raise ConfigError(f"The 'scores' parameter must be one of {SCORES}. Got {self.scores!r} instead.")
        for name, value, low in (("k", self.k, 1), ("concurrency", self.concurrency, 1), ("retries", self.retries, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"The '{name}' parameter must be an int >= {low}. Got {value!r} instead.")
        if self.rate is not None and not self.rate > 0:
            raise ConfigError(f"The 'rate' parameter must be > 0 (requests per second). Got {self.rate!r} instead.")
        if self.backoff < 0 or self.max_backoff < 0:
            raise ConfigError("The 'backoff' and 'max_backoff' parameters must be >= 0.")


class RetrieveInterrupted(Interrupted):
    """Ctrl-C stopped `retrieve`: ``saved`` of the ``total`` queries have their answer in the cache
    at ``store`` (`rankgate.errors.Interrupted`). ``refresh`` is the call's: rerunning with it set
    would ask the saved queries again."""

    def __init__(self, saved: int, total: int, cache: str | None, refresh: bool, in_flight: int = 0) -> None:
        super().__init__(saved, total, cache, noun="answers", refresh=refresh, in_flight=in_flight)


@dataclass
class _Tally:
    retries: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0  # requests sent and not answered yet (Ctrl-C drops them: a rerun asks again)

    def count(self, message: str) -> None:
        reason = cut(message.split(" from ")[0], 60)
        self.retries += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1


def retrieve(
    queries: Mapping[str, str],
    retriever: LiveRetriever,
    *,
    k: int,
    output: PathLike | None = None,
    jsonl: PathLike | None = None,
    concurrency: int = 8,
    rate: float | None = None,
    retries: int = 3,
    backoff: float = 0.5,
    max_backoff: float = 30.0,
    scores: str = "given",
    cache: PathLike | None = None,
    refresh: bool = False,
    allow_failures: bool = False,
    tag: str | None = None,
    progress: Counted = SILENT,
) -> RetrieveReport:
    """Ask ``retriever`` for the top ``k`` of every query; write the run (see the module docstring).

    Args:
        queries: ``{query_id: text}`` (`rankgate.io.texts.read_queries` reads a file).
        retriever: any `LiveRetriever` (`rankgate.retrieve.spec.open_retriever` builds one from a SPEC).
        k: hits per query.
        output: the run file (TREC unless the extension says otherwise); None writes none.
        jsonl: one JSON line per query (hits, latency, attempts, error); None writes none.
        concurrency: requests in flight.
        rate: requests per second at most; None for no limit.
        retries: retries of a query after a transient failure.
        backoff: base delay in seconds; retry n waits uniform(0, min(max_backoff, backoff * 2**n)).
        max_backoff: cap of one backoff delay.
        scores: ``given`` keeps the retriever's scores (from ranks where it gives none); ``ranks``
            sets every query's scores from ranks, so trec_eval keeps the returned order even
            where the given scores tie.
        cache: the answer cache file; None for no cache.
        refresh: ask every query again (the cache still stores the new answers).
        allow_failures: write the run from the answered queries even when some failed.
        tag: the run tag (default: the output file's stem).
        progress: a progress bar on stderr (`Progress.auto()`), or lines for a log
            (`rankgate.retrieve.progress.LogProgress`); silent by default.

    Returns:
        The `RetrieveReport`; ``report.failures`` lists the queries without an answer.

    Raises:
        RetrieveInterrupted: on Ctrl-C, with the number of answers the cache holds.
    """
    settings = Settings(k, concurrency, rate, retries, backoff, max_backoff, scores)
    settings.check()
    identity = dict(retriever.identity())
    store = AnswerCache(cache) if cache is not None else None
    try:
        key = store.register(identity, k) if store is not None else ""
        stored = store.lookup(key, queries) if store is not None and not refresh else {}
        answers: dict[str, Answer] = {
            qid: tidy(qid, c.hits, k, latency_ms=c.latency_ms, attempts=0, cached=True, scores=scores)
            for qid, c in stored.items()
        }
        pending = [(qid, text) for qid, text in queries.items() if qid not in stored]
        saved = [len(stored)]

        def keep(answer: Answer, raw: Sequence[Hit], text: str) -> None:
            if store is not None and not answer.failed:
                store.store(key, answer.query_id, text, raw, answer.latency_ms)
                saved[0] += 1
            answers[answer.query_id] = answer

        tally = _Tally()
        started = time.perf_counter()
        with progress.counted(f"asking {retriever.kind}", len(pending)) as tick:

            def on_answer(answer: Answer, raw: Sequence[Hit], text: str) -> None:
                keep(answer, raw, text)
                tick(answer.failed)

            try:
                _run_loop(_ask_all(retriever, pending, settings, on_answer, tally))
            except KeyboardInterrupt:
                where = os.fspath(cache) if store is not None and cache is not None else None
                saved_now = saved[0] if where else 0
                raise RetrieveInterrupted(saved_now, len(queries), where, refresh, tally.in_flight) from None
        wall = time.perf_counter() - started
    finally:
        if store is not None:
            store.close()
    report = RetrieveReport(
        {"kind": retriever.kind, "identity": identity},
        k,
        [answers[qid] for qid in queries],
        wall,
        retries=tally.retries,
        retry_reasons=tally.reasons,
        run=os.fspath(output) if output is not None else None,
        jsonl=os.fspath(jsonl) if jsonl is not None else None,
        cache=os.fspath(cache) if cache is not None else None,
        blank=[qid for qid, text in queries.items() if not text.strip()],
        scores=scores,
    )
    _write(report, output, jsonl, allow_failures, tag)
    return report


def _write(
    report: RetrieveReport, output: PathLike | None, jsonl: PathLike | None, allow_failures: bool, tag: str | None
) -> None:
    """The JSONL file always; the run file only from complete answers (or with ``allow_failures``)."""
    import json

    from rankgate.io.source import atomic_writer

    if jsonl is not None:
        with atomic_writer(jsonl) as f:
            for answer in report.answers:
                f.write(json.dumps(answer.to_dict(), ensure_ascii=False) + "\n")
    if output is not None and (allow_failures or not report.failures):
        from rankgate.io.writers import write_run

        write_run(to_run(report.answers, name=tag or Path(output).name.split(".")[0]), output, tag=tag)
        report.written = True


def to_run(answers: Sequence[Answer], *, name: str | None = None) -> Any:
    """A `rankgate.Run` of the answered queries (failed ones have no rows)."""
    from rankgate.core.run import Run

    rows = [(a.query_id, h.doc_id, h.score) for a in answers if not a.failed for h in a.hits]
    qids, docs, scores = (list(c) for c in zip(*rows, strict=True)) if rows else ([], [], [])
    return Run(qids, docs, scores, name=name, source="<retrieve>")


def _run_loop(job: Any) -> None:
    """Run the coroutine ``job`` to its end, also from a thread that already runs an event loop (Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(job)
        return
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, job).result()


OnAnswer = Callable[[Answer, Sequence[Hit], str], None]


async def _ask_all(
    retriever: LiveRetriever, pending: list[tuple[str, str]], settings: Settings, on_answer: OnAnswer, tally: _Tally
) -> None:
    """``settings.concurrency`` workers take queries in order until none is left."""
    if not pending:
        return
    limiter = RateLimiter(settings.rate * 60 if settings.rate else None, burst_seconds=1.0)
    executor = _Workers(min(settings.concurrency, len(pending)))
    todo = iter(pending)
    rng = random.Random()

    async def worker() -> None:
        for qid, text in todo:  # one loop thread: the shared iterator needs no lock
            answer, raw = await _ask_one(retriever, qid, text, settings, limiter, executor, tally, rng)
            on_answer(answer, raw, text)

    try:
        await asyncio.gather(*(worker() for _ in range(min(settings.concurrency, len(pending)))))
    finally:
        executor.shutdown(wait=False, cancel_futures=True)


async def _ask_one(
    retriever: LiveRetriever,
    qid: str,
    text: str,
    settings: Settings,
    limiter: RateLimiter,
    executor: concurrent.futures.Executor,
    tally: _Tally,
    rng: random.Random,
) -> tuple[Answer, Sequence[Hit]]:
    """One query, retried after transient failures; (its answer, the hits as returned).

    The answer's latency is the time its attempts took, the failed ones included, without the
    waits between them (see the module docstring).
    """
    loop = asyncio.get_running_loop()
    last = "no attempt made"
    spent = 0.0
    for attempt in range(settings.retries + 1):
        await limiter.acquire(0)
        tally.in_flight += 1  # not taken back when Ctrl-C cancels the wait: the request is still out
        outcome, latency = await loop.run_in_executor(executor, _timed, retriever, qid, text, settings.k)
        tally.in_flight -= 1
        spent += latency
        if isinstance(outcome, TransientFailure):
            last = str(outcome)
            if attempt == settings.retries:
                break
            tally.count(last)
            wait = settings.retry.wait(attempt, outcome, rng)
            if outcome.retry_after is not None:
                limiter.pause(wait)  # the service asked every client to wait: every worker pauses
            else:
                await asyncio.sleep(wait)
            continue
        if isinstance(outcome, QueryFailed):
            return Answer(qid, latency_ms=spent, attempts=attempt + 1, error=str(outcome)), ()
        if isinstance(outcome, RankgateError):
            raise outcome  # a missing extra, a bad configuration: the whole run stops
        if isinstance(outcome, Exception):  # an adapter's bug: reported for this query, the run goes on
            error = f"unexpected {type(outcome).__name__}: {cut(str(outcome), 200)}"
            return Answer(qid, latency_ms=spent, attempts=attempt + 1, error=error), ()
        answer = tidy(
            qid, outcome, settings.k, latency_ms=spent, attempts=attempt + 1, cached=False, scores=settings.scores
        )
        return answer, outcome
    tries = settings.retries + 1
    return Answer(qid, latency_ms=spent, attempts=tries, error=f"no answer after {attempts(tries)}; last: {last}"), ()


def _timed(retriever: LiveRetriever, qid: str, text: str, k: int) -> tuple[list[Hit] | Exception, float]:
    """``retriever.search`` in a worker thread: (its hits, or the exception it raised; its latency in ms)."""
    started = time.perf_counter()
    try:
        outcome: list[Hit] | Exception = list(retriever.search(qid, text, k))
    except Exception as e:  # handed back with the time it took: a failure counts in the latency
        outcome = e
    return outcome, (time.perf_counter() - started) * 1000.0


class _Workers(concurrent.futures.Executor):
    """``n`` daemon threads that run the calls submitted, in order.

    `concurrent.futures.ThreadPoolExecutor` joins its threads when the interpreter exits, so one
    search that never returns (a Python retriever without a timeout, stuck) would keep a process
    that Ctrl-C stopped from ending. A daemon thread is left behind instead; its answer is dropped.
    """

    def __init__(self, n: int) -> None:
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"rankgate-retrieve-{i}", daemon=True) for i in range(n)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((future, lambda: fn(*args, **kwargs)))
        return future

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, call = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(call())
            except BaseException as e:  # handed to the waiting coroutine (KeyboardInterrupt included)
                future.set_exception(e)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            with contextlib.suppress(queue.Empty):
                while True:
                    job = self._jobs.get_nowait()
                    if job is not None:
                        job[0].cancel()
        for _ in self._threads:
            self._jobs.put(None)
        if wait:
            for thread in self._threads:
                thread.join()
