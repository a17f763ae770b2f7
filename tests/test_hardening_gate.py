"""Issue 23 (items 2-4): a gate config cannot be written so that the gate never fails, a stored
baseline evaluated with other settings is refused, and a small YAML file cannot exhaust memory.

Each case runs through the CLI and asserts the exit code, the message (file:line or key path)
and that nothing else changed (no store written, nothing on stdout).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from rankgate.data import demo_qrels_path, demo_run_path
from rankgate.errors import ConfigError
from rankgate.gate.config import load_config
from tests.cli_support import invoke

pytestmark = pytest.mark.extra("gate")

QRELS = str(demo_qrels_path())
DENSE, BM25 = str(demo_run_path("dense")), str(demo_run_path("bm25"))


def _gate_cli(capsys, tmp_path: Path, text: str, *extra: str) -> tuple[int, str, str, Path]:
    path = tmp_path / "gates.yaml"
    path.write_text(text)
    db = tmp_path / "results.db"
    code, out, err = invoke(
        capsys, "gate", "--qrels", QRELS, "--run", DENSE, "--config", str(path), "--store", str(db), *extra
    )
    return code, out, err, db


# A config that could never fail before: each is refused (exit 2), naming the key path or line.
CANNOT_FAIL = [
    ("gates:\n  - name: mrr\n    threshold: .nan\n", ["gates[0].threshold", "finite"]),
    ("gates:\n  - name: mrr\n    threshold: .inf\n", ["gates[0].threshold", "finite"]),
    ("gates:\n  - name: mrr\n    threshold: -.inf\n", ["gates[0].threshold", "finite"]),
    ("gates:\n  - name: mrr\n    threshold: 'nan'\n", ["gates[0].threshold", "valid number", "'nan'"]),
    ("gates:\n  - name: mrr\n    threshold: '0.5'\n", ["gates[0].threshold", "valid number"]),
    ("gates:\n  - name: mrr\n    threshold: no\n", ["gates[0].threshold", "valid number", "False"]),
    ("gates:\n  - name: mrr\n    regression_max: .nan\n", ["gates[0].regression_max", "finite"]),
    ("gates:\n  - name: mrr\n    threshold: 0.5\n    min_queries: true\n", ["gates[0].min_queries", "integer"]),
    ("gates:\n  - name: mrr\n    threshold: 0.5\n    min_queries: 2.0\n", ["gates[0].min_queries", "integer"]),
    ("defaults:\n  confidence: .nan\ngates:\n  - name: mrr\n    threshold: 0.5\n", ["defaults.confidence"]),
    ("seed: 1.5\ngates:\n  - name: mrr\n    threshold: 0.5\n", ["seed", "integer"]),
    ("seed: -1\ngates:\n  - name: mrr\n    threshold: 0.5\n", ["seed", "greater than or equal"]),
    ("n_resamples: 10000000000\ngates:\n  - name: mrr\n    threshold: 0.5\n", ["n_resamples", "less than"]),
    ("settings:\n  rel: true\ngates:\n  - name: mrr\n    threshold: 0.5\n", ["settings.rel", "integer"]),
    ("settings:\n  judged_only: 1\ngates:\n  - name: mrr\n    threshold: 0.5\n", ["settings.judged_only", "boolean"]),
    (
        "gates:\n  - name: mrr\n    threshold: 0.9\n    threshold: .nan\n",
        ["gates.yaml:4", "duplicate key 'threshold'", "first at line 3"],
    ),
    (
        "gates:\n  - name: mrr\n    threshold: 0.99\ngates:\n  - name: ndcg\n    threshold: 0.0\n",
        ["gates.yaml:4", "duplicate key 'gates'", "first at line 1"],
    ),
    ("defaults: {mode: mean, mode: noninferiority}\ngates: []\n", ["gates.yaml:1", "duplicate key 'mode'"]),
]


@pytest.mark.parametrize(("text", "expected"), CANNOT_FAIL, ids=[c[0] for c in CANNOT_FAIL])
def test_a_config_that_could_not_fail_is_refused(capsys, tmp_path, text, expected):
    code, out, err, db = _gate_cli(capsys, tmp_path, text)
    assert code == 2 and out == ""
    assert err.startswith("rankgate: error: ") and err.count("\n") == 1 and "Traceback" not in err
    for fragment in expected:
        assert fragment in err, err
    assert not db.exists()  # refused before anything was evaluated or recorded


@pytest.mark.parametrize("value", ["0.5", "1", "0"])
def test_plain_numbers_still_read(tmp_path, value):
    cfg = load_config({"gates": [{"name": "mrr", "threshold": float(value) if "." in value else int(value)}]})
    assert cfg.gates[0].threshold == float(value)


NO_QUERY = "tags_file: {tags}\ngates:\n  - name: mrr\n    threshold: 0.0\n    tags: {{topic: no-such-topic}}\n"


@pytest.mark.parametrize(
    ("setting", "exit_code", "counts_as"),
    [("", 1, "fail"), ("    on_no_queries: warn\n", 0, "warn"), ("    on_no_queries: pass\n", 0, "pass")],
)
def test_a_gate_matching_no_query_fails_unless_the_config_says_otherwise(
    capsys, tmp_path, setting, exit_code, counts_as
):
    tags = demo_qrels_path().parent / "queries.jsonl"
    code, out, err, _ = _gate_cli(capsys, tmp_path, NO_QUERY.format(tags=tags) + setting, "--format", "json")
    [g] = json.loads(out)["gates"]
    assert code == exit_code, err
    assert (g["status"], g["counts_as"], g["n_queries"], g["value"]) == ("inconclusive", counts_as, 0, None)
    assert "no query matches this gate" in g["inconclusive"]
    code, out, _, _ = _gate_cli(capsys, tmp_path, NO_QUERY.format(tags=tags) + setting)
    assert "no query matches this gate" in out


def test_a_warning_gate_matching_no_query_only_warns(capsys, tmp_path):
    tags = demo_qrels_path().parent / "queries.jsonl"
    text = NO_QUERY.format(tags=tags) + "    severity: warning\n"
    code, out, _, _ = _gate_cli(capsys, tmp_path, text, "--format", "json")
    assert code == 0 and json.loads(out)["gates"][0]["counts_as"] == "warn"


def test_on_no_queries_is_checked(tmp_path):
    with pytest.raises(ConfigError, match=r"defaults\.on_no_queries"):
        load_config({"defaults": {"on_no_queries": "maybe"}, "gates": [{"name": "mrr", "threshold": 0.5}]})


# ---------------------------------------------------------------------------------------------
# A stored baseline evaluated with other settings (issue 23 item 3)
# ---------------------------------------------------------------------------------------------
SIMPLE = "gates:\n  - name: retrieval_recall_at_5\n    threshold: 0.1\n    regression_max: 0.03\n"


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ("settings:\n  judged_only: true\n", "judged_only: False in the baseline, True here"),
        ("settings:\n  queries: intersection\n", "queries: 'qrels' in the baseline, 'intersection' here"),
        ("settings:\n  empty: skip\n", "empty: 'zero' in the baseline, 'skip' here"),
    ],
)
def test_a_baseline_evaluated_with_other_settings_is_refused_unless_allowed(capsys, tmp_path, settings, named):
    # (rel needs no case here: it is part of the measure's name, R(rel=2)@5, which the baseline lacks)
    from rankgate.store.base import open_store

    code, _, err, db = _gate_cli(capsys, tmp_path, SIMPLE)
    assert code == 0, err
    with open_store(str(db)) as store:
        store.set_baseline(store.list()[0].id)
    code, out, err, _ = _gate_cli(capsys, tmp_path, settings + SIMPLE)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "other settings" in err and named in err and "--allow-settings-change" in err
    with open_store(str(db)) as store:
        assert len(store.list()) == 1  # refused before recording
    code, out, err, _ = _gate_cli(capsys, tmp_path, settings + SIMPLE, "--allow-settings-change", "--format", "json")
    assert code in (0, 1), err
    notes = json.loads(out)["notes"]
    assert any("other settings" in n and named in n and "compared anyway" in n for n in notes), notes


def test_a_baseline_with_the_same_settings_has_no_settings_note(capsys, tmp_path):
    from rankgate.store.base import open_store

    text = "settings:\n  judged_only: true\n" + SIMPLE
    _gate_cli(capsys, tmp_path, text)
    with open_store(str(tmp_path / "results.db")) as store:
        store.set_baseline(store.list()[0].id)
    code, out, err, _ = _gate_cli(capsys, tmp_path, text, "--format", "json")
    assert code == 0, err
    assert not any("settings" in n for n in json.loads(out)["notes"])


# ---------------------------------------------------------------------------------------------
# YAML that expands without bound (issue 23 item 4)
# ---------------------------------------------------------------------------------------------
def alias_bomb(levels: int, width: int = 9) -> str:
    """``levels`` nested aliases, each ``width`` times the one before: width**levels values."""
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("levels", [6, 10])
@pytest.mark.parametrize("where", ["threshold", "name", "tags"])
def test_an_alias_bomb_in_a_gate_config_is_refused_fast(capsys, tmp_path, levels, where):
    bomb = alias_bomb(levels)
    text = bomb + f"gates:\n  - name: mrr\n    threshold: 0.5\n    {where}: *a{levels}\n"
    text = text.replace("    threshold: 0.5\n    threshold:", "    threshold:")
    assert len(text) < 1_000
    start = time.monotonic()
    code, out, err, db = _gate_cli(capsys, tmp_path, text)
    assert time.monotonic() - start < 10
    assert code == 2 and out == "" and err.count("\n") == 1 and len(err) < 400
    assert "expands to more than 100,000 values" in err
    assert re.search(r"gates\.yaml:\d+: ", err)  # the line where the expansion passed the bound
    assert not db.exists()


def test_aliases_within_the_bound_still_read(tmp_path):
    path = tmp_path / "gates.yaml"
    path.write_text(
        "x-base: &base {threshold: 0.5, severity: warning}\n"
        "gates:\n  - {<<: *base, name: mrr}\n  - {<<: *base, name: ndcg_at_10, severity: error}\n"
    )
    with pytest.raises(ConfigError, match="x-base"):  # unknown top-level key: aliases are read, keys still checked
        load_config(path)
    path.write_text(
        "defaults: &d {severity: warning}\n"
        "gates:\n  - &g {name: mrr, threshold: 0.5}\n  - {<<: *g, name: ndcg_at_10, threshold: 0.25}\n"
    )
    cfg = load_config(path)  # a key after a merge (<<) overrides the merged one: not a duplicate
    assert [(g.name, g.threshold, g.severity) for g in cfg.gates] == [
        ("mrr", 0.5, "warning"),
        ("ndcg_at_10", 0.25, "warning"),
    ]


def test_a_self_referring_alias_is_refused(tmp_path):
    path = tmp_path / "gates.yaml"
    path.write_text("gates: &g\n  - name: mrr\n    threshold: 0.5\n    tags: {t: *g}\n")
    with pytest.raises(ConfigError, match=r"gates\.yaml:\d+: an alias refers to a value that contains it"):
        load_config(path)


BIG = "x" * 100_000
LONG_KEY = "k" * 1_000  # YAML's longest plain key is 1,024 characters


@pytest.mark.parametrize(
    ("text", "key_path"),
    [
        (f"gates:\n  - name: mrr\n    threshold: '{BIG}'\n", "gates[0].threshold"),
        (f"gates:\n  - name: mrr\n    threshold: [{', '.join(['1'] * 20_000)}]\n", "gates[0].threshold"),
        (f"gates:\n  - name: mrr\n    threshold: 0.5\n    severity: {BIG}\n", "gates[0].severity"),
        (f"gates:\n  - name: {BIG}\n    threshold: 0.5\n", "gates[0].name"),
        (f"gates:\n  - name: mrr\n    threshold: 0.5\n    {LONG_KEY}: 1\n", "gates[0]"),
        ("gates:\n  - name: mrr\n    threshold: " + "[" * 3_000 + "]" * 3_000 + "\n", ""),
        ("seed: " + "9" * 5_000 + "\ngates:\n  - name: mrr\n    threshold: 0.5\n", ""),
    ],
    ids=["long-string", "long-list", "long-choice", "long-name", "long-key", "deep", "huge-int"],
)
def test_a_message_never_echoes_a_huge_value(capsys, tmp_path, text, key_path):
    code, out, err, _ = _gate_cli(capsys, tmp_path, text)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert len(err) < 600, err[:1000]
    assert key_path in err


TARGETS_BOMB = alias_bomb(10) + "targets:\n  - metric: MRR\n    min: *a10\n"


def test_an_alias_bomb_in_a_targets_file_is_refused_fast(capsys, tmp_path):
    from rankgate.report.guidance import load_targets

    path = tmp_path / "targets.yaml"
    path.write_text(TARGETS_BOMB)
    start = time.monotonic()
    with pytest.raises(ConfigError, match=r"targets\.yaml:\d+: the document expands to more than 100,000 values"):
        load_targets(path)
    assert time.monotonic() - start < 10


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("targets:\n  - {metric: MRR, min: .nan}\n", ["targets[0].min", "finite", "nan"]),
        ("targets: {MRR: .inf}\n", ["targets[0].min", "finite"]),
        ("targets:\n  - {metric: MRR, min: 0.5}\ntargets: {MRR: 0.1}\n", ["targets.yaml:3", "duplicate key 'targets'"]),
        (f"targets:\n  - {{metric: MRR, min: '{BIG}'}}\n", ["targets[0].min", "..."]),
        (f"targets:\n  - {{metric: MRR, min: 0.5, {LONG_KEY}: 1}}\n", ["unknown key", "..."]),
        ("1: x\ntargets: {MRR: 0.5}\nz: 1\n", ["unknown key 1"]),
    ],
    ids=["nan", "inf", "duplicate", "long-value", "long-key", "mixed-keys"],
)
def test_a_targets_file_that_cannot_hold_is_refused(tmp_path, text, expected):
    from rankgate.report.guidance import load_targets

    path = tmp_path / "targets.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_targets(path)
    message = str(e.value)
    assert len(message) < 600
    for fragment in expected:
        assert fragment in message, message
