"""The few GitHub REST API calls a sticky comment needs, with retries, rate limits and token redaction.

Answers 5xx and network errors are retried with exponential backoff (a POST is retried only
after looking again for the comment, so a request that GitHub carried out but did not
acknowledge never leaves two comments); a rate limit is waited out when GitHub asks for at
most a minute. 401, 403 and 404 stop at once with a `BackendError` that says what to fix.
The token only goes into the ``Authorization`` header: it is scrubbed from every message
and never shown by a ``repr``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from rankgate.errors import BackendError
from rankgate.extras import require
from rankgate.gate.github_context import PullRequest, printable, shorten

if TYPE_CHECKING:
    import httpx

API_VERSION = "2022-11-28"
PER_PAGE = 100
MAX_PAGES = 200
MAX_RATE_LIMIT_WAIT = 60.0
REDACTED = "***"

Sleep = Callable[[float], None]


@dataclass(frozen=True)
class CommentResult:
    """What `post_or_update_comment` did: ``action`` "created" or "updated", the comment's page and id."""

    action: Literal["created", "updated"]
    url: str
    id: int


def has_marker(body: str, marker: str) -> bool:
    """True when ``marker`` stands on a line of its own in ``body`` (a quoted copy does not count).

    >>> m = "<!-- rankgate:gate:default -->"
    >>> has_marker(f"report\\n{m}\\n", m), has_marker(f"> {m}", m)
    (True, False)
    """
    return any(line.strip() == marker for line in body.splitlines())


class Transient(BackendError):
    """A failure that another attempt may not have: a 5xx answer or a network error."""


class Gone(BackendError):
    """The comment to update no longer exists."""


class GitHubClient:
    """The few calls of the GitHub REST API that a sticky comment needs, with retries and redaction."""

    __slots__ = ("_client", "_httpx", "_pause", "_token", "backoff", "pr", "retries")

    def __init__(
        self,
        pr: PullRequest,
        token: str,
        *,
        transport: httpx.BaseTransport | None,
        retries: int,
        backoff: float,
        timeout: float,
        sleep: Sleep,
    ) -> None:
        from rankgate._version import __version__

        self._httpx = require("httpx", "gate")
        self.pr = pr
        self._token = token
        self.retries = retries
        self.backoff = backoff
        self._pause = sleep
        self._client = self._httpx.Client(
            base_url=pr.api_url,
            transport=transport,
            timeout=timeout,
            follow_redirects=False,
            headers={
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {token}",
                "User-Agent": f"rankgate/{__version__}",
                "X-GitHub-Api-Version": API_VERSION,
            },
        )

    def __repr__(self) -> str:
        return f"<GitHub {self.pr.repository}#{self.pr.number} token={REDACTED}>"

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self._client.close()

    # -- the calls --------------------------------------------------------------------------
    def find_comment(self, marker: str) -> dict[str, Any] | None:
        """The first comment (oldest first) holding ``marker`` on a line of its own, or None."""
        url: str | None = f"{self.pr.api_url}{self.pr.comments_path}?per_page={PER_PAGE}"
        pages = 0
        while url is not None:
            if pages == MAX_PAGES:
                raise BackendError(f"more than {MAX_PAGES} pages of comments on pull request #{self.pr.number}")
            response = self._send("GET", url)
            pages += 1
            page = _json(response)
            if not isinstance(page, list):
                raise BackendError(f"GitHub answered GET {_path(url)} with something that is not a list of comments")
            for comment in page:
                if isinstance(comment, dict) and has_marker(str(comment.get("body") or ""), marker):
                    return comment
            url = self._next_page(response)
        return None

    def create(self, body: str, marker: str) -> CommentResult:
        """POST a new comment. A POST is retried only after looking again for the comment."""
        path = self.pr.comments_path
        for attempt in range(self.retries + 1):
            try:
                return self._result("created", self._send("POST", path, body=body, retries=0))
            except Transient as e:
                if attempt == self.retries:
                    raise BackendError(f"{e} (gave up after {attempt + 1} attempts)") from None
                self._pause(self._delay(attempt))
                found = self.find_comment(marker)  # the failed POST may have gone through
                if found is not None:
                    return self.update(found, body)
        raise AssertionError("unreachable")  # pragma: no cover

    def update(self, comment: Mapping[str, Any], body: str) -> CommentResult:
        """PATCH ``comment``; when it was deleted meanwhile (404), create a new one."""
        comment_id = comment.get("id")
        if not isinstance(comment_id, int) or isinstance(comment_id, bool):
            raise BackendError(f"GitHub listed a comment without a numeric id ({shorten(repr(comment_id))})")
        path = f"/repos/{self.pr.repository}/issues/comments/{comment_id}"
        try:
            response = self._send("PATCH", path, body=body)
        except Gone:
            response = self._send("POST", self.pr.comments_path, body=body, retries=0)
            return self._result("created", response)
        return self._result("updated", response)

    # -- plumbing ---------------------------------------------------------------------------
    def _send(self, method: str, url: str, *, body: str | None = None, retries: int | None = None) -> httpx.Response:
        """One request, retried after 5xx answers, network errors and short rate limits."""
        httpx = self._httpx
        retries = self.retries if retries is None else retries
        what = f"{method} {_path(url)}"
        attempt = 0
        while True:
            try:
                response = self._client.request(method, url, json=None if body is None else {"body": body})
            except httpx.HTTPError as e:
                failure = f"cannot reach GitHub at {self.pr.api_url} on {what} ({type(e).__name__}: {e})"
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return response
                wait = _rate_limit_wait(response)
                if wait is not None:
                    if wait <= MAX_RATE_LIMIT_WAIT and attempt < max(retries, 1):
                        self._pause(wait)
                        attempt += 1
                        continue
                    raise BackendError(self._redact(_rate_limit_message(what, response, wait)))
                if status < 500:
                    if status == 404 and method == "PATCH":
                        raise Gone(what)
                    raise BackendError(self._redact(self._refusal(what, response)))
                failure = f"GitHub answered {what} with {status} {_message(response)}".rstrip()
            if attempt >= retries:
                suffix = f" (gave up after {attempt + 1} attempts)" if retries else ""
                raise Transient(self._redact(failure + suffix)) from None
            self._pause(self._delay(attempt))
            attempt += 1

    def _delay(self, attempt: int) -> float:
        return float(self.backoff * 2**attempt)

    def _next_page(self, response: httpx.Response) -> str | None:
        url = response.links.get("next", {}).get("url")
        if not url:
            return None
        here, there = urlsplit(self.pr.api_url), urlsplit(str(response.url.join(url)))
        if (here.scheme, here.netloc) != (there.scheme, there.netloc):
            # Following it would send the token to another host.
            raise BackendError(
                f"GitHub's pagination link points to another host ({there.scheme}://{there.hostname}): not followed"
            )
        return str(response.url.join(url))

    def _result(self, action: Literal["created", "updated"], response: httpx.Response) -> CommentResult:
        data = _json(response)
        if not isinstance(data, dict) or not isinstance(data.get("id"), int):
            raise BackendError(
                f"GitHub answered {response.request.method} {_path(str(response.request.url))} "
                f"with {response.status_code} but no comment in the body"
            )
        url = data.get("html_url") or data.get("url") or ""
        return CommentResult(action=action, url=self._redact(str(url)), id=int(data["id"]))

    def _refusal(self, what: str, response: httpx.Response) -> str:
        status, message = response.status_code, _message(response)
        pr = f"{self.pr.repository}#{self.pr.number}"
        if status == 401:
            return (
                f"GitHub rejected the token on {what} (401 {message}): GITHUB_TOKEN is invalid or expired. "
                "In a workflow pass `GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}`; a personal token may be revoked."
            )
        if status == 403:
            return (
                f"GitHub refused {what} on {pr} (403 {message}): the token may not write pull-request comments. "
                "Give the job `permissions: pull-requests: write`; on pull requests from forks GITHUB_TOKEN is "
                "read-only (see docs/ci.md)."
            )
        if status == 404:
            return (
                f"GitHub answered 404 ({message}) for {what}: repository {self.pr.repository!r} or pull request "
                f"#{self.pr.number} does not exist, or the token cannot see it (check GITHUB_REPOSITORY and the "
                "pull request number; a private repository needs a token with access to it)."
            )
        return f"GitHub refused {what} on {pr} ({status} {message})".rstrip()

    def _redact(self, text: str) -> str:
        """``text`` for a message or the terminal: the token scrubbed and control characters dropped."""
        return printable(text.replace(self._token, REDACTED) if self._token else text)


def _json(response: httpx.Response) -> Any:
    """The response's JSON body, or None when it has none."""
    try:
        return response.json()
    except ValueError:
        return None


def _message(response: httpx.Response) -> str:
    """GitHub's ``message`` (or the start of the body), fit for an error message."""
    data = _json(response)
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        text = data["message"]
    else:
        text = response.reason_phrase or response.text
    return shorten(" ".join(str(text).split()), 200)


def _rate_limit_wait(response: httpx.Response) -> float | None:
    """Seconds GitHub asks to wait when ``response`` is a (primary or secondary) rate limit, else None."""
    if response.status_code not in (403, 429):
        return None
    headers = response.headers
    retry_after = _seconds(headers.get("retry-after"))
    limited = (
        response.status_code == 429
        or retry_after is not None
        or headers.get("x-ratelimit-remaining") == "0"
        or "rate limit" in _message(response).lower()
    )
    if not limited:
        return None
    if retry_after is not None:
        return retry_after
    reset = _seconds(headers.get("x-ratelimit-reset"))
    if headers.get("x-ratelimit-remaining") == "0" and reset is not None:
        return max(reset - time.time(), 0.0)
    return MAX_RATE_LIMIT_WAIT  # secondary limit without a hint: GitHub says wait at least a minute


def _rate_limit_message(what: str, response: httpx.Response, wait: float) -> str:
    return (
        f"GitHub rate limit hit on {what} ({response.status_code} {_message(response)}): it asks to wait "
        f"{wait:.0f} s. Secondary rate limits come from many requests in a short time; re-run the job later."
    )


def _seconds(value: str | None) -> float | None:
    try:
        seconds = float((value or "").strip())
    except ValueError:
        return None
    return seconds if seconds == seconds and seconds >= 0 else None  # not NaN


def _path(url: str) -> str:
    """The path of an API URL, without host or query, for messages."""
    return urlsplit(url).path or url
