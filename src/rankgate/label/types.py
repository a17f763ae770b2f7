"""The values every part of labeling shares: a pooled pair, a judgment, the judge protocols."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

TIER_HUMAN = "A"
TIER_LLM = "B"
TIER_WEAK = "C"

STATUS_OK = "ok"
STATUS_FAILED = "failed"  # the judge answered, but never in the required format: recorded, not guessed
STATUS_ERROR = "error"  # the request never got an answer (retries exhausted): retried on the next run

JUDGES = ("llm", "bm25", "clicks", "cross-encoder")  # the judge kinds `rankgate label --judge` offers


@dataclass(frozen=True)
class Pair:
    """A (query, document) pair to judge, with the texts a judge reads.

    Attributes:
        query_id: the query's id.
        doc_id: the document's id.
        query: the query text ("" when the judge needs none, e.g. click logs).
        document: the document text (title and body), possibly truncated.
        rank: the best rank the document reached in any pooled run (1-based).
    """

    query_id: str
    doc_id: str
    query: str = ""
    document: str = ""
    rank: int = 1


@dataclass
class Judgment:
    """One judge's verdict on one pair, as stored and exported.

    ``label`` is None unless ``status`` is "ok". ``score`` holds a weak judge's raw
    number (BM25 score, click-through rate, cross-encoder output) that the label came from.
    """

    query_id: str
    doc_id: str
    label: int | None
    judge_id: str
    judge: str
    model: str = ""
    prompt_hash: str = ""
    cache_key: str = ""
    status: str = STATUS_OK
    reason: str = ""
    raw: str = ""
    error: str = ""
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    latency_ms: float = 0.0
    cached: bool = False
    tier: str = TIER_LLM
    score: float | None = None
    created_at: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK


@runtime_checkable
class Judge(Protocol):
    """What every judge has: a stable identity (the store's key) and a description."""

    judge_id: str
    kind: str
    model: str
    prompt_hash: str
    tier: str
    needs_text: bool

    def describe(self) -> dict[str, object]:
        """Settings recorded in the store and echoed in the output (never a secret)."""
        ...


@runtime_checkable
class BatchJudge(Judge, Protocol):
    """A judge that labels many pairs at once, locally and for free (BM25, clicks, cross-encoder)."""

    def judge_batch(self, pairs: Sequence[Pair]) -> list[Judgment]:
        """Judgments of the pairs it can label, in input order (click logs leave rare pairs out)."""
        ...
