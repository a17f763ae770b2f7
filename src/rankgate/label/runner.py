"""Judging a pool: skip what is stored, reuse the cache, estimate, then judge within the budgets.

`label_pool` is the library call behind ``rankgate label``. For an LLM judge it

1. skips pairs the same judge (model + prompt hash) has in the store, so a rerun resumes;
2. answers pairs whose (model, prompt, query text, document text) were judged before from the
   cache (free), and sends texts shared by several pairs (duplicate documents) only once;
3. estimates tokens and cost (`Estimate`), and stops here on ``dry_run``;
4. judges the rest with ``concurrency`` workers, committing each judgment as it arrives,
   until done, ``max_judgments`` new judgments were made, or the next request could cross
   the cost cap.

Weak judges (BM25, clicks, cross-encoder) label in batches, each batch committed at once.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from rankgate.errors import ConfigError
from rankgate.label.llm import LLMJudge
from rankgate.label.llm_run import copy_judgment, estimate_requests, judge_llm, plan_requests
from rankgate.label.outcome import Estimate, LabelInterrupted, LabelReport
from rankgate.label.pooling import Pool
from rankgate.label.progress import LabelProgress
from rankgate.label.store import JudgmentStore
from rankgate.label.types import STATUS_ERROR, STATUS_FAILED, STATUS_OK, BatchJudge, Judgment, Pair

__all__ = [
    "DEFAULT_MAX_DOC_CHARS", "Estimate", "LabelInterrupted", "LabelReport", "label_pool", "make_pairs", "saved_pairs",
]  # fmt: skip

DEFAULT_MAX_DOC_CHARS = 6000


def make_pairs(
    pool: Pool,
    queries: Mapping[str, str] | None,
    corpus: Mapping[str, str] | None,
    *,
    max_doc_chars: int | None = DEFAULT_MAX_DOC_CHARS,
) -> list[Pair]:
    """The pool's pairs with their texts (documents cut at ``max_doc_chars`` characters)."""
    out = []
    for qid, did, rank in pool.pairs:
        document = corpus.get(did, "") if corpus is not None else ""
        if max_doc_chars and len(document) > max_doc_chars:
            document = document[:max_doc_chars]
        out.append(Pair(qid, did, queries.get(qid, "") if queries is not None else "", document, rank))
    return out


def label_pool(
    pool: Pool,
    judge: LLMJudge | BatchJudge,
    store: JudgmentStore,
    *,
    queries: Mapping[str, str] | None = None,
    corpus: Mapping[str, str] | None = None,
    max_judgments: int | None = None,
    concurrency: int = 8,
    retry_failed: bool = False,
    max_doc_chars: int | None = DEFAULT_MAX_DOC_CHARS,
    dry_run: bool = False,
    progress: bool = False,
    batch_size: int = 256,
    on_estimate: Callable[[Estimate], None] | None = None,
) -> LabelReport:
    """Judge the pairs of ``pool`` with ``judge``, storing each judgment as it arrives.

    Args:
        pool: from `build_pool`.
        judge: an `LLMJudge` or a batch judge (`BM25Judge`, `ClickJudge`, `CrossEncoderJudge`).
        store: where judgments persist; the same store and judge resume an earlier run.
        queries: ``{query_id: text}`` (needed by judges that read text).
        corpus: ``{doc_id: text}`` (idem).
        max_judgments: at most this many new judgments (pairs sent to the judge; their retries
            count toward the cost, not here) in this call; cache hits are free.
        concurrency: LLM requests in flight at once.
        retry_failed: judge again pairs whose earlier answers were unreadable.
        max_doc_chars: cut documents to this many characters (None or 0: never).
        dry_run: stop after the estimate; nothing is sent or stored.
        progress: show a progress bar on stderr.
        batch_size: pairs per batch (and per commit) of a batch judge.
        on_estimate: called with the estimate before anything is sent (e.g. to print it).

    Returns:
        A `LabelReport`; the cost cap and ``max_judgments`` end a run early without an error.

    Raises:
        BackendError: the endpoint refused the key, model or URL (judgments made so far are kept).
        LabelInterrupted: Ctrl-C; it says how many pairs of the pool are saved, and where.
    """
    if concurrency < 1:
        raise ConfigError(f"concurrency must be >= 1. Got {concurrency!r} instead.", key_path="concurrency")
    if max_judgments is not None and max_judgments < 0:
        raise ConfigError(f"max_judgments must be >= 0. Got {max_judgments!r} instead.", key_path="max_judgments")
    if judge.needs_text and (queries is None or corpus is None):
        raise ConfigError(f"the {judge.kind} judge reads texts: give the queries and the corpus")
    started = time.perf_counter()
    done = store.done(judge.judge_id, retry_failed=retry_failed)
    pairs = make_pairs(pool, queries, corpus, max_doc_chars=max_doc_chars)
    todo = [p for p in pairs if (p.query_id, p.doc_id) not in done]
    counts: Counter[str] = Counter(pool=len(pairs), done_before=len(pairs) - len(todo))
    counts["failed_before"] = 0 if retry_failed else _failed_before(store, judge.judge_id, pool)
    if not dry_run:
        prompt = getattr(getattr(judge, "prompt", None), "template", None)
        store.record_judge(judge.judge_id, judge.kind, judge.describe(), prompt)
    labeling = _Labeling(store, counts, max_judgments, dry_run, progress, on_estimate)
    try:
        if isinstance(judge, LLMJudge):
            stop_reason, estimate = labeling.with_llm(judge, todo, concurrency)
        else:
            stop_reason, estimate = labeling.in_batches(judge, todo, batch_size)
    except KeyboardInterrupt as e:  # say what is kept and where, for the caller to tell the user
        in_flight = e.in_flight if isinstance(e, LabelInterrupted) else 0
        saved = saved_pairs(store, judge.judge_id, pool, retry_failed=retry_failed)
        raise LabelInterrupted(saved, len(pairs), _where(store), in_flight) from None
    counts["failed"] += counts["failed_before"]
    if stop_reason is None and counts["errors"]:
        stop_reason = "errors"
    by_status = _stored_by_status(store, judge.judge_id, pool.keys()) if not dry_run else {}
    usage: dict[str, object] = {"requests": 0, "cost": 0.0}
    retries: dict[str, int] = {}
    if isinstance(judge, LLMJudge):
        usage = judge.client.meter.summary()
        retries = dict(judge.client.retry_reasons) if not dry_run else {}
    for name in ("new", "cached", "failed", "errors", "no_signal", "not_started"):
        counts.setdefault(name, 0)
    return LabelReport(
        judge=judge.describe(),
        pool=pool.summary(),
        per_query=dict(pool.per_query),
        counts=dict(counts),
        usage=usage,
        stop_reason=stop_reason,
        judgments=by_status.get(STATUS_OK, []),
        failed=by_status.get(STATUS_FAILED, []),
        errors=by_status.get(STATUS_ERROR, []),
        estimate=estimate,
        retries=retries,
        elapsed_s=time.perf_counter() - started,
        dry_run=dry_run,
    )


def saved_pairs(store: JudgmentStore, judge_id: str, pool: Pool, *, retry_failed: bool = False) -> int:
    """How many pairs of ``pool`` the store holds for ``judge_id`` such that the same call does not ask them again."""
    return len(store.done(judge_id, retry_failed=retry_failed) & pool.keys())


def _failed_before(store: JudgmentStore, judge_id: str, pool: Pool) -> int:
    """Pairs of ``pool`` whose stored answer (from an earlier run) is unreadable."""
    keys = pool.keys()
    return sum(1 for j in store.iter_judgments(judge_id, status=STATUS_FAILED) if (j.query_id, j.doc_id) in keys)


def _where(store: JudgmentStore) -> str | None:
    """The store's file, or None for an in-memory store."""
    return None if store.path == ":memory:" else store.path


@dataclass(frozen=True)
class _Labeling:
    """What one `label_pool` call shares between its steps (``counts`` is updated in place)."""

    store: JudgmentStore
    counts: Counter[str]
    max_judgments: int | None
    dry_run: bool
    progress: bool
    on_estimate: Callable[[Estimate], None] | None

    def with_llm(self, judge: LLMJudge, todo: list[Pair], concurrency: int) -> tuple[str | None, Estimate]:
        """Answer from the cache what it holds, then send one request per distinct text pair."""
        stop_reason = None
        leaders, followers, hits = plan_requests(judge, todo, self.store)
        if self.max_judgments is not None and len(leaders) > self.max_judgments:
            dropped = leaders[self.max_judgments :]
            leaders = leaders[: self.max_judgments]
            self.counts["not_started"] += sum(1 + len(followers.pop(judge.cache_key(p), [])) for p in dropped)
            stop_reason = "max-judgments"
        estimate = self.estimated(estimate_requests(judge, leaders, len(hits)))
        if not self.dry_run:
            self.store.put_many([copy_judgment(hit, pair) for pair, hit in hits])
            self.counts["cached"] += len(hits)
            outcome = judge_llm(judge, leaders, followers, self.store, concurrency, self.progress, self.counts)
            stop_reason = outcome or stop_reason
        return stop_reason, estimate

    def in_batches(self, judge: BatchJudge, todo: list[Pair], batch_size: int) -> tuple[str | None, Estimate]:
        """Judge ``todo`` with a batch judge, ``batch_size`` pairs (and one commit) at a time."""
        stop_reason = None
        if self.max_judgments is not None and len(todo) > self.max_judgments:
            self.counts["not_started"] += len(todo) - self.max_judgments
            todo = todo[: self.max_judgments]
            stop_reason = "max-judgments"
        estimate = self.estimated(Estimate(len(todo), 0, 0, 0, 0.0, 0, 0, 0.0))
        if not self.dry_run:
            _judge_batches(judge, todo, self.store, batch_size, self.progress, self.counts)
        return stop_reason, estimate

    def estimated(self, estimate: Estimate) -> Estimate:
        """``estimate``, handed to ``on_estimate`` first (before anything is sent)."""
        if self.on_estimate is not None:
            self.on_estimate(estimate)
        return estimate


def _stored_by_status(
    store: JudgmentStore, judge_id: str, keys: Collection[tuple[str, str]]
) -> dict[str, list[Judgment]]:
    """The judge's stored judgments of the pool's pairs (``keys``), by status."""
    by_status: dict[str, list[Judgment]] = {STATUS_OK: [], STATUS_FAILED: [], STATUS_ERROR: []}
    for j in store.iter_judgments(judge_id, status=None):
        if (j.query_id, j.doc_id) in keys:
            by_status[j.status].append(j)
    return by_status


def _judge_batches(
    judge: BatchJudge, todo: list[Pair], store: JudgmentStore, batch_size: int, progress: bool, counts: Counter[str]
) -> None:
    """Judge ``todo`` with a batch judge, ``batch_size`` pairs at a time, each batch committed at once."""
    with LabelProgress(progress, f"labeling with {judge.kind}", len(todo)) as bar:
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            made = judge.judge_batch(batch)
            store.put_many(made)
            counts["new"] += len(made)
            counts["no_signal"] += len(batch) - len(made)
            bar.advance(len(batch))
