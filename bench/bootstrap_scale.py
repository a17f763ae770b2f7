#!/usr/bin/env python3
"""Time of `eval --ci`'s bootstrap (percentile, 10,000 resamples) on 100k and 1M queries x 3 measures.

Two kinds of per-query values: ``lattice`` (P@10, RR@10 and R@8-like values: few distinct
rows, the multinomial path of `rankgate.stats.bootstrap`) and ``continuous`` (uniform
values: every row distinct, the block path). Each row gives the wall and CPU (user + sys)
seconds of the call, the load average when it ended and the peak RSS of the process so far.

Examples:
  python bench/bootstrap_scale.py
  python bench/bootstrap_scale.py --queries 100000 --kind lattice --resamples 1000
  python bench/bootstrap_scale.py --kind continuous --threads 1
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

import numpy as np

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
SRC_DIR = os.path.join(os.path.dirname(BENCH_DIR), "src")
if os.path.isdir(SRC_DIR):
    sys.path.insert(0, SRC_DIR)

import rankgate.stats.bootstrap as bootstrap  # noqa: E402


def scores(n: int, kind: str, seed: int = 0) -> np.ndarray:
    """Per-query values of 3 measures on ``n`` queries."""
    rng = np.random.default_rng(seed)
    if kind == "continuous":
        return rng.random((n, 3))
    skill = rng.beta(2.0, 3.0, size=n)
    first = rng.geometric(np.maximum(skill, 0.05))
    rr10 = np.where(first <= 10, 1.0 / first, 0.0)
    return np.column_stack([rng.binomial(10, skill) / 10.0, rr10, rng.binomial(8, np.sqrt(skill)) / 8.0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--kind", choices=["lattice", "continuous"], nargs="+", default=["lattice", "continuous"])
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--threads", type=int, default=None, help="threads of the block path (default: the module's)")
    args = ap.parse_args(argv)
    if args.threads is not None and hasattr(bootstrap, "THREADS"):
        bootstrap.THREADS = args.threads
    print("| queries | values | resamples | wall (s) | CPU (s) | load | peak RSS (MiB) |")
    print("|---|---|---|---|---|---|---|")
    for kind in args.kind:
        for n in args.queries:
            d = scores(n, kind)
            start, cpu = time.perf_counter(), os.times()
            bootstrap.bootstrap_ci_columns(d, n_resamples=args.resamples, seed=0)
            wall, end = time.perf_counter() - start, os.times()
            used = end.user - cpu.user + end.system - cpu.system
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            load = os.getloadavg()[0]
            print(
                f"| {n:,} | {kind} | {args.resamples:,} | {wall:.1f} | {used:.1f} | {load:.2f} | {rss:.0f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
