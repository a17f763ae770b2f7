"""Findings of a new user's trial of `rankgate gate`: flags against the config's settings, the
latency gate's wording, one CI per headline, the verdict line, and typo'd top-level keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankgate.data import demo_qrels_path, demo_run_path
from rankgate.errors import ConfigError
from rankgate.gate.config import load_config
from tests.cli_support import invoke

QRELS, DENSE = str(demo_qrels_path()), str(demo_run_path("dense"))
CHUNKED = "settings: {chunk_sep: '#'}\ngates:\n  - {name: recall_at_5, threshold: 0.5}\n"


def _gate(capsys: pytest.CaptureFixture[str], config: Path, *flags: str) -> tuple[int, str, str]:
    return invoke(capsys, "gate", "--qrels", QRELS, "--run", DENSE, "--config", str(config), "--no-record", *flags)


def test_a_flag_may_not_change_a_setting_the_config_fixes(capsys, tmp_path) -> None:
    config = tmp_path / "cg.yaml"
    config.write_text(CHUNKED)
    assert _gate(capsys, config)[0] == 0
    code, _, err = _gate(capsys, config, "--chunk-sep", "|")
    assert code == 2, err
    assert "settings.chunk_sep" in err and "'|'" in err and "'#'" in err and "cg.yaml" in err
    assert _gate(capsys, config, "--chunk-sep", "#")[0] == 0  # the same value: no conflict


def test_a_flag_fills_in_a_setting_the_config_leaves_unset(capsys, tmp_path) -> None:
    config = tmp_path / "g.yaml"
    config.write_text("gates:\n  - {name: recall_at_5, threshold: 0.5}\n")
    code, out, err = _gate(capsys, config, "--chunk-sep", "|", "--format", "json")
    assert code == 0, err
    assert '"chunk_sep": "|"' in out


def test_a_chunk_map_flag_naming_the_configs_file_agrees(capsys, tmp_path, monkeypatch) -> None:
    (tmp_path / "map.jsonl").write_text("")
    config = tmp_path / "g.yaml"
    config.write_text("settings: {chunk_map: map.jsonl}\ngates:\n  - {name: recall_at_5, threshold: 0.5}\n")
    monkeypatch.chdir(tmp_path.parent)
    cfg = load_config(config)
    from rankgate.gate.config_keys import with_flags

    assert with_flags(cfg, {"chunk_map": str(Path(tmp_path.name) / "map.jsonl")}).settings == cfg.settings
    with pytest.raises(ConfigError, match=r"settings\.chunk_map"):
        with_flags(cfg, {"chunk_map": "other.jsonl"})


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        ("gate:\n  - {name: mrr, threshold: 0.5}\n", "gate", "did you mean 'gates'?"),
        ("gates:\n  - {name: mrr, treshold: 0.5}\n", "gates[0].treshold", "did you mean 'threshold'?"),
        ("settings: {chunk_seperator: '#'}\ngates:\n  - {name: mrr, threshold: 0.5}\n", "settings.chunk_seperator",
         "did you mean 'chunk_sep'?"),
        ("gates:\n  - {name: mrr, threshold: 0.5, zzzz: 1}\n", "gates[0].zzzz", "unknown key (check its spelling)"),
    ],
)  # fmt: skip
def test_an_unknown_key_names_the_closest_known_one(text: str, key: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(__import__("yaml").safe_load(text))
    assert e.value.key_path == key and message in str(e.value)


GOLDEN = Path(__file__).parent / "golden" / "gate"
P95 = "gates:\n  - {name: p95_growth, metric: latency_p95_ms, index: hnsw, regression_max_relative: 0.2}\n"


def _bench(capsys: pytest.CaptureFixture[str], tmp_path: Path, config: str, *flags: str) -> str:
    path = tmp_path / "g.yaml"
    path.write_text(config)
    return _gate(capsys, path, "--bench", str(GOLDEN / "bench-new.json"), *flags)[1]


@pytest.mark.extra("gate")
def test_a_bench_baseline_is_a_baseline_and_growth_limits_read_as_growth(capsys, tmp_path) -> None:
    out = _bench(capsys, tmp_path, P95, "--baseline-bench", str(GOLDEN / "bench-main.json"))
    assert "no baseline" not in out and "max drop" not in out
    assert "limit" in out.splitlines()[3] and "20% growth" in out  # the table's column and cell
    out = _bench(capsys, tmp_path, P95)  # no baseline figures: the growth limit went unchecked
    assert "note: no baseline figures: the limits of p95_growth were not checked; pass --baseline-bench" in out
    out = _bench(capsys, tmp_path, P95 + "  - {name: r5, metric: recall@5, threshold: 0.5, regression_max: 0.1}\n")
    assert "note: no baseline: the drop limits of r5 were not checked; pass --baseline-run or --baseline" in out
    floors = "gates:\n  - {name: r5, metric: recall@5, threshold: 0.5}\n"
    assert "no baseline" not in _gate(capsys, _write(tmp_path, floors))[1]  # nothing needed one


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "floors.yaml"
    path.write_text(text)
    return path


@pytest.mark.extra("gate")
@pytest.mark.parametrize(
    ("rules", "shown", "hidden"),
    [
        # a relative bar decided on the CI: the relative CI only (the delta's CI is in the JSON)
        ("min_relative_improvement: 0.03, decide_on: ci", "+45.6% (95% CI +31.4% to +60.3%);", "18.0 to 34.0;"),
        # an absolute bar: the delta's CI
        ("min_improvement: 0.03, decide_on: ci", "(+25.9 pts, 95% CI 18.0 to 34.0;", "+45.6%"),
        # both: each CI beside its own number
        ("min_improvement: 0.03, min_relative_improvement: 0.03, decide_on: ci",
         "(+25.9 pts (95% CI 18.0 to 34.0), +45.6% (95% CI +31.4% to +60.3%);", "), 95% CI"),
    ],
)  # fmt: skip
def test_a_headline_shows_the_ci_its_rule_decides_on(capsys, tmp_path, rules: str, shown: str, hidden: str) -> None:
    config = _write(tmp_path, f"gates:\n  - {{name: g, metric: nDCG@10, {rules}}}\n")
    args = ("--baseline-run", str(demo_run_path("bm25")))
    out = invoke(capsys, "gate", "--qrels", QRELS, "--run", DENSE, "--config", str(config), "--no-record", *args)[1]
    headline = out.splitlines()[1]
    assert shown in headline and hidden not in headline


@pytest.mark.extra("gate")
def test_the_verdict_line_says_each_word_once(capsys, tmp_path) -> None:
    config = _write(tmp_path, "gates:\n  - {name: r5, metric: recall@5, threshold: 0.99}\n")
    code, out, _ = _gate(capsys, config)
    assert code == 1 and out.splitlines()[0] == "rankgate gate: FAIL"
    config.write_text("gates:\n  - {name: r5, metric: recall@5, threshold: 0.99, severity: warning}\n")
    assert _gate(capsys, config)[1].splitlines()[0] == "rankgate gate: WARN (passed with warnings)"
