#!/usr/bin/env python3
"""End-to-end speed / memory benchmark: rankgate vs pytrec_eval, ranx, ir_measures.

Every measurement is one fresh child process that imports the tool, parses
the qrels and run files and computes P@10, R@100, nDCG@10, RR@10 and AP
(mean over queries), so interpreter start, imports, parsing and evaluation
all count.  Each child is started by its own small wrapper process, which
times it (wall clock) and reads its peak RSS and CPU time with
``resource.getrusage(RUSAGE_CHILDREN)`` after reaping it; since the wrapper
has no other children, the numbers belong to that one tool run.

Children:
  rankgate     python -m rankgate eval QRELS RUN -m P@10 -m R@100 -m nDCG@10 -m RR@10 -m AP --format json
               (<repo>/src is put first on PYTHONPATH when it exists)
  pytrec_eval  python bench/run_peer.py pytrec_eval QRELS RUN   (dict parsing + RelevanceEvaluator)
  ranx         python bench/run_peer.py ranx QRELS RUN          (Qrels/Run.from_file + evaluate)
  ir_measures  python bench/run_peer.py ir_measures QRELS RUN   (read_trec_* + calc_aggregate)

Examples:
  python bench/eval_speed.py --queries 500 --depth 100
  python bench/eval_speed.py --case msmarco --repeat 3 --markdown
  python bench/eval_speed.py --case scaling --tools rankgate,pytrec_eval
  python bench/eval_speed.py --matrix --lines 500000 --repeat 1      # quick look at every shape
  python bench/eval_speed.py --matrix --markdown                      # the release guard (7M lines, best of 3)
  python bench/eval_speed.py --matrix --shapes numeric,tabs --busy 1  # beside a CPU hog
  python bench/eval_speed.py --imports                                # start-up and import times only
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import subprocess
import sys

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
sys.path.insert(0, BENCH_DIR)
from eval_matrix import run_imports, run_matrix  # noqa: E402
from make_synthetic import write_dataset  # noqa: E402

MEASURES = ["P@10", "R@100", "nDCG@10", "RR@10", "AP"]
ALL_TOOLS = ["rankgate", "pytrec_eval", "ranx", "ir_measures"]
# reference for the agreement check, per measure: the first tool in this order
# that produced a comparable value
REF_ORDER = ["rankgate", "pytrec_eval", "ir_measures", "ranx"]
CASES = {
    "msmarco": [(6980, 1000)],
    "scaling": [(10_000, 100), (30_000, 100), (100_000, 100)],
}

# The wrapper: one per measurement.  argv: stdout_file stderr_file timeout_s cmd...
WRAPPER = r"""
import json, os, resource, signal, subprocess, sys, threading, time
so, se, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
cmd = sys.argv[4:]
timed_out = []
def kill(pid):
    timed_out.append(True)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:  # it ended as the timer fired
        pass
with open(so, "wb") as fo, open(se, "wb") as fe:
    t0 = time.perf_counter()
    try:
        p = subprocess.Popen(cmd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        fe.write(f"cannot start {cmd[0]!r}: {e}\n".encode())
        print(json.dumps({"rc": 127, "wall": 0.0, "maxrss_kb": 0, "cpu": 0.0, "timed_out": False}))
        sys.exit(0)
    # A blocking wait: Popen.wait(timeout=...) polls with sleeps of up to 50 ms, which added up to
    # 50 ms to each time measured. The timeout is a timer that kills the child's process group.
    timer = threading.Timer(timeout, kill, (p.pid,)) if timeout > 0 else None
    if timer is not None:
        timer.start()
    rc = p.wait()
    wall = time.perf_counter() - t0
    if timer is not None:
        timer.cancel()
timed_out = bool(timed_out)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": rc, "wall": wall, "maxrss_kb": ru.ru_maxrss,
                  "cpu": ru.ru_utime + ru.ru_stime, "timed_out": timed_out}))
"""


# --------------------------------------------------------------------------- datasets
def ensure_dataset(workdir, n, depth, seed, shuffle, tie_rate, judged, regen=False, quiet=False):
    name = f"synth_q{n}_d{depth}_j{judged}_s{seed}_t{tie_rate:g}" + ("_shuf" if shuffle else "")
    out = os.path.join(workdir, name)
    meta_path = os.path.join(out, "meta.json")
    want = {
        "n_queries": n,
        "depth": depth,
        "judged_per_query": judged,
        "seed": seed,
        "shuffle": shuffle,
        "tie_rate": tie_rate,
    }
    if not regen and os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        if all(meta["params"].get(k) == v for k, v in want.items()):
            return meta
    if not quiet:
        print(f"# generating {n} queries x {depth} results -> {out}", file=sys.stderr, flush=True)
    return write_dataset(out, n, depth, judged_per_query=judged, seed=seed, shuffle=shuffle, tie_rate=tie_rate)


# --------------------------------------------------------------------------- children
def tool_command(tool, qrels, run, args):
    if tool == "rankgate":
        base = shlex.split(args.rankgate_cmd) if args.rankgate_cmd else [sys.executable, "-m", "rankgate"]
        cmd = [*base, "eval", qrels, run]
        for m in MEASURES:
            cmd += ["-m", m]
        return [*cmd, "--format", "json", *getattr(args, "rankgate_extra", [])]
    return [sys.executable, os.path.join(BENCH_DIR, "run_peer.py"), tool, qrels, run]


def child_env(tool):
    env = dict(os.environ)
    # A user's interpreter caches bytecode; without it rankgate's start-up compiles ~60 modules
    # (about 0.08 s of CPU) on every run. The first run writes the cache; best-of-N uses it.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if tool == "rankgate" and os.path.isdir(os.path.join(REPO_DIR, "src", "rankgate")):
        src = os.path.join(REPO_DIR, "src")
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def measure_once(tool, qrels, run, args, tag):
    logdir = os.path.join(args.workdir, "logs")
    os.makedirs(logdir, exist_ok=True)
    so = os.path.join(logdir, f"{tag}_{tool}.out")
    se = os.path.join(logdir, f"{tag}_{tool}.err")
    cmd = tool_command(tool, qrels, run, args)
    w = subprocess.run(
        [sys.executable, "-c", WRAPPER, so, se, str(args.timeout), *cmd],
        capture_output=True,
        text=True,
        env=child_env(tool),
        cwd=REPO_DIR,
    )
    res = {"tool": tool, "cmd": cmd, "ok": False, "error": None, "values": {}, "phases": {}, "notes": []}
    try:
        stats = json.loads(w.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        last = w.stderr.strip().splitlines()[-1:] or ["no output"]
        res["error"] = f"wrapper failed: {last[0][:200]}"
        return res
    res.update(wall=stats["wall"], rss_mb=stats["maxrss_kb"] / 1024.0, cpu=stats["cpu"], rc=stats["rc"])
    with open(so, errors="replace") as f:
        out = f.read()
    with open(se, errors="replace") as f:
        err = f.read()
    if stats["timed_out"]:
        res["error"] = f"timeout after {args.timeout:g}s"
        return res
    rc = stats["rc"]
    tail = err.strip().splitlines()[-1] if err.strip() else ""
    if rc < 0 or rc == 137:
        kill = " (killed: out of memory?)" if rc in (-9, 137) else ""
        res["error"] = f"exit {rc}{kill}: {tail[:200]}"
        return res
    try:
        if tool == "rankgate":
            res["values"] = extract_values(json.loads(out))
        else:
            doc = json.loads(out.strip().splitlines()[-1])
            res["values"], res["phases"], res["notes"] = doc["values"], doc["phases"], doc["notes"]
    except Exception as e:
        if rc != 0:
            res["error"] = f"exit {rc}: {tail[:200]}"
        else:
            res["error"] = f"cannot read output ({type(e).__name__}: {e}); stdout starts {out[:120]!r}"
        return res
    if rc != 0:  # e.g. a gate that signals through its exit status but still printed values
        res["notes"].append(f"exit status {rc}")
    missing = [m for m in MEASURES if m not in res["values"] and not (m == "RR@10" and "RR(uncut)" in res["values"])]
    if missing:
        res["notes"].append("missing in output: " + ",".join(missing))
    res["ok"] = True
    return res


# --------------------------------------------------------------------------- rankgate JSON
_ALIASES = {
    "P@10": {"p@10", "p_10", "p.10", "precision@10"},
    "R@100": {"r@100", "recall@100", "recall_100", "recall.100"},
    "nDCG@10": {"ndcg@10", "ndcg_cut_10", "ndcg_cut.10"},
    "RR@10": {"rr@10", "mrr@10", "recip_rank@10"},
    "AP": {"ap", "map"},
}
_KEY2M = {a: m for m, al in _ALIASES.items() for a in al}
_PREFERRED = {
    "aggregate",
    "aggregates",
    "mean",
    "means",
    "all",
    "summary",
    "measures",
    "results",
    "metrics",
    "overall",
    "totals",
}


def _num(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, dict):  # {"mean": x, ...} / {"value": x}
        for k in ("mean", "value", "score", "aggregate"):
            if k in v and isinstance(v[k], (int, float)) and not isinstance(v[k], bool):
                return float(v[k])
    return None


def _from_dict(d):
    vals = {}
    for k, v in d.items():
        m = _KEY2M.get(str(k).strip().lower())
        x = _num(v)
        if m and x is not None:
            vals[m] = x
    return vals


def _from_records(lst):
    vals = {}
    for r in lst:
        if not isinstance(r, dict):
            continue
        name = r.get("measure", r.get("name", r.get("metric")))
        q = r.get("query", r.get("qid", r.get("query_id", "all")))
        if name is None or q not in ("all", None, "mean", "*"):
            continue
        x = None
        for k in ("value", "mean", "score", "aggregate"):
            if k in r:
                x = _num(r[k])
                break
        m = _KEY2M.get(str(name).strip().lower())
        if m and x is not None:
            vals[m] = x
    return vals


def extract_values(obj):
    """Find the aggregate measure values in rankgate's JSON, whatever its layout.

    Breadth-first: the shallowest dict that has >= 3 of the measures as keys
    (or a list of {measure, value[, query='all']} records); at equal depth a
    dict under a key like 'aggregate'/'mean'/'all' wins."""
    level = [(None, obj)]
    while level:
        found = []
        nxt = []
        for key, node in level:
            if isinstance(node, dict):
                vals = _from_dict(node)
                if len(vals) >= 3:
                    found.append((str(key).lower() in _PREFERRED, vals))
                nxt.extend(node.items())
            elif isinstance(node, list):
                vals = _from_records(node)
                if len(vals) >= 3:
                    found.append((str(key).lower() in _PREFERRED, vals))
                nxt.extend((key, x) for x in node if isinstance(x, (dict, list)))
        if found:
            found.sort(key=lambda t: (not t[0], -len(t[1])))
            return found[0][1]
        level = nxt
    raise ValueError("no aggregate P@10/R@100/nDCG@10/RR@10/AP values found in JSON")


# --------------------------------------------------------------------------- checks & tables
def agreement(results, tol):
    """Per tool: list of 'measure:diff' strings vs the per-measure reference."""
    ok = {r["tool"]: r for r in results if r["ok"]}
    refs = {}
    for m in MEASURES:
        for t in REF_ORDER:
            if t in ok and m in ok[t]["values"]:
                refs[m] = t
                break
    for r in results:
        if not r["ok"]:
            r["check"] = "-"
            continue
        bad = [n for n in r["notes"] if n.startswith(("missing in output", "exit status"))]
        for m in MEASURES:
            ref = refs.get(m)
            if ref is None or ref == r["tool"] or m not in r["values"]:
                continue
            d = r["values"][m] - ok[ref]["values"][m]
            if not abs(d) <= tol:
                bad.append(f"{m} {d:+.1e} vs {ref}")
        r["check"] = "ok" if not bad else "; ".join(bad)
    return refs


def _fmt(x, nd=3):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def _ratio(a, b):
    return "n/a" if a is None or not b else f"{a / b:.2f}x"


def _row_values(r):
    cells = []
    for m in MEASURES:
        if m in r["values"]:
            cells.append(f"{r['values'][m]:.4f}")
        elif m == "RR@10" and "RR(uncut)" in r["values"]:
            cells.append(f"{r['values']['RR(uncut)']:.4f}*")
        else:
            cells.append("-")
    return cells


def render(headers, rows, markdown, left=(0,)):
    left = {i % len(headers) for i in left}
    if markdown:
        out = [
            "| " + " | ".join(headers) + " |",
            "|" + "|".join("---" if i in left else "---:" for i in range(len(headers))) + "|",
        ]
        out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        return "\n".join(out)
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h)) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(
            str(c).ljust(w) if i in left else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=False))
        )

    return "\n".join(line(r).rstrip() for r in [headers, ["-" * w for w in widths], *rows])


def main_table(results, markdown):
    base = next((r for r in results if r["tool"] == "rankgate" and r["ok"]), None)
    headers = [
        "tool",
        "wall s",
        "peak RSS MB",
        "CPU s",
        "time vs rankgate",
        "mem vs rankgate",
        *MEASURES,
        "phases (s, in-process)",
        "agreement (1e-4)",
    ]
    rows = []
    for r in results:
        if not r["ok"]:
            err = r["error"] or "failed"
            rows.append(
                [
                    r["tool"],
                    _fmt(r.get("wall"), 2),
                    _fmt(r.get("rss_mb"), 0),
                    "-",
                    "-",
                    "-",
                    *["-"] * len(MEASURES),
                    "-",
                    f"FAILED: {err}",
                ]
            )
            continue
        phases = " ".join(f"{k}={v:.2f}" for k, v in r["phases"].items()) or "-"
        rows.append(
            [
                r["tool"],
                _fmt(r["wall"], 2),
                _fmt(r["rss_mb"], 0),
                _fmt(r["cpu"], 1),
                _ratio(r["wall"], base and base["wall"]),
                _ratio(r["rss_mb"], base and base["rss_mb"]),
                *_row_values(r),
                phases,
                r["check"],
            ]
        )
    return render(headers, rows, markdown, left=(0, -2, -1))


# --------------------------------------------------------------------------- driver
def read_through(*paths, block=1 << 23):
    """Read each file once, discarding the bytes; returns the bytes read. Run before a dataset's
    first timed run, so that no tool pays for reading the files from disk: the first tool timed
    would (this VM's page cache drops files unused for a while; 0.1-0.4 s on a 292 MB run)."""
    total = 0
    for path in paths:
        with open(path, "rb", buffering=0) as f:
            while chunk := f.read(block):
                total += len(chunk)
    return total


def bench_dataset(meta, tools, args, label):
    """Run every tool args.repeat times (interleaved); keep the fastest run per tool
    (peak RSS: the smallest over the repeats).  A tool that fails is not retried."""
    read_through(meta["qrels"], meta["run"])
    best = {}
    for rep in range(args.repeat):
        for tool in tools:
            if tool in best and not best[tool]["ok"]:
                continue
            print(f"# {label}: {tool} (repeat {rep + 1}/{args.repeat}) ...", file=sys.stderr, flush=True)
            r = measure_once(tool, meta["qrels"], meta["run"], args, f"{label}_r{rep}")
            if r.get("wall") is not None:
                print(
                    f"#   {'ok' if r['ok'] else 'FAILED'} wall={r['wall']:.2f}s rss={r['rss_mb']:.0f}MB"
                    + ("" if r["ok"] else f" {r['error']}"),
                    file=sys.stderr,
                    flush=True,
                )
            else:
                print(f"#   FAILED {r['error']}", file=sys.stderr, flush=True)
            prev = best.get(tool)
            if prev is None:
                best[tool] = r
            elif r["ok"]:
                rss = min(r["rss_mb"], prev["rss_mb"])
                if r["wall"] < prev["wall"]:
                    best[tool] = r
                best[tool]["rss_mb"] = rss
    results = [best[t] for t in tools]
    agreement(results, args.tol)
    return results


def warmup(tools, args):
    """One unmeasured run per tool on a tiny dataset: fills ranx's numba cache and
    the OS file cache for the tool's modules, so timings are steady-state."""
    meta = ensure_dataset(args.workdir, 50, 20, 12345, False, 0.0, 8, quiet=True)
    for tool in tools:
        print(f"# warm-up: {tool}", file=sys.stderr, flush=True)
        measure_once(tool, meta["qrels"], meta["run"], args, "warmup")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("Examples:")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--case", choices=sorted(CASES), help="built-in case (overrides --queries/--depth)")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--judged", type=int, default=8, help="judgments per query (about)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shuffle", action="store_true", help="run file in shuffled line order")
    ap.add_argument(
        "--tie-rate", type=float, default=0.001, help="fraction of results tied with the one above (0 = no ties)"
    )
    ap.add_argument("--repeat", type=int, default=1, help="take the best of R runs")
    ap.add_argument("--tools", default=",".join(ALL_TOOLS), help=f"comma-separated subset of {','.join(ALL_TOOLS)}")
    ap.add_argument("--workdir", default="/tmp/rankgate-bench")
    ap.add_argument("--markdown", action="store_true", help="print markdown tables")
    ap.add_argument("--tol", type=float, default=1e-4, help="agreement tolerance")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per child (0 = none)")
    ap.add_argument(
        "--no-warmup",
        dest="warmup",
        action="store_false",
        help="skip the unmeasured warm-up run (ranx then includes numba JIT compilation)",
    )
    ap.add_argument("--regen", action="store_true", help="regenerate datasets even if present")
    ap.add_argument(
        "--rankgate-cmd", default=None, help="command prefix instead of 'python -m rankgate', e.g. 'rankgate'"
    )
    ap.add_argument("--json-out", default=None, help="write all results here (default WORKDIR/results_<case>.json)")
    ap.add_argument("--matrix", action="store_true", help="every shape of bench/shapes.py; exit 1 if one misses a goal")
    ap.add_argument("--shapes", default=None, help="comma-separated shapes for --matrix (default: all)")
    ap.add_argument("--lines", type=int, default=6_980_000, help="run lines per shape for --matrix")
    ap.add_argument("--goal-speed", type=float, default=10.0, help="--matrix: least pytrec_eval time / rankgate time")
    ap.add_argument("--goal-memory", type=float, default=0.4, help="--matrix: most rankgate peak RSS / pytrec_eval's")
    ap.add_argument(
        "--goal-spread",
        type=float,
        default=1.5,
        help="--matrix: most rankgate time on a shape / its time on the fastest shape",
    )
    ap.add_argument(
        "--guard-on", choices=("wall", "cpu"), default="wall", help="--matrix: which time the speed goal compares"
    )
    ap.add_argument("--busy", type=int, default=0, help="run N CPU hogs beside the tools (a loaded machine)")
    ap.add_argument("--imports", action="store_true", help="only print start-up and import times")
    a = ap.parse_args(argv)
    a.tools = [t.strip() for t in a.tools.split(",") if t.strip()]
    unknown = [t for t in a.tools if t not in ALL_TOOLS]
    if unknown:
        ap.error(f"unknown tools: {unknown}")
    if a.repeat < 1:
        ap.error("--repeat must be >= 1")
    return a


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.workdir, exist_ok=True)
    if args.imports:
        print(run_imports(args, sys.modules[__name__]))
        return 0
    if args.matrix:
        return run_matrix(args, sys.modules[__name__])
    sizes = CASES[args.case] if args.case else [(args.queries, args.depth)]
    case = args.case or f"q{args.queries}_d{args.depth}"
    md = args.markdown

    metas = [
        ensure_dataset(args.workdir, n, d, args.seed, args.shuffle, args.tie_rate, args.judged, args.regen)
        for n, d in sizes
    ]
    if args.warmup:
        warmup(args.tools, args)

    all_results = []
    out = []
    env_line = (
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}; "
        f"tie rate {args.tie_rate:g}, seed {args.seed}, "
        f"{'shuffled' if args.shuffle else 'sorted'} run file, best of {args.repeat}"
    )
    for meta, (n, d) in zip(metas, sizes, strict=False):
        label = f"q{n}_d{d}"
        results = bench_dataset(meta, args.tools, args, label)
        all_results.append({"queries": n, "depth": d, "dataset": meta, "results": results})
        head = (
            f"{n:,} queries x {d:,} results = {meta['run_lines']:,} run lines "
            f"({meta['run_bytes'] / 1e6:.0f} MB), {meta['qrels_lines']:,} qrels lines"
        )
        out.append(("### " if md else "== ") + head)
        out.append("")
        out.append(main_table(results, md))
        out.append("")

    if len(sizes) > 1:
        out.append(("### " if md else "== ") + "Scaling: wall time vs number of queries")
        out.append("")
        out.append(scaling_table(all_results, args.tools, md))
        out.append("")

    notes = [
        env_line,
        "wall = whole child process (interpreter start, imports, parsing, evaluation); "
        "peak RSS = ru_maxrss of that child; CPU = user+sys of that child (>wall means multithreaded).",
        f"agreement: each measure vs the first of {'/'.join(REF_ORDER)} that reports it; "
        f"'ok' = all within {args.tol:g}.",
    ]
    if "pytrec_eval" in args.tools:
        notes.append(
            "pytrec_eval RR@10 cell marked *: trec_eval has no RR@k; the value is recip_rank over "
            "the whole ranking (uncut), excluded from the agreement check."
        )
    if "ir_measures" in args.tools:
        notes.append(
            "ir_measures computes P/R/nDCG/AP with pytrec_eval and RR@10 with its msmarco "
            "provider (ties broken by doc id ascending; trec_eval breaks them descending)."
        )
    if "ranx" in args.tools:
        notes.append(
            "ranx orders tied scores by its own sort (not by doc id like trec_eval; in practice "
            "file order); "
            + (
                "its numba cache was warmed by an unmeasured run."
                if args.warmup
                else "no warm-up: includes numba JIT compilation if its cache is cold."
            )
        )
    out.append("\n".join(("- " if md else "") + n for n in notes))
    print("\n".join(out))

    path = args.json_out or os.path.join(args.workdir, f"results_{case}.json")
    with open(path, "w") as f:
        json.dump({"case": case, "env": env_line, "runs": all_results}, f, indent=1, default=str)
    print(f"\n(results saved to {path})", file=sys.stderr)
    return 0


def scaling_table(all_results, tools, md):
    headers = (
        ["tool"]
        + [f"{x['queries']:,} q: wall s (s/1k q)" for x in all_results]
        + ["fit: s per 1k q", "fit: fixed s", "peak RSS MB (largest)"]
    )
    base = {}
    rows = []
    for tool in tools:
        pts = []
        cells = [tool]
        for x in all_results:
            r = next(r for r in x["results"] if r["tool"] == tool)
            if r["ok"]:
                pts.append((x["queries"] / 1000.0, r["wall"]))
                cells.append(f"{r['wall']:.2f} ({r['wall'] / (x['queries'] / 1000.0):.3f})")
            else:
                cells.append("failed")
        if len(pts) >= 2:
            k = len(pts)
            mx = sum(p[0] for p in pts) / k
            my = sum(p[1] for p in pts) / k
            sxx = sum((p[0] - mx) ** 2 for p in pts)
            slope = sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx
            cells += [f"{slope:.3f}", f"{my - slope * mx:.2f}"]
            base[tool] = slope
        else:
            cells += ["-", "-"]
        last = next(r for r in all_results[-1]["results"] if r["tool"] == tool)
        cells.append(_fmt(last.get("rss_mb") if last["ok"] else None, 0))
        rows.append(cells)
    return render(headers, rows, md)


if __name__ == "__main__":
    sys.exit(main())
