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
    """``os._exit`` raising `_Exited`, the atexit handlers' runs counted, and no other thread seen
    (a thread another test left running would send `exit_now` the usual way)."""
    ran = []

    def fake_exit(status: int) -> None:
        raise _Exited(status)

    monkeypatch.setattr(cli.os, "_exit", fake_exit)
    monkeypatch.setattr(cli.atexit, "_run_exitfuncs", lambda: ran.append(True))
    monkeypatch.setattr(cli.threading, "enumerate", lambda: [threading.main_thread()])
    monkeypatch.setattr(cli.sys, "gettrace", lambda: None)  # as without a coverage tool or debugger
    monkeypatch.setattr(cli.sys, "getprofile", lambda: None)
    return ran


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (2, 2), (True, 1), (255, 255)])
def test_exit_status_is_what_sys_exit_gives(hard_exit, code, status):
    with pytest.raises(_Exited) as exited:
        cli.exit_now(code)
    assert exited.value.status == status
    assert hard_exit == [True]  # atexit handlers ran before the exit


@pytest.mark.parametrize("code", ["a message", -1, 256, 2**64])
def test_other_codes_take_the_interpreters_exit(hard_exit, code):
    """A message is printed, and numbers outside 0-255 are mapped, by the interpreter's own rules."""
    with pytest.raises(SystemExit) as exited:
        cli.exit_now(code)
    assert exited.value.code == code
    assert hard_exit == []


def test_a_profiler_or_tracer_takes_the_interpreters_exit(hard_exit, monkeypatch):
    monkeypatch.setattr(cli.sys, "getprofile", lambda: object())
    with pytest.raises(SystemExit):
        cli.exit_now(0)
    assert hard_exit == []


def test_a_working_thread_is_waited_for(hard_exit, monkeypatch):
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    monkeypatch.setattr(cli.threading, "enumerate", lambda: [threading.main_thread(), worker])
    worker.start()
    try:
        with pytest.raises(SystemExit) as exited:  # the interpreter's exit: it joins the thread
            cli.exit_now(3)
        assert exited.value.code == 3
        assert hard_exit == []
    finally:
        release.set()
        worker.join()


def test_output_that_cannot_be_flushed_takes_the_interpreters_exit(hard_exit, monkeypatch):
    class Full:
        def flush(self) -> None:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli.sys, "stdout", Full())
    with pytest.raises(SystemExit):
        cli.exit_now(0)


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return str(qrels), str(run)


# The child holds an object whose __del__ prints at the interpreter's teardown: absent, the
# teardown was skipped.
_CHILD = """
import sys
from rankgate.cli import run
class Marker:
    def __del__(self):
        sys.stderr.write("TEARDOWN\\n")
marker = Marker()
sys.argv[0] = "rankgate"
run()
"""


def _rankgate(*argv: str, tmp: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, "-c", _CHILD, *argv], input=stdin, capture_output=True, env=env, timeout=300)


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
    assert b"TEARDOWN" not in per_query.stderr  # the interpreter's teardown was skipped

    listing = _rankgate("measures", tmp=spool)
    assert listing.returncode == 0
    assert b"nDCG" in listing.stdout and listing.stdout.endswith(b"\n")

    bad = _rankgate("eval", files[0], str(tmp_path / "missing.txt"), tmp=spool)
    assert bad.returncode == 2
    assert b"missing.txt" in bad.stderr and b"Traceback" not in bad.stderr
    assert b"TEARDOWN" not in bad.stderr


def test_a_profiler_still_gets_to_write_its_report(tmp_path, files):
    report = tmp_path / "eval.prof"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = ["eval", files[0], files[1], "-m", "P@1", "--format", "json"]
    done = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(report), "-m", "rankgate", *argv],
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert report.stat().st_size > 0


def test_verbs_that_run_a_users_code_keep_the_teardown(tmp_path):
    """`label` (like bench, retrieve, demo, serve) may run code that relies on the teardown."""
    done = _rankgate("label", "--help", tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    assert b"TEARDOWN" in done.stderr
