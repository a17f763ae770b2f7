"""`to_text`'s fast path for tables writes the very bytes rich's layout writes.

A table whose cells are one plain line each and that fits its width (the common case: a
per-query table of thousands of rows) is written out by `_fast_table_text` instead of being
measured and drawn by rich cell by cell. These tests hold the two paths byte for byte over
random tables (boxes rankgate uses and a few more, headers, edges, sections, padding, justify,
titles and captions narrower and wider than the table, CJK, emoji, ``:smile:`` codes, brackets,
empty cells, no width and terminal widths), show that the comparison catches small mistakes
(mutants of the fast path), and that tables outside what it replicates go to rich.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pytest
from rich import box as rich_box
from rich.console import Group
from rich.table import Table
from rich.text import Text

import rankgate
from rankgate.render import terminal
from rankgate.render.terminal import _fast_table_text, _laid_out, _rich_table_text, to_text

BOXES = {
    "HEAVY_HEAD": rich_box.HEAVY_HEAD,  # rich's default: most of rankgate's tables
    "SIMPLE_HEAD": rich_box.SIMPLE_HEAD,  # bench demo
    "None": None,
    "SIMPLE": rich_box.SIMPLE,
    "ROUNDED": rich_box.ROUNDED,
    "ASCII": rich_box.ASCII,
    "MINIMAL": rich_box.MINIMAL,
}
# what each word brings: ascii, spaces (trailing ones too), markup-looking brackets, CJK and emoji
# (2 columns each), an emoji code rich replaces (":smile:"), colons it keeps, accents of 1 column
WORDS = [
    "q1",
    "nDCG@10",
    "0.7111",
    "contriever_msmarco",
    "a b",
    " lead",
    "trail ",
    "two  ",
    " ",
    "",
    "[x]",
    "[bold]q1[/bold]",
    "pip install 'rankgate[bench]'",
    "中文",
    "検索",
    "🙂",
    "😀 ok",
    ":smile:",
    "doc:1:2",
    ":",
    "é",
    "Ωmega",
    "—",
    "x" * 30,
]
# cells the fast path leaves to rich, mixed in now and then: the two paths must still agree
UNSUPPORTED_WORDS = ["two\nlines", "tab\there", "e\u0301", "❤️", "👨\u200d👩", "nb\xa0sp"]


@dataclass
class Spec:
    """A random table, built afresh for each path (rich's layout copies it but to be safe)."""

    box: str
    show_header: bool
    show_edge: bool
    show_lines: bool
    pad_edge: bool
    collapse_padding: bool
    padding: tuple[int, int, int, int]
    columns: list[tuple[Any, str, bool]]  # header, justify, no_wrap
    rows: list[tuple[list[Any], bool, str | None]]  # cells, end_section, style
    title: Any
    title_justify: str
    caption: Any
    caption_justify: str
    width: int | None = None
    features: set[str] = field(default_factory=set)

    def build(self) -> Table:
        t = Table(
            box=BOXES[self.box],
            show_header=self.show_header,
            show_edge=self.show_edge,
            show_lines=self.show_lines,
            pad_edge=self.pad_edge,
            collapse_padding=self.collapse_padding,
            padding=self.padding,
            title=_copy(self.title),
            title_justify=self.title_justify,  # type: ignore[arg-type]
            caption=_copy(self.caption),
            caption_justify=self.caption_justify,  # type: ignore[arg-type]
        )
        for header, justify, no_wrap in self.columns:
            t.add_column(_copy(header), justify=justify, no_wrap=no_wrap)  # type: ignore[arg-type]
        for cells, end_section, style in self.rows:
            t.add_row(*(_copy(c) for c in cells), end_section=end_section, style=style)
        return t


def _copy(cell: Any) -> Any:
    return cell.copy() if isinstance(cell, Text) else cell


def _text(rng: random.Random, features: set[str], *, words: int = 2) -> Any:
    pool = WORDS + (UNSUPPORTED_WORDS if rng.random() < 0.03 else [])
    text = "".join(rng.choice(pool) for _ in range(rng.randint(0, words)))
    for feature, present in (
        ("cjk", any(ch in text for ch in "中文検索")),
        ("emoji", "🙂" in text or "😀" in text),
        ("emoji-code", ":smile:" in text),
        ("brackets", "[" in text),
        ("trailing-space", text.endswith(" ")),
        ("empty", text == ""),
    ):
        if present:
            features.add(feature)
    if rng.random() < 0.2:
        features.add("text-cells")
        return Text(text, style=rng.choice(["bold", "dim", ""]))
    return text


def random_spec(seed: int) -> Spec:
    rng = random.Random(seed)
    features: set[str] = set()
    n_columns = rng.randint(1, 5)
    columns = [
        (_text(rng, features), rng.choice(["left", "center", "right"]), rng.random() < 0.5) for _ in range(n_columns)
    ]
    rows = []
    for _ in range(rng.choice([0, 1, 2, 3, 5, 9])):
        cells = [_text(rng, features) for _ in range(n_columns)]
        for j, cell in enumerate(cells):
            if type(cell) is str and cell.strip() and rng.random() < 0.15:  # lines under it (a CI under a mean)
                below = [str(_text(rng, features)) or "x" for _ in range(rng.randint(1, 3))]
                cells[j] = "\n".join([cell, *below])
                features.add("multi-line")
        rows.append((cells, rng.random() < 0.2, rng.choice([None, None, "dim", "on red"])))
    annotation_words = rng.choice([1, 3, 12])  # titles narrower and wider than the table
    spec = Spec(
        box=rng.choice(list(BOXES)),
        show_header=rng.random() < 0.8,
        show_edge=rng.random() < 0.8,
        show_lines=rng.random() < 0.15,
        pad_edge=rng.random() < 0.8,
        collapse_padding=rng.random() < 0.2,
        padding=rng.choice([(0, 1, 0, 1), (0, 1, 0, 1), (0, 0, 0, 0), (0, 2, 0, 2), (0, 1, 0, 2), (0, 2, 0, 1)]),
        columns=columns,
        rows=rows,
        title=rng.choice([None, None, _text(rng, features, words=annotation_words)]),
        title_justify=rng.choice(["left", "center", "right"]),
        caption=rng.choice([None, None, _text(rng, features, words=annotation_words)]),
        caption_justify=rng.choice(["left", "center", "right"]),
        features=features,
    )
    natural = _laid_out(spec.build(), None)[1]
    # no limit; a terminal the table fits exactly or loosely; one it does not fit (rich's path)
    spec.width = rng.choice([None, None, natural, natural + rng.randint(1, 40), max(natural - rng.randint(1, 8), 1)])
    return spec


N_TABLES = 1200


@cache
def cases() -> list[tuple[Spec, str]]:
    """The random tables and what rich's own layout writes for each."""
    specs = [random_spec(seed) for seed in range(N_TABLES)]
    return [(spec, _rich_table_text(spec.build(), spec.width)) for spec in specs]


def mismatches() -> Iterator[tuple[Spec, str, str]]:
    for spec, expected in cases():
        fast = _fast_table_text(spec.build(), spec.width)
        if fast is not None and fast != expected:
            yield spec, fast, expected


def _features_taken(spec: Spec) -> set[str]:
    table = spec.build()
    natural = _laid_out(spec.build(), None)[1]
    found = {f"box={spec.box}", *(f"justify={j}" for _, j, _ in spec.columns), *spec.features}
    found |= {"width=None"} if spec.width is None else {"width=exact"} if spec.width == natural else {"width>table"}
    probe = terminal._canvas(terminal.NO_LIMIT)
    for name, text in (("title", table.title), ("caption", table.caption)):
        line = terminal._one_line(text, probe) if text else None
        if line is not None:
            found.add(f"{name}-line" if line[1] > natural else f"{name}-inside")
    found |= {"no-header"} if not spec.show_header else set()
    found |= {"no-edge"} if not spec.show_edge else set()
    found |= {"sections"} if any(end for _, end, _ in spec.rows[:-1]) else set()
    found |= {"show_lines"} if spec.show_lines else set()
    found |= {"collapse_padding"} if spec.collapse_padding else set()
    found |= {"no-pad-edge"} if not spec.pad_edge else set()
    return found


def test_the_fast_path_writes_what_rich_writes() -> None:
    bad = list(mismatches())
    assert not bad, "fast != rich for {} tables, e.g. {!r}:\nfast:\n{}\nrich:\n{}".format(len(bad), *bad[0])


def test_the_random_tables_cover_what_the_fast_path_replicates() -> None:
    """The fast path answered often, and for every feature it claims: the comparison is not vacuous."""
    taken = Counter[str]()
    n_fast = 0
    for spec, _ in cases():
        if _fast_table_text(spec.build(), spec.width) is not None:
            n_fast += 1
            taken.update(_features_taken(spec))
    assert n_fast >= N_TABLES // 2, n_fast
    wanted = {f"box={name}" for name in BOXES} | {f"justify={j}" for j in ("left", "center", "right")}
    wanted |= {"cjk", "emoji", "emoji-code", "brackets", "trailing-space", "empty", "text-cells", "multi-line"}
    wanted |= {"width=None", "width=exact", "width>table", "title-line", "title-inside", "caption-line"}
    wanted |= {"caption-inside", "no-header", "no-edge", "sections", "show_lines", "collapse_padding", "no-pad-edge"}
    assert wanted <= set(taken), sorted(wanted - set(taken))


def test_rich_still_lays_out_the_tables_that_do_not_fit() -> None:
    too_narrow = [(spec, out) for spec, out in cases() if spec.width is not None and spec.width < _natural(spec)]
    assert len(too_narrow) > 50
    assert all(_fast_table_text(spec.build(), spec.width) is None for spec, _ in too_narrow)


def _natural(spec: Spec) -> int:
    return _laid_out(spec.build(), None)[1]


def _center_rounds_the_other_way(text: str, n: int, width: int, justify: str) -> str:
    if justify != "center":
        return _original_justify(text, n, width, justify)
    stripped = text.rstrip()
    space = width - n + len(text) - len(stripped)
    return " " * (space - space // 2) + stripped + " " * (space // 2)


def _right_keeps_trailing_spaces(text: str, n: int, width: int, justify: str) -> str:
    return " " * (width - n) + text if justify == "right" else _original_justify(text, n, width, justify)


def _counts_characters(cell: Any, probe: Any) -> tuple[str, int] | None:
    line = _original_one_line(cell, probe)
    return None if line is None else (line[0], len(line[0]))  # a CJK character is 2 columns, not 1


def _no_emoji_codes(cell: Any, probe: Any) -> tuple[str, int] | None:
    return _original_one_line(Text(cell) if isinstance(cell, str) else cell, probe)  # ":smile:" stays as it is


_original_justify = terminal._justify
_original_one_line = terminal._one_line
MUTANTS: dict[str, tuple[str, Callable[..., Any]]] = {
    "center rounds the other way": ("_justify", _center_rounds_the_other_way),
    "right keeps trailing spaces": ("_justify", _right_keeps_trailing_spaces),
    "characters, not columns": ("_one_line", _counts_characters),
    "no emoji codes": ("_one_line", _no_emoji_codes),
}


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_the_comparison_catches_a_one_space_mistake(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative controls: a fast path off by a space here and there fails the comparison above."""
    name, replacement = MUTANTS[mutant]
    monkeypatch.setattr(terminal, name, replacement)
    assert next(mismatches(), None) is not None


def test_a_one_space_difference_fails_the_comparison() -> None:
    spec, expected = next((s, e) for s, e in cases() if _fast_table_text(s.build(), s.width) is not None)
    fast = _fast_table_text(spec.build(), spec.width)
    assert fast == expected and fast.replace(" ", "  ", 1) != expected


def _table(*rows: Any, **options: Any) -> Table:
    t = Table(**options)
    t.add_column("query", no_wrap=True)
    t.add_column("value", justify="right")
    for row in rows:
        t.add_row(*row)
    return t


def _two_line_header() -> Table:
    t = _table(["q", "0.5"])
    t.columns[1].header = "mean\nCI"
    return t


def test_a_mean_with_its_interval_under_it_takes_the_fast_path() -> None:
    """The `all` row of ``eval --per-query --ci``: rows as tall as their tallest cell."""
    for build in (lambda: _table(["all", "0.5\n[0.4, 0.6]"], ["q1", "0.25"]), lambda: _table(["a\nb\nc", "1"])):
        assert _fast_table_text(build(), None) is not None
        assert _fast_table_text(build(), None) == _rich_table_text(build(), None)


def _nested() -> Table:
    return _table(["q1", _table(["a", "b"])])


def _footer() -> Table:
    t = _table(["q1", "0.5"], show_footer=True)
    t.columns[0].footer = "all"
    return t


def _fixed_column() -> Table:
    t = _table(["q1", "0.5"])
    t.columns[1].width = 8
    return t


def _column_after_rows() -> Table:
    t = _table(["q1", "0.5"])
    t.add_column("late")
    return t


def _empty_column() -> Table:
    t = Table(box=None, padding=0)
    t.add_column("")
    t.add_column("x")
    t.add_row("", "1")
    return t


OUTSIDE: dict[str, tuple[Callable[[], Table], int | None]] = {
    "a blank line in a cell": (lambda: _table(["all", "0.5\n\n[0.4, 0.6]"]), None),
    "a header of two lines": (lambda: _two_line_header(), None),
    "a tab": (lambda: _table(["q\t1", "0.5"]), None),
    "a combining accent": (lambda: _table(["e\u0301", "0.5"]), None),
    "an emoji with a variation selector": (lambda: _table(["❤️", "0.5"]), None),
    "a nested table": (_nested, None),
    "a footer": (_footer, None),
    "a fixed column width": (_fixed_column, None),
    "a column added after the rows": (_column_after_rows, None),
    "an empty column without padding": (_empty_column, None),
    "wider than the terminal": (lambda: _table(["a b c d e f g h", "it wraps between words"]), 20),
    "a title that wraps at the terminal": (lambda: _table(["q1", "0.5"], title="a title of many words " * 3), 30),
    "a justified Text": (lambda: _table([Text("q1", justify="right"), "0.5"]), None),
    "a Text without its newline": (lambda: _table(["q1", "0.5"], title=Text("t", end="")), None),
    "full justification": (lambda: _table(["q1", "0.5"], title="t", title_justify="full"), None),
    "collapse_padding with padded edges": (lambda: _table(["q1", "0.5"], collapse_padding=True), None),
    "leading": (lambda: _table(["q1", "0.5"], ["q2", "0.6"], leading=1), None),
    "min_width": (lambda: _table(["q1", "0.5"], min_width=40), None),
    "expand": (lambda: _table(["q1", "0.5"], expand=True), 60),
    "vertical padding": (lambda: _table(["q1", "0.5"], padding=(1, 1)), None),
}


@pytest.mark.parametrize("case", list(OUTSIDE))
def test_tables_outside_the_fast_path_go_to_rich(case: str) -> None:
    build, width = OUTSIDE[case]
    assert _fast_table_text(build(), width) is None
    rich_text = _rich_table_text(build(), width)
    assert to_text(build(), width=width) == "\n".join(line.rstrip(" ") for line in rich_text.split("\n"))


def test_no_line_ends_in_spaces() -> None:
    """A centred title and a borderless table's last cells are padded by rich: a log, a diff or a
    golden file would carry the padding."""
    from rich.table import Table

    t = Table(title="run", box=None)
    t.add_column("measure")
    t.add_column("value", justify="left")
    t.add_row("nDCG@10", "0.5")
    t.add_row("RR", "0.25")
    text = to_text(t, width=None)
    assert text.splitlines()[0].strip() == "run" and "RR       0.25" in text
    assert not [line for line in text.splitlines() if line.endswith(" ")], text


def _results(n_queries: int, *, ci: bool = False) -> Any:
    rng = random.Random(7)
    qrels = {f"q{i}": {f"d{j}": rng.randint(0, 2) for j in range(6)} for i in range(n_queries)}
    run = {f"q{i}": {f"d{j}": rng.random() for j in range(8)} for i in range(n_queries)}
    res = rankgate.evaluate(qrels, run, ["P@5", "nDCG@10", "AP"])
    return res.with_confidence_intervals(n_resamples=200, seed=1) if ci else res


@pytest.mark.parametrize("ci", [False, True])
@pytest.mark.parametrize("width", [None, 80, 30])
def test_rankgate_eval_tables_are_unchanged(ci: bool, width: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """`rankgate eval --per-query` and its summary: the same bytes, fast or not."""
    from rankgate.render.eval import table

    for per_query in (True, False):
        fast = to_text(table(_results(40, ci=ci), per_query=per_query), width=width)
        monkeypatch.setattr(terminal, "FAST_TABLES", False)
        slow = to_text(table(_results(40, ci=ci), per_query=per_query), width=width)
        monkeypatch.setattr(terminal, "FAST_TABLES", True)
        assert fast == slow
    per_query = table(_results(40), per_query=True)
    assert isinstance(per_query, Group)
    assert _fast_table_text(per_query.renderables[0], None) is not None  # the case made fast


def test_to_text_takes_the_fast_path_unless_told_not_to(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def rich_path(table: Table, columns: int | None) -> str:
        calls.append("rich")
        return ""

    monkeypatch.setattr(terminal, "_rich_table_text", rich_path)
    to_text(_table(["q1", "0.5"]), width=None)
    assert calls == []
    monkeypatch.setattr(terminal, "FAST_TABLES", False)
    to_text(_table(["q1", "0.5"]), width=None)
    assert calls == ["rich"]
