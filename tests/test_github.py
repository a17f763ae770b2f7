"""The sticky PR comment and the job summary, against a local server that behaves like GitHub's API."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from rankgate.data import demo_dir, demo_qrels_path, demo_run_path
from rankgate.errors import BackendError, ConfigError
from rankgate.gate.github import (
    MAX_COMMENT_CHARS,
    MAX_SUMMARY_BYTES,
    CommentResult,
    comment_marker,
    fit_comment,
    post_or_update_comment,
    pull_request_from_env,
    write_step_summary,
)
from tests.cli_support import exit_code
from tests.github_support import TOKEN, FakeGitHub

MARKER = "<!-- rankgate:gate:default -->"


@pytest.fixture
def api() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


@pytest.fixture(autouse=True)
def _verbose_http_logs(caplog: pytest.LogCaptureFixture) -> None:
    """Log everything httpx and httpcore say, so that the token checks see it too."""
    caplog.set_level(logging.DEBUG)


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def post(api: FakeGitHub, body: str = "## report\n", **kw: object) -> CommentResult:
    kw.setdefault("env", api.env())
    kw.setdefault("sleep", Sleeps())
    return post_or_update_comment(body, **kw)  # type: ignore[arg-type]


def no_token(*texts: str) -> None:
    for text in texts:
        assert TOKEN not in text
        assert TOKEN[4:20] not in text


def error_texts(info: pytest.ExceptionInfo[BaseException]) -> list[str]:
    return [str(info.value), repr(info.value), "".join(traceback.format_exception(info.value))]


# -- create, find, update -----------------------------------------------------------------
def test_creates_the_comment_with_its_marker(api: FakeGitHub) -> None:
    result = post(api, "## rankgate\nall good\n")
    assert result.action == "created"
    [comment] = api.comments[7]
    assert result.id == comment["id"]
    assert result.url == f"https://github.com/acme/search/pull/7#issuecomment-{comment['id']}"
    assert comment["body"] == f"## rankgate\nall good\n\n{MARKER}\n"
    [get] = api.calls("GET")
    assert get.path == "/repos/acme/search/issues/7/comments" and get.query["per_page"] == ["100"]
    assert get.headers["authorization"] == f"Bearer {TOKEN}"
    assert get.headers["accept"] == "application/vnd.github+json"
    assert get.headers["x-github-api-version"] == "2022-11-28"
    assert get.headers["user-agent"].startswith("rankgate/")


def test_second_post_updates_the_same_comment(api: FakeGitHub) -> None:
    first = post(api, "first\n")
    second = post(api, "second\n")
    assert (first.action, second.action) == ("created", "updated")
    assert first.id == second.id
    [comment] = api.comments[7]
    assert comment["body"] == f"second\n\n{MARKER}\n"
    assert len(api.calls("POST")) == 1 and len(api.calls("PATCH")) == 1
    assert api.calls("PATCH")[0].path == f"/repos/acme/search/issues/comments/{first.id}"


def test_finds_the_existing_comment_on_page_two(api: FakeGitHub) -> None:
    api.max_per_page = 2
    for i in range(3):
        api.add_comment(7, f"review comment {i}")
    ours = api.add_comment(7, f"old report\n\n{MARKER}\n", login="github-actions[bot]", bot=True)
    api.add_comment(7, "a later review comment")
    result = post(api, "new report")
    assert result == CommentResult("updated", ours["html_url"], ours["id"])
    assert [c["body"] for c in api.comments[7]][3] == f"new report\n\n{MARKER}\n"
    assert len(api.comments[7]) == 5
    pages = [r.query.get("page", ["1"])[0] for r in api.calls("GET")]
    assert pages == ["1", "2"]  # stops at the page that has it
    assert not api.calls("POST")


def test_walks_every_page_before_creating(api: FakeGitHub) -> None:
    api.max_per_page = 2
    for i in range(5):
        api.add_comment(7, f"comment {i}")
    assert post(api).action == "created"
    assert [r.query.get("page", ["1"])[0] for r in api.calls("GET")] == ["1", "2", "3"]
    assert len(api.comments[7]) == 6


def test_a_quoted_marker_or_another_key_is_not_ours(api: FakeGitHub) -> None:
    api.add_comment(7, f"> the bot said\n> {MARKER}\nwhy did it fail?")
    api.add_comment(7, "report of the nightly gate\n<!-- rankgate:gate:nightly -->")
    result = post(api, "report")
    assert result.action == "created"
    assert len(api.comments[7]) == 3
    nightly = post(api, "nightly report", key="nightly")
    assert nightly.action == "updated" and nightly.id == api.comments[7][1]["id"]


def test_body_that_already_has_the_marker_keeps_one(api: FakeGitHub) -> None:
    post(api, f"report\n\n{MARKER}\n")
    assert api.comments[7][0]["body"].count(MARKER) == 1


def test_comment_deleted_between_find_and_update_is_created_again(api: FakeGitHub) -> None:
    api.add_comment(7, f"old\n{MARKER}")
    api.fail(404, "Not Found", method="PATCH")
    result = post(api, "new")
    assert result.action == "created"
    assert api.comments[7][-1]["body"] == f"new\n\n{MARKER}\n"


# -- errors ---------------------------------------------------------------------------------
def test_401_says_the_token_is_bad(api: FakeGitHub) -> None:
    with pytest.raises(BackendError) as info:
        post(api, env=api.env(GITHUB_TOKEN="ghp_wrongWRONGwrong000000000000000"))
    message = str(info.value)
    assert "GitHub rejected the token on GET /repos/acme/search/issues/7/comments (401 Bad credentials)" in message
    assert "GITHUB_TOKEN is invalid or expired" in message
    assert "ghp_wrongWRONG" not in message
    assert len(api.requests) == 1  # not retried


def test_403_says_which_permission_is_missing(api: FakeGitHub) -> None:
    api.fail(403, "Resource not accessible by integration", method="POST")
    with pytest.raises(BackendError) as info:
        post(api)
    message = str(info.value)
    assert "GitHub refused POST /repos/acme/search/issues/7/comments on acme/search#7" in message
    assert "(403 Resource not accessible by integration)" in message
    assert "permissions: pull-requests: write" in message
    assert "forks" in message
    assert len(api.calls("POST")) == 1
    no_token(*error_texts(info))


def test_404_names_the_repository_and_pull_request(api: FakeGitHub) -> None:
    with pytest.raises(BackendError) as info:
        post(api, env=api.env(GITHUB_REF="refs/pull/99/merge"))
    message = str(info.value)
    assert "GitHub answered 404 (Not Found) for GET /repos/acme/search/issues/99/comments" in message
    assert "repository 'acme/search' or pull request #99 does not exist, or the token cannot see it" in message
    with pytest.raises(BackendError, match="repository 'acme/other' or pull request #7"):
        post(api, env=api.env(GITHUB_REPOSITORY="acme/other"))


def test_other_4xx_is_reported_with_githubs_message(api: FakeGitHub) -> None:
    api.fail(422, "Validation Failed", method="POST")
    with pytest.raises(BackendError, match=r"GitHub refused POST .* on acme/search#7 \(422 Validation Failed\)$"):
        post(api)


def test_5xx_is_retried_with_backoff_then_succeeds(api: FakeGitHub) -> None:
    api.fail(502, "Bad Gateway", times=2, method="GET")
    sleeps = Sleeps()
    result = post(api, sleep=sleeps, backoff=0.5)
    assert result.action == "created"
    assert sleeps == [0.5, 1.0]
    assert len(api.calls("GET")) == 3


def test_5xx_that_persists_fails_after_the_retries(api: FakeGitHub) -> None:
    api.fail(503, "Service Unavailable", times=10)
    sleeps = Sleeps()
    with pytest.raises(BackendError) as info:
        post(api, sleep=sleeps, retries=3)
    assert str(info.value) == (
        "GitHub answered GET /repos/acme/search/issues/7/comments with 503 Service Unavailable "
        "(gave up after 4 attempts)"
    )
    assert sleeps == [1.0, 2.0, 4.0]
    assert not api.comments[7]
    no_token(*error_texts(info))


def test_post_that_went_through_despite_a_5xx_is_not_doubled(api: FakeGitHub) -> None:
    api.fail(502, "Bad Gateway", method="POST", after=True)  # GitHub created it, then answered 502
    result = post(api, "report")
    assert result.action == "updated"
    assert len(api.comments[7]) == 1
    assert [r.method for r in api.requests] == ["GET", "POST", "GET", "PATCH"]


def test_post_retried_when_the_5xx_post_did_nothing(api: FakeGitHub) -> None:
    api.fail(500, "Server Error", method="POST", times=2)
    sleeps = Sleeps()
    result = post(api, sleep=sleeps)
    assert result.action == "created"
    assert len(api.comments[7]) == 1
    assert sleeps == [1.0, 2.0]
    assert [r.method for r in api.requests] == ["GET", "POST", "GET", "POST", "GET", "POST"]


def test_post_that_keeps_failing_reports_the_attempts(api: FakeGitHub) -> None:
    api.fail(500, "Server Error", method="POST", times=5)
    with pytest.raises(BackendError, match=r"with 500 Server Error \(gave up after 3 attempts\)$"):
        post(api, retries=2)
    assert not api.comments[7]


def test_secondary_rate_limit_is_waited_out_when_short(api: FakeGitHub) -> None:
    message = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
    api.fail(403, message, method="POST", headers={"Retry-After": "3"})
    sleeps = Sleeps()
    assert post(api, sleep=sleeps).action == "created"
    assert sleeps == [3.0]


def test_long_rate_limit_fails_with_a_clear_message(api: FakeGitHub) -> None:
    api.fail(403, "You have exceeded a secondary rate limit.", headers={"Retry-After": "900"})
    with pytest.raises(BackendError) as info:
        post(api)
    assert str(info.value).startswith(
        "GitHub rate limit hit on GET /repos/acme/search/issues/7/comments "
        "(403 You have exceeded a secondary rate limit.): it asks to wait 900 s."
    )
    assert "permissions" not in str(info.value)


def test_primary_rate_limit_reads_the_reset_header(api: FakeGitHub) -> None:
    api.fail(403, "API rate limit exceeded", headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1"})
    sleeps = Sleeps()
    assert post(api, sleep=sleeps).action == "created"
    assert sleeps == [0.0]  # the reset time is in the past


def test_network_error_is_a_backend_error(tmp_path: Path) -> None:
    with FakeGitHub() as closed:
        env = closed.env()
    sleeps = Sleeps()
    with pytest.raises(BackendError) as info:
        post_or_update_comment("x", env=env, sleep=sleeps, retries=1)
    message = str(info.value)
    assert message.startswith(f"cannot reach GitHub at {env['GITHUB_API_URL']} on GET /repos/acme/search/issues/7/")
    assert "ConnectError" in message and message.endswith("(gave up after 2 attempts)")
    assert sleeps == [1.0]
    assert info.value.__cause__ is None and info.value.__suppress_context__
    no_token(*error_texts(info))


def test_pagination_link_to_another_host_is_not_followed(api: FakeGitHub) -> None:
    api.max_per_page = 1
    api.add_comment(7, "one")
    api.add_comment(7, "two")
    api.next_link_base = "http://evil.example"
    with pytest.raises(BackendError, match=r"pagination link points to another host \(http://evil.example\)"):
        post(api)
    assert len(api.requests) == 1


def test_malformed_answers_through_an_injected_transport() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json={"not": "a list"})
        return httpx.Response(201, json={"id": 1})

    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": "acme/search", "GITHUB_REF": "refs/pull/3/merge"}
    with pytest.raises(BackendError, match="GET /repos/acme/search/issues/3/comments with something that is not a"):
        post_or_update_comment("x", env=env, transport=httpx.MockTransport(handler))

    def created(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            assert str(request.url) == "https://api.github.com/repos/acme/search/issues/3/comments?per_page=100"
            return httpx.Response(200, json=[])
        return httpx.Response(201, text="<html>oops</html>")

    with pytest.raises(BackendError, match="answered POST /repos/acme/search/issues/3/comments with 201 but no comm"):
        post_or_update_comment("x", env=env, transport=httpx.MockTransport(created))


# -- the token stays secret ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("status", "message"),
    [(401, "Bad credentials"), (403, "Resource not accessible by integration"), (404, "Not Found"), (500, "boom")],
)
def test_token_never_appears_in_errors_logs_or_output(
    api: FakeGitHub,
    status: int,
    message: str,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    api.fail(status, f"{message} (token {TOKEN} echoed by a proxy)", times=10)
    with pytest.raises(BackendError) as info:
        post(api)
    assert "echoed by a proxy" in str(info.value)  # GitHub's message is shown, scrubbed
    assert "token *** echoed" in str(info.value)
    out, err = capsys.readouterr()
    assert caplog.records  # httpx logged its requests
    no_token(*error_texts(info), out, err, caplog.text, *(str(r.__dict__) for r in caplog.records))


def test_token_is_not_in_reprs_or_results(api: FakeGitHub, caplog: pytest.LogCaptureFixture) -> None:
    from rankgate.gate.github_api import GitHubClient

    result = post(api)
    pr = pull_request_from_env(api.env())
    client = GitHubClient(pr, TOKEN, transport=None, retries=0, backoff=0, timeout=5, sleep=Sleeps())
    with client:
        no_token(repr(client), repr(client._client.headers), repr(result), repr(pr), caplog.text)
    assert TOKEN not in json.dumps(api.comments)


def test_token_with_a_newline_is_refused_without_echoing_it(api: FakeGitHub) -> None:
    with pytest.raises(ConfigError) as info:
        post(api, env=api.env(GITHUB_TOKEN=f"{TOKEN}\nX-Evil: 1"))
    assert "GITHUB_TOKEN holds spaces, control or non-ASCII characters" in str(info.value)
    no_token(*error_texts(info))
    assert not api.requests


# -- the environment ----------------------------------------------------------------------
def test_pull_request_from_the_event_payload(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    env = {"GITHUB_REPOSITORY": "acme/search", "GITHUB_EVENT_PATH": str(event), "GITHUB_REF": "refs/heads/x"}
    event.write_text(json.dumps({"pull_request": {"number": 12, "head": {"sha": "abc"}}}))
    assert pull_request_from_env(env).number == 12
    event.write_text(json.dumps({"issue": {"number": 5, "pull_request": {"url": "..."}}}))
    assert pull_request_from_env(env).number == 5
    event.write_text(json.dumps({"workflow_run": {"pull_requests": [{"number": 8}]}}))
    assert pull_request_from_env(env).number == 8
    event.write_text(json.dumps({"pull_request": {"number": 12}}))
    assert pull_request_from_env({**env, "RANKGATE_PULL_REQUEST": "31"}).number == 31
    event.write_text("not json")
    assert pull_request_from_env({**env, "GITHUB_REF": "refs/pull/4/merge"}).number == 4


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"GITHUB_REPOSITORY": "acme/search"}, "--post-comment needs GITHUB_TOKEN"),
        ({"GITHUB_TOKEN": "t0ken"}, "--post-comment needs GITHUB_REPOSITORY (owner/name)"),
        ({"GITHUB_TOKEN": "t0ken", "GITHUB_REPOSITORY": "acme"}, "GITHUB_REPOSITORY must look like owner/name"),
        (
            {"GITHUB_TOKEN": "t0ken", "GITHUB_REPOSITORY": "a/b", "GITHUB_REF": "refs/heads/main"},
            "--post-comment needs a pull request, and this run has none (event 'unknown', "
            "GITHUB_REF 'refs/heads/main')",
        ),
        (
            {"GITHUB_TOKEN": "t0ken", "GITHUB_REPOSITORY": "a/b", "RANKGATE_PULL_REQUEST": "x7"},
            "RANKGATE_PULL_REQUEST must be a pull request number. Got 'x7'",
        ),
        (
            {"GITHUB_TOKEN": "t0ken", "GITHUB_REPOSITORY": "a/b", "GITHUB_API_URL": "ftp://example.com"},
            "GITHUB_API_URL must be an http(s) URL without credentials",
        ),
        (
            {"GITHUB_TOKEN": "t0ken", "GITHUB_REPOSITORY": "a/b", "GITHUB_API_URL": "https://u:pw@example.com"},
            "Got '<a URL with credentials>'",
        ),
    ],
)
def test_environment_errors(env: dict[str, str], expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        post_or_update_comment("x", env={"GITHUB_REF": "refs/pull/1/merge", **env})
    assert expected in str(info.value)
    assert "pw" not in str(info.value)


@pytest.mark.parametrize("key", ["", "a--b", "has space", "x>y", "-lead", "k" * 101])
def test_bad_comment_keys(key: str) -> None:
    with pytest.raises(ConfigError, match="comment_key: The comment key must be"):
        comment_marker(key)


def test_github_enterprise_api_url(tmp_path: Path) -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.method == "GET":
            return httpx.Response(200, json=[])
        return httpx.Response(201, json={"id": 9, "html_url": "https://ghe.example/acme/search/pull/2#c9"})

    env = {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": "acme/search",
        "GITHUB_REF": "refs/pull/2/merge",
        "GITHUB_API_URL": "https://ghe.example/api/v3/",
    }
    result = post_or_update_comment("x", env=env, transport=httpx.MockTransport(handler))
    assert result == CommentResult("created", "https://ghe.example/acme/search/pull/2#c9", 9)
    assert seen == [
        "https://ghe.example/api/v3/repos/acme/search/issues/2/comments?per_page=100",
        "https://ghe.example/api/v3/repos/acme/search/issues/2/comments",
    ]


# -- body size and the job summary --------------------------------------------------------
def test_long_body_is_cut_to_githubs_limit_keeping_the_marker() -> None:
    body = "\n".join(f"| row {i} | {'x' * 50} |" for i in range(3000)) + f"\n\n{MARKER}\n"
    fitted = fit_comment(body, MARKER)
    assert len(fitted) <= MAX_COMMENT_CHARS
    assert fitted.endswith(
        f"truncated to fit a GitHub comment: the full report is in the job summary._\n\n\n{MARKER}\n"
    )
    assert fitted.count(MARKER) == 1
    kept = fitted.split("\n\n_…")[0].split("\n")
    assert kept[-1].endswith("|") and kept == body.split("\n")[: len(kept)]  # cut at a line end
    assert fit_comment("short", MARKER) == f"short\n\n{MARKER}\n"


def test_step_summary_appends(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step output\n")
    assert write_step_summary("### gate\nok", env={"GITHUB_STEP_SUMMARY": str(summary)}) is True
    assert write_step_summary("second", env={"GITHUB_STEP_SUMMARY": str(summary)}) is True
    assert summary.read_text() == "# earlier step output\n### gate\nok\n\nsecond\n\n"
    assert write_step_summary("x", env={}) is False


def test_step_summary_stays_under_the_limit(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_bytes(b"a" * (MAX_SUMMARY_BYTES - 1000))
    write_step_summary("é" * 5000, env={"GITHUB_STEP_SUMMARY": str(summary)})
    data = summary.read_bytes()
    assert len(data) <= MAX_SUMMARY_BYTES
    assert data.decode("utf-8").endswith("see the JSON output._\n")


def test_step_summary_unwritable_is_a_backend_error(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="cannot append to the job summary GITHUB_STEP_SUMMARY="):
        write_step_summary("x", env={"GITHUB_STEP_SUMMARY": str(tmp_path)})  # a directory


# -- end to end through the CLI -----------------------------------------------------------
def test_gate_post_comment_end_to_end(
    api: FakeGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    for name, value in api.env(GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md")).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("RANKGATE_STORE", raising=False)
    argv = [
        "gate",
        "--qrels",
        str(demo_qrels_path()),
        "--run",
        str(demo_run_path("dense_v2")),
        "--baseline-run",
        str(demo_run_path("dense")),
        "--config",
        str(demo_dir() / "gates.yaml"),
        "--post-comment",
    ]
    codes, errs = [], []
    for _ in range(2):
        codes.append(exit_code(*argv))
        out, err = capsys.readouterr()
        errs.append(err)
        no_token(out, err, caplog.text)
    assert codes == [1, 1]  # the demo candidate fails its gate; posting does not change that
    [comment] = api.comments[7]
    assert f"PR comment created: {comment['html_url']}" in errs[0]
    assert f"PR comment updated: {comment['html_url']}" in errs[1]
    assert comment["body"].startswith("### ❌ rankgate: retrieval quality gate failed\n")
    assert "recall@5 dropped from 69.0% to 60.4%" in comment["body"]
    assert comment["body"].endswith(f"\n{MARKER}\n") and comment["body"].count(MARKER) == 1
    summary = (tmp_path / "summary.md").read_text()
    assert summary.count("### ❌ rankgate: retrieval quality gate failed") == 2


def test_gate_post_comment_failure_exits_2(
    api: FakeGitHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in api.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("RANKGATE_STORE", raising=False)
    api.fail(403, "Resource not accessible by integration")
    qrels, run = str(demo_qrels_path()), str(demo_run_path("dense"))
    code = exit_code(
        "gate", "--qrels", qrels, "--run", run, "--config", str(demo_dir() / "gates.yaml"), "--post-comment"
    )
    out, err = capsys.readouterr()
    assert code == 2
    assert "rankgate: error: GitHub refused GET /repos/acme/search/issues/7/comments" in err
    assert "pull-requests: write" in err
    no_token(out, err)


# -- the composite action -----------------------------------------------------------------
def gate_step() -> dict:
    import yaml

    action = yaml.safe_load((Path(__file__).parents[1] / "action.yml").read_text())
    [step] = [s for s in action["runs"]["steps"] if s.get("id") == "gate"]
    return {"action": action, **step}


def run_gate_step(api: FakeGitHub, tmp_path: Path, **inputs: str) -> tuple[subprocess.CompletedProcess, dict]:
    """The action's gate script, run with bash as Actions runs it (``bash -eo pipefail``)."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    output = tmp_path / "github_output"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RANKGATE_"))},
        **api.env(),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "INPUT_QRELS": str(demo_qrels_path()),
        "INPUT_RUN": str(demo_run_path("dense_v2")),
        "INPUT_CONFIG": str(demo_dir() / "gates.yaml"),
        "INPUT_BASELINE_RUN": str(demo_run_path("dense")),
        "INPUT_BASELINE": "",
        "INPUT_STORE": "",
        "INPUT_TAGS": "",
        "INPUT_COMMENT": "true",
        "INPUT_COMMENT_KEY": "default",
        "INPUT_ARGS": "",
        "PR_NUMBER": "7",
        **inputs,
    }
    done = subprocess.run(
        [bash, "--noprofile", "--norc", "-eo", "pipefail", "-c", gate_step()["run"]],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    no_token(done.stdout, done.stderr, output.read_text() if output.exists() else "")
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines()) if output.exists() else {}
    return done, outputs


def test_action_yml_is_a_composite_action_fed_through_the_environment() -> None:
    step = gate_step()
    action = step["action"]
    assert action["runs"]["using"] == "composite"
    assert {"qrels", "run", "config", "baseline-run", "baseline", "store", "args", "python-version"} <= set(
        action["inputs"]
    )
    assert set(action["outputs"]) == {"verdict", "exit-code", "report", "comment-file", "junit"}
    assert action["runs"]["steps"][0]["uses"].split("@")[0] == "actions/setup-python"
    assert step["shell"] == "bash"
    assert all(k in ("GITHUB_TOKEN", "PR_NUMBER") or k.startswith("INPUT_") for k in step["env"])
    assert "${{" not in step["run"]  # inputs only through the environment: no script injection


def test_action_gate_step_posts_and_sets_outputs(api: FakeGitHub, tmp_path: Path) -> None:
    done, outputs = run_gate_step(api, tmp_path, INPUT_ARGS="--name 'candidate v2'")
    assert done.returncode == 1, done.stderr
    assert outputs["verdict"] == "fail" and outputs["exit-code"] == "1"
    assert json.loads(Path(outputs["report"]).read_text())["verdict"] == "fail"
    assert Path(outputs["junit"]).read_text().startswith("<?xml")
    [comment] = api.comments[7]
    assert "run `candidate v2`" in comment["body"]  # the extra args arrived, quoting kept
    assert comment["body"] == Path(outputs["comment-file"]).read_text()
    assert "### ❌ rankgate: retrieval quality gate failed" in done.stdout
    assert "### ❌ rankgate" in (tmp_path / "summary.md").read_text()


def test_action_gate_step_outside_a_pull_request_and_on_bad_config(api: FakeGitHub, tmp_path: Path) -> None:
    bad = tmp_path / "gates.yaml"
    bad.write_text("gates:\n  - name: recall_at_5\n    threshold: high\n")
    done, outputs = run_gate_step(api, tmp_path, PR_NUMBER="", INPUT_CONFIG=str(bad))
    assert done.returncode == 2
    assert outputs["verdict"] == "error" and outputs["exit-code"] == "2"
    assert "::notice title=rankgate::not a pull request: no PR comment posted" in done.stdout
    assert "gates[0].threshold" in done.stderr
    assert not api.requests
