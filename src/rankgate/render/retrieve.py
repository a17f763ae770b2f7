"""Text and JSON of a `rankgate retrieve` run (`rankgate.retrieve.outcome.RetrieveReport`).

Text is plain lines; every string that came from the user or a service (ids, error messages,
paths) has its control characters made visible (`plain`), so an answer cannot move the cursor or
colour the terminal.
"""

from __future__ import annotations

import json
import re
from typing import Any

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def plain(text: object) -> str:
    """``text`` with control characters (escape sequences, newlines) shown as ``\\xNN``.

    >>> plain("q1: \\x1b[31mred\\nline")
    'q1: \\\\x1b[31mred\\\\x0aline'
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


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
        lines.append(
            f"latency ms: p50 {latency['p50']:.1f}, p95 {latency['p95']:.1f}, p99 {latency['p99']:.1f}, "
            f"mean {latency['mean']:.1f}{speed}"
        )
    for key, what in (("run", "run"), ("jsonl", "jsonl"), ("cache", "cache")):
        if summary[key] is not None:
            lines.append(f"{what}: {plain(summary[key])}")
    return "\n".join(lines)


def failure_lines(summary: dict[str, Any], *, limit: int = 20) -> list[str]:
    """One line per failed query (the first ``limit``), for stderr."""
    failures = summary["failures"]
    lines = [f"{plain(f['query_id'])}: {plain(f['error'])}" for f in failures[:limit]]
    if len(failures) > limit:
        lines.append(f"... and {len(failures) - limit:,} more (all of them are in the JSON summary and the JSONL file)")
    return lines
