"""`rankgate store list` without a store says truly what creates one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_support import invoke

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.0 r\n"
GATES = "gates:\n  - name: p\n    metric: P@1\n    threshold: 0.1\n"


def test_store_list_without_a_store_names_what_creates_one(capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RANKGATE_STORE", raising=False)
    code, out, err = invoke(capsys, "store", "list")
    assert code == 2 and out == ""
    assert err.strip() == (
        "rankgate: error: no results store at .rankgate/results.db (it is created by the first "
        "`rankgate store add`, or by `rankgate gate` given --store or $RANKGATE_STORE; "
        "set --store or $RANKGATE_STORE to use another)"
    )


@pytest.mark.extra("gate")
def test_what_the_message_says_holds(capsys, tmp_path: Path, monkeypatch) -> None:
    """A plain `rankgate gate` records nothing; given --store it creates the store."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RANKGATE_STORE", raising=False)
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "gates.yaml").write_text(GATES)
    gate = ("gate", "--qrels", "qrels.txt", "--run", "run.txt", "--config", "gates.yaml")
    code, _, err = invoke(capsys, *gate)
    assert code == 0, err
    assert not (tmp_path / ".rankgate").exists()
    code, _, err = invoke(capsys, *gate, "--store", "kept/results.db")
    assert code == 0, err
    assert (tmp_path / "kept" / "results.db").is_file()
    code, out, err = invoke(capsys, "store", "list", "--store", "kept/results.db", "--format", "json")
    assert code == 0 and '"run"' in out, err
