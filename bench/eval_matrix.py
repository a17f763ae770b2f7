"""``eval_speed.py --matrix`` and ``--imports``: every shape of bench/shapes.py against the peers.

For each shape the tools run in their own processes (best of ``--repeat``, interleaved), the
table gives wall time, CPU time (user+sys of the child) and peak RSS, the ratios against
pytrec_eval, and whether every tool's numbers agree with rankgate's to ``--tol``. Shapes
differences of the tools that order tied scores otherwise than trec_eval are listed as "tie
rule" (docs/semantics.md), on the measures they affect. The process exits 1
when a shape misses a goal (time ratio below ``--goal-speed``, memory ratio above
``--goal-memory``, rankgate's time over ``--goal-spread`` times its time on the fastest shape)
or a number disagrees: the regression guard to run before a release, on
a quiet machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import ModuleType
from typing import Any

from shapes import SHAPES, ensure_shape

# Tools whose tie rule is not trec_eval's (doc id descending), with the measures it affects
# (docs/semantics.md): ranx orders tied scores its own way, ir_measures computes RR@10 with its
# msmarco provider (doc id ascending). Their differences there are listed, not failures; every
# other number must agree to --tol.
OTHER_TIE_RULES = {"ranx": {"P@10", "R@100", "nDCG@10", "RR@10", "AP"}, "ir_measures": {"RR@10"}}
# The CPU hogs of --busy: "syscalls" (the default) enters the kernel all the time, as a neighbour
# that reads, writes and allocates does; "compute" never leaves Python's loop. On the project's
# 2-core VM they ranked rankgate's thread counts differently (docs/performance.md, "Eighth round").
HOGS = {"syscalls": "import os\nwhile True:\n    os.getpid()\n", "compute": "while True:\n    pass\n"}


# Milliseconds per MB a fresh process spends writing 256 MB of new memory, then as much again
# after freeing it (memory the kernel has just had back). On a virtual machine that hands free
# memory back to its host, the first is several times the second, and every tool pays it on
# its peak memory: a machine fact the timings carry.
FRESH_MEMORY = """
import time, numpy as np
size = 256 << 20
costs = []
for _ in range(2):
    t = time.perf_counter()
    np.empty(size, dtype=np.uint8).fill(1)
    costs.append((time.perf_counter() - t) * 1000 / 256)
print(" ".join(f"{c:.2f}" for c in costs))
"""


def fresh_memory_cost() -> str:
    try:
        done = subprocess.run(
            [sys.executable, "-c", FRESH_MEMORY], capture_output=True, text=True, check=False, timeout=120
        )
    except subprocess.TimeoutExpired:
        return "new memory: not measured"
    costs = done.stdout.split()
    if done.returncode != 0 or len(costs) != 2:
        return "new memory: not measured"
    return f"new memory {costs[0]} ms/MB, memory just freed {costs[1]} ms/MB"


def machine_state(busy: int) -> str:
    load = os.getloadavg()
    return (
        f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} CPUs, {fresh_memory_cost()}"
        + (f", {busy} CPU hog(s) running beside the tools" if busy else "")
    )


def start_hogs(n: int, kind: str = "syscalls") -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", HOGS[kind]], stdin=subprocess.DEVNULL) for _ in range(n)]


def stop_hogs(hogs: list[subprocess.Popen[bytes]]) -> None:
    for h in hogs:
        h.kill()
        h.wait()


def check_agreement(results: list[dict[str, Any]], tol: float) -> None:
    """Set each result's "check": agreement with rankgate, per measure, within ``tol``."""
    ok = {r["tool"]: r for r in results if r["ok"]}
    ref = ok.get("rankgate")
    for r in results:
        if not r["ok"]:
            r["check"] = "FAILED: " + (r["error"] or "failed")
            continue
        if ref is None or r is ref:
            r["check"] = "ref" if r is ref else "no rankgate to compare"
            continue
        bad, tie = [], []
        for m, v in r["values"].items():
            if m not in ref["values"]:
                continue
            d = v - ref["values"][m]
            if abs(d) <= tol:
                continue
            (tie if m in OTHER_TIE_RULES.get(r["tool"], set()) else bad).append(f"{m} {d:+.1e}")
        r["check"] = "; ".join(bad) if bad else ("tie rule: " + "; ".join(tie) if tie else "ok")
        r["agrees"] = not bad


def verdict(results: list[dict[str, Any]], args: Any) -> tuple[dict[str, float | None], list[str]]:
    by = {r["tool"]: r for r in results}
    rg, pe = by.get("rankgate"), by.get("pytrec_eval")
    ratios: dict[str, float | None] = {"wall": None, "cpu": None, "mem": None}
    misses = []
    if rg and rg["ok"] and pe and pe["ok"]:
        ratios = {"wall": pe["wall"] / rg["wall"], "cpu": pe["cpu"] / rg["cpu"], "mem": rg["rss_mb"] / pe["rss_mb"]}
        if ratios[args.guard_on] < args.goal_speed:  # type: ignore[operator]
            misses.append(f"{ratios[args.guard_on]:.1f}x {args.guard_on} < {args.goal_speed:g}x")
        if ratios["mem"] > args.goal_memory:  # type: ignore[operator]
            misses.append(f"memory {ratios['mem']:.2f}x > {args.goal_memory:g}x")
    elif rg is None or not rg["ok"]:
        misses.append("rankgate failed")
    misses += [f"{r['tool']} disagrees" for r in results if r.get("agrees") is False]
    return ratios, misses


def spread(saved: list[dict[str, Any]], args: Any) -> dict[str, float]:
    """rankgate's time (``args.guard_on``) on each shape over its time on the fastest shape; a shape
    over ``args.goal_spread`` gets a miss added to its ``misses`` (it fell off a fast path)."""
    times = {}
    for s in saved:
        rg = next((r for r in s["results"] if r["tool"] == "rankgate" and r["ok"]), None)
        if rg is not None:
            times[s["shape"]] = rg[args.guard_on]
    if not times:
        return {}
    best = min(times.values())
    out = {name: t / best for name, t in times.items()}
    for s in saved:
        ratio = out.get(s["shape"])
        if ratio is not None and ratio > args.goal_spread:
            s["misses"].append(f"{ratio:.2f}x the fastest shape's {args.guard_on} time > {args.goal_spread:g}x")
    return out


def _cell(r: dict[str, Any] | None) -> str:
    if r is None:
        return "-"
    if not r["ok"]:
        return "failed"
    return f"{r['wall']:.2f} / {r['cpu']:.2f} / {r['rss_mb']:.0f}"


def run_matrix(args: Any, es: ModuleType) -> int:
    """The matrix; returns the exit status (1: a shape missed a goal)."""
    names = [s.strip() for s in args.shapes.split(",")] if args.shapes else list(SHAPES)
    unknown = [n for n in names if n not in SHAPES]
    if unknown:
        print(f"unknown shapes: {unknown}; known: {', '.join(SHAPES)}", file=sys.stderr)
        return 2
    metas = {n: ensure_shape(args.workdir, n, args.lines, args.seed, args.regen) for n in names}
    if args.warmup:
        es.warmup(args.tools, args)
    imports = run_imports(args, es)
    before = machine_state(args.busy)
    hogs = start_hogs(args.busy)
    saved = []
    try:
        for name in names:
            meta = metas[name]
            results = es.bench_dataset(meta, args.tools, args, f"{name}_{args.lines}")
            check_agreement(results, args.tol)
            ratios, misses = verdict(results, args)
            saved.append({"shape": name, "dataset": meta, "results": results, "ratios": ratios, "misses": misses})
    finally:
        stop_hogs(hogs)
    spreads = spread(saved, args)
    rows, failed = [], []
    for s in saved:
        if s["misses"]:
            failed.append(f"{s['shape']}: {', '.join(s['misses'])}")
        rows.append(_row(s["shape"], s["dataset"], s["results"], s["ratios"], s["misses"], args.tools, spreads))
    after = machine_state(0)  # the hogs are stopped by now
    print(_report(rows, args, imports, before, after, es.render))
    path = args.json_out or os.path.join(args.workdir, f"matrix_{args.lines}.json")
    with open(path, "w") as f:
        json.dump({"lines": args.lines, "machine": [before, after], "shapes": saved}, f, indent=1, default=str)
    print(f"\n(results saved to {path})", file=sys.stderr)
    if failed:
        print("goal missed:\n  " + "\n  ".join(failed), file=sys.stderr)
        return 1
    return 0


def _row(
    name: str, meta: dict, results: list, ratios: dict, misses: list[str], tools: list[str], spreads: dict[str, float]
) -> list[str]:
    by = {r["tool"]: r for r in results}

    def x(k: str, nd: int = 1) -> str:
        return "-" if ratios[k] is None else f"{ratios[k]:.{nd}f}x"

    checks = "; ".join(f"{r['tool']}: {r['check']}" for r in results if r["tool"] != "rankgate" and r["check"] != "ok")
    return [
        name,
        f"{meta['run_lines']:,}",
        f"{meta['run_bytes'] / 1e6:.0f}",
        *[_cell(by.get(t)) for t in tools],
        x("wall"),
        x("cpu"),
        x("mem", 2),
        "-" if name not in spreads else f"{spreads[name]:.2f}x",
        checks or "all ok",
        "ok" if not misses else "MISSED",
    ]


def _report(rows: list[list[str]], args: Any, imports: str, before: str, after: str, render: Any) -> str:
    md = args.markdown
    headers = [
        "shape",
        "run lines",
        "MB",
        *[f"{t} wall s / CPU s / RSS MB" for t in args.tools],
        "speed vs pytrec_eval (wall)",
        "(CPU)",
        "memory vs pytrec_eval",
        "rankgate time vs fastest shape",
        "agreement with rankgate",
        "goal",
    ]
    table = render(headers, rows, md, left=(0, -2, -1))
    shape_notes = [f"{('- ' if md else '  ')}{n}: {SHAPES[n].note}" for n in (r[0] for r in rows)]
    return "\n".join(
        [
            f"Machine before: {before}; after: {after}.",
            f"Best of {args.repeat} per tool; goals: speed >= {args.goal_speed:g}x pytrec_eval ({args.guard_on} time), "
            f"peak RSS <= {args.goal_memory:g}x pytrec_eval's, time <= {args.goal_spread:g}x the fastest shape's; "
            f"agreement to {args.tol:g}.",
            "",
            table,
            "",
            "Shapes:",
            *shape_notes,
            "",
            imports,
        ]
    )


IMPORTS = [
    ("python (no imports)", None, ["-c", "pass"]),
    ("import rankgate", "rankgate", ["-c", "import rankgate"]),
    ("rankgate --help", "rankgate", ["-m", "rankgate", "--help"]),
    ("import pytrec_eval", "pytrec_eval", ["-c", "import pytrec_eval"]),
    ("import ranx", "ranx", ["-c", "import ranx"]),
    ("import ir_measures", "ir_measures", ["-c", "import ir_measures"]),
]


def run_imports(args: Any, es: ModuleType) -> str:
    """Start-up and import times (best of ``args.repeat``, at least 3), each in a fresh process."""
    rows = []
    logdir = os.path.join(args.workdir, "logs")
    os.makedirs(logdir, exist_ok=True)
    for label, tool, argv in IMPORTS:
        if tool not in (None, "rankgate") and tool not in args.tools:
            continue
        best: dict[str, float] | None = None
        for _ in range(max(3, args.repeat)):
            w = subprocess.run(
                [sys.executable, "-c", es.WRAPPER, os.devnull, os.devnull, "60", sys.executable, *argv],
                capture_output=True,
                text=True,
                env=es.child_env("rankgate"),
                cwd=es.REPO_DIR,
            )
            stats = json.loads(w.stdout.strip().splitlines()[-1])
            if stats["rc"] != 0:
                best = None
                break
            if best is None or stats["wall"] < best["wall"]:
                best = stats
        cells = ["failed", "-", "-"] if best is None else [f"{best['wall']:.3f}", f"{best['cpu']:.3f}"]
        rows.append([label, *cells[:2], "-" if best is None else f"{best['maxrss_kb'] / 1024:.0f}"])
    table = es.render(["start-up", "wall s", "CPU s", "peak RSS MB"], rows, args.markdown)
    return f"Start-up and import times (fresh process each, best of {max(3, args.repeat)}):\n\n{table}"
