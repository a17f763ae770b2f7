#!/usr/bin/env python3
"""Deterministic synthetic TREC qrels/run generator for rankgate benchmarks.

Writes two files into ``out_dir``:

* ``qrels.txt`` -- TREC qrels, ``qid 0 docid grade``.  About ``judged_per_query``
  judgments per query (uniformly +-2 around it), grades 0-3 with roughly
  1/3 grade 0, 30% grade 1, 22% grade 2, 15% grade 3.  Every query has at least
  one judgment with grade >= 1 (so every evaluator averages over the same
  query set: some tools drop queries without relevant documents).
* ``run.txt`` -- TREC run, ``qid Q0 docid rank score tag``, exactly ``depth``
  results per query, distinct doc ids within a query, scores strictly
  non-increasing within a query (with a few exact ties, see ``tie_rate``),
  written sorted by query then rank (or in shuffled line order with
  ``shuffle=True``).  Ranks are 1-based.

Judged documents are placed in the run at random ranks drawn from a
log-uniform-like distribution that is skewed towards the top for higher
grades; some judged documents (more often the grade-0 ones) are missing from
the run.  Doc ids look like ``D1234567`` and are drawn from an 8.84M-id space
(the size of MS MARCO passage); query ids look like ``q100023``.

All randomness comes from ``numpy.random.default_rng(seed)``, so the same
arguments always give byte-identical files.  The shuffled and the sorted
variant of the same seed hold exactly the same lines.

Usage::

    python bench/make_synthetic.py /tmp/rankgate-bench/demo --queries 6980 --depth 1000
    python bench/make_synthetic.py OUT --queries 100000 --depth 100 --shuffle

or from Python::

    from make_synthetic import write_dataset
    write_dataset("/tmp/rankgate-bench/demo", 6980, 1000, seed=0)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

DOC_ID_SPACE = 8_841_823  # MS MARCO passage collection size
GRADE_P = np.array([1 / 3, 0.30, 0.22, 0.15])
GRADE_P = GRADE_P / GRADE_P.sum()
# probability that a judged doc of grade g is NOT retrieved at all
MISS_P = np.array([0.40, 0.25, 0.15, 0.08])
# rank0 = floor(depth ** (u ** SKEW[g])) - 1, u ~ U(0,1): bigger exponent => nearer the top
SKEW = np.array([1.0, 1.6, 2.2, 2.8])
SCORE_SCALE = 10_000  # scores are written with 4 decimals, exactly
CHUNK_ROWS = 1_000_000  # rows formatted/written per batch
TAG = "synthetic"


def _distinct_ids(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """(n, k) int64 array of doc numbers, distinct within each row."""
    ids = rng.integers(0, DOC_ID_SPACE, size=(n, k), dtype=np.int64)
    if k > 1:
        s = np.sort(ids, axis=1)
        bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        del s
        for row in bad:  # birthday collisions: a few hundred rows at most
            ids[row] = rng.choice(DOC_ID_SPACE, size=k, replace=False)
    return ids


def generate(n_queries: int, depth: int, judged_per_query: int = 8, seed: int = 0, tie_rate: float = 0.001):
    """Return the synthetic data as numpy arrays (no I/O).

    Returns a dict with
      qnum      (n,)            query numbers (qid = 'q%d' % qnum), sorted
      run_doc   (n, depth)      doc numbers in rank order
      run_score (n, depth)      integer scores in 1/SCORE_SCALE units, non-increasing
      qrel_q    (m,)            query index of each judgment
      qrel_doc  (m,)            doc number of each judgment
      qrel_grade(m,)            grade 0..3
      qrel_rank (m,)            0-based rank in the run, -1 when not retrieved
    """
    if n_queries < 1 or depth < 1 or judged_per_query < 1:
        raise ValueError("n_queries, depth and judged_per_query must be >= 1")
    if n_queries > 9_000_000:
        raise ValueError("at most 9,000,000 queries (qids are q1000000..q9999999)")
    rng = np.random.default_rng(seed)
    n = n_queries

    # Six-digit qids up to 900,000 queries (files of earlier versions stay byte-identical), seven above.
    lo = 100_000 if n <= 900_000 else 1_000_000
    qnum = np.sort(rng.choice(9 * lo, size=n, replace=False)).astype(np.int64) + lo

    if judged_per_query >= 3:
        nj = judged_per_query + rng.integers(-2, 3, size=n)
    else:
        nj = np.full(n, judged_per_query, dtype=np.int64)
    jmax = int(nj.max())

    # depth + jmax distinct doc numbers per query: the first jmax are the judged
    # docs, the rest fill the run slots that no judged doc occupies.
    ids = _distinct_ids(rng, n, jmax + depth)
    judged = ids[:, :jmax]
    filler = ids[:, jmax:]

    valid = np.arange(jmax)[None, :] < nj[:, None]
    grades = rng.choice(4, size=(n, jmax), p=GRADE_P).astype(np.int8)
    no_rel = ~((grades > 0) & valid).any(axis=1)
    grades[no_rel, 0] = 1  # at least one relevant doc per query

    retrieved = valid & (rng.random((n, jmax)) >= MISS_P[grades])
    u = rng.random((n, jmax))
    want = np.floor(depth ** (u ** SKEW[grades])).astype(np.int64) - 1
    np.clip(want, 0, depth - 1, out=want)

    # Resolve rank collisions inside a query: sort by (query, wanted rank) and
    # push later docs down so ranks become strictly increasing.
    qi, ji = np.nonzero(retrieved)
    r = want[qi, ji]
    order = np.lexsort((r, qi))
    qi, ji, r = qi[order], ji[order], r[order]
    starts = np.r_[0, np.flatnonzero(np.diff(qi)) + 1]
    counts = np.diff(np.r_[starts, len(qi)])
    j_in = np.arange(len(qi)) - np.repeat(starts, counts)
    big = 2 * (depth + jmax) + 2
    v = np.maximum.accumulate(r - j_in + qi * big)
    r = v - qi * big + j_in
    fits = r < depth
    retrieved[qi[~fits], ji[~fits]] = False  # pushed past the end: not retrieved
    qi, ji, r = qi[fits], ji[fits], r[fits]

    run_doc = np.full((n, depth), -1, dtype=np.int64)
    run_doc[qi, r] = judged[qi, ji]
    empty = run_doc < 0
    n_empty = empty.sum(axis=1)
    run_doc[empty] = filler[np.arange(depth)[None, :] < n_empty[:, None]]
    del empty, filler, ids

    rank_of = np.full((n, jmax), -1, dtype=np.int64)
    rank_of[qi, ji] = r

    # scores: start in [15, 30), decrease by geometric gaps (mean 0.0015),
    # a gap of exactly 0 (a tie with the previous doc) with probability tie_rate
    base = rng.integers(150_000, 300_000, size=n, dtype=np.int64)
    gaps = rng.geometric(1 / 15, size=(n, depth - 1)).astype(np.int64)
    if tie_rate > 0:
        gaps[rng.random((n, depth - 1)) < tie_rate] = 0
    run_score = np.empty((n, depth), dtype=np.int64)
    run_score[:, 0] = base
    np.cumsum(gaps, axis=1, out=run_score[:, 1:])
    run_score[:, 1:] = base[:, None] - run_score[:, 1:]
    del gaps

    qrel_q, qrel_j = np.nonzero(valid)  # row-major: grouped by query
    return {
        "qnum": qnum,
        "run_doc": run_doc,
        "run_score": run_score,
        "qrel_q": qrel_q,
        "qrel_doc": judged[qrel_q, qrel_j],
        "qrel_grade": grades[qrel_q, qrel_j],
        "qrel_rank": rank_of[qrel_q, qrel_j],
    }


def _str(a: np.ndarray) -> pa.Array:
    return pc.cast(pa.array(a), pa.string())


def _prefixed(prefix: str, a: np.ndarray) -> pa.Array:
    return pc.binary_join_element_wise(prefix, _str(a), "")


def _score_str(units: np.ndarray) -> pa.Array:
    ip, fp = np.divmod(units, SCORE_SCALE)
    return pc.binary_join_element_wise(_str(ip), pc.utf8_lpad(_str(fp), 4, "0"), ".")


_WRITE_OPTS = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")


def _write_run(path: str, data: dict, order: np.ndarray | None, tag: str) -> int:
    n, depth = data["run_doc"].shape
    total = n * depth
    qid_arr = _prefixed("q", data["qnum"])
    doc_flat = data["run_doc"].reshape(-1)
    score_flat = data["run_score"].reshape(-1)
    schema = pa.schema(
        [
            ("qid", pa.string()),
            ("q0", pa.string()),
            ("docid", pa.string()),
            ("rank", pa.int32()),
            ("score", pa.string()),
            ("tag", pa.string()),
        ]
    )
    with pacsv.CSVWriter(path, schema, write_options=_WRITE_OPTS) as w:
        for a in range(0, total, CHUNK_ROWS):
            b = min(total, a + CHUNK_ROWS)
            idx = np.arange(a, b, dtype=np.int64) if order is None else order[a:b]
            m = b - a
            batch = pa.record_batch(
                [
                    qid_arr.take(pa.array(idx // depth)),
                    pa.repeat(pa.scalar("Q0"), m),
                    _prefixed("D", doc_flat[idx]),
                    pa.array((idx % depth + 1).astype(np.int32)),
                    _score_str(score_flat[idx]),
                    pa.repeat(pa.scalar(tag), m),
                ],
                schema=schema,
            )
            w.write_batch(batch)
    return total


def _write_qrels(path: str, data: dict) -> int:
    qid_arr = _prefixed("q", data["qnum"])
    m = len(data["qrel_q"])
    table = pa.table(
        {
            "qid": qid_arr.take(pa.array(data["qrel_q"])),
            "iter": pa.repeat(pa.scalar("0"), m),
            "docid": _prefixed("D", data["qrel_doc"]),
            "grade": pa.array(data["qrel_grade"].astype(np.int32)),
        }
    )
    pacsv.write_csv(table, path, write_options=_WRITE_OPTS)
    return m


def write_dataset(
    out_dir: str,
    n_queries: int,
    depth: int,
    judged_per_query: int = 8,
    seed: int = 0,
    shuffle: bool = False,
    tie_rate: float = 0.001,
    tag: str = TAG,
) -> dict:
    """Write ``qrels.txt``, ``run.txt`` and ``meta.json`` into ``out_dir``.

    ``shuffle=True`` writes the run's lines in a random order (same lines as the
    sorted variant).  Returns the meta dict (paths, sizes, statistics).
    ``meta.json`` is written last, so its presence marks a complete dataset.
    """
    t0 = time.perf_counter()
    os.makedirs(out_dir, exist_ok=True)
    meta_path = os.path.join(out_dir, "meta.json")
    if os.path.exists(meta_path):
        os.remove(meta_path)
    data = generate(n_queries, depth, judged_per_query, seed, tie_rate)
    t_gen = time.perf_counter() - t0

    order = None
    if shuffle:
        order = np.random.default_rng([seed, 0x5EED]).permutation(n_queries * depth)

    qrels_path = os.path.join(out_dir, "qrels.txt")
    run_path = os.path.join(out_dir, "run.txt")
    n_qrels = _write_qrels(qrels_path, data)
    n_run = _write_run(run_path, data, order, tag)

    grade = data["qrel_grade"]
    rank = data["qrel_rank"]
    rel = grade > 0
    sc = data["run_score"]
    meta = {
        "params": {
            "n_queries": n_queries,
            "depth": depth,
            "judged_per_query": judged_per_query,
            "seed": seed,
            "shuffle": shuffle,
            "tie_rate": tie_rate,
            "tag": tag,
        },
        "qrels": qrels_path,
        "run": run_path,
        "qrels_lines": int(n_qrels),
        "run_lines": int(n_run),
        "qrels_bytes": os.path.getsize(qrels_path),
        "run_bytes": os.path.getsize(run_path),
        "grade_counts": {str(g): int((grade == g).sum()) for g in range(4)},
        "judged_not_retrieved": int((rank < 0).sum()),
        "relevant_not_retrieved": int(((rank < 0) & rel).sum()),
        "relevant_in_top10": int(((rank >= 0) & (rank < 10) & rel).sum()),
        "tied_adjacent_pairs": int((sc[:, 1:] == sc[:, :-1]).sum()),
        "seconds": {"generate": round(t_gen, 3), "total": round(time.perf_counter() - t0, 3)},
    }
    with open(meta_path + ".tmp", "w") as f:
        json.dump(meta, f, indent=2)
    os.replace(meta_path + ".tmp", meta_path)
    return meta


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out_dir", help="output folder (qrels.txt, run.txt, meta.json)")
    ap.add_argument("--queries", "-n", type=int, default=6980)
    ap.add_argument("--depth", "-d", type=int, default=1000)
    ap.add_argument("--judged", type=int, default=8, help="judgments per query (about)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shuffle", action="store_true", help="write the run in shuffled line order")
    ap.add_argument(
        "--tie-rate",
        type=float,
        default=0.001,
        help="probability that a result has exactly the score of the one above it",
    )
    ap.add_argument("--tag", default=TAG)
    a = ap.parse_args(argv)
    meta = write_dataset(a.out_dir, a.queries, a.depth, a.judged, a.seed, a.shuffle, a.tie_rate, a.tag)
    json.dump(meta, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
