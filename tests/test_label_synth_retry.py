"""``rankgate label synth``: ``--retry-failed`` asks malformed answers again, and Ctrl-C says what is saved."""

from __future__ import annotations

import json

import pytest

from tests.cli_support import invoke
from tests.label_support import FakeChatServer
from tests.test_label_interrupt import interrupt_after
from tests.test_synth import KEY, PLAN, args, corpus, scripted  # noqa: F401 (corpus: the fixture)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def mended(user: str) -> str:
    """The scripted model, now answering the passage it could not (ref06) with a question about it."""
    if "ref06" in user:
        return json.dumps({"question": "How tall is the garnet lighthouse near garnetport?", "answer": "106 metres"})
    return scripted(user)


@pytest.mark.extra("label")
@pytest.mark.extra("bench")
def test_malformed_answers_are_asked_again_only_with_retry_failed(capsys, corpus, tmp_path):  # noqa: F811
    out = tmp_path / "golden"
    with FakeChatServer(reply=scripted) as server:
        code, text, err = invoke(capsys, *args(corpus, out, server, "--parse-retries", "0"))
    assert code == 0, err
    assert "1 malformed answers are stored as failed: --retry-failed asks for them again" in text
    with FakeChatServer(reply=mended) as server:
        code, stdout, err = invoke(capsys, *args(corpus, out, server, "--parse-retries", "0", "--format", "json"))
        assert code == 0 and server.records == []  # a plain rerun asks nothing
        assert json.loads(stdout)["counts"]["new"] == 0 and json.loads(stdout)["counts"]["malformed"] == 1
        code, stdout, err = invoke(capsys, *args(corpus, out, server, "--retry-failed", "--format", "json"))
        assert code == 0, err
        assert len(server.records) == 1 and "ref06" in server.records[0].passage
    counts = json.loads(stdout)["counts"]
    assert (counts["malformed"], counts["answered"], counts["new"], counts["from_store"]) == (0, 10, 1, 9)
    assert PLAN["ref00"] in (out / "queries.jsonl").read_text()


@pytest.mark.extra("label")
def test_ctrl_c_says_how_many_answers_are_saved_and_where(capsys, corpus, tmp_path, monkeypatch):  # noqa: F811
    out = tmp_path / "golden"
    with FakeChatServer(reply=scripted) as server, monkeypatch.context() as patch:
        interrupt_after(patch, 3)
        code, _, err = invoke(capsys, *args(corpus, out, server, "--concurrency", "1"))
    assert code == 130 and "Aborted" not in err
    assert err.splitlines()[-1] == (
        f"rankgate: interrupted; 3 of 10 answers are saved in {out / 'synth.sqlite'}: run the same command again to "
        "ask only for the other 7 (the request in flight was not stored and will be asked again)"
    )
