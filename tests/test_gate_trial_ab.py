"""Findings of a new user's A/B trial of `rankgate gate` (BM25 service against LanceDB/MiniLM):
a core install without the gate extra, gates whose rules all went unchecked, retrieve summaries
with failed queries, the relative CI, the baseline's name in JSON, a baseline on other queries,
files given to the wrong option, duplicate gate names, and the stored result's id in the text.

The runs are the demo's: dense is the baseline, dense_v2 the candidate (they share every query).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from rankgate.data import demo_qrels_path, demo_run_path
from tests.cli_support import invoke

pytestmark = pytest.mark.extra("gate")
QRELS, DENSE, DENSE_V2 = str(demo_qrels_path()), str(demo_run_path("dense")), str(demo_run_path("dense_v2"))
LIMITS = """\
gates:
  - {name: ndcg_guard, metric: nDCG@10, regression_max: 0.01}
  - {name: p95_growth, metric: latency_p95_ms, regression_max_relative: 0.5}
  - {name: recall_floor, metric: R@5, threshold: 0.3, regression_max: 0.5}
"""


def _summary(tmp_path: Path, name: str, *, failed: int, p95: float = 40.0) -> str:
    """A `rankgate retrieve` JSON summary (the keys the gate reads) with ``failed`` of 63 queries failed."""
    path = tmp_path / name
    latency = {"p50": 10.0, "p95": p95, "p99": p95 * 1.2, "mean": 12.0}
    summary = {"retriever": {"kind": "http"}, "queries": 63, "answered": 63 - failed, "failed": failed,
               "qps": 20.0, "latency_ms": latency}  # fmt: skip
    path.write_text(json.dumps(summary))
    return str(path)


def _gate(capsys: pytest.CaptureFixture[str], tmp_path: Path, config: str, *flags: str) -> tuple[int, str, str]:
    path = tmp_path / "gates.yaml"
    path.write_text(config)
    return invoke(capsys, "gate", "--qrels", QRELS, "--run", DENSE_V2, "--config", str(path), "--no-record", *flags)


# -- 2. no gate extra: one line naming it, exit 2 (exit 1 is "a gate failed") -----------------
@pytest.mark.parametrize(("hidden", "named"), [(("pydantic", "yaml"), "pydantic"), (("yaml",), "PyYAML")])
def test_without_the_gate_extra_the_gate_is_one_line_and_exit_2(tmp_path: Path, hidden: tuple[str, ...], named: str):
    (tmp_path / "gates.yaml").write_text("gates:\n  - {name: r5, metric: R@5, threshold: 0.3}\n")
    args = ["gate", "--qrels", QRELS, "--run", DENSE, "--config", str(tmp_path / "gates.yaml"), "--no-record"]
    # A fresh interpreter in which the modules cannot be imported, as on a core install.
    script = "\n".join(
        ["import runpy, sys", *(f"sys.modules[{m!r}] = None" for m in hidden), f"sys.argv = ['rankgate', *{args!r}]",
         "runpy.run_module('rankgate', run_name='__main__')"]
    )  # fmt: skip
    env = {**os.environ, "RANKGATE_STORE": ""}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"rankgate: error: rankgate gate needs {named}: pip install 'rankgate[gate]'")


# -- 3. a gate whose every rule went unchecked: visible in every output ------------------------
def test_a_gate_that_checked_nothing_says_so_in_json_junit_and_text(capsys, tmp_path):
    bench = ("--bench", _summary(tmp_path, "new.json", failed=0))
    code, out, err = _gate(capsys, tmp_path, LIMITS, *bench, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    gates = {g["name"]: g for g in data["gates"]}
    assert gates["ndcg_guard"]["unchecked"] == ["regression_max"]
    assert gates["p95_growth"]["unchecked"] == ["regression_max_relative"]
    assert gates["recall_floor"]["unchecked"] == ["regression_max"]  # its floor was checked
    assert all(g["status"] == "pass" and g["checks"] == [] for g in data["gates"])  # nothing failed
    assert data["notes"][:2] == [
        "no baseline: the drop limits of ndcg_guard, recall_floor were not checked; pass --baseline-run or --baseline",
        "no baseline figures: the limits of p95_growth were not checked; pass --baseline-bench",
    ]

    suite = ET.fromstring(_gate(capsys, tmp_path, LIMITS, *bench, "--format", "junit")[1])
    assert suite.get("skipped") == "2" and suite.get("failures") == "0"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["ndcg_guard"].find("skipped") is not None and cases["p95_growth"].find("skipped") is not None
    assert cases["recall_floor"].find("skipped") is None  # a floor was checked: a passing test
    assert "not checked: no baseline figure" in cases["p95_growth"].find("skipped").get("message", "")

    text = _gate(capsys, tmp_path, LIMITS, *bench)[1]
    assert "  ➖ nDCG@10 is 74.9% (max drop 1 pts) — not checked: no baseline\n" in text
    assert "✅ R@5 is 60.4% (floor 30%, max drop 50 pts) — max drop not checked: no baseline\n" in text
    assert "  note: no baseline figures: the limits of p95_growth were not checked; pass --baseline-bench\n" in text
    assert "➖ unchecked" in text.split("\n\n")[1]  # the table's status

    # with a baseline everything is checked: no note, nothing skipped
    both = ("--baseline-run", DENSE, "--baseline-bench", _summary(tmp_path, "main.json", failed=0, p95=30.0))
    code, out, _ = _gate(capsys, tmp_path, LIMITS, *bench, *both, "--format", "json")
    assert json.loads(out)["notes"] == [] and all(g["unchecked"] == [] for g in json.loads(out)["gates"])


# -- 1. a retrieve summary with failed queries: the gate says how many -------------------------
def test_a_summary_with_failed_queries_is_noted(capsys, tmp_path):
    config = "gates:\n  - {name: p95_budget, metric: latency_p95_ms, max: 100}\n"
    new, main = _summary(tmp_path, "new.json", failed=7), _summary(tmp_path, "main.json", failed=1)
    code, out, err = _gate(capsys, tmp_path, config, "--bench", new, "--baseline-bench", main, "--format", "json")
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert f"--bench {new}: 7 of 63 queries failed in `rankgate retrieve` (no answer)" in notes[0]
    assert f"--baseline-bench {main}: 1 of 63 query failed in `rankgate retrieve` (no answer)" in notes[1]
    text = _gate(capsys, tmp_path, config, "--bench", new)[1]
    assert f"  note: --bench {new}: 7 of 63 queries failed in `rankgate retrieve`" in text
    clean = _gate(capsys, tmp_path, config, "--bench", _summary(tmp_path, "ok.json", failed=0), "--format", "json")
    assert json.loads(clean[1])["notes"] == []


# -- 5. the relative CI of a gate with only relative rules, in percent -------------------------
def test_a_relative_bar_on_the_means_shows_the_relative_ci(capsys, tmp_path):
    config = "gates:\n  - {name: promote, metric: R@5, min_relative_improvement: 0.03}\n"
    out = _gate(capsys, tmp_path, config, "--baseline-run", str(demo_run_path("bm25")), "--format", "json")[1]
    found = json.loads(out)["gates"][0]
    low, high = (x / found["baseline"] for x in found["ci"])
    assert found["relative_ci"] == pytest.approx([low, high]) and low < found["relative_delta"] < high
    text = _gate(capsys, tmp_path, config, "--baseline-run", str(demo_run_path("bm25")))[1]
    headline = text.splitlines()[1]
    assert f"+24.8% (95% CI {low * 100:+.1f}% to {high * 100:+.1f}%); needs +3%)" in headline
    assert " pts, 95% CI" not in headline and "), 95% CI" not in headline  # no CI in points beside the percentage


# -- 6. JSON's baseline is the baseline run's name --------------------------------------------
def test_json_baseline_is_the_baseline_runs_name(capsys, tmp_path):
    config = "gates:\n  - {name: r5, metric: R@5, regression_max: 0.5}\n"
    data = json.loads(_gate(capsys, tmp_path, config, "--baseline-run", DENSE, "--format", "json")[1])
    assert data["baseline"] == "dense" and data["run"] == "dense_v2"
    comment = _gate(capsys, tmp_path, config, "--baseline-run", DENSE, "--format", "markdown")[1]
    assert "run `dense_v2` · 63 queries · baseline run `dense` ·" in comment


# -- 10. a baseline evaluated on other queries: the output says so -----------------------------
def test_a_baseline_on_more_queries_is_noted(capsys, tmp_path):
    fewer = tmp_path / "fewer.txt"
    lines = Path(DENSE_V2).read_text().splitlines()
    dropped = sorted({line.split()[0] for line in lines})[:4]
    fewer.write_text("".join(f"{line}\n" for line in lines if line.split()[0] not in dropped))
    config = "settings: {queries: intersection}\ngates:\n  - {name: r5, metric: R@5, regression_max: 0.5}\n"
    path = tmp_path / "gates.yaml"
    path.write_text(config)
    args = ("gate", "--qrels", QRELS, "--run", str(fewer), "--config", str(path), "--baseline-run", DENSE)
    code, out, err = invoke(capsys, *args, "--no-record", "--format", "json")
    assert code == 0, err
    note = "the run was evaluated on 59 queries and the baseline on 63; deltas, and the baseline's values beside them"
    assert any(n.startswith(note) for n in json.loads(out)["notes"])
    assert f"  note: {note}" in invoke(capsys, *args, "--no-record")[1]
    # the same query set: no note
    same = json.loads(_gate(capsys, tmp_path, config, "--baseline-run", DENSE, "--format", "json")[1])
    assert same["notes"] == []


# -- 11b. a qrels file given to --run: named by the option, not eval's argument order ----------
@pytest.mark.parametrize(
    ("flags", "hint"),
    [
        (("--qrels", QRELS, "--run", QRELS),
         "this looks like a qrels line: --run got a qrels file (the qrels go to --qrels)"),
        (("--qrels", DENSE, "--run", DENSE),
         "this looks like a run line: --qrels got a run file (the run goes to --run)"),
        (("--qrels", QRELS, "--run", DENSE, "--baseline-run", QRELS),
         "this looks like a qrels line: --baseline-run got a qrels file (the qrels go to --qrels)"),
    ],
)  # fmt: skip
def test_a_file_given_to_the_wrong_option_is_named_by_it(capsys, tmp_path, flags: tuple[str, ...], hint: str):
    path = tmp_path / "gates.yaml"
    path.write_text("gates:\n  - {name: r5, metric: R@5, threshold: 0.3}\n")
    code, out, err = invoke(capsys, "gate", *flags, "--config", str(path), "--no-record")
    assert code == 2 and out == "" and "Traceback" not in err
    assert hint in err and "pass the qrels first" not in err, err


def test_a_jsonl_qrels_file_given_to_run_is_named_by_the_option(capsys, tmp_path):
    qrels = tmp_path / "qrels.jsonl"
    qrels.write_text('{"query_id": "q1", "doc_id": "d1", "relevance": 1}\n')
    path = tmp_path / "gates.yaml"
    path.write_text("gates:\n  - {name: r5, metric: R@5, threshold: 0.3}\n")
    code, _, err = invoke(capsys, "gate", "--qrels", QRELS, "--run", str(qrels), "--config", str(path), "--no-record")
    assert code == 2 and "this looks like qrels: --run got a qrels file" in err, err


# -- 11g. the text says where the run was recorded --------------------------------------------
def test_the_text_says_the_stored_result_id(capsys, tmp_path):
    path = tmp_path / "gates.yaml"
    path.write_text("gates:\n  - {name: r5, metric: R@5, threshold: 0.3}\n")
    db = str(tmp_path / "results.db")
    args: list[Any] = ["gate", "--qrels", QRELS, "--run", DENSE, "--config", str(path), "--store", db]
    code, out, err = invoke(capsys, *args)
    assert code == 0, err
    assert "  stored as result 1 in the results store\n" in out
    assert "stored as result" not in invoke(capsys, *args, "--no-record")[1]


# -- 4. docs/ci.md's two configs: main records its first result, pull requests then compare ----
def _ci_config(header: str) -> str:
    """The YAML block of docs/ci.md that starts with the comment ``header``."""
    text = (Path(__file__).parents[1] / "docs" / "ci.md").read_text(encoding="utf-8")
    block = next(b for b in text.split("```yaml\n")[1:] if b.startswith(f"# {header}"))
    return block.split("```")[0]


def test_the_ci_docs_bootstrap_main_and_then_gate_pull_requests(capsys, tmp_path, monkeypatch):
    ship, main = tmp_path / "ship-criteria.yaml", tmp_path / "gates-main.yaml"
    ship.write_text(_ci_config("eval/ship-criteria.yaml"))
    main.write_text(_ci_config("eval/gates-main.yaml"))
    db, bm25 = str(tmp_path / "results.db"), str(demo_run_path("bm25"))
    bench = ("--bench", _summary(tmp_path, "summary.json", failed=0))

    def gate(config: Path, run: str, branch: str, *flags: str) -> tuple[int, str, str]:
        monkeypatch.setenv("RANKGATE_BRANCH", branch)
        return invoke(capsys, "gate", "--qrels", QRELS, "--run", run, "--config", str(config), "--store", db, *flags)

    # The ship criteria on main's first push: the bar has no baseline, exit 2, nothing recorded.
    code, _, err = gate(ship, bm25, "main", *bench)
    assert code == 2 and "gates[0].min_relative_improvement" in err and "config without bars" in err
    # The main config records main's first result: floors and ceilings checked, the limit noted.
    code, out, err = gate(main, bm25, "main", *bench)
    assert code == 0, err
    assert "note: no baseline: the drop limits of ndcg_guard were not checked" in out
    assert "stored as result 1 in the results store" in out
    # A pull request compares with it, bar included.
    code, out, err = gate(ship, DENSE, "feature", *bench, "--baseline", "latest:main", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["baseline"].startswith("stored result 1 (bm25, main ")
    assert [g["checks"][0]["status"] for g in data["gates"][:2]] == ["pass", "pass"]


def test_the_ci_docs_store_add_bootstrap_gives_pull_requests_a_baseline(capsys, tmp_path, monkeypatch):
    ship = tmp_path / "ship-criteria.yaml"
    ship.write_text(_ci_config("eval/ship-criteria.yaml"))
    db = str(tmp_path / "results.db")
    monkeypatch.setenv("RANKGATE_STORE", "")
    add = ("store", "add", QRELS, str(demo_run_path("bm25")), "-m", "R@10", "-m", "nDCG@10", "--branch", "main")
    code, _, err = invoke(capsys, *add, "--set-baseline", "default", "--store", db)
    assert code == 0, err
    monkeypatch.setenv("RANKGATE_BRANCH", "feature")
    args = ("gate", "--qrels", QRELS, "--run", DENSE, "--config", str(ship), "--store", db, "--baseline", "latest:main")
    code, out, err = invoke(capsys, *args, "--bench", _summary(tmp_path, "s.json", failed=0), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["gates"][0]["checks"][0]["status"] == "pass"


@pytest.mark.extra("gate")
def test_a_gate_named_after_an_ambiguous_measure_says_why(tmp_path: Path) -> None:
    """``name: rbp`` once meant binary RBP; 'rbp' now reads two ways, and the error says which."""
    from rankgate.errors import ConfigError
    from rankgate.gate.config import load_config

    with pytest.raises(ConfigError, match=r"gate name 'rbp'; 'rbp' can be read two ways: .* Add 'metric:'\."):
        load_config({"gates": [{"name": "rbp", "threshold": 0.1}]})
    for name in ("my_gate", "my_gate_2", "x_p@x"):  # a word that is no measure, or a malformed one: the example
        with pytest.raises(ConfigError, match=rf"gate name '{name}'; add 'metric:' \(e\.g\. metric: nDCG@10\)$"):
            load_config({"gates": [{"name": name, "threshold": 0.1}]})
