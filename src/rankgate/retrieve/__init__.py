"""Live retrievers: turn a team's own search service, vector database or Python pipeline into a run.

`base` holds what every adapter provides (`LiveRetriever`, `Hit`, the two failure kinds) and the
table of kinds; each adapter lives in its own module and imports its client library lazily.
"""

from rankgate.retrieve.base import KINDS, Hit, LiveRetriever, QueryFailed, TransientFailure

__all__ = ["KINDS", "Hit", "LiveRetriever", "QueryFailed", "TransientFailure"]
