"""Shared fixtures and helpers for the test suite."""

from __future__ import annotations

from pathlib import Path

import pytest


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture
def files(tmp_path: Path):
    """Write named text files into tmp_path and return their paths."""

    def make(**texts: str) -> dict[str, str]:
        return {name: write(tmp_path / name.replace("_", "."), text) for name, text in texts.items()}

    return make
