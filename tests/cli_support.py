"""Running the CLI in-process in tests."""

from __future__ import annotations

import pytest

from rankgate.cli import main


def invoke(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``rankgate ARGV`` in-process: (exit code, stdout, stderr)."""
    try:
        code = main(list(argv)) or 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err
