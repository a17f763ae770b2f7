#!/usr/bin/env python3
"""Speed of rankgate's comparison statistics, with ranx's `compare` for reference.

The case of the issue: 2 systems x 5 measures x 7,000 queries, 10,000 bootstrap resamples
plus 10,000 random sign flips, all 5 measures sharing the resamples. Every row is the best
of ``--repeat`` runs in this process (imports and data generation are not timed).

Per-query scores come from ranx itself when it is installed: a synthetic qrels and two
runs (7,000 queries, 8 judged docs each, 100 results per run) are evaluated by
``ranx.evaluate(..., return_mean=False)`` for P@10, R@100, nDCG@10, RR@10 and AP, so both
tools test the same numbers and their p-values can be compared. Without ranx (or with
``--no-ranx``) the scores are synthetic lattice values of the same shape.

ranx's ``compare`` rows include its own metric computation for both runs (it has no entry
point that takes per-query scores); the "ranx evaluate" row times that part alone, and
the "ranx test only" rows subtract it.

Examples:
  python bench/stats_speed.py
  python bench/stats_speed.py --queries 2000 --repeat 5 --no-ranx
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
SRC_DIR = os.path.join(os.path.dirname(BENCH_DIR), "src")
if os.path.isdir(SRC_DIR):
    sys.path.insert(0, SRC_DIR)

from rankgate.stats import (  # noqa: E402
    bootstrap_ci_columns,
    paired_summary,
    paired_t_test_columns,
    randomization_test_columns,
    randomized_tukey_hsd,
)

MEASURES = ["P@10", "R@100", "nDCG@10", "RR@10", "AP"]
RANX_METRICS = ["precision@10", "recall@100", "ndcg@10", "mrr@10", "map"]


def best_of(repeat: int, func: Callable[[], Any]) -> tuple[float, Any]:
    """Fastest wall time of ``repeat`` calls, and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - t0)
    return best, out


def synthetic_scores(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-query scores (queries x 5 measures) of a baseline and a slightly better candidate.

    Values sit on the lattices the real measures use (P@10 in tenths, RR@10 = 1/rank or 0),
    so exact ties between queries are as frequent as in real runs.
    """
    rng = np.random.default_rng(seed)
    ease = rng.beta(2.0, 3.0, size=n)

    def system(boost: float) -> np.ndarray:
        skill = np.clip(ease + boost + rng.normal(0.0, 0.15, size=n), 0.0, 1.0)
        p10 = rng.binomial(10, skill) / 10.0
        r100 = rng.binomial(8, np.sqrt(skill)) / 8.0
        ndcg = np.clip(skill + rng.normal(0.0, 0.1, size=n), 0.0, 1.0)
        first = rng.geometric(np.maximum(skill, 0.05))
        rr10 = np.where(first <= 10, 1.0 / first, 0.0)
        ap = np.clip(skill**1.3 + rng.normal(0.0, 0.08, size=n), 0.0, 1.0)
        return np.column_stack([p10, r100, ndcg, rr10, ap])

    return system(0.0), system(0.01)


def ranx_data(n: int, seed: int, depth: int = 100, judged: int = 8) -> tuple[Any, Any, Any]:
    """A synthetic ranx Qrels and two Runs over ``n`` queries (the second one a little better)."""
    from ranx import Qrels, Run

    rng = np.random.default_rng(seed)
    pool = 3 * depth
    qrels: dict[str, dict[str, int]] = {}
    runs: list[dict[str, dict[str, float]]] = [{}, {}]
    scores = np.arange(depth, 0, -1, dtype=np.float64)
    for q in range(n):
        qid = f"q{q}"
        docs = rng.permutation(pool)
        rel = docs[:judged]
        qrels[qid] = {f"d{d}": int(g) for d, g in zip(rel, rng.integers(0, 4, size=judged), strict=True)}
        for r, pull in enumerate((1.0, 1.03)):
            # judged docs get a head start that grows with the grade (more for the second run)
            key = rng.random(pool)
            key[:judged] *= pull * (1.0 + 0.5 * np.array([qrels[qid][f"d{d}"] for d in rel]))
            top = docs[np.argsort(-key, kind="stable")[:depth]]
            runs[r][qid] = {f"d{d}": float(s) for d, s in zip(top, scores, strict=True)}
    return Qrels.from_dict(qrels), Run.from_dict(runs[0], name="baseline"), Run.from_dict(runs[1], name="candidate")


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")
    ap.add_argument("--permutations", type=int, default=10_000, help="random sign flips / ranx n_permutations")
    ap.add_argument("--repeat", type=int, default=3, help="best of R")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-ranx", action="store_true", help="skip ranx (synthetic scores only)")
    ap.add_argument("--no-tukey", action="store_true", help="skip the randomized Tukey HSD row")
    args = ap.parse_args(argv)
    n, b, p, rep = args.queries, args.resamples, args.permutations, args.repeat

    qrels = runs = None
    source = "synthetic lattice scores (numpy)"
    if not args.no_ranx:
        try:
            import ranx
        except ImportError:
            print("ranx is not installed: its rows are skipped.", file=sys.stderr)
        else:
            # fill numba's cache (the first call compiles for ~20 s)
            tq, t1, t2 = ranx_data(30, 1)
            for test in ("student", "fisher"):
                ranx.compare(tq, [t1, t2], RANX_METRICS, stat_test=test, n_permutations=100, max_p=0.05)
            qrels, base_run, cand_run = ranx_data(n, args.seed)
            runs = [base_run, cand_run]
            values = [ranx.evaluate(qrels, r, RANX_METRICS, return_mean=False) for r in runs]
            base = np.column_stack([values[0][m] for m in RANX_METRICS]).astype(np.float64)
            cand = np.column_stack([values[1][m] for m in RANX_METRICS]).astype(np.float64)
            from importlib.metadata import version

            source = f"ranx.evaluate of a synthetic qrels + 2 runs (depth 100), ranx {version('ranx')}"
    if runs is None:
        base, cand = synthetic_scores(n, args.seed)
    d = cand - base
    m = d.shape[1]

    rows: list[list[str]] = []

    def row(tool: str, what: str, seconds: float, note: str = "") -> None:
        rows.append([tool, what, f"{seconds:.3f}", note])

    t_t, ttest = best_of(rep, lambda: paired_t_test_columns(d))
    row("rankgate", f"paired t-test, {m} measures", t_t)
    t_b, ci = best_of(rep, lambda: bootstrap_ci_columns(d, n_resamples=b, seed=args.seed))
    row("rankgate", f"bootstrap CI, {b:,} resamples, {m} measures", t_b)
    t_r, rand = best_of(rep, lambda: randomization_test_columns(d, n_resamples=p, seed=args.seed))
    row("rankgate", f"randomization test, {p:,} sign flips, {m} measures", t_r)

    def target() -> None:
        bootstrap_ci_columns(d, n_resamples=b, seed=args.seed)
        randomization_test_columns(d, n_resamples=p, seed=args.seed)

    t_target, _ = best_of(rep, target)
    verdict = "meets the 1 s target" if t_target <= 1.0 else "MISSES the 1 s target"
    row("rankgate", f"**bootstrap {b:,} + randomization {p:,}, {m} measures**", t_target, verdict)
    t_s, summary = best_of(
        rep,
        lambda: paired_summary(base, cand, test="randomization", n_resamples=b, n_permutations=p, seed=args.seed),
    )
    row("rankgate", "paired_summary (means, CI, t, randomization, d_z, W/T/L, MDE)", t_s)
    if not args.no_tukey:
        three = np.column_stack([base[:, 2], cand[:, 2], (base[:, 2] + cand[:, 2]) / 2])
        t_k, _ = best_of(rep, lambda: randomized_tukey_hsd(three, n_resamples=p, seed=args.seed))
        row("rankgate", f"randomized Tukey HSD, 3 systems, 1 measure, {p:,} shuffles", t_k)

    ranx_p: dict[str, dict[str, float]] = {}
    if runs is not None:
        import ranx

        t_e, _ = best_of(rep, lambda: [ranx.evaluate(qrels, r, RANX_METRICS, return_mean=False) for r in runs])
        row("ranx", f"evaluate {len(runs)} runs, {m} metrics (part of compare)", t_e)
        for test, perms in (("student", None), ("fisher", p)):
            kwargs = {"n_permutations": perms} if perms else {}
            t_c, report = best_of(
                rep,
                lambda test=test, kwargs=kwargs: ranx.compare(
                    qrels, runs, RANX_METRICS, stat_test=test, max_p=0.05, **kwargs
                ),
            )
            label = f"compare, stat_test='{test}'" + (f", n_permutations={perms:,}" if perms else "")
            row("ranx", label, t_c, "includes its metric computation")
            row("ranx", f"  {test} test only (compare - evaluate)", max(t_c - t_e, 0.0), "estimate")
            ranx_p[test] = dict(report.to_dict()["candidate"]["comparisons"]["baseline"])

    cores = os.cpu_count()
    print(f"## rankgate stats speed: 2 systems x {m} measures x {n:,} queries (best of {rep})\n")
    print(f"Machine: {platform.machine()}, {cores} CPU cores, Python {platform.python_version()}, "
          f"numpy {np.__version__}. Scores: {source}.\n")  # fmt: skip
    print(markdown_table(["tool", "what", "seconds", "note"], rows))

    print("\n### The numbers (candidate - baseline)\n")
    header = ["measure", "delta", "95% CI", "t-test p", "randomization p"]
    if ranx_p:
        header += ["ranx student p", "ranx fisher p"]
    table = []
    for j, name in enumerate(MEASURES):
        cells = [
            name,
            f"{summary.delta[j]:+.4f}",
            f"[{ci[0][j]:+.4f}, {ci[1][j]:+.4f}]",
            f"{ttest.p_value[j]:.4g}",
            f"{rand.p_value[j]:.4g}",
        ]
        if ranx_p:
            cells += [f"{ranx_p['student'][RANX_METRICS[j]]:.4g}", f"{ranx_p['fisher'][RANX_METRICS[j]]:.4g}"]
        table.append(cells)
    print(markdown_table(header, table))
    if ranx_p:
        diff = max(abs(ttest.p_value[j] - ranx_p["student"][metric]) for j, metric in enumerate(RANX_METRICS))
        print(f"\nLargest |t-test p - ranx student p|: {diff:.2e} (same per-query values).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
