"""A run and qrels given the wrong way round get the same hint in every format (rankgate.io.hints)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rankgate.errors import InputError
from rankgate.io import hints
from rankgate.io.hints import grade_like, swap_hint
from rankgate.io.readers import read_qrels, read_run
from tests.cli_support import invoke

RUN_HINT = "this looks like a run: pass the qrels first, then the run"
QRELS_HINT = "this looks like qrels: pass the qrels first, then the run"

RUN_ROWS = [("q1", "d1", 19.0221), ("q1", "d2", 12.5), ("q1", "d3", 7.75), ("q2", "d3", 3.25), ("q2", "d4", 1.5)]
QRELS_ROWS = [("q1", "d1", 1), ("q1", "d2", 0), ("q1", "d5", 2), ("q2", "d3", 2), ("q2", "d4", 0), ("q2", "d6", 0)]


def _delimited(rows: list[tuple[str, str, float]], header: tuple[str, str, str], sep: str) -> str:
    return "".join(sep.join(map(str, r)) + "\n" for r in [header, *rows])


def _write(tmp_path: Path, name: str, rows: list[tuple[str, str, float]], value: str) -> Path:
    """``rows`` in the format of ``name``'s extension, value column named ``value``."""
    path = tmp_path / name
    header = ("query-id", "corpus-id", value)
    if name.endswith(".csv"):
        path.write_text(_delimited(rows, header, ","))
    elif name.endswith(".tsv"):
        path.write_text(_delimited(rows, header, "\t"))
    elif name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(dict(zip(header, r, strict=True))) + "\n" for r in rows))
    elif name.endswith(".json"):
        mapping: dict[str, dict[str, float]] = {}
        for q, d, v in rows:
            mapping.setdefault(q, {})[d] = v
        path.write_text(json.dumps(mapping))
    elif name.endswith(".parquet"):
        columns = list(zip(*rows, strict=True))
        pq.write_table(pa.table({h: list(c) for h, c in zip(header, columns, strict=True)}), path)
    else:
        path.write_text("".join(f"{q} Q0 {d} 1 {v} t\n" for q, d, v in rows))
    return path


FORMATS = ["run.csv", "run.tsv", "run.jsonl", "run.json", "run.parquet"]


# -- one wording for every format ------------------------------------------------------------
def test_trec_diagnosis_uses_the_shared_wording(tmp_path: Path) -> None:
    run = _write(tmp_path, "run.txt", RUN_ROWS, "score")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS_ROWS))
    with pytest.raises(InputError) as as_qrels:
        read_qrels(run)
    assert "found 6; " + swap_hint("run", "line") in str(as_qrels.value)
    with pytest.raises(InputError) as as_run:
        read_run(qrels)
    assert "found 4; " + swap_hint("qrels", "line") in str(as_run.value)


def test_swap_hint_wording() -> None:
    assert swap_hint("run") == RUN_HINT
    assert swap_hint("qrels") == QRELS_HINT
    assert swap_hint("qrels", "line") == "this looks like a qrels line: pass the qrels first, then the run"


# -- a run given as the qrels ----------------------------------------------------------------
@pytest.mark.parametrize("name", FORMATS)
def test_run_read_as_qrels_says_it_looks_like_a_run(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, name, RUN_ROWS, "score")
    with pytest.raises(InputError) as caught:
        read_qrels(path)
    message = str(caught.value)
    assert "grade must be a whole number" in message and "19.0221" in message
    assert message.endswith(RUN_HINT)


@pytest.mark.parametrize(("run_name", "qrels_name"), [("run.csv", "qrels.tsv"), ("run.json", "run.json")])
def test_cli_swapped_arguments_exit_2_with_the_hint(capsys, tmp_path: Path, run_name: str, qrels_name: str) -> None:
    run = _write(tmp_path, run_name, RUN_ROWS, "score")
    qrels = _write(tmp_path, qrels_name, QRELS_ROWS, "score") if qrels_name != run_name else run
    code, out, err = invoke(capsys, "eval", str(run), str(qrels), "-m", "P@1")
    assert code == 2 and out == ""
    assert f"{run}" in err and "grade must be a whole number" in err and RUN_HINT in err
    assert "Traceback" not in err


def test_qrels_with_a_few_fractional_grades_get_no_run_hint(tmp_path: Path) -> None:
    rows = [*QRELS_ROWS, ("q3", "d9", 0.5)]  # one typo among whole grades: not a run
    with pytest.raises(InputError, match="grade must be a whole number") as caught:
        read_qrels(_write(tmp_path, "qrels.csv", rows, "grade"))
    assert "looks like" not in str(caught.value)


def test_value_columns_of_the_other_kind_give_the_hint(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no score column") as as_run:
        read_run(_write(tmp_path, "qrels.csv", QRELS_ROWS, "relevance"))
    assert str(as_run.value).endswith(QRELS_HINT)
    with pytest.raises(InputError, match="no grade column") as as_qrels:
        read_qrels(_write(tmp_path, "run.csv", RUN_ROWS, "similarity"))
    assert str(as_qrels.value).endswith(RUN_HINT)
    with pytest.raises(InputError, match="no score column") as neither:
        read_run(_write(tmp_path, "other.csv", RUN_ROWS, "weight"))
    assert "looks like" not in str(neither.value)


# -- qrels given as the run ------------------------------------------------------------------
QRELS_AS_RUN = (
    "every document in the run is judged and scored with its grade: the run looks like the qrels; "
    "if it is, the qrels were given where the run goes (eval and compare take the qrels first, gate takes them "
    "with --qrels)"
)


def _warnings(qrels: Path, run: Path) -> list[str]:
    from rankgate import evaluate

    return evaluate(read_qrels(qrels), read_run(run), ["P@1"]).warnings


@pytest.mark.parametrize("name", ["qrels.csv", "qrels.tsv", "qrels.jsonl", "qrels.json", "qrels.parquet"])
def test_qrels_read_as_a_run_are_evaluated_with_a_warning(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, name, QRELS_ROWS, "score")
    qrels = _write(tmp_path, "real.tsv", QRELS_ROWS, "grade")
    assert QRELS_AS_RUN in _warnings(qrels, path)  # a warning: the run is still evaluated


def test_cli_qrels_as_run_warns_on_stderr(capsys, tmp_path: Path) -> None:
    qrels = _write(tmp_path, "qrels.tsv", QRELS_ROWS, "score")
    code, out, err = invoke(capsys, "eval", str(qrels), str(qrels), "-m", "P@1", "--format", "json")
    assert code == 0 and json.loads(out)["measures"] == ["P@1"]  # stdout stays clean JSON
    assert f"warning: {QRELS_AS_RUN}" in " ".join(err.split())


def test_the_warning_survives_partitions(tmp_path: Path) -> None:
    """The out-of-core engine evaluates query partitions and merges their facts: every partition
    that holds rows must look like the qrels."""
    from rankgate.evaluation.facts import EvaluationFacts

    def part(is_qrels: bool, rows: int = 3) -> EvaluationFacts:
        counts = {"evaluated": 1, "missing_from_run": 0, "run_only": 0, "no_relevant": 0}
        return EvaluationFacts(counts, [], [], [], 0, rows, 3, run_is_qrels=is_qrels)

    assert EvaluationFacts.merge([part(True), part(True), part(False, rows=0)]).run_is_qrels
    assert not EvaluationFacts.merge([part(True), part(False)]).run_is_qrels
    assert not EvaluationFacts.merge([part(False, rows=0)]).run_is_qrels


def test_a_run_scored_with_small_whole_numbers_gets_no_warning(tmp_path: Path) -> None:
    """Grade-like scores alone are no evidence: an LLM grader's run, a hand-written example."""
    qrels = _write(tmp_path, "real.tsv", QRELS_ROWS, "grade")
    not_grades = [(q, d, 3 - g) for q, d, g in QRELS_ROWS]  # every row judged, but scored otherwise
    unjudged = [*QRELS_ROWS, ("q1", "d9", 1)]  # scored with the grades, and one unjudged row
    for name, rows in (("a.tsv", not_grades), ("b.tsv", unjudged), ("c.txt", not_grades)):
        run = _write(tmp_path, name, rows, "score")
        assert not [w for w in _warnings(qrels, run) if "looks like the qrels" in w], name
    toy = _write(tmp_path, "e.txt", QRELS_ROWS[:3], "score")  # scored with the grades, but no two alike
    assert not [w for w in _warnings(qrels, toy) if "looks like the qrels" in w]
    assert QRELS_AS_RUN in _warnings(qrels, _write(tmp_path, "d.txt", QRELS_ROWS[3:], "score"))  # a TREC run, too


@pytest.mark.parametrize(
    ("name", "rows"),
    [
        ("run.csv", RUN_ROWS),  # fractional scores
        ("run.tsv", [("q1", "d1", 100), ("q1", "d2", 99), ("q2", "d3", 100)]),  # whole, beyond any grade
        ("run.jsonl", [("q1", "d1", 3), ("q1", "d2", 2.5)]),
        ("run.json", [("q1", "d1", -7), ("q1", "d2", -8)]),
        ("run.txt", RUN_ROWS),
    ],
)
def test_legitimate_runs_get_no_warning(tmp_path: Path, name: str, rows: list[tuple[str, str, float]]) -> None:
    qrels = _write(tmp_path, "real.tsv", QRELS_ROWS, "grade")
    assert not [w for w in _warnings(qrels, _write(tmp_path, name, rows, "score")) if "looks like the qrels" in w]


def test_grade_like_reads_past_the_probe_and_across_blocks() -> None:
    ones = np.ones(hints._PROBE + 2 * hints._BLOCK + 5)
    assert grade_like(ones) == (1, 1)
    for at in (3, hints._PROBE + 1, hints._PROBE + hints._BLOCK + 2, len(ones) - 1):
        late = ones.copy()
        late[at] = 0.5
        assert grade_like(late) is None, at
    late = ones.copy()
    late[-1] = 9.0  # whole, but no grade
    assert grade_like(late) is None
    late[-1] = -2.0
    assert grade_like(late) == (-2, 1)
    assert grade_like(np.array([], dtype=np.float64)) is None
