"""The ``python`` kind: functions of two or three arguments, LangChain- and LlamaIndex-shaped objects.

The LangChain and LlamaIndex shapes are small fakes with their attribute names (``invoke`` ->
Documents with ``page_content``/``metadata``/``id``; ``retrieve`` -> ``NodeWithScore`` with
``node.node_id`` and ``score``); the libraries themselves are not installed here.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from rankgate.errors import ConfigError
from rankgate.evaluation.evaluate import evaluate
from rankgate.io.readers import read_qrels, read_run
from rankgate.retrieve.runner import retrieve
from rankgate.retrieve.spec import open_retriever
from tests.cli_support import invoke

pytestmark = pytest.mark.extra("retrieve")

MODULE = """
from dataclasses import dataclass, field

import rankgate.retrieve

CALLS = []


def two(text, k):
    return [("d1", 3.0), ("d2", 2.0), ("d1", 1.0)][:k]


def three(query_id, text, k):
    return [{"doc_id": f"{query_id}-a", "score": 0.5}, {"id": f"{query_id}-b", "score": 0.25}]


def unscored(text, k):
    return ["a", "z"]  # "a" first; equal scores would put "z" first (doc id descending)


def broken(text, k):
    raise ValueError("index not loaded")


def flaky(query_id, text, k):
    CALLS.append(query_id)
    if CALLS.count(query_id) == 1:
        raise ConnectionError("reset by peer")
    return ["x"]


def transient(text, k):
    raise rankgate.retrieve.TransientFailure("busy", retry_after=0.0)


def nothing(text, k):
    return None


def bad_arity(text):
    return []


@dataclass
class Document:  # langchain_core.documents.Document's fields
    page_content: str
    metadata: dict = field(default_factory=dict)
    id: str | None = None


class LangChainLike:
    def invoke(self, query):
        first = Document("tea", {"source_id": "doc-7"}, id="chunk-1")
        return [first, Document("pot", {"source_id": "doc-9"}, id="chunk-2")]


@dataclass
class TextNode:  # llama_index.core.schema.TextNode
    text: str
    node_id: str
    metadata: dict = field(default_factory=dict)


@dataclass
class NodeWithScore:
    node: TextNode
    score: float | None = None


class LlamaIndexLike:
    def __init__(self, top=2):
        self.top = top

    def retrieve(self, query):
        first = NodeWithScore(TextNode("a", "n1", {"doc": "D1"}), 0.9)
        nodes = [first, NodeWithScore(TextNode("b", "n2", {"doc": "D2"}), 0.4)]
        return nodes[: self.top]


def make_llama(top):
    return LlamaIndexLike(top)
"""


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> str:
    name = f"user_search_{request.node.name.replace('[', '_').replace(']', '_').replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.chdir(tmp_path)
    return name


def _hits(spec: object, queries: dict[str, str] | None = None, **options: object) -> list[list[tuple[str, float]]]:
    retriever = open_retriever(spec)  # type: ignore[arg-type]
    report = retrieve(queries or {"q1": "tea"}, retriever, k=10, backoff=0.0, **options)  # type: ignore[arg-type]
    assert not report.failures, report.failures
    return [[(h.doc_id, h.score) for h in a.hits] for a in report.answers]


def test_function_shapes(module: str) -> None:
    assert _hits(f"python:{module}:two") == [[("d1", 3.0), ("d2", 2.0)]]  # the duplicate d1 dropped
    assert _hits(f"python:{module}:three", {"q7": "x"}) == [[("q7-a", 0.5), ("q7-b", 0.25)]]
    assert _hits(f"python:{module}:unscored") == [[("a", 2.0), ("z", 1.0)]]


def test_langchain_and_llamaindex_shapes(module: str) -> None:
    with pytest.raises(ConfigError, match="LangChainLike is a class: set build: true"):
        open_retriever(f"python:{module}:LangChainLike")
    lang = {"kind": "python", "target": f"{module}:LangChainLike", "build": True, "id_key": "source_id"}
    assert _hits(lang) == [[("doc-7", 2.0), ("doc-9", 1.0)]]
    by_id = {"kind": "python", "target": f"{module}:LangChainLike", "build": True}
    assert _hits(by_id) == [[("chunk-1", 2.0), ("chunk-2", 1.0)]]  # Document.id without id_key
    llama = {"kind": "python", "target": f"{module}:make_llama", "build": True, "options": {"top": 2}}
    assert _hits(llama) == [[("n1", 0.9), ("n2", 0.4)]]
    llama["id_key"] = "doc"
    assert _hits(llama) == [[("D1", 0.9), ("D2", 0.4)]]


def test_scores_from_ranks_keep_the_returned_order(
    module: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hand-worked: "a" is relevant and returned first; equal scores would rank "z" first (RR 0.5)."""
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
    (tmp_path / "queries.tsv").write_text("q1\ttea\n")
    code, out, err = invoke(capsys, "retrieve", "--queries", "queries.tsv", "--retriever", f"python:{module}:unscored",
                            "-k", "10", "-o", "run.txt", "--format", "json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["scores_from_ranks"] == 1
    result = evaluate(read_qrels(tmp_path / "qrels.txt"), read_run(tmp_path / "run.txt"), ["RR@10"])
    assert result.aggregate["RR@10"] == 1.0


def test_scores_from_ranks_asked_for_are_not_warned_about(
    module: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hits without scores get a warning; --scores ranks, which asks for exactly that, gets none."""
    (tmp_path / "queries.tsv").write_text("q1\ttea\n")
    argv = ["retrieve", "--queries", "queries.tsv", "--retriever", f"python:{module}:unscored", "-o", "run.txt"]
    code, _, err = invoke(capsys, *argv, "--no-cache")
    assert code == 0 and "got scores from ranks" in err
    code, _, err = invoke(capsys, *argv, "--no-cache", "--scores", "ranks")
    assert code == 0 and "got scores from ranks" not in err, err


def test_duplicates_are_reported(module: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "queries.tsv").write_text("q1\ttea\nq2\tpot\n")
    code, _out, err = invoke(capsys, "retrieve", "--queries", "queries.tsv", "--retriever", f"python:{module}:two",
                            "-o", "run.txt")  # fmt: skip
    assert code == 0
    dropped = "2 duplicate hits were dropped from 2 queries (the first copy of each document kept), e.g. q1: d1, q2: d1"
    assert f"warning: {dropped}" in err
    assert read_run(tmp_path / "run.txt").num_rows == 4


def test_errors_and_retries(module: str) -> None:
    retriever = open_retriever(f"python:{module}:broken")
    report = retrieve({"q1": "tea"}, retriever, k=5, backoff=0.0)
    line = MODULE.splitlines().index('    raise ValueError("index not loaded")') + 1
    assert report.failures[0].error == f"ValueError: index not loaded (at {module}.py:{line})"
    assert report.failures[0].attempts == 1
    report = retrieve({"q1": "tea", "q2": "pot"}, open_retriever(f"python:{module}:flaky"), k=5, backoff=0.0)
    assert not report.failures and [a.attempts for a in report.answers] == [2, 2]
    report = retrieve({"q1": "tea"}, open_retriever(f"python:{module}:transient"), k=5, retries=2, backoff=0.0)
    assert report.failures[0].error == "no answer after 3 attempts; last: busy"
    report = retrieve({"q1": "tea"}, open_retriever(f"python:{module}:nothing"), k=5)
    assert report.failures[0].error == f"{module}:nothing returned None, not a list of hits"


def test_bad_targets(module: str) -> None:
    with pytest.raises(ConfigError, match="the function takes \\(text\\); expected \\(query_text, k\\)"):
        open_retriever(f"python:{module}:bad_arity")
    with pytest.raises(ConfigError, match="has no attribute 'missing'"):
        open_retriever(f"python:{module}:missing")
    with pytest.raises(ConfigError, match="target: expected module:function"):
        open_retriever("python:justamodule")
    with pytest.raises(ConfigError, match="options: options are the keyword arguments of build"):
        open_retriever({"kind": "python", "target": f"{module}:two", "options": {"a": 1}})


def test_identity_follows_the_source(module: str, tmp_path: Path) -> None:
    first = open_retriever(f"python:{module}:two").identity()
    assert first["target"] == f"{module}:two" and len(first["source_sha256"]) == 64
