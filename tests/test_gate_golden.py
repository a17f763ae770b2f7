"""Golden files of the gate's outputs (Markdown comment, JUnit XML, JSON) for each verdict.

The runs are the demo's: dense is the baseline; dense_v2 regresses (most on topic coffee).
Regenerate after an intended change with ``RANKGATE_UPDATE_GOLDEN=1 pytest tests/test_gate_golden.py``
and read the diff before committing it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rankgate.data import demo_dir, demo_qrels_path, demo_run_path
from tests.cli_support import invoke

GOLDEN = Path(__file__).parent / "golden" / "gate"
UPDATE = os.environ.get("RANKGATE_UPDATE_GOLDEN") == "1"
QRELS, TAGS = str(demo_qrels_path()), str(demo_dir() / "queries.jsonl")
BASE = str(demo_run_path("dense"))

CASES = {
    # dense against itself: every gate passes.
    "pass": (
        "dense",
        """\
gates:
  - {name: recall_at_5, threshold: 0.55, regression_max: 0.03}
  - {name: ndcg_at_10, threshold: 0.70, regression_max: 0.02, mode: noninferiority}
""",
    ),
    # dense_v2 drops MRR beyond the allowed 5 points, but that gate is a warning.
    "warn": (
        "dense_v2",
        """\
gates:
  - {name: recall_at_5, threshold: 0.55, regression_max: 0.10, severity: error}
  - {name: mrr, threshold: 0.80, regression_max: 0.05, severity: warning}
""",
    ),
    # dense_v2 drops R@5 by 8.6 points: an error gate fails; per-tag breakdown included.
    "fail": (
        "dense_v2",
        """\
gates:
  - {name: retrieval_recall_at_5, threshold: 0.55, regression_max: 0.03, severity: error}
  - {name: mrr, threshold: 0.80, regression_max: 0.05, severity: warning}
  - {name: ndcg_at_10, threshold: 0.70, regression_max: 0.02, mode: noninferiority}
""",
    ),
    # The 95% CI of the R@5 drop (-14.3 to -3.1 pts) straddles the 10-point margin: inconclusive.
    "inconclusive": (
        "dense_v2",
        """\
gates:
  - {name: recall_at_5, threshold: 0.55, regression_max: 0.10, mode: noninferiority, on_inconclusive: fail}
  - {name: ndcg_at_10, threshold: 0.70, regression_max: 0.10, mode: noninferiority, on_inconclusive: warn}
""",
    ),
}
FORMATS = {"text": "txt", "markdown": "md", "junit": "xml", "json": "json"}


def render(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, fmt: str) -> tuple[int, str]:
    run, config = CASES[case]
    path = tmp_path / "gates.yaml"
    path.write_text(config)
    args = ["gate", "--qrels", QRELS, "--run", str(demo_run_path(run)), "--baseline-run", BASE,
            "--config", str(path), "--format", fmt]  # fmt: skip
    if case == "fail":
        args += ["--tags", TAGS]
    code, out, _ = invoke(capsys, *args)
    return code, normalize(out, fmt)


def normalize(text: str, fmt: str) -> str:
    """Drop what changes between machines and releases: library versions, the temp config path, float noise."""
    if fmt != "json":
        return text
    data = json.loads(text)
    data.pop("versions")
    data["config"] = "gates.yaml"
    for key in ("per_query", "baseline_per_query"):  # checked value by value in test_gate.py
        data.pop(key, None)
    return json.dumps(_round(data), indent=2, sort_keys=True) + "\n"


def _round(value: object) -> object:
    if isinstance(value, float):
        return round(value, 10)
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_round(v) for v in value]
    return value


@pytest.mark.extra("gate")
@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize(("case", "exit_code"), [("pass", 0), ("warn", 0), ("fail", 1), ("inconclusive", 1)])
def test_gate_output_matches_golden_file(tmp_path, capsys, case, exit_code, fmt):
    code, out = render(tmp_path, capsys, case, fmt)
    assert code == exit_code
    golden = GOLDEN / f"{case}.{FORMATS[fmt]}"
    if UPDATE:
        golden.write_text(out)
    assert golden.exists(), f"missing {golden}: run with RANKGATE_UPDATE_GOLDEN=1"
    assert out == golden.read_text()


def test_golden_verdicts_are_the_cases_they_claim():
    """The golden files themselves show each verdict (guards against regenerating a wrong one)."""
    for case, verdict in [("pass", "pass"), ("warn", "warn"), ("fail", "fail"), ("inconclusive", "fail")]:
        data = json.loads((GOLDEN / f"{case}.json").read_text())
        assert data["verdict"] == verdict
    statuses = [g["status"] for g in json.loads((GOLDEN / "inconclusive.json").read_text())["gates"]]
    assert statuses == ["inconclusive", "inconclusive"]


@pytest.mark.extra("gate")
@pytest.mark.slow
def test_two_gate_runs_writing_one_store_at_once_both_land(tmp_path):
    from rankgate.store.base import open_store

    db = tmp_path / "results.db"
    open_store(str(db)).close()
    config = tmp_path / "gates.yaml"
    config.write_text(CASES["pass"][1])

    def start(run: str) -> subprocess.Popen[str]:
        args = ["gate", "--qrels", QRELS, "--run", str(demo_run_path(run)), "--config", str(config),
                "--store", str(db), "--name", run, "--format", "json"]  # fmt: skip
        return subprocess.Popen([sys.executable, "-m", "rankgate", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip

    procs = [start("dense"), start("bm25")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode in (0, 1) for p in procs), [err for _, err in outs]
    ids = {json.loads(out)["stored_id"] for out, _ in outs}
    with open_store(str(db)) as store:
        stored = store.list()
    assert {r.id for r in stored} == ids and len(ids) == 2
    assert {r.name for r in stored} == {"dense", "bm25"}
