"""pgvector: a PostgreSQL table with a ``vector`` column, searched by distance to the query's vector.

Spec keys: ``url`` (``postgresql://user@host:port/db``; a password in it is never echoed),
``password_env`` (the environment variable holding the password, to keep it out of the spec),
``table`` (``name`` or ``schema.name``), ``id_column`` (default ``doc_id``), ``vector_column``
(default ``embedding``), ``distance`` (``cosine`` ``<=>``, ``l2`` ``<->``, ``inner_product``
``<#>`` or ``l1`` ``<+>``; default cosine: use the operator your index was built for),
``ef_search`` (``hnsw.ef_search``), ``probes`` (``ivfflat.probes``), ``timeout`` (seconds, the
statement timeout) and the encoder keys of `rankgate.retrieve.encode`.

A hit's score is the negated distance (for ``<#>``, which is the negative inner product, that is
the inner product), so that higher is better. Each thread gets its own connection.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from rankgate.bench.factory import EncoderFactory
from rankgate.errors import BackendError
from rankgate.extras import require
from rankgate.retrieve.base import Hit, QueryFailed, TransientFailure
from rankgate.retrieve.encode import ENCODER_KEYS, QueryEncoder
from rankgate.retrieve.spec import Keys, Where, without_timeout

KEYS = (
    "url",
    "password_env",
    "table",
    "id_column",
    "vector_column",
    "distance",
    "ef_search",
    "probes",
    "timeout",
    *ENCODER_KEYS,
)
OPERATORS = {"cosine": "<=>", "l2": "<->", "inner_product": "<#>", "l1": "<+>"}


def redact(url: str) -> str:
    """``url`` without its password.

    >>> redact("postgresql://me:s3cret@db:5432/search")
    'postgresql://me:***@db:5432/search'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


class PgvectorRetriever:
    """The ``k`` rows nearest to the query's vector, by one pgvector distance operator."""

    kind = "pgvector"
    keys = KEYS

    def __init__(self, encoder: QueryEncoder, settings: Mapping[str, Any], connect: dict[str, Any]) -> None:
        self.encoder = encoder
        self.settings = dict(settings)
        self._connect_args = connect  # holds the password: never in identity() or messages
        self._local = threading.local()
        self._connections: list[Any] = []
        self._lock = threading.Lock()
        self._sql = self._statement()

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any], where: Where | str, *, encoder_factory: EncoderFactory | None = None
    ) -> PgvectorRetriever:
        keys = Keys(config, where, KEYS)
        url = keys.text("url")
        if urlsplit(url).scheme not in ("postgresql", "postgres"):
            raise keys.error("url", f"must be a postgresql:// URL. Got {redact(url)!r} instead.")
        raw = keys.config.get("distance", "cosine")
        distance = next((name for name, op in OPERATORS.items() if raw in (name, op)), None)
        if distance is None:
            choices = ", ".join(f"{name} ({op})" for name, op in OPERATORS.items())
            raise keys.error("distance", f"must be one of {choices}. Got {raw!r} instead.")
        settings = {
            "url": redact(url),
            "table": keys.text("table"),
            "id_column": keys.text("id_column", "doc_id"),
            "vector_column": keys.text("vector_column", "embedding"),
            "distance": distance,
            "ef_search": keys.integer("ef_search", None),
            "probes": keys.integer("probes", None),
            "timeout": keys.number("timeout", None),
        }
        connect: dict[str, Any] = {"conninfo": url, "connect_timeout": int(settings["timeout"] or 10)}
        password = keys.secret_from_env("password_env")
        if password is not None:
            connect["password"] = password
        retriever = cls(QueryEncoder.from_keys(keys, encoder_factory), settings, connect)
        retriever._check(keys)
        return retriever

    def identity(self) -> Mapping[str, Any]:
        return {"kind": self.kind, **without_timeout(self.settings), "encoder": self.encoder.identity()}

    def search(self, query_id: str, text: str, k: int) -> Sequence[Hit]:
        vector = self.encoder.vector(text)
        literal = "[" + ",".join(repr(float(x)) for x in vector) + "]"
        psycopg = require("psycopg", "pgvector")
        try:
            rows = self._connection().execute(self._sql, (literal, k)).fetchall()
        except psycopg.OperationalError as e:  # connection lost, server restarting, statement timeout
            self._drop()
            raise TransientFailure(f"pgvector {self.settings['table']}: {self._reason(e)}") from None
        except psycopg.Error as e:
            raise QueryFailed(f"pgvector {self.settings['table']}: {self._reason(e)}") from None
        hits = []
        for doc, distance in rows:
            if doc is None:
                raise QueryFailed(f"pgvector {self.settings['table']}: a row has no {self.settings['id_column']}")
            hits.append(Hit(str(doc), -float(distance)))
        return hits

    def close(self) -> None:
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    # -- connections and SQL ------------------------------------------------------------------
    def _statement(self) -> Any:
        from psycopg import sql

        s = self.settings
        table = sql.SQL(".").join(sql.Identifier(part) for part in s["table"].split("."))
        return sql.SQL("SELECT {id}, {vec} {op} %s::vector AS distance FROM {table} ORDER BY distance LIMIT %s").format(
            id=sql.Identifier(s["id_column"]),
            vec=sql.Identifier(s["vector_column"]),
            op=sql.SQL(OPERATORS[s["distance"]]),
            table=table,
        )

    def _connection(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            psycopg = require("psycopg", "pgvector", purpose="the pgvector retriever")
            conn = psycopg.connect(**self._connect_args, autocommit=True)
            s = self.settings
            for name, value in (
                ("hnsw.ef_search", s["ef_search"]),
                ("ivfflat.probes", s["probes"]),
                ("statement_timeout", int(s["timeout"] * 1000) if s["timeout"] else None),
            ):
                if value is not None:
                    conn.execute("SELECT set_config(%s, %s, false)", (name, str(value)))
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _check(self, keys: Keys) -> None:
        """Connect once and check the table and both columns, so a typo fails before any query."""
        psycopg = require("psycopg", "pgvector", purpose="the pgvector retriever")
        from psycopg import sql

        try:
            conn = self._connection()
        except psycopg.Error as e:
            raise BackendError(f"pgvector {self.settings['url']}: cannot connect ({self._reason(e)})") from None
        table = sql.SQL(".").join(sql.Identifier(p) for p in self.settings["table"].split("."))
        for key in ("table", "id_column", "vector_column"):
            column = sql.Identifier(self.settings[key]) if key != "table" else sql.SQL("1")
            try:
                conn.execute(sql.SQL("SELECT {c} FROM {t} LIMIT 0").format(c=column, t=table))
            except psycopg.Error as e:
                self.close()
                raise keys.error(key, self._reason(e)) from None

    def _reason(self, error: Exception) -> str:
        """The server's message (its first line), with the password, if it appears, masked."""
        primary = getattr(getattr(error, "diag", None), "message_primary", None)
        text = primary or (str(error).strip().splitlines() or [type(error).__name__])[0]
        secrets = [self._connect_args.get("password"), urlsplit(self._connect_args["conninfo"]).password]
        for secret in filter(None, secrets):
            text = text.replace(secret, "***")
        return text
