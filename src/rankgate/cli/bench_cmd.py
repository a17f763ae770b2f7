"""``rankgate bench``: benchmark retrievers and vector indexes on a labeled dataset."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click

from rankgate.cli.options import as_usage_error, emit, parse_labels, policy_options, split_measures, warn

FORMATS = ("table", "json", "jsonl", "csv", "markdown")


@click.command("bench")
@click.argument("dataset", required=False)
@click.option(
    "-r",
    "--retriever",
    "retrievers",
    multiple=True,
    metavar="SPEC",
    help="bm25, dense (the bundled all-MiniLM-L6-v2), dense:MODEL_DIR, hybrid (RRF of the first bm25 and dense), "
    "hybrid:weighted. Repeatable. Default: bm25 and dense.",
)
@click.option(
    "-i",
    "--index",
    "indexes",
    multiple=True,
    metavar="SPEC",
    help="Vector index of dense retrievers: exact, flat, hnsw, ivf-flat, ivf-pq, with parameters as "
    "hnsw:M=32,ef_search=64; NAME=A|B makes a grid. Repeatable. Default: exact.",
)
@click.option(
    "-c",
    "--config",
    type=click.Path(dir_okay=False),
    help="Matrix file (YAML): retrievers x indexes x parameters x k; command-line options override it.",
)
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    metavar="MEASURE",
    help="Measure to compute; repeat or separate with commas. Default: nDCG@10, R@10, R@100, RR@10, AP.",
)
@click.option(
    "-k",
    "ks",
    multiple=True,
    type=click.IntRange(min=1),
    metavar="K",
    help="Documents retrieved per query (repeatable).",
)
@click.option("--split", help="BEIR qrels split: qrels/SPLIT.tsv.  [default: test]")
@click.option("--chunk-size", type=click.IntRange(min=1), help="Cut documents into passages of this many words.")
@click.option(
    "--chunk-overlap", type=click.IntRange(min=0), default=0, show_default=True, help="Words shared by passages."
)
@click.option(
    "--aggregate",
    type=click.Choice(["max", "first"]),
    default="max",
    show_default=True,
    help="A document's score from its passages: the best one (MaxP) or the first (FirstP).",
)
@click.option("--rerank", metavar="MODEL_DIR", help="Also re-rank each retriever with this local cross-encoder.")
@click.option(
    "--rerank-depth", type=click.IntRange(min=1), default=100, show_default=True, help="Candidates re-ranked."
)
@click.option("--device", help="Torch device of the models (cpu, cuda, mps).  [default: cpu]")
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    help="Where to encode the corpus and search exact indexes: this process, or Ray Data on a Ray cluster "
    "(GPU workers when it has GPUs; same results).  [default: local, or the matrix file's engine]",
)
@click.option(
    "--ray-address",
    metavar="ADDR",
    help="Ray cluster for --engine ray: auto, HOST:PORT or ray://HOST:10001.  "
    "[default: the running cluster, or a new local one]",
)
@click.option(
    "--latency-queries",
    type=click.IntRange(min=0),
    help="Queries timed one at a time per configuration (0: no latency probe).  [default: 100]",
)
@policy_options(dests={"queries": "query_set"}, only=("queries", "rel"))
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False),
    help="Folder for the TREC run files and bench.json.  [default: bench-runs/DATASET]",
)
@click.option("--no-runs", is_flag=True, help="Write no run files.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False),
    help="Embedding cache folder.  [default: $RANKGATE_CACHE_DIR or ~/.cache/rankgate/embeddings]",
)
@click.option("--no-cache", is_flag=True, help="Encode everything, keep nothing.")
@click.option(
    "--store",
    envvar="RANKGATE_STORE",
    metavar="URL",
    help="Record every configuration in this results store: a SQLite path or sqlite:///PATH, or postgresql://... "
    "[env: RANKGATE_STORE]",
)
@click.option("--no-record", is_flag=True, help="Do not record in the store, even when RANKGATE_STORE is set.")
@click.option("--label", "labels", multiple=True, metavar="KEY=VALUE", help="Label stored results (with --store).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the output to this file (atomically).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars and no per-configuration lines on stderr.")
def bench_command(**options: Any) -> None:
    """Benchmark retrievers and vector indexes on DATASET: quality and cost in one table.

    DATASET is a folder in BEIR layout (corpus.jsonl, queries.jsonl, qrels/test.tsv), a folder
    in simple JSON layout (corpus.json, queries.json, ground_truth.json), or `demo` (the
    built-in collection). For every configuration: a TREC run file, the measures (exactly
    `rankgate eval`'s), latency p50/p95/p99 one query at a time, batched throughput, index build
    time and size, encoding throughput, and for approximate indexes the neighbor recall against
    exact search. Models load from local folders only; embeddings are cached on disk.

    \b
    Examples:
      rankgate bench demo
      rankgate bench demo -r bm25 -r dense -r hybrid -i exact -i 'hnsw:M=16|32,ef_search=64' -k 10 -k 100
      rankgate bench data/scifact -r dense:./models/e5-small -i 'ivf-pq:nlist=256,m=48,nprobe=8|32'
      rankgate bench data/scifact --config matrix.yaml --format json -o bench.json
      rankgate bench demo --rerank ./models/ms-marco-MiniLM-L-6-v2 --rerank-depth 50
      rankgate bench demo --chunk-size 64 --chunk-overlap 16 --aggregate max
      rankgate bench demo --store results.db --label branch=main
      rankgate bench data/scifact -r bm25 -r dense --engine ray --ray-address auto --format json -o bench.json

    The matrix file format, the columns and neighbor recall are described in docs/bench.md.
    """
    from rankgate.render.bench import render

    request = BenchRequest(**options)
    report = request.run()
    emit(render(report, request.fmt), request.output)
    warn(report.warnings)


@dataclass(frozen=True)
class BenchRequest:
    """The options of ``rankgate bench`` as one value: the plan they make, and where results go."""

    dataset: str | None
    retrievers: tuple[str, ...]
    indexes: tuple[str, ...]
    config: str | None
    measures: tuple[str, ...]
    ks: tuple[int, ...]
    split: str | None
    chunk_size: int | None
    chunk_overlap: int
    aggregate: str
    rerank: str | None
    rerank_depth: int
    device: str | None
    engine: str | None
    ray_address: str | None
    latency_queries: int | None
    query_set: str
    rel: int
    out_dir: str | None
    no_runs: bool
    cache_dir: str | None
    no_cache: bool
    store: str | None
    no_record: bool
    labels: tuple[str, ...]
    fmt: str
    output: str | None
    quiet: bool

    def plan(self) -> Any:
        """The benchmark plan: the matrix file (or the defaults) with the command line on top."""
        from rankgate.bench.matrix import with_engine, with_extras

        if self.chunk_overlap and not self.chunk_size:
            raise click.UsageError("--chunk-overlap needs --chunk-size")
        plan = _plan(self.config, self.retrievers, self.indexes, self.measures, self.ks, self.split,
                     self.chunk_size, self.chunk_overlap, self.aggregate)  # fmt: skip
        plan = with_extras(plan, self.rerank, self.rerank_depth, self.device, self.latency_queries)
        with as_usage_error():
            return with_engine(plan, self.engine, self.ray_address)

    def run(self) -> Any:
        """Plan, load the dataset, open the store, run the benchmark, record it and write its files."""
        from rankgate.bench.datasets import load_dataset

        labels: dict[str, Any] = {**({"matrix": self.config} if self.config else {}), **parse_labels(self.labels)}
        plan = self.plan()
        where = self.dataset or plan.dataset
        if where is None:
            raise click.UsageError("give a DATASET (a folder, or demo), or set dataset: in the matrix file")
        data = load_dataset(where, split=plan.split)
        results_store = None
        if self.store and not self.no_record:  # opened first: a bad location fails before the work, not after
            from rankgate.store.base import open_store

            results_store = open_store(self.store)
        runs_dir = None if self.no_runs else (self.out_dir or f"bench-runs/{_safe(data.name)}")
        try:
            report = self._benchmark(data, plan, runs_dir)
            if results_store is not None:
                self._record(report, results_store, data, labels)
        finally:
            if results_store is not None:
                results_store.close()
        if runs_dir is not None:
            from pathlib import Path

            from rankgate.io.source import atomic_writer

            with atomic_writer(Path(runs_dir) / "bench.json") as f:
                f.write(report.to_json() + "\n")
            if not self.quiet:
                click.echo(f"run files and bench.json in {runs_dir}", err=True)
        return report

    def _benchmark(self, data: Any, plan: Any, runs_dir: str | None) -> Any:
        from rankgate.bench.harness import run_benchmark
        from rankgate.bench.progress import Progress

        cache = None
        if not self.no_cache:
            from rankgate.bench.embedcache import EmbeddingCache

            cache = EmbeddingCache(self.cache_dir)
        return run_benchmark(
            data,
            plan,
            out_dir=runs_dir,
            cache=cache,
            evaluate_options={"queries": self.query_set, "rel": self.rel},
            progress=Progress.auto(quiet=self.quiet),
            log=None if self.quiet else (lambda line: click.echo(line, err=True)),
        )

    def _record(self, report: Any, store: Any, data: Any, labels: dict[str, Any]) -> None:
        from rankgate.bench.record import record_report

        ids = record_report(report, store, qrels=data.qrels, labels=labels)
        if ids:
            click.echo(f"recorded {len(ids)} configurations in {self.store} (ids {ids[0]}-{ids[-1]})", err=True)


def _plan(
    config: str | None,
    retrievers: tuple[str, ...],
    indexes: tuple[str, ...],
    measures: tuple[str, ...],
    ks: tuple[int, ...],
    split: str | None,
    chunk_size: int | None,
    chunk_overlap: int,
    aggregate: str,
) -> Any:
    from rankgate.bench.chunking import ChunkSpec
    from rankgate.bench.matrix import DEFAULT_RETRIEVERS, BenchPlan, load_plan, parse_index_spec, parse_retriever_specs
    from rankgate.measures.parse import parse_measures

    base = load_plan(config) if config else BenchPlan(retrievers=parse_retriever_specs(list(DEFAULT_RETRIEVERS)))
    index_specs = tuple(s for i, text in enumerate(indexes) for s in parse_index_spec(text, f"--index[{i}]"))
    return base.with_overrides(
        retrievers=parse_retriever_specs(list(retrievers)) if retrievers else None,
        indexes=index_specs,
        ks=tuple(dict.fromkeys(ks)),
        measures=tuple(str(m) for m in parse_measures(split_measures(measures))) if measures else None,
        split=split,
        chunking=ChunkSpec(chunk_size, chunk_overlap, aggregate) if chunk_size else None,
    )


def _safe(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "dataset"
