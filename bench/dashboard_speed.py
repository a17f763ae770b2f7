"""How fast the dashboard's pages answer on a big results store.

Builds (once; reused when present) a SQLite store of 10,000 evaluations x 5 measures x 5,000
queries, then serves it with uvicorn (as `rankgate serve` does) and times each page and JSON
endpoint over HTTP from this process: the first request and the median of the next ones.

The store is written straight through the store's own schema and codec (one transaction,
rows inserted in batches): per-query values are quantized like real ones (RR 1/k, P@10 in
tenths...), 16 distinct matrices reused across rows so that building takes a minute or two,
not an hour of evaluating; every row still holds its own copy of the blobs, so the database
is as large as a real one (about 0.5 GB).

    python bench/dashboard_speed.py [--workdir /tmp/rankgate-bench/dashboard] [--repeat 7]
        [--evaluations 10000] [--queries 5000] [--rebuild]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

MEASURES = ["nDCG@10", "R@5", "R@10", "RR@10", "P@10"]
BRANCHES = ["main"] * 6 + ["feature/encoder", "feature/hybrid", "fix/tokenizer", "exp/rerank"]
SYSTEMS = ["dense", "bm25", "hybrid"]
MATRICES = 16
BATCH = 250


def per_query_matrix(rng: np.random.Generator, n: int) -> np.ndarray:
    """Per-query values shaped like real ones: RR 1/k or 0, P@10 in tenths, recall in fifths."""
    quality = rng.beta(2.0, 2.0, size=n)
    rank = np.where(rng.random(n) < quality, rng.integers(1, 11, size=n), 0)
    rr = np.where(rank > 0, 1.0 / np.maximum(rank, 1), 0.0)
    p10 = np.round(np.clip(quality + rng.normal(0, 0.15, n), 0, 1) * 10) / 10
    r5 = np.round(np.clip(quality + rng.normal(0, 0.2, n), 0, 1) * 5) / 5
    r10 = np.maximum(r5, np.round(np.clip(quality + rng.normal(0.1, 0.2, n), 0, 1) * 5) / 5)
    ndcg = np.round(np.clip(quality + rng.normal(0, 0.1, n), 0, 1), 4)
    return np.column_stack([ndcg, r5, r10, rr, p10])


def build(path: Path, n_evaluations: int, n_queries: int) -> None:
    """Write the big store at ``path`` (replacing a partial one)."""
    import sqlalchemy as sa

    from rankgate.store import codec
    from rankgate.store.base import open_store
    from rankgate.store.fingerprint import query_fingerprint
    from rankgate.store.schema import baselines_table, results_table

    tmp = path.with_suffix(".partial")
    tmp.unlink(missing_ok=True)
    open_store(tmp).close()  # creates the schema
    rng = np.random.default_rng(0)
    qids = [f"q{i:05d}" for i in range(n_queries)]
    ids_blob = codec.encode(qids, np.zeros((n_queries, len(MEASURES))))[0]
    pool = []
    for _ in range(MATRICES):
        matrix = per_query_matrix(rng, n_queries)
        pool.append((codec.encode(qids, matrix)[1], dict(zip(MEASURES, matrix.mean(axis=0).tolist(), strict=True))))
    fingerprint = query_fingerprint(qids)
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    engine = sa.create_engine(f"sqlite:///{tmp}")
    began = time.perf_counter()
    with engine.begin() as conn:
        rows = []
        for i in range(n_evaluations):
            blob, aggregate = pool[i % MATRICES]
            branch = BRANCHES[i % len(BRANCHES)]
            verdict = ["pass", "pass", "warn", "fail"][i % 4] if i % 3 else None
            labels: dict[str, Any] = {"source": "gate" if verdict else "nightly", "qps": 300 + i % 50}
            labels["latency_ms"] = {"p50": 8 + i % 5, "p95": 14 + i % 7, "p99": 22 + i % 11}
            if verdict:
                labels["verdict"] = verdict
            rows.append(_row(i, start, branch, aggregate, labels, fingerprint, n_queries, ids_blob, blob))
            if len(rows) == BATCH:
                conn.execute(sa.insert(results_table), rows)
                rows = []
                _progress(i + 1, n_evaluations, began)
        if rows:
            conn.execute(sa.insert(results_table), rows)
        conn.execute(sa.insert(baselines_table), [{"key": "default", "result_id": 1, "set_at": start}])
    engine.dispose()
    tmp.replace(path)
    print(
        f"\nbuilt {path} ({path.stat().st_size / 1e9:.2f} GB) in {time.perf_counter() - began:.0f} s", file=sys.stderr
    )


def _row(
    i: int,
    start: datetime,
    branch: str,
    aggregate: dict[str, float],
    labels: dict[str, Any],
    fingerprint: str,
    n_queries: int,
    ids_blob: bytes,
    blob: bytes,
) -> dict[str, Any]:
    from rankgate.store import codec

    return {
        "created_at": (start + timedelta(hours=i)).replace(tzinfo=None),
        "name": SYSTEMS[i % len(SYSTEMS)],
        "commit": f"{i:040x}",
        "branch": branch,
        "ci_url": None,
        "qrels_fingerprint": "f" * 64,
        "query_fingerprint": fingerprint,
        "n_queries": n_queries,
        "measures": MEASURES,
        "aggregate": aggregate,
        "queries": {"evaluated": n_queries, "missing_from_run": 0, "run_only": 0, "no_relevant": 0},
        "settings": {"queries": "qrels", "ties": "trec", "rel": 1, "empty": "zero"},
        "versions": {"rankgate": "bench"},
        "labels": labels,
        "provenance": {"branch": branch, "commit": f"{i:040x}"},
        "warnings": [],
        "per_query_codec": codec.CODEC,
        "per_query_ids": ids_blob,
        "per_query_values": blob,
    }


def _progress(done: int, total: int, began: float) -> None:
    rate = done / max(time.perf_counter() - began, 1e-9)
    print(f"\r{done}/{total} evaluations written ({rate:.0f}/s)", end="", file=sys.stderr, flush=True)


def fetch(url: str) -> tuple[float, int]:
    """Seconds to get the whole answer of ``url``, and its size in bytes."""
    began = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read()
        assert response.status == 200, (url, response.status)
    return time.perf_counter() - began, len(body)


def time_pages(path: Path, repeat: int, n_evaluations: int) -> list[tuple[str, str, float, float, int]]:
    """(what, path, first request s, median of the next ``repeat`` s, bytes) per page."""
    import uvicorn

    from rankgate.dashboard.app import create_app

    began = time.perf_counter()
    app = create_app(str(path))
    print(f"app ready (summaries of every result read) in {time.perf_counter() - began:.2f} s", file=sys.stderr)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    pages = [
        ("overview page (newest 1,000 charted)", "/"),
        ("overview JSON", "/api/overview"),
        ("overview, branch filter", "/?branch=feature/encoder"),
        ("evaluation page", "/evaluations/{id}"),
        ("evaluation JSON", "/api/evaluations/{id}"),
        ("per-query page 1 (50 rows)", "/api/evaluations/{id}/queries"),
        ("per-query sorted by nDCG@10", "/api/evaluations/{id}/queries?sort=nDCG@10&order=desc"),
        ("compare page", "/compare?a={id}&b={other}"),
    ]
    out = []
    try:
        for n, (what, pattern) in enumerate(pages):
            first_url = pattern.format(id=n_evaluations // 2 + n, other=n_evaluations // 2 + 100 + n)  # not read before
            first, size = fetch(base + first_url)
            warm = [fetch(base + first_url)[0] for _ in range(repeat)]
            out.append((what, first_url, first, statistics.median(warm), size))
    finally:
        server.should_exit = True
        thread.join(30)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/rankgate-bench/dashboard"))
    parser.add_argument("--evaluations", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    path = args.workdir / f"results-{args.evaluations}x{args.queries}.db"
    if args.rebuild or not path.exists():
        build(path, args.evaluations, args.queries)
    rows = time_pages(path, args.repeat, args.evaluations)
    print(f"\n{args.evaluations:,} evaluations x {len(MEASURES)} measures x {args.queries:,} queries ({path})")
    print(f"{'page':40} {'first (ms)':>11} {'median (ms)':>12} {'size (kB)':>10}  path")
    for what, url, first, warm, size in rows:
        print(f"{what:40} {first * 1000:11.0f} {warm * 1000:12.0f} {size / 1000:10.0f}  {url}")


if __name__ == "__main__":
    main()
