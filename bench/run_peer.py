#!/usr/bin/env python3
"""One end-to-end evaluation with a peer tool; run once per child process.

    python bench/run_peer.py TOOL QRELS RUN

TOOL is one of pytrec_eval, ranx, ir_measures.  The script imports only the
standard library plus that one tool, parses both files the way the tool's
users usually do, computes P@10, R@100, nDCG@10, RR@10 and AP, averages over
queries, and prints one JSON line:

    {"tool": ..., "values": {"P@10": ..., ...}, "n_queries": ..., "phases": {...}, "notes": [...]}

``phases`` are seconds measured inside the process (import / parse / eval);
eval_speed.py measures the whole process (interpreter start included) from
outside.  Kept separate from eval_speed.py so that a child imports nothing
it does not need.
"""

import gzip
import json
import sys
import time


def _open(path):
    """Text lines of a plain or gzip-compressed file (the peers' own readers take plain text only)."""
    with open(path, "rb") as f:
        packed = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt") if packed else open(path)


def _trec_dicts(qrels_path, run_path):
    qrels = {}
    with _open(qrels_path) as f:
        for line in f:
            qid, _, docid, rel = line.split()
            qrels.setdefault(qid, {})[docid] = int(rel)
    run = {}
    with _open(run_path) as f:
        for line in f:
            qid, _, docid, _rank, score, _ = line.split()
            run.setdefault(qid, {})[docid] = float(score)
    return qrels, run


MEASURES = ["P@10", "R@100", "nDCG@10", "RR@10", "AP"]


def run_pytrec_eval(qrels_path, run_path):
    t0 = time.perf_counter()
    import pytrec_eval

    t1 = time.perf_counter()

    qrels, run = _trec_dicts(qrels_path, run_path)
    t2 = time.perf_counter()

    # trec_eval names.  trec_eval has no rank-cutoff reciprocal rank:
    # 'recip_rank' is RR over the WHOLE ranking (uncut), so it is reported as
    # "RR(uncut)" and not compared with RR@10 of the other tools.
    names = {"P_10": "P@10", "recall_100": "R@100", "ndcg_cut_10": "nDCG@10", "recip_rank": "RR(uncut)", "map": "AP"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(names))
    per_query = evaluator.evaluate(run)
    n = len(per_query)
    values = {names[m]: (sum(r[m] for r in per_query.values()) / n if n else float("nan")) for m in names}
    t3 = time.perf_counter()
    return (
        values,
        n,
        {"import": t1 - t0, "parse": t2 - t1, "eval": t3 - t2},
        ["RR: trec_eval recip_rank is uncut (no @10); not comparable with RR@10"],
    )


def run_ranx(qrels_path, run_path):
    t0 = time.perf_counter()
    from ranx import Qrels, Run, evaluate

    t1 = time.perf_counter()
    if qrels_path.endswith(".gz") or run_path.endswith(".gz"):  # ranx reads plain text only
        q, r = _trec_dicts(qrels_path, run_path)
        qrels, run = Qrels.from_dict(q), Run.from_dict(r)
    else:
        qrels = Qrels.from_file(qrels_path, kind="trec")
        run = Run.from_file(run_path, kind="trec")
    t2 = time.perf_counter()
    names = {"precision@10": "P@10", "recall@100": "R@100", "ndcg@10": "nDCG@10", "mrr@10": "RR@10", "map": "AP"}
    res = evaluate(qrels, run, list(names))
    values = {names[m]: float(v) for m, v in res.items()}
    t3 = time.perf_counter()
    return values, len(run.run), {"import": t1 - t0, "parse": t2 - t1, "eval": t3 - t2}, []


def run_ir_measures(qrels_path, run_path):
    t0 = time.perf_counter()
    import ir_measures
    from ir_measures import AP, RR, P, R, nDCG

    t1 = time.perf_counter()
    # read_trec_* return lazy iterators: parsing happens inside calc_aggregate
    qrels = ir_measures.read_trec_qrels(qrels_path)
    run = ir_measures.read_trec_run(run_path)
    measures = {P @ 10: "P@10", R @ 100: "R@100", nDCG @ 10: "nDCG@10", RR @ 10: "RR@10", AP: "AP"}
    res = ir_measures.calc_aggregate(list(measures), qrels, run)
    values = {measures[m]: float(v) for m, v in res.items()}
    t2 = time.perf_counter()
    return (
        values,
        None,
        {"import": t1 - t0, "parse+eval": t2 - t1},
        ["ir_measures: P/R/nDCG/AP via pytrec_eval provider, RR@10 via msmarco provider"],
    )


TOOLS = {"pytrec_eval": run_pytrec_eval, "ranx": run_ranx, "ir_measures": run_ir_measures}


def main(argv):
    if len(argv) != 3 or argv[0] not in TOOLS:
        print(f"usage: run_peer.py {{{','.join(TOOLS)}}} QRELS RUN", file=sys.stderr)
        return 2
    tool, qrels_path, run_path = argv
    values, n, phases, notes = TOOLS[tool](qrels_path, run_path)
    print(
        json.dumps(
            {
                "tool": tool,
                "values": values,
                "n_queries": n,
                "phases": {k: round(v, 3) for k, v in phases.items()},
                "notes": notes,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
