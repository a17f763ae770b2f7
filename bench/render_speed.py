#!/usr/bin/env python3
"""Seconds to render `rankgate eval --per-query`'s output, per format, after the evaluation.

One query per row: on MS MARCO dev's 6,980 queries the table is thousands of rows, and rich lays
a table out cell by cell (about 150 us a cell), so the text table took longer than the
evaluation. The table's own path (`rankgate.render.terminal._fast_table_text`) is timed beside
rich's (``FAST_TABLES = False``), and the two must give the same text; then the table with
intervals (``--ci``: each under its mean on the ``all`` row); json and csv are there for
scale. In-process, best of ``--repeat``, after one evaluation of the shape's files:

    python bench/render_speed.py                             # base at 6,980,000 lines
    python bench/render_speed.py --shapes base,numeric --lines 200000 --repeat 5

The shapes are bench/shapes.py's, written into ``--workdir`` when missing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shapes import ensure_shape

from rankgate import evaluate
from rankgate.io.readers import read_qrels, read_run
from rankgate.render import terminal
from rankgate.render.eval import render

MEASURES = ["P@10", "nDCG@10", "AP", "NumRet"]


def best_of(repeat: int, fmt: str, results: object) -> tuple[float, str]:
    """The fastest of ``repeat`` renders of ``results`` in ``fmt``, and the text."""
    best, text = float("inf"), ""
    for _ in range(repeat):
        start = time.perf_counter()
        text = render(results, fmt, per_query=True)  # type: ignore[arg-type]
        best = min(best, time.perf_counter() - start)
    return best, text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default="base")
    ap.add_argument("--lines", type=int, default=6_980_000)
    ap.add_argument("--workdir", default="/tmp/rankgate-bench")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print("| shape | queries | table | table, rich alone | table with --ci | json | csv |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in args.shapes.split(","):
        meta = ensure_shape(args.workdir, name, args.lines)
        results = evaluate(read_qrels(meta["qrels"]), read_run(meta["run"]), MEASURES)
        fast, fast_text = best_of(args.repeat, "table", results)
        terminal.FAST_TABLES = False
        try:
            slow, slow_text = best_of(args.repeat, "table", results)
        finally:
            terminal.FAST_TABLES = True
        if fast_text != slow_text:
            raise SystemExit(f"{name}: the table's own path and rich's wrote different text")
        with_ci, _ = best_of(args.repeat, "table", results.with_confidence_intervals(n_resamples=1_000))
        json_s, _ = best_of(args.repeat, "json", results)
        csv_s, _ = best_of(args.repeat, "csv", results)
        n = len(results.query_ids)
        cells = f"{fast:.3f} s | {slow:.3f} s | {with_ci:.3f} s | {json_s:.3f} s | {csv_s:.3f} s"
        print(f"| {name} | {n:,} | {cells} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
