#!/usr/bin/env python3
"""The shape matrix: TREC run/qrels files that differ in one way each from the base case.

Every shape starts from `make_synthetic.generate` (the same queries, judgments and rankings
for a given size and seed) and changes how the files look: id lengths and id space, how many
documents are judged, queries with nothing relevant, score precision and ties, tabs, the
order of the queries in the run file, gzip, and a BEIR-shaped pair (numeric query ids,
8-character alphanumeric doc ids, dense judgments, cosine-like scores written in full
precision). One shape is not synthetic: ``bm25`` is a real retriever's run (bm25s) over a
collection of real English text (bench/textcollection.py), with that collection's judgments.
Files are written once into ``WORKDIR/shapes/NAME_LINES_sSEED/`` and reused (``meta.json`` is
written last and marks a complete set).

    python bench/shapes.py --lines 1000000            # write every shape at 1M run lines
    python bench/shapes.py --lines 200000 --shape numeric --shape tabs
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_synthetic as ms
import textcollection


@dataclass(frozen=True)
class Shape:
    name: str
    note: str
    depth: int = 1000
    qid: str = "q6"  # q6: 'q' + six digits (byte order = numeric order); num: 1..1,102,400, 1 to 7 digits
    doc: str = "D"  # D: 'D' + up to 7 digits; long: 'msmarco_passage_NN_NNNNNNNNN'; alnum8: 8 base-36 chars
    doc_space: int = ms.DOC_ID_SPACE
    score: str = "4dp"  # 4dp: 4 decimals; full: shortest float64 repr (~17 digits); int: whole numbers
    tie_rate: float = 0.001
    judged: int = 8
    norel: float = 0.0  # fraction of queries whose judgments are all grade 0
    sep: str = " "
    order: str = "bytes"  # bytes (of the query ids), numeric, topics (a fixed random query order), shuffled lines
    gzip: bool = False
    ties: bool = False  # many ties: tools with other tie rules may differ (documented)
    # synthetic: make_synthetic's data, shaped by the fields above; bm25: bm25s's rankings of
    # bench/textcollection.py's collection, whose ids, scores and judgments the fields only name
    source: str = "synthetic"


# The bm25 shape: SciFact's size (bench/encode_speed.py's collection), so depth 1,000 is a fifth of
# the corpus; BM25 as rankgate's bm25 retriever runs it by default (Lucene's k1 and b, bm25s's
# English stopwords), the document text being its title and text joined by a space (as BEIR's).
BM25_DOCS = 5183
BM25_PARAMS = {"k1": 1.2, "b": 0.75, "method": "lucene"}
BM25_TAG = "bm25"


SHAPES = {
    s.name: s
    for s in [
        Shape("base", "q+6 digits, D+7 digits, 4 decimals, 0.1% ties, ~8 judged/query, byte-sorted"),
        Shape("numeric", "query ids 1..1.1M (1-7 digits) in numeric order", qid="num", order="numeric"),
        Shape("numeric-bytes", "query ids 1..1.1M (1-7 digits) in byte order", qid="num"),
        Shape("topics", "queries in a fixed random (topics-file) order", order="topics"),
        Shape("shuffled", "run lines in random order", order="shuffled"),
        Shape("long-ids", "doc ids of 28 chars (msmarco_passage_NN_NNNNNNNNN)", doc="long"),
        Shape("small-space", "doc ids from a 100,000-id space (1-5 digits)", doc="num", doc_space=100_000),
        Shape("dense-judged", "~100 judgments per query", judged=100),
        Shape("no-relevant", "20% of the queries have no relevant judgment", norel=0.2),
        Shape("full-precision", "scores in full float64 precision (~17 digits)", score="full"),
        Shape("int-ties", "integer scores: nearly every row in a tie group", score="int", tie_rate=0.1, ties=True),
        Shape("tabs", "tab-separated fields", sep="\t"),
        Shape("gzip", "run and qrels gzip-compressed", gzip=True),
        Shape(
            "beir",
            "BEIR-shaped: numeric qids, 8-char alphanumeric doc ids, ~50 judged/query, cosine scores, depth 100",
            depth=100,
            qid="num",
            doc="alnum8",
            score="full",
            judged=50,
            norel=0.02,
        ),
        Shape(
            "bm25",
            f"real English text ({BM25_DOCS:,} docs, bench/textcollection.py) ranked by bm25s (BM25 k1 1.2, b 0.75, "
            "English stopwords) to depth 1,000, score-0 docs padding a query that matches fewer; ~20 judged/query "
            "(the docs holding the query's sentence, its source doc grade 2); ids q0.. and d0.., collection order; "
            "float32 scores written as rankgate's run writer does (Python repr of the float); ~14% of rows tied",
            qid="q",
            doc="d",
            doc_space=BM25_DOCS,
            score="repr32",
            tie_rate=0.0,
            judged=0,
            order="collection",
            ties=True,
            source="bm25",
        ),
    ]
}


def _strs(a: np.ndarray) -> pa.Array:
    return pc.cast(pa.array(a), pa.string())


def _join(*parts: pa.Array | str) -> pa.Array:
    return pc.binary_join_element_wise(*parts, "")


def _base36(a: np.ndarray, width: int) -> pa.Array:
    digits = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    out = np.empty((len(a), width), dtype=np.uint8)
    x = a.astype(np.int64) * 2_654_435_761 % 36**width  # scatter the numbers over the id space
    for i in range(width - 1, -1, -1):
        out[:, i] = digits[x % 36]
        x //= 36
    return pc.cast(pa.array(out.view(f"S{width}").ravel()), pa.string())


def doc_strings(shape: Shape, nums: np.ndarray) -> pa.Array:
    if shape.doc == "D":
        return _join("D", _strs(nums))
    if shape.doc == "num":
        return _strs(nums)
    if shape.doc == "long":
        part = _strs(nums % 70 + 10)
        return _join("msmarco_passage_", part, "_", pc.utf8_lpad(_strs(nums * 97 % 10**9), 9, "0"))
    return _base36(nums, 8)


def query_numbers(shape: Shape, qnum: np.ndarray, seed: int) -> np.ndarray:
    """The number in each query id: q6 keeps the generator's; num spreads 1..1,102,400 log-uniformly."""
    if shape.qid == "q6":
        return qnum
    rng = np.random.default_rng([seed, 0xA11D])
    n = len(qnum)
    picked: set[int] = set()
    while len(picked) < n:
        picked.update(np.exp(rng.uniform(0, np.log(1_102_400), size=2 * n)).astype(np.int64).tolist())
    return np.sort(rng.permutation(np.fromiter(picked, dtype=np.int64))[:n])


def score_strings(shape: Shape, units: np.ndarray) -> pa.Array:
    if shape.score == "4dp":
        return ms._score_str(units)
    if shape.score == "int":
        return _strs(units // 100)
    return pc.cast(pa.array(units / 312_345.0), pa.string())  # distinct units stay distinct floats


def query_order(shape: Shape, qids: pa.Array, nums: np.ndarray, seed: int) -> np.ndarray:
    if shape.order == "numeric":
        return np.argsort(nums, kind="stable")
    if shape.order == "topics":
        return np.random.default_rng([seed, 0x7091C]).permutation(len(nums))
    return pc.sort_indices(qids).to_numpy().astype(np.int64)  # byte order of the ids


def _writer(path: str, schema: pa.Schema, shape: Shape) -> pacsv.CSVWriter:
    opts = pacsv.WriteOptions(include_header=False, delimiter=shape.sep, quoting_style="none")
    sink = pa.CompressedOutputStream(path, "gzip") if shape.gzip else path
    return pacsv.CSVWriter(sink, schema, write_options=opts)


def write_shape(out_dir: str, shape: Shape, lines: int, seed: int = 0) -> dict:
    """Write ``run.txt[.gz]`` and ``qrels.txt[.gz]`` of ``shape`` with about ``lines`` run lines."""
    if shape.source == "bm25":
        return write_bm25(out_dir, shape, lines, seed)
    t0 = time.perf_counter()
    n = max(1, round(lines / shape.depth))
    saved = ms.DOC_ID_SPACE
    ms.DOC_ID_SPACE = shape.doc_space
    try:
        data = ms.generate(n, shape.depth, shape.judged, seed, shape.tie_rate)
    finally:
        ms.DOC_ID_SPACE = saved
    nums = query_numbers(shape, data["qnum"], seed)
    qids = _join("q", _strs(nums)) if shape.qid == "q6" else _strs(nums)
    qorder = query_order(shape, qids, nums, seed)
    grade = data["qrel_grade"].copy()
    if shape.norel > 0:
        dead = np.random.default_rng([seed, 0xDEAD]).random(n) < shape.norel
        grade[dead[data["qrel_q"]]] = 0
    suffix = ".gz" if shape.gzip else ""
    os.makedirs(out_dir, exist_ok=True)
    run_path = os.path.join(out_dir, "run.txt" + suffix)
    qrels_path = os.path.join(out_dir, "qrels.txt" + suffix)
    _write_qrels(qrels_path, shape, data, qids, qorder, grade)
    _write_run(run_path, shape, data, qids, qorder, seed)
    rel = (grade > 0) & (data["qrel_rank"] >= 0)
    return {
        "shape": asdict(shape),
        "lines": lines,
        "seed": seed,
        "run": run_path,
        "qrels": qrels_path,
        "n_queries": n,
        "run_lines": n * shape.depth,
        "qrels_lines": len(grade),
        "run_bytes": os.path.getsize(run_path),
        "queries_without_relevant": int(n - len(np.unique(data["qrel_q"][grade > 0]))),
        "relevant_retrieved": int(rel.sum()),
        "seconds": round(time.perf_counter() - t0, 2),
    }


def _write_qrels(path: str, shape: Shape, data: dict, qids: pa.Array, qorder: np.ndarray, grade: np.ndarray) -> None:
    rank_of_query = np.empty(len(qorder), dtype=np.int64)
    rank_of_query[qorder] = np.arange(len(qorder))
    rows = np.argsort(rank_of_query[data["qrel_q"]], kind="stable")
    table = pa.table(
        {
            "qid": qids.take(pa.array(data["qrel_q"][rows])),
            "iter": pa.repeat(pa.scalar("0"), len(rows)),
            "docid": doc_strings(shape, data["qrel_doc"][rows]),
            "grade": pa.array(grade[rows].astype(np.int32)),
        }
    )
    with _writer(path, table.schema, shape) as w:
        w.write_table(table)


def _write_run(path: str, shape: Shape, data: dict, qids: pa.Array, qorder: np.ndarray, seed: int) -> None:
    n, depth = data["run_doc"].shape
    total = n * depth
    if shape.order == "shuffled":
        order = np.random.default_rng([seed, 0x5EED]).permutation(total)
    else:
        order = (qorder[:, None] * depth + np.arange(depth)[None, :]).ravel()
    doc_flat = data["run_doc"].reshape(-1)
    score_flat = data["run_score"].reshape(-1)
    names = ["qid", "q0", "docid", "rank", "score", "tag"]
    schema = pa.schema([(c, pa.int32() if c == "rank" else pa.string()) for c in names])
    with _writer(path, schema, shape) as w:
        for a in range(0, total, ms.CHUNK_ROWS):
            idx = order[a : a + ms.CHUNK_ROWS]
            m = len(idx)
            cols = [
                qids.take(pa.array(idx // depth)),
                pa.repeat(pa.scalar("Q0"), m),
                doc_strings(shape, doc_flat[idx]),
                pa.array((idx % depth + 1).astype(np.int32)),
                score_strings(shape, score_flat[idx]),
                pa.repeat(pa.scalar(ms.TAG), m),
            ]
            w.write_batch(pa.record_batch(cols, schema=schema))


def write_bm25(out_dir: str, shape: Shape, lines: int, seed: int = 0) -> dict:
    """``lines // depth`` queries of bench/textcollection.py's collection ranked by bm25s to ``depth``.

    Writes ``corpus.jsonl`` and ``queries.jsonl`` (BEIR), ``qrels.txt`` (TREC: the query's source
    document grade 2, every other document that holds the query's sentence grade 1) and
    ``run.txt`` (TREC, queries in collection order, equal scores in corpus order as rankgate's bm25
    retriever returns them; bm25s pads a query that matches fewer documents with score-0 ones).
    """
    import bm25s

    t0 = time.perf_counter()
    n = max(1, lines // shape.depth)
    col = textcollection.build(BM25_DOCS, n, seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    textcollection.write_corpus(out / "corpus.jsonl", col)
    textcollection.write_queries(out / "queries.jsonl", col)
    texts = [f"{col.title(i)} {col.text(i)}" for i in range(len(col.bodies))]
    model = bm25s.BM25(**BM25_PARAMS)
    model.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    asked = bm25s.tokenize([s for _, s in col.queries], stopwords="en", return_ids=False, show_progress=False)
    # one thread: 1.7 s for 6,980 queries; bm25s's thread pool took 2.7 s on a busy 2-core machine
    docs, scores = model.retrieve(asked, k=shape.depth, show_progress=False)
    order = np.lexsort((docs, -scores), axis=-1)  # by score, descending; equal scores in corpus order
    docs = np.take_along_axis(docs, order, axis=1).astype(np.int64)
    scores = np.take_along_axis(scores, order, axis=1)

    holders = col.holders()
    qrels = [(q, d, 2) for q, (d, _) in enumerate(col.queries)]
    qrels += [(q, h, 1) for q, (d, s) in enumerate(col.queries) for h in sorted(holders[s] - {d})]
    qrels.sort(key=lambda r: (r[0], -r[2], r[1]))
    qrel_q, qrel_doc, qrel_grade = (np.array(c, dtype=np.int64) for c in zip(*qrels, strict=True))
    qrels_path = str(out / "qrels.txt")
    table = pa.table(
        {
            "qid": _join("q", _strs(qrel_q)),
            "iter": pa.repeat(pa.scalar("0"), len(qrels)),
            "docid": _join("d", _strs(qrel_doc)),
            "grade": pa.array(qrel_grade.astype(np.int32)),
        }
    )
    with _writer(qrels_path, table.schema, shape) as w:
        w.write_table(table)

    run_path = str(out / "run.txt")
    names = ["qid", "q0", "docid", "rank", "score", "tag"]
    schema = pa.schema([(c, pa.int32() if c == "rank" else pa.string()) for c in names])
    per = max(1, ms.CHUNK_ROWS // shape.depth)
    with _writer(run_path, schema, shape) as w:
        for a in range(0, n, per):
            q = np.arange(a, min(a + per, n))
            m = len(q) * shape.depth
            cols = [
                _join("q", _strs(np.repeat(q, shape.depth))),
                pa.repeat(pa.scalar("Q0"), m),
                _join("d", _strs(docs[q].ravel())),
                pa.array(np.tile(np.arange(1, shape.depth + 1, dtype=np.int32), len(q))),
                pa.array([repr(x) for x in scores[q].ravel().astype(np.float64).tolist()], pa.string()),
                pa.repeat(pa.scalar(BM25_TAG), m),
            ]
            w.write_batch(pa.record_batch(cols, schema=schema))

    retrieved = np.zeros((n, BM25_DOCS), dtype=bool)
    retrieved[np.arange(n)[:, None], docs] = True
    positive = scores > 0
    return {
        "shape": asdict(shape),
        "lines": lines,
        "seed": seed,
        "run": run_path,
        "qrels": qrels_path,
        "corpus": str(out / "corpus.jsonl"),
        "queries": str(out / "queries.jsonl"),
        "docs": BM25_DOCS,
        "bm25": {**BM25_PARAMS, "stopwords": "en", "library": f"bm25s {bm25s.__version__}"},
        "n_queries": n,
        "distinct_query_texts": len({s for _, s in col.queries}),
        "run_lines": n * shape.depth,
        "qrels_lines": len(qrels),
        "run_bytes": os.path.getsize(run_path),
        "queries_without_relevant": 0,
        "relevant_retrieved": int(retrieved[qrel_q, qrel_doc].sum()),
        "score_zero_rows": int((~positive).sum()),
        "tied_rows": int((scores[:, 1:] == scores[:, :-1]).sum()),
        "seconds": round(time.perf_counter() - t0, 2),
    }


def ensure_shape(workdir: str, name: str, lines: int, seed: int = 0, regen: bool = False) -> dict:
    """The files of shape ``name`` at ``lines`` run lines, written once into ``workdir/shapes``."""
    shape = SHAPES[name]
    out = os.path.join(workdir, "shapes", f"{name}_{lines}_s{seed}")
    meta_path = os.path.join(out, "meta.json")
    if not regen and os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        # the note is no part of the files; files written before a field existed have its default
        have = {**asdict(Shape("", "")), **meta.get("shape", {})}
        if all(have[k] == v for k, v in asdict(shape).items() if k != "note"):
            return meta
    if os.path.isdir(out):
        shutil.rmtree(out)
    print(f"# writing shape {name} ({lines:,} lines) -> {out}", file=sys.stderr, flush=True)
    meta = write_shape(out, shape, lines, seed)
    with open(meta_path + ".tmp", "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(meta_path + ".tmp", meta_path)
    return meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=6_980_000)
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES), help="default: all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", default="/tmp/rankgate-bench")
    ap.add_argument("--regen", action="store_true")
    a = ap.parse_args(argv)
    for name in a.shape or list(SHAPES):
        meta = ensure_shape(a.workdir, name, a.lines, a.seed, a.regen)
        print(json.dumps({k: meta[k] for k in ("run", "run_lines", "run_bytes", "queries_without_relevant")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
