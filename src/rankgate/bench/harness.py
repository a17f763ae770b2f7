"""Run a benchmark plan on a dataset: retrieve, evaluate, time, and gather a `BenchReport`.

For every retriever, the corpus is prepared once (BM25 tokenized and indexed, dense encoded
through the embedding cache). The index axis is the outer loop, so a dense model's index is
built once per index configuration and shared by the hybrids and re-rankers that use it. For
each configuration and each k:

1. all queries are searched in one batch (timed: ``throughput_qps``, search alone);
2. the run is evaluated with `rankgate.evaluate` (exactly ``rankgate eval``'s numbers);
3. approximate indexes are compared with exact search over the same vectors (neighbor recall);
4. the first ``latency.queries`` queries are searched one at a time, encoding included;
5. the TREC run is written to the output folder, if one was given.

With ``plan.engine`` ray, the cluster is joined first (a bad address fails before any work),
and dense retrievers encode their corpus and search exact indexes on it
(`rankgate.bench.ray_search`); everything else, and every result, is the local engine's.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rankgate.bench.chunking import Passages, aggregate_hits, chunk_corpus, passage_depth
from rankgate.bench.datasets import Dataset, load_dataset
from rankgate.bench.embedcache import EmbeddingCache
from rankgate.bench.factory import EncoderFactory, ScorerFactory, build_retrievers, default_encoder_factory
from rankgate.bench.indexes import IndexSpec
from rankgate.bench.matrix import BenchPlan
from rankgate.bench.progress import SILENT, Progress
from rankgate.bench.report import BenchReport, ConfigResult, config_id
from rankgate.bench.retrievers.base import Hits, Retriever
from rankgate.bench.timing import percentiles_ms, probe_latency
from rankgate.core.run import Run
from rankgate.errors import ConfigError, RankgateError

Log = Callable[[str], None]


def run_benchmark(
    dataset: Dataset | str | os.PathLike[str],
    plan: BenchPlan,
    *,
    out_dir: str | os.PathLike[str] | None = None,
    cache: EmbeddingCache | None = None,
    encoder_factory: EncoderFactory | None = None,
    scorer_factory: ScorerFactory | None = None,
    evaluate_options: Mapping[str, Any] | None = None,
    progress: Progress = SILENT,
    log: Log | None = None,
) -> BenchReport:
    """Benchmark every configuration of ``plan`` on ``dataset``.

    Args:
        dataset: a `Dataset`, a dataset folder, or ``"demo"``.
        plan: retrievers, indexes, k values, measures, chunking and latency settings.
        out_dir: folder for the TREC run files (``<config id>.trec``); None writes none.
        cache: the embedding cache (None: encode everything, keep nothing).
        encoder_factory: ``(model, params) -> Encoder``; default loads sentence-transformers models.
        scorer_factory: ``(model, params) -> CrossEncoderScorer`` for re-ranking.
        evaluate_options: keyword options of `rankgate.evaluate` (``queries=``, ``rel=``, ...).
        progress: progress bars (default: none).
        log: called with one line per finished configuration.

    Returns:
        A `BenchReport`; each `ConfigResult` keeps its `Results` (per query) and `Run`.
    """
    from rankgate.evaluation.evaluate import evaluate

    ray_bench = _connect(plan)
    data = dataset if isinstance(dataset, Dataset) else load_dataset(dataset, split=plan.split)
    passages = chunk_corpus(data.doc_ids, data.doc_texts, plan.chunking) if plan.chunking else None
    retrievers = build_retrievers(
        plan.retrievers, cache=cache, encoder_factory=encoder_factory, scorer_factory=scorer_factory
    )
    with _closing(retrievers):
        _bind_live(retrievers, data, passages)
        if ray_bench is not None:
            _use_ray(plan, retrievers, ray_bench, encoder_factory or default_encoder_factory)
        encoding = _prepare(plan, retrievers, passages.texts if passages is not None else data.doc_texts, progress)
        reported = [s for s in plan.retrievers if s.report]
        sweep = _Sweep(
            data,
            passages,
            plan,
            encoded={s.name: retrievers[s.name].encode_queries(data.query_texts, cached=True) for s in reported},
            encoding=encoding,
            evaluate=evaluate,
            eval_opts=dict(evaluate_options or {}),
            out_dir=out_dir,
            log=log,
            warnings=list(data.warnings),
        )
        for i, index_spec in enumerate(plan.indexes):
            for spec in reported:
                retriever = retrievers[spec.name]
                if retriever.uses_index or i == 0:
                    sweep.add_index(i, spec.name, retriever, index_spec, progress)
        order = {s.name: n for n, s in enumerate(reported)}
        results = sorted(
            sweep.done.values(),
            key=lambda r: (order[r.retriever], sweep.position[r.id], plan.ks.index(r.k)),
        )
        return BenchReport(
            dataset={**data.describe(), "passages": len(passages.ids) if passages is not None else None},
            measures=list(results[0].results.names) if results else list(plan.measures),
            results=results,
            settings=_settings(plan, cache, results, ray_bench),
            versions=_versions(),
            machine=_machine(),
            warnings=sweep.warnings,
        )


@contextlib.contextmanager
def _closing(retrievers: Mapping[str, Retriever]) -> Iterator[None]:
    """Close the live retrievers at the end (their clients, connections and local-mode locks)."""
    try:
        yield
    finally:
        for retriever in retrievers.values():
            if hasattr(retriever, "bind"):
                retriever.close()  # type: ignore[attr-defined]


def _bind_live(retrievers: Mapping[str, Retriever], data: Dataset, passages: Passages | None) -> None:
    """Give live retrievers the dataset's ids: they answer with document ids, bench counts positions."""
    for name, retriever in retrievers.items():
        bind = getattr(retriever, "bind", None)
        if bind is None:
            continue
        if passages is not None:
            raise ConfigError(
                f"{name} is a live retriever: it returns documents, so chunking does not apply", key_path="chunking"
            )
        bind(data.doc_ids, data.query_ids, data.query_texts)


def _use_ray(plan: BenchPlan, retrievers: Mapping[str, Retriever], ray_bench: Any, factory: EncoderFactory) -> None:
    """Dense retrievers encode their corpus and search exact indexes on the Ray cluster."""
    from rankgate.bench.retrievers.dense import DenseRetriever

    for spec in plan.retrievers:
        retriever = retrievers[spec.name]
        if isinstance(retriever, DenseRetriever):
            retriever.use_ray(ray_bench, factory, spec.model, spec.params)


def _prepare(
    plan: BenchPlan, retrievers: Mapping[str, Retriever], texts: Sequence[str], progress: Progress
) -> dict[str, dict[str, Any]]:
    """Prepare every retriever on the corpus ``texts``; the encoding details of those that encode, by name."""
    encoding: dict[str, dict[str, Any]] = {}
    for spec in plan.retrievers:
        info = retrievers[spec.name].prepare(texts, progress)
        if info.details:
            encoding[spec.name] = {"seconds": info.seconds, **info.details}
    return encoding


@dataclass
class _Sweep:
    """The benchmark's configurations as they are measured: results by id, each one's index position, warnings."""

    data: Dataset
    passages: Passages | None
    plan: BenchPlan
    encoded: dict[str, Any]
    encoding: dict[str, dict[str, Any]]
    evaluate: Any
    eval_opts: dict[str, Any]
    out_dir: str | os.PathLike[str] | None
    log: Log | None
    warnings: list[str]
    done: dict[str, ConfigResult] = field(default_factory=dict)
    position: dict[str, int] = field(default_factory=dict)  # configuration -> its index's place in the plan

    def add_index(self, i: int, name: str, retriever: Retriever, index_spec: IndexSpec, progress: Progress) -> None:
        """Build ``retriever``'s index ``index_spec`` (the ``i``-th of the plan) and measure it at every k."""
        try:
            built = retriever.build(index_spec if retriever.uses_index else None, progress)
        except ConfigError as e:
            raise ConfigError(f"{name} with {index_spec.label()}: {_message(e)}", key_path=e.key_path) from None
        except RankgateError as e:
            raise type(e)(f"{name} with {index_spec.label()}: {e}") from None
        index_params = _index_params(retriever, index_spec)
        self.warnings.extend(w for w in built.details.get("warnings", []) if w not in self.warnings)
        for k in self.plan.ks:
            result = self.measure(
                retriever, name, index_spec if retriever.uses_index else None, index_params, k, progress
            )
            result.build = {"seconds": built.seconds, "index_bytes": built.bytes}
            result.encoding = _encoding_of(retriever, self.encoding)
            result.retriever_info = retriever.describe()
            self.warnings.extend(w for w in getattr(retriever, "warnings", ()) if w not in self.warnings)
            if result.id in self.done:
                self.warnings.append(
                    f"{result.id}: two index configurations resolve to the same parameters; kept the first"
                )
                continue
            if self.out_dir is not None:
                from rankgate.io import write_run

                path = Path(self.out_dir) / f"{_file_name(result.id)}.trec"
                write_run(result.run, path, tag=_file_name(result.id))
                result.run_file = str(path)
            self.done[result.id] = result
            self.position[result.id] = i
            # A measure cut deeper than k sees only k documents (R@100 of a top-10 run is R@10): say so, as eval does.
            self.warnings.extend(f"{result.id}: {w}" for w in result.results.warnings if "than the cutoff of" in w)
            if self.log is not None:
                self.log(_summary_line(result))

    def measure(
        self,
        retriever: Retriever,
        name: str,
        index_spec: IndexSpec | None,
        index_params: dict[str, Any],
        k: int,
        progress: Progress = SILENT,
    ) -> ConfigResult:
        """Search, evaluate and time one configuration at ``k``."""
        data, passages, plan, encoded = self.data, self.passages, self.plan, self.encoded[name]
        depth = passage_depth(k, passages) if passages is not None else k
        probe_texts = data.query_texts[: plan.latency.queries]
        hits, seconds = timed_search(retriever, encoded, depth)
        recall = None
        approximate = index_spec.approximate if index_spec is not None else getattr(retriever, "approximate", False)
        if approximate and hasattr(retriever, "exact_search"):
            recall = neighbor_recall(hits, retriever.exact_search(encoded, depth))
        doc_hits = (
            aggregate_hits(hits, passages, k, plan.chunking.aggregate)
            if passages is not None and plan.chunking
            else hits
        )
        label = config_id(name, index_spec.kind if index_spec else None, index_params, k)
        doc_ids = getattr(retriever, "doc_ids", None) or data.doc_ids  # a live retriever's: the corpus, then others
        run = hits_to_run(doc_hits, data.query_ids, doc_ids, name=label)
        results = self.evaluate(data.qrels, run, list(plan.measures), **self.eval_opts)
        total: list[float] = []
        search: list[float] = []
        if probe_texts:
            with progress.task(f"latency probe: {label}", total=len(probe_texts)) as advance:
                total, search = probe_latency(
                    retriever,
                    probe_texts,
                    depth,
                    warmup=plan.latency.warmup,
                    threads=plan.latency.threads,
                    progress=advance,
                )
        return ConfigResult(
            retriever=name,
            index=index_spec.kind if index_spec else None,
            params=index_params,
            k=k,
            results=results,
            run=run,
            neighbor_recall=recall,
            latency_ms=percentiles_ms(total),
            search_latency_ms=percentiles_ms(search),
            throughput_qps=len(data.query_ids) / seconds if seconds > 0 else None,
        )


def timed_search(
    retriever: Retriever, encoded: Any, k: int, *, repeat: int = 3, budget_s: float = 1.0
) -> tuple[Hits, float]:
    """Search all queries in one batch, again (up to ``repeat`` times) while under ``budget_s``; keep the fastest.

    The first batch pays one-time costs (thread pools, caches); repeating short searches keeps
    them out of the throughput, at little cost. A retriever whose batch is slow (a live service,
    asked one query after another: one batch can exceed the budget) may have a ``warm_up(encoded, k)``,
    called first and untimed, so that a model load or a connection is not counted.
    """
    warm_up = getattr(retriever, "warm_up", None)
    if warm_up is not None:
        warm_up(encoded, k)
    start = time.perf_counter()
    hits = retriever.search(encoded, k)
    best = spent = time.perf_counter() - start
    for _ in range(repeat - 1):
        if spent >= budget_s:
            break
        start = time.perf_counter()
        retriever.search(encoded, k)
        seconds = time.perf_counter() - start
        best, spent = min(best, seconds), spent + seconds
    return hits, best


def neighbor_recall(approximate: Hits, exact: Hits) -> float:
    """Mean over queries of the share of the exact top-k that the approximate search found.

    >>> a = Hits(np.array([[1, 2, 3], [4, 5, 6]]), np.zeros((2, 3)))
    >>> e = Hits(np.array([[1, 2, 9], [4, 5, 6]]), np.zeros((2, 3)))
    >>> round(neighbor_recall(a, e), 4)
    0.8333
    """
    shares = []
    for q in range(exact.num_queries):
        truth, _ = exact.row(q)
        found, _ = approximate.row(q)
        if len(truth):
            shares.append(len(np.intersect1d(truth, found)) / len(truth))
    return float(np.mean(shares)) if shares else float("nan")


def hits_to_run(hits: Hits, query_ids: Sequence[str], doc_ids: Sequence[str], *, name: str) -> Run:
    """A `Run` from positions into the corpus (padding dropped); scores as float64."""
    valid = hits.ids >= 0
    rows, cols = np.nonzero(valid)
    qids = np.asarray(query_ids, dtype=object)[rows]
    docs = np.asarray(doc_ids, dtype=object)[hits.ids[rows, cols]]
    return Run(list(qids), list(docs), hits.scores[rows, cols].astype(np.float64), name=name, source=name)


def _index_params(retriever: Retriever, spec: IndexSpec) -> dict[str, Any]:
    if not retriever.uses_index:
        return {}
    params = getattr(retriever, "index_params", None)
    if params is None:  # a composite: the params of its dense part
        for part in [*getattr(retriever, "components", []), getattr(retriever, "first_stage", None)]:
            if part is not None and getattr(part, "uses_index", False):
                return _index_params(part, spec)
        return dict(spec.params)
    return dict(params)


def _encoding_of(retriever: Retriever, encoding: Mapping[str, dict[str, Any]]) -> dict[str, Any] | None:
    if retriever.name in encoding:
        return encoding[retriever.name]
    parts = [*list(getattr(retriever, "components", [])), getattr(retriever, "first_stage", None)]
    found = {p.name: encoding[p.name] for p in parts if p is not None and p.name in encoding}
    return {"components": found} if found else None


def _file_name(config_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=+-]+", "_", config_id).strip("_")


def _summary_line(r: ConfigResult) -> str:
    metrics = " ".join(f"{k}={v:.4f}" for k, v in r.metrics.items())
    p50 = r.latency_ms.get("p50")
    return f"{r.id}: {metrics}" + (f" p50={p50:.2f}ms" if p50 is not None else "")


def _message(e: ConfigError) -> str:
    text = str(e)
    prefix = f"{e.key_path}: " if e.key_path else ""
    return text[len(prefix) :] if prefix and text.startswith(prefix) else text


def _connect(plan: BenchPlan) -> Any:
    """The Ray cluster of a ``ray`` plan with a dense retriever (`RayBench`), else None.

    A bad address fails either way; a plan without dense retrievers (BM25 alone) has nothing
    for Ray to do, so no cluster is started for it.
    """
    if plan.engine.kind != "ray":
        return None
    from rankgate.bench.ray_search import RayBench
    from rankgate.evaluation.engines.ray_cluster import check_address

    check_address(plan.engine.address)
    if not any(s.kind == "dense" for s in plan.retrievers):
        return None

    return RayBench.connect(plan.engine.address, workers=plan.engine.workers)


def _settings(
    plan: BenchPlan, cache: EmbeddingCache | None, results: list[ConfigResult], ray_bench: Any = None
) -> dict[str, Any]:
    return {
        "evaluation": dict(results[0].results.settings) if results else {},
        "k": list(plan.ks),
        "chunking": plan.chunking.to_dict() if plan.chunking else None,
        "latency": {
            "queries": plan.latency.queries,
            "warmup": plan.latency.warmup,
            "threads": plan.latency.threads,
            "mode": "one query at a time on `threads` torch/BLAS threads; encode (no cache) + search",
        },
        "throughput": "one batched search of all queries, query encoding excluded (fastest of up to 3 within 1 s)",
        "similarity": "inner product of normalized vectors (cosine) unless normalize=false",
        "cache": str(cache.path) if cache is not None else None,
        "matrix": plan.source,
        "engine": plan.engine.kind,
        **({"ray": ray_bench.describe()} if ray_bench is not None else {}),
    }


def _versions() -> dict[str, Any]:
    from rankgate.bench._deps import version_of
    from rankgate.evaluation.evaluate import versions

    out: dict[str, Any] = dict(versions())
    for module in ("faiss", "bm25s", "sentence_transformers", "torch", "ray"):
        v = version_of(module)
        if v is not None:
            out[module] = v
    return out


def _machine() -> dict[str, Any]:
    import sys

    info: dict[str, Any] = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    if "torch" in sys.modules:
        info["torch_threads"] = sys.modules["torch"].get_num_threads()
    if "faiss" in sys.modules:
        info["faiss_threads"] = sys.modules["faiss"].omp_get_max_threads()
    return info
