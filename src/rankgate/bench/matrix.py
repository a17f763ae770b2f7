"""The benchmark matrix: retrievers x indexes x parameters x k, from YAML or command-line specs.

A matrix file::

    dataset: demo                 # optional; the command's DATASET argument wins
    split: test
    measures: [nDCG@10, R@10, R@100, RR@10]
    chunking: {size: 200, overlap: 50, aggregate: max}   # optional
    latency: {queries: 100, warmup: 3, threads: 1}       # queries: 0 turns the probe off
    engine: {type: ray, address: auto}                   # optional; or engine: ray (default: local)
    matrix:
      retrievers:
        - bm25                                 # a spec string, as on the command line
        - {name: minilm, type: dense, model: minilm, params: {batch_size: 64}}
        - {name: hybrid, type: hybrid, of: [bm25, minilm], params: {fusion: rrf, rrf_k: 60}}
      indexes:
        - exact
        - {type: hnsw, params: {M: [16, 32], ef_search: [32, 128]}}   # lists make a grid
      k: [10, 100]

A list as a parameter value makes a grid (one configuration per value, crossed with the other
lists), except ``weights`` of a hybrid, which is one weight per fused retriever. Errors name the
key path, e.g. ``matrix.indexes[1].params.M``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rankgate.bench.chunking import AGGREGATIONS, ChunkSpec
from rankgate.bench.indexes import INDEX_KINDS, IndexSpec
from rankgate.bench.specs import (
    DEFAULT_MEASURES,
    DEFAULT_RETRIEVERS,
    NOT_A_GRID,
    RETRIEVER_KINDS,
    RETRIEVER_PARAMS,
    BenchPlan,
    EngineSpec,
    LatencySpec,
    RetrieverSpec,
    _complete,
    _expand_index,
    _grid,
    _is_int,
    _spec_from_string,
    add_rerankers,
    check_references,
    live_spec,
    parse_index_spec,
    parse_retriever_specs,
)
from rankgate.errors import ConfigError, MeasureError

__all__ = [
    "DEFAULT_MEASURES",
    "DEFAULT_RETRIEVERS",
    "RETRIEVER_KINDS",
    "RETRIEVER_PARAMS",
    "BenchPlan",
    "EngineSpec",
    "LatencySpec",
    "RetrieverSpec",
    "add_rerankers",
    "check_references",
    "load_plan",
    "parse_index_spec",
    "parse_retriever_specs",
    "plan_from_dict",
    "with_engine",
    "with_extras",
]

# -- matrix files -------------------------------------------------------------------------------
TOP_KEYS = ("dataset", "split", "measures", "chunking", "latency", "engine", "matrix")
MATRIX_KEYS = ("retrievers", "indexes", "k")


def load_plan(path: str | os.PathLike[str]) -> BenchPlan:
    """Read a matrix YAML file.

    Raises:
        ConfigError: naming the file and the key path of the first problem.
    """
    from rankgate.io.yaml import YAMLSyntaxError, load_yaml

    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("matrix file not found", source=source) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read the matrix file ({e})", source=source) from None
    try:  # the bounded loader: duplicate keys and alias bombs are refused, as in gate configs
        data = load_yaml(text, source)
    except YAMLSyntaxError as e:
        line = f"line {e.line}: " if e.line is not None else ""
        raise ConfigError(f"{line}not valid YAML ({e.problem})", source=source) from None
    try:
        return plan_from_dict(data, source=source)
    except ConfigError as e:
        if e.source is not None:
            raise
        prefix = f"{e.key_path}: " if e.key_path else ""
        raise ConfigError(str(e)[len(prefix) :], key_path=e.key_path, source=source) from None


def plan_from_dict(data: Any, *, source: str | None = None) -> BenchPlan:
    """Validate a matrix (already parsed from YAML or built in Python) into a `BenchPlan`."""
    top = _mapping(data, "", TOP_KEYS)
    matrix = _mapping(top.get("matrix"), "matrix", MATRIX_KEYS, required=True)
    retrievers = _retrievers(matrix.get("retrievers"), "matrix.retrievers")
    indexes: list[IndexSpec] = []
    raw_indexes = matrix.get("indexes", ["exact"])
    if not isinstance(raw_indexes, list) or not raw_indexes:
        raise ConfigError("must be a non-empty list of indexes", key_path="matrix.indexes")
    for i, item in enumerate(raw_indexes):
        where = f"matrix.indexes[{i}]"
        if isinstance(item, str):
            indexes.extend(parse_index_spec(item, where))
            continue
        entry = _mapping(item, where, ("type", "params"))
        kind = entry.get("type")
        if kind not in INDEX_KINDS:
            raise ConfigError(
                f"must be one of {', '.join(INDEX_KINDS)}. Got {kind!r} instead.", key_path=f"{where}.type"
            )
        params = _mapping(entry.get("params", {}), f"{where}.params", None)
        indexes.extend(_expand_index(kind, params, where))
    plan = BenchPlan(
        retrievers=retrievers,
        indexes=tuple(indexes),
        ks=_ks(matrix.get("k", [100]), "matrix.k"),
        measures=_measures(top.get("measures", list(DEFAULT_MEASURES)), "measures"),
        chunking=_chunking(top.get("chunking")),
        latency=_latency(top.get("latency")),
        dataset=_optional_str(top.get("dataset"), "dataset"),
        split=_optional_str(top.get("split"), "split") or "test",
        source=source,
        engine=_engine(top.get("engine")),
    )
    return plan


def _retrievers(value: Any, where: str) -> tuple[RetrieverSpec, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError("must be a non-empty list of retrievers", key_path=where)
    specs: list[RetrieverSpec] = []
    for i, item in enumerate(value):
        path = f"{where}[{i}]"
        if isinstance(item, str):
            specs.append(_spec_from_string(item, path))
            continue
        entry = _mapping(item, path, ("name", "type", "model", "of", "params", "spec"))
        kind = entry.get("type")
        if kind not in RETRIEVER_KINDS:
            raise ConfigError(
                f"must be one of {', '.join(RETRIEVER_KINDS)}. Got {kind!r} instead.", key_path=f"{path}.type"
            )
        if kind == "live" or "spec" in entry:
            if kind != "live":
                raise ConfigError("spec applies to type: live only", key_path=f"{path}.spec")
            specs.append(live_spec(entry, path))
            continue
        name = _optional_str(entry.get("name"), f"{path}.name") or kind
        model = _optional_str(entry.get("model"), f"{path}.model")
        if kind == "rerank" and model is None:
            raise ConfigError("a rerank retriever needs a cross-encoder model folder", key_path=f"{path}.model")
        if kind in ("bm25", "hybrid") and model is not None:
            raise ConfigError(f"a {kind} retriever takes no model", key_path=f"{path}.model")
        of = entry.get("of", [])
        of = [of] if isinstance(of, str) else of
        if not isinstance(of, list) or not all(isinstance(o, str) for o in of):
            raise ConfigError("must be a retriever name or a list of names", key_path=f"{path}.of")
        if kind == "hybrid" and len(of) < 2:
            raise ConfigError("a hybrid fuses at least two retrievers: list their names", key_path=f"{path}.of")
        if kind == "rerank" and len(of) != 1:
            raise ConfigError("a rerank retriever re-ranks one retriever: give its name", key_path=f"{path}.of")
        if kind in ("bm25", "dense") and of:
            raise ConfigError(f"a {kind} retriever fuses nothing", key_path=f"{path}.of")
        params = _mapping(entry.get("params", {}), f"{path}.params", tuple(RETRIEVER_PARAMS[kind]))
        grid = list(_grid(params, where=f"{path}.params", keep=NOT_A_GRID))
        varied = [k for k, v in params.items() if isinstance(v, list) and k not in NOT_A_GRID]
        for point in grid:
            for key, value in point.items():
                check, expected = RETRIEVER_PARAMS[kind][key]
                if not check(value):
                    raise ConfigError(f"must be {expected}. Got {value!r} instead.", key_path=f"{path}.params.{key}")
            label = name if not varied else f"{name}(" + ",".join(f"{k}={point[k]}" for k in varied) + ")"
            specs.append(RetrieverSpec(label, kind, model=model, params=point, of=tuple(of), key_path=path))
    return _complete(specs, rerank=None, rerank_depth=100)


def _mapping(value: Any, where: str, allowed: Sequence[str] | None, *, required: bool = False) -> dict[str, Any]:
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"must be a mapping. Got {type(value).__name__} instead.", key_path=where or None)
    for key in value:
        if not isinstance(key, str) or (allowed is not None and key not in allowed):
            choices = ", ".join(allowed) if allowed else "none"
            path = f"{where}.{key}" if where else str(key)
            raise ConfigError(f"unknown key (allowed here: {choices})", key_path=path)
    return value


def _optional_str(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"must be a non-empty string. Got {value!r} instead.", key_path=where)
    return value


def _ks(value: Any, where: str) -> tuple[int, ...]:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise ConfigError("must be an int >= 1 or a non-empty list of them", key_path=where)
    for i, v in enumerate(values):
        if not _is_int(v, 1):
            raise ConfigError(f"must be an int >= 1. Got {v!r} instead.", key_path=f"{where}[{i}]")
    return tuple(dict.fromkeys(values))


def _measures(value: Any, where: str) -> tuple[str, ...]:
    from rankgate.measures.parse import parse_measure

    values = [v.strip() for v in value.split(",")] if isinstance(value, str) else value
    if not isinstance(values, list) or not values:
        raise ConfigError("must be a non-empty list of measure names", key_path=where)
    out = []
    for i, v in enumerate(values):
        try:
            out.append(str(parse_measure(v)))
        except (MeasureError, TypeError, ValueError) as e:
            raise ConfigError(str(e), key_path=f"{where}[{i}]") from None
    return tuple(out)


def _chunking(value: Any) -> ChunkSpec | None:
    if value is None:
        return None
    entry = _mapping(value, "chunking", ("size", "overlap", "aggregate"))
    if "size" not in entry:
        raise ConfigError("chunking needs a size (words per passage)", key_path="chunking.size")
    aggregate = entry.get("aggregate", "max")
    if aggregate not in AGGREGATIONS:
        raise ConfigError(
            f"must be one of {', '.join(AGGREGATIONS)}. Got {aggregate!r} instead.", key_path="chunking.aggregate"
        )
    return ChunkSpec(size=entry["size"], overlap=entry.get("overlap", 0), aggregate=aggregate)


def _latency(value: Any) -> LatencySpec:
    entry = _mapping(value, "latency", ("queries", "warmup", "threads"))
    for key in entry:
        least = 1 if key == "threads" else 0
        if not _is_int(entry[key], least):
            raise ConfigError(f"must be an int >= {least}. Got {entry[key]!r} instead.", key_path=f"latency.{key}")
    return LatencySpec(**entry)


def _engine(value: Any) -> EngineSpec:
    """``engine: ray`` or ``engine: {type: ray, address: auto, workers: 4}``; default local."""
    if value is None:
        return EngineSpec()
    entry: dict[str, Any] = (
        {"type": value} if isinstance(value, str) else _mapping(value, "engine", ("type", "address", "workers"))
    )
    kind = entry.get("type", "local")
    if kind not in ("local", "ray"):
        raise ConfigError(f"must be local or ray. Got {kind!r} instead.", key_path="engine.type")
    address = _optional_str(entry.get("address"), "engine.address")
    if kind == "local" and (address is not None or "workers" in entry):
        raise ConfigError("address and workers apply to the ray engine only", key_path="engine")
    return EngineSpec(kind, address, entry.get("workers"))


# -- command-line overrides ---------------------------------------------------------------------
def with_extras(
    plan: BenchPlan, rerank: str | None, depth: int, device: str | None, latency_queries: int | None
) -> BenchPlan:
    """``plan`` with a re-ranker after every retriever, the models' device and the latency probe's size."""

    specs = add_rerankers(plan.retrievers, rerank, depth=depth) if rerank else plan.retrievers
    if device:
        specs = tuple(
            replace(s, params={**s.params, "device": device}) if s.kind in ("dense", "rerank") else s for s in specs
        )
    latency = plan.latency if latency_queries is None else replace(plan.latency, queries=latency_queries)
    return replace(plan, retrievers=specs, latency=latency)


def with_engine(plan: BenchPlan, engine: str | None, ray_address: str | None) -> BenchPlan:
    """``plan`` with the engine of the command line (it wins over the matrix file's)."""

    from rankgate.evaluation.engines import check_ray_address

    if engine is None and ray_address is None:
        return plan
    kind = engine or plan.engine.kind
    check_ray_address(kind, ray_address)
    same = kind == plan.engine.kind
    address = ray_address if ray_address is not None else (plan.engine.address if same else None)
    return replace(plan, engine=EngineSpec(kind, address, plan.engine.workers if same else None))
