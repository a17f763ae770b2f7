"""How statistics read in every text output (tables, Markdown, LaTeX), so that one rule serves all."""

from __future__ import annotations

import math

P_FLOOR = 0.0001  # the smallest p written with four decimals; below it, "<0.0001" (never "0.0000")


def p_text(p: float | None) -> str:
    """A p-value with four decimals; one that would round to zero reads "<0.0001", a missing one "-".

    >>> p_text(0.04213), p_text(4e-05), p_text(0.0), p_text(None), p_text(float("nan"))
    ('0.0421', '<0.0001', '<0.0001', '-', '-')
    """
    if p is None or math.isnan(p):
        return "-"
    return f"<{P_FLOOR}" if round(p, 4) < P_FLOOR else f"{p:.4f}"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, in the plural unless ``n`` is one: "1 comparison", "3 comparisons".

    >>> plural(1, "comparison"), plural(3, "comparison"), plural(2, "query", "queries")
    ('1 comparison', '3 comparisons', '2 queries')
    """
    return f"{n} {word if n == 1 else many or word + 's'}"
