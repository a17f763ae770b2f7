"""Posting the gate's report to GitHub: one sticky pull-request comment, and the job summary.

`post_or_update_comment` keeps a single comment per pull request and gate key up to date. It
lists the pull request's comments (every page, following the ``Link`` header), picks the
first one holding the hidden marker ``<!-- rankgate:gate:{key} -->`` on a line of its own,
and PATCHes it; without one it POSTs a new comment. Everything it needs comes from the
GitHub Actions environment:

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

Answers 5xx and network errors are retried with exponential backoff (a POST is retried only
after looking again for the comment, so a request that GitHub carried out but did not
acknowledge never leaves two comments); a rate limit is waited out when GitHub asks for at
most a minute. 401, 403 and 404 stop at once with a `BackendError` that says what to fix.
The token only goes into the ``Authorization`` header: it is scrubbed from every message
and never shown by a ``repr``.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from rankgate.errors import BackendError, ConfigError

if TYPE_CHECKING:
    import httpx

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
MARKER = "<!-- rankgate:gate:{key} -->"  # the hidden line that makes a comment sticky
MAX_COMMENT_CHARS = 65_536  # GitHub refuses longer comment bodies (422)
MAX_SUMMARY_BYTES = 1024 * 1024  # GitHub drops a step summary over 1 MiB
PER_PAGE = 100
MAX_PAGES = 200
MAX_RATE_LIMIT_WAIT = 60.0
REDACTED = "***"
_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,99}")
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_PULL_REF = re.compile(r"refs/pull/(\d+)/(?:merge|head)")
TRUNCATED_NOTE = "\n\n_… truncated to fit a GitHub comment: the full report is in the job summary._\n"

Sleep = Callable[[float], None]


@dataclass(frozen=True)
class CommentResult:
    """What `post_or_update_comment` did: ``action`` "created" or "updated", the comment's page and id."""

    action: Literal["created", "updated"]
    url: str
    id: int


@dataclass(frozen=True)
class PullRequest:
    """Where to comment: the API's base URL, ``owner/name`` and the pull request number."""

    api_url: str
    repository: str
    number: int

    @property
    def comments_path(self) -> str:
        return f"/repos/{self.repository}/issues/{self.number}/comments"


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


def has_marker(body: str, marker: str) -> bool:
    """True when ``marker`` stands on a line of its own in ``body`` (a quoted copy does not count).

    >>> m = comment_marker()
    >>> has_marker(f"report\\n{m}\\n", m), has_marker(f"> {m}", m)
    (True, False)
    """
    return any(line.strip() == marker for line in body.splitlines())


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
            f"Got {_shorten(api_url) if not (parts.username or parts.password) else '<a URL with credentials>'!r}."
        )
    repository = (env.get("GITHUB_REPOSITORY") or "").strip()
    if not repository:
        raise ConfigError(
            "--post-comment needs GITHUB_REPOSITORY (owner/name); GitHub Actions sets it. "
            "Outside Actions, set it together with GITHUB_TOKEN and RANKGATE_PULL_REQUEST."
        )
    if not _REPOSITORY.fullmatch(repository):
        raise ConfigError(f"GITHUB_REPOSITORY must look like owner/name. Got {_shorten(repository)!r} instead.")
    return PullRequest(api_url=api_url, repository=repository, number=_pull_request_number(env))


def _pull_request_number(env: Mapping[str, str]) -> int:
    explicit = (env.get("RANKGATE_PULL_REQUEST") or "").strip()
    if explicit:
        if not explicit.isdigit() or int(explicit) < 1:
            raise ConfigError(f"RANKGATE_PULL_REQUEST must be a pull request number. Got {_shorten(explicit)!r}.")
        return int(explicit)
    number = _number_from_event(env.get("GITHUB_EVENT_PATH"))
    if number is not None:
        return number
    match = _PULL_REF.fullmatch((env.get("GITHUB_REF") or "").strip())
    if match:
        return int(match.group(1))
    event = env.get("GITHUB_EVENT_NAME") or "unknown"
    raise ConfigError(
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
        env: the environment to read (see the module docstring).
        transport: an httpx transport (tests: ``httpx.MockTransport``); default: the network.
        retries: retries after a 5xx answer or a network error (with exponential backoff).
        backoff: the first retry's delay in seconds; it doubles with each retry.
        timeout: seconds per request.
        sleep: how to wait (injectable for tests).

    Returns:
        A `CommentResult`: "created" or "updated", the comment's URL and id.

    Raises:
        ConfigError: no token, repository or pull request in ``env``, or a bad ``key``.
        BackendError: GitHub refused (401, 403, 404, other 4xx), kept failing (5xx), or
            could not be reached.
    """
    marker = comment_marker(key)
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0 or backoff < 0 or timeout <= 0:
        raise ConfigError(
            f"retries must be an int >= 0, backoff >= 0 and timeout > 0. Got {retries!r}, {backoff!r}, {timeout!r}."
        )
    token = _token(env)
    pr = pull_request_from_env(env)
    text = fit_comment(body, marker)
    with _GitHub(pr, token, transport=transport, retries=retries, backoff=backoff, timeout=timeout, sleep=sleep) as gh:
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


def write_step_summary(markdown: str, *, env: Mapping[str, str] = os.environ) -> bool:
    """Append ``markdown`` to the GitHub Actions job summary; False when ``GITHUB_STEP_SUMMARY`` is unset.

    The summary is one file per step that GitHub renders after the job; appending keeps
    what earlier commands of the step wrote. An addition that would take it past GitHub's
    1 MiB limit is cut, with a note.
    """
    path = (env.get("GITHUB_STEP_SUMMARY") or "").strip()
    if not path:
        return False
    target = Path(path)
    try:
        used = target.stat().st_size if target.exists() else 0
        data = (markdown.rstrip("\n") + "\n\n").encode("utf-8")
        room = MAX_SUMMARY_BYTES - used
        if len(data) > room:
            note = TRUNCATED_NOTE.replace("the full report is in the job summary", "see the JSON output").encode()
            keep = max(room - len(note), 0)
            data = data[:keep].decode("utf-8", errors="ignore").encode("utf-8") + (note if room > len(note) else b"")
        with target.open("ab") as f:
            f.write(data)
    except OSError as e:
        raise BackendError(f"cannot append to the job summary GITHUB_STEP_SUMMARY={path}: {e.strerror or e}") from None
    return True


def _token(env: Mapping[str, str]) -> str:
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


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _httpx() -> Any:
    try:
        import httpx
    except ImportError:  # pragma: no cover - httpx comes with the gate extra
        raise BackendError("posting PR comments needs httpx: pip install 'rankgate[gate]'") from None
    return httpx


class _Transient(BackendError):
    """A failure that another attempt may not have: a 5xx answer or a network error."""


class _GitHub:
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

        self._httpx = _httpx()
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

    def __enter__(self) -> _GitHub:
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
            except _Transient as e:
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
            raise BackendError(f"GitHub listed a comment without a numeric id ({_shorten(repr(comment_id))})")
        path = f"/repos/{self.pr.repository}/issues/comments/{comment_id}"
        try:
            response = self._send("PATCH", path, body=body)
        except _Gone:
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
                        raise _Gone(what)
                    raise BackendError(self._redact(self._refusal(what, response)))
                failure = f"GitHub answered {what} with {status} {_message(response)}".rstrip()
            if attempt >= retries:
                suffix = f" (gave up after {attempt + 1} attempts)" if retries else ""
                raise _Transient(self._redact(failure + suffix)) from None
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
        return text.replace(self._token, REDACTED) if self._token else text


class _Gone(BackendError):
    """The comment to update no longer exists."""


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
    return _shorten(" ".join(str(text).split()), 200)


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
