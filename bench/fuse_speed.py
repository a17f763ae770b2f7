#!/usr/bin/env python3
"""`rankgate fuse` against ranx's `fuse` on the same TREC files: wall, CPU and peak RSS.

Three runs of ``--queries`` x ``--depth`` lines each (default 7,000 x 1,000 = 7M lines per
run, MS MARCO dev-like), cached under ``--workdir``. Per query the three runs draw their
documents from one pool of ``--pool`` x depth candidates, so they overlap (a document is in
one, two or all three runs), with scores on different scales (BM25-like, dense-like, ...) and
4 decimals, strictly decreasing inside a query: ranx orders tied input documents by an
unstable sort, so only tie-free inputs give it the ranks rankgate uses (docs/fusion.md).

Each measurement is one fresh child process started by bench/eval_speed.py's wrapper (wall
clock, child CPU user+sys, ru_maxrss of the child):

  rankgate  python -m rankgate fuse A B C -o OUT --method M [--norm N]
  ranx      python bench/fuse_speed.py --child-ranx M N OUT A B C
            (ranx.Run.from_file for each + ranx.fuse + Run.save(OUT, kind="trec"))

With ``--same-as SRC`` (the ``src`` folder of another checkout, e.g. a ``git worktree`` of an
older commit) rankgate is also run once from SRC on the same files and both fused runs must be
byte-identical (a speed change must not move a single output byte).

Best of ``--repeats`` per tool and case (least CPU time: wall time swings with the other
jobs). The outputs are then compared: the same queries,
the same top ``--check-k`` documents per query and scores equal to 1e-9. Ties in the fused
scores are ordered by doc id descending by rankgate (docs/fusion.md) and by an unstable sort
by ranx, so the top-k is compared as a list of scores and, per distinct score, as a set of
documents (a tie group cut by k is compared on the part both sides agree must be there).

    python bench/fuse_speed.py                          # the documented table (slow)
    python bench/fuse_speed.py --queries 700 --repeats 1  # quick
    git worktree add /tmp/old HEAD~3 && python bench/fuse_speed.py --tools rankgate --same-as /tmp/old/src
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import time

import numpy as np

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
sys.path.insert(0, BENCH_DIR)

CASES = [("rrf", None), ("mnz", "min-max")]  # (method, norm): rankgate's and ranx's names agree
SCALES = [(20.0, 5.0), (1.0, 0.0), (0.5, 0.3)]  # per run (score range, offset): BM25-, dense-, other-like


# --------------------------------------------------------------------------- data
def ensure_runs(workdir: str, n: int, depth: int, pool: int, seed: int) -> list[str]:
    """The three run files (generated once; ``meta.json`` written last marks them complete)."""
    from make_synthetic import _write_run

    out = os.path.join(workdir, f"fuse_q{n}_d{depth}_p{pool}_s{seed}")
    paths = [os.path.join(out, f"run{i}.trec") for i in range(3)]
    meta = os.path.join(out, "meta.json")
    if os.path.exists(meta):
        return paths
    os.makedirs(out, exist_ok=True)
    print(f"# generating 3 runs of {n} x {depth} lines -> {out}", file=sys.stderr, flush=True)
    rng = np.random.default_rng(seed)
    qnum = np.sort(rng.choice(1_000_000, size=n, replace=False)) + 1
    width = pool * depth
    base = rng.integers(0, 8_841_823 - width, size=n)  # each query's candidate pool: base + [0, width)
    for i, path in enumerate(paths):
        picks = np.argsort(rng.random((n, width)), axis=1)[:, :depth]  # distinct within a query
        docs = base[:, None] + picks
        span, offset = SCALES[i]
        step = max(2, int(span * 10_000 / depth) * 2)  # strictly decreasing: no tie inside a query
        units = np.cumsum(rng.integers(1, step, size=(n, depth)), axis=1)[:, ::-1] + int(offset * 10_000)
        data = {"qnum": qnum, "run_doc": docs, "run_score": units}
        _write_run(path, data, None, f"run{i}")
        del picks, docs, units, data
    with open(meta, "w") as f:
        json.dump({"queries": n, "depth": depth, "pool": pool, "seed": seed}, f)
    return paths


# --------------------------------------------------------------------------- children
def ranx_child(method: str, norm: str, out: str, runs: list[str]) -> int:
    t0 = time.perf_counter()
    import ranx

    t1 = time.perf_counter()
    loaded = [ranx.Run.from_file(p, kind="trec") for p in runs]
    t2 = time.perf_counter()
    fused = ranx.fuse(loaded, norm=None if norm == "none" else norm, method=method)
    t3 = time.perf_counter()
    fused.save(out, kind="trec")
    t4 = time.perf_counter()
    phases = {"import": t1 - t0, "read": t2 - t1, "fuse": t3 - t2, "write": t4 - t3}
    print(json.dumps({k: round(v, 2) for k, v in phases.items()}))
    return 0


def command(tool: str, method: str, norm: str, out: str, runs: list[str]) -> list[str]:
    if tool == "rankgate":
        return [sys.executable, "-m", "rankgate", "fuse", *runs, "-o", out, "--method", method, "--norm", norm]
    return [sys.executable, os.path.abspath(__file__), "--child-ranx", method, norm, out, *runs]


def measure(cmd: list[str], workdir: str, timeout: float, src: str = os.path.join(REPO_DIR, "src")) -> dict:
    from eval_speed import WRAPPER

    env = dict(os.environ)
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    so, se = os.path.join(workdir, "child.out"), os.path.join(workdir, "child.err")
    load = os.getloadavg()[0]
    res = subprocess.run(
        [sys.executable, "-c", WRAPPER, so, se, str(timeout), *cmd], capture_output=True, text=True, env=env, check=True
    )
    rec = json.loads(res.stdout)
    rec["load"] = load
    with open(so) as f:
        rec["stdout"] = f.read().strip()
    if rec["rc"] != 0:
        with open(se) as f:
            sys.exit(f"child failed ({rec['rc']}): {' '.join(cmd)}\n{f.read()[-3000:]}")
    return rec


# --------------------------------------------------------------------------- agreement
def read_top(path: str, k: int) -> dict[str, list[tuple[float, str]]]:
    """{qid: [(score, doc), ...]} of the first ``k`` lines of each query, in file order."""
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=["q", "q0", "d", "r", "s", "t"]),
        parse_options=pacsv.ParseOptions(delimiter=" "),
        convert_options=pacsv.ConvertOptions(
            column_types={"q": "string", "d": "string", "s": "float64"}, include_columns=["q", "d", "r", "s"]
        ),
    )
    rank = table["r"].to_numpy()
    top = table.filter(rank <= k)
    out: dict[str, list[tuple[float, str]]] = {}
    for q, d, s in zip(top["q"].to_pylist(), top["d"].to_pylist(), top["s"].to_pylist(), strict=True):
        out.setdefault(q, []).append((s, d))
    return out


def agree(ours: str, theirs: str, k: int) -> str:
    """'' when the two fused runs agree on every query's top k, else the first difference."""
    a, b = read_top(ours, k), read_top(theirs, k)
    if a.keys() != b.keys():
        return f"query sets differ ({len(a)} vs {len(b)})"
    for q in a:
        sa, sb = [s for s, _ in a[q]], [s for s, _ in b[q]]
        if len(sa) != len(sb) or not np.allclose(sa, sb, rtol=0, atol=1e-9):
            return f"query {q}: scores differ"
        last = sa[-1]  # a tie group cut by k may hold different documents on each side
        da = {(round(s, 9), d) for s, d in a[q] if abs(s - last) > 1e-9}
        db = {(round(s, 9), d) for s, d in b[q] if abs(s - last) > 1e-9}
        if da != db:
            return f"query {q}: documents differ"
    return ""


# --------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child-ranx"]:
        return ranx_child(argv[1], argv[2], argv[3], argv[4:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default="/tmp/rankgate-bench/fuse")
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--pool", type=int, default=2, help="candidate pool per query, in multiples of depth")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3, help="best of N for rankgate")
    ap.add_argument("--ranx-repeats", type=int, default=2, help="best of N for ranx")
    ap.add_argument("--check-k", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--tools", default="rankgate,ranx", help="measure these; the others' last results are reused")
    ap.add_argument("--same-as", metavar="SRC", help="rankgate's src folder from another checkout: outputs must match")
    args = ap.parse_args(argv)
    runs = ensure_runs(args.workdir, args.queries, args.depth, args.pool, args.seed)
    tools = args.tools.split(",")
    rows = []
    for method, norm in CASES:
        best = {}
        for tool in ("rankgate", "ranx"):
            out = os.path.join(os.path.dirname(runs[0]), f"out_{tool}_{method}.trec")
            saved = out + ".json"  # the best measurement, reused by a later call without this tool
            if tool not in tools:
                if os.path.exists(saved):
                    with open(saved) as f:
                        best[tool] = json.load(f)
                continue
            reps = args.repeats if tool == "rankgate" else args.ranx_repeats
            recs = [
                measure(command(tool, method, norm or "none", out, runs), args.workdir, args.timeout)
                for _ in range(reps)
            ]
            for r in recs:
                print(
                    f"# {tool} {method}: wall {r['wall']:.1f}s cpu {r['cpu']:.1f}s "
                    f"rss {r['maxrss_kb'] / 2**20:.2f} GiB load {r['load']:.1f} {r['stdout']}",
                    file=sys.stderr,
                    flush=True,
                )
            best[tool] = min(recs, key=lambda r: r["cpu"])  # CPU: less at the mercy of the other jobs
            best[tool]["out"] = out
            with open(saved, "w") as f:
                json.dump(best[tool], f)
        diff = agree(best["rankgate"]["out"], best["ranx"]["out"], args.check_k) if len(best) == 2 else "n/a"
        rows.append((method, norm, best, diff))
        if args.same_as and "rankgate" in tools:
            same_as(args, method, norm or "none", runs, best["rankgate"]["out"])
    print_table(rows, args, len(runs))
    return 0


def same_as(args: argparse.Namespace, method: str, norm: str, runs: list[str], out: str) -> None:
    """Run rankgate from ``args.same_as`` on the same files; its output must equal ``out`` byte for byte."""
    ref = out.replace(".trec", "_ref.trec")
    rec = measure(command("rankgate", method, norm, ref, runs), args.workdir, args.timeout, src=args.same_as)
    same = filecmp.cmp(out, ref, shallow=False)
    print(
        f"# {method}: {args.same_as}: wall {rec['wall']:.1f}s cpu {rec['cpu']:.1f}s rss "
        f"{rec['maxrss_kb'] / 2**20:.2f} GiB load {rec['load']:.1f}; output byte-identical: {'yes' if same else 'NO'}",
        file=sys.stderr,
        flush=True,
    )
    if not same:
        sys.exit(f"{out} and {ref} differ")


def print_table(rows: list, args: argparse.Namespace, n_runs: int) -> None:
    lines = args.queries * args.depth
    print(
        f"\n{n_runs} runs x {lines:,} lines ({args.queries:,} queries x {args.depth}), "
        f"best of {args.repeats} (rankgate) / {args.ranx_repeats} (ranx); load average now "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs\n"
    )
    print(
        "| method | tool | wall s | CPU s (user+sys) | peak RSS GiB | load at start | wall ratio | CPU ratio | "
        f"RSS ratio | top-{args.check_k} agree |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for method, norm, best, diff in rows:
        label = method + (f" --norm {norm}" if norm else "")
        ref = best.get("rankgate")
        for tool, r in best.items():
            ratio = f"{r['wall'] / ref['wall']:.1f}x" if ref and tool != "rankgate" else ""
            cpu = f"{r['cpu'] / ref['cpu']:.1f}x" if ref and tool != "rankgate" else ""
            mem = f"{r['maxrss_kb'] / ref['maxrss_kb']:.1f}x" if ref and tool != "rankgate" else ""
            ok = ("yes" if diff == "" else diff) if tool != "rankgate" else ""
            print(
                f"| {label} | {tool} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['maxrss_kb'] / 2**20:.2f} | "
                f"{r['load']:.1f} | {ratio} | {cpu} | {mem} | {ok} |"
            )


if __name__ == "__main__":
    sys.exit(main())
