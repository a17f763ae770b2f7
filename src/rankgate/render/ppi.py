"""Text and JSON of a prediction-powered evaluation (``rankgate eval --ppi``) and of multi-rater agreement."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def _ci(entry: Mapping[str, Any]) -> str:
    low, high = entry["ci"]
    if entry["mean"] is None or low is None:
        return "n/a"
    return f"{entry['mean']:.4f} [{low:.4f}, {high:.4f}]"


def render_ppi(body: Mapping[str, Any], fmt: str) -> str:
    """``body`` of `rankgate.label.ppi.evaluate_ppi` as a table (naive, human-only, PPI side by side) or JSON."""
    if fmt == "json":
        return json.dumps(body, indent=2)
    from rich.table import Table

    from rankgate.render.eval import to_text

    q = body["queries"]
    level = round(100 * body["confidence"])
    t = Table(
        title=f"prediction-powered means ({level}% CI): {q['llm']} queries judged by the LLM, {q['human']} by humans",
        title_justify="left",
    )
    for name in ("measure", "naive (LLM only)", "human only", "PPI (corrected)", "LLM bias"):
        t.add_column(name, justify="left" if name == "measure" else "right")
    for name, entry in body["measures"].items():
        bias = entry["rectifier"]["mean"]
        t.add_row(
            name, _ci(entry["naive"]), _ci(entry["human_only"]), _ci(entry["ppi"]), "n/a" if bias is None else f"{bias:+.4f}"
        )
    text = to_text(t, width=140)
    if q["human_not_in_llm"]:
        text += f"note: human-judged queries the LLM evaluation lacks were left out, e.g. {q['human_not_in_llm'][0]!r}\n"
    return text
