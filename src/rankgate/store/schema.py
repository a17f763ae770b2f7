"""The results store's tables (one schema for SQLite and PostgreSQL), its version and migrations.

Tables (all prefixed ``rankgate_`` so that they can share a database):

- ``rankgate_meta``: ``key`` -> ``value``; ``schema_version`` is the schema's version.
- ``rankgate_results``: one row per stored evaluation. Small fields are columns (to filter
  and list); settings, aggregates, query accounting, versions, labels and provenance are
  JSON; per-query values are two compressed blobs (see `rankgate.store.codec`); ``figures``
  (JSON, NULL when none) holds the operational figures measured with it (``latency_p95_ms``,
  ``qps``, ``neighbor_recall@10``, ``index_mb``, ``build_s``), from schema version 2.
- ``rankgate_baselines``: ``key`` -> the result id that is the baseline for that key.

Opening a store brings its schema to `SCHEMA_VERSION`: a new store is created, an older
one is migrated step by step (`MIGRATIONS`, in the same transaction), and a newer one is
refused, because this rankgate would not know how to read it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import sqlalchemy as sa

from rankgate.errors import BackendError

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

SCHEMA_VERSION = 2

metadata = sa.MetaData()

meta_table = sa.Table(
    "rankgate_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

results_table = sa.Table(
    "rankgate_results",
    metadata,
    sa.Column("id", sa.Integer, sa.Identity(), primary_key=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("commit", sa.String(64)),
    sa.Column("branch", sa.String(255)),
    sa.Column("ci_url", sa.Text),
    sa.Column("qrels_fingerprint", sa.String(64)),
    sa.Column("query_fingerprint", sa.String(64), nullable=False),
    sa.Column("n_queries", sa.Integer, nullable=False),
    sa.Column("measures", sa.JSON, nullable=False),
    sa.Column("aggregate", sa.JSON, nullable=False),
    sa.Column("queries", sa.JSON, nullable=False),
    sa.Column("settings", sa.JSON, nullable=False),
    sa.Column("versions", sa.JSON, nullable=False),
    sa.Column("labels", sa.JSON, nullable=False),
    sa.Column("provenance", sa.JSON, nullable=False),
    sa.Column("warnings", sa.JSON, nullable=False),
    sa.Column("per_query_codec", sa.String(64), nullable=False),
    sa.Column("per_query_ids", sa.LargeBinary, nullable=False),
    sa.Column("per_query_values", sa.LargeBinary, nullable=False),
    sa.Column("figures", sa.JSON),  # operational figures (latency_p95_ms, qps, ...): version 2
    sa.Index("ix_rankgate_results_branch_created", "branch", "created_at"),
    sa.Index("ix_rankgate_results_name_created", "name", "created_at"),
    sa.Index("ix_rankgate_results_created", "created_at"),
    sqlite_autoincrement=True,  # ids are references: never reuse one
)

baselines_table = sa.Table(
    "rankgate_baselines",
    metadata,
    sa.Column("key", sa.String(255), primary_key=True),
    sa.Column("result_id", sa.Integer, sa.ForeignKey("rankgate_results.id"), nullable=False),
    sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
)

# MIGRATIONS[v] brings a store from version v to v + 1, inside the opening transaction.
Migration = Callable[["Connection"], None]


def _add_figures(conn: Connection) -> None:
    """Version 1 -> 2: the ``figures`` column (NULL for the results stored before)."""
    kind = sa.JSON().compile(dialect=conn.dialect)
    conn.execute(sa.text(f"ALTER TABLE {results_table.name} ADD COLUMN figures {kind}"))


MIGRATIONS: dict[int, Migration] = {1: _add_figures}


def read_version(conn: Connection) -> int | None:
    """The store's schema version, or None when it has no rankgate tables yet."""
    if not sa.inspect(conn).has_table(meta_table.name):
        return None
    value = conn.execute(sa.select(meta_table.c.value).where(meta_table.c.key == "schema_version")).scalar()
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise BackendError(
            f"the store's schema_version is not a number ({value!r}); is this a rankgate store?"
        ) from None


def ensure_schema(conn: Connection, where: str, *, rankgate_version: str) -> int:
    """Create, migrate or accept the schema; the caller holds a write transaction.

    Args:
        conn: a connection inside a transaction that locks out other writers.
        where: the store's URL (password hidden), for messages.
        rankgate_version: recorded as ``created_by`` in a new store.

    Returns:
        The schema version the store had when opened (0 for a new store).

    Raises:
        BackendError: the store is newer than this rankgate, or no migration path exists.
    """
    found = read_version(conn)
    if found is None:
        metadata.create_all(conn)
        conn.execute(
            sa.insert(meta_table),
            [
                {"key": "schema_version", "value": str(SCHEMA_VERSION)},
                {"key": "created_by", "value": f"rankgate {rankgate_version}"},
            ],
        )
        return 0
    if found > SCHEMA_VERSION:
        raise BackendError(
            f"the store {where} has schema version {found}, newer than this rankgate ({rankgate_version}) "
            f"reads (up to {SCHEMA_VERSION}): upgrade rankgate (in its checkout: git pull && pip install .)"
        )
    for version in range(found, SCHEMA_VERSION):
        step = MIGRATIONS.get(version)
        if step is None:
            raise BackendError(
                f"the store {where} has schema version {found} and this rankgate has no migration "
                f"from version {version} to {version + 1}"
            )
        step(conn)
    if found < SCHEMA_VERSION:
        conn.execute(
            sa.update(meta_table).where(meta_table.c.key == "schema_version").values(value=str(SCHEMA_VERSION))
        )
    return found
