"""How every verb lays text out: data printed as it is, identifiers never cut, no mid-sentence wrapping in CI logs.

Text built from data (ids, run and model names, file paths, install hints such as
``pip install 'rankgate[bench]'``) must never be read as rich markup, which would swallow
anything in square brackets: the console has markup and highlighting off, and styles are
given as values (``style="dim"``, `rich.text.Text`) instead.

The width policy, in one place: `to_text`, which every renderer that returns text uses, and
`layout_width`, which says what the output is (``--output FILE`` enters `layout` (None)):

- stdout is not a terminal (a CI log, a pipe, ``--output FILE``): no width is imposed. A table is
  as wide as its widest cells, a sentence is one line, so ``grep '^settings:'`` finds all of it.
- stdout is a terminal: text wraps at the terminal's width (rich's, so ``$COLUMNS`` wins). A table
  fits that width when it can by wrapping its other columns, but a column of identifiers (system
  and run names, query ids, measure names: every column made with ``no_wrap=True``) is never
  shrunk: the table is laid out wider than the terminal rather than cut one.

No cell is ever cut with an ellipsis ("…"): a column that shrinks wraps its cells between words.
`console`, for the verbs that print as they go (``demo``, ``measures``), keeps the first rule for
text (never wrapped in a log) and gives tables a canvas of `LOG_WIDTH` columns there.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, Literal

LOG_WIDTH = 200  # columns of the canvas `console` gives a CI log (its text is never wrapped)
NO_LIMIT = 10_000  # columns of the canvas `to_text` measures on when no width is imposed

Width = int | None | Literal["auto"]  # columns of a terminal; None: not a terminal; "auto": stdout's
_LAYOUT: ContextVar[Width] = ContextVar("rankgate_layout", default="auto")


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

    if is_tty(sys.stderr if stderr else sys.stdout):
        return Console(stderr=stderr, markup=False, highlight=False)
    probe = Console(stderr=stderr)
    return Console(stderr=stderr, markup=False, highlight=False, soft_wrap=True, width=max(probe.width, LOG_WIDTH))


def is_tty(stream: Any) -> bool:
    """Whether ``stream`` is a terminal. FORCE_COLOR and TTY_COMPATIBLE (which CI logs set to get
    colours) do not make a log a terminal: its lines have no width to wrap at.

    >>> import io
    >>> is_tty(io.StringIO())
    False
    """
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


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


@contextlib.contextmanager
def layout(width: Width) -> Iterator[None]:
    """Within the block, `to_text` lays text out for ``width`` unless told otherwise.

    The CLI's ``--output FILE`` enters ``layout(None)``: a file is not a terminal, whatever stdout is.
    """
    token = _LAYOUT.set(width)
    try:
        yield
    finally:
        _LAYOUT.reset(token)


def layout_width() -> int | None:
    """The columns text is laid out for now: a terminal's, or None when the output is not a terminal.

    >>> with layout(None):
    ...     layout_width() is None
    True
    >>> with layout(60):
    ...     layout_width()
    60
    """
    width = _LAYOUT.get()
    if width != "auto":
        return width
    if not is_tty(sys.stdout):
        return None
    from rich.console import Console

    return int(Console().width)  # the terminal's width as rich reads it: $COLUMNS, else the tty's size


def to_text(renderable: Any, width: Width = "auto") -> str:
    """``renderable`` (a rich table, text or group of them) as plain text, by the width policy above.

    ``width`` is the terminal's columns, None for no limit (not a terminal), or "auto": the
    current `layout` (stdout's terminal, or none). Each part of a `rich.console.Group` is laid
    out apart, so a footer sentence under a table wider than the terminal still wraps at the
    terminal's width (or, with no limit, stays one line).

    >>> from rich.table import Table
    >>> t = Table(box=None)
    >>> t.add_column("system", no_wrap=True)
    >>> t.add_column("nDCG@10", justify="right")
    >>> t.add_row("contriever_msmarco_finetuned_hnsw_M32_efsearch_128", "0.7111")
    >>> [line.split() for line in to_text(t, width=20).splitlines()]  # a 20-column terminal
    [['system', 'nDCG@10'], ['contriever_msmarco_finetuned_hnsw_M32_efsearch_128', '0.7111']]
    """
    from rich.console import Group

    columns = layout_width() if width == "auto" else width
    parts = renderable.renderables if isinstance(renderable, Group) else [renderable]
    return "".join(_part_text(part, columns) for part in parts)


def _canvas(width: int, out: io.StringIO | None = None) -> Any:
    from rich.console import Console

    # markup off: ids, names and tag values are the user's text ("[x]" is not a style)
    return Console(
        file=out or io.StringIO(),
        width=width,
        color_system=None,
        force_terminal=False,
        markup=False,
        highlight=False,
    )


def _part_text(part: Any, columns: int | None) -> str:
    from rich.console import Group
    from rich.measure import Measurement
    from rich.table import Table

    if isinstance(part, Group):
        return "".join(_part_text(p, columns) for p in part.renderables)
    probe = _canvas(NO_LIMIT)
    out = io.StringIO()
    if not isinstance(part, Table):
        if columns is None:  # not a terminal: one line per line, whatever its length
            _canvas(max(Measurement.get(probe, probe.options, part).maximum, 1), out).print(part, soft_wrap=True)
        else:
            _canvas(columns, out).print(part)
        return out.getvalue()
    table, width = _laid_out(part, columns)
    # a title or caption wider than the table would wrap at the table's width: it becomes a line of its own
    above: list[Any] = []
    below: list[Any] = []
    if table.title is not None and Measurement.get(probe, probe.options, table.title).maximum > width:
        above, table.title = [table.title], None
    if table.caption is not None and Measurement.get(probe, probe.options, table.caption).maximum > width:
        below, table.caption = [table.caption], None
    _canvas(width, out).print(table)
    lines = [_part_text(line, columns) for line in above], [_part_text(line, columns) for line in below]
    return "".join([*lines[0], out.getvalue(), *lines[1]])


def _laid_out(table: Any, columns: int | None) -> tuple[Any, int]:
    """A copy of ``table`` laid out for ``columns``, and the width it takes.

    As wide as its widest cells when that fits (or nothing is imposed). Otherwise the columns
    shrink, widest first, down to their longest word (their cells wrap between words) but
    ``no_wrap`` columns (identifiers) not at all: the table is wider than ``columns`` when it
    must be. Cells fold rather than end in "…" should anything still not fit.
    """
    import copy
    import dataclasses

    from rich.measure import Measurement

    probe = _canvas(NO_LIMIT)
    out = copy.copy(table)
    out.columns = [
        dataclasses.replace(c, overflow="fold" if c.overflow == "ellipsis" else c.overflow) for c in table.columns
    ]
    natural = Measurement.get(probe, probe.options, out).maximum
    if columns is None or natural <= columns:
        return out, natural
    widths, least = [], []
    for column in out.columns:
        cells = [column.header, *column.cells, *([column.footer] if table.show_footer else [])]
        spans = [Measurement.get(probe, probe.options, c) for c in cells]
        widest = column.width if column.width is not None else max(s.maximum for s in spans)
        widths.append(widest)
        least.append(widest if column.no_wrap or column.width is not None else max(s.minimum for s in spans))
    shrink = min(natural - columns, sum(widths) - sum(least))
    for _ in range(shrink):  # one column at a time, the widest of those that can still shrink
        i = max((j for j in range(len(widths)) if widths[j] > least[j]), key=lambda j: widths[j])
        widths[i] -= 1
    out.columns = [dataclasses.replace(c, width=w) for c, w in zip(out.columns, widths, strict=True)]
    return out, natural - shrink
