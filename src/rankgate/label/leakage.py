"""Leakage check: evaluation queries and reference answers found (nearly) verbatim in the corpus.

A golden set that leaked into the indexed corpus (a FAQ page holding the test questions, an
answers file ingested by mistake) inflates every number: the retriever finds the copy, not the
answer. Texts are normalised as in open-domain QA (`rankgate.rag.answers.normalize_answer`),
then, in one pass over the corpus:

1. **Candidates.** Every item (a query or an answer) is cut into word n-grams (shingles, n = 2
   by default); an index maps each shingle to its items, and each passage's shingles are
   looked up in it. For each item the `CANDIDATES` passages sharing the most shingles are kept.
   One edited word breaks at most two bigrams, so an edited copy still shares most of them.
2. **Score.** Each candidate is scored exactly by `copy_score`: ``1 - d/m``, with d the fewest
   word edits that turn the item (m words) into some stretch of the passage. A verbatim copy
   scores 1, a copy with one word changed, added or dropped ``1 - 1/m`` (>= 0.8 from 5 words),
   while a real query sharing a phrase with its document needs several edits (on the demo
   collection the closest scores 0.6; docs/rag.md shows them).
3. An item scoring >= ``threshold`` (0.75) against its best passage is flagged, with it.

Why not MinHash LSH (datasketch): it estimates the Jaccard similarity of two sets, and an item
of ten words inside a passage of two hundred has a tiny Jaccard similarity even when copied
verbatim; what is needed is containment, with word order. The items are few (hundreds to
thousands) and the passages many, so an exact index of the items' shingles costs one pass over
the corpus and misses nothing (100k passages: bench/leakage_speed.py, docs/performance.md).

Items with fewer than ``min_words`` words (5) are not checked: a two-word query or a one-word
answer ("Paris") is in its passage by design and tells nothing about a copy; they are counted.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankgate.errors import ConfigError
from rankgate.rag.answers import normalize_answer

DEFAULT_N = 2
DEFAULT_THRESHOLD = 0.75
DEFAULT_MIN_WORDS = 5


def shingles(text: str, n: int = DEFAULT_N) -> set[str]:
    """The distinct word n-grams of the normalised ``text`` (the whole text when shorter than n words).

    >>> sorted(shingles("The cat sat on the mat.", 3))
    ['cat sat on', 'sat on mat']
    """
    words = normalize_answer(text).split()
    if len(words) <= n:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


@dataclass(frozen=True)
class Leak:
    """One item found in a passage.

    Attributes:
        kind: "query" or "answer".
        query_id: the query (of the answer).
        text: the item's text.
        passage_id: the passage holding the most of it.
        similarity: `copy_score` of the item in that passage (1.0: a verbatim copy).
        verbatim: whether the normalised item appears whole in the normalised passage.
        passage: the passage's text.
    """

    kind: str
    query_id: str
    text: str
    passage_id: str
    similarity: float
    verbatim: bool
    passage: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "query_id": self.query_id,
            "text": self.text,
            "passage_id": self.passage_id,
            "similarity": self.similarity,
            "verbatim": self.verbatim,
            "passage": self.passage,
        }


@dataclass
class LeakageReport:
    """What `find_leakage` found, and what it checked."""

    leaks: list[Leak]
    counts: dict[str, int]
    settings: dict[str, Any] = field(default_factory=dict)
    near_misses: list[Leak] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def leaked_queries(self) -> set[str]:
        """Ids of queries whose text or reference answer leaked."""
        return {leak.query_id for leak in self.leaks}

    def to_dict(self) -> dict[str, Any]:
        return {
            "leaks": [leak.to_dict() for leak in self.leaks],
            "leaked_queries": sorted(self.leaked_queries),
            "counts": self.counts,
            "near_misses": [leak.to_dict() for leak in self.near_misses],
            "settings": self.settings,
        }


def find_leakage(
    passages: Iterable[tuple[str, str]] | Mapping[str, str],
    queries: Mapping[str, str],
    answers: Mapping[str, Sequence[str]] | None = None,
    *,
    n: int = DEFAULT_N,
    threshold: float = DEFAULT_THRESHOLD,
    min_words: int = DEFAULT_MIN_WORDS,
    near_misses: int = 5,
) -> LeakageReport:
    """Queries (and answers) that some passage holds nearly verbatim (`copy_score` >= ``threshold``).

    Args:
        passages: ``{id: text}`` or ``(id, text)`` pairs (streamed once).
        queries: ``{query_id: text}``.
        answers: ``{query_id: [answer, ...]}``, or None.
        n: words per shingle of the candidate search.
        threshold: `copy_score` at which an item is flagged, in (0, 1].
        min_words: items with fewer (normalised) words are not checked.
        near_misses: how many of the highest similaritys below the threshold to report (to set it).

    >>> corpus = {"p1": "FAQ: how long should green tea steep before drinking it? Two minutes.",
    ...           "p2": "Green tea is steeped for two to three minutes at 80 C."}
    >>> r = find_leakage(corpus, {"q1": "How long should green tea steep before drinking it"})
    >>> [(x.query_id, x.passage_id, x.similarity, x.verbatim) for x in r.leaks]
    [('q1', 'p1', 1.0, True)]
    """
    if not (isinstance(n, int) and n >= 1):
        raise ConfigError(f"The 'n' parameter must be an int >= 1. Got {n!r} instead.", key_path="n")
    if not (isinstance(threshold, int | float) and 0 < threshold <= 1):
        raise ConfigError(
            f"The 'threshold' parameter must be in (0, 1]. Got {threshold!r} instead.", key_path="threshold"
        )
    items, counts = _items(queries, answers or {}, n, min_words)
    index: dict[str, list[int]] = defaultdict(list)
    for i, (_, _, _, grams) in enumerate(items):
        for g in grams:
            index[g].append(i)
    shared: dict[int, list[tuple[int, int, str, str]]] = defaultdict(list)  # item -> (shared, -position, pid, text)
    pairs = passages.items() if isinstance(passages, Mapping) else passages
    checked = passage_words = 0
    for pid, text in pairs:
        checked += 1
        passage_words += len(text.split())
        hits: dict[int, int] = defaultdict(int)
        for g in shingles(text, n) & index.keys():
            for i in index[g]:
                hits[i] += 1
        for i, count in hits.items():
            _keep_top(shared[i], (count, -checked, pid, text))
    best: dict[int, tuple[float, str, str]] = {}
    for i, candidates in shared.items():
        words = normalize_answer(items[i][2]).split()
        scored = [(copy_score(words, normalize_answer(text).split()), pid, text) for *_, pid, text in candidates]
        best[i] = min(scored, key=lambda t: (-t[0], t[1]))
    found = [_leak(items[i], *best[i]) for i in sorted(best, key=lambda i: (-best[i][0], items[i][1], i))]
    counts["passages"] = checked
    counts["leaked_queries"] = len({leak.query_id for leak in found if leak.similarity >= threshold})
    for kind, plural in (("query", "queries"), ("answer", "answers")):
        counts[f"flagged_{plural}"] = sum(1 for x in found if x.kind == kind and x.similarity >= threshold)
    settings = {"n": n, "threshold": threshold, "min_words": min_words, "normalisation": "SQuAD/DPR"}
    leaks = [x for x in found if x.similarity >= threshold]
    misses = [x for x in found if x.similarity < threshold][:near_misses]
    return LeakageReport(leaks, counts, settings, misses, _swap_warning(queries, checked, passage_words))


def _swap_warning(queries: Mapping[str, str], passages: int, passage_words: int) -> list[str]:
    """A warning when the queries are longer than the passages on average: the two files are likely swapped
    (a check of swapped files finds no leak and looks like an all-clear)."""
    query_words = sum(len(text.split()) for text in queries.values())
    if not (queries and passages) or query_words / len(queries) <= passage_words / passages:
        return []
    return [
        f"the queries are longer than the corpus passages ({query_words / len(queries):.1f} words against "
        f"{passage_words / passages:.1f} on average): did you swap --queries and --corpus?"
    ]


CANDIDATES = 10  # passages per item, those sharing the most shingles, scored in full


def _keep_top(heap: list[tuple[int, int, str, str]], entry: tuple[int, int, str, str]) -> None:
    """Keep the `CANDIDATES` entries ``(shared, -position, id, text)`` sharing the most shingles (ties: the earlier)."""
    import heapq

    if len(heap) < CANDIDATES:
        heapq.heappush(heap, entry)
    elif entry[:2] > heap[0][:2]:
        heapq.heapreplace(heap, entry)


def copy_score(item: list[str], passage: list[str]) -> float:
    """``1 - d / m``: d the fewest word edits that turn ``item`` (m words) into some stretch of ``passage``.

    A word-level edit distance with free start and end in the passage (semi-global alignment):
    a verbatim copy scores 1, one word changed, added or dropped ``1 - 1/m`` (0.8 for 5 words,
    0.86 for 7), while a real query that shares a phrase with its document needs several edits
    (the demo collection's closest scores 0.6, docs/rag.md).

    >>> copy_score("how fast should i increase weekly mileage".split(),
    ...            "faq how fast should i weekly mileage see below".split())
    0.857143
    >>> copy_score("how to run uphill on steep climbs".split(), "running uphill on steep climbs shorten".split())
    0.571429
    """
    import numpy as np

    m = len(item)
    if m == 0 or not passage:
        return 0.0
    vocab: dict[str, int] = {}
    q = np.array([vocab.setdefault(w, len(vocab)) for w in item])
    p = np.array([vocab.get(w, -1) for w in passage])
    steps = np.arange(len(p) + 1)
    row = np.zeros(len(p) + 1, dtype=np.int64)  # row 0: the item may start anywhere in the passage
    for i in range(1, m + 1):
        diagonal = row[:-1] + (p != q[i - 1])
        best = np.empty_like(row)
        best[0] = i
        best[1:] = np.minimum(diagonal, row[1:] + 1)
        row = np.minimum.accumulate(best - steps) + steps  # a word added to the item: along the passage
    return round(max(0.0, 1 - int(row.min()) / m), 6)


def _items(
    queries: Mapping[str, str], answers: Mapping[str, Sequence[str]], n: int, min_words: int
) -> tuple[list[tuple[str, str, str, set[str]]], dict[str, int]]:
    """(kind, query id, text, shingles) of every item long enough to check; counts of checked and skipped."""
    items: list[tuple[str, str, str, set[str]]] = []
    counts = {"queries_checked": 0, "answers_checked": 0, "short_queries": 0, "short_answers": 0}
    plural = {"query": "queries", "answer": "answers"}
    sources = [("query", qid, [text]) for qid, text in queries.items()]
    sources += [("answer", qid, list(texts)) for qid, texts in answers.items()]
    for kind, qid, texts in sources:
        for text in texts:
            if len(normalize_answer(text).split()) < min_words:
                counts[f"short_{plural[kind]}"] += 1
                continue
            counts[f"{plural[kind]}_checked"] += 1
            items.append((kind, qid, text, shingles(text, n)))
    return items, counts


def _leak(item: tuple[str, str, str, set[str]], score: float, pid: str, passage: str) -> Leak:
    kind, qid, text, _ = item
    norm = normalize_answer(text)
    verbatim = f" {norm} " in f" {normalize_answer(passage)} "
    return Leak(kind, qid, text, pid, round(score, 6), verbatim, passage)


def write_queries_without(queries: Mapping[str, str], drop: set[str], path: str | os.PathLike[str]) -> int:
    """Write ``queries`` less the ids in ``drop`` as BEIR JSONL (atomically); how many were written."""
    import json

    from rankgate.io.source import atomic_writer

    kept = [(qid, text) for qid, text in queries.items() if qid not in drop]
    with atomic_writer(path) as f:
        for qid, text in kept:
            f.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    return len(kept)
