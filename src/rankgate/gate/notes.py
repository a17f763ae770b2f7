"""The sentences a gate report adds about its comparison: limits left unchecked for want of a
baseline, and a baseline evaluated on other queries than the run.

They go to the report's ``notes``, which every output shows (text, the PR comment's footer, JSON).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankgate.evaluation.results import Results
    from rankgate.gate.decide import GateOutcome


def unchecked(outcomes: Sequence[GateOutcome]) -> list[str]:
    """Which gates' limits went unchecked for want of a baseline (or of its figures), and what to pass.

    >>> from rankgate.gate.config import load_config
    >>> from rankgate.gate.decide import GateOutcome
    >>> g = load_config({"gates": [{"name": "r5", "metric": "R@5", "regression_max": 0.03}]}).gates[0]
    >>> unchecked([GateOutcome(g, "pass", 0.5, 10, unchecked=["regression_max"])])
    ['no baseline: the drop limits of r5 were not checked; pass --baseline-run or --baseline']
    """
    out = []
    for figures, what, flags in (
        (False, "no baseline: the drop limits", "--baseline-run or --baseline"),
        (True, "no baseline figures: the limits", "--baseline-bench"),
    ):
        names = [o.gate.name for o in outcomes if o.unchecked and (o.gate.figure is not None) == figures]
        if names:
            out.append(f"{what} of {', '.join(names)} were not checked; pass {flags}")
    return out


def coverage(baseline: Results | None, current: Results) -> list[str]:
    """A note when the run and the baseline were evaluated on other query sets (``queries:
    intersection``, a run that misses queries): deltas, and the baseline's values beside them, are
    then means over the queries both hold, not the baseline's own means."""
    if baseline is None:
        return []
    run, base = set(current.query_ids), set(baseline.query_ids)
    shared = len(run & base)
    if shared == len(run) == len(base):
        return []
    return [
        f"the run was evaluated on {len(run)} queries and the baseline on {len(base)}; deltas, and the "
        f"baseline's values beside them, are over the {shared} both hold (the baseline's own means are in "
        "the JSON's baseline_aggregate)"
    ]
