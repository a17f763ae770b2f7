"""Render a `Comparison` as a table, JSON, Markdown or LaTeX."""

from __future__ import annotations

import math
from typing import Any

from rankgate.stats.comparison import Comparison


def render(comparison: Comparison, fmt: str) -> str:
    if fmt == "json":
        return comparison.to_json()
    if fmt == "markdown":
        return _markdown(comparison)
    if fmt == "latex":
        return _latex(comparison)
    if fmt == "table":
        from rankgate.report.eval_output import to_text

        return to_text(table(comparison), width=140)
    raise ValueError(f"unknown format {fmt!r}")


LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "_": r"\_",
    "#": r"\#",
    "$": r"\$",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\^{}",
}

HEADERS = ("system", "measure", "baseline", "mean", "delta", "rel.", "95% CI", "p (adj.)", "W/T/L")


def _cells(comparison: Comparison, row: dict[str, Any]) -> list[str]:
    mark = " *" if row["significant"] else ""
    rel = row["relative_delta"]
    lo, hi = row["ci"]
    return [
        row["system"],
        row["measure"],
        f"{row['baseline_mean']:.4f}",
        f"{row['mean']:.4f}",
        f"{row['delta']:+.4f}{mark}",
        "-" if rel is None or (isinstance(rel, float) and math.isnan(rel)) else f"{rel:+.1%}",
        f"[{lo:+.4f}, {hi:+.4f}]",
        f"{row['p_adjusted']:.4f}",
        f"{row['wins']}/{row['ties']}/{row['losses']}",
    ]


def footer(comparison: Comparison) -> str:
    s = comparison.settings
    text = (
        f"baseline: {comparison.baseline}; {len(comparison.query_ids)} queries; {s['test']} test"
        f"{' + randomization test' if s['randomization'] and s['test'] == 't' else ''}; "
        f"{s['correction']} correction over {s['family_size']} comparisons; "
        f"CI: {s['confidence']:.0%} paired bootstrap, {s['n_resamples']} resamples, seed {s['seed']}; "
        f"* = adjusted p < {s['alpha']}"
    )
    mde = ", ".join(
        f"{r['measure']} {r['mde']:.3f}" for r in comparison.rows if r["system"] == comparison.rows[0]["system"]
    )
    text += f"\nsmallest delta these queries detect (power 0.8): {mde}"
    if s.get("detect") is not None:
        need = ", ".join(f"{r['system']}/{r['measure']} {r.get('queries_needed') or '-'}" for r in comparison.rows)
        text += f"\nqueries needed to detect a delta of {s['detect']}: {need}"
    for note in comparison.notes:
        text += f"\nnote: {note}"
    return text


TAG_HEADERS = ("system", "measure", "tag", "n", "baseline", "mean", "delta", "95% CI")


def _tag_cells(row: dict[str, Any]) -> list[str]:
    lo, hi = row["ci"]
    ci = "-" if lo is None or math.isnan(lo) else f"[{lo:+.4f}, {hi:+.4f}]"
    size = f"{row['n']}" + (" (small)" if row["small"] else "")
    return [row["system"], row["measure"], f"{row['tag']}={row['value']}", size,
            f"{row['baseline_mean']:.4f}", f"{row['mean']:.4f}", f"{row['delta']:+.4f}", ci]  # fmt: skip


def table(comparison: Comparison) -> Any:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    t = Table()
    for h in HEADERS:
        t.add_column(h, justify="left" if h in ("system", "measure") else "right")
    for row in comparison.rows:
        t.add_row(*_cells(comparison, row), style="bold" if row["significant"] else None)
    parts: list[Any] = [t, Text(footer(comparison), style="dim")]
    if comparison.pairs:
        pt = Table(title="All pairs (randomized Tukey HSD, family-wise p)")
        for h in ("measure", "a", "b", "mean a", "mean b", "b - a", "p"):
            pt.add_column(h, justify="left" if h in ("measure", "a", "b") else "right")
        for r in comparison.pairs:
            mark = " *" if r["p_value"] < comparison.settings["alpha"] else ""
            pt.add_row(r["measure"], r["a"], r["b"], f"{r['mean_a']:.4f}", f"{r['mean_b']:.4f}",
                       f"{r['delta']:+.4f}{mark}", f"{r['p_value']:.4f}")  # fmt: skip
        parts.append(pt)
    if comparison.by_tag:
        b = Table(title="By tag (worst delta first; small = under 10 queries)")
        for h in TAG_HEADERS:
            b.add_column(h, justify="left" if h in ("system", "measure", "tag") else "right")
        for row in comparison.by_tag:
            b.add_row(*_tag_cells(row), style="dim" if row["small"] else None)
        parts.append(b)
    return Group(*parts)


def _markdown(comparison: Comparison) -> str:
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "|".join("---" for _ in HEADERS) + "|"]
    for row in comparison.rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in _cells(comparison, row)) + " |")
    out = "\n".join(lines) + "\n\n" + "\n".join(f"_{line}_  " for line in footer(comparison).splitlines()) + "\n"
    if comparison.by_tag:
        out += "\n| " + " | ".join(TAG_HEADERS) + " |\n|" + "|".join("---" for _ in TAG_HEADERS) + "|\n"
        out += "\n".join("| " + " | ".join(_tag_cells(r)) + " |" for r in comparison.by_tag) + "\n"
    return out


def _latex(comparison: Comparison) -> str:
    def esc(text: str) -> str:
        return "".join(LATEX_ESCAPES.get(ch, ch) for ch in text)

    lines = [
        r"\begin{tabular}{ll" + "r" * (len(HEADERS) - 2) + "}",
        r"\toprule",
        " & ".join(esc(h) for h in HEADERS) + r" \\",
        r"\midrule",
    ]
    for row in comparison.rows:
        lines.append(" & ".join(esc(c) for c in _cells(comparison, row)) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", "% " + footer(comparison).replace("\n", "\n% ")]
    return "\n".join(lines) + "\n"
