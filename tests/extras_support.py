"""Skipping tests that need an optional extra (the hooks are in the root conftest.py)."""

from __future__ import annotations

import pytest

from rankgate import extras


def skip_reason(extra: str) -> str:
    """The reason a test is skipped for want of ``extra`` (a rankgate extra, or ``test``)."""
    return f"needs the {extra} extra: pip install -e '.[{extra}]'"


def needs(*names: str) -> None:
    """Skip the calling test module unless every extra in ``names`` is installed.

    Call it at module level before the imports that need the extras (``pytestmark`` comes too
    late for those: the module would fail to import).
    """
    for extra in names:
        if not extras.installed(extra):
            pytest.skip(skip_reason(extra), allow_module_level=True)
