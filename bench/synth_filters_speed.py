"""Speed and selectivity of `rankgate label synth`'s filters (no LLM): python bench/synth_filters_speed.py.

Prints, on the demo corpus, how many stand-in questions (a passage's own title, or another
passage's) pass the BM25 round trip at k = 10, then the time of both filters for 1,000
questions over 100,000 random passages.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import rankgate.data
from rankgate.io.texts import read_corpus
from rankgate.label.synth import near_duplicates, round_trip_ranks, sample_passages


def main() -> None:
    corpus = read_corpus(next(Path(rankgate.data.__file__).parent.rglob("corpus.jsonl")))
    ids = sample_passages(corpus, 100, seed=0, min_words=10)
    rng = random.Random(1)
    stand_ins = {
        "own title": {p: corpus[p].split("\n\n")[0] for p in ids},
        "another passage's title": {p: corpus[rng.choice(list(corpus))].split("\n\n")[0] for p in ids},
    }
    for name, questions in stand_ins.items():
        ranks = round_trip_ranks(corpus, questions, 10)
        print(f"demo corpus ({len(corpus)} passages), {name}: {sum(r is not None for r in ranks.values())} of 100 kept")
    words = [f"w{i}" for i in range(50_000)]
    big = {f"d{i}": " ".join(rng.choices(words, k=60)) for i in range(100_000)}
    questions = {f"d{i}": " ".join(big[f"d{i}"].split()[:8]) for i in range(1000)}
    started = time.perf_counter()
    ranks = round_trip_ranks(big, questions, 10)
    print(f"round trip, 100,000 passages, 1,000 questions: {time.perf_counter() - started:.1f} s", end="")
    print(f" ({sum(r is not None for r in ranks.values())} kept)")
    started = time.perf_counter()
    near_duplicates(list(questions.items()), 0.8)
    print(f"near-duplicates, 1,000 questions: {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
