"""Writing judgments out: TREC qrels, JSONL with provenance, gold-set tiers as query tags.

The JSONL rows (one per judgment) read back as qrels (``rankgate eval labels.jsonl run.txt``)::

    {"query_id": "q1", "doc_id": "d7", "relevance": 2, "tier": "B", "judge": "llm",
     "judge_id": "llm:gpt-4o-mini:1f0c...", "model": "gpt-4o-mini", "prompt_hash": "1f0c...",
     "reason": "...", "score": null, "latency_ms": 812.4, "input_tokens": 431,
     "output_tokens": 24, "cost": 7.9e-05, "cached": false, "attempts": 1, "created_at": "..."}

The tags file gives each query the tiers of its judgments (``A``, ``B``, ``A+B``...), in the
format `rankgate.io.tags.read_query_tags` reads, so ``rankgate compare --tags`` breaks
results down by tier.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rankgate.core.qrels import Qrels
from rankgate.io.readers import read_qrels
from rankgate.io.source import atomic_writer, stem
from rankgate.io.writers import write_qrels
from rankgate.label.types import Judgment

JSONL_FIELDS = (
    "query_id",
    "doc_id",
    "relevance",
    "tier",
    "judge",
    "judge_id",
    "model",
    "prompt_hash",
    "reason",
    "score",
    "latency_ms",
    "input_tokens",
    "output_tokens",
    "cost",
    "cached",
    "attempts",
    "created_at",
)


def to_qrels(judgments: Iterable[Judgment], *, source: str = "<judgments>") -> Qrels:
    """The labeled judgments as `Qrels` (unlabeled ones are left out)."""
    data: dict[str, dict[str, int]] = {}
    for j in judgments:
        if j.label is not None:
            data.setdefault(j.query_id, {})[j.doc_id] = j.label
    return Qrels.from_dict(data, source=source)


def write_trec(judgments: Iterable[Judgment], path: str | os.PathLike[str]) -> int:
    """Write TREC qrels (``qid 0 docid grade``) atomically; returns the number of lines."""
    qrels = to_qrels(judgments, source=str(path))
    write_qrels(qrels, path, format="trec")  # whatever the extension: the documented output is TREC
    return qrels.num_rows


def jsonl_row(j: Judgment) -> dict[str, object]:
    row: dict[str, object] = {
        "query_id": j.query_id,
        "doc_id": j.doc_id,
        "relevance": j.label,
        "tier": j.tier,
        "judge": j.judge,
        "judge_id": j.judge_id,
        "model": j.model,
        "prompt_hash": j.prompt_hash,
        "reason": j.reason,
        "score": j.score,
        "latency_ms": round(j.latency_ms, 1),
        "input_tokens": j.input_tokens,
        "output_tokens": j.output_tokens,
        "cost": j.cost,
        "cached": j.cached,
        "attempts": j.attempts,
        "created_at": j.created_at,
    }
    return row


def write_jsonl(judgments: Iterable[Judgment], path: str | os.PathLike[str]) -> int:
    """Write one JSON object per labeled judgment (fields: `JSONL_FIELDS`) atomically."""
    n = 0
    with atomic_writer(path) as f:
        for j in sorted(judgments, key=_order):
            if j.label is None:
                continue
            f.write(json.dumps(jsonl_row(j), ensure_ascii=False) + "\n")
            n += 1
    return n


def _order(j: Judgment) -> tuple[bytes, bytes]:
    return j.query_id.encode(), j.doc_id.encode()


def query_tiers(judgments: Iterable[Judgment]) -> dict[str, str]:
    """Each query's tiers, sorted and joined by "+" (``{"q1": "A", "q2": "A+B"}``).

    >>> from rankgate.label.types import Judgment
    >>> query_tiers([Judgment("q1", "d", 1, "h", "human", tier="A"), Judgment("q1", "e", 0, "l", "llm", tier="B")])
    {'q1': 'A+B'}
    """
    tiers: dict[str, set[str]] = {}
    for j in judgments:
        if j.label is not None:
            tiers.setdefault(j.query_id, set()).add(j.tier or "?")
    return {q: "+".join(sorted(t)) for q, t in sorted(tiers.items(), key=lambda kv: kv[0].encode())}


def write_tier_tags(judgments: Iterable[Judgment], path: str | os.PathLike[str]) -> int:
    """Write ``{"_id": qid, "tier": "A+B"}`` lines (a query tags file) atomically."""
    tiers = query_tiers(judgments)
    with atomic_writer(path) as f:
        for qid, tier in tiers.items():
            f.write(json.dumps({"_id": qid, "tier": tier}, ensure_ascii=False) + "\n")
    return len(tiers)


def label_distribution(judgments: Iterable[Judgment]) -> dict[int, int]:
    """How many judgments have each label, labels ascending."""
    counts = Counter(j.label for j in judgments if j.label is not None)
    return dict(sorted(counts.items()))


def coverage(
    per_query: Mapping[str, int], judgments: Sequence[Judgment], failed: Sequence[Judgment] = ()
) -> dict[str, dict[str, Any]]:
    """Per pooled query: pool size, judged, failed, share judged, and the label counts.

    >>> from rankgate.label.types import Judgment
    >>> coverage({"q1": 3}, [Judgment("q1", "d1", 2, "j", "llm"), Judgment("q1", "d2", 0, "j", "llm")])
    {'q1': {'pool': 3, 'judged': 2, 'failed': 0, 'coverage': 0.6667, 'labels': {0: 1, 2: 1}, 'relevant': 1}}
    """
    by_query: dict[str, list[int]] = {}
    for j in judgments:
        if j.label is not None:
            by_query.setdefault(j.query_id, []).append(j.label)
    failed_by: Counter[str] = Counter(j.query_id for j in failed)
    out: dict[str, dict[str, Any]] = {}
    for qid, size in per_query.items():
        labels = by_query.get(qid, [])
        out[qid] = {
            "pool": size,
            "judged": len(labels),
            "failed": failed_by.get(qid, 0),
            "coverage": round(len(labels) / size, 4) if size else 0.0,
            "labels": dict(sorted(Counter(labels).items())),
            "relevant": sum(1 for v in labels if v >= 1),
        }
    return out


def read_tiered(spec: str) -> tuple[list[Judgment], str]:
    """Judgments from ``PATH[:TIER]`` (a qrels file in any format rankgate reads).

    A rankgate labels JSONL keeps its own tier per row unless a tier is given.
    """
    path, tier = _split_spec(spec)
    qrels = read_qrels(path)
    rows_tiers = _jsonl_tiers(path) if tier is None and str(path).endswith((".jsonl", ".ndjson")) else {}
    name = stem(path)
    out = []
    for qid, docs in qrels.to_dict().items():
        for did, grade in docs.items():
            t = tier or rows_tiers.get((qid, did)) or "?"
            out.append(Judgment(qid, did, grade, f"file:{name}", "qrels", tier=t))
    return out, tier or "per row"


def _split_spec(spec: str) -> tuple[str, str | None]:
    if ":" in spec and not os.path.exists(spec):
        path, _, tier = spec.rpartition(":")
        if path and tier and "/" not in tier and "\\" not in tier:
            return path, tier
    return spec, None


def _jsonl_tiers(path: str) -> dict[tuple[str, str], str]:
    from rankgate.io.source import read_bytes

    out: dict[tuple[str, str], str] = {}
    for line in read_bytes(path).decode("utf-8", errors="replace").splitlines():
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and isinstance(row.get("tier"), str):
                out[(str(row.get("query_id")), str(row.get("doc_id")))] = row["tier"]
    return out


def merge_tiers(sources: Sequence[Sequence[Judgment]]) -> tuple[list[Judgment], dict[str, int]]:
    """Merge judgment sets in priority order: a pair takes the judgment of the first set that has it.

    Returns the merged judgments and, per source index, how many of its pairs were overridden.

    >>> from rankgate.label.types import Judgment as J
    >>> human = [J("q1", "d1", 3, "h", "human", tier="A")]
    >>> llm = [J("q1", "d1", 1, "l", "llm", tier="B"), J("q1", "d2", 0, "l", "llm", tier="B")]
    >>> merged, overridden = merge_tiers([human, llm])
    >>> [(j.doc_id, j.label, j.tier) for j in merged], overridden
    ([('d1', 3, 'A'), ('d2', 0, 'B')], {'0': 0, '1': 1})
    """
    seen: dict[tuple[str, str], Judgment] = {}
    overridden: dict[str, int] = {}
    for index, judgments in enumerate(sources):
        overridden[str(index)] = 0
        for j in judgments:
            key = (j.query_id, j.doc_id)
            if key in seen:
                overridden[str(index)] += 1
            else:
                seen[key] = j
    return sorted(seen.values(), key=_order), overridden
