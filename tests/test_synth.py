"""``rankgate label synth`` against a local OpenAI-compatible server: filters counted, kill -9 resume, cost cap."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankgate.io.readers import read_qrels
from rankgate.io.texts import read_queries
from rankgate.label.synth import near_duplicates, sample_passages
from rankgate.rag.answers import normalize_answer, read_answers
from tests.cli_support import invoke
from tests.label_support import FakeChatServer, texts_of

KEY = "sk-synth-test-Pq7-never-show-me"
NAMES = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "iris", "jasper", "krill", "lagoon"]
FILLER = "and the old records of the region describe it in some detail for visitors"


def passage(name: str, i: int) -> str:
    return f"The {name} lighthouse near {name}port stands {100 + i} metres tall {FILLER} ref{i:02d}."


def question(name: str) -> str:
    return f"How tall is the {name} lighthouse near {name}port?"


# What the scripted model answers for each passage (by its ref marker):
#   ref00-ref05: a question about its own passage (kept)
#   ref06: malformed (never valid JSON)
#   ref07: a question about words no passage has (fails the round trip)
#   ref08, ref09: both passages are about "twin"; the same question (ref09 is a near-duplicate of ref08)
#   ref10: too short to be sampled (under --min-words)
PLAN = {f"ref{i:02d}": question(NAMES[i]) for i in range(6)}
PLAN["ref07"] = "Which zeppelin carried the quokka orchestra?"
PLAN["ref08"] = PLAN["ref09"] = "How tall is the twin lighthouse near twinport?"


def corpus_rows() -> list[dict[str, str]]:
    rows = [{"_id": f"p{i:02d}", "text": passage(NAMES[i], i)} for i in range(8)]
    rows += [{"_id": f"p{i:02d}", "text": passage("twin", i)} for i in (8, 9)]
    rows.append({"_id": "p10", "text": "Too short ref10."})
    return rows


def scripted(user: str) -> str:
    _, text = texts_of(user)
    ref = re.search(r"ref\d\d", text)
    assert ref is not None, text
    if ref.group() == "ref06":
        return "Here is a question: what is it?"
    return json.dumps({"question": PLAN[ref.group()], "answer": f"{100 + int(ref.group()[3:])} metres"})


@pytest.fixture
def corpus(tmp_path: Path) -> str:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in corpus_rows()))
    return str(path)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def args(corpus: str, out: Path, server: FakeChatServer, *extra: str) -> list[str]:
    return [
        "label", "synth", "--corpus", corpus, "--n", "50", "--out", str(out), "--base-url", server.url,
        "--model", "gen-model", "--min-words", "8", "--k", "2", "--backoff", "0.01", "--no-progress", *extra,
    ]  # fmt: skip


def test_sampling_is_seeded_and_near_duplicates_keep_the_first():
    corpus = {r["_id"]: r["text"] for r in corpus_rows()}
    assert sample_passages(corpus, 4, seed=3, min_words=8) == sample_passages(corpus, 4, seed=3, min_words=8)
    assert sample_passages(corpus, 4, seed=3, min_words=8) != sample_passages(corpus, 4, seed=4, min_words=8)
    assert sample_passages(corpus, 99, min_words=8) == [f"p{i:02d}" for i in range(10)]  # p10 is too short
    big = {f"d{i}": "enough words here" for i in range(500)}
    small, large = sample_passages(big, 20, seed=5, min_words=3), sample_passages(big, 300, seed=5, min_words=3)
    assert large[:20] == small and len(set(large)) == 300  # a larger n extends the sample: only new passages are paid
    # word-set Jaccard: 6/7 = 0.857 (one word added) is a duplicate at 0.8; "ethanol" for "water" is 5/7 = 0.714
    pairs = [("a", "boiling point of water at sea level"), ("b", "the boiling point of water at sea level today")]
    pairs += [("c", "boiling point of ethanol at sea level")]
    assert near_duplicates(pairs, 0.8) == {"b": "a"} and near_duplicates(pairs, 0.7) == {"b": "a", "c": "a"}


def all_pairs_near_duplicates(questions: list[tuple[str, str]], threshold: float) -> dict[str, str]:
    """The obvious reference: each question against every kept one before it."""
    kept: list[tuple[str, set[str]]] = []
    dropped = {}
    for qid, text in questions:
        words = set(normalize_answer(text).split())
        jaccard = [len(words & seen) / len(words | seen) if words | seen else 1.0 for _, seen in kept]
        match = next((kept[i][0] for i, j in enumerate(jaccard) if j >= threshold), None)
        if match is None:
            kept.append((qid, words))
        else:
            dropped[qid] = match
    return dropped


@given(
    st.lists(st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h", "the"]), max_size=7), max_size=25),
    st.sampled_from([0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0]),
)
@settings(max_examples=300, deadline=None)
def test_near_duplicates_with_prefix_filtering_equal_the_all_pairs_answer(texts, threshold):
    questions = [(f"q{i}", " ".join(words)) for i, words in enumerate(texts)]
    assert near_duplicates(questions, threshold) == all_pairs_near_duplicates(questions, threshold)


@pytest.mark.extra("label")
@pytest.mark.extra("bench")
def test_stages_are_counted_and_the_golden_set_is_written(capsys, corpus, tmp_path):
    out = tmp_path / "golden"
    with FakeChatServer(reply=scripted) as server:
        code, stdout, err = invoke(capsys, *args(corpus, out, server, "--format", "json", "--parse-retries", "1"))
        assert code == 0, err
        sent = len(server.records)
        again, text, _ = invoke(capsys, *args(corpus, out, server, "--parse-retries", "1"))
        assert again == 0 and len(server.records) == sent  # a rerun asks nothing
    body = json.loads(stdout)
    assert body["counts"] == {
        "sampled": 10, "asked": 10, "answered": 9, "malformed": 1, "no_answer": 0, "not_started": 0,
        "failed_round_trip": 1, "near_duplicates": 1, "kept": 7, "new": 10, "from_store": 0,
    }  # fmt: skip
    assert sent == 11  # ten passages, and one re-ask of the malformed answer
    assert "failed the round trip                  1" in text and "kept                                   7" in text
    kept = [f"p{i:02d}" for i in (0, 1, 2, 3, 4, 5, 8)]
    assert read_queries(out / "queries.jsonl") == {f"synth-{p}": PLAN[f"ref{p[1:]}"] for p in kept}
    assert read_qrels(out / "qrels.txt").to_dict() == {f"synth-{p}": {p: 1} for p in kept}
    assert read_answers(out / "answers.jsonl")["synth-p03"] == ["103 metres"]
    fates = {row["passage_id"]: row for row in map(json.loads, (out / "candidates.jsonl").read_text().splitlines())}
    assert fates["p07"]["status"] == "failed-round-trip" and fates["p07"]["source_rank"] is None
    assert fates["p09"]["status"] == "near-duplicate" and fates["p09"]["duplicate_of"] == "p08"
    assert fates["p00"]["source_rank"] == 1 and "p06" not in fates
    assert not any(KEY.encode() in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


@pytest.mark.extra("label")
@pytest.mark.extra("bench")
def test_the_cost_cap_stops_cleanly_then_a_rerun_finishes_paying_only_the_rest(capsys, corpus, tmp_path):
    out = tmp_path / "golden"
    budget = ("--price-in", "1", "--price-out", "1", "--max-tokens", "60", "--concurrency", "1", "--format", "json")
    with FakeChatServer(reply=scripted) as server:
        code, stdout, err = invoke(capsys, *args(corpus, out, server, *budget, "--max-cost", "0.002"))
        first = len(server.records)
        body = json.loads(stdout)
        assert code == 1 and "--max-cost" in err and "rerun to continue" in err and "Traceback" not in err
        c = body["counts"]
        assert body["stop_reason"] == "max-cost" and c["not_started"] > 0 and c["asked"] + c["not_started"] == 10
        assert 0 < body["usage"]["cost"] <= 0.002 and 0 < first < 10
        assert (out / "queries.jsonl").exists()  # what was kept so far is written
        code, stdout, err = invoke(capsys, *args(corpus, out, server, *budget, "--max-cost", "1"))
        assert code == 0, err
    assert json.loads(stdout)["counts"]["kept"] == 7
    per_passage = server.answered_per_pair()
    # each passage paid once, except the malformed one: asked, then re-asked twice (--parse-retries 2), in one run
    assert sorted(per_passage.values()) == [1] * 9 + [3]


def stored_answers(store: Path) -> int:
    """Answers committed to the store: readable ones (ok) and malformed ones (failed)."""
    if not store.exists():
        return 0
    with sqlite3.connect(store) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM judgments WHERE status IN ('ok', 'failed')").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


@pytest.mark.slow
@pytest.mark.extra("label")
@pytest.mark.extra("bench")
def test_a_run_killed_with_sigkill_resumes_and_pays_for_no_passage_twice(corpus, tmp_path):
    out, store = tmp_path / "golden", tmp_path / "golden" / "synth.sqlite"
    with FakeChatServer(reply=scripted, hold_after=4) as server:
        argv = [
            sys.executable,
            "-m",
            "rankgate",
            *args(corpus, out, server, "--concurrency", "2", "--parse-retries", "0"),
        ]
        env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        # The event: requests are held at the server, none is on its way to an answer, and every
        # answered one is in the store (so a kill now loses no paid answer).
        while time.monotonic() < deadline:
            if server.held and server.in_transit() == 0 and stored_answers(store) == len(server.answered()):
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        else:
            proc.kill()
            pytest.fail("the run never reached the hold point")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        paid_before = len(server.answered())
        assert proc.returncode == -signal.SIGKILL and 4 <= paid_before < 10 and not (out / "queries.jsonl").exists()
        server.release(drop=True)  # the killed run's held requests are never answered
        server.hold_after = None
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    per_passage = server.answered_per_pair()
    assert len(per_passage) == 10 and set(per_passage.values()) == {1}  # no passage paid twice
    assert len(read_queries(out / "queries.jsonl")) == 7
    assert KEY not in done.stdout + done.stderr


@pytest.mark.extra("label")
def test_bad_options_and_input_exit_2_naming_them(capsys, corpus, tmp_path):
    with FakeChatServer(reply=scripted) as server:
        code, _, err = invoke(capsys, *args(corpus, tmp_path / "g", server, "--max-cost", "1"))
        assert code == 2 and "--max-cost needs prices" in err
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"_id": "p1", "text": "fine"}\n{"_id": "p2", "text": \n')
        code, _, err = invoke(capsys, *args(str(bad), tmp_path / "g", server))
        assert code == 2 and f"{bad}:2" in err and "Traceback" not in err
        assert server.records == []
