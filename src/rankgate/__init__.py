"""rankgate: measure, compare and gate the quality of search and RAG retrievers.

>>> import rankgate
>>> res = rankgate.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 2.0, "d2": 1.0}}, ["P@1", "nDCG@10"])
>>> res.aggregate
{'P@1': 1.0, 'nDCG@10': 1.0}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankgate._version import __version__

__all__ = [
    "BackendError",
    "Comparison",
    "ConfigError",
    "InputError",
    "Measure",
    "MeasureError",
    "Qrels",
    "RankgateError",
    "Results",
    "Run",
    "Session",
    "Settings",
    "__version__",
    "compare",
    "evaluate",
    "fuse",
    "interleave",
    "parse_measure",
    "read_qrels",
    "read_run",
]

# Imported lazily so that `import rankgate` and `rankgate --help` stay fast.
_LAZY = {
    "Qrels": "rankgate.core.qrels",
    "Run": "rankgate.core.run",
    "Results": "rankgate.evaluation.results",
    "Session": "rankgate.evaluation.session",
    "Settings": "rankgate.evaluation.settings",
    "Measure": "rankgate.measures.registry",
    "parse_measure": "rankgate.measures.parse",
    "evaluate": "rankgate.evaluation.evaluate",
    "compare": "rankgate.comparison.compare",
    "Comparison": "rankgate.comparison.compare",
    "fuse": "rankgate.fusion.fuse",
    "read_qrels": "rankgate.io.readers",
    "read_run": "rankgate.io.readers",
    "RankgateError": "rankgate.errors",
    "InputError": "rankgate.errors",
    "MeasureError": "rankgate.errors",
    "ConfigError": "rankgate.errors",
    "BackendError": "rankgate.errors",
    "interleave": "rankgate.online.interleave",
}

if TYPE_CHECKING:
    from rankgate.comparison.compare import Comparison, compare
    from rankgate.core.qrels import Qrels
    from rankgate.core.run import Run
    from rankgate.errors import BackendError, ConfigError, InputError, MeasureError, RankgateError
    from rankgate.evaluation.evaluate import evaluate
    from rankgate.evaluation.results import Results
    from rankgate.evaluation.session import Session
    from rankgate.evaluation.settings import Settings
    from rankgate.fusion.fuse import fuse
    from rankgate.io.readers import read_qrels, read_run
    from rankgate.measures.parse import parse_measure
    from rankgate.measures.registry import Measure
    from rankgate.online.interleave import interleave


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rankgate' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
