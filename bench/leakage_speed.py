"""Time `rankgate label leakage` on 100k passages (the issue asks for under a minute).

The passages are built from real English text on disk: the sentences of the demo corpus and
of Python's own documentation topics (``pydoc_data.topics``), 3 to 6 sampled sentences a
passage (seeded). The items are the 63 demo queries plus 1,000 sentences of that text used as
queries (so every one of those is planted in many passages) and 200 sentences as answers.

    python bench/leakage_speed.py            # 100,000 passages
    python bench/leakage_speed.py 20000      # fewer
"""

from __future__ import annotations

import random
import re
import sys
import time
from pathlib import Path

from rankgate.io.texts import read_corpus, read_queries
from rankgate.label.leakage import find_leakage

DEMO = Path(__file__).resolve().parents[1] / "src" / "rankgate" / "data" / "demo"


def sentences() -> list[str]:
    from pydoc_data.topics import topics

    text = " ".join(read_corpus(DEMO / "corpus.jsonl").values()) + " " + " ".join(topics.values())
    found = [" ".join(s.split()) for s in re.split(r"(?<=[.!?])\s+", text)]
    return [s for s in found if 5 <= len(s.split()) <= 40]


def main(n: int = 100_000) -> None:
    rng = random.Random(0)
    pool = sentences()
    passages = ((f"p{i}", " ".join(rng.sample(pool, rng.randint(3, 6)))) for i in range(n))
    queries = read_queries(DEMO / "queries.jsonl")
    queries |= {f"s{i}": s for i, s in enumerate(rng.sample(pool, 1000))}
    answers = {f"a{i}": [s] for i, s in enumerate(rng.sample(pool, 200))}
    started = time.perf_counter()
    report = find_leakage(passages, queries, answers)
    elapsed = time.perf_counter() - started
    c = report.counts
    print(f"sentences in the pool: {len(pool)}")
    print(f"passages: {c['passages']}, items checked: {c['queries_checked']} queries + {c['answers_checked']} answers")
    print(f"flagged: {c['flagged_queries']} queries, {c['flagged_answers']} answers")
    print(f"seconds: {elapsed:.1f} ({c['passages'] / elapsed:,.0f} passages/s)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
