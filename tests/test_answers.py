"""AnswerRecall@k (`rankgate rag answers`): SQuAD/DPR normalisation and hand-worked values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankgate.core.run import Run
from rankgate.errors import InputError
from rankgate.rag.answers import answer_recall, contains_answer, normalize_answer, read_answers
from tests.cli_support import invoke


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PARIS", "paris"),  # case
        ("Paris, France.", "paris france"),  # punctuation
        ("The Eiffel Tower", "eiffel tower"),  # articles
        ("a an the", ""),
        ("Theatre and anthem", "theatre and anthem"),  # articles only as whole words
        ("  many\tspaces \n here ", "many spaces here"),
        ("U.S.A.", "usa"),  # punctuation is dropped, not replaced by a space (as SQuAD's script)
    ],
)
def test_normalize_answer(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


@pytest.mark.parametrize(
    ("passage", "answer", "expected"),
    [
        ("It was built by THE Romans.", "romans", True),
        ("It was built by the Romans.", "The Romans!", True),
        ("A category error.", "cat", False),  # whole words only
        ("Founded in 1889, it...", "1889", True),
        ("Founded in 18890.", "1889", False),
        ("He lives in New York City.", "new york", True),
        ("He lives in New-York.", "new york", False),  # "newyork" after punctuation removal
        ("anything", "the", False),  # nothing left to match
    ],
)
def test_contains_answer(passage: str, answer: str, expected: bool) -> None:
    assert contains_answer(passage, answer) is expected


def test_answer_recall_hand_worked() -> None:
    # q1: the answer first appears at rank 3; q2: an alias at rank 1; q3: never; q4: not in the run (0)
    run = Run.from_dict(
        {
            "q1": {"p1": 3.0, "p2": 2.0, "p3": 1.0},
            "q2": {"p4": 1.0, "p1": 0.5},
            "q3": {"p2": 1.0},
            "q9": {"p1": 1.0},  # no answers: ignored, counted
        }
    )
    passages = {
        "p1": "Nothing useful here.",
        "p2": "Still nothing.",
        "p3": "The treaty was signed in the city of VERSAILLES.",
        "p4": "Known as the Big Apple, it never sleeps.",
    }
    answers = {"q1": ["Versailles"], "q2": ["New York City", "the big apple"], "q3": ["Rome"], "q4": ["Oslo"]}
    r = answer_recall(run, passages, answers, ks=(1, 2, 3))
    assert r.per_query["q1"] == {"AnswerRecall@1": 0.0, "AnswerRecall@2": 0.0, "AnswerRecall@3": 1.0}
    assert r.per_query["q2"]["AnswerRecall@1"] == 1.0
    assert r.first_hit == {"q1": 3, "q2": 1, "q3": None, "q4": None}
    # means over the 4 queries of the answers file
    assert r.aggregate == {"AnswerRecall@1": 0.25, "AnswerRecall@2": 0.25, "AnswerRecall@3": 0.5}
    assert r.queries == {"evaluated": 4, "missing_from_run": 1, "run_only": 1}


def test_ties_follow_trec_order() -> None:
    """Equal scores: doc id descending, so p2 (the answer) is rank 1, p1 rank 2."""
    run = Run.from_dict({"q1": {"p1": 1.0, "p2": 1.0}})
    r = answer_recall(run, {"p1": "no", "p2": "yes Oslo"}, {"q1": ["oslo"]}, ks=(1,))
    assert r.aggregate["AnswerRecall@1"] == 1.0
    r = answer_recall(run, {"p1": "no", "p2": "yes Oslo"}, {"q1": ["oslo"]}, ks=(1,), ties="input")
    assert r.aggregate["AnswerRecall@1"] == 0.0


def test_missing_passages_are_reported() -> None:
    run = Run.from_dict({"q1": {"gone": 2.0, "p1": 1.0}})
    r = answer_recall(run, {"p1": "Oslo"}, {"q1": ["Oslo"]}, ks=(2,))
    assert r.missing_passages == ["gone"] and r.aggregate["AnswerRecall@2"] == 1.0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "answers.jsonl:2"),
        ('{"answers": ["x"]}', "answers.jsonl:2: missing or empty query_id"),
        ('{"query_id": "q2", "answers": []}', "answers.jsonl:2: answers must be a non-empty list"),
        ('{"query_id": "q2", "answers": [3]}', "answers.jsonl:2: answers must be a non-empty list"),
        ('{"query_id": "q1", "answers": ["y"]}', "answers.jsonl:2: query 'q1' given twice"),
        ('{"query_id": "q2", "answers": ["The", "..."]}', "answers.jsonl:2: no answer of query 'q2'"),
    ],
)
def test_read_answers_errors(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text('{"query_id": "q1", "answers": ["x"]}\n' + line + "\n")
    with pytest.raises(InputError, match=message):
        read_answers(path)


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "run.txt").write_text("q1 Q0 p1 1 2 x\nq1 Q0 p2 2 1 x\nq2 Q0 p1 1 1 x\n")
    (tmp_path / "corpus.jsonl").write_text(
        '{"_id": "p1", "text": "Bergen is rainy."}\n{"_id": "p2", "title": "Capital", "text": "Oslo."}\n'
    )
    (tmp_path / "answers.jsonl").write_text(
        '{"query_id": "q1", "answers": ["oslo"]}\n{"query_id": "q2", "answers": "Bergen"}\n'
    )
    args = ["rag", "answers", "--run", str(tmp_path / "run.txt"), "--corpus", str(tmp_path / "corpus.jsonl")]
    args += ["--answers", str(tmp_path / "answers.jsonl"), "-k", "1", "-k", "2"]
    code, out, err = invoke(capsys, *args, "--format", "json", "--per-query")
    assert code == 0, err
    body = json.loads(out)
    assert body["aggregate"] == {"AnswerRecall@1": 0.5, "AnswerRecall@2": 1.0}
    assert body["per_query"]["q1"]["first_hit"] == 2
    code, out, _ = invoke(capsys, *args)
    assert code == 0 and "AnswerRecall@2" in out and "1.0000" in out
    (tmp_path / "answers.jsonl").write_text('{"query_id": "q1"}\n')
    code, _, err = invoke(capsys, *args)
    assert code == 2 and "answers.jsonl:1" in err
