"""``rankgate store ...`` end to end, in-process, on SQLite files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli import AGGREGATE, PER_QUERY, QRELS, RUN, invoke


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[str, str, str]:
    """(qrels, run, store path)."""
    q = tmp_path / "qrels.txt"
    r = tmp_path / "bm25.run"
    q.write_text(QRELS)
    r.write_text(RUN)
    return str(q), str(r), str(tmp_path / "store" / "results.db")


def add(capsys, inputs, *extra: str) -> int:
    qrels, run, store = inputs
    code, out, err = invoke(capsys, "store", "add", qrels, run, "-m", "P@2,RR,NumRel", "--store", store, *extra)
    assert code == 0, err
    return int(out.strip())


@pytest.mark.extra("gate")
def test_add_prints_the_id_and_show_gives_eval_values(capsys, inputs) -> None:
    assert add(capsys, inputs, "--branch", "main", "--commit", "abc123", "--label", "config=gates.yaml") == 1
    assert add(capsys, inputs, "--name", "dense", "--branch", "feature") == 2
    code, out, err = invoke(capsys, "store", "show", "1", "--per-query", "--format", "json", "--store", inputs[2])
    assert code == 0, err
    data = json.loads(out)
    assert data["id"] == 1 and data["name"] == "bm25"
    assert (data["branch"], data["commit"]) == ("main", "abc123")
    assert data["aggregate"] == AGGREGATE
    assert data["per_query"] == PER_QUERY
    assert data["labels"] == {"source": "cli", "config": "gates.yaml"}
    assert data["queries"] == {"evaluated": 4, "missing_from_run": 2, "run_only": 1, "no_relevant": 1}
    assert len(data["qrels_fingerprint"]) == 64
    assert data["baseline_for"] == []
    # The same numbers as `rankgate eval`.
    code, out, _ = invoke(
        capsys, "eval", inputs[0], inputs[1], "-m", "P@2,RR,NumRel", "--format", "json", "--per-query"
    )
    evaluated = json.loads(out)
    assert evaluated["per_query"] == data["per_query"] and evaluated["settings"] == data["settings"]
    assert {k: data[k] for k in evaluated} == evaluated  # a superset of the eval contract


@pytest.mark.extra("gate")
def test_add_reports_on_stderr_and_can_set_the_baseline(capsys, inputs) -> None:
    qrels, run, store = inputs
    code, out, err = invoke(
        capsys,
        "store",
        "add",
        qrels,
        run,
        "-m",
        "RR",
        "--store",
        store,
        "--branch",
        "main",
        "--set-baseline",
        "nightly",
    )
    assert code == 0
    assert out == "1\n"
    assert f"stored result 1 (bm25: RR=0.3750) in {store}; baseline for 'nightly'" in err
    code, out, _ = invoke(capsys, "store", "baseline", "show", "--key", "nightly", "--format", "json", "--store", store)
    assert code == 0 and json.loads(out)["id"] == 1 and json.loads(out)["baseline_for"] == ["nightly"]


@pytest.mark.extra("gate")
def test_list_table_and_json(capsys, inputs) -> None:
    add(capsys, inputs, "--branch", "main", "--commit", "0123456789abcdef")
    add(capsys, inputs, "--name", "dense", "--branch", "feature")
    add(capsys, inputs, "--branch", "main")
    code, out, _ = invoke(capsys, "store", "baseline", "set", "latest:main", "--store", inputs[2])
    assert code == 0 and out.startswith("baseline 'default' is now result 3 (bm25, main, ")

    code, out, err = invoke(capsys, "store", "list", "--store", inputs[2])
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.startswith("│")]
    assert [line.split("│")[1].strip() for line in lines] == ["3", "2", "1"]
    assert "01234567" in lines[2] and "P@2 0.2500, RR 0.3750, NumRel 4" in lines[2]
    assert lines[0].rstrip("│ ").endswith("default")

    code, out, _ = invoke(capsys, "store", "list", "--branch", "main", "--format", "json", "--store", inputs[2])
    data = json.loads(out)
    assert data["store"] == inputs[2]
    assert [r["id"] for r in data["results"]] == [3, 1]
    assert data["results"][0]["baseline_for"] == ["default"]
    assert "per_query" not in data["results"][0]

    code, out, _ = invoke(
        capsys, "store", "list", "--name", "dense", "--limit", "1", "--format", "json", "--store", inputs[2]
    )
    assert [r["id"] for r in json.loads(out)["results"]] == [2]
    code, out, err = invoke(capsys, "store", "list", "--branch", "nope", "--store", inputs[2])
    assert code == 0 and out == "" and "no stored results in" in err and "with branch 'nope'" in err


@pytest.mark.extra("gate")
def test_show_table(capsys, inputs) -> None:
    add(capsys, inputs, "--branch", "main", "--commit", "abc123")
    code, out, err = invoke(capsys, "store", "show", "latest:main", "--per-query", "--store", inputs[2])
    assert code == 0, err
    assert "result             1" in out
    assert "branch             main" in out and "commit             abc123" in out
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.startswith("│")}
    assert set(rows) == {"q1", "q2", "q3", "q5", "all"}
    assert "0.3750" in rows["all"]


@pytest.mark.extra("gate")
def test_env_var_names_the_store(capsys, inputs, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKGATE_STORE", inputs[2])
    qrels, run, _ = inputs
    code, out, _ = invoke(capsys, "store", "add", qrels, run, "-m", "RR", "--branch", "main")
    assert code == 0 and out == "1\n"
    code, out, _ = invoke(capsys, "store", "list", "--format", "json")
    assert [r["id"] for r in json.loads(out)["results"]] == [1]


@pytest.mark.extra("gate")
def test_baseline_show_all(capsys, inputs) -> None:
    add(capsys, inputs, "--branch", "main")
    add(capsys, inputs, "--branch", "main")
    store = inputs[2]
    assert invoke(capsys, "store", "baseline", "set", "1", "--store", store)[0] == 0
    assert invoke(capsys, "store", "baseline", "set", "2", "--key", "dense", "--store", store)[0] == 0
    code, out, _ = invoke(capsys, "store", "baseline", "show", "--all", "--store", store)
    assert code == 0 and out == "default\t1\ndense\t2\n"
    code, out, _ = invoke(capsys, "store", "baseline", "show", "--all", "--format", "json", "--store", store)
    assert code == 0 and json.loads(out)["baselines"] == {"default": 1, "dense": 2}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["show", "9"], "no stored result 9 in"),
        (["show", "tip"], "cannot read result reference 'tip'"),
        (["baseline", "show"], "no baseline set for key 'default'"),
        (["baseline", "set", "latest:nope"], "no stored result on branch 'nope'"),
    ],
)
@pytest.mark.extra("gate")
def test_errors_exit_2_without_traceback(capsys, inputs, argv: list[str], message: str) -> None:
    add(capsys, inputs, "--branch", "main")
    code, out, err = invoke(capsys, "store", *argv, "--store", inputs[2])
    assert code == 2
    assert out == ""
    assert err.startswith("rankgate: error: ") and message in err
    assert "Traceback" not in err


@pytest.mark.extra("gate")
def test_store_errors_exit_2(capsys, inputs, tmp_path: Path) -> None:
    code, _, err = invoke(capsys, "store", "list", "--store", str(tmp_path / "none.db"))
    assert code == 2 and "no results store at" in err
    assert not (tmp_path / "none.db").exists()  # reading never creates a store
    bad = tmp_path / "bad.db"
    bad.write_text("not a database\n" * 50)
    code, _, err = invoke(capsys, "store", "show", "1", "--store", str(bad))
    assert code == 2 and "file is not a database" in err and "Traceback" not in err
    code, _, err = invoke(capsys, "store", "list", "--store", "redis://localhost")
    assert code == 2 and "unsupported store URL scheme 'redis://'" in err
    qrels, run, _ = inputs
    code, _, err = invoke(capsys, "store", "add", qrels, run, "-m", "RR", "--store", str(bad))
    assert code == 2 and "file is not a database" in err
    code, _, err = invoke(capsys, "store", "add", qrels, run, "-m", "RR", "--label", "novalue", "--store", inputs[2])
    assert code == 2 and "expected KEY=VALUE" in err
    code, _, err = invoke(
        capsys, "store", "add", qrels, str(tmp_path / "missing.run"), "-m", "RR", "--store", inputs[2]
    )
    assert code == 2 and "missing.run: file not found" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["store"],
        ["store", "add"],
        ["store", "list"],
        ["store", "show"],
        ["store", "baseline"],
        ["store", "baseline", "set"],
        ["store", "baseline", "show"],
    ],
)
def test_help_has_examples(capsys, argv: list[str]) -> None:
    code, out, _ = invoke(capsys, *argv, "--help")
    assert code == 0
    assert "Examples:" in out and "rankgate store" in out
