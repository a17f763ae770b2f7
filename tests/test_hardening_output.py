"""Issue 23 items 9 and 11: a closed stdout keeps the exit code; every output format escapes what it must."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import rankgate
from rankgate.data import demo_qrels_path, demo_run_path

QRELS = str(demo_qrels_path())
DENSE = str(demo_run_path("dense"))
DEMO_GATES = str(rankgate.data.demo_gates_path())


# ---------------------------------------------------------------------------------------------
# 23.9: a closed pipe on stdout
# ---------------------------------------------------------------------------------------------
def _run_into_closed_pipe(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``rankgate ARGV`` as a real process whose stdout is a pipe with no reader left."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte, as after `| head -1` read its line
    try:
        return subprocess.run(
            [sys.executable, "-m", "rankgate", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)


def _failing_config(tmp_path: Path) -> str:
    path = tmp_path / "gates.yaml"
    path.write_text("gates:\n  - name: recall_at_5\n    threshold: 0.99\n    severity: error\n")
    return str(path)


CLOSED_PIPE_CASES = [
    ("passing gate", lambda tmp: ["gate", "--qrels", QRELS, "--run", DENSE, "--config", DEMO_GATES], 0),
    ("failing gate", lambda tmp: ["gate", "--qrels", QRELS, "--run", DENSE, "--config", _failing_config(tmp)], 1),
    ("eval", lambda tmp: ["eval", QRELS, DENSE, "-m", "nDCG@10", "--per-query"], 0),
]


@pytest.mark.parametrize(("case", "argv", "code"), CLOSED_PIPE_CASES, ids=[c[0] for c in CLOSED_PIPE_CASES])
def test_a_closed_stdout_keeps_the_exit_code(tmp_path, case, argv, code):
    done = _run_into_closed_pipe(argv(tmp_path))
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert "BrokenPipe" not in done.stderr and "Broken pipe" not in done.stderr, done.stderr


def test_a_reader_that_leaves_after_one_line_keeps_the_exit_code(tmp_path):
    """The issue's own shape, `rankgate gate ... | head -1` (whether a write fails depends on timing)."""
    argv = ["gate", "--qrels", QRELS, "--run", DENSE, "--config", DEMO_GATES]
    proc = subprocess.Popen(
        [sys.executable, "-m", "rankgate", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert first.startswith("rankgate gate: PASS")
    assert "Traceback" not in err and "Exception ignored" not in err, err
