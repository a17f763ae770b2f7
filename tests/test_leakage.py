"""`rankgate label leakage`: planted copies of queries and answers in the demo corpus are all found; nothing else."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rankgate.io.texts import read_corpus, read_queries
from rankgate.label.leakage import copy_score, find_leakage, shingles
from tests.cli_support import invoke


def _demo() -> tuple[dict[str, str], dict[str, str]]:
    folder = Path(__file__).resolve().parents[1] / "src" / "rankgate" / "data" / "demo"
    return read_corpus(folder / "corpus.jsonl"), read_queries(folder / "queries.jsonl")


ANSWERS = {
    "q04": ["Add no more than about ten percent to your weekly distance, and take an easier week every month."],
    "q42": ["Take the wheel off, find the puncture in the inner tube, then patch it or fit a new tube."],
    "q03": ["Term cover is cheaper and suits most families, while whole life mixes insurance with saving."],
}


def _edit(text: str, how: str, rng: random.Random) -> str:
    """A light edit: one word replaced, one word dropped, or case and punctuation changed."""
    words = text.split()
    i = rng.randrange(1, len(words) - 1)
    if how == "replace":
        words[i] = "zorbly"
    elif how == "drop":
        del words[i]
    elif how == "case":
        return text.upper().replace(" ", ", ", 1) + "?!"
    return " ".join(words)


def _planted() -> tuple[dict[str, str], dict[str, str], set[tuple[str, str]]]:
    """The demo corpus with copies of 8 queries and of the 3 answers planted; the planted (kind, qid) pairs."""
    corpus, queries = _demo()
    rng = random.Random(3)
    long_queries = [q for q, t in queries.items() if len(t.split()) >= 7]
    plan = list(
        zip(
            long_queries[:8],
            ["verbatim", "verbatim", "replace", "drop", "case", "replace", "drop", "case"],
            strict=True,
        )
    )
    plan_answers = list(zip(ANSWERS, ["verbatim", "replace", "drop"], strict=True))
    targets = rng.sample(sorted(corpus), len(plan) + len(plan_answers))
    planted = set()
    for (qid, how), pid in zip(plan, targets, strict=False):
        copy = queries[qid] if how == "verbatim" else _edit(queries[qid], how, rng)
        corpus[pid] = f"{corpus[pid]} Frequently asked: {copy} See below."
        planted.add(("query", qid))
    for (qid, how), pid in zip(plan_answers, targets[len(plan) :], strict=True):
        answer = ANSWERS[qid][0]
        corpus[pid] += " " + (answer if how == "verbatim" else _edit(answer, how, rng))
        planted.add(("answer", qid))
    return corpus, queries, planted


def test_shingles_normalise() -> None:
    assert shingles("The Cat, sat!", 2) == {"cat sat"}
    assert shingles("A", 3) == set() and shingles("two words", 3) == {"two words"}


def test_planted_copies_are_all_found_and_nothing_else() -> None:
    corpus, queries, planted = _planted()
    report = find_leakage(corpus, queries, ANSWERS)
    found = {(leak.kind, leak.query_id) for leak in report.leaks}
    assert found == planted
    verbatim = {leak.query_id for leak in report.leaks if leak.verbatim and leak.kind == "query"}
    assert len(verbatim) >= 2  # the two verbatim copies (case and punctuation changes normalise away too)
    assert report.counts["answers_checked"] == 3 and report.counts["flagged_answers"] == 3
    for leak in report.leaks:
        assert "Frequently asked" in leak.passage or leak.kind == "answer"


def test_untouched_demo_collection_flags_nothing() -> None:
    """Real queries share words with their documents; the closest needs 2 edits in 6 words (0.67, docs/rag.md)."""
    corpus, queries = _demo()
    report = find_leakage(corpus, queries, near_misses=3)
    assert report.leaks == []
    assert [(m.query_id, m.passage_id, m.similarity) for m in report.near_misses][:1] == [("q16", "d189", 0.666667)]
    assert report.counts["short_queries"] == 4


def test_copy_score_hand_worked() -> None:
    p = ["one", "two", "three", "four", "five", "six", "seven", "eight"]
    assert copy_score(["three", "four", "five", "six"], p) == 1.0
    assert copy_score(["three", "four", "nine", "five", "six"], p) == 0.8  # one word added
    assert copy_score(["three", "four", "five", "nine"], p) == 0.75  # one replaced
    assert copy_score(["two", "four", "six", "eight"], p) == 0.25  # three words to add between them
    assert copy_score(["nine", "ten"], p) == 0.0 and copy_score([], p) == 0.0


def test_threshold_and_min_words() -> None:
    corpus = {"p1": "one two three four five six seven eight"}
    queries = {"q1": "one two three four nine ten", "q2": "one two"}
    # q1 into "one two three four five six": 2 replacements in 6 words: 1 - 2/6
    report = find_leakage(corpus, queries, threshold=0.5)
    assert [(x.query_id, x.similarity, x.verbatim) for x in report.leaks] == [("q1", 0.666667, False)]
    assert report.counts["short_queries"] == 1
    assert find_leakage(corpus, queries, threshold=0.67).leaks == []


def test_cli_lists_and_drops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus, queries, planted = _planted()
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in corpus.items()))
    (tmp_path / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items())
    )
    (tmp_path / "answers.jsonl").write_text(
        "".join(json.dumps({"query_id": k, "answers": v}) + "\n" for k, v in ANSWERS.items())
    )
    args = [
        "label",
        "leakage",
        "--queries",
        str(tmp_path / "queries.jsonl"),
        "--corpus",
        str(tmp_path / "corpus.jsonl"),
    ]
    args += ["--answers", str(tmp_path / "answers.jsonl"), "--drop-out", str(tmp_path / "clean.jsonl")]
    code, out, err = invoke(capsys, *args, "--format", "json", "--check")
    assert code == 1, err
    body = json.loads(out)
    leaked = {q for _, q in planted}
    assert set(body["leaked_queries"]) == leaked
    kept = read_queries(tmp_path / "clean.jsonl")
    assert set(kept) == set(queries) - leaked and body["drop_out"]["kept"] == len(kept)
    code, out, _ = invoke(capsys, *args)
    assert code == 0 and "leaked: 8 queries, 3 answers" in out
    (tmp_path / "answers.jsonl").write_text("{bad\n")
    code, _, err = invoke(capsys, *args)
    assert code == 2 and "answers.jsonl:1" in err
