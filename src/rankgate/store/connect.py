"""Where a results store lives (a URL or a path) and the SQLAlchemy engine that reaches it.

Accepted locations:

- None: ``$RANKGATE_STORE`` if set, else ``.rankgate/results.db`` in the current directory;
- a plain path, or ``sqlite:///relative/path.db`` / ``sqlite:////absolute/path.db``;
- ``:memory:`` or ``sqlite://``: an in-memory SQLite store (one per `open_store` call);
- ``postgresql://user:password@host:port/dbname`` (also ``postgres://`` and
  ``postgresql+psycopg://``), reached with psycopg 3.

SQLite connections run in WAL mode with a busy timeout, and every write transaction starts
with ``BEGIN IMMEDIATE`` (it takes the write lock first, then waits its turn), so several
processes can add to one file at once. A store opened read-only (``read_only=True``) is
opened with SQLite's ``mode=ro``: no table is created and the journal mode is left as it
is, so reading another program's file cannot change it. Passwords never appear in
`StoreLocation.display` or in any error message.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankgate.errors import BackendError, InputError
from rankgate.extras import require

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

DEFAULT_STORE_PATH = os.path.join(".rankgate", "results.db")
STORE_ENV = "RANKGATE_STORE"
BUSY_TIMEOUT_S = 60.0
CONNECT_TIMEOUT_S = 10
WRITE_OPTION = "rankgate_write"  # execution option: this transaction writes (SQLite: BEGIN IMMEDIATE)


@dataclass(frozen=True)
class StoreLocation:
    """A parsed store location.

    Attributes:
        dialect: "sqlite" or "postgresql".
        url: the SQLAlchemy URL to connect with (may hold a password: never print it).
        display: the URL with the password hidden, for messages.
        path: the SQLite file, None for in-memory SQLite and PostgreSQL.
        secret: the password, so that messages can be scrubbed of it.
    """

    dialect: str
    url: Any
    display: str
    path: Path | None = None
    secret: str | None = None

    def scrub(self, text: str) -> str:
        """``text`` with the password (if any) replaced by ``***``."""
        return text.replace(self.secret, "***") if self.secret else text


def parse_location(url_or_path: str | os.PathLike[str] | None) -> StoreLocation:
    """Read a store location; see the module docstring for the accepted forms.

    Raises:
        InputError: a malformed URL or an unsupported scheme.
    """
    sa = _sqlalchemy()
    if url_or_path is None:
        url_or_path = os.environ.get(STORE_ENV) or DEFAULT_STORE_PATH
    text = os.fspath(url_or_path).strip()
    if not text:
        raise InputError("empty store location: give a path or a sqlite:/// or postgresql:// URL")
    if text in (":memory:", "sqlite://", "sqlite:///:memory:"):
        return StoreLocation("sqlite", sa.engine.make_url("sqlite://"), "sqlite:// (in memory)")
    if "://" not in text:
        return _sqlite_file(Path(text))
    scheme = text.split("://", 1)[0].lower()
    if scheme.startswith("postgres"):
        if scheme == "postgres":  # Heroku-style spelling
            text = "postgresql" + text[len("postgres") :]
        return _postgresql(text, sa)
    if scheme.startswith("sqlite"):
        try:
            url = sa.engine.make_url(text)
        except sa.exc.ArgumentError:
            raise InputError(f"cannot read store URL {text!r}: expected sqlite:///path/to/results.db") from None
        if not url.database or url.database == ":memory:":
            return StoreLocation("sqlite", sa.engine.make_url("sqlite://"), "sqlite:// (in memory)")
        return _sqlite_file(Path(url.database))
    raise InputError(
        f"unsupported store URL scheme {scheme + '://'!r}: use a file path, sqlite:///path/to/results.db "
        "or postgresql://user@host:5432/dbname"
    )


def _sqlite_file(path: Path) -> StoreLocation:
    sa = _sqlalchemy()
    url = sa.engine.URL.create("sqlite", database=str(path))
    return StoreLocation("sqlite", url, str(path), path=path)


def _postgresql(text: str, sa: Any) -> StoreLocation:
    try:
        url = sa.engine.make_url(text)
    except (sa.exc.ArgumentError, ValueError):
        shown = _hide_password_text(text)
        raise InputError(
            f"cannot read store URL {shown!r}: expected postgresql://user:password@host:5432/dbname"
        ) from None
    display = url.render_as_string(hide_password=True)
    if url.drivername in ("postgresql", "postgresql+psycopg3"):
        url = url.set(drivername="postgresql+psycopg")
    if not url.database:
        raise InputError(f"store URL {display!r} names no database: expected postgresql://user@host:5432/dbname")
    return StoreLocation("postgresql", url, display, secret=url.password or None)


def _hide_password_text(text: str) -> str:
    """``scheme://user:***@host/...`` for a URL that SQLAlchemy could not parse."""
    scheme, _, rest = text.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if at and ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":***"
    return f"{scheme}://{userinfo}{at}{host}"


def _sqlalchemy() -> Any:
    return require("sqlalchemy", "gate", purpose="the results store")


def create_engine(location: StoreLocation, *, read_only: bool = False) -> Engine:
    """An engine for ``location``; nothing is connected yet.

    Args:
        location: where the store is.
        read_only: connect so that nothing can be written (SQLite: ``mode=ro``, no switch to
            WAL; PostgreSQL: read-only transactions).

    Raises:
        BackendError: the database driver is not installed.
    """
    sa = _sqlalchemy()
    from rankgate.store.result import plain_json

    if location.dialect == "postgresql":
        require("psycopg", "postgres", purpose="a PostgreSQL store")
        return sa.create_engine(
            location.url,
            connect_args={"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "rankgate"},
            pool_pre_ping=True,
            json_serializer=plain_json,
            execution_options={"postgresql_readonly": True} if read_only else {},
        )
    from sqlalchemy.pool import StaticPool

    memory = location.path is None
    options: dict[str, Any] = {"poolclass": StaticPool} if memory else {}
    if read_only and location.path is not None:
        options["creator"] = _read_only_connector(location.path)
    engine = sa.create_engine(
        location.url,
        connect_args={"timeout": BUSY_TIMEOUT_S, "check_same_thread": False},
        json_serializer=plain_json,
        **options,
    )
    _sqlite_transactions(engine, wal=not memory and not read_only, read_only=read_only)
    return engine


def _read_only_connector(path: Path) -> Callable[[], Any]:
    """Open ``path`` with SQLite's ``mode=ro``: nothing created, nothing written, journal mode kept.

    A WAL file needs its ``-shm`` file even to be read. In a folder this process cannot
    write, where the ``-shm`` file cannot be made, the file is read as ``immutable``
    (a snapshot without locks): there no writer can add a ``-wal`` file either.
    """
    import sqlite3

    uri = path.absolute().as_uri() + "?mode=ro"

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
        try:
            conn.execute("PRAGMA schema_version").fetchone()  # reads the header: WAL needs the -shm here
        except sqlite3.OperationalError as e:
            conn.close()
            if "readonly" not in str(e) and "unable to open" not in str(e):
                raise
            conn = sqlite3.connect(uri + "&immutable=1", uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
        return conn

    return connect


def _switch_to_wal(cursor: Any) -> None:
    """Put the file in WAL mode (persistent: a no-op once any connection has done it).

    Two connections converting a fresh file at the same moment can deadlock on its lock, and
    SQLite then answers one of them "database is locked" at once, without the busy handler.
    So the switch is retried with backoff until the busy timeout.
    """
    import sqlite3

    deadline = time.monotonic() + BUSY_TIMEOUT_S
    pause = 0.005
    while True:
        try:
            if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as e:
            contention = "locked" in str(e) or "busy" in str(e)
            if not contention or time.monotonic() > deadline:
                raise
            time.sleep(pause * (1 + random.random()))
            pause = min(pause * 2, 0.5)


def _sqlite_transactions(engine: Engine, *, wal: bool, read_only: bool = False) -> None:
    """Take over SQLite's transaction handling: WAL, busy timeout, BEGIN IMMEDIATE for writes."""
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # pysqlite must not issue BEGIN itself
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            cursor.execute("PRAGMA foreign_keys = ON")
            if read_only:  # also for an in-memory store: refuse writes the same way
                cursor.execute("PRAGMA query_only = ON")
            if wal:
                _switch_to_wal(cursor)
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        write = conn.get_execution_options().get(WRITE_OPTION, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


@contextlib.contextmanager
def backend_errors(location: StoreLocation, action: str) -> Iterator[None]:
    """Turn database errors into a `BackendError` naming the store and what was being done."""
    sa = _sqlalchemy()
    try:
        yield
    except sa.exc.SQLAlchemyError as e:
        raise BackendError(f"results store {location.display}: cannot {action}: {describe(e, location)}") from None


def describe(error: Exception, location: StoreLocation) -> str:
    """A short, password-free description of a database error (no SQL, no parameters)."""
    original = getattr(error, "orig", None) or error
    text = " ".join(str(original).split()) or type(original).__name__
    if "file is not a database" in text or "database disk image is malformed" in text:
        text += " (the file is not a rankgate SQLite store, or it is damaged)"
    if len(text) > 400:
        text = text[:397] + "..."
    return location.scrub(text)
