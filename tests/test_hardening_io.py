"""Hostile input files and output targets (issue 23): what the io layer guarantees.

Outputs: only regular files are replaced by rename; a symlink stays a link, devices and pipes are
written into. Inputs: every malformed file is an `InputError` naming ``file[:line]`` (exit 2 with
one line through the CLI), never a traceback or a hang.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

import rankgate
from rankgate.io import write_run
from tests.cli_support import invoke

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN = "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\nq2 Q0 d3 1 1.0 sys\n"
RUN_DICT = {"q1": {"d1": 2.0, "d2": 1.0}}


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")


# --------------------------------------------------------------------------------------
# 23.1 Output targets that are not regular files
# --------------------------------------------------------------------------------------
def test_symlink_target_is_replaced_and_the_link_kept(tmp_path, files, capsys):
    real = tmp_path / "real" / "out.txt"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    code, _, err = invoke(capsys, "eval", *files, "-m", "P@1", "-o", str(link))
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert "P@1" in real.read_text()
    assert sorted(os.listdir(real.parent)) == ["out.txt"]  # no temporary file left beside it
    assert sorted(os.listdir(tmp_path)) == ["link.txt", "qrels.txt", "real", "run.txt"]


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.run"
    link.symlink_to(tmp_path / "new.run")
    write_run(rankgate.Run.from_dict(RUN_DICT), link)
    assert link.is_symlink() and (tmp_path / "new.run").read_text().startswith("q1 Q0 d1 1")


def _read_fifo(path: Path, into: list[bytes]) -> None:
    with open(path, "rb") as f:
        into.append(f.read())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("through_cli", [True, False])
def test_fifo_target_is_written_into(tmp_path, files, capsys, through_cli):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=_read_fifo, args=(fifo, got), daemon=True)
    reader.start()
    if through_cli:
        code, _, err = invoke(capsys, "eval", *files, "-m", "P@1", "-o", str(fifo))
        assert code == 0, err
    else:
        write_run(rankgate.Run.from_dict(RUN_DICT), fifo)
    reader.join(10)
    assert not reader.is_alive()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert (b"P@1" if through_cli else b"q1 Q0 d1 1 2.0") in got[0]
    assert sorted(os.listdir(tmp_path)) == ["out.fifo", "qrels.txt", "run.txt"]


def _device_node(tmp_path: Path) -> Path:
    """A private character device like /dev/null where the test may make one (root), else /dev/null."""
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        with open(node, "wb") as f:  # a container may forbid using the node it let us make
            f.write(b"")
    except (OSError, AttributeError):
        return Path("/dev/null")
    return node


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
@pytest.mark.parametrize("through_cli", [True, False])
def test_device_target_stays_a_device(tmp_path, files, capsys, through_cli):
    device = _device_node(tmp_path)
    before = os.stat(device)
    assert stat.S_ISCHR(before.st_mode)
    if through_cli:
        code, _, err = invoke(capsys, "eval", *files, "-m", "P@1", "-o", str(device))
        assert code == 0, err
    else:
        write_run(rankgate.Run.from_dict(RUN_DICT), device)
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert not [n for n in os.listdir(device.parent) if n.startswith(f".{device.name}.")]  # no temp file


def test_dev_stdout_is_written_into_not_replaced(tmp_path, files):
    """``-o /dev/stdout`` with stdout redirected to a file: the text lands in that file, which stays."""
    import subprocess
    import sys

    out = tmp_path / "stdout.txt"
    with open(out, "wb") as f:
        done = subprocess.run(
            [sys.executable, "-m", "rankgate", "eval", *files, "-m", "P@1", "-o", "/dev/stdout"],
            stdout=f,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    assert "P@1" in out.read_text()
    assert sorted(os.listdir(tmp_path)) == ["qrels.txt", "run.txt", "stdout.txt"]


def test_regular_file_target_is_still_replaced_atomically(tmp_path):
    target = tmp_path / "out.run"
    target.write_text("old\n")
    inode = os.stat(target).st_ino
    write_run(rankgate.Run.from_dict(RUN_DICT), target)
    assert target.read_text().startswith("q1 Q0 d1 1") and os.stat(target).st_ino != inode
