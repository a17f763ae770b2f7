"""LanceDB: a table on disk (or any URI LanceDB opens), searched by the query's vector.

Spec keys: ``path`` (the database folder), ``table``, ``id_column`` (default ``doc_id``),
``vector_column`` (default ``vector``), ``metric`` (``cosine``, ``l2`` or ``dot``; default: the
table's index metric, else LanceDB's l2), ``nprobes`` and ``refine_factor`` (IVF indexes), and the
encoder keys of `rankgate.retrieve.encode`. A hit's score is the negated ``_distance``, so that
higher is better and the order is LanceDB's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rankgate.bench.factory import EncoderFactory
from rankgate.extras import require
from rankgate.retrieve.base import Hit, QueryFailed, TransientFailure
from rankgate.retrieve.encode import ENCODER_KEYS, QueryEncoder
from rankgate.retrieve.spec import Keys, Where

KEYS = ("path", "table", "id_column", "vector_column", "metric", "nprobes", "refine_factor", *ENCODER_KEYS)
METRICS = ("cosine", "l2", "dot")


class LanceDBRetriever:
    """Nearest neighbours of the query's vector in one LanceDB table."""

    kind = "lancedb"
    keys = KEYS

    def __init__(self, table: Any, encoder: QueryEncoder, settings: Mapping[str, Any]) -> None:
        self.table = table
        self.encoder = encoder
        self.settings = dict(settings)

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any], where: Where | str, *, encoder_factory: EncoderFactory | None = None
    ) -> LanceDBRetriever:
        keys = Keys(config, where, KEYS)
        path = keys.existing_path("path")
        settings = {
            "path": str(path),
            "table": keys.text("table"),
            "id_column": keys.text("id_column", "doc_id"),
            "vector_column": keys.text("vector_column", "vector"),
            "metric": keys.choice("metric", METRICS, None),
            "nprobes": keys.integer("nprobes", None),
            "refine_factor": keys.integer("refine_factor", None),
        }
        lancedb = require("lancedb", "lancedb", purpose="the lancedb retriever")
        try:
            table = lancedb.connect(str(path)).open_table(settings["table"])
        except (ValueError, FileNotFoundError) as e:
            raise keys.error("table", f"cannot open table {settings['table']!r} in {path} ({e})") from None
        columns = set(table.schema.names)
        for key in ("id_column", "vector_column"):
            if settings[key] not in columns:
                raise keys.error(
                    key,
                    f"table {settings['table']!r} has no column {settings[key]!r} "
                    f"(columns: {', '.join(sorted(columns))})",
                )
        return cls(table, QueryEncoder.from_keys(keys, encoder_factory), settings)

    def identity(self) -> Mapping[str, Any]:
        return {"kind": self.kind, **self.settings, "encoder": self.encoder.identity()}

    def search(self, query_id: str, text: str, k: int) -> Sequence[Hit]:
        vector = self.encoder.vector(text)
        s = self.settings
        try:
            query = self.table.search(vector, vector_column_name=s["vector_column"])
            if s["metric"] is not None:
                query = query.distance_type(s["metric"])
            if s["nprobes"] is not None:
                query = query.nprobes(s["nprobes"])
            if s["refine_factor"] is not None:
                query = query.refine_factor(s["refine_factor"])
            rows = query.select([s["id_column"], "_distance"]).limit(k).to_list()
        except (OSError, TimeoutError) as e:
            raise TransientFailure(f"lancedb {s['table']}: {type(e).__name__}: {e}") from None
        except (ValueError, RuntimeError) as e:
            raise QueryFailed(f"lancedb {s['table']}: {e}") from None
        hits = []
        for row in rows:
            doc = row.get(s["id_column"])
            if doc is None:
                raise QueryFailed(f"lancedb {s['table']}: a hit has no {s['id_column']!r} value")
            hits.append(Hit(str(doc), -float(row["_distance"])))
        return hits

    def close(self) -> None:
        self.table = None
