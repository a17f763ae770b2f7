"""Render a `Comparison` as a table, JSON, Markdown or LaTeX."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rankgate.comparison.compare import Comparison
from rankgate.render.numbers import p_text, plural


def render(comparison: Comparison, fmt: str) -> str:
    if fmt == "json":
        return comparison.to_json()
    if fmt == "markdown":
        return _markdown(comparison)
    if fmt == "latex":
        return _latex(comparison)
    if fmt == "table":
        from rankgate.render.terminal import to_text

        return to_text(table(comparison))
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
    "<": r"\textless{}",  # in text mode "<" and ">" print as other glyphs under the default font encoding
    ">": r"\textgreater{}",
}

HEADERS = ("system", "measure", "baseline", "mean", "delta", "rel.", "95% CI", "p (adj.)", "W/T/L")
RANDOMIZATION_HEADER = "p rand."  # with --randomization: the randomization test's p, unadjusted


def _with_randomization(comparison: Comparison) -> bool:
    """Whether the rows carry the randomization test's p beside the reported test's (``--randomization``)."""
    return any("randomization_p_value" in r for r in comparison.rows)


def _headers(comparison: Comparison) -> tuple[str, ...]:
    if not _with_randomization(comparison):
        return HEADERS
    return (*HEADERS[:-1], RANDOMIZATION_HEADER, HEADERS[-1])


def _cells(comparison: Comparison, row: dict[str, Any]) -> list[str]:
    mark = " *" if row["significant"] else ""
    rel = row["relative_delta"]
    lo, hi = row["ci"]
    randomization = [p_text(row["randomization_p_value"])] if _with_randomization(comparison) else []
    return [
        row["system"],
        row["measure"],
        f"{row['baseline_mean']:.4f}",
        f"{row['mean']:.4f}",
        f"{row['delta']:+.4f}{mark}",
        "-" if rel is None or (isinstance(rel, float) and math.isnan(rel)) else f"{rel:+.1%}",
        f"[{lo:+.4f}, {hi:+.4f}]",
        p_text(row["p_adjusted"]),
        *randomization,
        f"{row['wins']}/{row['ties']}/{row['losses']}",
    ]


def footer(comparison: Comparison) -> str:
    s = comparison.settings
    text = (
        f"baseline: {comparison.baseline}; {len(comparison.query_ids)} queries; "
        f"p (adj.): {'paired t-test' if s['test'] == 't' else 'paired randomization test'}"
        f"{'; p rand.: paired randomization test, unadjusted' if _with_randomization(comparison) else ''}; "
        f"{s['correction']} correction over {plural(s['family_size'], 'comparison')}; "
        f"CI: {s['confidence']:.0%} paired bootstrap, {s['n_resamples']} resamples, seed {s['seed']}; "
        f"* = adjusted p < {s['alpha']}"
    )
    text += "\n" + _query_policy(s.get("queries"))
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


def _query_policy(queries: Any) -> str:
    """The query set the means were taken over, in words (DESIGN.md's query policy)."""
    if queries == "intersection":
        return "queries: those in both the qrels and each run (--queries intersection); then those all runs share"
    return "queries: every query in the qrels; a query missing from a run scores 0 in it (trec_eval -c)"


TAG_HEADERS = ("system", "measure", "tag", "n", "baseline", "mean", "delta", "95% CI")


def _tag_cells(row: dict[str, Any]) -> list[str]:
    lo, hi = row["ci"]
    ci = "-" if lo is None or math.isnan(lo) else f"[{lo:+.4f}, {hi:+.4f}]"
    size = f"{row['n']}" + (" (small)" if row["small"] else "")
    return [row["system"], row["measure"], f"{row['tag']}={row['value']}", size,
            f"{row['baseline_mean']:.4f}", f"{row['mean']:.4f}", f"{row['delta']:+.4f}", ci]  # fmt: skip


PAIR_HEADERS = ("measure", "a", "b", "mean a", "mean b", "b - a", "p")


def _pair_cells(comparison: Comparison, r: dict[str, Any]) -> list[str]:
    mark = " *" if r["p_value"] < comparison.settings["alpha"] else ""
    return [r["measure"], r["a"], r["b"], f"{r['mean_a']:.4f}", f"{r['mean_b']:.4f}",
            f"{r['delta']:+.4f}{mark}", p_text(r["p_value"])]  # fmt: skip


@dataclass(frozen=True)
class _Section:
    """One table of the output: every format (rich, Markdown, LaTeX) draws the same sections."""

    title: str | None
    headers: tuple[str, ...]
    rows: list[list[str]]
    styles: list[str | None]
    left: tuple[str, ...]  # columns aligned left (the rest are numbers)


def _sections(comparison: Comparison) -> list[_Section]:
    out = [
        _Section(
            None,
            _headers(comparison),
            [_cells(comparison, r) for r in comparison.rows],
            ["bold" if r["significant"] else None for r in comparison.rows],
            ("system", "measure"),
        )
    ]
    if comparison.pairs:
        n = comparison.settings.get("n_permutations")
        out.append(
            _Section(
                f"All pairs (randomized Tukey HSD, family-wise p{f', {n} permutations' if n else ''})",
                PAIR_HEADERS,
                [_pair_cells(comparison, r) for r in comparison.pairs],
                [None for _ in comparison.pairs],
                ("measure", "a", "b"),
            )
        )
    if comparison.by_tag:
        out.append(
            _Section(
                "By tag (worst delta first; small = under 10 queries; unadjusted p)",
                TAG_HEADERS,
                [_tag_cells(r) for r in comparison.by_tag],
                ["dim" if r["small"] else None for r in comparison.by_tag],
                ("system", "measure", "tag"),
            )
        )
    return out


def table(comparison: Comparison) -> Any:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[Any] = []
    for section in _sections(comparison):
        t = Table(title=section.title)
        for h in section.headers:
            left = h in section.left  # system and measure names, tags: identifiers, never shrunk
            t.add_column(h, justify="left" if left else "right", no_wrap=left)
        for cells, style in zip(section.rows, section.styles, strict=True):
            t.add_row(*cells, style=style)
        parts.append(t)
        if section.title is None:  # the main table: the footer right under it
            parts.append(Text(footer(comparison), style="dim"))
    return Group(*parts)


def _markdown(comparison: Comparison) -> str:
    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    blocks = []
    for section in _sections(comparison):
        lines = [f"**{section.title}**", ""] if section.title else []
        lines += [row(section.headers), "|" + "|".join("---" for _ in section.headers) + "|"]
        lines += [row(cells) for cells in section.rows]
        if section.title is None:
            lines += ["", *(f"_{line}_  " for line in footer(comparison).splitlines())]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _latex(comparison: Comparison) -> str:
    def esc(text: str) -> str:
        return "".join(LATEX_ESCAPES.get(ch, ch) for ch in text)

    blocks = []
    for section in _sections(comparison):
        align = "".join("l" if h in section.left else "r" for h in section.headers)
        lines = [f"% {esc(section.title)}"] if section.title else []
        lines += [rf"\begin{{tabular}}{{{align}}}", r"\toprule", " & ".join(esc(h) for h in section.headers) + r" \\"]
        lines.append(r"\midrule")
        lines += [" & ".join(esc(c) for c in cells) + r" \\" for cells in section.rows]
        lines += [r"\bottomrule", r"\end{tabular}"]
        if section.title is None:
            lines.append("% " + footer(comparison).replace("\n", "\n% "))
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)
