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

rich measures and draws a table cell by cell (~100-200 µs a cell: seconds for a per-query table of
thousands of queries). A table of one-line cells that fits its width is written out by
`_fast_table_text` instead, byte for byte what rich writes (tests/test_render_fast_tables.py);
any other table goes through rich.
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
FAST_TABLES = True  # False: every table goes through rich (tests compare the two paths byte for byte)

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
    text = "".join(_part_text(part, columns) for part in parts)
    return "\n".join(line.rstrip(" ") for line in text.split("\n"))  # a centred title's padding, a last cell's


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
    if isinstance(part, Table):
        fast = _fast_table_text(part, columns) if FAST_TABLES else None
        return fast if fast is not None else _rich_table_text(part, columns)
    probe = _canvas(NO_LIMIT)
    out = io.StringIO()
    if columns is None:  # not a terminal: one line per line, whatever its length
        _canvas(max(Measurement.get(probe, probe.options, part).maximum, 1), out).print(part, soft_wrap=True)
    else:
        _canvas(columns, out).print(part)
    return out.getvalue()


def _rich_table_text(part: Any, columns: int | None) -> str:
    """A table laid out by rich: `_laid_out`, then rich renders it (each a pass over every cell)."""
    from rich.measure import Measurement

    probe = _canvas(NO_LIMIT)
    out = io.StringIO()
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
    ``no_wrap`` columns (identifiers) not at all. When even that is wider than ``columns``, the
    table keeps its natural width: wrapping an interval or a sentence in a table that overflows
    the terminal anyway would only make each row harder to read. Cells fold rather than end in
    "…" should anything still not fit.
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
    if natural - columns > sum(widths) - sum(least):  # it cannot fit: wider, but no cell wrapped for nothing
        return out, natural
    shrink = natural - columns
    for _ in range(shrink):  # one column at a time, the widest of those that can still shrink
        i = max((j for j in range(len(widths)) if widths[j] > least[j]), key=lambda j: widths[j])
        widths[i] -= 1
    out.columns = [dataclasses.replace(c, width=w) for c, w in zip(out.columns, widths, strict=True)]
    return out, natural - shrink


_JUSTIFY = ("left", "center", "right")


def _fast_table_text(table: Any, columns: int | None) -> str | None:
    """What `_rich_table_text` gives for ``table``, in one pass over its cells (rich takes two,
    ~100-200 µs a cell); None when ``table`` uses anything not replicated here, for rich to lay out.

    Replicated: cells that fit as they are (no limit, or the table fits ``columns``: no column
    shrinks, no cell wraps), of one line or, for a ``str`` below the header, several (each
    justified, the row as tall as its tallest cell, the others' lines at the top), any box, a
    header, sections (``end_section``, ``show_lines``), left and right padding with ``pad_edge``
    and ``collapse_padding``, left, center and right justification, titles and captions (inside,
    or a line of their own when wider than the table).
    Styles need nothing: the canvas has no colours. tests/test_render_fast_tables.py holds the
    two paths to the same bytes.
    """
    if (
        not table.columns
        or table.width is not None  # width, min_width, expand: rich stretches the columns
        or table.min_width is not None
        or table.expand
        or table.show_footer
        or table.leading
        or table.padding[0]  # blank lines above or below each cell
        or table.padding[2]
    ):
        return None
    probe = _canvas(NO_LIMIT)
    cells = _fast_columns(table, probe)
    if cells is None:
        return None
    widths, rendered = cells
    box = table.box and table.box.substitute(
        probe.options, safe=probe.safe_box if table.safe_box is None else table.safe_box
    )
    box = box.get_plain_headed_box() if box and not table.show_header else box
    width = sum(widths) + ((len(widths) - 1) + 2 * table.show_edge if box else 0)
    if width > (NO_LIMIT if columns is None else min(columns, NO_LIMIT)):
        return None  # too wide: rich shrinks columns (`_laid_out`)
    title = _annotation(table.title, table.title_justify, width, columns, probe)
    caption = _annotation(table.caption, table.caption_justify, width, columns, probe)
    if title is None or caption is None:
        return None
    lines = _fast_lines(table, box, widths, list(zip(*rendered, strict=True)))
    return title[0] + title[1] + "".join(f"{line}\n" for line in lines) + caption[1] + caption[0]


def _fast_columns(table: Any, probe: Any) -> tuple[list[int], list[list[str]]] | None:
    """Each column's width and its cells (header first) padded to it, a cell's lines joined by
    "\\n"; None if a cell is not plain lines (`_column_cells`) or rich would not draw the column at
    the width it measures."""
    _, right, _, left = table.padding
    last = len(table.columns) - 1
    widths: list[int] = []
    rendered: list[list[str]] = []
    for i, column in enumerate(table.columns):
        if (column.width, column.min_width, column.max_width, column.ratio) != (None, None, None, None):
            return None
        if column.justify not in _JUSTIFY:
            return None
        raw = [column.header, *column.cells] if table.show_header else list(column.cells)
        if not raw or len(raw) != len(table.rows) + table.show_header:  # no cells; a column added after rows
            return None
        if column.vertical != "top":  # where rich puts a short cell's lines in a taller row
            return None
        cells = _column_cells(raw, probe, header=table.show_header)
        if cells is None:
            return None
        first, end = i == 0, i == last
        # the padding rich draws (`Table._get_cells`) and the one it measures the column with
        # (`Table._get_padding_width`): where they differ (collapse_padding) its cells wrap
        pad_left = left if first or not table.collapse_padding else max(0, left - right)
        pad_left = 0 if first and not table.pad_edge else pad_left
        pad_right = 0 if end and not table.pad_edge else right
        measured = (0 if table.collapse_padding or (first and not table.pad_edge) else left) + pad_right
        content = max((n for cell in cells for _, n in (cell if isinstance(cell, list) else [cell])), default=0)
        if pad_left + pad_right != measured or content + measured == 0:  # rich widens an empty column to 1
            return None
        gap_left, gap_right = " " * pad_left, " " * pad_right
        rendered.append(
            [
                f"{gap_left}{_justify(*cell, content, column.justify)}{gap_right}"
                if isinstance(cell, tuple)
                else "\n".join(f"{gap_left}{_justify(t, n, content, column.justify)}{gap_right}" for t, n in cell)
                for cell in cells
            ]
        )
        widths.append(content + measured)
    return widths, rendered


def _column_cells(raw: list[Any], probe: Any, *, header: bool) -> list[tuple[str, int] | list[tuple[str, int]]] | None:
    """A column's cells as `_one_line` reads them; a ``str`` below the header may hold several lines
    (an interval under its mean), none blank: a list of them. None where rich lays one out otherwise
    (a header's lines would sit at the bottom of its row)."""
    cells: list[tuple[str, int] | list[tuple[str, int]]] = []
    for j, cell in enumerate(raw):
        if type(cell) is str and "\n" in cell:
            lines = [_one_line(part, probe) for part in cell.split("\n")]
            kept = [line for line in lines if line is not None and line[0]]
            if (header and j == 0) or len(kept) != len(lines):
                return None
            cells.append(kept)
            continue
        line = _one_line(cell, probe)
        if line is None:
            return None
        cells.append(line)
    return cells


def _fast_lines(table: Any, box: Any, widths: list[int], rows: list[tuple[str, ...]]) -> list[str]:
    """The table's lines, as `rich.table.Table._render` draws them, from its rows of padded cells
    (a cell of several lines is as they are joined by "\\n": its row is that tall, `_row_lines`)."""
    if not box:
        return [line for row in rows for line in _row_lines(row, widths, "")]
    lines = [box.get_top(widths)] if table.show_edge else []
    for r, row in enumerate(rows):
        # the first row takes the box's head characters, the last its foot ones, the rest its mid ones
        part = "head" if r == 0 else "foot" if r == len(rows) - 1 else "mid"
        left_edge, right_edge = (getattr(box, f"{part}_{side}") for side in ("left", "right"))
        if not table.show_edge:
            left_edge = right_edge = ""
        lines.extend(
            left_edge + line + right_edge for line in _row_lines(row, widths, getattr(box, f"{part}_vertical"))
        )
        if r == 0 and table.show_header:
            lines.append(box.get_row(widths, "head", edge=table.show_edge))
        elif r < len(rows) - 1 and (table.show_lines or table.rows[r - table.show_header].end_section):
            lines.append(box.get_row(widths, "row", edge=table.show_edge))
    if table.show_edge:
        lines.append(box.get_bottom(widths))
    return lines


def _row_lines(row: tuple[str, ...], widths: list[int], divider: str) -> list[str]:
    """One row's lines: its cells side by side; a cell of several lines (joined by "\\n") makes the
    row that tall, the shorter cells filled with blank lines below."""
    if not any("\n" in cell for cell in row):  # the usual row: one line
        return [divider.join(row)]
    cells = [cell.split("\n") for cell in row]
    height = max(map(len, cells))
    return [
        divider.join(cell[i] if i < len(cell) else " " * width for cell, width in zip(cells, widths, strict=True))
        for i in range(height)
    ]


def _one_line(cell: Any, probe: Any) -> tuple[str, int] | None:
    """``cell``'s text and its width in columns, if rich draws it as one line of just those
    characters (a str, or a `rich.text.Text` that sets no layout of its own); else None."""
    if type(cell) is str:
        text = probe.render_str(cell).plain if ":" in cell else cell  # as rich does, ":smile:" is an emoji
    else:
        from rich.text import Text

        if type(cell) is not Text or cell.justify is not None or cell.overflow is not None or cell.end != "\n":
            return None
        text = cell.plain
    if not text.isprintable():  # newlines, tabs, control and format characters, spaces other than " "
        return None
    if text.isascii():
        return text, len(text)
    from rich.cells import cell_len

    # a zero-width character (a combining mark, a variation selector) makes rich count characters and
    # cells apart (`Text.rstrip_end`): CJK and emoji are 2 columns each, the rest 1
    return (text, cell_len(text)) if all(cell_len(c) for c in text) else None


def _justify(text: str, n: int, width: int, justify: str) -> str:
    """``text``, ``n`` columns wide, justified in ``width`` columns as rich does it
    (`rich.containers.Lines.justify`: trailing spaces go before centering or right-aligning).

    >>> [_justify("ab ", 3, 6, j) for j in ("left", "center", "right")]
    ['ab    ', '  ab  ', '    ab']
    """
    if justify == "left":
        return text + " " * (width - n)
    stripped = text.rstrip()
    space = width - n + len(text) - len(stripped)
    if justify == "right":
        return " " * space + stripped
    return " " * (space // 2) + stripped + " " * (space - space // 2)


def _annotation(text: Any, justify: str, width: int, columns: int | None, probe: Any) -> tuple[str, str] | None:
    """A title or caption of a table ``width`` columns wide, as (a line of its own, a line in the
    table); None where rich lays it out otherwise (it wraps, or is not one line)."""
    if text is None:
        return "", ""
    line = _one_line(text, probe)
    if line is None or justify not in _JUSTIFY:
        return None
    plain, n = line
    if n > width:  # a line of its own (`_rich_table_text`) as it is, unless it wraps at the terminal
        return None if columns is not None and n > columns else (f"{plain}\n", "")
    return ("", f"{_justify(plain, n, width, justify)}\n") if text else ("", "")
