"""Render answer-aware results (``rankgate rag answers``, ``rankgate rag context``) as text or JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rankgate.render.numbers import plural


def render(body: Mapping[str, Any], fmt: str, *, title: str) -> str:
    """``body`` (a result's ``to_dict()``) as JSON, or as text: the means, the counts, then per query if present."""
    if fmt == "json":
        return json.dumps(body, indent=2)
    if fmt != "text":
        raise ValueError(f"unknown format {fmt!r}")
    from rich.table import Table

    from rankgate.render.terminal import to_text

    summary = Table()
    summary.add_column("measure", no_wrap=True)
    summary.add_column("mean", justify="right")
    for name in body["measures"]:
        summary.add_row(name, _cell(body["aggregate"][name]))  # a mean over no query: "-" (null in JSON)
    counts = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in body["queries"].items())
    parts = [f"{title}\n", to_text(summary), f"queries: {counts}\n"]
    for line in body.get("notes", []):
        parts.append(f"note: {line}\n")
    per_query = body.get("per_query")
    if per_query:
        columns = list(next(iter(per_query.values())))
        table = Table(title="per query")
        table.add_column("query", no_wrap=True)
        for c in columns:
            table.add_column(c, justify="right", no_wrap=True)
        for qid, values in per_query.items():
            table.add_row(qid, *(_cell(values[c]) for c in columns))
        parts.append(to_text(table))
    return "".join(parts)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


_GO_ON = {
    "max-cost": "run the same command again to go on (each run spends up to --max-cost)",
    "claimed": "run the same command again once the other run is done",
}


def context_incomplete_text(body: Mapping[str, Any]) -> str:
    """The last line of a ``rag context`` left incomplete: what is missing, and what brings it in.

    ``body`` is `ContextReport.to_dict()`: unreadable verdicts are stored as failed and only
    ``--retry-failed`` asks for them again; verdicts that got no answer are asked by any rerun.

    >>> body = {"queries": {"incomplete": 7}, "stop_reason": None,
    ...         "judgments": {"recall": {"failed": 9, "errors": 0}, "precision": {"failed": 14, "errors": 1}}}
    >>> print(context_incomplete_text(body))  # doctest: +NORMALIZE_WHITESPACE
    error: 7 queries incomplete; 23 verdicts are unreadable and stored as failed: rerun with --retry-failed to ask
    for them again (--json-mode or more --parse-retries may help); 1 verdict got no answer: run the same command
    again to ask for it; exit 1
    """
    from rankgate.render.label import STOP_TEXT

    counts = [body["judgments"][name] for name in ("recall", "precision")]
    failed, errors = (sum(c.get(key, 0) for c in counts) for key in ("failed", "errors"))
    parts = []
    if failed:
        parts.append(
            f"{_verdicts(failed)} unreadable and stored as failed: rerun with --retry-failed to ask for "
            f"{'it' if failed == 1 else 'them'} again (--json-mode or more --parse-retries may help)"
        )
    if errors:
        them = "it" if errors == 1 else "them"
        parts.append(f"{_verdicts(errors, 'got')} no answer: run the same command again to ask for {them}")
    stop = body.get("stop_reason")
    if stop in _GO_ON:
        parts.append(f"{STOP_TEXT[stop]}: {_GO_ON[stop]}")
    incomplete = plural(body["queries"]["incomplete"], "query", "queries")
    return f"error: {incomplete} incomplete; {'; '.join(parts) or 'some verdicts are missing'}; exit 1"


def _verdicts(n: int, verb: str = "") -> str:
    """ "1 verdict is" / "3 verdicts are", or with ``verb``: "1 verdict got"."""
    return f"{plural(n, 'verdict')} {verb or ('is' if n == 1 else 'are')}"
