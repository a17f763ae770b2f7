"""Core data: `Qrels` and `Run` (columnar, ids interned, grouped by query), columns, hashing.

The ground floor: nothing here imports another rankgate package (but `rankgate.errors`).
"""

from rankgate.core.qrels import Qrels
from rankgate.core.run import Run

__all__ = ["Qrels", "Run"]
