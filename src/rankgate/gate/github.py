"""Posting the gate's report as one sticky pull-request comment per gate key.

`post_or_update_comment` keeps a single comment per pull request and gate key up to date. It
lists the pull request's comments (every page, following the ``Link`` header), picks the
first one holding the hidden marker ``<!-- rankgate:gate:{key} -->`` on a line of its own,
and PATCHes it; without one it POSTs a new comment. Where to post comes from the GitHub
Actions environment (`rankgate.gate.github_context`, whose `comment_target` checks it before a
gate does any work, and finds no pull request on a push); the API calls, retries and token
redaction are `rankgate.gate.github_api`'s; the job summary is `rankgate.gate.step_summary`'s.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from rankgate.errors import ConfigError
from rankgate.gate.github_api import CommentResult, GitHubClient, Sleep, has_marker
from rankgate.gate.github_context import (
    NoPullRequest,
    PullRequest,
    comment_target,
    pull_request_from_env,
    token_from_env,
)
from rankgate.gate.step_summary import MAX_SUMMARY_BYTES, write_step_summary

if TYPE_CHECKING:
    import httpx

__all__ = [
    "MARKER",
    "MAX_COMMENT_CHARS",
    "MAX_SUMMARY_BYTES",
    "CommentResult",
    "NoPullRequest",
    "PullRequest",
    "comment_marker",
    "comment_target",
    "fit_comment",
    "has_marker",
    "post_or_update_comment",
    "pull_request_from_env",
    "write_step_summary",
]

MARKER = "<!-- rankgate:gate:{key} -->"  # the hidden line that makes a comment sticky
MAX_COMMENT_CHARS = 65_536  # GitHub refuses longer comment bodies (422)
_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,99}")
TRUNCATED_NOTE = "\n\n_… truncated to fit a GitHub comment: the full report is in the job summary._\n"


def comment_marker(key: str = "default") -> str:
    """The hidden line that identifies the sticky comment of gate ``key``.

    >>> comment_marker("nightly")
    '<!-- rankgate:gate:nightly -->'
    """
    if not isinstance(key, str) or not _KEY.fullmatch(key) or "--" in key:
        raise ConfigError(
            "The comment key must be 1-100 letters, digits or _ . : / - (starting with a letter or digit, "
            f"no '--'). Got {key!r} instead.",
            key_path="comment_key",
        )
    return MARKER.format(key=key)


def post_or_update_comment(
    body: str,
    *,
    key: str = "default",
    env: Mapping[str, str] = os.environ,
    transport: httpx.BaseTransport | None = None,
    retries: int = 3,
    backoff: float = 1.0,
    timeout: float = 30.0,
    sleep: Sleep = time.sleep,
) -> CommentResult:
    """Create or update the one sticky comment of gate ``key`` on the current pull request.

    Args:
        body: the comment's Markdown. The marker line is appended when missing; a body over
            GitHub's 65,536 characters is cut at a line end, with a note.
        key: tells the comments of several gates on one pull request apart.
        env: the environment to read (see `rankgate.gate.github_context`).
        transport: an httpx transport (tests: ``httpx.MockTransport``); default: the network.
        retries: retries after a 5xx answer or a network error (with exponential backoff).
        backoff: the first retry's delay in seconds; it doubles with each retry.
        timeout: seconds per request.
        sleep: how to wait (injectable for tests).

    Returns:
        A `CommentResult`: "created" or "updated", the comment's URL and id.

    Raises:
        ConfigError: no token, repository or pull request in ``env``, or a bad ``key``
            (`NoPullRequest` when the run is on no pull request).
        BackendError: GitHub refused (401, 403, 404, other 4xx), kept failing (5xx), or
            could not be reached.
    """
    marker = comment_marker(key)
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0 or backoff < 0 or timeout <= 0:
        raise ConfigError(
            f"retries must be an int >= 0, backoff >= 0 and timeout > 0. Got {retries!r}, {backoff!r}, {timeout!r}."
        )
    token = token_from_env(env)
    pr = pull_request_from_env(env)
    text = fit_comment(body, marker)
    with GitHubClient(
        pr, token, transport=transport, retries=retries, backoff=backoff, timeout=timeout, sleep=sleep
    ) as gh:
        found = gh.find_comment(marker)
        if found is not None:
            return gh.update(found, text)
        return gh.create(text, marker)


def fit_comment(body: str, marker: str) -> str:
    """``body`` with ``marker`` on its last line, cut to GitHub's comment size limit when longer."""
    if not isinstance(body, str):
        raise ConfigError(f"The comment body must be a str. Got {type(body).__name__} instead.")
    lines = [line for line in body.rstrip("\n").split("\n") if line.strip() != marker]
    text = "\n".join(lines).rstrip("\n")
    tail = f"\n\n{marker}\n"
    if len(text) + len(tail) <= MAX_COMMENT_CHARS:
        return text + tail
    room = MAX_COMMENT_CHARS - len(tail) - len(TRUNCATED_NOTE)
    cut = text.rfind("\n", 0, room)
    return text[: cut if cut > 0 else room] + TRUNCATED_NOTE + tail
