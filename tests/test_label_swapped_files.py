"""``--queries`` and ``--corpus`` swapped, or the wrong file: exit 2 with one line that says so, before any request.

Each of these used to judge an empty pool (or nothing) and exit 0 with empty outputs, or fail
with a message that did not point at the swap.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankgate.errors import InputError
from rankgate.label.collection import require_some_text
from tests.cli_support import invoke
from tests.label_support import FakeChatServer, write_collection
from tests.test_context_judge import ANSWERS, CORPUS, QUERIES, RUN


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-swap-test")


@pytest.fixture
def coll(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "judged.txt").write_text("q1 0 d1_0 1\nq2 0 d2_1 0\n")
    return {**write_collection(tmp_path), "qrels": str(tmp_path / "judged.txt")}


SWAP = "no run query has text in --queries c.jsonl; did you swap --queries and --corpus? ('q2' is an id of --corpus)"
WRONG = "no run query has text in --queries c.jsonl; is it the right file? (e.g. 'q1' is not in it)"


@pytest.mark.parametrize(
    ("wanted", "texts", "other", "expected"),
    [(["q1", "q2"], {"d1"}, {"q2"}, SWAP), (["q1"], {"d1"}, {"d9"}, WRONG), (["q1"], {"d1"}, None, WRONG)],
)
def test_no_id_with_text_is_an_input_error_that_suggests_the_swap(wanted, texts, other, expected):
    with pytest.raises(InputError) as e:
        require_some_text(wanted, texts, subject="run query", option="--queries", path="c.jsonl", other=other,
                          other_option="--corpus")  # fmt: skip
    assert str(e.value) == expected
    require_some_text(["q1", "q2"], {"q2"}, subject="run query", option="--queries", path="c.jsonl")  # one is enough
    require_some_text([], {"q2"}, subject="run query", option="--queries", path="c.jsonl")  # nothing to check


@pytest.mark.extra("label")
def test_label_with_the_two_files_swapped_exits_2_and_sends_nothing(capsys, coll, tmp_path):
    out = tmp_path / "swapped.txt"
    with FakeChatServer() as server:
        code, stdout, err = invoke(
            capsys, "label", "--run", coll["run"], "--corpus", coll["queries"], "--queries", coll["corpus"],
            "--depth", "2", "--base-url", server.url, "--model", "m", "--out", str(out), "--no-progress",
        )  # fmt: skip
        assert server.records == []
    assert code == 2 and stdout == "" and "Traceback" not in err
    assert err.strip() == (
        f"rankgate: error: no run query has text in --queries {coll['corpus']}; did you swap --queries and --corpus? "
        "('q1' is an id of --corpus)"
    )
    assert not out.exists()


@pytest.mark.extra("label")
def test_label_with_a_corpus_that_has_none_of_the_documents_exits_2(capsys, coll, tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"_id": "x1", "text": "unrelated"}) + "\n")
    code, _, err = invoke(
        capsys, "label", "--run", coll["run"], "--corpus", str(other), "--queries", coll["queries"], "--judge", "bm25",
        "--out", str(tmp_path / "weak.txt"), "--no-progress",
    )  # fmt: skip
    assert code == 2
    assert err.strip() == (
        f"rankgate: error: no document of the runs has text in --corpus {other}; is it the corpus these runs "
        "retrieved from? (e.g. 'd1_0' is not in it)"
    )


@pytest.mark.extra("label")
def test_label_with_some_queries_without_text_still_judges_the_others(capsys, coll, tmp_path):
    queries = tmp_path / "some.jsonl"
    queries.write_text(json.dumps({"_id": "q1", "text": "question number 1"}) + "\n")
    code, _, err = invoke(
        capsys, "label", "--run", coll["run"], "--corpus", coll["corpus"], "--queries", str(queries), "--judge", "bm25",
        "--out", str(tmp_path / "weak.txt"), "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    assert "2 run queries have no text" in err


@pytest.mark.extra("label")
def test_rag_context_with_swapped_or_wrong_files_exits_2_and_sends_nothing(capsys, tmp_path):
    files = {k: tmp_path / f"{k}.jsonl" for k in ("corpus", "queries", "answers")}
    files["corpus"].write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in CORPUS.items()))
    files["queries"].write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in QUERIES.items()))
    files["answers"].write_text("".join(json.dumps({"query_id": i, "answers": [a]}) + "\n" for i, a in ANSWERS.items()))
    (tmp_path / "run.txt").write_text(RUN)

    def context(corpus: Path, queries: Path) -> tuple[int, str]:
        code, _, err = invoke(
            capsys, "rag", "context", "--run", str(tmp_path / "run.txt"), "--corpus", str(corpus), "--queries",
            str(queries), "--answers", str(files["answers"]), "--base-url", server.url, "--model", "m", "--no-progress",
        )  # fmt: skip
        return code, err.strip()

    with FakeChatServer() as server:
        swapped = context(files["queries"], files["corpus"])
        wrong_corpus = context(files["queries"], files["queries"])
        assert server.records == []
    assert swapped == (
        2, f"rankgate: error: no query of the answers has text in --queries {files['corpus']}; did you swap --queries "
        "and --corpus? ('q1' is an id of --corpus)",
    )  # fmt: skip
    assert wrong_corpus == (
        2, f"rankgate: error: no document of the run has text in --corpus {files['queries']}; is it the corpus the "
        "run retrieved from? (e.g. 'p1' is not in it)",
    )  # fmt: skip


@pytest.mark.extra("label")
def test_label_synth_with_a_queries_file_as_corpus_exits_2_and_writes_nothing(capsys, coll, tmp_path):
    with FakeChatServer() as server:
        code, _, err = invoke(
            capsys, "label", "synth", "--corpus", coll["queries"], "--n", "5", "--out", str(tmp_path / "golden"),
            "--base-url", server.url, "--model", "m", "--no-progress",
        )  # fmt: skip
        assert server.records == []
    assert code == 2 and not (tmp_path / "golden").exists()
    assert err.strip() == (
        f"rankgate: error: {coll['queries']}: no passage has --min-words 10 words or more (the longest has 3); "
        "is it the corpus, not a queries file?"
    )


def test_label_sample_with_the_two_files_swapped_exits_2(capsys, coll, tmp_path):
    code, _, err = invoke(
        capsys, "label", "sample", coll["qrels"], "--corpus", coll["queries"], "--queries", coll["corpus"],
        "-o", str(tmp_path / "review.csv"),
    )  # fmt: skip
    assert code == 2 and not (tmp_path / "review.csv").exists()
    assert "did you swap --queries and --corpus?" in err and "Traceback" not in err


def test_label_leakage_warns_when_the_queries_are_longer_than_the_passages(capsys, coll):
    code, out, err = invoke(capsys, "label", "leakage", "--queries", coll["corpus"], "--corpus", coll["queries"])
    assert code == 0 and "leaked: 0 queries" in out
    assert "warning: the queries are longer than the corpus passages (4.0 words against 3.0 on average): did you " \
        "swap --queries and --corpus?" in err  # fmt: skip
    code, _, err = invoke(capsys, "label", "leakage", "--queries", coll["queries"], "--corpus", coll["corpus"])
    assert code == 0 and "warning" not in err
