#!/usr/bin/env python3
"""Scale benchmark: rankgate on 10^7- and 10^8-line runs, in memory and out of core.

Two synthetic datasets from make_synthetic.py (sorted run files, tie rate 0.001):

  10^7 lines: 100,000 queries x 100 results, next to pytrec_eval and ranx;
  10^8 lines: 1,000,000 queries x 100 results (about 4.4 GB of text), rankgate only.

Each measurement is one fresh child process timed by eval_speed.py's wrapper (wall clock,
peak RSS, CPU), computing P@10, R@100, nDCG@10, RR@10 and AP. rankgate runs twice per
dataset: in memory (the default) and out of core with a memory budget (--memory), which
hash-partitions the files by query on disk and evaluates groups of partitions that fit the
budget. The two must give the same values; the table's agreement column checks it.

The peers are left out at 10^8 lines: at 10^7 pytrec_eval already needs about 1.7x and ranx
about 4x rankgate's memory, and a child killed by the kernel's OOM killer can take other work
on the machine with it. --peers-at-1e8 runs them anyway.

Examples:
  python bench/scale.py                       # both sizes (generating 10^8 lines takes minutes)
  python bench/scale.py --sizes 1e7 --markdown
  python bench/scale.py --sizes 1e8 --memory 4GB --markdown
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import sys

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH_DIR)
from eval_speed import MEASURES, agreement, ensure_dataset, measure_once, render, warmup  # noqa: E402

SIZES = {"1e7": (100_000, 100), "1e8": (1_000_000, 100)}
# Out-of-core budgets well under each input's in-memory footprint, so the out-of-core path runs.
BUDGETS = {"1e7": "256MB", "1e8": "2GB"}


def variants(size: str, memory: str, peers_at_1e8: bool) -> list[tuple[str, str, list[str]]]:
    """(label, tool, extra rankgate arguments) to run on one dataset."""
    out = [("rankgate (in memory)", "rankgate", []), (f"rankgate --memory {memory}", "rankgate", ["--memory", memory])]
    if size == "1e7" or peers_at_1e8:
        out += [("pytrec_eval", "pytrec_eval", []), ("ranx", "ranx", [])]
    return out


def run_size(size: str, args: argparse.Namespace) -> tuple[dict, list[dict]]:
    n, depth = SIZES[size]
    meta = ensure_dataset(args.workdir, n, depth, args.seed, False, 0.001, 8)
    results = []
    for label, tool, extra in variants(size, args.memory or BUDGETS[size], args.peers_at_1e8):
        a = copy.copy(args)
        a.rankgate_extra = extra
        print(f"# {size}: {label} ...", file=sys.stderr, flush=True)
        r = measure_once(tool, meta["qrels"], meta["run"], a, f"scale{size}_{tool}{'_ooc' if extra else ''}")
        r["label"] = label
        print(
            f"#   {'ok' if r['ok'] else 'FAILED ' + str(r['error'])} wall={r.get('wall', 0):.1f}s "
            f"rss={r.get('rss_mb', 0):.0f}MB",
            file=sys.stderr,
            flush=True,
        )
        results.append(r)
    agreement(results, args.tol)
    return meta, results


def table(results: list[dict], markdown: bool) -> str:
    base = results[0] if results and results[0]["ok"] else None
    headers = ["tool", "wall s", "peak RSS MB", "CPU s", "time vs rankgate", "mem vs rankgate", *MEASURES, "agreement"]
    rows = []
    for r in results:
        if not r["ok"]:
            rows.append([r["label"], "-", "-", "-", "-", "-", *["-"] * len(MEASURES), f"FAILED: {r['error']}"])
            continue
        vals = []
        for m in MEASURES:
            v = r["values"].get(m)
            vals.append(
                f"{v:.4f}"
                if v is not None
                else (f"{r['values']['RR(uncut)']:.4f}*" if m == "RR@10" and "RR(uncut)" in r["values"] else "-")
            )
        rows.append(
            [
                r["label"],
                f"{r['wall']:.1f}",
                f"{r['rss_mb']:.0f}",
                f"{r['cpu']:.1f}",
                f"{r['wall'] / base['wall']:.2f}x" if base else "-",
                f"{r['rss_mb'] / base['rss_mb']:.2f}x" if base else "-",
                *vals,
                r.get("check", "-"),
            ]
        )
    return render(headers, rows, markdown, left=(0, -1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("Examples:")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--sizes", default="1e7,1e8", help="comma-separated subset of 1e7,1e8")
    ap.add_argument("--memory", help="rankgate's out-of-core memory budget (default: 256MB at 1e7, 2GB at 1e8)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", default="/tmp/rankgate-bench")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--peers-at-1e8", action="store_true", help="also run pytrec_eval and ranx on 10^8 lines")
    ap.add_argument("--rankgate-cmd", default=None)
    args = ap.parse_args(argv)
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    if any(s not in SIZES for s in sizes):
        ap.error(f"--sizes takes {','.join(SIZES)}")
    os.makedirs(args.workdir, exist_ok=True)
    warmup(["rankgate", "pytrec_eval", "ranx"], args)
    out, saved = [], []
    for size in sizes:
        meta, results = run_size(size, args)
        saved.append({"size": size, "dataset": meta, "results": results})
        out.append(
            ("### " if args.markdown else "== ")
            + f"{meta['params']['n_queries']:,} queries x {meta['params']['depth']} = {meta['run_lines']:,} run lines "
            f"({meta['run_bytes'] / 1e9:.1f} GB), {meta['qrels_lines']:,} qrels lines"
        )
        out += ["", table(results, args.markdown), ""]
    out.append(
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB RAM; one fresh process per row; "
        "pytrec_eval's RR@10 (*) is recip_rank uncut."
    )
    print("\n".join(out))
    path = os.path.join(args.workdir, "results_scale.json")
    with open(path, "w") as f:
        json.dump(saved, f, indent=1, default=str)
    print(f"(results saved to {path})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
