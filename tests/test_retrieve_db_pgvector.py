"""The pgvector adapter against a real PostgreSQL server with the pgvector extension.

The server is started by the tests (`tests.postgres_support`): from the system's binaries when
their share folder holds pgvector (Debian's ``postgresql-N-pgvector``, which Debian 12 does not
package), else from the ``pgserver`` package of the test extra, a PostgreSQL 16 build that ships
pgvector. Without either, the tests are skipped with that reason.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankgate.errors import BackendError, ConfigError
from rankgate.retrieve.base import TransientFailure
from rankgate.retrieve.spec import open_retriever
from tests.postgres_support import PostgresServer, start_server
from tests.test_retrieve_db import VECTORS, FixedEncoder

pytestmark = pytest.mark.extra("bench", "pgvector")

SKIP = (
    "no PostgreSQL with the pgvector extension: install the Debian package postgresql-N-pgvector "
    "or the pgserver package (test extra)"
)


def pgvector_bindir() -> Path | None:
    """A PostgreSQL bin folder whose installation has the vector extension (copied where ``postgres`` can read it)."""
    for control in sorted(glob.glob("/usr/share/postgresql/*/extension/vector.control"), reverse=True):
        bindir = Path(f"/usr/lib/postgresql/{Path(control).parts[4]}/bin")
        if (bindir / "initdb").is_file():
            return bindir
    spec = importlib.util.find_spec("pgserver")  # located, not imported (its import sets up runtime folders)
    if spec is None or spec.origin is None:
        return None
    install = Path(spec.origin).parent / "pginstall"
    if not (install / "share" / "postgresql" / "extension" / "vector.control").is_file():
        return None
    if os.geteuid() != 0:
        return install / "bin"
    # Root's site-packages may sit under /root, which the postgres user cannot enter: copy the build,
    # keeping the layout its RPATH ($ORIGIN/../../../pgserver.libs) expects.
    root = Path(tempfile.mkdtemp(prefix="rankgate-pgvector-"))
    shutil.copytree(install, root / "pgserver" / "pginstall", symlinks=True)
    libs = install.parent.parent / "pgserver.libs"
    if libs.is_dir():
        shutil.copytree(libs, root / "pgserver.libs", symlinks=True)
    for path in (root, *root.rglob("*")):
        path.chmod(path.stat().st_mode | (0o755 if path.is_dir() else 0o644))
    return root / "pgserver" / "pginstall" / "bin"


@pytest.fixture(scope="module")
def pgvector_server() -> Iterator[PostgresServer]:
    bindir = pgvector_bindir()
    if bindir is None:
        pytest.skip(SKIP)
    server = start_server(bindir)
    try:
        yield server
    finally:
        server.stop()
        if "rankgate-pgvector-" in str(bindir):
            shutil.rmtree(bindir.parents[2], ignore_errors=True)


@pytest.fixture(scope="module")
def table(pgvector_server: PostgresServer) -> Iterator[str]:
    """A database with table ``docs`` (doc_id, embedding vector(2)) holding alpha, beta, gamma."""
    import psycopg

    name = f"pgv_{uuid.uuid4().hex[:10]}"
    url = pgvector_server.create_database(name)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
        conn.execute("CREATE SCHEMA search")
        conn.execute("CREATE TABLE search.docs (doc_id text, embedding vector(2))")
        for doc in ("alpha", "beta", "gamma"):
            v = np.asarray(VECTORS[doc], dtype=np.float32)
            conn.execute("INSERT INTO search.docs VALUES (%s, %s::vector)", (f"d-{doc}", str(v.tolist())))
    try:
        yield url
    finally:
        pgvector_server.drop_database(name)


def _without_password(url: str, server: PostgresServer) -> str:
    return url.replace(f":{server.password}@", "@")


def _factory() -> Any:
    encoder = FixedEncoder(VECTORS)
    return lambda model, params: encoder


# Query "east" = [1, 0]. Cosine distance 1 - cos: alpha 0, beta 0.4, gamma 1. L2: alpha 0, beta
# sqrt(0.4^2 + 0.8^2) = 0.894427, gamma sqrt(2). Negative inner product <#>: -1, -0.6, 0.
HAND_WORKED = {
    "cosine": [("d-alpha", 0.0), ("d-beta", -0.4), ("d-gamma", -1.0)],
    "<->": [("d-alpha", 0.0), ("d-beta", -0.894427), ("d-gamma", -1.414214)],
    "inner_product": [("d-alpha", 1.0), ("d-beta", 0.6), ("d-gamma", 0.0)],
}


@pytest.mark.parametrize("distance", list(HAND_WORKED))
def test_hand_worked_distances(
    table: str, distance: str, pgvector_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RANKGATE_TEST_PG_PASSWORD", pgvector_server.password)
    spec = {
        "kind": "pgvector",
        "url": _without_password(table, pgvector_server),
        "password_env": "RANKGATE_TEST_PG_PASSWORD",
        "table": "search.docs",
        "distance": distance,
        "ef_search": 40,
        "timeout": 5,
    }
    live = open_retriever(spec, key_path="pg.yaml", encoder_factory=_factory())
    try:
        hits = live.search("q1", "east", 3)
        assert [h.doc_id for h in hits] == [d for d, _ in HAND_WORKED[distance]]
        assert [h.score for h in hits] == pytest.approx([s for _, s in HAND_WORKED[distance]], abs=1e-5)
        assert [h.doc_id for h in live.search("q2", "north", 1)] == ["d-gamma"]
    finally:
        live.close()


def test_the_password_is_never_shown(table: str, pgvector_server: PostgresServer) -> None:
    live = open_retriever(
        {"kind": "pgvector", "url": table, "table": "search.docs"}, key_path="pg.yaml", encoder_factory=_factory()
    )
    try:
        assert pgvector_server.password not in str(live.identity()) and ":***@" in live.identity()["url"]
    finally:
        live.close()
    wrong = table.replace(pgvector_server.password, "not-the-password")
    with pytest.raises(BackendError, match="cannot connect") as info:
        open_retriever(
            {"kind": "pgvector", "url": wrong, "table": "search.docs"}, key_path="pg.yaml", encoder_factory=_factory()
        )
    assert "not-the-password" not in str(info.value)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"table": "search.nope"}, 'pg.yaml.table: relation "search.nope" does not exist'),
        ({"id_column": "id"}, 'pg.yaml.id_column: column "id" does not exist'),
        ({"vector_column": "vec"}, 'pg.yaml.vector_column: column "vec" does not exist'),
        ({"distance": "dot"}, r"pg.yaml.distance: must be one of cosine \(<=>\)"),
        ({"url": "mysql://x/y"}, "pg.yaml.url: must be a postgresql:// URL"),
    ],
)
def test_bad_specs_name_the_key(table: str, changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        open_retriever(
            {"kind": "pgvector", "url": table, "table": "search.docs", **changes},
            key_path="pg.yaml",
            encoder_factory=_factory(),
        )


def test_a_lost_connection_is_transient_and_the_next_query_reconnects(table: str) -> None:
    import psycopg

    live = open_retriever(
        {"kind": "pgvector", "url": table, "table": "search.docs"}, key_path="pg.yaml", encoder_factory=_factory()
    )
    try:
        pid = live._connection().info.backend_pid  # type: ignore[attr-defined]
        with psycopg.connect(table, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(TransientFailure, match=r"pgvector search\.docs"):
            live.search("q1", "east", 2)
        assert [h.doc_id for h in live.search("q1", "east", 2)] == ["d-alpha", "d-beta"]
    finally:
        live.close()
