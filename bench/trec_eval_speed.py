#!/usr/bin/env python3
"""`rankgate trec_eval` against the trec_eval binary and pytrec_eval, each in its own process.

Every measurement is a fresh child process (timed, with its peak RSS, by the wrapper of
bench/eval_speed.py) that reads the qrels and the run and prints trec_eval's summary:

  rankgate     python -m rankgate trec_eval -m SET QRELS RUN
  trec_eval    TREC_EVAL -m SET QRELS RUN          (the binary; --trec-eval or RANKGATE_TREC_EVAL)
  pytrec_eval  parse_qrel/parse_run + RelevanceEvaluator(SET's measures) + means (the measures
               pytrec_eval has: trec_eval 9 lacks rbp, rbp_resid and unj; relstring is text)

SET is ``all_trec`` when rankgate computes every measure of it, else ``official``, else the
measures without parameters that it computes (the table says which). The rankgate
and trec_eval outputs are compared byte for byte.

Example:
  python bench/trec_eval_speed.py --case msmarco --repeat 3 --markdown
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
sys.path.insert(0, BENCH_DIR)
sys.path.insert(0, REPO_DIR)
sys.path.insert(0, os.path.join(REPO_DIR, "src"))
from eval_speed import CASES, WRAPPER, child_env, ensure_dataset  # noqa: E402

# trec_eval's measures without parameters, tried one by one when no nickname is computed whole
BARE = [
    *["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P"],
    *["recall", "ndcg_cut", "map_cut", "success", "ndcg"],
]

PYTREC_CHILD = r"""
import sys, pytrec_eval
qrels_path, run_path, names = sys.argv[1], sys.argv[2], sys.argv[3].split()
lacks = [n for n in names if n not in pytrec_eval.supported_measures or n == "relstring"]
names = [n for n in names if n not in lacks]
print("# pytrec_eval leaves out: " + (" ".join(lacks) or "nothing"), file=sys.stderr)
with open(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(run_path) as f:
    run = pytrec_eval.parse_run(f)
per_query = pytrec_eval.RelevanceEvaluator(qrels, set(names)).evaluate(run)
keys = sorted({k for v in per_query.values() for k in v})
for k in keys:
    values = [v[k] for v in per_query.values() if k in v]
    print(f"{k}\tall\t{sum(values) / len(values):.4f}")
"""


def measure_set() -> tuple[list[str], str]:
    """The -m requests to time, and a label for the table."""
    from rankgate.compat.trec_eval import expand_requests
    from rankgate.errors import MeasureError

    for nick in ("all_trec", "official"):
        try:
            expand_requests([nick])
            return [nick], nick
        except MeasureError:
            continue
    usable = []
    for m in BARE:
        try:
            expand_requests([m])
            usable.append(m)
        except MeasureError:
            pass
    return usable, "official's and all_trec's measures rankgate computes today: " + " ".join(usable)


def pytrec_names(requests: list[str]) -> list[str]:
    """pytrec_eval's names for the trec_eval requests (it takes the same names, without runid/num_q)."""
    from rankgate.compat.trec_eval import NICKNAMES

    names = [n for r in requests for n in NICKNAMES.get(r, (r,))]
    return [n for n in dict.fromkeys(names) if n not in ("runid", "num_q")]


def commands(tool: str, qrels: str, run: str, requests: list[str], binary: str | None) -> list[str] | None:
    margs = [a for r in requests for a in ("-m", r)]
    if tool == "rankgate":
        return [sys.executable, "-m", "rankgate", "trec_eval", *margs, qrels, run]
    if tool == "trec_eval":
        return [binary, *margs, qrels, run] if binary else None
    return [sys.executable, "-c", PYTREC_CHILD, qrels, run, " ".join(pytrec_names(requests))]


def measure(cmd: list[str], tool: str, workdir: str, timeout: float) -> dict:
    so, se = os.path.join(workdir, f"te_{tool}.out"), os.path.join(workdir, f"te_{tool}.err")
    env = child_env("rankgate" if tool == "rankgate" else tool)
    w = subprocess.run(
        [sys.executable, "-c", WRAPPER, so, se, str(timeout), *cmd],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_DIR,
    )
    stats = json.loads(w.stdout.strip().splitlines()[-1])
    with open(so, "rb") as f:
        stats["stdout"] = f.read()
    with open(se, errors="replace") as f:
        stats["stderr"] = f.read()[-300:]
    return stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=sorted(CASES), default="msmarco")
    ap.add_argument("--repeat", type=int, default=3, help="best of R runs")
    ap.add_argument("--tools", default="rankgate,trec_eval,pytrec_eval")
    ap.add_argument("--trec-eval", default=os.environ.get("RANKGATE_TREC_EVAL"), help="the trec_eval binary")
    ap.add_argument("--workdir", default="/tmp/rankgate-bench")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    if not args.trec_eval and os.path.isfile("/work/oracle/READY"):
        with open("/work/oracle/READY") as f:
            args.trec_eval = f.read().strip()
    n, depth = CASES[args.case][0]
    meta = ensure_dataset(args.workdir, n, depth, 0, False, 0.001, 8)
    requests, label = measure_set()
    best: dict[str, dict] = {}
    for tool in args.tools.split(","):
        cmd = commands(tool, meta["qrels"], meta["run"], requests, args.trec_eval)
        if cmd is None:
            print(f"# {tool}: no binary (--trec-eval)", file=sys.stderr)
            continue
        for _ in range(args.repeat):
            stats = measure(cmd, tool, args.workdir, args.timeout)
            if stats["rc"] != 0:
                print(f"# {tool} failed ({stats['rc']}): {stats['stderr']}", file=sys.stderr)
                break
            if tool not in best or stats["wall"] < best[tool]["wall"]:
                best[tool] = stats
        if tool == "pytrec_eval" and tool in best:
            print(best[tool]["stderr"].strip())
    _print(best, meta, label, args.markdown)
    return 0


def _print(best: dict[str, dict], meta: dict, label: str, markdown: bool) -> None:
    ref = best.get("trec_eval")
    print(f"# {meta['run_lines']:,} run lines, {meta['qrels_lines']:,} qrels lines; -m {label}")
    if ref and "rankgate" in best:
        same = best["rankgate"]["stdout"] == ref["stdout"]
        print(f"# rankgate trec_eval output byte-identical to trec_eval's: {'yes' if same else 'NO'}")
    head = ["tool", "wall s", "cpu s", "peak RSS MB", "trec_eval wall / tool wall", "trec_eval cpu / tool cpu"]
    rows = []
    for tool, s in best.items():
        ratio = f"{ref['wall'] / s['wall']:.1f}x" if ref else "-"
        cpu_ratio = f"{ref['cpu'] / s['cpu']:.1f}x" if ref else "-"
        rows.append([tool, f"{s['wall']:.2f}", f"{s['cpu']:.2f}", f"{s['maxrss_kb'] / 1024:.0f}", ratio, cpu_ratio])
    if markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        for r in [head, *rows]:
            print("  ".join(f"{c:>14}" for c in r))


if __name__ == "__main__":
    sys.exit(main())
