"""Render online comparisons (``rankgate online ab``, ``rankgate online interleave``) as text or JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rankgate.render.retrieve import plain as escape


def _num(value: Any, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1e-3 and value != 0 else f"{value:.{digits}f}"
    return str(value)


def render_ab(body: Mapping[str, Any], fmt: str) -> str:
    """An `AbResult.to_dict()` as JSON or a table: metric, A, B, B - A, CI, p, test, n."""
    if fmt == "json":
        return json.dumps(body, indent=2)
    level = round(100 * body["confidence"])
    header = ["metric", "A", "B", "B - A", f"{level}% CI", "p", "test", "n"]
    rows = [header]
    for row in body["metrics"]:
        ci = row["ci"]
        n = row["n"] if "n" in row else f"{row['n_a']}/{row['n_b']}"
        rows.append(
            [
                row["metric"],
                _num(row["a"]),
                _num(row["b"]),
                _num(row["delta"]),
                f"[{_num(ci[0])}, {_num(ci[1])}]" if ci else "-",
                _num(row["p_value"]),
                row["test"],
                str(n),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [f"B vs A, per {body['unit']} (B - A)"]
    for r in rows:
        cells = [c.ljust(w) if i in (0, 6) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    counts = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in body["counts"].items())
    return "\n".join(lines) + f"\n{counts}\n"


def render_interleaving(body: Mapping[str, Any], fmt: str) -> str:
    """An `InterleavingResult.to_dict()` as JSON or text."""
    if fmt == "json":
        return json.dumps(body, indent=2)
    level = round(100 * body["confidence"])
    lo, hi = body["ci"]
    winner = "A" if body["preference"] > 0 else "B" if body["preference"] < 0 else "neither"
    q = body["queries"]
    lines = [
        f"pages {body['pages']}: A wins {body['wins']}, ties {body['ties']}, B wins {body['losses']}",
        f"queries: A won {q['won']}, tied {q['tied']}, B won {q['lost']}",
        f"preference for A {body['preference']:+.4f} ({level}% CI [{lo:+.4f}, {hi:+.4f}]); preferred: {winner}",
        f"sign test p = {_num(body['sign_test_p'])}",
        "pages needed for a decision: "
        + (str(body["pages_needed"]) if body["pages_needed"] is not None else "- (no preference observed)"),
    ]
    for qid, v in (body.get("per_query") or {}).items():
        lines.append(f"  {escape(qid)}: wins {v['wins']}, ties {v['ties']}, losses {v['losses']}")
    return "\n".join(lines) + "\n"
