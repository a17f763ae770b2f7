#!/usr/bin/env python3
"""Which thread count makes `rankgate eval` quickest, on a quiet machine and beside CPU hogs.

Issue 24, item 4: rankgate should lose no more than pytrec_eval does when another process takes
a core, and its thread count should be chosen by measuring that. A best-of-3 matrix run
(``eval_speed.py --matrix --busy 1``) is too noisy to choose by: one unlucky run decides a cell.
Here everything is timed in turns. Each round times a shape quiet, and beside ``--busy N`` hogs
(the two conditions alternate which goes first). Within a condition, rankgate runs once per
thread count (``RANKGATE_THREADS``), in ABBA order, and then the peer once (pytrec_eval by
default). The table gives each thread count's range and median wall time, and the quickest
count. It also gives how much each one loses beside the hogs (busy median over quiet median),
beside the peer's loss: item 4's criterion.

    python bench/threads_busy.py --shapes base,shuffled,beir --threads 1,2 --busy 1 --repeat 4
    python bench/threads_busy.py --shapes base --threads 1,2,4 --busy 1 --repeat 6 --peer none
    python bench/threads_busy.py --shapes base --busy 1 --repeat 8 --peer none --hog compute

The children are the ones `eval_speed.py` times (same wrapper, same command, bytecode cache on).
The shapes are bench/shapes.py's, written into ``--workdir`` when missing. Nothing here asserts a
duration; tests/test_bench_matrix.py checks the summary's arithmetic.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from types import SimpleNamespace
from typing import Any

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH_DIR)
from eval_matrix import HOGS, machine_state, start_hogs, stop_hogs  # noqa: E402
from shapes import SHAPES, ensure_shape  # noqa: E402


def turn_order(counts: list[int], round_index: int) -> list[int]:
    """ABBA: the thread counts in order on even rounds, reversed on odd ones, so that neither count
    always runs first (right after the peer's large process, or first after a pause)."""
    return counts if round_index % 2 == 0 else counts[::-1]


def summarize(walls: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, Any]]:
    """Per variant ("threads=N", or the peer's name): per condition, the range and median wall time,
    and the loss (busy median / quiet median) when both conditions were timed."""
    out: dict[str, dict[str, Any]] = {}
    for variant, by_condition in walls.items():
        row: dict[str, Any] = {}
        for condition, times in by_condition.items():
            if times:
                row[condition] = {"min": min(times), "median": statistics.median(times), "max": max(times)}
        if "quiet" in row and "busy" in row:
            row["loss"] = row["busy"]["median"] / row["quiet"]["median"]
        out[variant] = row
    return out


def quickest(summary: dict[str, dict[str, Any]], condition: str) -> str | None:
    """The rankgate variant with the least median wall time under ``condition``."""
    timed = {v: s[condition]["median"] for v, s in summary.items() if v.startswith("threads=") and condition in s}
    return min(timed, key=timed.__getitem__) if timed else None


def _timed(es: Any, tool: str, meta: dict, args: Any, tag: str, threads: int | None) -> float:
    """One child's wall time (``RANKGATE_THREADS`` set for it when ``threads`` is given)."""
    saved = os.environ.get("RANKGATE_THREADS")
    if threads is not None:
        os.environ["RANKGATE_THREADS"] = str(threads)  # the child's environment is a copy of ours
    try:
        result = es.measure_once(tool, meta["qrels"], meta["run"], args, tag)
    finally:
        if saved is None:
            os.environ.pop("RANKGATE_THREADS", None)
        else:
            os.environ["RANKGATE_THREADS"] = saved
    if not result["ok"]:
        raise SystemExit(f"{tool} failed on {meta['run']}: {result['error']}")
    return float(result["wall"])


def measure_shape(es: Any, meta: dict, args: Any) -> dict[str, dict[str, list[float]]]:
    """Wall times by variant and condition: ``args.repeat`` rounds of each condition, the two
    conditions taking turns too (quiet first on even rounds), so that the machine's drift over the
    minutes falls on both alike."""
    counts = [int(c) for c in args.threads.split(",")]
    variants = [f"threads={c}" for c in counts] + ([args.peer] if args.peer != "none" else [])
    walls: dict[str, dict[str, list[float]]] = {v: {"quiet": [], "busy": []} for v in variants}
    conditions = [("quiet", 0)] + ([("busy", args.busy)] if args.busy else [])
    for i in range(args.repeat):
        for condition, hogs_wanted in conditions if i % 2 == 0 else conditions[::-1]:
            hogs = start_hogs(hogs_wanted, args.hog)
            try:
                for c in turn_order(counts, i):
                    wall = _timed(es, "rankgate", meta, args, f"threads{c}_{condition}_{i}", c)
                    walls[f"threads={c}"][condition].append(wall)
                if args.peer != "none":
                    walls[args.peer][condition].append(_timed(es, args.peer, meta, args, f"{condition}_{i}", None))
            finally:
                stop_hogs(hogs)
        print(f"# round {i + 1}/{args.repeat} done", file=sys.stderr, flush=True)
    return walls


def _cell(stats: dict[str, float] | None) -> str:
    if stats is None:
        return "-"
    return f"{stats['min']:.2f}-{stats['max']:.2f} ({stats['median']:.2f})"


def report(name: str, summary: dict[str, dict[str, Any]], busy: int) -> list[str]:
    lines = [
        f"| {name}: variant | quiet: range (median) | {busy} hog(s): range (median) | loss (busy / quiet median) |",
        "|---|---:|---:|---:|",
    ]
    for variant, row in summary.items():
        loss = f"{row['loss']:.2f}x" if "loss" in row else "-"
        lines.append(f"| {variant} | {_cell(row.get('quiet'))} | {_cell(row.get('busy'))} | {loss} |")
    lines.append("")
    beside = f", beside the hog(s) {quickest(summary, 'busy')}" if busy else ""
    lines.append(f"quickest: quiet {quickest(summary, 'quiet')}{beside}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--shapes", default="base", help="comma-separated shapes of bench/shapes.py")
    ap.add_argument("--threads", default="1,2", help="thread counts to compare (RANKGATE_THREADS)")
    ap.add_argument(
        "--busy", type=int, default=1, help="CPU hogs beside the tools in the busy condition (0: quiet only)"
    )
    ap.add_argument("--hog", choices=sorted(HOGS), default="syscalls", help="kind of CPU hog (eval_matrix.HOGS)")
    ap.add_argument("--repeat", type=int, default=4, help="rounds per condition")
    ap.add_argument(
        "--peer", default="pytrec_eval", help="peer timed in the same rounds (pytrec_eval, ranx, ir_measures, none)"
    )
    ap.add_argument("--workdir", default="/tmp/rankgate-bench")
    ap.add_argument("--lines", type=int, default=6_980_000, help="run lines per shape")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=900, help="seconds per child")
    args = ap.parse_args(argv)
    names = [s.strip() for s in args.shapes.split(",")]
    unknown = [n for n in names if n not in SHAPES]
    if unknown:
        print(f"unknown shapes: {unknown}; known: {', '.join(SHAPES)}", file=sys.stderr)
        return 2
    import eval_speed as es  # the children and their wrapper, as the matrix times them

    child_args = SimpleNamespace(**vars(args), rankgate_cmd=None)  # what eval_speed's children read
    print(f"Machine before: {machine_state(0)}")
    for name in names:
        meta = ensure_shape(args.workdir, name, args.lines, args.seed, False)
        es.read_through(meta["qrels"], meta["run"])  # as the matrix: no variant pays for reading them from disk
        summary = summarize(measure_shape(es, meta, child_args))
        print("\n" + "\n".join(report(name, summary, args.busy)), flush=True)
    print(f"\nMachine after: {machine_state(0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
