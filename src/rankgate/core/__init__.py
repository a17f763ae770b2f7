"""Core data: `Qrels`, `Run` (columnar, grouped by query) and `Results`."""

from rankgate.core.qrels import Qrels
from rankgate.core.results import Results
from rankgate.core.run import Run

__all__ = ["Qrels", "Results", "Run"]
