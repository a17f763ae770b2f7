"""Findings of a new user's trial of `rankgate gate`: --post-comment on a push, percent and points
slips in the config, the JSON contract in the docs, and files given as arguments."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from rankgate.data import demo_dir, demo_qrels_path, demo_run_path
from rankgate.errors import ConfigError
from rankgate.gate.config import load_config
from rankgate.gate.github import NoPullRequest, comment_target
from rankgate.gate.runner import run_gate
from tests.cli_support import invoke
from tests.github_support import FakeGitHub

pytestmark = pytest.mark.extra("gate")

ROOT = Path(__file__).parents[1]
QRELS, DENSE, DENSE_V2 = str(demo_qrels_path()), str(demo_run_path("dense")), str(demo_run_path("dense_v2"))
DEMO_GATES = str(demo_dir() / "gates.yaml")  # the demo candidate dense_v2 fails it (exit 1)
GITHUB_VARIABLES = ("GITHUB_", "RANKGATE_PULL_REQUEST", "RANKGATE_STORE")


@pytest.fixture(autouse=True)
def _no_ci_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sets the GitHub Actions variables it means (the suite may itself run in Actions)."""
    for name in list(os.environ):
        if name.startswith(GITHUB_VARIABLES):
            monkeypatch.delenv(name)


@pytest.fixture
def api() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


def _gate(capsys: pytest.CaptureFixture[str], *flags: str, run: str = DENSE_V2) -> tuple[int, str, str]:
    return invoke(capsys, "gate", "--qrels", QRELS, "--run", run, "--baseline-run", DENSE, *flags)


def _recorded(db: Path) -> int:
    """How many results the store at ``db`` holds (0 when it was never created)."""
    if not db.exists():
        return 0
    from rankgate.store.base import open_store

    store = open_store(str(db))
    try:
        return len(store.list())
    finally:
        store.close()


# -- 1. --post-comment outside a pull request ---------------------------------------------
@pytest.mark.parametrize("actions", [True, False])
def test_post_comment_on_a_push_skips_the_comment_and_keeps_the_verdicts_exit_code(
    api: FakeGitHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, actions: bool
) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"ref": "refs/heads/main", "after": "4f2a9c1"}))  # a push payload: no PR
    env = api.env(GITHUB_EVENT_NAME="push", GITHUB_REF="refs/heads/main", GITHUB_EVENT_PATH=str(event))
    if not actions:
        del env["GITHUB_ACTIONS"]
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, out, err = _gate(capsys, "--config", DEMO_GATES, "--post-comment")
    assert code == 1, err  # the demo candidate's verdict, not a usage error
    assert out.startswith("rankgate gate: FAIL")
    notice = "not a pull request (event 'push'): no PR comment posted"
    if actions:
        assert f"::notice title=rankgate::{notice}\n" in err
    else:
        assert f"rankgate: note: {notice}" in err and "::notice" not in err
    assert "error" not in err
    assert api.requests == [] and api.comments[7] == []

    passing = tmp_path / "pass.yaml"
    passing.write_text("gates:\n  - {name: recall_at_5, threshold: 0.5}\n")
    code, _, err = _gate(capsys, "--config", str(passing), "--post-comment", run=DENSE)
    assert code == 0 and notice in err


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"GITHUB_REPOSITORY": "acme/search", "GITHUB_EVENT_NAME": "push"}, "--post-comment needs GITHUB_TOKEN"),
        ({"GITHUB_TOKEN": "t0ken", "GITHUB_EVENT_NAME": "push"}, "--post-comment needs GITHUB_REPOSITORY"),
        (
            {"GITHUB_TOKEN": "t0ken", "GITHUB_REPOSITORY": "acme/search", "GITHUB_EVENT_NAME": "pull_request"},
            "--post-comment needs a pull request, and this run has none (event 'pull_request'",
        ),
        (
            {"GITHUB_TOKEN": "t0ken", "GITHUB_REPOSITORY": "acme/search", "RANKGATE_PULL_REQUEST": "seven"},
            "RANKGATE_PULL_REQUEST must be a pull request number",
        ),
    ],
)
def test_post_comment_usage_errors_stop_before_anything_is_recorded(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    env: dict[str, str],
    message: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    db = tmp_path / "results.db"
    code, out, err = _gate(capsys, "--config", DEMO_GATES, "--store", str(db), "--post-comment")
    assert code == 2, err
    assert _recorded(db) == 0  # checked before recording: a retried job cannot record the run twice
    assert err.startswith("rankgate: error: ") and message in err
    assert out == ""  # nor evaluated: no verdict printed


def test_a_bad_comment_key_stops_before_anything_is_recorded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "results.db"
    code, out, err = _gate(capsys, "--config", DEMO_GATES, "--store", str(db), "--comment-key", "a--b")
    assert code == 2 and "comment_key: The comment key must be" in err and out == ""
    assert _recorded(db) == 0


def test_comment_target() -> None:
    base = {"GITHUB_TOKEN": "t0ken", "GITHUB_REPOSITORY": "acme/search"}
    for event in ("push", "schedule", "workflow_dispatch"):
        assert comment_target({**base, "GITHUB_EVENT_NAME": event, "GITHUB_REF": "refs/heads/main"}) is None
    assert comment_target(base) is None  # outside Actions, with no number given
    found = comment_target({**base, "GITHUB_REF": "refs/pull/9/merge"})
    assert found is not None and (found.repository, found.number) == ("acme/search", 9)
    found = comment_target({**base, "GITHUB_EVENT_NAME": "push", "RANKGATE_PULL_REQUEST": "4"})
    assert found is not None and found.number == 4  # an explicit number posts from any event
    with pytest.raises(NoPullRequest):  # a pull request's event without its number is broken, not "no PR"
        comment_target({**base, "GITHUB_EVENT_NAME": "pull_request_target"})
    with pytest.raises(ConfigError, match="needs GITHUB_TOKEN"):  # a push still needs what a PR would
        comment_target({"GITHUB_REPOSITORY": "acme/search", "GITHUB_EVENT_NAME": "push"})


def test_the_docs_workflow_without_the_action_says_what_a_push_does() -> None:
    text = " ".join((ROOT / "docs" / "ci.md").read_text(encoding="utf-8").split())
    assert "::notice title=rankgate::not a pull request (event 'push'): no PR comment posted" in text
    assert "checked **before** anything is evaluated or recorded" in text


# -- 2. a percentage or points written for a 0-1 metric -----------------------------------
@pytest.mark.parametrize(
    ("gate", "key", "message"),
    [
        ("{name: recall_at_5, regression_max: 3}", "gates[0].regression_max",
         "R@5 takes values from 0 to 1, so it cannot drop by more than 1: an allowed drop of 3 can never fail; "
         "did you mean 0.03 (3 points)?"),
        ("{name: mrr, threshold: 85}", "gates[0].threshold",
         "RR takes values from 0 to 1, so a floor of 85 can never be met; did you mean 0.85 (85%)?"),
        ("{name: ndcg_at_10, regression_max: 1}", "gates[0].regression_max", "did you mean 0.01 (1 point)?"),
        ("{name: ndcg_at_10, threshold: 0.8, regression_max: 1.5}", "gates[0].regression_max",
         "an allowed drop of 1.5 can never fail; did you mean 0.015 (1.5 points)?"),
        ("{name: ndcg_at_10, min_improvement: 2}", "gates[0].min_improvement",
         "cannot gain more than 1: a required gain of 2 can never be met; did you mean 0.02 (2 points)?"),
        ("{name: ndcg_at_10, threshold: -0.1}", "gates[0].threshold",
         "nDCG@10 takes values from 0 to 1, so a floor of -0.1 can never fail"),
        ("{name: ndcg_at_10, threshold: 250}", "gates[0].threshold", "a floor of 250 can never be met"),
        ("{name: ndcg_at_10, regression_max_relative: 5}", "gates[0].regression_max_relative",
         "nDCG@10 is never negative, so it cannot fall by more than 100% of the baseline: an allowed relative "
         "drop of 5 can never fail; did you mean 0.05 (5%)?"),
        ("{name: u, metric: Unjudged@10, max: 5}", "gates[0].max",
         "Unjudged@10 takes values from 0 to 1, so a ceiling of 5 can never fail; did you mean 0.05 (5%)?"),
        ("{name: u, metric: Unjudged@10, max: -0.2}", "gates[0].max", "a ceiling of -0.2 can never be met"),
        ("{name: u, metric: Unjudged@10, min_relative_improvement: 10}", "gates[0].min_relative_improvement",
         "a required relative improvement of 10 can never be met; did you mean 0.1 (10%)?"),
        ("{name: n, metric: neighbor_recall@10, threshold: 95}", "gates[0].threshold",
         "neighbor_recall@10 takes values from 0 to 1, so a floor of 95 can never be met; did you mean 0.95 (95%)?"),
        ("{name: l, metric: latency_p95_ms, max: -5}", "gates[0].max",
         "latency_p95_ms takes values of 0 or more, so a ceiling of -5 can never be met"),
        ("{name: c, metric: NumRel, threshold: -1}", "gates[0].threshold", "takes values of 0 or more"),
        ("{name: mrr, threshold: 0.5}\n  - {name: recall_at_5, tags: {topic: coffee}, threshold: 60}",
         "gates[1].threshold", "did you mean 0.6 (60%)?"),
    ],
)  # fmt: skip
def test_a_value_the_metric_cannot_take_is_a_config_error(gate: str, key: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(__import__("yaml").safe_load(f"gates:\n  - {gate}\n"))
    assert e.value.key_path == key
    assert message in str(e.value)
    if "did you mean" not in message:
        assert "did you mean" not in str(e.value)  # no hint when value / 100 does not fit either


@pytest.mark.parametrize(
    "gate",
    [
        "{name: d, metric: DCG@10, threshold: 85, regression_max: 3, min_improvement: 40}",  # unbounded
        "{name: c, metric: NumRelRet, threshold: 300, regression_max: 25}",  # a count: a sum over queries
        "{name: g, metric: 'G(g1=10)', threshold: -4}",  # gains may be negative
        "{name: u, metric: Utility, threshold: -85, regression_max: 1000}",
        "{name: r, metric: R@5, threshold: 1.0, regression_max: 0.99, min_improvement: 1.0}",  # the edges
        "{name: r, metric: R@5, threshold: 0, regression_max: 0}",
        "{name: r, metric: R@5, regression_max_relative: 0.99, min_relative_improvement: 3}",  # x4 is reachable
        "{name: u, metric: Unjudged@10, max: 0, regression_max_relative: 4, min_relative_improvement: 1}",
        "{name: l, metric: latency_p95_ms, max: 2500, regression_max_relative: 3, min_relative_improvement: 0.5}",
        "{name: q, metric: qps, threshold: 12000, regression_max: 500, regression_max_relative: 0.5}",
    ],
)
def test_values_the_metric_can_take_are_accepted(gate: str) -> None:
    assert len(load_config(__import__("yaml").safe_load(f"gates:\n  - {gate}\n")).gates) == 1


def test_the_cli_refuses_a_percent_slip_before_recording(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "g.yaml"
    config.write_text("gates:\n  - name: retrieval_recall_at_5\n    threshold: 0.5\n    regression_max: 3\n")
    db = tmp_path / "results.db"
    code, out, err = _gate(capsys, "--config", str(config), "--store", str(db))
    assert code == 2 and out == ""
    assert err == (
        f"rankgate: error: {config}: gates[0].regression_max: R@5 takes values from 0 to 1, so it cannot drop by "
        "more than 1: an allowed drop of 3 can never fail; did you mean 0.03 (3 points)?\n"
    )
    assert _recorded(db) == 0


def test_the_docs_list_the_range_check_among_the_slips() -> None:
    text = " ".join((ROOT / "docs" / "gate.md").read_text(encoding="utf-8").split())
    slips = text.split("**A config cannot disable a gate by accident.**")[1].split("`seed` is an integer")[0]
    assert "`regression_max: 3`" in slips and "`threshold: 85`" in slips and "did you mean 0.03" in slips


# -- 3. the JSON contract in docs/gate.md --------------------------------------------------
def _documented_top_level_keys() -> list[str]:
    text = (ROOT / "docs" / "gate.md").read_text(encoding="utf-8")
    table = text.split("`--format json` prints one object whose fields are a stable contract.")[1].split("\n\n")[1]
    return re.findall(r"^\| `(\w+)` \|", table, flags=re.M)


def _documented_gate_keys() -> set[str]:
    text = " ".join((ROOT / "docs" / "gate.md").read_text(encoding="utf-8").split())
    listed = text.split("Each object of `gates` has `{")[1].split("}`")[0]
    return set(re.findall(r'"(\w+)"', listed))


def test_the_docs_name_every_key_gate_json_emits() -> None:
    report = run_gate(QRELS, DENSE_V2, DEMO_GATES, baseline_run=DENSE).to_dict()
    assert _documented_top_level_keys() == list(report)  # every key, in the order emitted
    assert _documented_gate_keys() == set(report["gates"][0])


# -- 4. the files given as arguments, as eval takes them ------------------------------------
@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        ([QRELS, DENSE, "--config", DEMO_GATES], f"did you mean --qrels {QRELS} --run {DENSE}?"),
        (["--config", DEMO_GATES, QRELS, DENSE], f"did you mean --qrels {QRELS} --run {DENSE}?"),
        (["--qrels", QRELS, DENSE, "--config", DEMO_GATES], f"did you mean --run {DENSE}?"),
        (["--run", DENSE, "--config", DEMO_GATES, QRELS], f"did you mean --qrels {QRELS}?"),
        (["--qrels", QRELS, "--run", DENSE, "--config", DEMO_GATES, "extra.txt"], None),
    ],
)
def test_files_given_as_arguments_get_a_usage_error_naming_the_options(
    capsys: pytest.CaptureFixture[str], argv: list[str], hint: str | None
) -> None:
    code, out, err = invoke(capsys, "gate", *argv)
    assert code == 2 and out == "" and "Traceback" not in err
    assert "gate takes its files as options (--qrels QRELS --run RUN), unlike eval and compare" in err
    assert "Missing option" not in err and "unexpected extra argument" not in err
    if hint:
        assert hint in err
    else:
        assert "unexpected argument extra.txt:" in err and "did you mean" not in err


def test_gate_help_shows_examples_and_that_the_files_are_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(capsys, "gate", "--help")
    assert code == 0
    assert out.startswith("Usage: rankgate gate [OPTIONS]\n")  # no phantom argument in the usage line
    assert "The files are options (--qrels QRELS --run RUN)" in " ".join(out.split())
    example = "rankgate gate --qrels qrels.txt --run new.txt --config gates.yaml --baseline-run main.txt"
    assert f"Examples:\n    {example}\n" in out
    assert invoke(capsys, "gate", QRELS, "--help")[0] == 0  # --help still wins over a stray argument
