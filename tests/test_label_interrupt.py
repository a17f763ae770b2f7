"""Ctrl-C while judging: the judgments kept, where, and how to go on, for ``label``, ``rag context`` and the library.

Ctrl-C is simulated without signals or clocks: the judge raises `KeyboardInterrupt` on its
(N + 1)-th call, after N answers were stored (with two workers, once both are inside a call, so
that two requests are in flight).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from rankgate.label.chat import ChatClient
from rankgate.label.llm import LLMJudge
from rankgate.label.outcome import LabelInterrupted
from rankgate.label.pooling import build_pool
from rankgate.label.prompts import Prompt
from rankgate.label.runner import label_pool
from rankgate.label.store import JudgmentStore
from rankgate.label.types import Judgment, Pair
from rankgate.render.interrupted import interrupted_text
from tests.cli_support import invoke
from tests.label_support import FakeChatServer, write_collection
from tests.test_context_judge import scripted
from tests.test_label_runner import collection

KEY = "sk-interrupt-test-Rt5-never-show-me"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def interrupt_after(monkeypatch: pytest.MonkeyPatch, answers: int, in_flight: int = 1) -> dict[str, int]:
    """Make `LLMJudge.judge` answer ``answers`` calls, then hold the next ones until ``in_flight`` are
    inside a call, and raise `KeyboardInterrupt` there (what Ctrl-C does to a waiting request)."""
    real = LLMJudge.judge
    calls = {"n": 0, "held": 0}

    async def judge(self: LLMJudge, pair: Pair) -> Judgment:
        calls["n"] += 1
        if calls["n"] <= answers:
            return await real(self, pair)
        calls["held"] += 1
        if calls["held"] >= in_flight:
            raise KeyboardInterrupt
        await asyncio.Event().wait()  # held until the interrupt cancels it
        raise AssertionError("not reached")

    monkeypatch.setattr(LLMJudge, "judge", judge)
    return calls


@pytest.mark.extra("label")
def test_label_pool_says_what_is_saved_and_a_rerun_asks_only_for_the_rest(tmp_path, monkeypatch):
    corpus, queries, run = collection(3, 4)
    pool = build_pool([run], 4)
    with FakeChatServer() as server, JudgmentStore(tmp_path / "s.sqlite") as store:
        client = ChatClient(server.url, "fake-model", backoff=0.01)
        judge = LLMJudge(client, Prompt.builtin("graded"))
        with monkeypatch.context() as patch:
            interrupt_after(patch, 5, in_flight=2)
            with pytest.raises(LabelInterrupted) as stop:
                label_pool(pool, judge, store, queries=queries, corpus=corpus, concurrency=2)
        assert (stop.value.saved, stop.value.total, stop.value.store, stop.value.in_flight) == (
            5, 12, str(tmp_path / "s.sqlite"), 2
        )  # fmt: skip
        assert isinstance(stop.value, KeyboardInterrupt) and store.count(judge.judge_id) == 5
        assert store._db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0  # nothing left claimed
        sent = len(server.records)
        report = label_pool(pool, judge, store, queries=queries, corpus=corpus, concurrency=2)
        assert report.complete and report.counts["done_before"] == 5 and report.counts["new"] == 7
        assert len(server.records) - sent == 7


def test_an_in_memory_store_says_nothing_is_kept(monkeypatch):
    corpus, queries, run = collection(1, 2)

    class Stop:
        kind, needs_text, judge_id, model, prompt_hash, tier = "bm25", True, "bm25:x", "", "", "C"

        def describe(self) -> dict[str, object]:
            return {"judge": self.kind}

        def judge_batch(self, pairs: Any) -> list[Judgment]:
            raise KeyboardInterrupt

    with JudgmentStore(":memory:") as store, pytest.raises(LabelInterrupted) as stop:
        label_pool(build_pool([run], 2), Stop(), store, queries=queries, corpus=corpus)  # type: ignore[arg-type]
    assert (stop.value.saved, stop.value.total, stop.value.store) == (0, 2, None)
    assert (
        interrupted_text(stop.value)
        == "rankgate: interrupted; nothing was saved (no store to keep them; 0 of 2 judgments)"
    )


@pytest.mark.extra("label")
def test_label_cli_names_the_saved_judgments_the_store_and_how_to_resume(capsys, tmp_path, monkeypatch):
    coll = write_collection(tmp_path)
    store = tmp_path / "llm.sqlite"
    argv = [
        "label", "--run", coll["run"], "--corpus", coll["corpus"], "--queries", coll["queries"], "--depth", "4",
        "--base-url", "", "--model", "fake-model", "--out", str(tmp_path / "llm.txt"), "--backoff", "0.01",
        "--no-progress", "--concurrency", "2",
    ]  # fmt: skip
    with FakeChatServer() as server:
        argv[argv.index("--base-url") + 1] = server.url
        with monkeypatch.context() as patch:
            interrupt_after(patch, 5, in_flight=2)
            code, stdout, err = invoke(capsys, *argv)
        assert code == 130 and "Aborted" not in err and "Traceback" not in err
        assert err.splitlines()[-1] == (
            f"rankgate: interrupted; 5 of 12 judgments are saved in {store}: run the same command again to ask only "
            "for the other 7 (the 2 requests in flight were not stored and will be asked again)"
        )
        assert not (tmp_path / "llm.txt").exists() and stdout == ""
        sent = len(server.records)
        code, _, err = invoke(capsys, *argv)
        assert code == 0, err
        assert len(server.records) - sent == 7  # the rerun asked only for the rest


@pytest.mark.extra("label")
def test_rag_context_cli_counts_the_verdicts_of_both_passes(capsys, tmp_path, monkeypatch):
    from tests.test_context_judge import ANSWERS, CORPUS, QUERIES, RUN

    paths = {k: tmp_path / f"{k}.jsonl" for k in ("corpus", "queries", "answers")}
    paths["corpus"].write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in CORPUS.items()))
    paths["queries"].write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in QUERIES.items()))
    paths["answers"].write_text("".join(json.dumps({"query_id": i, "answers": [a]}) + "\n" for i, a in ANSWERS.items()))
    (tmp_path / "run.txt").write_text(RUN)
    with FakeChatServer(reply=scripted) as server:
        argv = [
            "rag", "context", "--run", str(tmp_path / "run.txt"), "--corpus", str(paths["corpus"]), "--queries",
            str(paths["queries"]), "--answers", str(paths["answers"]), "-k", "3", "--base-url", server.url,
            "--model", "judge-model", "--backoff", "0.01", "--no-progress", "--concurrency", "1",
        ]  # fmt: skip
        with monkeypatch.context() as patch:
            interrupt_after(patch, 4)  # the 3 recall verdicts, then 1 of the 5 precision ones
            code, _, err = invoke(capsys, *argv)
        assert code == 130 and "Aborted" not in err
        assert err.splitlines()[-1] == (
            f"rankgate: interrupted; 4 of 8 verdicts are saved in {tmp_path / 'run.context.sqlite'}: run the same "
            "command again to ask only for the other 4 (the request in flight was not stored and will be asked again)"
        )
        sent = len(server.records)
        code, out, err = invoke(capsys, *argv, "--format", "json")
        assert code == 0, err
        assert len(server.records) - sent == 4
        assert json.loads(out)["queries"]["evaluated"] == 3
