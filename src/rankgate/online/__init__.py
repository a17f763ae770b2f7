"""Online evaluation from logs: click models, A/B comparison of live arms, interleaving.

============================  ===================================================  ================
`read_click_log`, `ClickLog`  impression-level logs (CSV/TSV, JSONL, Parquet)       logs.py
`fit_click_model`             PBM by EM, cascade, simplified DBN; weak estimates     clickmodels.py
`ab_compare`, `AbResult`      CTR, clicks@k, RR, abandonment, time to first click    ab.py
`interleave`                  team-draft and balanced interleavings                  interleave.py
`analyze_interleaving`        wins/ties/losses, preference with CI, sign test        interleave.py
`simulate_pbm`                logs simulated from a known position-based model      simulate.py
============================  ===================================================  ================

See docs/online.md for the methods, their references and assumptions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankgate.online.ab import AbResult, ab_compare
from rankgate.online.clickmodels import ClickModelFit, fit_click_model
from rankgate.online.interleave import Interleaving, InterleavingResult, analyze_interleaving, interleave
from rankgate.online.logs import ClickLog, read_click_log

if TYPE_CHECKING:
    from rankgate.online.simulate import SimulatedLog, simulate_pbm

__all__ = [
    "AbResult",
    "ClickLog",
    "ClickModelFit",
    "Interleaving",
    "InterleavingResult",
    "SimulatedLog",
    "ab_compare",
    "analyze_interleaving",
    "fit_click_model",
    "interleave",
    "read_click_log",
    "simulate_pbm",
]


def __getattr__(name: str) -> Any:
    # The simulator loads lazily, so `python -m rankgate.online.simulate` runs it once.
    if name in ("SimulatedLog", "simulate_pbm"):
        from rankgate.online import simulate

        return getattr(simulate, name)
    raise AttributeError(f"module 'rankgate.online' has no attribute {name!r}")
