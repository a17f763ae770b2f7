"""What a benchmark runs: retriever specs, the plan, and the command-line spec strings.

A retriever spec string is ``bm25``, ``dense``, ``dense:MODEL_PATH``, ``hybrid`` (``hybrid:rrf``)
or ``hybrid:weighted``; an index spec string is a kind with parameters, ``hnsw:M=16|32,ef_search=64``
(``|`` makes a grid). Matrix files (`rankgate.bench.matrix`) build the same values.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rankgate.bench.chunking import ChunkSpec
from rankgate.bench.indexes import IndexSpec
from rankgate.errors import ConfigError
from rankgate.evaluation.engines import ENGINES

RETRIEVER_KINDS: tuple[str, ...] = ("bm25", "dense", "hybrid", "rerank", "live")
DEFAULT_MEASURES: tuple[str, ...] = ("nDCG@10", "R@10", "R@100", "RR@10", "AP")
DEFAULT_RETRIEVERS: tuple[str, ...] = ("bm25", "dense")
NOT_A_GRID = frozenset({"weights"})

# name -> (check, description) per retriever kind
_Check = tuple[Any, str]


def _is_int(v: Any, low: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= low


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


RETRIEVER_PARAMS: dict[str, dict[str, _Check]] = {
    "bm25": {
        "k1": (lambda v: _is_number(v) and v >= 0, "a number >= 0"),
        "b": (lambda v: _is_number(v) and 0 <= v <= 1, "a number in [0, 1]"),
        "method": (
            lambda v: v in ("lucene", "robertson", "atire", "bm25l", "bm25+"),
            "lucene, robertson, atire, bm25l or bm25+",
        ),
        "stopwords": (lambda v: v in ("en", "none"), "en or none"),
        "stemmer": (lambda v: v is None or isinstance(v, str), "a Snowball language such as english, or null"),
        "threads": (lambda v: _is_int(v, 0), "an int >= 0"),
    },
    "dense": {
        "batch_size": (lambda v: _is_int(v, 1), "an int >= 1"),
        "normalize": (lambda v: isinstance(v, bool), "true or false"),
        "device": (lambda v: isinstance(v, str) and v != "", "a torch device such as cpu or cuda"),
        "max_seq_length": (lambda v: _is_int(v, 1), "an int >= 1"),
        "query_prefix": (lambda v: isinstance(v, str), "a string"),
        "doc_prefix": (lambda v: isinstance(v, str), "a string"),
    },
    "hybrid": {
        "fusion": (lambda v: v in ("rrf", "weighted"), "rrf or weighted"),
        "rrf_k": (lambda v: _is_number(v) and v >= 0, "a number >= 0"),
        "weights": (
            lambda v: isinstance(v, list) and all(_is_number(w) and w >= 0 for w in v),
            "a list of numbers >= 0, one per fused retriever",
        ),
        "depth": (lambda v: _is_int(v, 1), "an int >= 1"),
    },
    "rerank": {
        "depth": (lambda v: _is_int(v, 1), "an int >= 1"),
        "batch_size": (lambda v: _is_int(v, 1), "an int >= 1"),
        "device": (lambda v: isinstance(v, str) and v != "", "a torch device such as cpu or cuda"),
    },
    "live": {},  # a live retriever's settings are its spec (see `live_spec`)
}


@dataclass(frozen=True)
class RetrieverSpec:
    """One retriever of the matrix (one point of its parameter grid).

    Attributes:
        name: unique label in the results.
        kind: bm25, dense, hybrid or rerank.
        model: the dense encoder or the cross-encoder (a local folder; None: MiniLM for dense).
        params: parameter values (see `RETRIEVER_PARAMS`).
        of: names of the fused retrievers (hybrid) or of the first stage (rerank).
        report: False for a component that was added only to be fused (not a row of its own).
        key_path: where it was configured.
    """

    name: str
    kind: str
    model: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    of: tuple[str, ...] = ()
    report: bool = True
    key_path: str = "retriever"


@dataclass(frozen=True)
class LatencySpec:
    """The one-query-at-a-time probe: how many queries (0: off) after how many warm-up ones.

    ``threads``: torch and BLAS threads while probing. One, like a serving worker per request:
    two threads on a busy two-core machine made one query 5x slower and the figures jumpy.
    """

    queries: int = 100
    warmup: int = 3
    threads: int = 1


@dataclass(frozen=True)
class EngineSpec:
    """Where the work runs: ``local`` (this process) or ``ray`` (see `rankgate.bench.ray_search`).

    Attributes:
        kind: local or ray.
        address: the Ray cluster (None: the running one, or a new local one).
        workers: Ray encoding actors (None: one per GPU, else one per CPU, at most 16).
    """

    kind: str = "local"
    address: str | None = None
    workers: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ENGINES:
            raise ConfigError(f"must be local or ray. Got {self.kind!r} instead.", key_path="engine")
        if self.workers is not None and not _is_int(self.workers, 1):
            raise ConfigError(f"must be an int >= 1. Got {self.workers!r} instead.", key_path="engine.workers")


@dataclass(frozen=True)
class BenchPlan:
    """Everything a benchmark run needs besides the data."""

    retrievers: tuple[RetrieverSpec, ...]
    indexes: tuple[IndexSpec, ...] = (IndexSpec("exact"),)
    ks: tuple[int, ...] = (100,)
    measures: tuple[str, ...] = DEFAULT_MEASURES
    chunking: ChunkSpec | None = None
    latency: LatencySpec = LatencySpec()
    dataset: str | None = None
    split: str = "test"
    source: str | None = None
    engine: EngineSpec = EngineSpec()

    def with_overrides(self, **changes: Any) -> BenchPlan:
        """A copy with the given fields replaced (None and empty values are ignored)."""
        given = {k: v for k, v in changes.items() if v is not None and v != ()}
        plan = replace(self, **given)
        check_references(plan.retrievers)
        return plan


# -- command-line specs -------------------------------------------------------------------------
def parse_retriever_specs(
    texts: Sequence[str], *, rerank: str | None = None, rerank_depth: int = 100
) -> tuple[RetrieverSpec, ...]:
    """Specs from ``--retriever`` values: ``bm25``, ``dense``, ``dense:MODEL``, ``hybrid[:rrf|:weighted]``.

    A hybrid fuses the first BM25 and the first dense retriever given (adding the defaults, unreported,
    when none is). ``rerank`` (a cross-encoder folder) adds a re-ranked copy of every other retriever.

    >>> [s.name for s in parse_retriever_specs(["bm25", "dense:/models/e5-small", "hybrid"])]
    ['bm25', 'dense:e5-small', 'hybrid:rrf']
    """
    specs: list[RetrieverSpec] = []
    for i, text in enumerate(texts):
        specs.append(_spec_from_string(text, f"--retriever[{i}]"))
    return _complete(specs, rerank=rerank, rerank_depth=rerank_depth)


def _spec_from_string(text: str, where: str) -> RetrieverSpec:
    kind, _, arg = text.strip().partition(":")
    kind = kind.lower()
    if kind == "bm25":
        if arg:
            raise ConfigError(f"bm25 takes no argument (got {text!r}); set k1/b in a matrix file", key_path=where)
        return RetrieverSpec("bm25", "bm25", key_path=where)
    if kind == "dense":
        name = "dense" if not arg else f"dense:{Path(arg.rstrip('/')).name or arg}"
        return RetrieverSpec(name, "dense", model=arg or None, key_path=where)
    if kind == "hybrid":
        method = arg or "rrf"
        if method not in ("rrf", "weighted"):
            raise ConfigError(
                f"unknown fusion {method!r} in {text!r}; use hybrid:rrf or hybrid:weighted", key_path=where
            )
        return RetrieverSpec(f"hybrid:{method}", "hybrid", params={"fusion": method}, key_path=where)
    if kind == "live":
        return live_spec({"spec": arg} if arg else {}, where)
    raise ConfigError(
        f"unknown retriever {text!r}; use bm25, dense, dense:MODEL_PATH, hybrid, hybrid:weighted, live:SPEC.yaml",
        key_path=where,
    )


def live_spec(entry: Mapping[str, Any], where: str) -> RetrieverSpec:
    """A ``live`` retriever: ``spec`` is a retriever spec file (see docs/retrieve-databases.md) or a mapping."""
    spec = entry.get("spec")
    if not (isinstance(spec, str) and spec.strip()) and not isinstance(spec, dict):
        raise ConfigError(
            "a live retriever needs spec: a retriever spec file or a mapping with a kind", key_path=f"{where}.spec"
        )
    for key in ("model", "of", "params"):
        if key in entry:
            raise ConfigError("a live retriever takes its settings from its spec", key_path=f"{where}.{key}")
    default = Path(spec).stem if isinstance(spec, str) else str(spec.get("kind", "live"))
    name = entry.get("name") or f"live:{default}"
    return RetrieverSpec(str(name), "live", params={"spec": spec}, key_path=where)


def _complete(specs: list[RetrieverSpec], *, rerank: str | None, rerank_depth: int) -> tuple[RetrieverSpec, ...]:
    """Wire command-line hybrids to a BM25 and a dense retriever, and add re-ranked copies."""
    out = list(specs)
    for i, spec in enumerate(out):
        if spec.kind != "hybrid" or spec.of:
            continue
        bm25 = next((s for s in out if s.kind == "bm25"), None)
        dense = next((s for s in out if s.kind == "dense"), None)
        if bm25 is None:
            bm25 = RetrieverSpec("bm25", "bm25", report=False, key_path=spec.key_path)
            out.append(bm25)
        if dense is None:
            dense = RetrieverSpec("dense", "dense", report=False, key_path=spec.key_path)
            out.append(dense)
        out[i] = replace(spec, of=(bm25.name, dense.name))
    if rerank:
        firsts = [s for s in out if s.report and s.kind not in ("rerank", "live")]
        for s in firsts:
            out.append(
                RetrieverSpec(
                    f"{s.name}>rerank",
                    "rerank",
                    model=rerank,
                    params={"depth": rerank_depth},
                    of=(s.name,),
                    key_path="--rerank",
                )
            )
    check_references(out)
    return tuple(out)


def add_rerankers(specs: Sequence[RetrieverSpec], model: str, *, depth: int = 100) -> tuple[RetrieverSpec, ...]:
    """``specs`` plus a re-ranked copy (``NAME>rerank``) of every reported first-stage retriever."""
    return _complete(list(specs), rerank=model, rerank_depth=depth)


def parse_index_spec(text: str, where: str = "--index") -> list[IndexSpec]:
    """``hnsw``, ``hnsw:M=32,ef_search=64``, ``ivf-pq:nlist=64,m=48,nbits=8``; ``|`` makes a grid (``M=16|32``).

    >>> [s.label() for s in parse_index_spec("hnsw:M=16|32,ef_search=64")]
    ['hnsw(M=16,ef_search=64)', 'hnsw(M=32,ef_search=64)']
    """
    kind, _, rest = text.strip().partition(":")
    params: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"expected NAME=VALUE in {text!r}, got {item!r}", key_path=where)
        values = [_number(v.strip(), f"{where}.params.{key.strip()}") for v in value.split("|")]
        params[key.strip()] = values if len(values) > 1 else values[0]
    return list(_expand_index(kind.strip().lower(), params, where))


def _number(text: str, where: str) -> Any:
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"must be an int (or auto). Got {text!r} instead.", key_path=where) from None


def _expand_index(kind: str, params: Mapping[str, Any], where: str) -> Iterator[IndexSpec]:
    for point in _grid(params, where=f"{where}.params"):
        yield IndexSpec(kind, point, key_path=where)


def _grid(params: Mapping[str, Any], *, where: str, keep: frozenset[str] = frozenset()) -> Iterator[dict[str, Any]]:
    """Every combination of list-valued parameters (those in ``keep`` are single values)."""
    names = list(params)
    axes = []
    for name in names:
        value = params[name]
        if isinstance(value, list) and name not in keep:
            if not value:
                raise ConfigError("an empty list gives no configuration", key_path=f"{where}.{name}")
            axes.append(value)
        else:
            axes.append([value])
    for combo in itertools.product(*axes):
        yield dict(zip(names, combo, strict=True))


def check_references(specs: Sequence[RetrieverSpec]) -> None:
    """Names are unique; hybrid and rerank entries refer to retrievers defined without a grid."""
    seen: dict[str, str] = {}
    for s in specs:
        if s.name in seen:
            raise ConfigError(f"duplicate retriever name {s.name!r} (also at {seen[s.name]})", key_path=s.key_path)
        seen[s.name] = s.key_path
    for s in specs:
        for ref in s.of:
            if ref not in seen:
                raise ConfigError(
                    f"refers to retriever {ref!r}, which is not defined (names: {', '.join(seen)})",
                    key_path=f"{s.key_path}.of",
                )
            if ref == s.name:
                raise ConfigError("a retriever cannot fuse or re-rank itself", key_path=f"{s.key_path}.of")
            if any(o.name == ref and o.kind == "live" for o in specs):
                raise ConfigError(
                    f"{ref!r} is a live retriever: it cannot be fused or re-ranked (yet)", key_path=f"{s.key_path}.of"
                )
        weights = s.params.get("weights")
        if weights is not None and len(weights) != len(s.of):
            raise ConfigError(
                f"{len(weights)} weights for {len(s.of)} fused retrievers", key_path=f"{s.key_path}.params.weights"
            )
