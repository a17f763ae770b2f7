"""The code stays lint-clean and type-clean (STYLE.md): ruff and mypy run as part of the suite,
so a change that breaks either cannot land. The tools are pinned in the test extra."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed (pip install -e '.[test]')")
def test_ruff_check_and_format():
    check = _run("ruff", "check", ".")
    assert check.returncode == 0, check.stdout + check.stderr
    formatted = _run("ruff", "format", "--check", "src", "tests", "bench")
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install -e '.[test]')")
def test_mypy_is_clean_on_src():
    typed = _run("mypy")
    assert typed.returncode == 0, typed.stdout + typed.stderr
