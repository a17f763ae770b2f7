"""`atomic_writer`: all or nothing, and the permissions of an ordinary write."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from rankgate.errors import InputError
from rankgate.io.source import atomic_writer

posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_writes_the_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.txt"
    with atomic_writer(target) as f:
        f.write("a\nb\n")
    assert target.read_text() == "a\nb\n"
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_failure_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_writer(target) as f:
        f.write("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


@posix
def test_new_file_gets_the_umask_permissions_not_0600(tmp_path: Path) -> None:
    target = tmp_path / "new.json"
    with atomic_writer(target) as f:
        f.write("{}")
    assert target.stat().st_mode & 0o777 == 0o666 & ~current_umask()
    assert target.stat().st_mode & 0o777 != 0o600 or current_umask() == 0o066


@posix
def test_replaced_file_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "private.db.json"
    target.write_text("old")
    target.chmod(0o640)
    with atomic_writer(target, "wb") as f:
        f.write(b"new")  # type: ignore[arg-type]  # binary in "wb" mode
    assert target.read_bytes() == b"new"
    assert target.stat().st_mode & 0o777 == 0o640


def test_unwritable_folder_is_an_input_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="cannot write"), atomic_writer(blocker / "out.txt") as f:
        f.write("x")
