"""The width policy of text output (`rankgate.render.terminal`): identifiers are never cut, and
a CI log gets one logical line per line.

Not a terminal (a CI log, a pipe, a file): no width is imposed. A terminal of N columns: text
wraps at N; a table fits N when it can, and is laid out wider rather than cut a system name,
a query id or a measure name.
"""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path

import pytest

from rankgate.render.terminal import layout, layout_width, to_text
from tests.cli_support import invoke

RENDER = Path(__file__).resolve().parents[1] / "src" / "rankgate" / "render"
LONG_A = "contriever_msmarco_finetuned_hnsw_M32_efsearch_064"
LONG_B = "contriever_msmarco_finetuned_hnsw_M32_efsearch_128"
LONG_Q = "what_is_the_return_policy_for_opened_items_bought_online_during_the_holiday_sale"
ELLIPSIS = "…"


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    """Qrels of 12 queries (one with a long id), a baseline and two runs with long names."""
    qids = [f"q{i}" for i in range(11)] + [LONG_Q]
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 d{d} {(i + d) % 3}\n" for i, q in enumerate(qids) for d in range(4))
    )
    for n, name in enumerate(("baseline", LONG_A, LONG_B)):
        lines = []
        for i, q in enumerate(qids):
            order = _shuffled(6, n, i)
            lines += [f"{q} Q0 d{d} {r + 1} {10 - r} t\n" for r, d in enumerate(order)]
        (tmp_path / f"{name}.txt").write_text("".join(lines))
    (tmp_path / "chunks.txt").write_text(
        "".join(f"{q} Q0 d{r}#c{r % 2} {r + 1} {10 - r} t\n" for q in qids for r in range(4))
    )
    return {"qrels": tmp_path / "qrels.txt", "base": tmp_path / "baseline.txt", "a": tmp_path / f"{LONG_A}.txt",
            "b": tmp_path / f"{LONG_B}.txt", "chunks": tmp_path / "chunks.txt", "dir": tmp_path}  # fmt: skip


def _shuffled(docs: int, run: int, query: int) -> list[int]:
    """Document numbers in an order that differs between runs and queries."""
    return sorted(range(docs), key=lambda d: (d * (run + 1) + query) % docs)


def _line(out: str, start: str) -> str:
    """The one line of ``out`` that starts with ``start``."""
    found = [line for line in out.splitlines() if line.startswith(start)]
    assert len(found) == 1, out
    return found[0]


def _rows_with(out: str, text: str) -> list[str]:
    return [line for line in out.splitlines() if text in line]


# -- not a terminal: a CI log, a pipe, a file --


def test_compare_in_a_log_keeps_long_system_names_and_one_line_footers(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")  # a narrow $COLUMNS does not matter where stdout is no terminal
    code, out, err = invoke(capsys, "compare", str(files["qrels"]), str(files["base"]), str(files["a"]),
                            str(files["b"]), "-m", "nDCG@10", "--resamples", "200")  # fmt: skip
    assert code == 0, err
    assert ELLIPSIS not in out
    assert len(_rows_with(out, LONG_A)) == 1 and len(_rows_with(out, LONG_B)) == 1
    footer = _line(out, "baseline: baseline;")
    assert footer.endswith("CI: 95% paired bootstrap, 200 resamples, seed 0; * = adjusted p < 0.05"), footer
    assert _line(out, "queries: ").endswith("scores 0 in it (trec_eval -c)")


def test_cutoffs_in_a_log_keeps_long_run_names(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    code, out, err = invoke(capsys, "cutoffs", str(files["qrels"]), str(files["a"]), str(files["b"]), "-m", "nDCG")
    assert code == 0, err
    assert ELLIPSIS not in out
    assert len(_rows_with(out, LONG_A)) == 1 and len(_rows_with(out, LONG_B)) == 1


def test_eval_in_a_log_keeps_query_ids_and_one_line_settings(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    argv = ["eval", str(files["qrels"]), str(files["chunks"]), "-m", "nDCG@10,P(rel=2)@5", "--per-query",
            "--judged-only", "--queries", "intersection", "--empty", "skip", "--duplicates", "max",
            "--chunk-sep", "#", "--chunk-agg", "max"]  # fmt: skip
    code, out, err = invoke(capsys, *argv)
    assert code == 0, err
    assert ELLIPSIS not in out
    assert len(_rows_with(out, LONG_Q)) == 1
    assert _line(out, "settings:").endswith("judged_only=true, chunk_sep='#', chunk_agg='max'")
    assert _line(out, "chunks:").endswith("(0 chunk rows folded into them)")
    assert "P(rel=2)@5" in _line(out, "┃ query")


def test_output_file_is_laid_out_as_a_log_even_from_a_terminal(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path]
) -> None:
    """``--output FILE`` writes a file, not to the terminal: no terminal width applies."""
    target = files["dir"] / "out.txt"
    with layout(40):  # as if stdout were a 40-column terminal
        code, _, err = invoke(capsys, "eval", str(files["qrels"]), str(files["chunks"]), "-m", "nDCG@10",
                              "--chunk-sep", "#", "--output", str(target))  # fmt: skip
        assert layout_width() == 40  # the command's file layout ended with it
    assert code == 0, err
    text = target.read_text()
    assert _line(text, "settings:").endswith("chunk_sep='#', chunk_agg='first'")
    assert _line(text, "chunks:").endswith("folded into them)")


# -- --ci in the per-query table --


def test_eval_per_query_table_shows_the_interval(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    argv = ["eval", str(files["qrels"]), str(files["a"]), "-m", "nDCG@10,P@5", "--per-query", "--ci"]
    code, out, err = invoke(capsys, *argv)
    assert code == 0, err
    code, js, err = invoke(capsys, *argv, "--format", "json")
    assert code == 0, err
    ci = json.loads(js)["ci"]
    for name in ("nDCG@10", "P@5"):
        lo, hi = ci[name]
        assert f"[{lo:.4f}, {hi:.4f}]" in out, out
    assert "95% CI" in out


# -- a terminal of a given width --


def test_a_terminal_table_is_wider_rather_than_cut(tmp_path: Path) -> None:
    from rankgate.comparison.compare import Statistics, compare
    from rankgate.render.compare import table

    (tmp_path / "q.txt").write_text("".join(f"q{i} 0 d{d} {(i + d) % 3}\n" for i in range(8) for d in range(4)))
    paths = []
    for n, name in enumerate(("base", LONG_A, LONG_B)):
        order = [_shuffled(5, n, i) for i in range(8)]
        rows = "".join(f"q{i} Q0 d{d} {r + 1} {9 - r} t\n" for i in range(8) for r, d in enumerate(order[i]))
        (tmp_path / f"{name}.txt").write_text(rows)
        paths.append(str(tmp_path / f"{name}.txt"))
    result = compare(str(tmp_path / "q.txt"), paths, ["nDCG@10"], stats=Statistics(n_resamples=200))
    text = to_text(table(result), width=60)
    assert ELLIPSIS not in text
    table_lines = [line for line in text.splitlines() if line[:1] in "┏┃┡│└"]
    assert [line.split()[1] for line in table_lines if "nDCG@10 │" in line] == [LONG_A, LONG_B]
    prose = [line for line in text.splitlines() if line not in table_lines]
    assert max(len(line) for line in table_lines) > 60  # wider than the terminal, for the names
    for r in result.rows:  # it overflows anyway, so no other cell is wrapped: each interval on its row's line
        lo, hi = r["ci"]
        (row,) = [line for line in table_lines if f"{r['system']} " in line]
        assert f"[{lo:+.4f}, {hi:+.4f}]" in row and f"{r['p_adjusted']:.4f}" in row
    assert prose and all(len(line) <= 60 for line in prose)  # the footer wraps at the terminal's width


def test_a_table_that_fits_the_terminal_stays_in_it() -> None:
    from rich.table import Table

    t = Table(title="measure at cutoff k")
    t.add_column("run", no_wrap=True)
    t.add_column("definition")
    t.add_row("bm25", "a long description of the run that has to wrap inside its cell to fit the terminal")
    text = to_text(t, width=50)
    assert all(len(line) <= 50 for line in text.splitlines())
    assert "bm25" in text and ELLIPSIS not in text
    assert "wrap inside" in to_text(t, width=None).splitlines()[4]  # one line where no width is imposed


def test_layout_width_reads_a_terminal_and_ignores_forced_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("COLUMNS", "57")
    monkeypatch.setattr("sys.stdout", Terminal())
    assert layout_width() == 57
    monkeypatch.setattr("sys.stdout", io.StringIO())
    monkeypatch.setenv("FORCE_COLOR", "1")  # CI sets it for colours; a log still has no width
    assert layout_width() is None
    with layout(33):
        assert layout_width() == 33


# -- one helper --


def test_renderers_leave_the_width_to_the_shared_helper() -> None:
    """No renderer fixes a width: `to_text` is defined once (render/terminal.py) and called
    without one, and no renderer makes a Console of its own."""
    offenders = []
    for path in sorted(RENDER.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name == "to_text" and path.name != "terminal.py":
                offenders.append(f"{path.name}:{node.lineno}: defines to_text")
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if name == "to_text" and (len(node.args) > 1 or node.keywords) and path.name != "terminal.py":
                    offenders.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
                if name == "Console" and path.name != "terminal.py":
                    offenders.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert offenders == []
