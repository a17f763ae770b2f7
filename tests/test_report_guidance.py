"""Guidance: targets (defaults and YAML), matching measures to targets, statuses and suggestions."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankgate.errors import ConfigError
from rankgate.report.guidance import DEFAULT_TARGETS, Target, assess, load_targets, match_measure


def test_defaults_are_the_issue_s_targets():
    assert [(t.metric, t.minimum, t.label) for t in DEFAULT_TARGETS] == [
        ("R@10", 0.85, "recall@10"),
        ("P@10", 0.5, "P@10"),
        ("nDCG@10", 0.8, "nDCG@10"),
        ("RR", 0.7, "MRR"),
    ]


@pytest.mark.parametrize(
    ("target", "measures", "expected"),
    [
        ("recall@10", ["R@10", "R@100"], "R@10"),
        ("MRR", ["nDCG@10", "RR@10", "RR@100"], "RR@100"),  # no cutoff: the deepest cutoff of the family
        ("MRR", ["RR", "RR@10"], "RR"),  # an exact match wins
        ("P@10", ["P@5", "P@20"], None),  # never another cutoff
        ("ndcg_cut.10", ["nDCG@10"], "nDCG@10"),
        ("nDCG@10", ["nDCG(gain=exp)@10"], None),  # other parameters
    ],
)
def test_match_measure(target, measures, expected):
    assert match_measure(target, measures) == expected


def test_statuses_against_the_defaults():
    systems = {
        "a": {"R@10": 0.9, "P@10": 0.4, "nDCG@10": 0.8, "RR@10": 0.69},
        "b": {"R@10": None, "nDCG@10": 0.81},
    }
    found = {a.target.metric: a for a in assess(DEFAULT_TARGETS, systems)}
    assert [found[m].status("a") for m in ("R@10", "P@10", "nDCG@10", "RR")] == ["met", "below", "met", "below"]
    assert [found[m].status("b") for m in ("R@10", "P@10", "nDCG@10", "RR")] == [
        "not measured",
        "not measured",
        "met",
        "not measured",
    ]
    assert found["RR"].values["a"] == ("RR@10", 0.69)
    assert found["P@10"].below == ["a"]
    assert found["R@10"].suggestions == []  # met by every system that has it: nothing to suggest


def test_suggestions_are_specific_to_the_numbers():
    systems = {"a": {"R@10": 0.6, "R@100": 0.93, "Judged@10": 0.55}}
    tags = [
        {"tag": "topic", "value": "coffee", "n": 13, "measure": "R@10", "baseline_mean": 0.8, "delta": -0.3},
        {"tag": "topic", "value": "tea", "n": 12, "measure": "R@10", "baseline_mean": 0.8, "delta": 0.1},
        {
            "tag": "topic",
            "value": "rare",
            "n": 2,
            "measure": "R@10",
            "baseline_mean": 0.8,
            "delta": -0.9,
            "small": True,
        },
    ]
    (a,) = assess([Target("R@10", 0.85, "recall@10", ("Ask the search team first.",))], systems, tag_rows=tags,
                  ann_recall=0.9)  # fmt: skip
    text = "\n".join(a.suggestions)
    assert a.suggestions[0] == "Ask the search team first."  # the user's own advice leads
    assert "Judged@10 is 0.55" in text  # label coverage
    assert "R@100 is 0.930" in text  # found deeper: re-rank
    assert "topic=coffee (13 queries, R@10 -0.300)" in text  # the largest drop of a group that is not small
    assert "rare" not in text
    assert "90.0% of the exact nearest neighbors" in text  # ANN recall below 0.95
    assert "Hybrid retrieval" in text
    assert "cross-encoder" in text


def test_ranking_suggestions_for_precision_and_rr():
    (p, rr) = assess([Target("P@10", 0.5, "P@10"), Target("RR", 0.7, "MRR")], {"x": {"P@10": 0.3, "RR": 0.6}})
    assert any("capped by the number of relevant documents" in s for s in p.suggestions)
    assert any("first relevant result" in s for s in rr.suggestions)
    assert not any("deeper" in s or "found, but below the cutoff" in s for s in p.suggestions)


@pytest.mark.extra("gate")
def test_load_targets_from_yaml_list_and_mapping(tmp_path: Path):
    path = tmp_path / "targets.yaml"
    path.write_text(
        "targets:\n  - metric: recall@20\n    min: 0.9\n    advice: Index the FAQ.\n  - {metric: MRR, min: 0.75}\n"
    )
    assert load_targets(path) == [
        Target("R@20", 0.9, "recall@20", ("Index the FAQ.",)),
        Target("RR", 0.75, "MRR"),
    ]
    assert load_targets({"targets": {"P@5": 0.4, "ndcg_cut.10": 0.7}}) == [
        Target("P@5", 0.4, "P@5"),
        Target("nDCG@10", 0.7, "ndcg_cut.10"),
    ]


@pytest.mark.parametrize(
    ("text", "key_path"),
    [
        ("targets:\n  - metric: recall@10\n    min: high\n", "targets[0].min"),
        ("targets:\n  - metric: nonsense@10\n    min: 0.5\n", "targets[0].metric"),
        ("targets:\n  - metric: R@10\n    min: 0.5\n    floor: 1\n", "targets[0].floor"),
        ("targets:\n  - {metric: R@10, min: 0.5}\n  - {metric: recall@10, min: 0.6}\n", "targets[1].metric"),
        ("targets:\n  - {metric: R@10, min: 0.5, advice: [1]}\n", "targets[0].advice"),
        ("targets: []\n", "targets"),
        ("targets: {R@10: 0.5}\nextra: 1\n", "extra"),
    ],
)
@pytest.mark.extra("gate")
def test_bad_targets_name_the_key_path(tmp_path: Path, text, key_path):
    path = tmp_path / "targets.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_targets(path)
    assert e.value.key_path == key_path
    assert str(path) in str(e.value)


@pytest.mark.extra("gate")
def test_bad_yaml_names_the_line(tmp_path: Path):
    path = tmp_path / "targets.yaml"
    path.write_text("targets:\n  - metric: R@10\n   min: [\n")
    with pytest.raises(ConfigError, match=r"targets\.yaml: line \d+: invalid YAML"):
        load_targets(path)
    path.write_text("- R@10\n")
    with pytest.raises(ConfigError, match="'targets' list"):
        load_targets(path)
