"""The rich console every verb prints with: data printed as it is, and no mid-sentence wrapping in CI logs.

Text built from data (ids, run and model names, file paths, install hints such as
``pip install 'rankgate[bench]'``) must never be read as rich markup, which would swallow
anything in square brackets: the console has markup and highlighting off, and styles are
given as values (``style="dim"``, `rich.text.Text`) instead. When the output is not a terminal
(a CI log, a pipe), rich would wrap at 80 columns in the middle of a sentence; there, lines are
not wrapped and tables get a wide canvas.
"""

from __future__ import annotations

from typing import Any

LOG_WIDTH = 200  # columns of a table laid out for a CI log


def console(*, stderr: bool = False) -> Any:
    """A `rich.console.Console` on stdout (or stderr) with markup off and log-friendly wrapping.

    >>> import contextlib, io
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     console().print("pip install 'rankgate[bench]'")
    >>> out.getvalue()
    "pip install 'rankgate[bench]'\\n"
    """
    from rich.console import Console

    probe = Console(stderr=stderr)
    if probe.is_terminal:
        return Console(stderr=stderr, markup=False, highlight=False)
    return Console(stderr=stderr, markup=False, highlight=False, soft_wrap=True, width=max(probe.width, LOG_WIDTH))


def styled(*parts: tuple[str, str] | str) -> Any:
    """A `rich.text.Text` from plain strings and ``(text, style)`` pairs, no markup read.

    >>> styled(("rankgate demo", "bold"), ": 63 queries [graded]").plain
    'rankgate demo: 63 queries [graded]'
    """
    from rich.text import Text

    text = Text()
    for part in parts:
        if isinstance(part, tuple):
            text.append(part[0], style=part[1])
        else:
            text.append(part)
    return text
