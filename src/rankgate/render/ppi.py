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

    from rankgate.render.terminal import to_text

    q = body["queries"]
    level = round(100 * body["confidence"])
    t = Table(
        title=f"prediction-powered means ({level}% CI): {q['llm']} queries judged by the LLM, {q['human']} by humans",
        title_justify="left",
    )
    for name in ("measure", "naive (LLM only)", "human only", "PPI (corrected)", "LLM bias"):
        t.add_column(name, justify="left" if name == "measure" else "right", no_wrap=name == "measure")
    for name, entry in body["measures"].items():
        bias = entry["rectifier"]["mean"]
        t.add_row(
            name,
            _ci(entry["naive"]),
            _ci(entry["human_only"]),
            _ci(entry["ppi"]),
            "n/a" if bias is None else f"{bias:+.4f}",
        )
    text = to_text(t)
    if q["human_not_in_llm"]:
        text += (
            f"note: human-judged queries the LLM evaluation lacks were left out, e.g. {q['human_not_in_llm'][0]!r}\n"
        )
    return text


def _stat(entry: Mapping[str, Any]) -> str:
    if entry["value"] is None:
        return "n/a"
    ci = entry.get("ci")
    return f"{entry['value']:.4f}" + (f" [{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "")


def raters_tables(body: Mapping[str, Any]) -> str:
    """Multi-rater agreement (`rankgate.label.raters.multi_rater_agreement`) as text tables."""
    from rich.table import Table

    from rankgate.render.terminal import to_text

    t = Table(
        title=f"agreement of {len(body['raters'])} raters on {body['units']} pairs (95% bootstrap CI)",
        title_justify="left",
    )
    for name in ("statistic", "pairs", "value [CI]"):
        t.add_column(name, justify="left" if name == "statistic" else "right", no_wrap=name == "statistic")
    t.add_row("Fleiss' kappa", str(body["fleiss_kappa"]["units"]), _stat(body["fleiss_kappa"]))
    for level, entry in body["krippendorff_alpha"].items():
        t.add_row(f"Krippendorff's alpha ({level})", str(entry["units"]), _stat(entry))
    for row in body["pairwise"]:
        a, b = row["raters"]
        for weights, entry in row["kappa"].items():
            t.add_row(f"Cohen's kappa {a} ~ {b} ({weights})", str(row["units"]), _stat(entry))
    return to_text(t)


def merge_text(info: Mapping[str, Any]) -> str:
    """What a merge strategy did; for Dawid-Skene, the priors and each rater's confusion matrix."""
    lines = [f"{info['strategy']}: {info['pairs']} pairs, labels {info['labels']}"]
    ds = info.get("dawid_skene")
    if ds:
        lines.append(f"dawid-skene: {ds['iterations']} EM iterations; estimated label shares {ds['priors']}")
        for name, entry in ds["confusion"].items():
            lines.append(f"confusion matrix of {name} (rows: true label, columns: label given):")
            lines.extend("  " + " ".join(f"{x:.3f}" for x in row) for row in entry["matrix"])
    return "\n".join(lines)
