"""Rank fusion: ranx's methods and normalisations over rankgate's columnar runs.

`fuse` makes one run from several; `optimize` picks weights or a parameter by grid search on
training judgments (optionally cross-validated). See docs/fusion.md.
"""

from __future__ import annotations

from rankgate.fusion.catalog import CATALOG
from rankgate.fusion.fuse import fuse
from rankgate.fusion.norms import NORMS
from rankgate.fusion.optimize import Optimized, optimize

METHODS: tuple[str, ...] = tuple(CATALOG)

__all__ = ["CATALOG", "METHODS", "NORMS", "Optimized", "fuse", "optimize"]
