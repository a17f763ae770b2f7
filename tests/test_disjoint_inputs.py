"""A run that shares no query with the qrels is refused by the command line (issue: a wrong-file
mistake scored 0.0000 everywhere with exit 0, which CI reads as a real regression).

Every verb that evaluates refuses it with exit 2 naming both files; ``--allow-disjoint`` evaluates
it anyway. The library keeps evaluating such inputs unless asked (``disjoint="error"``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import rankgate
from rankgate.errors import InputError
from tests.cli_support import invoke


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    qrels = tmp_path / "judged.qrels"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    other = tmp_path / "other_topics.run"
    other.write_text("t7 Q0 d1 1 2.0 x\nt8 Q0 d2 1 1.0 x\n")
    good = tmp_path / "good.run"
    good.write_text("q1 Q0 d1 1 2.0 x\nq2 Q0 d9 1 1.0 x\n")
    gates = tmp_path / "gates.yaml"
    gates.write_text("gates:\n  - name: p1\n    metric: P@1\n    threshold: 0.1\n")
    return {"qrels": str(qrels), "other": str(other), "good": str(good), "gates": str(gates)}


def _argv(verb: str, f: dict[str, str]) -> list[str]:
    return {
        "eval": ["eval", f["qrels"], f["other"], "-m", "P@1"],
        "compare": ["compare", f["qrels"], f["good"], f["other"], "-m", "P@1", "--resamples", "100"],
        "cutoffs": ["cutoffs", f["qrels"], f["other"], "-m", "P", "-k", "1"],
        "gate": ["gate", "--qrels", f["qrels"], "--run", f["other"], "--config", f["gates"]],
    }[verb]


VERBS = ["eval", "compare", "cutoffs", pytest.param("gate", marks=pytest.mark.extra("gate"))]


@pytest.mark.parametrize("verb", VERBS)
def test_a_run_with_no_judged_query_is_exit_2_naming_both_files(capsys, files, verb):
    code, out, err = invoke(capsys, *_argv(verb, files))
    assert code == 2, (out, err)
    (line,) = err.strip().splitlines()
    assert "other_topics" in line and "judged.qrels" in line and "shares no query" in line
    assert "--allow-disjoint" in line and "Traceback" not in err
    assert out == ""


@pytest.mark.parametrize("verb", VERBS)
def test_allow_disjoint_evaluates_it(capsys, files, verb):
    code, _, err = invoke(capsys, *_argv(verb, files), "--allow-disjoint")
    assert code in (0, 1), err  # gate: a floor that 0 misses fails, as it should
    assert "shares no query" not in err


def test_store_add_refuses_it_too(capsys, files, tmp_path):
    pytest.importorskip("sqlalchemy")
    store = str(tmp_path / "results.db")
    code, _, err = invoke(capsys, "store", "add", files["qrels"], files["other"], "-m", "P@1", "--store", store)
    assert code == 2 and "shares no query" in err


def test_the_library_allows_it_unless_asked(files):
    res = rankgate.evaluate(files["qrels"], files["other"], "P@1")
    assert res.aggregate == {"P@1": 0.0}
    with pytest.raises(InputError, match=r"other_topics shares no query with .*judged\.qrels"):
        rankgate.evaluate(files["qrels"], files["other"], "P@1", disjoint="error")


def test_partial_overlap_and_an_empty_run_are_not_disjoint(files, tmp_path):
    res = rankgate.evaluate(files["qrels"], files["good"], "P@1", disjoint="error")
    assert res.queries["missing_from_run"] == 0
    res = rankgate.evaluate(files["qrels"], {}, "P@1", disjoint="error")  # no results at all: its own warning
    assert any("no results" in w for w in res.warnings)
