"""`rankgate gate`: config, decisions, the comment, and the CLI's exit codes and formats."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import rankgate
from rankgate.data import demo_dir, demo_qrels_path, demo_run_path
from rankgate.errors import ConfigError
from rankgate.evaluation.results import Results
from rankgate.gate.config import load_config, metric_from_name
from rankgate.gate.decide import GateOutcome, decide_gate, verdict
from rankgate.measures.parse import parse_measure
from rankgate.render.gate import headline, markdown
from tests.cli_support import invoke

ISSUE_CONFIG = """\
gates:
  - name: retrieval_recall_at_5
    threshold: 0.85
    regression_max: 0.03
    severity: error
  - name: retrieval_mrr
    threshold: 0.62
    regression_max: 0.05
    severity: warning
"""
QRELS = str(demo_qrels_path())
DENSE, BM25 = str(demo_run_path("dense")), str(demo_run_path("bm25"))
DEMO_GATES = str(rankgate.data.demo_gates_path())


def results(metric: str, values: dict[str, float], name: str = "run") -> Results:
    """Per-query values of one metric, as `rankgate.evaluate` would return them."""
    qids = sorted(values, key=str.encode)
    return Results(
        measures=[parse_measure(metric)],
        query_ids=qids,
        values=np.array([[values[q]] for q in qids], dtype=float),
        queries={"evaluated": len(qids), "missing_from_run": 0, "run_only": 0, "no_relevant": 0},
        settings={},
        run_name=name,
    )


def gate(**fields):
    spec = {"name": "recall_at_5", **fields}
    return load_config({"gates": [spec]}).gates[0]


# ---------------------------------------------------------------------------------------------
# Config
# ---------------------------------------------------------------------------------------------
def test_the_issue_config_works_as_written(tmp_path):
    path = tmp_path / "gates.yaml"
    path.write_text(ISSUE_CONFIG)
    cfg = load_config(path)
    assert [(g.name, str(g.metric), g.threshold, g.regression_max, g.severity) for g in cfg.gates] == [
        ("retrieval_recall_at_5", "R@5", 0.85, 0.03, "error"),
        ("retrieval_mrr", "RR", 0.62, 0.05, "warning"),
    ]
    assert [g.label for g in cfg.gates] == ["recall@5", "MRR"]
    assert [str(m) for m in cfg.measures] == ["R@5", "RR"]


@pytest.mark.parametrize(
    ("name", "metric"),
    [
        ("retrieval_recall_at_5", "R@5"),
        ("search_ndcg_at_10", "nDCG@10"),
        ("hit_rate_at_3", "Success@3"),
        ("precision_at_10", "P@10"),
        ("map", "AP"),
        ("ndcg_cut_10", "nDCG@10"),
        ("rag_context_recall_at_20", "R@20"),
    ],
)
def test_metric_from_gate_name(name, metric):
    found = metric_from_name(name)
    assert found is not None and str(found[0]) == metric


def test_explicit_metric_wins_and_rel_follows_settings():
    cfg = load_config({"settings": {"rel": 2}, "gates": [{"name": "quality", "metric": "P@5", "threshold": 0.5}]})
    assert str(cfg.gates[0].metric) == "P(rel=2)@5"


CONFIG_ERRORS = [
    ("gates:\n  - name: mrr\n    threshold: high\n", ["gates[0].threshold", "valid number", "'high'"]),
    ("gates:\n  - name: mrr\n    threshold: 0.5\n  - name: r\n    treshold: 1\n", ["gates[1].treshold", "unknown key"]),
    ("gates:\n  - name: quality_score\n    threshold: 0.5\n", ["gates[0].name", "cannot tell the metric", "metric:"]),
    ("gates:\n  - name: mrr\n", ["gates[0]", "threshold", "regression_max"]),
    ("gates: []\n", ["gates: the list is empty; give at least one gate, e.g."]),
    ("gates:\n  - name: mrr\n    threshold: 0.5\n    severity: fatal\n", ["gates[0].severity", "'fatal'"]),
    ("gates:\n  - name: q\n    metric: nDCG@ten\n    threshold: 0.5\n", ["gates[0].metric", "whole number"]),
    (
        "gates:\n  - name: mrr\n    regression_max: -0.1\n",
        ["gates[0].regression_max", "must be >= 0", "min_relative_improvement"],
    ),
    (
        "gates:\n  - name: mrr\n    threshold: 0.5\n  - name: mrr\n    threshold: 0.6\n",
        ["gates[1].name: 'mrr' is already the name of gates[0]; gate names must differ"],
    ),
    ("defaults:\n  mode: median\ngates:\n  - name: mrr\n    threshold: 0.5\n", ["defaults.mode", "'median'"]),
    ("gates:\n  - name: mrr\n\tthreshold: 0.5\n", ["gates.yaml:3", "not valid YAML"]),
    ("- just\n- a list\n", ["gates.yaml", "mapping"]),
]


@pytest.mark.parametrize(("text", "expected"), CONFIG_ERRORS, ids=[e[0] for e in CONFIG_ERRORS])
def test_config_errors_name_the_key_path(tmp_path, capsys, text, expected):
    path = tmp_path / "gates.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    for fragment in expected:
        assert fragment in str(exc.value), str(exc.value)
    # and through the CLI: exit 2, one line, no traceback
    code, out, err = invoke(capsys, "gate", "--qrels", QRELS, "--run", BM25, "--config", str(path))
    assert code == 2 and out == ""
    assert err.startswith("rankgate: error: ") and "Traceback" not in err
    assert str(path) in err


# ---------------------------------------------------------------------------------------------
# Decisions, hand-worked
# ---------------------------------------------------------------------------------------------
BASE = {"q1": 1.0, "q2": 1.0, "q3": 0.0, "q4": 1.0}  # mean 0.75


def test_floor_only_without_baseline():
    current = results("R@5", {"q1": 1.0, "q2": 0.0, "q3": 1.0, "q4": 1.0})  # 0.75
    assert decide_gate(gate(threshold=0.75), current, None).status == "pass"
    out = decide_gate(gate(threshold=0.76), current, None)
    assert (out.status, out.failed, out.value) == ("fail", ["floor"], 0.75)
    assert decide_gate(gate(threshold=0.76, severity="warning"), current, None).status == "warn"


def test_mean_mode_drop_exactly_at_the_limit_passes():
    # 0.85 - 0.88 is 0.030000000000000027 in floating point: still a drop of 3 points, allowed.
    base = results("R@5", {f"q{i}": v for i, v in enumerate([0.88] * 10)})
    cur = results("R@5", {f"q{i}": v for i, v in enumerate([0.85] * 10)})
    out = decide_gate(gate(regression_max=0.03), cur, base)
    assert out.status == "pass" and out.delta == pytest.approx(-0.03)
    out = decide_gate(gate(regression_max=0.029), cur, base)
    assert out.status == "fail" and out.failed == ["regression"]


def test_regression_pairs_only_shared_queries():
    base = results("R@5", {"q1": 1.0, "q2": 0.5, "q9": 0.0})
    cur = results("R@5", {"q1": 0.5, "q2": 0.5, "q3": 1.0})
    out = decide_gate(gate(regression_max=0.1), cur, base)
    assert out.n_paired == 2
    assert (out.baseline, out.current_paired, out.delta) == (0.75, 0.5, -0.25)
    assert out.value == pytest.approx(2 / 3)  # the floor looks at every query of the run
    assert out.status == "fail"


def _deltas(deltas: list[float]) -> tuple[Results, Results]:
    base = {f"q{i:03d}": 0.5 for i in range(len(deltas))}
    cur = {q: 0.5 + d for q, d in zip(base, deltas, strict=True)}
    return results("R@5", cur), results("R@5", base)


def test_noninferiority_pass_fail_and_inconclusive():
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 0.02, 200)
    noise -= noise.mean()
    margin = 0.03
    # a tiny, certain drop: the whole CI is above -margin
    cur, base = _deltas(list(-0.005 + noise))
    assert decide_gate(gate(regression_max=margin, mode="noninferiority"), cur, base).status == "pass"
    # a large, certain drop: the whole CI is below -margin
    cur, base = _deltas(list(-0.08 + noise))
    out = decide_gate(gate(regression_max=margin, mode="noninferiority"), cur, base)
    assert out.status == "fail" and out.ci[1] < -margin
    # a drop near the margin on few noisy queries: inconclusive, with a number of queries to settle it
    wide = rng.normal(0, 0.2, 20)
    wide -= wide.mean()
    cur, base = _deltas(list(-0.02 + wide))
    out = decide_gate(gate(regression_max=margin, mode="noninferiority"), cur, base)
    assert out.status == "inconclusive"
    assert out.ci[0] < -margin < out.ci[1]
    assert out.queries_needed is not None and out.queries_needed > 20
    # in mean mode the same data passes: a 2-point mean drop is within 3 points
    assert decide_gate(gate(regression_max=margin), cur, base).status == "pass"


@pytest.mark.parametrize(
    ("on_inconclusive", "severity", "counts_as"),
    [("warn", "error", "warn"), ("pass", "error", "pass"), ("fail", "error", "fail"), ("fail", "warning", "warn")],
)
def test_what_inconclusive_counts_as(on_inconclusive, severity, counts_as):
    g = gate(regression_max=0.03, on_inconclusive=on_inconclusive, severity=severity)
    out = GateOutcome(gate=g, status="inconclusive", value=0.5, n_queries=3, inconclusive="why")
    assert out.counts_as == counts_as
    assert verdict([out]) == ("fail" if counts_as == "fail" else "warn" if counts_as == "warn" else "pass")


def test_min_queries_and_tag_filters():
    tags = {"q1": {"topic": "a"}, "q2": {"topic": "a"}, "q3": {"topic": "b"}, "q4": {"topic": "b"}}
    cur = results("R@5", {"q1": 1.0, "q2": 1.0, "q3": 0.0, "q4": 0.0})
    g = gate(threshold=0.9, tags={"topic": "a"})
    out = decide_gate(g, cur, None, tags=tags)
    assert (out.status, out.value, out.n_queries) == ("pass", 1.0, 2)
    out = decide_gate(gate(threshold=0.9, tags={"topic": ["b"]}), cur, None, tags=tags)
    assert (out.status, out.value) == ("fail", 0.0)
    out = decide_gate(gate(threshold=0.5, tags={"topic": "a"}, min_queries=3), cur, None, tags=tags)
    assert out.status == "inconclusive" and "min_queries" in out.inconclusive
    with pytest.raises(ConfigError, match="no query tags"):
        decide_gate(g, cur, None, tags=None)


def test_verdict():
    g = gate(threshold=0.5)
    outs = [GateOutcome(gate=g, status=s, value=0.5, n_queries=1) for s in ("pass", "warn")]
    assert verdict(outs) == "warn"
    assert verdict([*outs, GateOutcome(gate=g, status="fail", value=0.5, n_queries=1)]) == "fail"
    assert verdict(outs[:1]) == "pass"


# ---------------------------------------------------------------------------------------------
# The comment
# ---------------------------------------------------------------------------------------------
def test_headline_reads_like_the_issue_example():
    g = gate(threshold=0.85, regression_max=0.03, metric=None)
    out = GateOutcome(
        gate=g,
        status="fail",
        value=0.81,
        n_queries=100,
        baseline=0.87,
        current_paired=0.81,
        delta=0.81 - 0.87,
        ci=(-0.081, -0.039),
        n_paired=100,
        failed=["floor", "regression"],
    )
    assert headline(out) == (
        "❌ recall@5 dropped from 87.0% to 81.0% (-6.0 pts, 95% CI -8.1 to -3.9; floor 85%, max drop 3 pts)"
        " — below the floor; dropped more than the allowed 3 pts"
    )


def test_headline_without_baseline_and_for_counts():
    cur = results("R@5", {"q1": 0.9, "q2": 0.8})
    assert headline(decide_gate(gate(threshold=0.8), cur, None)) == "✅ recall@5 is 85.0% (floor 80%)"
    counts = load_config({"gates": [{"name": "relevant_retrieved", "metric": "NumRelRet", "threshold": 3}]}).gates[0]
    out = GateOutcome(gate=counts, status="pass", value=7.0, n_queries=2)
    assert headline(out) == "✅ NumRelRet is 7 (floor 3)"


def test_markdown_escapes_user_text():
    cfg = load_config({"gates": [{"name": "<script>alert(1)</script>", "metric": "R@5", "threshold": 0.1}]})
    from rankgate.gate.runner import run_gate

    report = run_gate(QRELS, BM25, cfg)
    text = markdown(report)
    assert "<script>" not in text and "&lt;script&gt;" in text


# ---------------------------------------------------------------------------------------------
# The CLI, end to end on the demo data
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "gates.yaml"
    path.write_text(ISSUE_CONFIG)
    return path


def test_gate_fails_on_a_regression_and_passes_without_one(capsys, config_file):
    code, out, _ = invoke(capsys, "gate", "--qrels", QRELS, "--run", BM25, "--config", str(config_file),
                       "--baseline-run", DENSE, "--format", "json")  # fmt: skip
    assert code == 1
    data = json.loads(out)
    assert data["verdict"] == "fail"
    by_name = {g["name"]: g for g in data["gates"]}
    recall = by_name["retrieval_recall_at_5"]
    expected_now = rankgate.evaluate(QRELS, BM25, "R@5")["R@5"]
    expected_base = rankgate.evaluate(QRELS, DENSE, "R@5")["R@5"]
    assert recall["value"] == pytest.approx(expected_now)
    assert recall["baseline"] == pytest.approx(expected_base)
    assert recall["delta"] == pytest.approx(expected_now - expected_base)
    assert recall["status"] == "fail" and recall["severity"] == "error"
    assert recall["ci"][0] < recall["delta"] < recall["ci"][1]
    assert by_name["retrieval_mrr"]["status"] == "warn"
    for key in ("name", "metric", "severity", "status", "value", "baseline", "delta", "ci", "threshold",
                "regression_max"):  # fmt: skip
        assert key in recall
    # the same run as its own baseline: no drop; the floors still apply
    code, out, _ = invoke(capsys, "gate", "--qrels", QRELS, "--run", DENSE, "--config", str(config_file),
                       "--baseline-run", DENSE, "--format", "json")  # fmt: skip
    data = json.loads(out)
    assert [g["delta"] for g in data["gates"]] == [0.0, 0.0]
    assert code == (1 if data["verdict"] == "fail" else 0)


def test_warnings_only_exit_zero(capsys, tmp_path):
    path = tmp_path / "gates.yaml"
    path.write_text("gates:\n  - name: ndcg_at_10\n    threshold: 0.99\n    severity: warning\n")
    code, out, _ = invoke(capsys, "gate", "--qrels", QRELS, "--run", DENSE, "--config", str(path))
    assert code == 0
    assert out.startswith("rankgate gate: WARN")


def test_junit_markdown_and_step_summary(capsys, config_file, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    comment, junit = tmp_path / "comment.md", tmp_path / "junit.xml"
    code, _out, _ = invoke(capsys, "gate", "--qrels", QRELS, "--run", BM25, "--config", str(config_file),
                       "--baseline-run", DENSE, "--comment", str(comment), "--junit", str(junit))  # fmt: skip
    assert code == 1
    suite = ET.parse(junit).getroot()
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed == ["retrieval_recall_at_5"]
    text = comment.read_text()
    assert text.startswith("### ❌ rankgate: retrieval quality gate failed")
    assert "recall@5 dropped from" in text and "<!-- rankgate:gate:default -->" in text
    assert summary.read_text().startswith("earlier step\n") and "recall@5 dropped from" in summary.read_text()


def test_per_tag_breakdown_worst_first(capsys, config_file):
    tags = str(demo_dir() / "queries.jsonl")
    _code, out, _ = invoke(capsys, "gate", "--qrels", QRELS, "--run", BM25, "--config", str(config_file),
                       "--baseline-run", DENSE, "--tags", tags, "--format", "json")  # fmt: skip
    rows = json.loads(out)["by_tag"]
    assert {r["tag"] for r in rows} == {"topic", "difficulty"}
    hard = next(r for r in rows if r["value"] == "hard" and r["measure"] == "R@5")
    qids = [q for q, t in rankgate.data.demo_query_tags().items() if t["difficulty"] == "hard"]
    now = rankgate.evaluate(QRELS, BM25, "R@5")
    base = rankgate.evaluate(QRELS, DENSE, "R@5")
    mean = lambda res: np.mean([res.per_query[q]["R@5"] for q in qids])  # noqa: E731
    assert hard["n"] == len(qids)
    assert hard["delta"] == pytest.approx(mean(now) - mean(base))


def test_per_tag_breakdown_without_a_baseline_has_no_delta(capsys, config_file):
    """Floors only: each tag's mean, lowest first, and no made-up "+0.0 pts" delta."""
    tags = str(demo_dir() / "queries.jsonl")
    args = ("gate", "--qrels", QRELS, "--run", BM25, "--config", str(config_file), "--tags", tags)
    _code, out, _ = invoke(capsys, *args, "--format", "json")
    rows = json.loads(out)["by_tag"]
    assert rows and all(r["delta"] is None and r["baseline_mean"] is None for r in rows)
    qids = [q for q, t in rankgate.data.demo_query_tags().items() if t["difficulty"] == "hard"]
    hard = next(r for r in rows if r["value"] == "hard" and r["measure"] == "R@5")
    per_query = rankgate.evaluate(QRELS, BM25, "R@5").per_query
    assert hard["mean"] == pytest.approx(np.mean([per_query[q]["R@5"] for q in qids]))
    _code, md, _ = invoke(capsys, *args, "--format", "markdown")
    table = md[md.index("| tag | value |") :].split("\n\n")[0].splitlines()[2:]
    shown = [line for line in table if line.startswith("| ")]
    assert shown and not any("pts" in line for line in shown)
    firsts = [r for r in rows if not r["small"]]
    worst = min(firsts, key=lambda r: r["mean"])
    assert shown[0].startswith(f"| {worst['tag']} | {worst['value']} | `{worst['measure']}` |")


def test_stored_baseline_needs_a_store(capsys, config_file):
    code, _, err = invoke(capsys, "gate", "--qrels", QRELS, "--run", BM25, "--config", str(config_file),
                       "--baseline", "latest:main")  # fmt: skip
    assert code == 2 and "--store" in err


# ---------------------------------------------------------------------------------------------
# With a results store: record, stored baselines, qrels fingerprints
# ---------------------------------------------------------------------------------------------
def test_store_records_every_run_and_gates_against_the_stored_baseline(capsys, tmp_path, monkeypatch):
    from rankgate.store.base import open_store

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    for var in ("GITHUB_HEAD_REF", "GITHUB_EVENT_PATH", "GITHUB_REF"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")  # as in CI: the branch comes from the environment
    monkeypatch.setenv("GITHUB_SHA", "4f2a9c1")
    monkeypatch.setenv("GITHUB_REF_NAME", "main")
    db = str(tmp_path / "results.db")
    # No baseline yet: floors only; the run is recorded.
    code, out, _ = invoke(capsys, "gate", "--qrels", QRELS, "--run", DENSE, "--config", DEMO_GATES,
                       "--store", db, "--format", "json")  # fmt: skip
    first = json.loads(out)
    assert code == 0 and all(g["baseline"] is None for g in first["gates"])
    with open_store(db) as store:
        [stored] = store.list()
        store.set_baseline(stored.id)
    # The candidate is gated against it, and recorded too.
    code, out, _ = invoke(capsys, "gate", "--qrels", QRELS, "--run", BM25, "--config", DEMO_GATES,
                       "--store", db, "--format", "json")  # fmt: skip
    report = json.loads(out)
    assert code == 1
    expected = rankgate.evaluate(QRELS, DENSE, [g["metric"] for g in report["gates"]])
    for g in report["gates"]:
        assert g["baseline"] == pytest.approx(expected.aggregate[g["metric"]])
    with open_store(db) as store:
        assert len(store.list()) == 2
        assert store.latest(branch="main").name == "bm25"
    # latest:main now names the bm25 result: gating bm25 against itself passes the drop test.
    code, out, _ = invoke(capsys, "gate", "--qrels", QRELS, "--run", BM25, "--config", DEMO_GATES,
                       "--store", db, "--baseline", "latest:main", "--no-record", "--format", "json")  # fmt: skip
    assert all(g["delta"] == pytest.approx(0.0) for g in json.loads(out)["gates"])
    with open_store(db) as store:
        assert len(store.list()) == 2  # --no-record


def test_baseline_on_other_qrels_is_refused_unless_allowed(capsys, tmp_path):
    from rankgate.store.base import open_store

    db = str(tmp_path / "results.db")
    code, *_ = invoke(capsys, "gate", "--qrels", QRELS, "--run", DENSE, "--config", DEMO_GATES, "--store", db)
    with open_store(db) as store:
        store.set_baseline(store.list()[0].id)
    changed = tmp_path / "qrels.txt"
    lines = Path(QRELS).read_text().splitlines()
    changed.write_text("\n".join(lines[:-1]) + "\n")  # one judgment fewer: another fingerprint
    args = ["gate", "--qrels", str(changed), "--run", DENSE, "--config", DEMO_GATES, "--store", db]
    code, _, err = invoke(capsys, *args)
    assert code == 2 and "qrels" in err and "--allow-qrels-change" in err
    code, out, err = invoke(capsys, *args, "--allow-qrels-change", "--format", "json")
    assert code == 0
    assert any("other qrels" in w for w in json.loads(out)["notes"])
