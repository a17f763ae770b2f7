"""The operational figures of a gate run: read ``--bench`` (and ``--baseline-bench``), pick each
gate's row, find the baseline's figure (a file, or the stored baseline's figures), and say
what to record in the store next to the quality numbers."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rankgate.errors import ConfigError
from rankgate.gate.config import GateConfig
from rankgate.gate.figures import Figure, FigureSource, figure_value, read_figures
from rankgate.gate.rules import active_rules


@dataclass
class Operational:
    """Each operational gate's ``(value, baseline value or None, source)`` and the figures to store."""

    values: dict[int, tuple[float, float | None, str]] = field(default_factory=dict)
    record: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def check_bench_given(cfg: GateConfig, bench: Any) -> None:
    """An operational gate without ``--bench`` is a config error naming the gate (before any work)."""
    if bench is None and cfg.figure_gates:
        i, gate = cfg.figure_gates[0]
        raise ConfigError(
            f"{gate.figure} is an operational figure: pass the `rankgate bench --format json` file or the "
            "`rankgate retrieve` JSON summary with --bench FILE",
            key_path=f"gates[{i}].metric",
            source=cfg.source,
        )


def read_operational(
    cfg: GateConfig,
    bench: str | os.PathLike[str] | None,
    baseline_bench: str | os.PathLike[str] | None,
    stored: Mapping[str, float] | None,
) -> Operational:
    """The figures every operational gate of ``cfg`` decides on.

    Args:
        cfg: the gate config.
        bench: the candidate's bench JSON or retrieve summary.
        baseline_bench: the baseline's; without it the stored baseline's figures (``stored``).
        stored: the stored baseline's figures (`rankgate.store.result.StoredResult.figures`).

    A gate's baseline figure comes from ``baseline_bench`` (the row its ``retriever``/``index``
    pick, or its ``baseline_retriever``/``baseline_index``); else, when the gate names a
    ``baseline_index`` or ``baseline_retriever``, from that row of ``bench`` itself (an index
    swap: HNSW against exact in one benchmark); else from the stored baseline.
    """
    out = Operational()
    if bench is None:
        check_bench_given(cfg, bench)
        return out
    current = read_figures(bench)
    base = read_figures(baseline_bench) if baseline_bench is not None else None
    for source, flag in ((current, "--bench"), (base, "--baseline-bench")):
        note = failed_note(source, flag)
        if note:
            out.notes.append(note)
    picked: dict[str, dict[str, Any]] = {}
    for i, gate in cfg.figure_gates:
        figure = gate.figure
        assert figure is not None  # figure_gates holds only those
        key = f"gates[{i}]"
        row = current.pick(retriever=gate.retriever, index=gate.index, k=figure.k, key=key)
        picked.setdefault(row["id"], row)
        value = figure_value(row, figure, current.path)
        baseline = None
        if active_rules(gate):
            other_row = gate.baseline_retriever is not None or gate.baseline_index is not None
            baseline = _baseline_value(
                base if base is not None else current if other_row else None,
                stored,
                gate.baseline_retriever or gate.retriever,
                gate.baseline_index or gate.index,
                figure,
                key,
            )
        out.values[i] = (value, baseline, current.path)
    out.record = _to_record(picked, current.rows, cfg, out)
    return out


def failed_note(source: FigureSource | None, flag: str) -> str | None:
    """A note when a retrieve summary counts failed queries: its figures are not those of a run that
    answered every query, and the run lacks their results; None when none failed.

    >>> failed_note(FigureSource("new.json", [], "retrieve", failed=7, queries=63), "--bench")  # doctest: +ELLIPSIS
    '--bench new.json: 7 of 63 queries failed in `rankgate retrieve` (no answer); its latency and qps are not ...'
    """
    if source is None or not source.failed:
        return None
    of = f" of {source.queries}" if source.queries is not None else ""
    return (
        f"{flag} {source.path}: {source.failed}{of} quer{'y' if source.failed == 1 else 'ies'} failed in "
        "`rankgate retrieve` (no answer); its latency and qps are not those of a run that answered every query"
    )


def _baseline_value(
    base: FigureSource | None,
    stored: Mapping[str, float] | None,
    retriever: str | None,
    index: str | None,
    figure: Figure,
    key: str,
) -> float | None:
    if base is not None:
        return figure_value(base.pick(retriever=retriever, index=index, k=figure.k, key=key), figure, base.path)
    if not stored:
        return None
    if str(figure) in stored:
        return float(stored[str(figure)])
    if figure.k is None:  # neighbor_recall without @K: the stored one, whatever its K
        found = [v for k, v in stored.items() if k.startswith(f"{figure.name}@")]
        return float(found[0]) if len(found) == 1 else None
    return None


def row_figures(row: Mapping[str, Any]) -> dict[str, float]:
    """A picked row's figures under their canonical names (``neighbor_recall@10``), measured ones only."""
    out = {}
    for name, value in row["figures"].items():
        if value is None:
            continue
        if name == "neighbor_recall":
            if row.get("k") is None:
                continue
            name = f"neighbor_recall@{row['k']}"
        out[name] = float(value)
    return out


def _to_record(
    picked: dict[str, dict[str, Any]], rows: list[dict[str, Any]], cfg: GateConfig, out: Operational
) -> dict[str, float]:
    """Every figure of the row the gates read (or of the file's only row, when no gate reads it);
    with several rows read, only the gated figures (first gate wins)."""
    if len(picked) == 1:
        return row_figures(next(iter(picked.values())))
    if not picked:  # no gate reads the bench file: keep its figures for later gates, if it has one row
        if len(rows) == 1:
            return row_figures(rows[0])
        out.notes.append(f"--bench holds {len(rows)} rows and no gate reads one: no figures are stored with the result")
        return {}
    record: dict[str, float] = {}
    for i, gate in cfg.figure_gates:
        record.setdefault(str(gate.figure), out.values[i][0])
    out.notes.append(
        f"the operational gates read {len(picked)} rows of the bench file ({', '.join(picked)}); "
        "only the gated figures are stored with the result"
    )
    return record
