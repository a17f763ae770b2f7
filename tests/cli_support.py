"""Running the CLI in-process in tests: the one runner every test uses."""

from __future__ import annotations

import pytest

from rankgate.cli import main


def exit_code(*argv: str) -> int:
    """Run ``rankgate ARGV`` in-process; its exit code (the output stays in the capture).

    ``main`` ends in ``SystemExit`` for errors and may return a command's value on success;
    both map to the exit code a shell would see.
    """
    try:
        returned = main(list(argv))
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return returned if isinstance(returned, int) else 0


def invoke(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``rankgate ARGV`` in-process: (exit code, stdout, stderr)."""
    code = exit_code(*argv)
    out, err = capsys.readouterr()
    return code, out, err
