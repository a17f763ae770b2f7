#!/usr/bin/env python3
"""Speed of reading an impression-level click log and fitting click models on it.

Simulates ``--rows`` impression rows (pages of 10 results, drawn from a position-based model,
see `rankgate.online.simulate_pbm`), writes them as Parquet and CSV (not timed), then times, per
format: the read (`read_click_log`: pyarrow parse, id interning, page grouping) and each model's
fit. Wall and CPU seconds are printed side by side: the machine may be shared, and CPU time
(this process, all threads) is what the work costs.

Examples:
  python bench/clicks_speed.py
  python bench/clicks_speed.py --rows 1000000 --queries 10000 --formats parquet
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
SRC_DIR = os.path.join(os.path.dirname(BENCH_DIR), "src")
if os.path.isdir(SRC_DIR):
    sys.path.insert(0, SRC_DIR)

from rankgate.online import fit_click_model, read_click_log, simulate_pbm  # noqa: E402
from rankgate.online.simulate import write_table  # noqa: E402


def _timed(fn):  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--queries", type=int, default=50_000)
    parser.add_argument("--docs-per-query", type=int, default=20)
    parser.add_argument("--formats", default="parquet,csv")
    parser.add_argument("--models", default="pbm,cascade,sdbn")
    args = parser.parse_args()
    pages = args.rows // 10
    sim = simulate_pbm(queries=args.queries, docs_per_query=args.docs_per_query, pages=pages, ranker_quality=0.5)
    print(f"{sim.table.num_rows:,} rows, {pages:,} pages, {args.queries:,} queries, cpus {os.cpu_count()}")
    print("| format | step | wall s | CPU s | notes |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in args.formats.split(","):
            path = os.path.join(tmp, f"log.{fmt}")
            write_table(sim.table, path)
            size = os.path.getsize(path) / 1e6
            log, wall, cpu = _timed(lambda p=path: read_click_log(p))
            total_wall, total_cpu = wall, cpu
            print(f"| {fmt} | read ({size:.0f} MB) | {wall:.2f} | {cpu:.2f} | {log.pages:,} pages |")
            for model in args.models.split(","):
                fit, wall, cpu = _timed(lambda m=model, lg=log: fit_click_model(lg, m))
                total_wall += wall
                total_cpu += cpu
                extra = f"{len(fit.impressions):,} pairs"
                if model == "pbm":
                    error = max(abs(a - b) for a, b in zip(fit.examination, sim.examination, strict=True))
                    extra += f", {fit.iterations} SQUAREM cycles, max examination error {error:.4f}"
                print(f"| {fmt} | fit {model} | {wall:.2f} | {cpu:.2f} | {extra} |")
            print(f"| {fmt} | read + all fits | {total_wall:.2f} | {total_cpu:.2f} | |")


if __name__ == "__main__":
    main()
