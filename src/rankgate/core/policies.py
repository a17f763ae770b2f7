"""The rule names that `Qrels` and `Run` apply themselves, defined once (no heavy imports).

`rankgate.evaluation.settings.Settings` reads them from here; they are not spelled again.
"""

from __future__ import annotations

TIE_POLICIES: tuple[str, ...] = ("trec", "input")  # score ties: doc id descending (trec_eval), or input order
DUPLICATE_POLICIES: tuple[str, ...] = ("error", "first", "max")  # repeated (query, doc) pairs
CHUNK_AGGREGATIONS: tuple[str, ...] = ("first", "max", "sum")  # the chunks of one document (core/chunks.py)
