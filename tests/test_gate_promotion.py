"""Promotion rules (issue 16 item 1-2) on a BEIR-layout collection and runs the test builds.

200 queries, one relevant document each; recall@10 is 1 when it is in the top 10. The
baseline finds 100 of them (R@10 = 0.5). Candidates:

* ``plus5``: 8 queries won, 3 lost: 105 found, 0.525 = 0.5 x 1.05 (+5%);
* ``plus1``: 2 won, 1 lost: 101 found, 0.505 (+1%).

Hand-worked: under ``min_relative_improvement: 0.03`` with ``decide_on: mean`` plus5 clears
0.5 x 1.03 = 0.515 and plus1 does not. With ``decide_on: ci`` the paired statistic
``cur_q - 1.03 base_q`` has mean 0.01 and SD about 0.24 over 200 queries, so its 95% CI is
about 0.01 +- 0.033: it straddles 0 (the relative CI straddles 3%): inconclusive.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rankgate.gate.config import load_config
from rankgate.gate.runner import run_gate
from tests.bench_support import write_beir
from tests.cli_support import invoke

pytestmark = pytest.mark.extra("gate")
N = 200


def _run(path: Path, found: set[int]) -> Path:
    """A TREC run: the relevant doc at rank 1 for the queries in ``found``, else 10 other docs."""
    with path.open("w") as f:
        for q in range(N):
            docs = [f"d{q}"] if q in found else []
            docs += [f"x{q}_{i}" for i in range(10 - len(docs))]
            for rank, d in enumerate(docs, 1):
                f.write(f"q{q} Q0 {d} {rank} {20 - rank} sys\n")
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("beir")
    docs = {f"d{q}": f"document {q}" for q in range(N)} | {f"x{q}_{i}": "other" for q in range(N) for i in range(10)}
    write_beir(root / "col", docs, {f"q{q}": f"query {q}" for q in range(N)}, {f"q{q}": {f"d{q}": 1} for q in range(N)})
    base = set(range(100))
    return {
        "qrels": root / "col" / "qrels" / "test.tsv",
        "base": _run(root / "base.txt", base),
        "plus5": _run(root / "plus5.txt", (base - {0, 1, 2}) | set(range(100, 108))),
        "plus1": _run(root / "plus1.txt", (base - {0}) | {100, 101}),
        "root": root,
    }


@pytest.fixture
def gate(data: dict[str, Path], capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """``rankgate gate`` on a candidate of ``data`` with a config text: (exit code, stdout, stderr)."""

    def run(candidate: str, config: str, *extra: str, fmt: str = "json") -> tuple[int, str, str]:
        path = data["root"] / "ship-criteria.yaml"
        path.write_text(config)
        args = ["gate", "--qrels", str(data["qrels"]), "--run", str(data[candidate]), "--config", str(path)]
        return invoke(capsys, *args, "--format", fmt, *extra)

    return run


PROMOTE = "gates:\n  - {{name: promote, metric: R@10, min_relative_improvement: 0.03, decide_on: {on}}}\n"


def test_a_candidate_5_percent_better_promotes_on_the_means(data, gate):
    code, out, err = gate("plus5", PROMOTE.format(on="mean"), "--baseline-run", str(data["base"]))
    assert code == 0, err
    found = json.loads(out)["gates"][0]
    assert found["status"] == "pass" and found["baseline"] == 0.5 and found["current_paired"] == pytest.approx(0.525)
    assert found["relative_delta"] == pytest.approx(0.05)
    check = found["checks"][0]
    assert check["rule"] == "min_relative_improvement" and check["bar"] == 0.03 and check["gain"] == pytest.approx(0.05)
    # A gate with only relative rules shows the relative CI: decided on the means, the delta's CI over
    # the baseline's mean (the test's interval at a bar of 0), in percent, never the delta's in points.
    low, high = found["ci"]
    assert found["relative_ci"] == pytest.approx([low / 0.5, high / 0.5])
    code, text, _ = gate("plus5", PROMOTE.format(on="mean"), "--baseline-run", str(data["base"]), fmt="text")
    shown = f"(+2.5 pts, +5.0% (95% CI {low / 0.5 * 100:+.1f}% to {high / 0.5 * 100:+.1f}%); needs +3%)"
    assert f"✅ R@10 rose from 50.0% to 52.5% {shown}" in text and code == 0


def test_the_same_candidate_is_inconclusive_on_the_ci(data, gate):
    code, out, _ = gate("plus5", PROMOTE.format(on="ci"), "--baseline-run", str(data["base"]))
    found = json.loads(out)["gates"][0]
    assert found["status"] == "inconclusive" and found["counts_as"] == "warn" and code == 0
    low, high = found["checks"][0]["ci"]
    assert low < 0.03 < high  # the CI of the relative change straddles the bar
    # Independent check of the CI's statistic: mean of cur - 1.03 base, by hand.
    base = np.array([1.0] * 100 + [0.0] * 100)
    cur = base.copy()
    cur[[0, 1, 2]] = 0.0
    cur[100:108] = 1.0
    d = cur - 1.03 * base
    assert d.mean() == pytest.approx(0.01)
    se = d.std(ddof=1) / np.sqrt(N)
    assert low == pytest.approx(0.03 + (d.mean() - 1.96 * se) / 0.5, abs=0.02)
    assert found["queries_needed"] > N  # more queries would settle it
    code, text, _ = gate("plus5", PROMOTE.format(on="ci"), "--baseline-run", str(data["base"]), fmt="text")
    assert "inconclusive: the 95% CI of the relative change straddles the bar of +3%" in text
    assert f"about {found['queries_needed']} queries would settle it" in text


def test_a_candidate_1_percent_better_fails(data, gate):
    code, out, _ = gate("plus1", PROMOTE.format(on="mean"), "--baseline-run", str(data["base"]))
    found = json.loads(out)["gates"][0]
    assert code == 1 and found["status"] == "fail" and found["failed"] == ["improvement"]
    assert found["relative_delta"] == pytest.approx(0.01)
    code, text, _ = gate("plus1", PROMOTE.format(on="mean"), "--baseline-run", str(data["base"]), fmt="text")
    assert "❌ R@10 rose from 50.0% to 50.5% (+0.5 pts, +1.0%" in text
    assert "— gained less than the required +3%" in text


def test_absolute_improvement_and_relative_limits(data, gate):
    """min_improvement in points; regression_max_relative beside regression_max, all vs any."""
    base = ["--baseline-run", str(data["base"])]
    code, out, _ = gate("plus5", "gates:\n  - {name: g, metric: R@10, min_improvement: 0.02}\n", *base)
    assert code == 0 and json.loads(out)["gates"][0]["checks"][0]["gain"] == pytest.approx(0.025)
    code, out, _ = gate("plus5", "gates:\n  - {name: g, metric: R@10, min_improvement: 0.03}\n", *base)
    assert code == 1
    # The baseline against plus1 as candidate: the base "drops" 0.505 -> 0.5: -0.5 pts, -0.99%.
    both = (
        "gates:\n  - {{name: g, metric: R@10, regression_max: 0.001, regression_max_relative: 0.05,"
        " regression_rule: {r}}}\n"
    )
    against = ["--baseline-run", str(data["plus1"])]
    code, out, _ = gate("base", both.format(r="all"), *against)
    found = json.loads(out)["gates"][0]
    assert code == 1 and [c["status"] for c in found["checks"]] == ["fail", "pass"]
    code, _, _ = gate("base", both.format(r="any"), *against)
    assert code == 0
    code, text, _ = gate("base", both.format(r="all"), *against, fmt="text")
    assert "max drop 0.1 pts and 5% (all must hold)" in text and "dropped more than the allowed 0.1 pts and 5%" in text


def test_a_bar_without_a_baseline_is_a_config_error(data, gate):
    code, _, err = gate("plus5", PROMOTE.format(on="mean"))
    assert code == 2 and "gates[0].min_relative_improvement" in err and "--baseline-run" in err


def test_a_bar_with_an_empty_store_says_how_main_records_its_first_result(data, gate, tmp_path):
    """The docs' CI workflow with a promotion bar: main's push finds no baseline in the store. The
    error (nothing recorded: a bar is never a silent pass) says how to pin one, and that main is
    gated with a config without bars (docs/ci.md)."""
    db = str(tmp_path / "results.db")
    code, _, err = gate("plus5", PROMOTE.format(on="mean"), "--store", db)
    assert code == 2 and "gates[0].min_relative_improvement" in err, err
    assert "the store has no baseline set for key 'default'" in err and "rankgate store baseline set" in err
    assert "gate main with a config without bars (docs/ci.md)" in err
    from rankgate.store.base import open_store

    with open_store(db) as store:
        assert store.list() == []


def test_the_library_decides_alike(data, gate):
    config = load_config({"gates": [{"name": "p", "metric": "R@10", "min_relative_improvement": 0.03}]})
    report = run_gate(str(data["qrels"]), str(data["plus5"]), config, baseline_run=str(data["base"]))
    assert report.verdict == "pass" and report.outcomes[0].checks[0].status == "pass"
