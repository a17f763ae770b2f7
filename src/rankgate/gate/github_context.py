"""Where a GitHub Actions run posts: the API URL, repository, pull request number and token, from its environment.

========================  =======================================================
``GITHUB_TOKEN``          the token (needs ``pull-requests: write``)
``GITHUB_REPOSITORY``     ``owner/name``
``GITHUB_EVENT_PATH``     the event payload: ``pull_request.number`` (also
                          ``issue.number`` of a PR comment, ``workflow_run``'s PR)
``GITHUB_REF``            ``refs/pull/N/merge``, when the payload has no number
``RANKGATE_PULL_REQUEST`` an explicit pull request number (wins over the above)
``GITHUB_API_URL``        the API (default https://api.github.com; GHES:
                          ``https://HOST/api/v3``)
========================  =======================================================
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rankgate.errors import ConfigError

DEFAULT_API_URL = "https://api.github.com"
# Events whose run belongs to a pull request: not finding its number there is an error, not "no PR".
PULL_REQUEST_EVENTS = frozenset(
    {"pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment"}
)
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_PULL_REF = re.compile(r"refs/pull/(\d+)/(?:merge|head)")


@dataclass(frozen=True)
class PullRequest:
    """Where to comment: the API's base URL, ``owner/name`` and the pull request number."""

    api_url: str
    repository: str
    number: int

    @property
    def comments_path(self) -> str:
        return f"/repos/{self.repository}/issues/{self.number}/comments"


class NoPullRequest(ConfigError):
    """This run is on no pull request (a push, a schedule, a manual dispatch): nothing to comment on."""


def comment_target(env: Mapping[str, str] = os.environ) -> PullRequest | None:
    """Where ``--post-comment`` will post, checked before any work is done; None outside a pull request.

    Everything that would make posting fail for certain (no or a malformed ``GITHUB_TOKEN``,
    ``GITHUB_REPOSITORY``, ``GITHUB_API_URL`` or ``RANKGATE_PULL_REQUEST``, no ``httpx``) is
    refused here, so a gate run with a broken setup exits 2 before it evaluates or records
    anything. A run on no pull request (a push to main) is no error: the caller skips the
    comment, as the GitHub Action does.

    >>> env = {"GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "acme/search", "GITHUB_REF": "refs/heads/main"}
    >>> comment_target({**env, "GITHUB_EVENT_NAME": "push"}) is None
    True

    Raises:
        ConfigError: posting cannot work (the message says what to set), or the event is a
            pull request's and its number cannot be found.
        MissingExtraError: ``httpx`` (the ``gate`` extra) is not installed.
    """
    token_from_env(env)
    try:
        pr = pull_request_from_env(env)
    except NoPullRequest:
        if (env.get("GITHUB_EVENT_NAME") or "").strip() in PULL_REQUEST_EVENTS:
            raise
        return None
    from rankgate.extras import require

    require("httpx", "gate", purpose="--post-comment")
    return pr


def pull_request_from_env(env: Mapping[str, str] = os.environ) -> PullRequest:
    """The API URL, repository and pull request number of the current GitHub Actions run.

    >>> pr = pull_request_from_env({"GITHUB_REPOSITORY": "acme/search", "GITHUB_REF": "refs/pull/42/merge"})
    >>> pr.api_url, pr.repository, pr.number
    ('https://api.github.com', 'acme/search', 42)
    """
    api_url = (env.get("GITHUB_API_URL") or DEFAULT_API_URL).strip().rstrip("/")
    parts = urlsplit(api_url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        raise ConfigError(
            f"GITHUB_API_URL must be an http(s) URL without credentials, e.g. {DEFAULT_API_URL}. "
            f"Got {shorten(api_url) if not (parts.username or parts.password) else '<a URL with credentials>'!r}."
        )
    repository = (env.get("GITHUB_REPOSITORY") or "").strip()
    if not repository:
        raise ConfigError(
            "--post-comment needs GITHUB_REPOSITORY (owner/name); GitHub Actions sets it. "
            "Outside Actions, set it together with GITHUB_TOKEN and RANKGATE_PULL_REQUEST."
        )
    if not _REPOSITORY.fullmatch(repository):
        raise ConfigError(f"GITHUB_REPOSITORY must look like owner/name. Got {shorten(repository)!r} instead.")
    return PullRequest(api_url=api_url, repository=repository, number=_pull_request_number(env))


def _pull_request_number(env: Mapping[str, str]) -> int:
    explicit = (env.get("RANKGATE_PULL_REQUEST") or "").strip()
    if explicit:
        if not explicit.isdigit() or int(explicit) < 1:
            raise ConfigError(f"RANKGATE_PULL_REQUEST must be a pull request number. Got {shorten(explicit)!r}.")
        return int(explicit)
    number = _number_from_event(env.get("GITHUB_EVENT_PATH"))
    if number is not None:
        return number
    match = _PULL_REF.fullmatch((env.get("GITHUB_REF") or "").strip())
    if match:
        return int(match.group(1))
    event = env.get("GITHUB_EVENT_NAME") or "unknown"
    raise NoPullRequest(
        f"--post-comment needs a pull request, and this run has none (event {event!r}, "
        f"GITHUB_REF {env.get('GITHUB_REF') or 'unset'!r}): run the workflow on `pull_request`, "
        "or set RANKGATE_PULL_REQUEST to the number."
    )


def _number_from_event(event_path: str | None) -> int | None:
    """``pull_request.number`` (or a PR comment's ``issue.number``, a workflow_run's PR) from the payload."""
    if not event_path:
        return None
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(event, dict):
        return None
    candidates: list[Any] = []
    pr = event.get("pull_request")
    if isinstance(pr, dict):
        candidates.append(pr.get("number"))
    issue = event.get("issue")
    if isinstance(issue, dict) and issue.get("pull_request"):
        candidates.append(issue.get("number"))
    run = event.get("workflow_run")
    if isinstance(run, dict) and isinstance(run.get("pull_requests"), list) and run["pull_requests"]:
        first = run["pull_requests"][0]
        candidates.append(first.get("number") if isinstance(first, dict) else None)
    for number in candidates:
        if isinstance(number, int) and not isinstance(number, bool) and number > 0:
            return number
    return None


def token_from_env(env: Mapping[str, str] = os.environ) -> str:
    """``GITHUB_TOKEN``, checked to be something an HTTP header can carry (never echoed in errors)."""
    token = (env.get("GITHUB_TOKEN") or "").strip()
    if not token:
        raise ConfigError(
            "--post-comment needs GITHUB_TOKEN. In a workflow, give the step "
            "`env: GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}` and the job `permissions: pull-requests: write`."
        )
    if not token.isascii() or not token.isprintable() or any(ch.isspace() for ch in token):
        # Never echo it: an HTTP library would quote the bad header value in its error.
        raise ConfigError("GITHUB_TOKEN holds spaces, control or non-ASCII characters: it cannot be a GitHub token.")
    return token


_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` from GitHub (a URL, a message) without control characters, safe to print to a terminal.

    An escape sequence in a server's answer would otherwise recolour, move or rewrite the
    reader's terminal (C0, DEL and C1 characters, ESC among them, are dropped).

    >>> printable("https://github.com/o/r/pull/1#c\x1b]8;;https://e.vil\x07 \x9b2J")
    'https://github.com/o/r/pull/1#c]8;;https://e.vil 2J'
    """
    return _CONTROLS.sub("", text)


def shorten(text: str, limit: int = 200) -> str:
    """``text``, cut to ``limit`` characters with "..." when longer (for messages)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
