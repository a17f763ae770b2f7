"""The console script's exit (`rankgate.cli.run` / `exit_now`): the same exit codes, output and
clean-up as the interpreter's own exit, without its teardown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rankgate import cli

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "".join(f"q{q} Q0 d{d} {r} {10 - r} r\n" for q in (1, 2) for r, d in enumerate(range(1, 4), start=1))


class _Exited(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


@pytest.fixture
def hard_exit(monkeypatch):
    """``os._exit`` raising `_Exited`, and the atexit handlers' runs counted."""
    ran = []

    def fake_exit(status: int) -> None:
        raise _Exited(status)

    monkeypatch.setattr(cli.os, "_exit", fake_exit)
    monkeypatch.setattr(cli.atexit, "_run_exitfuncs", lambda: ran.append(True))
    return ran


@pytest.mark.parametrize(("code", "status", "printed"), [(None, 0, ""), (0, 0, ""), (2, 2, ""), ("no", 1, "no\n")])
def test_exit_status_is_what_sys_exit_gives(hard_exit, capsys, code, status, printed):
    with pytest.raises(_Exited) as exited:
        cli.exit_now(code)
    assert exited.value.status == status
    assert capsys.readouterr().err == printed
    assert hard_exit == [True]  # atexit handlers ran before the exit


def test_a_working_thread_is_waited_for(hard_exit):
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        with pytest.raises(SystemExit) as exited:  # the interpreter's exit: it joins the thread
            cli.exit_now(3)
        assert exited.value.code == 3
        assert hard_exit == []
    finally:
        release.set()
        worker.join()


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return str(qrels), str(run)


def _rankgate(*argv: str, tmp: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TMPDIR": str(tmp)}
    return subprocess.run(
        [sys.executable, "-m", "rankgate", *argv], input=stdin, capture_output=True, env=env, timeout=300
    )


def test_the_process_exits_as_before(tmp_path, files):
    """Codes 0 and 2, all of a long output through a pipe, and the copy of a piped run removed."""
    spool = tmp_path / "spool"
    spool.mkdir()
    per_query = _rankgate(
        "eval", files[0], "-", "-m", "P@1", "--per-query", "--format", "json", tmp=spool, stdin=RUN.encode()
    )
    assert per_query.returncode == 0, per_query.stderr
    assert json.loads(per_query.stdout)["aggregate"] == {"P@1": 0.5}
    assert list(spool.iterdir()) == []  # the atexit handler removed the spooled standard input

    listing = _rankgate("measures", tmp=spool)
    assert listing.returncode == 0
    assert b"nDCG" in listing.stdout and listing.stdout.endswith(b"\n")

    bad = _rankgate("eval", files[0], str(tmp_path / "missing.txt"), tmp=spool)
    assert bad.returncode == 2
    assert b"missing.txt" in bad.stderr and b"Traceback" not in bad.stderr
