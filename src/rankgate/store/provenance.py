"""Where and when a result was produced: time, git commit and branch, the CI run.

`detect` reads the CI environment first (GitHub Actions, GitLab CI, then other common CI
systems), then asks git in the working directory. Nothing here raises: a value that cannot
be found is None.

Explicit overrides win over everything: ``RANKGATE_COMMIT`` and ``RANKGATE_BRANCH``
(the CLI's ``--commit`` / ``--branch``).

>>> env = {
...     "GITHUB_ACTIONS": "true", "GITHUB_SHA": "4f2a9c1", "GITHUB_REF_NAME": "main",
...     "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/search",
...     "GITHUB_RUN_ID": "42",
... }
>>> p = detect(env, git=False)
>>> (p.commit, p.branch, p.ci, p.ci_url)
('4f2a9c1', 'main', 'github-actions', 'https://github.com/acme/search/actions/runs/42')
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

GIT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Provenance:
    """Where a result comes from.

    Attributes:
        created_at: when it was produced (aware, UTC).
        commit: the git commit evaluated (for a GitHub pull request, the PR's head commit).
        branch: the branch (for a pull request, its source branch).
        ci_url: link to the CI run, when run in CI.
        ci: the CI system ("github-actions", "gitlab-ci", "buildkite", ...), None outside CI.
        repository: "owner/name" (or the project path), when known.
        pull_request: the pull/merge request number, when the run is for one.
        dirty: True when the git working tree had uncommitted changes (git only; None in CI).
        extra: anything else worth keeping (e.g. the merge commit GitHub tested).
    """

    created_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    commit: str | None = None
    branch: str | None = None
    ci_url: str | None = None
    ci: str | None = None
    repository: str | None = None
    pull_request: str | None = None
    dirty: bool | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: ``created_at`` as ISO 8601."""
        out = asdict(self)
        out["created_at"] = self.created_at.isoformat()
        return out


def detect(
    env: Mapping[str, str] | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    git: bool = True,
    now: datetime | None = None,
) -> Provenance:
    """Find the commit, branch and CI run of the current evaluation.

    Args:
        env: environment variables (default: ``os.environ``).
        cwd: where to ask git (default: the current directory).
        git: ask git for what the environment does not say.
        now: the time to record (default: now, UTC).

    Returns:
        A `Provenance`; unknown fields are None.
    """
    env = os.environ if env is None else env
    found: dict[str, Any] = {}
    for reader in (_github, _gitlab, _other_ci):
        found = reader(env)
        if found:
            break
    if git and (not found.get("commit") or not found.get("branch")):
        from_git = _from_git(cwd)
        for key, value in from_git.items():
            if not found.get(key):
                found[key] = value
    commit = _clean(env.get("RANKGATE_COMMIT")) or found.get("commit")
    branch = _clean(env.get("RANKGATE_BRANCH")) or found.get("branch")
    created = now or datetime.now(timezone.utc)
    if created.tzinfo is None:
        created = created.replace(tzinfo=timezone.utc)
    return Provenance(
        created_at=created.astimezone(timezone.utc),
        commit=commit,
        branch=branch,
        ci_url=found.get("ci_url"),
        ci=found.get("ci"),
        repository=found.get("repository"),
        pull_request=found.get("pull_request"),
        dirty=found.get("dirty"),
        extra=dict(found.get("extra", {})),
    )


def _clean(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


def _github(env: Mapping[str, str]) -> dict[str, Any]:
    if env.get("GITHUB_ACTIONS") != "true" and not env.get("GITHUB_SHA"):
        return {}
    out: dict[str, Any] = {
        "ci": "github-actions",
        "commit": _clean(env.get("GITHUB_SHA")),
        "branch": _clean(env.get("GITHUB_HEAD_REF")) or _clean(env.get("GITHUB_REF_NAME")),
        "repository": _clean(env.get("GITHUB_REPOSITORY")),
        "extra": {},
    }
    server, repo, run_id = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY"), env.get("GITHUB_RUN_ID")
    if server and repo and run_id:
        out["ci_url"] = f"{server.rstrip('/')}/{repo}/actions/runs/{run_id}"
        if env.get("GITHUB_RUN_ATTEMPT", "1") not in ("", "1"):
            out["ci_url"] += f"/attempts/{env['GITHUB_RUN_ATTEMPT']}"
    match = re.fullmatch(r"refs/pull/(\d+)/(?:merge|head)", env.get("GITHUB_REF", ""))
    if match:
        out["pull_request"] = match.group(1)
    head = _github_pr_head(env.get("GITHUB_EVENT_PATH"))
    if head:
        # On pull_request events GITHUB_SHA is the merge commit GitHub made; the PR's own
        # head commit is what a reviewer recognises.
        if out["commit"] and out["commit"] != head:
            out["extra"]["merge_commit"] = out["commit"]
        out["commit"] = head
    if env.get("GITHUB_REF_NAME", "").endswith("/merge") and env.get("GITHUB_HEAD_REF"):
        out["extra"]["ref"] = env["GITHUB_REF_NAME"]
    return out


def _github_pr_head(event_path: str | None) -> str | None:
    """The PR head commit from the Actions event payload, when the event is a pull request."""
    if not event_path:
        return None
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
        sha = event["pull_request"]["head"]["sha"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return sha if isinstance(sha, str) and sha else None


def _gitlab(env: Mapping[str, str]) -> dict[str, Any]:
    if env.get("GITLAB_CI") != "true" and not env.get("CI_COMMIT_SHA"):
        return {}
    return {
        "ci": "gitlab-ci",
        "commit": _clean(env.get("CI_COMMIT_SHA")),
        "branch": _clean(env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME")) or _clean(env.get("CI_COMMIT_REF_NAME")),
        "ci_url": _clean(env.get("CI_PIPELINE_URL")) or _clean(env.get("CI_JOB_URL")),
        "repository": _clean(env.get("CI_PROJECT_PATH")),
        "pull_request": _clean(env.get("CI_MERGE_REQUEST_IID")),
    }


# (name, variable telling it is that CI, commit, branch, run URL); the first present wins.
_OTHER_CI: tuple[tuple[str, str, str, str, str], ...] = (
    ("buildkite", "BUILDKITE", "BUILDKITE_COMMIT", "BUILDKITE_BRANCH", "BUILDKITE_BUILD_URL"),
    ("circleci", "CIRCLECI", "CIRCLE_SHA1", "CIRCLE_BRANCH", "CIRCLE_BUILD_URL"),
    ("travis", "TRAVIS", "TRAVIS_COMMIT", "TRAVIS_BRANCH", "TRAVIS_BUILD_WEB_URL"),
    ("azure-pipelines", "TF_BUILD", "BUILD_SOURCEVERSION", "BUILD_SOURCEBRANCHNAME", ""),
    ("bitbucket", "BITBUCKET_BUILD_NUMBER", "BITBUCKET_COMMIT", "BITBUCKET_BRANCH", ""),
    ("jenkins", "JENKINS_URL", "GIT_COMMIT", "GIT_BRANCH", "BUILD_URL"),
    ("ci", "CI", "CI_COMMIT", "CI_BRANCH", "CI_BUILD_URL"),
)


def _other_ci(env: Mapping[str, str]) -> dict[str, Any]:
    for name, marker, commit, branch, url in _OTHER_CI:
        if not env.get(marker):
            continue
        out: dict[str, Any] = {
            "ci": name,
            "commit": _clean(env.get(commit)),
            "branch": _clean(env.get(branch)),
            "ci_url": _clean(env.get(url)) if url else None,
        }
        if name == "jenkins" and out["branch"] and out["branch"].startswith("origin/"):
            out["branch"] = out["branch"][len("origin/") :]
        if name == "azure-pipelines" and env.get("SYSTEM_COLLECTIONURI") and env.get("BUILD_BUILDID"):
            base = env["SYSTEM_COLLECTIONURI"].rstrip("/")
            out["ci_url"] = f"{base}/{env.get('SYSTEM_TEAMPROJECT', '')}/_build/results?buildId={env['BUILD_BUILDID']}"
        if name == "ci" and not (out["commit"] or out["branch"] or out["ci_url"]):
            return {"ci": "ci"}  # a generic CI=true: keep asking git
        return out
    return {}


def _from_git(cwd: str | os.PathLike[str] | None) -> dict[str, Any]:
    """Commit, branch and dirty flag from ``git``; empty when git or the repository is missing."""
    commit = _git(["rev-parse", "--verify", "--quiet", "HEAD"], cwd)
    if commit is None:
        return {}
    branch = _git(["rev-parse", "--abbrev-ref", "HEAD"], cwd)
    status = _git(["status", "--porcelain", "--untracked-files=no"], cwd, strip=False)
    return {
        "commit": commit,
        "branch": None if branch in (None, "HEAD") else branch,  # "HEAD": detached
        "dirty": None if status is None else bool(status.strip()),
    }


def _git(args: list[str], cwd: str | os.PathLike[str] | None, *, strip: bool = True) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() if strip else done.stdout
