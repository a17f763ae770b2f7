"""Building relevance judgments: pooling, judges, a resumable store, review and agreement.

The pieces, each usable alone::

    build_pool(runs, depth, existing=qrels)      -> Pool          (pooling.py)
    Prompt.builtin("graded") / Prompt.from_file  -> Prompt        (prompts.py)
    ChatClient(base_url, model, api_key=...)                      (chat.py)
    LLMJudge(client, prompt)                                      (llm.py)
    BM25Judge, ClickJudge, CrossEncoderJudge                      (weak.py)
    JudgmentStore("labels.sqlite")                                (store.py)
    label_pool(pool, judge, store, ...)          -> LabelReport   (runner.py)
    write_trec / write_jsonl / write_tier_tags                    (export.py)
    stratified_sample / write_review_csv / read_review_csv        (review.py)
    cohen_kappa / label_agreement / ranking_correlation           (agreement.py)

Heavy parts (httpx, bm25s, sentence-transformers) are imported only when used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "BM25Judge",
    "ChatClient",
    "ClickJudge",
    "CostMeter",
    "CrossEncoderJudge",
    "Estimate",
    "Judgment",
    "JudgmentStore",
    "LLMJudge",
    "LabelInterrupted",
    "LabelReport",
    "Pair",
    "ParseFailure",
    "Pool",
    "Prices",
    "Prompt",
    "RateLimiter",
    "Secret",
    "build_pool",
    "cohen_kappa",
    "confusion_matrix",
    "label_agreement",
    "label_pool",
    "parse_answer",
    "ranking_correlation",
    "read_clicks",
    "read_review_csv",
    "read_texts",
    "stratified_sample",
    "write_jsonl",
    "write_review_csv",
    "write_tier_tags",
    "write_trec",
]

_LAZY = {
    "BM25Judge": "weak",
    "ChatClient": "chat",
    "ClickJudge": "weak",
    "CostMeter": "cost",
    "CrossEncoderJudge": "weak",
    "Estimate": "outcome",
    "Judgment": "types",
    "JudgmentStore": "store",
    "LLMJudge": "llm",
    "LabelInterrupted": "outcome",
    "LabelReport": "outcome",
    "Pair": "types",
    "ParseFailure": "prompts",
    "Pool": "pooling",
    "Prices": "cost",
    "Prompt": "prompts",
    "RateLimiter": "ratelimit",
    "Secret": "secret",
    "build_pool": "pooling",
    "cohen_kappa": "agreement",
    "confusion_matrix": "agreement",
    "label_agreement": "agreement",
    "label_pool": "runner",
    "parse_answer": "prompts",
    "ranking_correlation": "agreement",
    "read_clicks": "weak",
    "read_review_csv": "review",
    "read_texts": "collection",
    "stratified_sample": "review",
    "write_jsonl": "export",
    "write_review_csv": "review",
    "write_tier_tags": "export",
    "write_trec": "export",
}

if TYPE_CHECKING:
    from rankgate.label.agreement import cohen_kappa, confusion_matrix, label_agreement, ranking_correlation
    from rankgate.label.chat import ChatClient
    from rankgate.label.collection import read_texts
    from rankgate.label.cost import CostMeter, Prices
    from rankgate.label.export import write_jsonl, write_tier_tags, write_trec
    from rankgate.label.llm import LLMJudge
    from rankgate.label.outcome import Estimate, LabelInterrupted, LabelReport
    from rankgate.label.pooling import Pool, build_pool
    from rankgate.label.prompts import ParseFailure, Prompt, parse_answer
    from rankgate.label.ratelimit import RateLimiter
    from rankgate.label.review import read_review_csv, stratified_sample, write_review_csv
    from rankgate.label.runner import label_pool
    from rankgate.label.secret import Secret
    from rankgate.label.store import JudgmentStore
    from rankgate.label.types import Judgment, Pair
    from rankgate.label.weak import BM25Judge, ClickJudge, CrossEncoderJudge, read_clicks


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"rankgate.label.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rankgate.label' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
