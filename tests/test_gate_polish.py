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
