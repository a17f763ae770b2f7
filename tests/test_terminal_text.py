"""Text printed through rich keeps every character, and reads well in a CI log.

rich reads ``[...]`` as markup unless told not to: an install hint ``pip install
'rankgate[bench]'`` printed as markup loses its extra, RBP's definition loses ``[rel(d_i)]``.
And when stdout is not a terminal rich wraps at 80 columns, in the middle of a sentence.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rankgate.render.terminal import console, styled
from tests.cli_support import invoke

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "rankgate"


def test_the_console_prints_brackets_as_they_are(capsys: pytest.CaptureFixture[str]) -> None:
    for text in ("pip install 'rankgate[bench]'", "[bold]q1[/bold]", "judge llm:[m]", "[/x] [rel(d_i)]"):
        console().print(text)
        console(stderr=True).print(text, style="dim")
        out, err = capsys.readouterr()
        assert out == text + "\n" and err == text + "\n"
    console().print(styled(("run", "bold"), " [a]"))
    assert capsys.readouterr().out == "run [a]\n"


def test_a_long_line_is_not_wrapped_in_a_log(capsys: pytest.CaptureFixture[str]) -> None:
    sentence = "nDCG@10 fell from 61.2% to 55.0%, below its floor 55%, " * 3
    console().print(sentence.strip())
    assert capsys.readouterr().out == sentence.strip() + "\n"


def test_the_measures_listing_keeps_rbps_brackets(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(capsys, "measures")
    assert code == 0, err
    assert "[rel(d_i)]" in out


def test_the_demo_names_each_missing_extra(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from rankgate import extras
    from rankgate.bench import demo

    monkeypatch.setattr(demo, "bench_available", lambda: False)
    monkeypatch.setattr(extras, "installed", lambda extra: extra != "gate")
    code, out, err = invoke(capsys, "demo", "--no-report")
    assert code == 0, err
    assert "pip install 'rankgate[bench]'" in out
    assert "pip install 'rankgate[gate]'" in out


@pytest.mark.extra("gate")
def test_the_demo_gate_headlines_are_whole_lines(capsys: pytest.CaptureFixture[str]) -> None:
    """Each headline of the gate's text appears on one line of the demo's output (no wrap at 80)."""
    from rankgate.data import DEMO_CANDIDATE, demo_gates_path, demo_run_path
    from rankgate.gate.config import load_config
    from rankgate.gate.runner import run_gate
    from rankgate.render.gate import plain_text

    code, out, err = invoke(capsys, "demo", "--no-report", "--no-bench")
    assert code == 0, err
    config = load_config(demo_gates_path())
    from rankgate.data import demo_qrels_path
    from rankgate.store.base import open_store

    with open_store(":memory:") as store:
        from rankgate.evaluation.evaluate import evaluate

        baseline = evaluate(demo_qrels_path(), demo_run_path("dense"), config.measures, settings=config.settings)
        store.set_baseline(store.add(baseline, name="dense", qrels=demo_qrels_path(), labels={"source": "demo"}))
        report = run_gate(demo_qrels_path(), demo_run_path(DEMO_CANDIDATE), config, store=store)
    lines = set(out.splitlines())
    for line in plain_text(report).splitlines():
        assert line in lines, line


def _calls(name: str) -> list[tuple[Path, ast.Call]]:
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if called == name:
                    found.append((path, node))
    return found


def test_progress_descriptions_are_not_markup() -> None:
    """A bar's description names files and runs: every description column reads it as plain text."""
    offenders = [
        f"{path.relative_to(PACKAGE)}:{call.lineno}"
        for path, call in _calls("TextColumn")
        if "task.description" in ast.unparse(call)
        and not any(k.arg == "markup" and ast.unparse(k.value) == "False" for k in call.keywords)
    ]
    assert offenders == []


def test_no_console_reads_markup_from_data() -> None:
    """Consoles that print text are made by render.terminal.console (markup off); the others are
    progress bars' consoles (their columns are checked above) or render.eval's string renderer."""
    offenders = []
    for path, call in _calls("Console"):
        text = ast.unparse(call)
        if "markup=False" in text or path.name == "terminal.py":
            continue
        if path.relative_to(PACKAGE).as_posix() in PROGRESS_CONSOLES:
            continue
        offenders.append(f"{path.relative_to(PACKAGE)}:{call.lineno}: {text}")
    assert offenders == []


# Consoles that only draw progress bars (no text of their own).
PROGRESS_CONSOLES = {
    "bench/progress.py",
    "label/progress.py",
    "evaluation/engines/outofcore.py",
    "cli/report_cmd.py",
}


def test_one_query_is_counted_in_the_singular(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """'1 query evaluated', '1 query has ...'; two queries keep the plural; JSON keys are unchanged."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 a 1\nq2 0 b 0\nq3 0 c 1\n")
    run.write_text("q1 Q0 a 1 1 t\nq2 Q0 b 1 1 t\nq4 Q0 x 1 1 t\n")
    code, out, err = invoke(capsys, "eval", str(qrels), str(run), "-m", "P@2")
    text = out + err
    assert code == 0 and "3 queries evaluated;" in text
    assert "the run returns at most 1 document per query, fewer than the cutoff of P@2" in text
    assert "1 qrels query is not in the run (e.g. 'q3')" in text
    assert "1 run query has no judgments (e.g. 'q4')" in text
    assert "1 query has no relevant judgment;" in text
    run.write_text("q1 Q0 a 1 1 t\n")
    code, out, err = invoke(capsys, "eval", str(qrels), str(run), "-m", "P@1", "--queries", "intersection")
    assert code == 0 and "1 query evaluated;" in out + err and "queries" not in (out + err).split("evaluated")[0][-12:]
