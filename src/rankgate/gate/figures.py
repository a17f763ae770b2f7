"""Operational figures a gate can check: latency, throughput, index size, build time, neighbor recall.

They come from ``rankgate bench --format json`` (one row per configuration under ``results``)
or from ``rankgate retrieve``'s JSON summary (``{"queries", "failed", "latency_ms": {"p50",
"p95", "p99", "mean"}, "qps", "wall_s", "retriever"}``), given to the gate with ``--bench``.
A figure is one number per file (no per-query values), so its gates decide on the observed
values: a ceiling (``max``) for lower-is-better figures, a floor (``threshold``) for
higher-is-better ones, and limits or bars against the baseline's figure.

>>> parse_figure("latency_p95_ms"), parse_figure("neighbor_recall@10").k
(Figure(name='latency_p95_ms', k=None), 10)
>>> suggest_figure("p95")
['latency_p95_ms']
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rankgate.errors import ConfigError, InputError

# name -> (higher is better, unit shown after a value)
FIGURES: dict[str, tuple[bool, str]] = {
    "latency_p50_ms": (False, " ms"),
    "latency_p95_ms": (False, " ms"),
    "latency_p99_ms": (False, " ms"),
    "qps": (True, " q/s"),
    "neighbor_recall": (True, ""),
    "index_mb": (False, " MB"),
    "build_s": (False, " s"),
}
NAMES = (*[n for n in FIGURES if n != "neighbor_recall"], "neighbor_recall@K")


@dataclass(frozen=True)
class Figure:
    """One operational figure; ``str()`` is its canonical name (``neighbor_recall@10``)."""

    name: str
    k: int | None = None

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"

    @property
    def higher_is_better(self) -> bool:
        return FIGURES[self.name][0]

    @property
    def unit(self) -> str:
        return FIGURES[self.name][1]

    @property
    def fraction(self) -> bool:
        """Neighbor recall is a 0-1 fraction (shown as a percentage); the rest are plain numbers."""
        return self.name == "neighbor_recall"


def parse_figure(text: str) -> Figure | None:
    """The figure ``text`` names, or None when it names none (then it may be a measure)."""
    name, at, k = text.strip().partition("@")
    if name not in FIGURES:
        return None
    if name != "neighbor_recall":
        return None if at else Figure(name)
    if not at:
        return Figure(name)
    if not k.isdigit() or int(k) < 1:
        raise ConfigError(f"neighbor_recall@K takes a cutoff K >= 1, e.g. neighbor_recall@10 (got {text!r})")
    return Figure(name, int(k))


def suggest_figure(text: str) -> list[str]:
    """Figure names close to a mistyped one (``p95`` -> ``latency_p95_ms``)."""
    word = text.strip().lower()
    if len(word) < 2:
        return []
    inside = [n for n in NAMES if word in n]
    return inside or difflib.get_close_matches(word, NAMES, n=3, cutoff=0.6)


@dataclass(frozen=True)
class FigureSource:
    """The rows of one bench JSON or retrieve summary, each a ``{figure: value}`` with its id."""

    path: str
    rows: list[dict[str, Any]]  # {"id", "retriever", "index", "k", "figures": {name: value | None}}
    kind: str  # "bench" | "retrieve"
    failed: int = 0  # a retrieve summary's queries that got no answer (``failed``)
    queries: int | None = None  # and all its queries

    def pick(self, *, retriever: str | None, index: str | None, k: int | None, key: str) -> dict[str, Any]:
        """The one row a gate reads: the rows matching its selectors (``key`` is its key path)."""
        rows = [
            r
            for r in self.rows
            if (retriever is None or r["retriever"] == retriever)
            and (index is None or index in (r["index"], r["index_label"]))
        ]
        if k is not None and len(rows) > 1:
            rows = [r for r in rows if r["k"] == k] or rows
        if len(rows) == 1:
            return rows[0]
        have = ", ".join(r["id"] for r in self.rows[:8]) + (", ..." if len(self.rows) > 8 else "")
        picked = [f"{n}: {v!r}" for n, v in (("retriever", retriever), ("index", index)) if v is not None]
        if not rows:
            raise ConfigError(
                f"no row of {self.path} matches {', '.join(picked)} (rows: {have})",
                key_path=f"{key}.{'retriever' if retriever is not None else 'index'}",
            )
        raise ConfigError(
            f"{len(rows)} rows of {self.path} match this gate (rows: {have}); "
            "pick one with 'retriever:' and 'index:' (the row's retriever and index, e.g. hnsw)",
            key_path=key,
        )


def read_figures(path: str | os.PathLike[str]) -> FigureSource:
    """Read a ``rankgate bench --format json`` file or a ``rankgate retrieve`` JSON summary (with
    its count of failed queries, which the gate notes)."""
    from rankgate.io.jsontext import loads

    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read the file ({e})", source=name) from None
    try:
        data = loads(text, name)
    except ValueError as e:
        raise InputError(f"not a JSON file ({e})", source=name) from None
    if isinstance(data, Mapping) and isinstance(data.get("results"), list):
        rows = [_bench_row(r, name, i) for i, r in enumerate(data["results"])]
        if not rows:
            raise InputError("the bench file holds no result rows", source=name)
        return FigureSource(name, rows, "bench")
    if isinstance(data, Mapping) and isinstance(data.get("latency_ms"), Mapping):
        failed, queries = (_count(data.get(k), k, name) for k in ("failed", "queries"))
        return FigureSource(name, [_retrieve_row(data, name)], "retrieve", failed or 0, queries)
    raise InputError(
        "expected `rankgate bench --format json` output (a 'results' list) or a `rankgate retrieve` "
        "JSON summary ('latency_ms', 'qps')",
        source=name,
    )


def _count(value: Any, where: str, source: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{where} is not a count (got {value!r})", source=source)
    return value


def _number(value: Any, where: str, source: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{where} is not a finite number (got {value!r})", source=source)
    return float(value)


def _bench_row(row: Any, source: str, i: int) -> dict[str, Any]:
    if not isinstance(row, Mapping):
        raise InputError(f"results[{i}] is not an object", source=source)
    latency = row.get("latency_ms") or {}
    size = row.get("memory_bytes", (row.get("build") or {}).get("index_bytes"))
    k = row.get("k")
    figures = {
        "latency_p50_ms": _number(latency.get("p50"), f"results[{i}].latency_ms.p50", source),
        "latency_p95_ms": _number(latency.get("p95"), f"results[{i}].latency_ms.p95", source),
        "latency_p99_ms": _number(latency.get("p99"), f"results[{i}].latency_ms.p99", source),
        "qps": _number(row.get("throughput_qps"), f"results[{i}].throughput_qps", source),
        "neighbor_recall": _number(row.get("neighbor_recall"), f"results[{i}].neighbor_recall", source),
        "index_mb": None if size is None else _number(size, f"results[{i}].memory_bytes", source) / 1e6,  # type: ignore[operator]
        "build_s": _number(
            row.get("build_s", (row.get("build") or {}).get("seconds")), f"results[{i}].build_s", source
        ),
    }
    index = row.get("index")
    params = row.get("params") or {}
    label = (
        "-"
        if index is None
        else index
        if index == "exact" or not params
        else (f"{index}(" + ",".join(f"{a}={b}" for a, b in params.items()) + ")")
    )
    return {
        "id": str(row.get("id") or f"results[{i}]"),
        "retriever": row.get("retriever"),
        "index": index,
        "index_label": label,
        "k": k if isinstance(k, int) and not isinstance(k, bool) else None,
        "figures": figures,
    }


def _retrieve_row(data: Mapping[str, Any], source: str) -> dict[str, Any]:
    latency = data["latency_ms"]
    retriever = data.get("retriever")
    figures: dict[str, float | None] = {
        f"latency_{p}_ms": _number(latency.get(p), f"latency_ms.{p}", source) for p in ("p50", "p95", "p99")
    }
    figures["qps"] = _number(data.get("qps"), "qps", source)
    name = retriever.get("name") if isinstance(retriever, Mapping) else None
    return {"id": str(name or "retrieve"), "retriever": name, "index": None, "index_label": "-", "k": None,
            "figures": figures}  # fmt: skip


def figure_value(row: Mapping[str, Any], figure: Figure, source: str) -> float:
    """The value of ``figure`` in a picked row; a missing one is an `InputError` naming the row."""
    if figure.k is not None and row.get("k") is not None and row["k"] != figure.k:
        raise InputError(
            f"row {row['id']!r} measured neighbor recall at k={row['k']}, not at {figure.k}; "
            f"gate neighbor_recall@{row['k']} or bench with k={figure.k}",
            source=source,
        )
    value = row["figures"].get(figure.name)
    if value is None:
        raise InputError(f"row {row['id']!r} has no {figure} (not measured for this configuration)", source=source)
    return float(value)
