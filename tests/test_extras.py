"""A missing extra is one error that names it: the library raises it, the CLI prints one line and exits 2.

Each case hides a key module of one extra (``sys.modules[name] = None`` makes ``import name``
fail) and checks both the library and, where a command needs the extra, the CLI.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rankgate.core.columns import arrow_to_frame
from rankgate.data import demo_dir, demo_qrels_path, demo_run_path
from rankgate.errors import BackendError
from rankgate.extras import MissingExtraError
from rankgate.io import read_qrels
from tests.cli_support import invoke

QRELS, RUN = str(demo_qrels_path()), str(demo_run_path("bm25"))
# Made before a test hides pandas: pyarrow looks for pandas (once) when it builds arrays.
DEMO_TABLE = read_qrels(QRELS).to_arrow()
POSTGRES_URL = "postgresql://u@127.0.0.1:5432/db"


def _to_frame(backend: str) -> Callable[[Path], Any]:
    def call(_: Path) -> Any:
        return arrow_to_frame(DEMO_TABLE, backend)  # what Qrels/Run/Results.to_frame call

    return call


def _benchmark(_: Path) -> Any:
    from rankgate.bench import plan_from_dict, run_benchmark

    plan = plan_from_dict({"measures": ["nDCG@10"], "latency": {"queries": 0}, "matrix": {"retrievers": ["bm25"]}})
    return run_benchmark("demo", plan)


def _store(location: str) -> Callable[[Path], Any]:
    def call(tmp_path: Path) -> Any:
        from rankgate.store.base import open_store

        return open_store(location.replace("TMP", str(tmp_path)))

    return call


def _chat_client(_: Path) -> Any:
    from rankgate.label.llm import ChatClient

    return asyncio.run(ChatClient("http://127.0.0.1:9/v1", "m").__aenter__())


def _html_report(tmp_path: Path) -> Any:
    from rankgate.report.html import write_report

    return write_report(tmp_path / "r.html", [str(tmp_path / "ev.json")])


def _ray(_: Path) -> Any:
    from rankgate.evaluation.engines.ray_cluster import ray_module

    return ray_module()


@dataclass(frozen=True)
class Case:
    extra: str
    module: str  # the key module hidden
    library: Callable[[Path], Any]
    cli: tuple[str, ...] | None  # TMP stands for the test's folder; None: no command needs the extra
    needs: tuple[str, ...] = ()  # extras the case presupposes (psycopg is looked for after SQLAlchemy)


LABEL_CLI = (
    "label", "--run", RUN, "--corpus", str(demo_dir() / "corpus.jsonl"), "--queries", str(demo_dir() / "queries.jsonl"),
    "--depth", "1", "--judge", "llm", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--out", "TMP/llm.txt",
    "--no-progress",
)  # fmt: skip
CASES = [
    Case("pandas", "pandas", _to_frame("pandas"), None),
    Case("polars", "polars", _to_frame("polars"), None),
    Case("bench", "bm25s", _benchmark, ("bench", "demo", "-r", "bm25", "--no-runs", "--no-cache", "-q", "--no-record")),
    Case("gate", "sqlalchemy", _store("TMP/r.db"), ("store", "list", "--store", "TMP/r.db")),
    Case("postgres", "psycopg", _store(POSTGRES_URL), ("store", "list", "--store", POSTGRES_URL), needs=("gate",)),
    Case("label", "httpx", _chat_client, LABEL_CLI),
    Case("report", "jinja2", _html_report, ("report", "TMP/ev.json", "-o", "TMP/r.html")),
    Case("ray", "ray", _ray, ("eval", QRELS, RUN, "-m", "P@1", "--engine", "ray")),
]


@pytest.fixture
def eval_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """An eval result in JSON (the report's input), written before any module is hidden."""
    path = tmp_path / "ev.json"
    code, _, err = invoke(capsys, "eval", QRELS, RUN, "-m", "P@1", "--format", "json", "-o", str(path))
    assert code == 0, err
    return path


def params(cases: list[Case]) -> list[Any]:
    return [pytest.param(c, id=c.extra, marks=[pytest.mark.extra(*c.needs)] if c.needs else []) for c in cases]


@pytest.mark.parametrize("case", params(CASES))
def test_a_missing_extra_is_named_by_the_library(
    case: Case, tmp_path: Path, eval_json: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setitem(sys.modules, case.module, None)
    with pytest.raises(BackendError) as info:
        case.library(tmp_path)
    assert f"rankgate[{case.extra}]" in str(info.value)
    assert isinstance(info.value, MissingExtraError) and info.value.extra == case.extra


@pytest.mark.parametrize("case", params([c for c in CASES if c.cli]))
def test_a_missing_extra_is_one_line_from_the_cli(
    case: Case, tmp_path: Path, eval_json: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("RANKGATE_STORE", raising=False)
    monkeypatch.setitem(sys.modules, case.module, None)
    assert case.cli is not None
    code, _, err = invoke(capsys, *(arg.replace("TMP", str(tmp_path)) for arg in case.cli))
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"rankgate[{case.extra}]" in lines[0], err
    assert "Traceback" not in err


def test_the_bm25_judge_without_bm25s_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """scores() imported bm25s before the guard in _index, so a missing bm25s ended in a traceback."""
    from rankgate.label.weak import BM25Judge

    monkeypatch.setitem(sys.modules, "bm25s", None)
    judge = BM25Judge({"d1": "a b", "d2": "b c"}, {"q1": "a"})
    with pytest.raises(MissingExtraError, match=r"the BM25 judge needs bm25s: pip install 'rankgate\[bench\]'"):
        judge.scores("q1")
