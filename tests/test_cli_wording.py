"""Messages in the words of the command that printed them: a remedy names an option the command
has (or none), and counts agree with their verbs."""

from __future__ import annotations

from pathlib import Path

import pytest

import rankgate
from rankgate.errors import DuplicateError
from tests.cli_support import invoke


@pytest.fixture
def twice(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 2 t\nq1 Q0 d1 2 1 t\n")
    return str(tmp_path / "q.txt"), str(tmp_path / "r.txt")


def test_a_verb_with_the_option_names_it(capsys, twice: tuple[str, str]) -> None:
    code, _, err = invoke(capsys, "eval", *twice, "-m", "P@1")
    assert code == 2
    assert err.strip().endswith("pass --duplicates first or max to keep one copy"), err
    assert "duplicates='first'" not in err  # the library's words are for Python


def test_a_verb_without_the_option_says_what_to_do(capsys, twice: tuple[str, str], tmp_path: Path) -> None:
    code, _, err = invoke(capsys, "fuse", twice[1], twice[1], "-o", str(tmp_path / "f.txt"))
    assert code == 2
    assert "rankgate fuse reads each (query, doc) pair once: remove the repeated lines" in err
    assert "--duplicates" not in err


def test_the_library_names_its_parameter(twice: tuple[str, str]) -> None:
    with pytest.raises(DuplicateError, match=r"pass duplicates='first' or 'max' to keep one copy$"):
        rankgate.evaluate(*twice, ["P@1"])


ONE = "1 run query has no judgments (e.g. 'x0'); it is ignored"
TWO = "2 run queries have no judgments (e.g. 'x0', 'x1'); they are ignored"


@pytest.mark.parametrize(("extra", "expected"), [(1, ONE), (2, TWO)])
def test_run_only_queries_agree_in_number(tmp_path: Path, extra: int, expected: str) -> None:
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 2 t\n" + "".join(f"x{i} Q0 d1 1 2 t\n" for i in range(extra)))
    assert expected in rankgate.evaluate(tmp_path / "q.txt", tmp_path / "r.txt", ["P@1"]).warnings


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["fuse", "{run}", "{qrels}", "-o", "{out}"], "rankgate fuse reads runs here (qrels go to --train-qrels)"),
        (["overlap", "{run}", "{qrels}"], "rankgate overlap reads runs here and takes no qrels"),
    ],
)
def test_a_command_that_reads_runs_says_so_of_a_qrels_file(capsys, tmp_path: Path, argv: list[str], says: str) -> None:
    """No "pass the qrels first": these commands take no qrels in that place."""
    files = {"run": tmp_path / "r.txt", "qrels": tmp_path / "q.txt", "out": tmp_path / "f.txt"}
    files["run"].write_text("q1 Q0 d1 1 2 t\n")
    files["qrels"].write_text("q1 0 d1 1\n")
    code, _, err = invoke(capsys, *[a.format(**{k: str(v) for k, v in files.items()}) for a in argv])
    assert code == 2 and f"this looks like a qrels line: {says}" in err, err
    assert "pass the qrels first" not in err
