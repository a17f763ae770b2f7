"""The judgment store: one SQLite file, each judgment committed the moment it arrives.

Rows are keyed by (judge_id, query_id, doc_id): rerunning a command skips what its judge
has judged already, so an interrupted run resumes and never pays twice for a pair. The
``cache_key`` column (SHA-256 of model, prompt hash, query text and document text) lets a
pair whose texts were judged before under other ids (a duplicate document, a renamed run)
reuse that answer for free. The file uses write-ahead logging, so a reader (``sqlite3``,
pandas) can look at it while a run writes. No secret is ever written here.

Tables: ``judgments`` (one row per judge and pair), ``judges`` (each judge's settings) and
``claims`` (the texts a run is asking about right now, so that two runs on one store never pay
twice for them; see `JudgmentStore.claim`).
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rankgate.errors import BackendError
from rankgate.label.types import STATUS_ERROR, STATUS_FAILED, STATUS_OK, Judgment

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS judges (
    judge_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    settings TEXT NOT NULL,
    prompt TEXT,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS judgments (
    judge_id TEXT NOT NULL,
    query_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    label INTEGER,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'error')),
    judge TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    prompt_hash TEXT NOT NULL DEFAULT '',
    cache_key TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '',
    raw TEXT NOT NULL DEFAULT '',
    error TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    latency_ms REAL NOT NULL DEFAULT 0,
    cached INTEGER NOT NULL DEFAULT 0,
    tier TEXT NOT NULL DEFAULT '',
    score REAL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (judge_id, query_id, doc_id)
);
CREATE TABLE IF NOT EXISTS claims (
    cache_key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    claimed_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS judgments_cache ON judgments (cache_key) WHERE status = 'ok' AND cache_key != '';
"""

_COLUMNS = [f.name for f in fields(Judgment) if f.name != "extra"]
_KEY_COLUMNS = ("judge_id", "query_id", "doc_id")

_LOCK_TIMEOUT_S = 30.0  # how long an open or a write waits for another run holding the file
CLAIM_TTL_S = 3600.0  # a claim this old is stale whoever holds it (another host, a reused pid)
CLAIMED, DONE, BUSY = "claimed", "done", "busy"


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class JudgmentStore:
    """Judgments in a SQLite file (``":memory:"`` for a throwaway one).

    >>> from rankgate.label.types import Judgment
    >>> with JudgmentStore(":memory:") as store:
    ...     store.put(Judgment("q1", "d1", 2, "llm:m:abc", "llm", reason="answers it"))
    ...     [(j.query_id, j.label, j.reason) for j in store.judgments("llm:m:abc")]
    [('q1', 2, 'answers it')]
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        self.owner = uuid.uuid4().hex  # this store object's claims (two in one process are two owners)
        self._host = socket.gethostname()
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=_LOCK_TIMEOUT_S)
            self._db.row_factory = sqlite3.Row
            self._set_up()
        except sqlite3.DatabaseError as e:
            raise BackendError(f"{self.path}: cannot open the judgment store ({e})") from None

    def _set_up(self) -> None:
        """WAL mode, the schema and its version, each step idempotent. Two runs (processes) opening
        a new store together got "database is locked" at once: SQLite does not wait for a lock it
        would deadlock on (switching a new file to WAL, or upgrading a read to a write), so the
        set-up is tried again, until the connection's own timeout."""
        deadline = time.monotonic() + _LOCK_TIMEOUT_S
        pause = 0.01
        while True:
            try:
                if self.path != ":memory:":
                    self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(_SCHEMA)
                self._check_version()
                return
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or time.monotonic() > deadline:
                    raise
                time.sleep(pause)  # the other opener holds the file for a moment
                pause = min(2 * pause, 0.5)

    def _check_version(self) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            # OR IGNORE: a store opened by two runs at once gets one row, not a duplicate-key error
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        elif int(row["value"]) > SCHEMA_VERSION:
            raise BackendError(
                f"{self.path}: judgment store schema {row['value']} is newer than this rankgate ({SCHEMA_VERSION})"
            )

    def __enter__(self) -> JudgmentStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def __repr__(self) -> str:
        return f"JudgmentStore({self.path!r})"

    # -- writing ------------------------------------------------------------------------
    def put(self, judgment: Judgment) -> None:
        """Insert or replace one judgment and commit it at once."""
        self.put_many([judgment])

    def put_many(self, judgments: Iterable[Judgment]) -> int:
        """Insert or replace judgments in one transaction; returns how many."""
        rows = [self._row(j) for j in judgments]
        if not rows:
            return 0
        marks = ", ".join("?" for _ in _COLUMNS)
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany(f"INSERT OR REPLACE INTO judgments ({', '.join(_COLUMNS)}) VALUES ({marks})", rows)
        except sqlite3.DatabaseError as e:
            raise BackendError(f"{self.path}: cannot write judgments ({e})") from None
        return len(rows)

    def _row(self, j: Judgment) -> tuple[Any, ...]:
        if not j.created_at:
            j.created_at = now_iso()
        values = []
        for name in _COLUMNS:
            value = getattr(j, name)
            values.append(int(value) if isinstance(value, bool) else value)
        return tuple(values)

    def put_unless_ok(self, judgments: Iterable[Judgment]) -> int:
        """Insert judgments, replacing only stored ones that are not ok (another run's answer is kept)."""
        rows = [self._row(j) for j in judgments]
        if not rows:
            return 0
        marks = ", ".join("?" for _ in _COLUMNS)
        updates = ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS if c not in _KEY_COLUMNS)
        sql = (
            f"INSERT INTO judgments ({', '.join(_COLUMNS)}) VALUES ({marks}) ON CONFLICT ({', '.join(_KEY_COLUMNS)}) "
            f"DO UPDATE SET {updates} WHERE judgments.status != 'ok'"
        )
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany(sql, rows)
        except sqlite3.DatabaseError as e:
            raise BackendError(f"{self.path}: cannot write judgments ({e})") from None
        return len(rows)

    # -- claims -------------------------------------------------------------------------
    def claim(self, cache_key: str, *, now: float | None = None) -> str:
        """Claim the texts of ``cache_key`` before paying for them: "claimed", "done" or "busy".

        "done": an ok judgment of these texts is stored (another run answered them). "busy":
        another run holds a live claim. A claim is live while its owner's process runs (same
        host: its pid exists) and for at most `CLAIM_TTL_S` seconds; a claim left by a killed
        run is taken over. Release it with `release` once the judgment is stored.
        """
        now = time.time() if now is None else now
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                if self._db.execute(
                    "SELECT 1 FROM judgments WHERE cache_key = ? AND status = 'ok' LIMIT 1", (cache_key,)
                ).fetchone():
                    return DONE
                row = self._db.execute(
                    "SELECT owner, host, pid, claimed_at FROM claims WHERE cache_key = ?", (cache_key,)
                ).fetchone()
                if row is not None and row["owner"] != self.owner and self._live(row, now):
                    return BUSY
                self._db.execute(
                    "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?)",
                    (cache_key, self.owner, self._host, os.getpid(), now),
                )
                return CLAIMED
        except sqlite3.DatabaseError as e:
            raise BackendError(f"{self.path}: cannot claim a pair ({e})") from None

    def release(self, cache_key: str) -> None:
        """Drop this store's claim of ``cache_key`` (another owner's claim is left alone)."""
        with self._db:
            self._db.execute("DELETE FROM claims WHERE cache_key = ? AND owner = ?", (cache_key, self.owner))

    def _live(self, row: sqlite3.Row, now: float) -> bool:
        """Whether a claim's owner may still be at work: not too old, and (same host) its process exists."""
        if now - float(row["claimed_at"]) > CLAIM_TTL_S:
            return False
        if row["host"] != self._host or os.name == "nt":  # no pid check elsewhere (os.kill(pid, 0) is Ctrl-C there)
            return True
        return _pid_exists(int(row["pid"]))

    def record_judge(self, judge_id: str, kind: str, settings: dict[str, object], prompt: str | None = None) -> None:
        """Remember a judge's settings (and prompt text) for reports and reproducibility."""
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO judges VALUES (?, ?, ?, ?, ?)",
                (judge_id, kind, json.dumps(settings, sort_keys=True, default=str), prompt, now_iso()),
            )

    # -- reading ------------------------------------------------------------------------
    def judgments(self, judge_id: str | None = None, *, status: str | None = STATUS_OK) -> list[Judgment]:
        """Stored judgments of one judge (all judges: None), of one status (all: None)."""
        return list(self.iter_judgments(judge_id, status=status))

    def iter_judgments(self, judge_id: str | None = None, *, status: str | None = STATUS_OK) -> Iterator[Judgment]:
        where, params = _where(judge_id, status)
        cursor = self._db.execute(f"SELECT * FROM judgments {where} ORDER BY query_id, doc_id", params)
        for row in cursor:
            yield _judgment(row)

    def done(self, judge_id: str, *, retry_failed: bool = False) -> set[tuple[str, str]]:
        """Pairs this judge needs not judge again: ok ones, and failed ones unless ``retry_failed``.

        Pairs with status "error" (no answer came) are never done: the next run retries them.
        """
        statuses = (STATUS_OK,) if retry_failed else (STATUS_OK, STATUS_FAILED)
        marks = ", ".join("?" for _ in statuses)
        rows = self._db.execute(
            f"SELECT query_id, doc_id FROM judgments WHERE judge_id = ? AND status IN ({marks})", (judge_id, *statuses)
        )
        return {(r[0], r[1]) for r in rows}

    def cached(self, cache_key: str) -> Judgment | None:
        """An ok judgment made for the same model, prompt and texts, if any."""
        row = self._db.execute(
            "SELECT * FROM judgments WHERE cache_key = ? AND status = 'ok' AND cached = 0 LIMIT 1", (cache_key,)
        ).fetchone()
        if row is None:
            row = self._db.execute(
                "SELECT * FROM judgments WHERE cache_key = ? AND status = 'ok' LIMIT 1", (cache_key,)
            ).fetchone()
        return None if row is None else _judgment(row)

    def judges(self) -> list[dict[str, object]]:
        """Each judge in the store with its counts by status, tokens and cost."""
        out = []
        rows = self._db.execute(
            """SELECT judge_id, judge, tier,
                      SUM(status = 'ok') AS ok, SUM(status = 'failed') AS failed, SUM(status = 'error') AS error,
                      SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, SUM(cost) AS cost
               FROM judgments GROUP BY judge_id ORDER BY judge_id"""
        )
        for r in rows:
            out.append(dict(r))
        return out

    def count(self, judge_id: str | None = None, status: str | None = None) -> int:
        where, params = _where(judge_id, status)
        return int(self._db.execute(f"SELECT COUNT(*) FROM judgments {where}", params).fetchone()[0])


def _pid_exists(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (signal 0 checks without sending anything)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    except OSError:
        return False
    return True


def _where(judge_id: str | None, status: str | None) -> tuple[str, list[str]]:
    """A WHERE clause (or "") selecting one judge and/or one status, with its parameters."""
    clauses, params = [], []
    if judge_id is not None:
        clauses.append("judge_id = ?")
        params.append(judge_id)
    if status is not None:
        clauses.append("status = ?")
        params.append(status)
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), params


def _judgment(row: sqlite3.Row) -> Judgment:
    values = {name: row[name] for name in _COLUMNS}
    values["cached"] = bool(values["cached"])
    return Judgment(**values)


__all__ = ["STATUS_ERROR", "STATUS_FAILED", "STATUS_OK", "JudgmentStore"]
