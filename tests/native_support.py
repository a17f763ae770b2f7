"""The native kernels for tests: the library the install built, or one compiled for the session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import hatch_build
from rankgate.core import native

_INSTALLED = native.LIBRARY
_compiled: list[Path] = []  # one library compiled for the session, where none was installed


def built_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Path of a built `_native.so`: the installed one, else compiled (once) into a temporary
    folder; skips the calling test when there is no C compiler."""
    if _INSTALLED.exists():
        return _INSTALLED
    if not _compiled:
        if shutil.which(hatch_build.compiler_command()[0]) is None:
            pytest.skip("no C compiler: the native kernels cannot be built here")
        target = tmp_path_factory.mktemp("native") / "_native.so"
        error = hatch_build.compile_library(_INSTALLED.with_name("_native.c"), target)
        assert error is None, error
        _compiled.append(target)
    return _compiled[0]


def use_built_library(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels loaded from `built_library` for the calling test (and reloaded after it)."""
    monkeypatch.setattr(native, "LIBRARY", built_library(tmp_path_factory))
    monkeypatch.setattr(native, "_lib", None)
    assert native.library() is not None
