"""CPU time, peak RSS and per-query output of `rankgate eval` on the shapes, old code against new.

Each shape is evaluated in its own child process (``python -m rankgate eval ... --per-query
--format json``) with ``PYTHONPATH`` set to each source tree given; the script prints wall
time, CPU time (user+sys of the child) and peak RSS per tree (the run of least CPU time of
``--repeat``, the trees taking turns run by run), and checks that every tree's output is
byte-identical to the first's. Use it to show that a speed-up changed no result:

    python bench/shapes.py --lines 2000000 --workdir /tmp/rgs
    git archive HEAD src | tar -x -C /tmp/rg_old        # the code before the change
    python bench/eval_shapes_check.py --workdir /tmp/rgs --lines 2000000 /tmp/rg_old/src src

``--profile`` instead runs cProfile on one in-process evaluation of each shape (the tree of
this checkout) and prints the top functions by cumulative time. ``--phases`` times the steps
of `rankgate eval` in a fresh process per shape (imports, reading the qrels, scanning the run,
ordering its rows, building the `Run`, evaluating), wall and CPU seconds, the fastest of
``--repeat`` runs: where a shape is slower than another, it says which step.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys

from eval_speed import WRAPPER, read_through
from shapes import SHAPES, ensure_shape

MEASURES = "P@10,R@100,nDCG@10,RR@10,AP"


def measure_once(src: str, meta: dict, out: str) -> dict:
    """CPU time, wall time and peak RSS of one run of one tree on one shape, and its output's digest."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # each tree's bytecode cached,
    env["PYTHONPATH"] = os.path.abspath(src)  # as a user's interpreter does (else the old tree compiles every run)
    cmd = [sys.executable, "-m", "rankgate", "eval", meta["qrels"], meta["run"], "-m", MEASURES]
    cmd += ["--per-query", "--format", "json"]
    w = subprocess.run(
        [sys.executable, "-c", WRAPPER, out, out + ".err", "0", *cmd], capture_output=True, text=True, env=env
    )
    stats = json.loads(w.stdout.strip().splitlines()[-1])
    if stats["rc"] != 0:
        with open(out + ".err") as f:
            raise SystemExit(f"{src} failed on {meta['run']}: {f.read()[-500:]}")
    with open(out, "rb") as f:
        stats["digest"] = hashlib.sha256(f.read()).hexdigest()
    return stats


def measure(trees: list[str], meta: dict, workdir: str, name: str, repeat: int) -> list[dict]:
    """Each tree's best-of-``repeat`` run (least CPU time) on one shape. The trees take turns, one
    run each per round, so a machine that slows down or speeds up weighs on them alike."""
    best: list[dict | None] = [None] * len(trees)
    read_through(meta["qrels"], meta["run"])  # the first tree does not pay for reading them from disk
    for round_ in range(repeat):
        turns = list(enumerate(trees))
        for i, tree in turns if round_ % 2 == 0 else turns[::-1]:  # ABBA: neither tree always goes first
            stats = measure_once(tree, meta, os.path.join(workdir, f"check_{name}_{i}.json"))
            kept = best[i]
            if kept is not None and kept["digest"] != stats["digest"]:
                raise SystemExit(f"{tree} wrote different output on two runs of {name}")
            if kept is None or stats["cpu"] < kept["cpu"]:
                best[i] = stats
    return [b for b in best if b is not None]


def profile(meta: dict, top: int) -> None:
    import cProfile
    import pstats

    from rankgate.cli import main

    argv = ["eval", meta["qrels"], meta["run"], "-m", MEASURES, "--format", "json"]
    prof = cProfile.Profile()
    with open(os.devnull, "w") as sink:
        stdout, sys.stdout = sys.stdout, sink
        try:
            prof.runcall(main, argv)
        finally:
            sys.stdout = stdout
    pstats.Stats(prof).sort_stats("cumulative").print_stats(top)


# One `rankgate eval` in steps, each timed (wall and CPU seconds); printed as JSON.
PHASES_CHILD = r"""
import json, sys, time
marks, last = [], [time.perf_counter(), time.process_time()]
def mark(name):
    now = [time.perf_counter(), time.process_time()]
    marks.append([name, now[0] - last[0], now[1] - last[1]])
    last[:] = now
import numpy, pyarrow
mark("import numpy, pyarrow")
import rankgate
from rankgate.evaluation.evaluate import evaluate
from rankgate.io import run_order, trec
from rankgate.io.readers import _trec_run, read_qrels
mark("import rankgate")
qrels_path, run_path, measures = sys.argv[1:4]
qrels = read_qrels(qrels_path)
mark("read qrels")
parsed = trec.read(run_path, trec.RUN_LAYOUT, run_path)
mark("scan run")
run_order.reorder(parsed, "error")
mark("order rows")
run = _trec_run(parsed, run_path, "run", "error")
del parsed
mark("Run")
evaluate(qrels, run, measures.split(","))
mark("evaluate")
print(json.dumps(marks))
"""


def phases(meta: dict, repeat: int) -> list[list]:
    """The steps of the fastest of ``repeat`` fresh-process runs: [name, wall s, CPU s] each."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI starts numpy for eval
    best: list[list] | None = None
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-c", PHASES_CHILD, meta["qrels"], meta["run"], MEASURES],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        marks = json.loads(done.stdout.strip().splitlines()[-1])
        if best is None or sum(m[1] for m in marks) < sum(m[1] for m in best):
            best = marks
    assert best is not None
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs="*", default=["src"], help="source trees (folders holding rankgate/)")
    ap.add_argument("--workdir", default="/tmp/rankgate-bench")
    ap.add_argument("--lines", type=int, default=2_000_000)
    ap.add_argument("--shapes", default=None, help="comma-separated (default: all)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--phases", action="store_true", help="time the steps of one eval per shape (wall / CPU s)")
    args = ap.parse_args()
    names = args.shapes.split(",") if args.shapes else list(SHAPES)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    differ = []
    header = False
    for name in names:
        meta = ensure_shape(args.workdir, name, args.lines)
        if args.phases:
            marks = phases(meta, args.repeat)
            if not header:
                print("| shape | " + " | ".join(m[0] for m in marks) + " | total |")
                print("|---|" + "---:|" * (len(marks) + 1))
                header = True
            cells = [f"{m[1]:.2f} / {m[2]:.2f}" for m in marks]
            total = f"{sum(m[1] for m in marks):.2f} / {sum(m[2] for m in marks):.2f}"
            print(f"| {name} | " + " | ".join(cells) + f" | {total} |", flush=True)
            continue
        if args.profile:
            print(f"== {name}", flush=True)
            profile(meta, args.top)
            continue
        cells, digests = [], []
        for got in measure(args.trees, meta, args.workdir, name, args.repeat):
            cells.append(f"{got['cpu']:6.2f} s CPU {got['wall']:6.2f} s wall {got['maxrss_kb'] / 1024:5.0f} MB")
            digests.append(got["digest"])
        same = all(d == digests[0] for d in digests)
        if not same:
            differ.append(name)
        print(f"{name:15s} " + " | ".join(cells) + ("" if same else "  OUTPUT DIFFERS"), flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")
    if differ:
        print("outputs differ on: " + ", ".join(differ), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
