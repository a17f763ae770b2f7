"""Render a leakage report (``rankgate label leakage``) as text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SNIPPET = 160  # characters of a passage shown


def text(body: Mapping[str, Any]) -> str:
    """The counts, each leak with its passage, and the nearest misses (to judge the threshold)."""
    c = body["counts"]
    s = body["settings"]
    lines = [
        f"checked {c['queries_checked']} queries and {c['answers_checked']} answers against {c['passages']} passages "
        f"({s['n']}-word shingles, copy-score threshold {s['threshold']}; {c['short_queries']} queries and "
        f"{c['short_answers']} answers under {s['min_words']} words not checked)",
        f"leaked: {c['flagged_queries']} queries, {c['flagged_answers']} answers ({c['leaked_queries']} query ids)",
    ]
    for leak in body["leaks"]:
        lines.extend(_item(leak))
    if body["near_misses"]:
        lines.append("highest below the threshold:")
        for miss in body["near_misses"]:
            lines.extend(_item(miss))
    if "drop_out" in body:
        lines.append(f"wrote {body['drop_out']['kept']} queries without the leaked ones to {body['drop_out']['path']}")
    return "\n".join(lines) + "\n"


def _item(leak: Mapping[str, Any]) -> list[str]:
    how = "verbatim" if leak["verbatim"] else f"{leak['similarity']:.2f} similar"
    passage = " ".join(str(leak["passage"]).split())
    if len(passage) > SNIPPET:
        passage = passage[: SNIPPET - 3] + "..."
    return [
        f"  {leak['kind']} {leak['query_id']!r} in passage {leak['passage_id']!r} ({how}): {leak['text']!r}",
        f"    passage: {passage!r}",
    ]
