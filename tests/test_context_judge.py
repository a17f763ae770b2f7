"""``rankgate rag context``: LLM-judged ContextRecall@k and ContextPrecision@k, hand-worked with a scripted judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankgate.label.context import context_precision, split_claims
from tests.cli_support import invoke
from tests.label_support import FakeChatServer, texts_of

KEY = "sk-context-test-Vx3-never-show-me"

CORPUS = {
    "p1": "Lyon is a large city on the Rhone.",
    "p2": "Paris is the capital of France, a USEFUL fact.",
    "p3": "Paris is the capital of France; USEFUL again.",
    "p4": "It has 2 million people, says the census.",
    "p5": "The tower is 300 m tall, USEFUL.",
    "p6": "Towers are built of steel.",
}
QUERIES = {"q1": "What is the capital of France?", "q2": "How tall is the tower?", "q3": "Who built it?"}
ANSWERS = {
    "q1": "Paris is the capital of France. It has 2 million people.",
    "q2": "The tower is 300 m tall.",
    "q3": "Gustave.",
}
RUN = """\
q1 Q0 p1 1 3.0 r
q1 Q0 p2 2 2.0 r
q1 Q0 p3 3 1.0 r
q1 Q0 p4 4 0.5 r
q2 Q0 p5 1 3.0 r
q2 Q0 p6 2 2.0 r
q2 Q0 pX 3 1.0 r
"""


def scripted(user: str) -> str:
    """Recall: supported iff the statement (lowercase, no final stop) is in the context; precision: USEFUL in it."""
    query, passage = texts_of(user)
    if '"supported"' in user:
        statement = query.split("Statement: ", 1)[1].rstrip(".").lower()
        return json.dumps({"supported": int(statement in passage.lower()), "reason": "scripted"})
    return json.dumps({"useful": int("USEFUL" in passage), "reason": "scripted"})


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    paths = {k: tmp_path / f"{k}.jsonl" for k in ("corpus", "queries", "answers")}
    paths["corpus"].write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in CORPUS.items()))
    paths["queries"].write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in QUERIES.items()))
    paths["answers"].write_text("".join(json.dumps({"query_id": i, "answers": [a]}) + "\n" for i, a in ANSWERS.items()))
    (tmp_path / "run.txt").write_text(RUN)
    return {**{k: str(v) for k, v in paths.items()}, "run": str(tmp_path / "run.txt")}


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def args(files: dict[str, str], server: FakeChatServer, *extra: str) -> list[str]:
    return [
        "rag", "context", "--run", files["run"], "--corpus", files["corpus"], "--queries", files["queries"],
        "--answers", files["answers"], "-k", "3", "--base-url", server.url, "--model", "judge-model",
        "--backoff", "0.01", "--no-progress", *extra,
    ]  # fmt: skip


def test_claims_and_the_precision_formula_by_hand():
    assert split_claims(ANSWERS["q1"]) == ["Paris is the capital of France.", "It has 2 million people."]
    assert split_claims("Dr. Smith said e.g. 3.5 kg. Mr. Li agreed.") == [
        "Dr. Smith said e.g. 3.5 kg.",
        "Mr. Li agreed.",
    ]
    assert split_claims("He left. she stayed.") == ["He left. she stayed."]  # no capital after the stop: one claim
    assert context_precision([0, 1, 1]) == round((1 / 2 + 2 / 3) / 2, 6)
    assert context_precision([1, 0, 0]) == 1.0 and context_precision([]) == 0.0
    assert context_precision([0, 0, 1]) == round(1 / 3, 6)


@pytest.mark.extra("label")
def test_hand_worked_values_and_a_rerun_that_pays_nothing(capsys, files, tmp_path):
    with FakeChatServer(reply=scripted) as server:
        code, out, err = invoke(capsys, *args(files, server, "--format", "json", "--per-query"))
        assert code == 0, err
        first = len(server.records)
        code2, out2, _ = invoke(capsys, *args(files, server, "--format", "json", "--per-query"))
        assert code2 == 0 and len(server.records) == first  # every verdict came from the store
    body = json.loads(out)
    # q1: claims "Paris is the capital of France." (in p2) and "It has 2 million people." (only in p4, rank 4): 1/2.
    #     verdicts p1 0, p2 1, p3 1: (P@2 + P@3) / 2 = (1/2 + 2/3) / 2.
    # q2: one claim, in p5: 1. verdicts p5 1, p6 0, pX (no text: 0, not asked): P@1 / 1 = 1.
    # q3: not in the run: 0 and 0.
    q1p = round((1 / 2 + 2 / 3) / 2, 6)
    assert body["per_query"]["q1"] == {
        "ContextRecall@3": 0.5, "ContextPrecision@3": q1p, "claims": 2, "supported": 1, "passages": 3, "useful": 2,
    }  # fmt: skip
    assert body["per_query"]["q2"] == {
        "ContextRecall@3": 1.0, "ContextPrecision@3": 1.0, "claims": 1, "supported": 1, "passages": 3, "useful": 1,
    }  # fmt: skip
    assert body["per_query"]["q3"]["ContextRecall@3"] == 0.0 and body["per_query"]["q3"]["ContextPrecision@3"] == 0.0
    assert body["aggregate"] == {"ContextRecall@3": 0.5, "ContextPrecision@3": round((q1p + 1.0) / 3, 6)}
    assert body["queries"] == {"evaluated": 3, "incomplete": 0, "missing_from_run": 1, "run_only": 0}
    assert body["missing_passages"] == {"count": 1, "examples": ["pX"]}
    assert first == 3 + 5  # recall: 2 + 1 claims; precision: 3 + 2 passages (pX has no text)
    assert json.loads(out2)["aggregate"] == body["aggregate"]
    assert KEY not in out + err and not any(KEY.encode() in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


@pytest.mark.extra("label")
def test_another_run_with_the_same_context_reuses_the_verdicts(capsys, files, tmp_path):
    other = tmp_path / "other.txt"
    other.write_text(RUN.replace("q2 Q0 p6 2 2.0 r", "q2 Q0 p6 2 5.0 r"))  # q2 now ranks p6 first; q1 unchanged
    store = str(tmp_path / "verdicts.sqlite")
    with FakeChatServer(reply=scripted) as server:
        assert invoke(capsys, *args(files, server, "--store", store))[0] == 0
        before = len(server.records)
        code, out, err = invoke(
            capsys, *args({**files, "run": str(other)}, server, "--store", store, "--format", "json")
        )
        assert code == 0, err
    # q2's context changed (new order: a new context id), so its one claim is judged again; its passages are not.
    assert len(server.records) - before == 1
    assert json.loads(out)["aggregate"]["ContextPrecision@3"] == round((round((1 / 2 + 2 / 3) / 2, 6) + 0.5) / 3, 6)


@pytest.mark.extra("label")
def test_unreadable_verdicts_leave_a_query_incomplete_and_exit_1(capsys, files):
    with FakeChatServer(reply=scripted, faults={"Statement: The tower": ["garbage"] * 3}) as server:
        code, out, err = invoke(capsys, *args(files, server, "--format", "json", "--parse-retries", "2"))
    body = json.loads(out)
    assert code == 1 and "1 query incomplete" in err
    assert body["queries"]["incomplete"] == 1 and body["judgments"]["recall"]["failed"] == 1
    assert body["aggregate"]["ContextRecall@3"] == round((0.5 + 0.0) / 2, 6)  # q2 left out of the mean


@pytest.mark.extra("label")
def test_the_cost_cap_stops_cleanly_and_a_rerun_with_more_pays_only_the_rest(capsys, files, tmp_path):
    budget = ("--price-in", "1", "--price-out", "1", "--max-tokens", "50", "--concurrency", "1", "--format", "json")
    with FakeChatServer(reply=scripted) as server:
        code, out, err = invoke(capsys, *args(files, server, *budget, "--max-cost", "0.002"))
        sent = len(server.records)
        body = json.loads(out)
        assert code == 1 and "--max-cost" in err and "Traceback" not in err
        assert 0 < sent < 8 and body["usage"]["requests"] == sent and 0 < body["usage"]["cost"] <= 0.002
        assert body["stop_reason"] == "max-cost" and body["queries"]["incomplete"] >= 1
        code, out, err = invoke(capsys, *args(files, server, *budget, "--max-cost", "1"))
        assert code == 0, err
        assert len(server.records) == 8  # the rerun sent only what the first left
    assert json.loads(out)["aggregate"]["ContextRecall@3"] == 0.5
