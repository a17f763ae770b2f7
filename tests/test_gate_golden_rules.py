"""Golden files of the gate's outputs for the verdicts of issue 16: promotion (improvement bars,
on the means and on the CI), relative regression limits, and operational gates read from a
bench file (tests/golden/gate/bench-new.json against bench-main.json, fixed numbers).

The quality runs are the demo's (bm25 < dense_v2 < dense on R@5). Regenerate after an intended
change with ``RANKGATE_UPDATE_GOLDEN=1 pytest tests/test_gate_golden_rules.py`` and read the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankgate.data import demo_qrels_path, demo_run_path
from tests.cli_support import invoke
from tests.test_gate_golden import FORMATS, GOLDEN, UPDATE, normalize

CASES = {
    # dense against bm25: +42% on R@5, clear of a 3% bar on the means and on the CI.
    "promote": (
        "dense",
        "bm25",
        """\
gates:
  - {name: promote_recall, metric: recall@5, min_relative_improvement: 0.03}
  - {name: promote_ndcg, metric: nDCG@10, min_relative_improvement: 0.03, decide_on: ci}
  - {name: ndcg_points, metric: nDCG@10, threshold: 0.7, min_improvement: 0.05}
""",
    ),
    # dense_v2 against dense: no gain, and a drop beyond both limits.
    "promote_fail": (
        "dense_v2",
        "dense",
        """\
gates:
  - {name: promote_recall, metric: recall@5, min_relative_improvement: 0.03}
  - {name: recall_limits, metric: recall@5, regression_max: 0.03, regression_max_relative: 0.05, regression_rule: any}
""",
    ),
    # dense_v2 against bm25: +25% observed; the CI of the relative change straddles a 20% bar.
    "promote_inconclusive": (
        "dense_v2",
        "bm25",
        """\
gates:
  - {name: promote_recall, metric: recall@5, min_relative_improvement: 0.2, decide_on: ci, on_inconclusive: fail}
""",
    ),
    # one file for quality and cost: the HNSW row's p95 grew 30% (limit 20%), its neighbor
    # recall is 0.93 (floor 0.95); its p99 ceiling and its throughput floor hold.
    "operational": (
        "dense",
        "dense",
        """\
gates:
  - {name: recall_at_5, threshold: 0.55, regression_max: 0.03}
  - {name: p99_budget, metric: latency_p99_ms, index: hnsw, max: 5}
  - {name: p95_growth, metric: latency_p95_ms, index: hnsw, regression_max_relative: 0.2}
  - {name: ann_recall, metric: neighbor_recall@10, index: hnsw, threshold: 0.95, severity: warning}
  - {name: throughput, metric: qps, index: hnsw, threshold: 1000}
""",
    ),
}
EXIT = {"promote": 0, "promote_fail": 1, "promote_inconclusive": 1, "operational": 1}


def render(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, fmt: str) -> tuple[int, str]:
    run, base, config = CASES[case]
    path = tmp_path / "gates.yaml"
    path.write_text(config)
    args = ["gate", "--qrels", str(demo_qrels_path()), "--run", str(demo_run_path(run)),
            "--baseline-run", str(demo_run_path(base)), "--config", str(path), "--format", fmt]  # fmt: skip
    if case == "operational":
        args += ["--bench", str(GOLDEN / "bench-new.json"), "--baseline-bench", str(GOLDEN / "bench-main.json")]
    code, out, err = invoke(capsys, *args)
    assert "Traceback" not in err
    out = out.replace(str(GOLDEN) + "/", "")
    return code, normalize(out, fmt)


@pytest.mark.extra("gate")
@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("case", list(CASES))
def test_new_verdicts_match_golden_files(tmp_path, capsys, case, fmt):
    code, out = render(tmp_path, capsys, case, fmt)
    assert code == EXIT[case]
    golden = GOLDEN / f"{case}.{FORMATS[fmt]}"
    if UPDATE:
        golden.write_text(out)
    assert golden.exists(), f"missing {golden}: run with RANKGATE_UPDATE_GOLDEN=1"
    assert out == golden.read_text()


def test_the_golden_files_show_the_verdicts_they_claim():
    def gates(case: str) -> dict[str, dict[str, object]]:
        return {g["name"]: g for g in json.loads((GOLDEN / f"{case}.json").read_text())["gates"]}

    promote = gates("promote")
    assert {g["status"] for g in promote.values()} == {"pass"}
    assert promote["promote_ndcg"]["checks"][0]["ci"][0] > 0.03  # the CI's lower bound clears the bar
    failed = gates("promote_fail")
    assert failed["promote_recall"]["failed"] == ["improvement"] and failed["recall_limits"]["failed"] == ["regression"]
    assert [c["status"] for c in failed["recall_limits"]["checks"]] == ["fail", "fail"]
    low, high = gates("promote_inconclusive")["promote_recall"]["checks"][0]["ci"]
    assert low < 0.2 < high
    ops = gates("operational")
    assert ops["p95_growth"]["value"] == 2.6 and ops["p95_growth"]["baseline"] == 2.0
    assert ops["p95_growth"]["relative_delta"] == pytest.approx(0.3) and ops["p95_growth"]["status"] == "fail"
    assert ops["ann_recall"]["status"] == "warn" and ops["p99_budget"]["status"] == "pass"
    assert ops["throughput"]["status"] == "pass" and ops["recall_at_5"]["status"] == "pass"
