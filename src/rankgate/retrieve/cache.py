"""Answers of a live retriever on disk (SQLite), so an interrupted run resumes without asking again.

One row per (retriever key, query id): the hits as the retriever returned them (before duplicates
are dropped or the list is cut to k, so a rerun reports the same things), the latency and the
query text's digest (an answer is reused only for the same text). The key is a digest of the
retriever's identity and k (`answer_key`); the identity itself is kept beside it for inspection,
and by the `LiveRetriever` contract holds no secret.

Each answer is committed as it arrives, in WAL mode: a process killed at any point (``kill -9``)
loses no answer already stored, and the next run asks only for the rest. Failed queries are never
stored, so they are asked again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rankgate.errors import BackendError
from rankgate.retrieve.base import Hit

SCHEMA_VERSION = 1
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS retrievers (key TEXT PRIMARY KEY, identity TEXT NOT NULL, k INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS answers (key TEXT NOT NULL, query_id TEXT NOT NULL, text_sha256 TEXT NOT NULL, "
    "hits TEXT NOT NULL, latency_ms REAL, stored REAL NOT NULL, PRIMARY KEY (key, query_id))",
)
_CHUNK = 500  # SQLite's bound-parameter limit is 999 on old builds


def answer_key(identity: Mapping[str, Any], k: int) -> str:
    """The cache key of a retriever's answers at depth ``k``: equal settings, equal key.

    >>> answer_key({"kind": "http", "url": "u"}, 10) == answer_key({"url": "u", "kind": "http"}, 10)
    True
    >>> answer_key({"kind": "http", "url": "u"}, 10) == answer_key({"kind": "http", "url": "u"}, 20)
    False
    """
    text = json.dumps({"identity": identity, "k": k, "schema": SCHEMA_VERSION}, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Cached:
    """One stored answer: the hits as returned and the latency of the request that got them."""

    __slots__ = ("hits", "latency_ms")

    def __init__(self, hits: list[Hit], latency_ms: float | None) -> None:
        self.hits, self.latency_ms = hits, latency_ms


class AnswerCache:
    """The SQLite file of answers (created with its folder when missing).

    Use it from one thread (the runner's event loop), or pass ``check_same_thread=False`` and
    serialise the calls yourself.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # durable across a killed process (WAL)
            for statement in _SCHEMA:
                self._db.execute(statement)
        except sqlite3.Error as e:
            raise BackendError(f"cannot open the answer cache {self.path}: {e}") from None
        except OSError as e:
            raise BackendError(f"cannot open the answer cache {self.path}: {e.strerror or e}") from None

    def register(self, identity: Mapping[str, Any], k: int) -> str:
        """Record the identity under its key; returns the key."""
        key = answer_key(identity, k)
        text = json.dumps(identity, sort_keys=True, default=repr)
        self._run("INSERT OR IGNORE INTO retrievers (key, identity, k) VALUES (?, ?, ?)", (key, text, k))
        return key

    def lookup(self, key: str, queries: Mapping[str, str]) -> dict[str, Cached]:
        """The stored answers of ``queries`` (``{query_id: text}``) whose text is unchanged."""
        found: dict[str, Cached] = {}
        ids = list(queries)
        for lo in range(0, len(ids), _CHUNK):
            chunk = ids[lo : lo + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._rows(
                f"SELECT query_id, text_sha256, hits, latency_ms FROM answers WHERE key = ? AND query_id IN ({marks})",
                (key, *chunk),
            )
            for qid, digest, hits, latency in rows:
                if digest == text_digest(queries[qid]):
                    found[qid] = Cached([Hit(d, s) for d, s in json.loads(hits)], latency)
        return found

    def store(self, key: str, query_id: str, text: str, hits: Sequence[Hit], latency_ms: float | None) -> None:
        """Keep one answer (replacing an older one of the same query); committed at once."""
        data = json.dumps([[h.doc_id, h.score] for h in hits], separators=(",", ":"))
        self._run(
            "INSERT OR REPLACE INTO answers (key, query_id, text_sha256, hits, latency_ms, stored) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (key, query_id, text_digest(text), data, latency_ms, time.time()),
        )

    def count(self, key: str | None = None) -> int:
        """Stored answers (of one key, or all)."""
        if key is None:
            return int(self._rows("SELECT COUNT(*) FROM answers", ())[0][0])
        return int(self._rows("SELECT COUNT(*) FROM answers WHERE key = ?", (key,))[0][0])

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> AnswerCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, sql: str, args: tuple[Any, ...]) -> None:
        try:
            self._db.execute(sql, args)
        except sqlite3.Error as e:
            raise BackendError(f"answer cache {self.path}: {e}") from None

    def _rows(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise BackendError(f"answer cache {self.path}: {e}") from None


def default_cache_path(output: str | os.PathLike[str]) -> Path:
    """The cache beside a run file: ``run.txt`` -> ``run.txt.cache.sqlite``."""
    path = Path(output)
    return path.with_name(path.name + ".cache.sqlite")
