"""Render an `Overlap` (``rankgate overlap``) as text tables or JSON."""

from __future__ import annotations

import json
from typing import Any

from rankgate.comparison.overlap import FAMILIES, Overlap


def render(result: Overlap, fmt: str, *, worst: int = 10, per_query: bool = False) -> str:
    """``result`` as ``rankgate overlap --format FMT`` prints it ("text" or "json")."""
    if fmt == "json":
        return json.dumps(result.to_dict(per_query=True, worst=worst), indent=2)
    if fmt == "text":
        return text(result, worst=worst, per_query=per_query)
    raise ValueError(f"unknown format {fmt!r}")


def text(result: Overlap, *, worst: int = 10, per_query: bool = False) -> str:
    """The mean of each measure (a row per cutoff), the counts, the worst queries."""
    from rich.table import Table

    from rankgate.render.terminal import to_text

    a, b = result.names
    ks = result.settings["ks"]
    summary = Table()
    summary.add_column("k", justify="right")
    for family in FAMILIES:
        summary.add_column(family if family != "RBO" else f"RBO (p={result.settings['p']})", justify="right")
    for k in ks:
        summary.add_row(str(k), *(f"{result.aggregate[f'{family}@{k}']:.4f}" for family in FAMILIES))
    q = result.queries
    counts = f"queries: {q['both']} in both runs, {q['only_a']} only in {a}, {q['only_b']} only in {b}"
    counts += f" ({result.settings['queries']}: {q['evaluated']} evaluated)\n"
    head = f"agreement of {b} with {a}: mean over {result.queries['evaluated']} queries\n"
    parts = [head, to_text(summary), counts]
    rows = result.per_query.items() if per_query else [(qid, result.per_query[qid]) for qid, _ in result.worst(worst)]
    if rows:
        key = result.measures[-1]
        title = "per query" if per_query else f"the {len(rows)} queries with the lowest {key}"
        parts.append(to_text(_query_table(title, list(rows), ks)))
    return "".join(parts)


def _query_table(title: str, rows: list[tuple[str, dict[str, float]]], ks: list[int]) -> Any:
    from rich.table import Table

    table = Table(title=title)
    table.add_column("query", no_wrap=True)
    for k in ks:
        for family in FAMILIES:
            table.add_column(f"{family}@{k}", justify="right")
    for qid, values in rows:
        table.add_row(qid, *(f"{values[f'{family}@{k}']:.4f}" for k in ks for family in FAMILIES))
    return table
