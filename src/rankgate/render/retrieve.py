"""Text and JSON of a `rankgate retrieve` run (`rankgate.retrieve.outcome.RetrieveReport`).

Text is plain lines; every string that came from the user or a service (ids, error messages,
paths) has its control characters made visible (`plain`), so an answer cannot move the cursor or
colour the terminal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rankgate.render.escape import plain

EXAMPLES = 5  # query ids named in a line before "..."


def summary_json(summary: dict[str, Any]) -> str:
    """The JSON summary (``--format json``, ``--summary FILE``)."""
    return json.dumps(summary, indent=2, ensure_ascii=False)


def summary_text(summary: dict[str, Any]) -> str:
    """A few lines: counts, latency and speed, outputs (failures and warnings are printed apart)."""
    identity = summary["retriever"]["identity"]
    where = identity.get("url") or identity.get("target") or identity.get("path") or ""
    kind = summary["retriever"]["kind"]
    lines = [
        f"{summary['queries']:,} {'query' if summary['queries'] == 1 else 'queries'}, k={summary['k']}, "
        f"from {kind} {plain(where)}".strip(),
        f"answered {summary['answered']:,} ({summary['from_cache']:,} from the cache), failed {summary['failed']:,}, "
        f"retries {summary['retries']:,}",
    ]
    latency = summary["latency_ms"]
    if latency is not None:
        speed = f"; {summary['qps']:,.1f} q/s over {summary['wall_s']:.2f} s" if summary["qps"] is not None else ""
        failed = summary["failed"]
        counted = (
            f" ({failed:,} failed {'query' if failed == 1 else 'queries'} counted at the time they took)"
            if failed
            else ""
        )
        lines.append(
            f"latency ms: p50 {latency['p50']:.1f}, p95 {latency['p95']:.1f}, p99 {latency['p99']:.1f}, "
            f"mean {latency['mean']:.1f}{counted}{speed}"
        )
    for key, what in (("run", "run"), ("jsonl", "jsonl"), ("cache", "cache")):
        if summary[key] is not None:
            lines.append(f"{what}: {plain(summary[key])}")
    return "\n".join(lines)


def failure_lines(summary: dict[str, Any], *, kept: Sequence[str] = (), limit: int = 20) -> list[str]:
    """The failed queries, for stderr: one line per error, naming its queries (at most ``limit`` lines).

    Queries that failed with the same error share a line, and when every query failed with one
    error, that is one line. Where queries go unnamed, the last line says where the full list is:
    ``kept`` (the outputs that hold it, e.g. the ``--summary`` and ``--jsonl`` files), else the
    options that would keep it.

    >>> summary = {"queries": 3, "failures": [{"query_id": q, "error": "HTTP 500"} for q in ("a", "b", "c")]}
    >>> failure_lines(summary)
    ['all 3 queries failed: HTTP 500']
    >>> summary["queries"] = 9
    >>> failure_lines(summary)
    ['failed: 3 queries (a, b, c): HTTP 500']
    >>> summary["failures"] += [{"query_id": f"q{i}", "error": f"HTTP 40{i}"} for i in range(3)]
    >>> for line in failure_lines(summary, kept=["run.jsonl"], limit=2):
    ...     print(line)
    failed: 3 queries (a, b, c): HTTP 500
    failed: q0: HTTP 400
    ... and 2 more; the full list of failed queries is in run.jsonl
    """
    failures = summary["failures"]
    groups: dict[str, list[str]] = {}
    for failure in failures:
        groups.setdefault(str(failure["error"]), []).append(str(failure["query_id"]))
    if len(groups) == 1 and len(failures) == summary["queries"] > 1:
        return [f"all {len(failures):,} queries failed: {plain(next(iter(groups)))}"]
    lines, named = [], 0
    for error, ids in list(groups.items())[:limit]:
        if len(ids) == 1:
            lines.append(f"failed: {plain(ids[0])}: {plain(error)}")
        else:
            shown = ", ".join(plain(q) for q in ids[:EXAMPLES]) + (", ..." if len(ids) > EXAMPLES else "")
            lines.append(f"failed: {len(ids):,} queries ({shown}): {plain(error)}")
        named += min(len(ids), EXAMPLES)
    if named < len(failures):
        unshown = sum(len(ids) for ids in list(groups.values())[limit:])
        where = (
            f"the full list of failed queries is in {' and '.join(plain(k) for k in kept)}"
            if kept
            else "pass --summary FILE or --jsonl FILE to keep the full list of failed queries"
        )
        lines.append(f"... and {unshown:,} more; {where}" if unshown else where)
    return lines
