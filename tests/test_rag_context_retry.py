"""``rankgate rag context`` when verdicts are unreadable: null means, a last line that says what to do,
``--retry-failed`` (label's), and ``judgments.*.failed`` counting the stored failures on a rerun."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankgate.label.context import ContextReport
from rankgate.label.outcome import LabelReport
from rankgate.render.answers import render
from tests.cli_support import invoke
from tests.label_support import FakeChatServer
from tests.test_context_judge import ANSWERS, CORPUS, QUERIES, RUN, scripted


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-context-retry-test")


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    paths = {k: tmp_path / f"{k}.jsonl" for k in ("corpus", "queries", "answers")}
    paths["corpus"].write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in CORPUS.items()))
    paths["queries"].write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in QUERIES.items()))
    answered = {q: a for q, a in ANSWERS.items() if q != "q3"}  # q3 is not in the run: it would score 0, complete
    paths["answers"].write_text(
        "".join(json.dumps({"query_id": i, "answers": [a]}) + "\n" for i, a in answered.items())
    )
    (tmp_path / "run.txt").write_text(RUN)
    return {**{k: str(v) for k, v in paths.items()}, "run": str(tmp_path / "run.txt")}


def args(files: dict[str, str], server: FakeChatServer, *extra: str) -> list[str]:
    return [
        "rag", "context", "--run", files["run"], "--corpus", files["corpus"], "--queries", files["queries"],
        "--answers", files["answers"], "-k", "3", "--base-url", server.url, "--model", "judge-model",
        "--backoff", "0.01", "--no-progress", "--parse-retries", "0", *extra,
    ]  # fmt: skip


@pytest.mark.extra("label")
def test_unreadable_verdicts_give_null_means_and_only_retry_failed_asks_again(capsys, files):
    with FakeChatServer(reply=scripted, always="garbage") as server:
        code, out, err = invoke(capsys, *args(files, server, "--format", "json"))
        assert len(server.records) == 8  # 3 claims + 5 passages, each asked once (--parse-retries 0)
    body = json.loads(out)
    assert code == 1
    assert body["aggregate"] == {"ContextRecall@3": None, "ContextPrecision@3": None}  # no query complete: no mean
    assert body["queries"]["evaluated"] == 0 and body["queries"]["incomplete"] == 2
    assert (
        err.splitlines()[-2] == "warning: no query has all its verdicts, so both means are null; see the query counts"
    )
    assert err.splitlines()[-1] == (
        "error: 2 queries incomplete; 8 verdicts are unreadable and stored as failed: rerun with --retry-failed to "
        "ask for them again (--json-mode or more --parse-retries may help); exit 1"
    )
    with FakeChatServer(reply=scripted) as server:  # the endpoint works now
        code, out, err = invoke(capsys, *args(files, server, "--format", "json"))
        assert code == 1 and server.records == []  # failed verdicts are final: a plain rerun asks nothing
        judgments = json.loads(out)["judgments"]
        assert (judgments["recall"]["failed"], judgments["recall"]["failed_before"]) == (3, 3)
        assert (judgments["precision"]["failed"], judgments["precision"]["failed_before"]) == (5, 5)
        assert "rerun with --retry-failed" in err.splitlines()[-1]
        code, out, err = invoke(capsys, *args(files, server, "--format", "json", "--retry-failed"))
        assert code == 0, err
        assert len(server.records) == 8
    body = json.loads(out)
    q1p = round((1 / 2 + 2 / 3) / 2, 6)
    assert body["aggregate"] == {
        "ContextRecall@3": round((0.5 + 1.0) / 2, 6),
        "ContextPrecision@3": round((q1p + 1.0) / 2, 6),
    }
    assert body["judgments"]["recall"]["failed"] == 0 and body["judgments"]["precision"]["new"] == 5


@pytest.mark.extra("label")
def test_the_text_output_shows_a_dash_for_a_mean_over_no_query(capsys, files):
    with FakeChatServer(reply=scripted, always="garbage") as server:
        code, out, _ = invoke(capsys, *args(files, server))
    assert code == 1
    rows = {line.split()[1]: line.split()[3] for line in out.splitlines() if "Context" in line and "│" in line}
    assert rows == {"ContextRecall@3": "-", "ContextPrecision@3": "-"}


def test_the_mean_of_no_query_is_none_and_renders_as_null_and_a_dash():
    empty = LabelReport({}, {}, {}, {}, {}, None)
    per_query = {"q1": {"ContextRecall@5": None, "ContextPrecision@5": 0.5}}
    report = ContextReport(5, per_query, {"evaluated": 0, "incomplete": 1}, empty, empty)
    assert report.aggregate == {"ContextRecall@5": None, "ContextPrecision@5": 0.5}
    body = report.to_dict()
    assert json.loads(render(body, "json", title="t"))["aggregate"]["ContextRecall@5"] is None
    text = render(body, "text", title="t")
    assert "│ ContextRecall@5    │      - │" in text and "0.5000" in text


def test_answer_recall_over_no_query_is_none_too():
    from rankgate.core.run import Run
    from rankgate.rag.answers import answer_recall

    result = answer_recall(Run.from_dict({"q1": {"p1": 1.0}}), {"p1": "Paris"}, {}, ks=(1, 5))
    assert result.aggregate == {"AnswerRecall@1": None, "AnswerRecall@5": None}
    assert "│ AnswerRecall@1 │    - │" in render(result.to_dict(), "text", title="t")


def test_the_last_line_says_what_brings_each_kind_of_missing_verdict_in():
    from rankgate.render.answers import context_incomplete_text

    def body(stop: str | None, failed: int, errors: int, incomplete: int = 1) -> dict[str, object]:
        counts = {"failed": failed, "errors": errors}
        return {"queries": {"incomplete": incomplete}, "stop_reason": stop, "judgments": {"recall": counts,
                "precision": {"failed": 0, "errors": 0}}}  # fmt: skip

    assert context_incomplete_text(body("max-cost", 0, 0)) == (
        "error: 1 query incomplete; stopped before the next request could cross --max-cost: run the same command "
        "again to go on (each run spends up to --max-cost); exit 1"
    )
    assert context_incomplete_text(body("errors", 1, 2, 3)) == (
        "error: 3 queries incomplete; 1 verdict is unreadable and stored as failed: rerun with --retry-failed to ask "
        "for it again (--json-mode or more --parse-retries may help); 2 verdicts got no answer: run the same command "
        "again to ask for them; exit 1"
    )
    assert context_incomplete_text(body("claimed", 0, 0)).endswith(
        "another run on this store was judging some pairs: run the same command again once the other run is done; "
        "exit 1"
    )
