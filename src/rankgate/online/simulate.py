"""Click logs simulated from a position-based model with known parameters (tests, docs, benchmarks).

>>> sim = simulate_pbm(queries=3, docs_per_query=4, pages=10, seed=1)
>>> sim.table.num_rows, sim.table.column_names
(40, ['session', 'query_id', 'doc_id', 'position', 'clicked', 'timestamp'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

DEFAULT_EXAMINATION = (1.0, 0.75, 0.55, 0.42, 0.33, 0.27, 0.22, 0.18, 0.15, 0.13)


@dataclass(frozen=True, eq=False)
class SimulatedLog:
    """A simulated impression log and the truth behind it.

    Attributes:
        table: pyarrow Table with session, query_id, doc_id, position, clicked, timestamp.
        examination: true P(examined) of positions 1..depth.
        attractiveness: ``{(query_id, doc_id): true attractiveness}``.
    """

    table: Any
    examination: tuple[float, ...]
    attractiveness: dict[tuple[str, str], float]


def simulate_pbm(
    *,
    queries: int = 100,
    docs_per_query: int = 10,
    pages: int = 10_000,
    examination: Sequence[float] = DEFAULT_EXAMINATION,
    noise: float = 1.0,
    ranker_quality: float = 1.0,
    seed: int = 0,
) -> SimulatedLog:
    """Pages of ``len(examination)`` results (fewer if a query has fewer docs), clicks drawn from a PBM.

    Each query's documents get attractiveness from Beta(0.6, 1.2). The production ranker scores a
    document ``ranker_quality x log-odds(attractiveness) + (1 - ranker_quality) x error`` (error
    drawn once per document, N(0, 2)); each page orders a query's documents by that score plus
    Gaussian noise of scale ``noise`` (so documents appear at several positions, which the PBM
    needs to tell the two factors apart).
    Timestamps: the page is shown at its index in seconds; a click at position k comes 2k seconds later.
    """
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    depth = min(len(examination), docs_per_query)
    theta = np.asarray(examination[:depth], dtype=np.float64)
    gamma = rng.beta(0.6, 1.2, size=(queries, docs_per_query))
    logit = np.log(np.clip(gamma, 1e-6, 1 - 1e-6) / np.clip(1 - gamma, 1e-6, 1))
    query = rng.integers(0, queries, size=pages)
    score = ranker_quality * logit + (1.0 - ranker_quality) * rng.normal(0.0, 2.0, size=logit.shape)
    keys = score[query] + rng.normal(0.0, noise, size=(pages, docs_per_query))
    shown = np.argsort(-keys, axis=1)[:, :depth]
    g = np.take_along_axis(gamma[query], shown, axis=1)
    clicked = rng.random((pages, depth)) < theta[None, :] * g
    position = np.broadcast_to(np.arange(1, depth + 1), (pages, depth))
    time = np.arange(pages, dtype=np.float64)[:, None] + np.where(clicked, 2.0 * position, 0.0)
    q_rows = np.repeat(query, depth)
    table = pa.table(
        {
            "session": pa.array(np.repeat(np.arange(pages), depth)),
            "query_id": pa.array([f"q{i}" for i in range(queries)]).take(pa.array(q_rows)),
            "doc_id": pa.array([f"d{j}" for j in range(docs_per_query)]).take(pa.array(shown.ravel())),
            "position": pa.array(position.ravel().astype(np.int32)),
            "clicked": pa.array(clicked.ravel()),
            "timestamp": pa.array(time.ravel()),
        }
    )
    truth = {(f"q{i}", f"d{j}"): float(gamma[i, j]) for i in range(queries) for j in range(docs_per_query)}
    return SimulatedLog(table, tuple(float(t) for t in theta), truth)


def write_table(table: Any, path: str) -> None:
    """Write a pyarrow Table as CSV, JSONL or Parquet, by the file's extension (tests and docs)."""
    if path.endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq

        pq.write_table(table, path)
    elif path.endswith(".jsonl"):
        import json

        with open(path, "w", encoding="utf-8") as f:
            for row in table.to_pylist():
                f.write(json.dumps(row) + "\n")
    else:
        import pyarrow.csv as pc_csv

        pc_csv.write_csv(table, path)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m rankgate.online.simulate OUT [--pages N] [--ranker-quality Q] [--seed S]``: write a simulated log."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m rankgate.online.simulate", description=main.__doc__)
    parser.add_argument("out", help="the log to write: .csv, .jsonl or .parquet")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--ranker-quality", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sim = simulate_pbm(queries=args.queries, pages=args.pages, ranker_quality=args.ranker_quality, seed=args.seed)
    write_table(sim.table, args.out)
    print(f"{sim.table.num_rows} rows written to {args.out}")


if __name__ == "__main__":
    main()
