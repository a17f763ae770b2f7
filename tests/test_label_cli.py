"""``rankgate label`` end to end, in-process: outputs, exit codes, errors, the key never shown."""

from __future__ import annotations

import json
import logging
from collections import deque
from pathlib import Path

import pytest

from rankgate.io.readers import read_qrels
from rankgate.io.tags import read_query_tags
from rankgate.label.store import JudgmentStore
from tests.cli_support import invoke
from tests.label_support import FakeChatServer, expected_grade, write_collection

KEY = "sk-cli-test-Zq81-never-show-me"


@pytest.fixture
def coll(tmp_path: Path) -> dict[str, str]:
    return write_collection(tmp_path)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def llm_args(coll: dict[str, str], server: FakeChatServer, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "label", "--run", coll["run"], "--corpus", coll["corpus"], "--queries", coll["queries"], "--depth", "4",
        "--judge", "llm", "--base-url", server.url, "--model", "fake-model", "--out", str(tmp_path / "llm.txt"),
        "--backoff", "0.01", "--no-progress", *extra,
    ]  # fmt: skip


def everything_written(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


@pytest.mark.extra("label")
def test_llm_labels_qrels_jsonl_tags_and_summary(capsys, coll, tmp_path):
    faults = deque(["429", "500", "timeout", "malformed", "garbage"])
    with FakeChatServer(queue=faults, slow_seconds=8.0) as server:
        args = llm_args(coll, server, tmp_path, "--jsonl", str(tmp_path / "llm.jsonl"), "--tags-out")
        code, out, err = invoke(
            capsys, *args, str(tmp_path / "tiers.jsonl"), "--timeout", "1.5", "--price-in", "2", "--price-out", "8",
            "--format", "json",
        )  # fmt: skip
    assert code == 0, err
    summary = json.loads(out)
    assert summary["complete"] and summary["counts"]["new"] == 12 and summary["counts"]["failed"] == 0
    assert summary["labels"] == {"0": 3, "1": 3, "2": 3, "3": 3}
    assert summary["coverage"]["q1"] == {
        "pool": 4, "judged": 4, "failed": 0, "coverage": 1.0, "labels": {"0": 1, "1": 1, "2": 1, "3": 1}, "relevant": 3,
    }  # fmt: skip
    assert summary["retries"] == {"429": 1, "500": 1, "timeout": 1, "malformed": 1}
    # 12 answers + the garbage one + the timed-out and the malformed ones (worst case: both may be billed)
    assert summary["usage"]["requests"] == 15
    qrels = read_qrels(tmp_path / "llm.txt").to_dict()
    assert qrels == {q: {d: expected_grade(q, d) for d in docs} for q, docs in qrels.items()}
    assert sum(len(d) for d in qrels.values()) == 12
    rows = [json.loads(line) for line in (tmp_path / "llm.jsonl").read_text().splitlines()]
    assert len(rows) == 12
    first = rows[0]
    assert first["model"] == "fake-model" and first["tier"] == "B" and first["judge"] == "llm"
    assert first["prompt_hash"] == summary["judge"]["prompt_hash"] and len(first["prompt_hash"]) == 16
    assert first["reason"] == f"marker says {first['relevance']}"
    assert first["input_tokens"] > 0 and first["latency_ms"] > 0 and first["cost"] > 0
    assert read_qrels(tmp_path / "llm.jsonl").to_dict() == qrels  # the JSONL reads back as qrels
    assert read_query_tags(tmp_path / "tiers.jsonl") == {"q1": {"tier": "B"}, "q2": {"tier": "B"}, "q3": {"tier": "B"}}
    assert (tmp_path / "llm.sqlite").exists()


@pytest.mark.extra("label")
def test_table_output_and_the_estimate_on_stderr(capsys, coll, tmp_path):
    with FakeChatServer() as server:
        code, out, err = invoke(capsys, *llm_args(coll, server, tmp_path))
    assert code == 0, err
    assert "estimate (before sending)" in err and "requests to send" in err
    assert "judged now" in out and "coverage per query" in out
    assert "3 of 3 queries fully judged" in out


@pytest.mark.extra("label")
def test_rerunning_the_command_resumes_without_paying_twice(capsys, coll, tmp_path):
    with FakeChatServer() as server:
        assert invoke(capsys, *llm_args(coll, server, tmp_path, "--max-judgments", "5"))[0] == 1
        assert len(server.records) == 5
        assert len(read_qrels(tmp_path / "llm.txt").to_dict()["q1"]) == 2  # ranks 1-2 of q1 judged first
        code, out, err = invoke(capsys, *llm_args(coll, server, tmp_path, "--format", "json"))
        assert code == 0, err
        assert len(server.records) == 12
        assert json.loads(out)["counts"] == {
            "pool": 12, "done_before": 5, "failed_before": 0, "new": 7, "cached": 0, "failed": 0, "errors": 0,
            "no_signal": 0, "not_started": 0,
        }  # fmt: skip


@pytest.mark.extra("label")
def test_the_cost_cap_exits_1_and_writes_what_was_judged(capsys, coll, tmp_path):
    with FakeChatServer() as server:
        code, out, err = invoke(
            capsys, *llm_args(coll, server, tmp_path, "--price-in", "100", "--price-out", "100", "--max-cost", "0.25",
                              "--max-tokens", "32", "--concurrency", "2"),
        )  # fmt: skip
        answered = len(server.records)
    assert code == 1, err
    assert "stopped before the next request could cross --max-cost" in out
    assert 0 < answered < 12
    lines = (tmp_path / "llm.txt").read_text().splitlines()
    assert len(lines) == answered


def test_dry_run_prints_the_estimate_and_sends_or_writes_nothing(capsys, coll, tmp_path):
    with FakeChatServer() as server:
        code, out, err = invoke(
            capsys, *llm_args(coll, server, tmp_path, "--dry-run", "--price-in", "1", "--price-out", "1"), "--format",
            "json",
        )  # fmt: skip
        assert server.records == []
    assert code == 0, err
    body = json.loads(out)
    assert body["dry_run"] and body["estimate"]["requests"] == 12 and body["estimate"]["worst_cost"] > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl", "queries.jsonl", "run.txt"]


@pytest.mark.extra("label")
def test_the_key_never_appears_in_output_files_logs_or_errors(capsys, caplog, coll, tmp_path):
    caplog.set_level(logging.DEBUG)  # every logger, httpx and httpcore included
    with FakeChatServer(faults={"d1_0 with": ["echo"] * 3}) as server:
        code, out, err = invoke(capsys, *llm_args(coll, server, tmp_path, "--jsonl", str(tmp_path / "l.jsonl")))
        assert {r.authorization for r in server.records} == {f"Bearer {KEY}"}  # it was sent...
    assert code == 1, err  # a failed pair leaves the qrels incomplete (issue 22.13)
    assert "1 pairs failed (kept out of the qrels), e.g. q1/d1_0: unreadable answer (3 of 3)" in err
    with JudgmentStore(tmp_path / "llm.sqlite") as store:
        (failed,) = store.judgments(status="failed")
    assert failed.raw == "Your key is Bearer ***; relevance unknown"  # the echoed key, scrubbed
    with FakeChatServer(queue=deque(["401echo"])) as server:
        code2, out2, err2 = invoke(capsys, *llm_args(coll, server, tmp_path, "--store", str(tmp_path / "b.sqlite")))
    assert code2 == 2
    assert "HTTP 401" in err2 and "--api-key-env" in err2
    for text in (out, err, out2, err2):
        assert KEY not in text  # ...and never shown
    assert KEY.encode() not in everything_written(tmp_path)  # store (and its WAL), qrels, JSONL
    assert "HTTP Request: POST" in caplog.text  # the requests were logged...
    assert KEY not in caplog.text  # ...without the key


def test_bad_options_and_inputs_exit_2_naming_the_problem(capsys, coll, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the relative --out/--store files of the cases land here, not in the checkout
    base = ["label", "--run", coll["run"], "--corpus", coll["corpus"], "--queries", coll["queries"]]
    bad_corpus = tmp_path / "bad.jsonl"
    bad_corpus.write_text('{"_id": "d1", "text": "ok"}\n{"_id": "d2", "text": \n')
    template = tmp_path / "prompt.txt"
    template.write_text("Query: {query}\nDoc: {passage}\n")  # {doc} is accepted for {document}
    cases = [
        ([*base, "--out", "x.txt"], "--judge llm needs --base-url"),
        ([*base, "--base-url", "http://127.0.0.1:9/v1", "--out", "x.txt"], "--judge llm needs --model"),
        ([*base, "--judge", "bm25"], "give --out QRELS (or --dry-run)"),
        (["label", "--judge", "bm25", "--out", "x.txt"], "give at least one --run"),
        (["label", "--judge", "clicks", "--out", "x.txt"], "--judge clicks needs --clicks FILE"),
        (
            [*base, "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--max-cost", "1", "--out", "x.txt"],
            "--max-cost needs prices",
        ),
        (
            ["label", "--run", coll["run"], "--corpus", str(bad_corpus), "--queries", coll["queries"],
             "--judge", "bm25", "--out", "x.txt"],
            "bad.jsonl:2: invalid JSON",
        ),
        (
            [*base, "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--prompt", str(template), "--out", "x.txt"],
            "prompt.txt:2: unknown placeholder {passage}",
        ),
        ([*base, "--judge", "bm25", "--thresholds", "0.5,0.2", "--out", "x.txt"], "strictly increasing"),
        ([*base, "--judge", "bm25", "--thresholds", "high", "--out", "x.txt"], "--thresholds: expected numbers"),
    ]  # fmt: skip
    for argv, message in cases:
        code, _, err = invoke(capsys, *argv)
        assert code == 2, (argv, err)
        assert message in err, (message, err)
        assert "Traceback" not in err


@pytest.mark.extra("label")
def test_an_unreachable_endpoint_is_an_error_per_pair_not_a_crash(capsys, coll, tmp_path):
    with FakeChatServer() as server:
        args = llm_args(coll, server, tmp_path)
    args[args.index("--base-url") + 1] = "http://127.0.0.1:9/v1"  # nothing listens on port 9
    code, out, err = invoke(capsys, *args, "--max-retries", "0")
    assert code == 1, err  # no answer: pairs left for the next run
    assert "some pairs got no answer" in out and "no answer (retried next run)" in out
    assert (tmp_path / "llm.txt").read_text() == ""


def test_subcommands_reject_the_main_options(capsys, coll, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(capsys, "label", "--run", coll["run"], "judges", "x.sqlite")
    assert code == 2 and "--run belongs to 'rankgate label' itself" in err


def test_help_of_every_label_command_has_examples(capsys):
    for argv in (
        ["label", "--help"],
        *(["label", sub, "--help"] for sub in ("sample", "import", "agreement", "merge")),
    ):
        code, out, _ = invoke(capsys, *argv)
        assert code == 0 and "Examples:" in out and "rankgate label" in out
    code, out, _ = invoke(capsys, "label")
    assert code == 0 and "--judge" in out  # no arguments: the help


@pytest.mark.extra("label")
def test_judges_lists_the_store(capsys, coll, tmp_path):
    with FakeChatServer() as server:
        assert invoke(capsys, *llm_args(coll, server, tmp_path, "--price-in", "1", "--price-out", "1"))[0] == 0
    code, out, err = invoke(capsys, "label", "judges", str(tmp_path / "llm.sqlite"), "--format", "json")
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["judge_id"].startswith("llm:fake-model:") and row["ok"] == 12 and row["cost"] > 0


@pytest.mark.extra("label")
def test_binary_scale_labels_0_and_1(capsys, coll, tmp_path):
    """The binary prompt goes out, and the labels are 0/1: planted grades 2 and 3 are relevant."""
    with FakeChatServer() as server:
        code, out, err = invoke(capsys, *llm_args(coll, server, tmp_path, "--scale", "binary", "--format", "json"))
        sent = [r.body["messages"][-1]["content"] for r in server.records]
    assert code == 0, err
    assert sent and all('"relevance": <0 or 1>' in text for text in sent)
    qrels = read_qrels(tmp_path / "llm.txt").to_dict()
    assert qrels == {q: {d: int(expected_grade(q, d) >= 2) for d in docs} for q, docs in qrels.items()}
    assert json.loads(out)["labels"] == {"0": 6, "1": 6}


@pytest.mark.extra("label")
def test_a_custom_prompt_template_is_sent_and_names_a_new_judge(capsys, coll, tmp_path):
    template = tmp_path / "prompt.txt"
    template.write_text(
        "You grade search results for a hiking shop (0-3).\n\nQuery: {query}\n\nPassage:\n{document}\n\n"
        'Reply with only {{"relevance": <0, 1, 2 or 3>, "reason": "<why>"}}\n'
    )
    with FakeChatServer() as server:
        code, out, err = invoke(
            capsys, *llm_args(coll, server, tmp_path, "--prompt", str(template), "--format", "json")
        )
        sent = [r.body["messages"][-1]["content"] for r in server.records]
    assert code == 0, err
    assert sent and all(text.startswith("You grade search results for a hiking shop") for text in sent)
    assert all("{query}" not in text and "{document}" not in text for text in sent)  # filled in
    assert any(f"rel={expected_grade('q1', 'd1_0')}" in text for text in sent)  # the document's own text
    qrels = read_qrels(tmp_path / "llm.txt").to_dict()
    assert qrels == {q: {d: expected_grade(q, d) for d in docs} for q, docs in qrels.items()}
    custom_hash = json.loads(out)["judge"]["prompt_hash"]
    with FakeChatServer() as server:
        _, out, _ = invoke(capsys, *llm_args(coll, server, tmp_path, "--format", "json"))
    assert json.loads(out)["judge"]["prompt_hash"] != custom_hash  # the built-in prompt is another judge
