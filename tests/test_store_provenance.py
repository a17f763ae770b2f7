"""Provenance detection: CI environments, explicit overrides, git, and no git at all."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from rankgate.store.provenance import Provenance, detect

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
GITHUB = {
    "GITHUB_ACTIONS": "true",
    "GITHUB_SHA": "1111111111111111111111111111111111111111",
    "GITHUB_REF": "refs/heads/main",
    "GITHUB_REF_NAME": "main",
    "GITHUB_SERVER_URL": "https://github.com",
    "GITHUB_REPOSITORY": "acme/search",
    "GITHUB_RUN_ID": "4242",
}


def test_github_push() -> None:
    p = detect(GITHUB, git=False, now=NOW)
    assert p == Provenance(
        created_at=NOW,
        commit=GITHUB["GITHUB_SHA"],
        branch="main",
        ci_url="https://github.com/acme/search/actions/runs/4242",
        ci="github-actions",
        repository="acme/search",
    )


def test_github_pull_request_uses_head_branch_and_commit(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 17, "head": {"sha": "2" * 40}}}))
    env = {
        **GITHUB,
        "GITHUB_REF": "refs/pull/17/merge",
        "GITHUB_REF_NAME": "17/merge",
        "GITHUB_HEAD_REF": "feature/faster-bm25",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_RUN_ATTEMPT": "2",
    }
    p = detect(env, git=False, now=NOW)
    assert p.branch == "feature/faster-bm25"
    assert p.commit == "2" * 40
    assert p.extra["merge_commit"] == GITHUB["GITHUB_SHA"]
    assert p.pull_request == "17"
    assert p.ci_url == "https://github.com/acme/search/actions/runs/4242/attempts/2"


def test_github_with_unreadable_event_keeps_github_sha(tmp_path: Path) -> None:
    env = {**GITHUB, "GITHUB_EVENT_PATH": str(tmp_path / "missing.json")}
    assert detect(env, git=False).commit == GITHUB["GITHUB_SHA"]


def test_gitlab_merge_request() -> None:
    env = {
        "GITLAB_CI": "true",
        "CI": "true",
        "CI_COMMIT_SHA": "3" * 40,
        "CI_COMMIT_REF_NAME": "refs/merge-requests/5/head",
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "fix-recall",
        "CI_MERGE_REQUEST_IID": "5",
        "CI_PIPELINE_URL": "https://gitlab.example/acme/search/-/pipelines/99",
        "CI_PROJECT_PATH": "acme/search",
    }
    p = detect(env, git=False, now=NOW)
    assert (p.ci, p.commit, p.branch, p.pull_request) == ("gitlab-ci", "3" * 40, "fix-recall", "5")
    assert p.ci_url == "https://gitlab.example/acme/search/-/pipelines/99"


def test_gitlab_branch_pipeline() -> None:
    env = {"GITLAB_CI": "true", "CI_COMMIT_SHA": "4" * 40, "CI_COMMIT_REF_NAME": "main", "CI_JOB_URL": "https://j/1"}
    p = detect(env, git=False)
    assert (p.branch, p.ci_url) == ("main", "https://j/1")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"BUILDKITE": "true", "BUILDKITE_COMMIT": "abc", "BUILDKITE_BRANCH": "main", "BUILDKITE_BUILD_URL": "u"},
            ("buildkite", "abc", "main", "u"),
        ),
        (
            {"CIRCLECI": "true", "CIRCLE_SHA1": "abc", "CIRCLE_BRANCH": "dev", "CIRCLE_BUILD_URL": "u"},
            ("circleci", "abc", "dev", "u"),
        ),
        (
            {"JENKINS_URL": "http://j", "GIT_COMMIT": "abc", "GIT_BRANCH": "origin/main", "BUILD_URL": "u"},
            ("jenkins", "abc", "main", "u"),
        ),
        (
            {
                "TF_BUILD": "True",
                "BUILD_SOURCEVERSION": "abc",
                "BUILD_SOURCEBRANCHNAME": "main",
                "SYSTEM_COLLECTIONURI": "https://dev.azure.com/acme/",
                "SYSTEM_TEAMPROJECT": "search",
                "BUILD_BUILDID": "7",
            },
            ("azure-pipelines", "abc", "main", "https://dev.azure.com/acme/search/_build/results?buildId=7"),
        ),
        ({"CI": "true", "CI_COMMIT": "abc", "CI_BRANCH": "main"}, ("ci", "abc", "main", None)),
    ],
)
def test_other_ci_systems(env: dict[str, str], expected: tuple) -> None:
    p = detect(env, git=False)
    assert (p.ci, p.commit, p.branch, p.ci_url) == expected


def test_overrides_win() -> None:
    env = {**GITHUB, "RANKGATE_COMMIT": "feedface", "RANKGATE_BRANCH": "release/1.0"}
    p = detect(env, git=False)
    assert (p.commit, p.branch) == ("feedface", "release/1.0")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_repository(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    git("init", "-q", "-b", "trunk")
    (tmp_path / "a.txt").write_text("1")
    git("add", "a.txt")
    git("commit", "-q", "-m", "one")
    head = git("rev-parse", "HEAD")
    p = detect({}, cwd=tmp_path)
    assert (p.commit, p.branch, p.dirty, p.ci) == (head, "trunk", False, None)
    (tmp_path / "a.txt").write_text("2")
    assert detect({}, cwd=tmp_path).dirty is True
    git("checkout", "-q", "--detach")
    detached = detect({}, cwd=tmp_path)
    assert (detached.commit, detached.branch) == (head, None)
    # A generic CI=true without its own variables still gets git's answer.
    assert detect({"CI": "true"}, cwd=tmp_path).commit == head


def test_no_git_gives_none_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no git executable at all
    p = detect({}, cwd=tmp_path, now=NOW)
    assert p == Provenance(created_at=NOW)


def test_not_a_repository_gives_none_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))  # git must not look further up
    p = detect({}, cwd=tmp_path, now=NOW)
    assert (p.commit, p.branch, p.dirty) == (None, None, None)


def test_naive_time_is_taken_as_utc_and_to_dict() -> None:
    p = detect({}, git=False, now=datetime(2024, 5, 1, 12, 0))
    assert p.created_at == NOW
    assert p.to_dict()["created_at"] == "2024-05-01T12:00:00+00:00"
