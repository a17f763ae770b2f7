"""A BEIR-shaped collection of real English text, built from what is on disk (nothing downloaded).

The sentences come from rankgate's demo corpus and Python's documentation topics
(``pydoc_data.topics``); a document is 6 to 12 of them drawn at random (its title: the first 12
words of the first one, its text: the rest), a query is one sentence of a document's text, and
that document is the query's judged answer. bench/encode_speed.py writes this collection as a
BEIR folder; bench/shapes.py's ``bm25`` shape ranks it with BM25. Same arguments, same collection.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parents[1]
if (REPO_DIR / "src" / "rankgate").is_dir() and str(REPO_DIR / "src") not in sys.path:
    sys.path.insert(0, str(REPO_DIR / "src"))

TITLE_WORDS = 12


def sentence_pool() -> list[str]:
    """Sentences of 5 to 40 words, whitespace collapsed, in text order (duplicates kept)."""
    from pydoc_data.topics import topics

    from rankgate.io.texts import read_corpus

    demo = REPO_DIR / "src" / "rankgate" / "data" / "demo" / "corpus.jsonl"
    text = " ".join(read_corpus(demo).values()) + " " + " ".join(topics.values())
    pool = [" ".join(s.split()) for s in re.split(r"(?<=[.!?])\s+", text)]
    return [s for s in pool if 5 <= len(s.split()) <= 40]


@dataclass(frozen=True)
class TextCollection:
    bodies: list[list[str]]  # the sentences of each document (document i: id f"d{i}")
    queries: list[tuple[int, str]]  # (the document the query was taken from, its sentence); query n: id f"q{n}"

    def title(self, i: int) -> str:
        return " ".join(self.bodies[i][0].split()[:TITLE_WORDS])

    def text(self, i: int) -> str:
        return " ".join(self.bodies[i][1:])

    def holders(self) -> dict[str, set[int]]:
        """Sentence -> the documents that hold it whole: in their text, or as their title."""
        out: dict[str, set[int]] = defaultdict(set)
        for i, body in enumerate(self.bodies):
            for s in body[1:]:
                out[s].add(i)
            if len(body[0].split()) <= TITLE_WORDS:
                out[body[0]].add(i)
        return out


def build(docs: int, queries: int, seed: int = 0) -> TextCollection:
    """``docs`` documents and ``queries`` queries (deterministic for a seed).

    Each round of queries takes documents without replacement (every document once per round);
    more queries than documents take further rounds, each asking a document a sentence it was not
    asked yet while it has one. Up to ``docs`` queries, this is one round: the first collection
    bench/encode_speed.py wrote, draw for draw."""
    pool = sentence_pool()
    rng = random.Random(seed)
    bodies = [rng.sample(pool, rng.randint(6, 12)) for _ in range(docs)]
    picks: list[int] = []
    while len(picks) < queries:
        picks += rng.sample(range(docs), min(queries - len(picks), docs))
    asked: dict[int, set[str]] = defaultdict(set)
    chosen = []
    for d in picks:
        fresh = [s for s in bodies[d][1:] if s not in asked[d]] or bodies[d][1:]
        sentence = rng.choice(fresh)
        asked[d].add(sentence)
        chosen.append((d, sentence))
    return TextCollection(bodies, chosen)


def write_corpus(path: Path, col: TextCollection) -> None:
    """BEIR ``corpus.jsonl``: ``{"_id": "d<i>", "title": ..., "text": ...}`` per line."""
    with path.open("w") as f:
        for i in range(len(col.bodies)):
            f.write(json.dumps({"_id": f"d{i}", "title": col.title(i), "text": col.text(i)}) + "\n")


def write_queries(path: Path, col: TextCollection) -> None:
    """BEIR ``queries.jsonl``: ``{"_id": "q<n>", "text": ...}`` per line."""
    with path.open("w") as f:
        for n, (_, sentence) in enumerate(col.queries):
            f.write(json.dumps({"_id": f"q{n}", "text": sentence}) + "\n")
