"""``rankgate bench --engine ray``: Ray Data encoding and exact search give the local engine's results, bit for bit.

The Ray tests run on a local cluster started by the tests (2 CPUs). The identity checks compare
against the local engine run on the same data: embeddings byte for byte (read back from each
run's own embedding cache), run files byte for byte, metrics exactly.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from rankgate.bench import embedcache
from rankgate.bench.datasets import load_dataset
from rankgate.bench.embedcache import CachedEncoder, EmbeddingCache, text_key
from rankgate.bench.encoders import HashingEncoder, SentenceTransformerEncoder
from rankgate.bench.harness import run_benchmark
from rankgate.bench.indexes import ExactIndex
from rankgate.bench.matrix import EngineSpec, plan_from_dict
from rankgate.bench.progress import SILENT
from rankgate.bench.ray_encode import encoding_units
from rankgate.bench.ray_exact import query_blocks
from rankgate.bench.ray_search import RayBench
from rankgate.bench.threads import blas_threads
from rankgate.bench.topk import topk_inner_product
from rankgate.errors import BackendError, ConfigError
from rankgate.evaluation.engines.ray_cluster import check_address
from tests.cli_support import invoke
from tests.test_engines import ray_cluster  # noqa: F401  (the local cluster fixture of the eval tests)

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------------
# Without a cluster: units, blocks, addresses, the matrix key
# ---------------------------------------------------------------------------------------------
def test_encoding_units_are_the_local_model_calls() -> None:
    # SentenceTransformerEncoder.encode sends batch_size * 8 texts per model call, from the start of
    # each list it gets; the cache hands it chunks of at most WRITE_CHUNK misses
    assert encoding_units([200], 4) == [0, 32, 64, 96, 128, 160, 192]
    assert encoding_units([50, 50, 30], 4) == [0, 32, 50, 82, 100]
    assert encoding_units([], 64) == [] and encoding_units([0], 64) == []


def test_query_blocks_cut_where_topk_cuts() -> None:
    rng = np.random.default_rng(3)
    X = rng.integers(-2, 3, (3000, 8)).astype(np.float32)  # small integers: many tied scores
    Q = rng.integers(-2, 3, (130, 8)).astype(np.float32)
    block_bytes = 1 << 20
    blocks = query_blocks(len(Q), len(X), block_bytes)
    assert blocks[0] == (0, (1 << 20) // (4 * 3000)) and blocks[-1][1] == 130
    assert all(a[1] == b[0] for a, b in itertools.pairwise(blocks))
    s, i = topk_inner_product(Q, X, 10, block_bytes=block_bytes)
    parts = [topk_inner_product(Q[lo:hi], X, 10, block_bytes=block_bytes) for lo, hi in blocks]
    assert np.array_equal(np.concatenate([p[0] for p in parts]), s)  # bit for bit, ties in the same order
    assert np.array_equal(np.concatenate([p[1] for p in parts]), i)
    assert query_blocks(0, 10, block_bytes) == []


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("nonsense", "expected HOST:PORT"),
        ("127.0.0.1:notaport", "expected HOST:PORT"),
        ("127.0.0.1:1", "cannot connect to the Ray cluster at 127.0.0.1:1"),
        ("[::1]:1", r"cannot connect to the Ray cluster at \[::1\]:1"),
    ],
)
def test_bad_addresses_fail_fast(address: str, message: str) -> None:
    with pytest.raises(BackendError, match=message):
        check_address(address, timeout=2)
    check_address(None)
    check_address("auto")


def test_workers_and_resources(monkeypatch: pytest.MonkeyPatch) -> None:
    cpu = RayBench(None, cpus=8, gpus=0, search_threads=2)
    assert (cpu.search_workers, cpu.encode_workers(2), cpu.encode_resources(2)) == (4, 4, {"num_cpus": 2})
    assert cpu.encode_workers(16) == 1 and cpu.encode_resources(16) == {"num_cpus": 8}  # a driver of 16 threads
    asked = RayBench(None, cpus=8, gpus=0, workers=20, search_threads=2)
    assert (asked.encode_workers(2), asked.encode_resources(2)) == (8, {"num_cpus": 1})  # no more than the CPUs
    gpu = RayBench(None, cpus=16, gpus=4, search_threads=8)
    assert (gpu.encode_workers(2), gpu.encode_resources(2), gpu.search_workers) == (4, {"num_gpus": 1}, 2)
    assert gpu.describe()["encode_device"].startswith("cuda")
    # two nodes of 4 CPUs and a driver of 8 BLAS/torch threads: no actor may ask for more than 4
    nodes = RayBench(None, cpus=8, gpus=0, search_threads=8, node_cpus=4)
    assert (nodes.search_workers, nodes.encode_workers(8), nodes.encode_resources(8)) == (2, 2, {"num_cpus": 4})
    seen: dict[str, Any] = {}

    def run(job: Any, texts: list[str], chunks: Any, unit_done: Any) -> np.ndarray:
        seen.clear()
        seen.update(job.params)
        return np.zeros((len(texts), 8), dtype=np.float32)

    monkeypatch.setattr("rankgate.bench.ray_encode.EncodeJob.run", run)
    options: dict[str, Any] = {"factory": None, "model": None, "normalize": True, "batch_size": 4, "cache": None}
    gpu.encode_corpus(["a"], encoder=HashingEncoder(8), params={"batch_size": 4}, progress=print, **options)
    assert seen == {"batch_size": 4, "device": "cuda"}  # GPU workers run the model on cuda...
    gpu.encode_corpus(["a"], encoder=HashingEncoder(8), params={"device": "cuda:1"}, progress=print, **options)
    assert seen["device"] == "cuda:1"  # ...unless the retriever says otherwise
    cpu.encode_corpus(["a"], encoder=HashingEncoder(8), params={}, progress=print, **options)
    assert seen == {}  # CPU workers: the params as given (device cpu by default)


def test_engine_in_the_matrix_file() -> None:
    base: dict[str, Any] = {"matrix": {"retrievers": ["bm25"]}}
    assert plan_from_dict(base).engine == EngineSpec("local")
    assert plan_from_dict({**base, "engine": "ray"}).engine == EngineSpec("ray")
    spec = plan_from_dict({**base, "engine": {"type": "ray", "address": "auto", "workers": 3}}).engine
    assert spec == EngineSpec("ray", "auto", 3)
    for bad, where in [
        ("spark", "engine.type"),
        ({"type": "ray", "workers": 0}, "engine.workers"),
        ({"type": "local", "address": "auto"}, "engine"),
        ({"type": "ray", "nodes": 2}, "engine.nodes"),
    ]:
        with pytest.raises(ConfigError) as e:
            plan_from_dict({**base, "engine": bad})
        assert e.value.key_path == where


def test_engine_from_a_yaml_file_and_the_command_line(tmp_path: Path) -> None:
    from rankgate.bench.matrix import load_plan
    from rankgate.bench.matrix import with_engine as _with_engine

    path = tmp_path / "matrix.yaml"
    path.write_text("engine: {type: ray, address: auto, workers: 3}\nmatrix:\n  retrievers: [bm25]\n")
    plan = load_plan(path)
    assert plan.engine == EngineSpec("ray", "auto", 3)
    assert _with_engine(plan, None, None) is plan
    assert _with_engine(plan, "local", None).engine == EngineSpec("local")  # the command line wins
    assert _with_engine(plan, None, "10.0.0.5:6379").engine == EngineSpec("ray", "10.0.0.5:6379", 3)
    path.write_text("engine: {type: ray, workers: many}\nmatrix:\n  retrievers: [bm25]\n")
    with pytest.raises(ConfigError, match=r"matrix.yaml: engine.workers: must be an int >= 1. Got 'many' instead."):
        load_plan(path)


def test_ray_address_without_ray_engine_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = invoke(capsys, "bench", "demo", "-r", "bm25", "--ray-address", "auto", "--no-runs")
    assert code == 2 and "--ray-address needs --engine ray" in err


@pytest.mark.parametrize(
    ("address", "message"),
    [("127.0.0.1:1", "cannot connect to the Ray cluster at 127.0.0.1:1"), ("nonsense", "expected HOST:PORT")],
)
def test_bad_ray_address_exits_2_without_traceback(tmp_path: Path, address: str, message: str) -> None:
    pytest.importorskip("ray")
    args = ["bench", "demo", "-r", "bm25", "--engine", "ray", "--ray-address", address, "--out-dir", str(tmp_path)]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    done = subprocess.run(
        [sys.executable, "-m", "rankgate", *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env
    )
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == "" and not list(tmp_path.iterdir())  # failed before any work


# ---------------------------------------------------------------------------------------------
# On a local Ray cluster, with fake models (fast)
# ---------------------------------------------------------------------------------------------
def _h(text: str) -> float:
    return float(int.from_bytes(hashlib.blake2b(text.encode(), digest_size=3).digest(), "little"))


class CallShapeModel:
    """Stands in for a SentenceTransformer: each vector records the model call it came from.

    Row = (hash of the text, texts in the call, hash of the call's first text, batch size), so two
    runs give equal vectors only if they made the very same model calls.
    """

    def encode(self, sentences: list[str], *, batch_size: int, **_: Any) -> np.ndarray:
        first = _h(sentences[0])
        return np.array([[_h(t), len(sentences), first, batch_size] for t in sentences], dtype=np.float32)


def call_shape_encoder(model: Any = None, params: Any = None) -> SentenceTransformerEncoder:
    """The real `SentenceTransformerEncoder` (its own splitting into model calls) around `CallShapeModel`."""
    enc = SentenceTransformerEncoder.__new__(SentenceTransformerEncoder)
    enc.path, enc.name, enc.device = Path("call-shape"), "call-shape", "cpu"
    enc.model, enc._identity, enc._dim = CallShapeModel(), "call-shape/v1", 4
    return enc


def dense_plan(
    params: dict[str, Any], indexes: list[Any], *, engine: str = "local", ks: Any = (10,), workers: int | None = None
) -> Any:
    plan = plan_from_dict(
        {
            "measures": ["nDCG@10", "R@100", "AP"],
            "latency": {"queries": 2, "warmup": 1},
            "matrix": {
                "retrievers": ["bm25", {"name": "dense", "type": "dense", "params": params}, "hybrid"],
                "indexes": indexes,
                "k": list(ks),
            },
        }
    )
    return replace(plan, engine=EngineSpec(engine, workers=workers if engine == "ray" else None))


def cached_vectors(folder: Path, identity: str, texts: list[str], dim: int, normalize: bool) -> np.ndarray:
    cache = EmbeddingCache(folder)
    try:
        key = cache.model_key(identity, normalize, dim)
        found = cache.get(key, [text_key(t) for t in texts], dim)
        return np.stack([found[text_key(t)] for t in texts])
    finally:
        cache.close()


def run_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.trec"))}


def assert_same_reports(a: Any, b: Any) -> None:
    assert [r.id for r in a.results] == [r.id for r in b.results]
    for x, y in zip(a.results, b.results, strict=True):
        assert x.metrics == y.metrics, x.id  # exactly
        assert np.array_equal(x.results.values, y.results.values), x.id
        assert x.neighbor_recall == y.neighbor_recall, x.id


def test_ray_exact_search_equals_local_bit_for_bit(ray_cluster) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    rng = np.random.default_rng(7)
    X = rng.integers(-2, 3, (5000, 8)).astype(np.float32)
    Q = rng.integers(-2, 3, (300, 8)).astype(np.float32)
    with threadpool_limits(1, "blas"):  # a 1-thread driver: 2 one-CPU search actors on the 2-CPU cluster
        bench = RayBench.connect()
        assert (bench.cpus, bench.gpus, bench.search_threads, bench.search_workers) == (2, 0, 1, 2)
        on_ray = bench.exact_index(block_mb=1)  # 52 queries a block: 6 blocks over 2 actors
        local = ExactIndex(block_mb=1)
        for index in (on_ray, local):
            index.build(X, SILENT)
        for k in (1, 10, 100):
            got, want = on_ray.search(Q, k), local.search(Q, k)
            assert got.ids.dtype == want.ids.dtype and got.scores.dtype == want.scores.dtype
            assert np.array_equal(got.ids, want.ids) and np.array_equal(got.scores, want.scores)
    assert RayBench.connect().search_threads == blas_threads()
    one = on_ray.search(Q[:1], 5)  # one query: searched in the driver, same answer
    assert np.array_equal(one.ids, local.search(Q[:1], 5).ids)
    small = bench.exact_index()
    small.build(X[:30], SILENT)  # k beyond the corpus: padding, as locally
    padded = small.search(Q[:4], 50)
    assert (padded.ids[:, 30:] == -1).all() and np.isneginf(padded.scores[:, 30:]).all()
    assert sorted(padded.ids[0, :30].tolist()) == list(range(30))


@pytest.mark.parametrize("with_cache", [True, False])
def test_ray_encoding_makes_the_local_model_calls(  # type: ignore[no-untyped-def]
    ray_cluster,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    with_cache: bool,
) -> None:
    monkeypatch.setattr(embedcache, "WRITE_CHUNK", 50)  # the cache's chunks, seen by both engines
    monkeypatch.setattr("rankgate.bench.ray_encode.WRITE_CHUNK", 50)
    data = load_dataset("demo")
    texts = list(data.doc_texts)
    params = {"batch_size": 4, "normalize": False}  # 32 texts per model call
    reports, folders = {}, {}
    for engine in ("local", "ray"):
        folders[engine] = tmp_path / engine
        cache = EmbeddingCache(folders[engine] / "cache") if with_cache else None
        if cache is not None:  # 70 texts already cached: Ray encodes only the 130 misses
            CachedEncoder(call_shape_encoder(), cache).encode(texts[:70], normalize=False, batch_size=4)
        reports[engine] = run_benchmark(
            data,
            dense_plan(params, ["exact"], engine=engine, workers=2),
            out_dir=folders[engine] / "runs",
            cache=cache,
            encoder_factory=call_shape_encoder,
        )
    assert_same_reports(reports["local"], reports["ray"])
    assert run_files(folders["local"] / "runs") == run_files(folders["ray"] / "runs")
    encoding = reports["ray"]["dense/exact/k=10"].encoding
    assert encoding is not None and encoding["engine"] == "ray"
    misses = len(set(texts)) - len(set(texts[:70]))  # the demo corpus repeats one text: 129
    assert (encoding["encoded"], encoding["cached"]) == ((misses, 70) if with_cache else (200, 0))
    if with_cache:
        vectors = {e: cached_vectors(folders[e] / "cache", "call-shape/v1", texts, 4, False) for e in folders}
        assert vectors["local"].tobytes() == vectors["ray"].tobytes()
        new = [i for i, t in enumerate(texts) if t not in set(texts[:70])]
        calls = sorted(set(vectors["ray"][new, 1].astype(int).tolist()))
        # misses in chunks of 50, 50, 29; each cut into units at 32, each unit into model calls of 4
        assert calls == sorted({4, 18 % 4, (misses - 100) % 4})
    settings = reports["ray"].settings
    assert settings["engine"] == "ray" and settings["ray"]["encode_workers"] == 2  # 2 actors of 1 CPU
    assert reports["local"].settings["engine"] == "local" and "ray" not in reports["local"].settings


def test_ray_hashing_bench_equals_local_and_cache_skips_ray(ray_cluster, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    encoder = HashingEncoder(dim=32)
    plan = dense_plan({}, ["exact", "hnsw:M=8,ef_construction=40,ef_search=16"])
    local = run_benchmark("demo", plan, out_dir=tmp_path / "local", encoder_factory=lambda m, p: encoder)
    cache = EmbeddingCache(tmp_path / "cache")
    on_ray = run_benchmark(
        "demo", replace(plan, engine=EngineSpec("ray")), out_dir=tmp_path / "ray", cache=cache,
        encoder_factory=lambda m, p: encoder,
    )  # fmt: skip
    assert_same_reports(local, on_ray)  # bm25, dense and hybrid, exact and hnsw (with its neighbor recall)
    assert run_files(tmp_path / "local") == run_files(tmp_path / "ray") and len(run_files(tmp_path / "ray")) == 5
    assert on_ray["dense/hnsw(M=8,ef_construction=40,ef_search=16)/k=10"].neighbor_recall is not None
    again = run_benchmark(
        "demo",
        replace(dense_plan({}, ["exact"]), engine=EngineSpec("ray")),
        cache=cache,
        encoder_factory=lambda m, p: encoder,
    )
    encoding = again["dense/exact/k=10"].encoding
    unique = len(set(load_dataset("demo").doc_texts))
    assert encoding is not None and (encoding["encoded"], encoding["cached"]) == (0, unique)  # no Ray encoding job
    assert again["dense/exact/k=10"].metrics == local["dense/exact/k=10"].metrics


def test_a_worker_with_another_model_is_refused(ray_cluster) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    driver = os.getpid()

    def factory(model: Any, params: Any) -> HashingEncoder:  # the workers would load other weights
        return HashingEncoder(dim=32 if os.getpid() == driver else 16)

    plan = replace(dense_plan({}, ["exact"]), engine=EngineSpec("ray"))
    with pytest.raises(BackendError, match="is not the driver's") as e:
        run_benchmark("demo", plan, encoder_factory=factory)
    assert str(e.value).startswith("a Ray worker's model (hashing-encoder/dim=16, dim 16) is not the driver's")
    assert "Traceback" not in str(e.value) and "\n" not in str(e.value)

    class Broken(HashingEncoder):
        def encode(self, texts: Any, **options: Any) -> np.ndarray:
            if os.getpid() != driver:
                raise ValueError("out of memory, say")
            return super().encode(texts, **options)

    with pytest.raises(BackendError) as e:
        run_benchmark("demo", plan, encoder_factory=lambda model, params: Broken(dim=8))
    assert str(e.value) == "a Ray Data job failed: ValueError: out of memory, say"


# ---------------------------------------------------------------------------------------------
# The real MiniLM on the demo data, through the CLI
# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_cli_engine_ray_equals_local_with_minilm(ray_cluster, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    common = ["-r", "bm25", "-r", "dense", "-i", "exact", "-i", "hnsw:M=16,ef_search=32", "-k", "10", "-k", "100"]
    common += ["-m", "nDCG@10,R@100,RR@10,AP", "--latency-queries", "0", "--format", "json", "-q"]
    out: dict[str, dict[str, Any]] = {}
    for engine in ("local", "ray"):
        code, stdout, err = invoke(
            capsys, "bench", "demo", *common, "--engine", engine, "--out-dir", str(tmp_path / engine / "runs"),
            "--cache-dir", str(tmp_path / engine / "cache"),
        )  # fmt: skip
        assert code == 0, err
        out[engine] = json.loads(stdout)
    assert out["ray"]["settings"]["engine"] == "ray" and out["local"]["settings"]["engine"] == "local"
    assert [r["metrics"] for r in out["local"]["results"]] == [r["metrics"] for r in out["ray"]["results"]]
    assert [r["neighbor_recall"] for r in out["local"]["results"]] == [
        r["neighbor_recall"] for r in out["ray"]["results"]
    ]
    local_runs, ray_runs = run_files(tmp_path / "local" / "runs"), run_files(tmp_path / "ray" / "runs")
    assert local_runs == ray_runs and len(ray_runs) == 6  # bm25, dense exact, dense hnsw; k = 10, 100
    dense = next(r for r in out["ray"]["results"] if r["retriever"] == "dense")
    texts = list(load_dataset("demo").doc_texts)
    assert dense["encoding"]["engine"] == "ray" and dense["encoding"]["encoded"] == len(set(texts))
    identity = dense["retriever_info"]["model"]
    vectors = {e: cached_vectors(tmp_path / e / "cache", identity, texts, 384, True) for e in ("local", "ray")}
    assert vectors["local"].tobytes() == vectors["ray"].tobytes()  # the embeddings, bit for bit
    assert np.allclose(np.linalg.norm(vectors["ray"], axis=1), 1, atol=1e-5)
