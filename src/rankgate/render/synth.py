"""Render a synthetic golden set's report (``rankgate label synth``) as text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STAGES = (
    ("sampled", "passages sampled"),
    ("asked", "asked (now or in an earlier run)"),
    ("answered", "answered with a question"),
    ("malformed", "malformed answers"),
    ("no_answer", "no answer (asked again next run)"),
    ("not_started", "not started (budget)"),
    ("failed_round_trip", "failed the round trip"),
    ("near_duplicates", "near-duplicate questions"),
    ("kept", "kept"),
)


def text(body: Mapping[str, Any]) -> str:
    """The stage counts, the requests and cost, the files written, and why the run stopped early."""
    c, s, usage = body["counts"], body["settings"], body["usage"]
    width = max(len(label) for _, label in STAGES)
    lines = [f"synthetic golden set (seed {s['seed']}, round trip: source in BM25 top {s['k']}, "]
    lines[0] += f"near-duplicate word Jaccard >= {s['near_duplicate']})"
    lines += [f"  {label:<{width}}  {c[key]:>6}" for key, label in STAGES]
    spent = f", cost {usage['cost']:.4f}" if usage.get("cost") else ""
    lines.append(f"requests: {c['new']} sent now, {c['from_store']} answered from the store{spent}")
    if body.get("outputs"):
        lines.append("wrote " + ", ".join(f"{k} {v}" for k, v in body["outputs"].items()))
    if s.get("store"):
        lines.append(f"store {s['store']} (rerun the same command to resume; answers stored are not paid again)")
    if c["malformed"]:
        lines.append(f"{c['malformed']} malformed answers are stored as failed: --retry-failed asks for them again")
    return "\n".join(lines) + "\n"
