"""A real, throwaway PostgreSQL server for the tests of the PostgreSQL store path.

`postgres_server` (session scope) runs ``initdb`` and ``pg_ctl start`` from the server
binaries (``/usr/lib/postgresql/<version>/bin``, ``pg_config --bindir`` or ``$PATH``) into a
temporary folder, listening on 127.0.0.1 at a free port with password (SCRAM) auth, and
stops it at the end of the session. As root it runs the server as the ``postgres`` OS user
(``initdb`` refuses root). Without the binaries the tests are skipped with a reason (CI
installs the Debian package ``postgresql``).

`postgres_url` gives each test its own fresh database.
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SKIP_REASON = (
    "PostgreSQL server binaries (initdb, pg_ctl) not found: install the Debian package 'postgresql' "
    "(or put the server's bin folder on PATH) to run the PostgreSQL store tests"
)


def find_bindir() -> Path | None:
    """Folder holding ``initdb`` and ``pg_ctl``, newest version first; None when absent."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name.split(".")[0]), reverse=True
    )
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        if out.returncode == 0 and out.stdout.strip():
            candidates.append(out.stdout.strip())
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(initdb).parent))
    for folder in candidates:
        if (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PostgresServer:
    """A running server; `url` builds connection URLs (with the password, for the tests only)."""

    bindir: Path
    root: Path
    port: int
    password: str
    user: str = "postgres"
    host: str = "127.0.0.1"
    as_user: list[str] = field(default_factory=list)  # ["runuser", "-u", "postgres", "--"] when root
    running: bool = False

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres", *, password: str | None = None) -> str:
        secret = self.password if password is None else password
        return f"postgresql://{self.user}:{secret}@{self.host}:{self.port}/{database}"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.as_user, *args], cwd=self.root, capture_output=True, text=True, check=check, timeout=120
        )

    def start(self) -> None:
        pwfile = self.root / "pwfile"
        pwfile.write_text(self.password + "\n")
        self._own(pwfile)
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.datadir),
            "-U",
            self.user,
            "--pwfile",
            str(pwfile),
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        )
        pwfile.unlink()
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses={self.host} "
            "-c fsync=off -c full_page_writes=off -c synchronous_commit=off -c max_connections=50"
        )
        done = self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.datadir),
            "-l",
            str(self.root / "server.log"),
            "-w",
            "-t",
            "60",
            "-o",
            options,
            "start",
            check=False,
        )
        if done.returncode != 0:
            log = (self.root / "server.log").read_text(errors="replace") if (self.root / "server.log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {done.stdout}{done.stderr}\n{log[-2000:]}")
        self.running = True

    def stop(self) -> None:
        if self.running:
            self._run(
                str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-m", "immediate", "-w", "stop", check=False
            )
            self.running = False
        shutil.rmtree(self.root, ignore_errors=True)

    def _own(self, path: Path) -> None:
        if self.as_user:
            entry = pwd.getpwnam("postgres")
            os.chown(path, entry.pw_uid, entry.pw_gid)

    def create_database(self, name: str) -> str:
        """Create database ``name``; returns its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def start_server(bindir: Path | None = None) -> PostgresServer:
    """Start a server from ``bindir`` (default: `find_bindir`), or skip the calling test when binaries are missing."""
    bindir = bindir or find_bindir()
    if bindir is None:
        pytest.skip(SKIP_REASON)
    as_user: list[str] = []
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' OS user to run the server as (initdb refuses root)")
        runuser = shutil.which("runuser")
        if runuser is None:
            pytest.skip("running as root and 'runuser' is missing: cannot start PostgreSQL as the postgres user")
        as_user = [runuser, "-u", "postgres", "--"]
    root = Path(tempfile.mkdtemp(prefix="rankgate-pg-"))
    server = PostgresServer(bindir=bindir, root=root, port=free_port(), password=secrets.token_hex(12), as_user=as_user)
    server._own(root)
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    atexit.register(server.stop)  # in case the session is interrupted before the fixture's teardown
    return server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A running PostgreSQL server for the whole test session; stopped at the end."""
    server = start_server()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """URL (with password) of a fresh, empty database on `postgres_server`."""
    name = f"rankgate_{uuid.uuid4().hex[:12]}"
    url = postgres_server.create_database(name)
    try:
        yield url
    finally:
        postgres_server.drop_database(name)
