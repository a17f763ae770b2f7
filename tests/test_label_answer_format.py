"""``rankgate label --answer-format json|lenient`` against a local OpenAI-compatible server answering in each format.

The seeds' own Yes/No judging prompt is used verbatim as a --prompt template.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankgate.io.readers import read_qrels
from rankgate.label.prompts import Prompt
from tests.cli_support import invoke
from tests.label_support import FakeChatServer, grade_of, texts_of, write_collection

# The judging prompt of the seeds (000_*.txt), verbatim: test data that must work as a template.
SEEDS_PROMPT = """Is this document relevant to the query?

Query: {query}

Document: {doc}

Answer only 'Yes' or 'No'."""

STYLES = {
    "json": lambda g, yes: json.dumps({"relevance": g, "reason": "ok"}),
    "fenced": lambda g, yes: "```json\n" + json.dumps({"relevance": g, "reason": "ok"}) + "\n```",
    "bare": lambda g, yes: str(g),
    "yesno": lambda g, yes: "Yes, the document answers it." if yes else "No. It is about something else.",
    "grade-line": lambda g, yes: f"Let me think.\nGrade: {g}\nIt covers the topic.",
    "garbage": lambda g, yes: "I am not sure what you mean.",
}
# Which styles each format reads (binary scale: grades 0/1, Yes = planted grade >= 2).
READS = {
    "json": {"json", "fenced", "bare"},
    "lenient": {"json", "fenced", "bare", "yesno", "grade-line"},
}


def _replier(style: str):
    def reply(first_user: str) -> str:
        _, passage = texts_of(first_user)
        relevant = grade_of(passage) >= 2
        return STYLES[style](int(relevant), relevant)

    return reply


@pytest.fixture
def coll(tmp_path: Path) -> dict[str, str]:
    return write_collection(tmp_path)


@pytest.fixture
def seeds_prompt(tmp_path: Path) -> str:
    path = tmp_path / "seeds_prompt.txt"
    path.write_text(SEEDS_PROMPT)
    return str(path)


def _args(coll: dict[str, str], url: str, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "label", "--run", coll["run"], "--corpus", coll["corpus"], "--queries", coll["queries"], "--depth", "4",
        "--base-url", url, "--model", "m", "--out", str(tmp_path / "llm.txt"), "--backoff", "0.01",
        "--no-progress", "--parse-retries", "0", "--scale", "binary", *extra,
    ]  # fmt: skip


@pytest.mark.extra("label")
@pytest.mark.parametrize("answer_format", ["json", "lenient"])
@pytest.mark.parametrize("style", list(STYLES))
def test_each_answer_style_under_each_format(capsys, coll, tmp_path, seeds_prompt, style, answer_format):
    """Readable styles exit 0 with every pair judged right; the others exit 1 and say so in the last line."""
    with FakeChatServer(reply=_replier(style)) as server:
        args = _args(coll, server.url, tmp_path, "--prompt", seeds_prompt, "--answer-format", answer_format)
        code, _, err = invoke(capsys, *args)
        sent = server.records[0].body["messages"][-1]["content"]
    assert sent.startswith("Is this document relevant to the query?\n\nQuery: <<<QUERY ")
    assert sent.endswith("Answer only 'Yes' or 'No'.") and "{doc}" not in sent
    if style in READS[answer_format]:
        assert code == 0, err
        qrels = read_qrels(tmp_path / "llm.txt").to_dict()
        expected = {q: {d: int((int(d[1]) + int(d[3])) % 4 >= 2) for d in docs} for q, docs in qrels.items()}
        assert qrels == expected and sum(map(len, qrels.values())) == 12
    else:
        assert code == 1
        last = err.strip().splitlines()[-1]
        assert last == "error: 12 of 12 pairs have no judgment (12 failed, 0 without an answer, 0 not started); exit 1"
        assert (tmp_path / "llm.txt").read_text() == ""  # written, and empty: the exit code says it is unusable


@pytest.mark.extra("label")
def test_the_answer_format_is_part_of_the_judge_identity_so_the_cache_never_mixes(capsys, coll, tmp_path):
    with FakeChatServer(reply=_replier("grade-line")) as server:
        code_json, out_json, _ = invoke(capsys, *_args(coll, server.url, tmp_path, "--format", "json"))
        code_len, out_len, err = invoke(
            capsys, *_args(coll, server.url, tmp_path, "--format", "json", "--answer-format", "lenient")
        )
        requests = len(server.records)
    assert (code_json, code_len) == (1, 0), err
    before, after = json.loads(out_json), json.loads(out_len)
    assert before["judge"]["answer_format"] == "json" and after["judge"]["answer_format"] == "lenient"
    assert before["judge"]["judge_id"] != after["judge"]["judge_id"]
    assert after["counts"]["done_before"] == 0 and after["counts"]["new"] == 12  # nothing served from json's store
    assert requests == 24


def test_the_json_format_keeps_the_earlier_prompt_hash():
    """Judgments stored before --answer-format existed stay the json judge's (same hash as before)."""
    assert Prompt.builtin("graded").hash == Prompt.builtin("graded", answer_format="json").hash
    assert Prompt.builtin("graded").hash != Prompt.builtin("graded", answer_format="lenient").hash


@pytest.mark.parametrize(
    ("answer", "scale", "expected"),
    [
        ("Grade: 3\nexact answer", "graded", (3, "exact answer")),
        ("**Relevance:** 1", "graded", (1, "")),
        ("score = 0", "graded", (0, "")),
        ("2 - partly", "graded", (2, "partly")),
        ("<think>hmm</think>\nYes", "binary", (1, "")),
        ("No, off topic", "binary", (0, "off topic")),
        ("Yes", "graded", "no verdict found: expected a JSON object, a grade (0, 1, 2, 3) or a 'grade: N' line"),
        ("grade: 2\nrelevance: 3", "graded", "the reply gives different grades (2, 3)"),
        ("grade: 5", "graded", "the grade must be one of the integers 0, 1, 2, 3 (got 5)"),
        ("2.5", "graded", "no verdict found: expected a JSON object, a grade (0, 1, 2, 3) or a 'grade: N' line"),
        ('{"relevance": 9}', "graded", '"relevance" must be one of the integers 0, 1, 2, 3 (got 9)'),
    ],
)
def test_lenient_reading_table(answer, scale, expected):
    from rankgate.label.prompts import ParseFailure

    prompt = Prompt.builtin(scale, answer_format="lenient")
    if isinstance(expected, tuple):
        assert prompt.parse(answer) == expected
    else:
        with pytest.raises(ParseFailure) as info:
            prompt.parse(answer)
        assert str(info.value) == expected
