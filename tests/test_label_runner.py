"""Judging a pool end to end against the local server: resume, cache, budgets, the cost cap,
and a run killed with SIGKILL part-way that, restarted, judges every pair exactly once."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.label.chat import ChatClient
from rankgate.label.cost import CostMeter, Prices, worst_case_input_tokens
from rankgate.label.llm import LLMJudge
from rankgate.label.pooling import build_pool
from rankgate.label.prompts import Prompt
from rankgate.label.runner import label_pool
from rankgate.label.secret import Secret
from rankgate.label.store import JudgmentStore
from tests.label_support import FakeChatServer, expected_grade, make_collection, words

KEY = "sk-runner-test-key-0123456789"


def collection(n_queries: int, docs: int) -> tuple[dict[str, str], dict[str, str], Run]:
    corpus_text, queries_text, _ = make_collection(n_queries, docs)

    corpus = {}
    for line in corpus_text.splitlines():
        row = json.loads(line)
        corpus[row["_id"]] = f"{row['title']}\n\n{row['text']}"
    queries = {json.loads(line)["_id"]: json.loads(line)["text"] for line in queries_text.splitlines()}
    run = Run.from_dict(
        {q: {f"d{q[1:]}_{j}": float(10 - j) for j in range(docs)} for q in queries},
        name="sys",
    )
    return corpus, queries, run


def judge_for(
    server: FakeChatServer, *, prices: Prices | None = None, max_cost: float | None = None, **kw: Any
) -> LLMJudge:
    meter = CostMeter(prices or Prices(), max_cost=max_cost)
    client = ChatClient(server.url, "fake-model", api_key=Secret(KEY), backoff=0.01, meter=meter, **kw)
    return LLMJudge(client, Prompt.builtin("graded"))


@pytest.mark.extra("label")
def test_labels_land_in_the_store_and_a_rerun_sends_nothing(tmp_path):
    corpus, queries, run = collection(3, 4)
    pool = build_pool([run], 4)
    with FakeChatServer() as server, JudgmentStore(tmp_path / "s.sqlite") as store:
        report = label_pool(pool, judge_for(server), store, queries=queries, corpus=corpus, concurrency=3)
        assert report.complete and report.counts["new"] == 12 and len(server.records) == 12
        assert {(j.query_id, j.doc_id): j.label for j in report.judgments} == {
            (q, d): expected_grade(q, d) for q, d, _ in pool.pairs
        }
        again = label_pool(pool, judge_for(server), store, queries=queries, corpus=corpus)
        assert len(server.records) == 12  # nothing sent twice
        assert again.counts["done_before"] == 12 and again.counts["new"] == 0
        assert len(again.judgments) == 12


@pytest.mark.extra("label")
def test_duplicate_texts_are_sent_once_and_the_cache_answers_other_ids(tmp_path):
    corpus, queries, run = collection(2, 3)
    corpus["dup"] = corpus["d1_0"]  # an exact duplicate document
    run2 = Run.from_dict({"q1": {"dup": 1.0, "d1_0": 0.5}}, name="other")
    with FakeChatServer() as server, JudgmentStore(tmp_path / "s.sqlite") as store:
        report = label_pool(build_pool([run, run2], 3), judge_for(server), store, queries=queries, corpus=corpus)
        assert len(server.records) == 6  # 7 pairs, 6 distinct texts
        assert report.counts["new"] == 6 and report.counts["cached"] == 1
        labels = {(j.query_id, j.doc_id): (j.label, j.cached, j.cost) for j in report.judgments}
        assert labels[("q1", "dup")][0] == labels[("q1", "d1_0")][0] == expected_grade("q1", "d1_0")
        # A later run whose pairs carry known texts under new ids is answered from the cache.
        corpus["copy"] = corpus["d2_1"]
        run3 = Run.from_dict({"q2": {"copy": 1.0}}, name="third")
        later = label_pool(build_pool([run3], 1), judge_for(server), store, queries=queries, corpus=corpus)
        assert len(server.records) == 6
        assert later.counts["cached"] == 1 and later.judgments[0].label == expected_grade("q2", "d2_1")
        assert later.judgments[0].cached and later.judgments[0].cost == 0


@pytest.mark.extra("label")
def test_a_changed_prompt_is_a_new_judge(tmp_path):
    corpus, queries, run = collection(1, 2)
    pool = build_pool([run], 2)
    with FakeChatServer() as server, JudgmentStore(tmp_path / "s.sqlite") as store:
        first = judge_for(server)
        label_pool(pool, first, store, queries=queries, corpus=corpus)
        binary = LLMJudge(first.client, Prompt.builtin("binary"))
        assert binary.judge_id != first.judge_id
        label_pool(pool, binary, store, queries=queries, corpus=corpus)
        assert len(server.records) == 4


@pytest.mark.extra("label")
def test_max_judgments_judges_the_shallowest_ranks_of_every_query_first(tmp_path):
    corpus, queries, run = collection(3, 4)
    with FakeChatServer() as server, JudgmentStore(tmp_path / "s.sqlite") as store:
        report = label_pool(
            build_pool([run], 4), judge_for(server), store, queries=queries, corpus=corpus, max_judgments=5
        )
    assert report.stop_reason == "max-judgments" and not report.complete
    assert report.counts["new"] == 5 and report.counts["not_started"] == 7
    judged = sorted((j.query_id, j.doc_id) for j in report.judgments)
    # Rank 1 of the three queries, then rank 2 of q1 and q2.
    assert judged == [("q1", "d1_0"), ("q1", "d1_1"), ("q2", "d2_0"), ("q2", "d2_1"), ("q3", "d3_0")]


@pytest.mark.extra("label")
def test_existing_judgments_are_not_pooled(tmp_path):
    corpus, queries, run = collection(2, 3)
    existing = Qrels.from_dict({"q1": {"d1_0": 3, "d1_1": 0}})
    pool = build_pool([run], 3, existing=existing)
    assert pool.judged_before == 2 and len(pool) == 4 and pool.per_query == {"q1": 1, "q2": 3}
    with FakeChatServer() as server, JudgmentStore(tmp_path / "s.sqlite") as store:
        label_pool(pool, judge_for(server), store, queries=queries, corpus=corpus)
    assert sorted(r.passage.split()[1] for r in server.records) == ["d1_2", "d2_0", "d2_1", "d2_2"]


@pytest.mark.extra("label")
def test_failed_pairs_are_kept_out_unless_retry_failed(tmp_path):
    corpus, queries, run = collection(1, 2)
    pool = build_pool([run], 2)
    with FakeChatServer(faults={"d1_1 with": ["garbage"] * 3}) as server, JudgmentStore(tmp_path / "s.sqlite") as store:
        report = label_pool(pool, judge_for(server), store, queries=queries, corpus=corpus)
        assert [j.doc_id for j in report.failed] == ["d1_1"] and len(report.judgments) == 1
        assert report.complete  # a failed pair is recorded, not pending
        again = label_pool(pool, judge_for(server), store, queries=queries, corpus=corpus)
        assert len(server.records) == 4 and again.counts["done_before"] == 2
        fixed = label_pool(pool, judge_for(server), store, queries=queries, corpus=corpus, retry_failed=True)
        assert len(server.records) == 5 and len(fixed.judgments) == 2 and not fixed.failed


@pytest.mark.extra("label")
def test_pairs_without_an_answer_are_retried_by_the_next_run(tmp_path):
    corpus, queries, run = collection(1, 2)
    pool = build_pool([run], 2)
    with FakeChatServer(faults={"d1_0 with": ["500", "500"]}) as server, JudgmentStore(tmp_path / "s.sqlite") as store:
        report = label_pool(pool, judge_for(server, max_retries=1), store, queries=queries, corpus=corpus)
        assert report.stop_reason == "errors" and [j.doc_id for j in report.errors] == ["d1_0"]
        again = label_pool(pool, judge_for(server, max_retries=1), store, queries=queries, corpus=corpus)
        assert again.complete and len(again.judgments) == 2 and not again.errors


def worst_cost(judge: LLMJudge, query: str, document: str, prices: Prices) -> float:
    messages = judge.prompt.messages(query, document)
    return prices.cost(worst_case_input_tokens(messages), judge.client.max_tokens)


@pytest.mark.extra("label")
@pytest.mark.parametrize("concurrency", [1, 4])
@pytest.mark.parametrize("room", [1.8, 3.5])
def test_the_cost_cap_stops_before_it_is_crossed(tmp_path, concurrency, room):
    corpus, queries, run = collection(4, 5)
    pool = build_pool([run], 5)
    prices = Prices(3.0, 15.0)
    with FakeChatServer() as server, JudgmentStore(tmp_path / "s.sqlite") as store:
        probe = judge_for(server, prices=prices, max_tokens=64)
        first = pool.pairs[0]
        one = worst_cost(probe, queries[first[0]], corpus[first[1]], prices)  # the same for every pair here
        # Worst cases are ~6x the billed cost here: room for a few requests, not 20. With room for
        # 3.5 worst cases, up to 3 requests are in flight at once (concurrency 4).
        cap = one * room
        judge = judge_for(server, prices=prices, max_cost=cap, max_tokens=64)
        report = label_pool(pool, judge, store, queries=queries, corpus=corpus, concurrency=concurrency)
        meter = judge.client.meter
        assert report.stop_reason == "max-cost" and not report.complete
        assert 0 < meter.spent <= cap
        # Every answered request was billed as the server reported, and nothing more was sent.
        billed = sum(prices.cost(sum(words(m["content"]) for m in r.body["messages"]), 6) for r in server.records)
        assert meter.spent == pytest.approx(billed)
        assert len(server.records) == report.counts["new"] == len(report.judgments)
        # The stop was needed: the next pair's worst case would not have fit.
        assert meter.spent + one > cap
        assert report.counts["not_started"] == 20 - report.counts["new"]
        assert float(report.usage["cost"]) == pytest.approx(meter.spent)  # type: ignore[arg-type]


@pytest.mark.extra("label")
def test_a_cost_stop_between_parse_retries_keeps_the_paid_request(tmp_path):
    """The first answer is unreadable and its retry could cross the cap: the stop keeps the
    pair's record (tokens and cost paid), and a rerun with room asks again and finishes."""
    corpus, queries, run = collection(1, 1)
    pool = build_pool([run], 1)
    prices = Prices(3.0, 15.0)
    with FakeChatServer(faults={"d1_0 with": ["garbage"]}) as server, JudgmentStore(tmp_path / "s.sqlite") as store:
        (first,) = pool.pairs
        one = worst_cost(judge_for(server, prices=prices, max_tokens=64), queries[first[0]], corpus[first[1]], prices)
        judge = judge_for(server, prices=prices, max_cost=one * 1.01, max_tokens=64)  # no room for a longer retry
        report = label_pool(pool, judge, store, queries=queries, corpus=corpus)
        assert report.stop_reason == "max-cost" and len(server.records) == 1
        (kept,) = store.judgments(status=None)
        assert kept.status == "error" and "the retry could cross the cost cap" in kept.error
        assert report.counts["errors"] == 1 and report.counts["not_started"] == 0
        assert kept.cost == pytest.approx(judge.client.meter.spent) and kept.cost > 0 and kept.input_tokens > 0
        again = label_pool(pool, judge_for(server, prices=prices, max_tokens=64), store, queries=queries, corpus=corpus)
        assert again.complete and [j.label for j in again.judgments] == [expected_grade(first[0], first[1])]
        assert len(server.records) == 2


def test_dry_run_estimates_and_sends_nothing(tmp_path):
    corpus, queries, run = collection(2, 3)
    pool = build_pool([run], 3)
    prices = Prices(1.0, 2.0)
    seen = []
    with FakeChatServer() as server, JudgmentStore(tmp_path / "s.sqlite") as store:
        judge = judge_for(server, prices=prices, max_tokens=100)
        report = label_pool(pool, judge, store, queries=queries, corpus=corpus, dry_run=True, on_estimate=seen.append)
        assert server.records == [] and store.count() == 0
    (estimate,) = seen
    assert estimate is report.estimate and estimate.requests == 6
    assert estimate.worst_output_tokens == 600 and estimate.output_tokens == 6 * 40
    assert estimate.worst_input_tokens > estimate.input_tokens > 0
    assert estimate.worst_cost == pytest.approx(prices.cost(estimate.worst_input_tokens, 600))


# -- a run killed with SIGKILL part-way, then restarted ---------------------------------------


def write_collection(tmp_path: Path, n_queries: int, docs: int) -> dict[str, str]:
    corpus, queries, run = make_collection(n_queries, docs)
    paths = {"corpus": tmp_path / "corpus.jsonl", "queries": tmp_path / "queries.jsonl", "run": tmp_path / "run.txt"}
    paths["corpus"].write_text(corpus)
    paths["queries"].write_text(queries)
    paths["run"].write_text(run)
    return {k: str(v) for k, v in paths.items()}


def ok_rows(store: Path) -> int:
    if not store.exists():
        return 0
    with sqlite3.connect(store) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM judgments WHERE status = 'ok'").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


@pytest.mark.extra("label")
def test_a_run_killed_part_way_resumes_and_judges_every_pair_exactly_once(tmp_path):
    files = write_collection(tmp_path, 5, 6)  # 30 pairs
    out, store = tmp_path / "llm.txt", tmp_path / "llm.sqlite"
    with FakeChatServer(hold_after=11) as server:
        argv = [
            sys.executable, "-m", "rankgate", "label", "--run", files["run"], "--corpus", files["corpus"],
            "--queries", files["queries"], "--depth", "6", "--judge", "llm", "--base-url", server.url,
            "--model", "fake-model", "--out", str(out), "--concurrency", "4", "--no-progress",
        ]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": KEY}
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        # Wait until requests are held at the server, none is on its way to being answered (so no
        # answer can come any more), and every answered one is committed to the store.
        while time.monotonic() < deadline:
            if server.held and server.in_transit() == 0 and ok_rows(store) == len(server.answered()):
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        else:
            proc.kill()
            pytest.fail("the run never reached the hold point")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        first_answers = len(server.answered())
        assert proc.returncode == -signal.SIGKILL
        assert 11 <= first_answers < 30 and ok_rows(store) == first_answers and not out.exists()
        server.release(drop=True)  # the killed run's in-flight requests are never answered
        server.hold_after = None
        # Restart with the same command: it judges only what is left.
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    per_pair = server.answered_per_pair()
    assert len(per_pair) == 30 and set(per_pair.values()) == {1}  # no pair judged twice
    assert ok_rows(store) == 30
    lines = out.read_text().splitlines()
    assert len(lines) == 30
    assert all(int(g) == expected_grade(q, d) for q, _, d, g in (line.split() for line in lines))
    assert KEY not in done.stdout + done.stderr
