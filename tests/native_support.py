"""The native kernels for tests: the library the install built, or one compiled for the session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import hatch_build
from rankgate.core import native


def built_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Path of a built `_native.so`: the installed one, else compiled into a temporary folder;
    skips the calling test when there is no C compiler."""
    if native.LIBRARY.exists():
        return native.LIBRARY
    if shutil.which(hatch_build.compiler_command()[0]) is None:
        pytest.skip("no C compiler: the native kernels cannot be built here")
    target = tmp_path_factory.mktemp("native") / "_native.so"
    error = hatch_build.compile_library(native.LIBRARY.with_name("_native.c"), target)
    assert error is None, error
    return target
