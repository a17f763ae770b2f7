"""The A/B walk-through of docs/retrieve.md, run for real, command by command, as the docs write it.

"old" is the demo BM25 search service (``python -m rankgate.retrieve.demo_service``, a real HTTP
server in a child process), "new" a LanceDB index of the demo corpus built by ``rankgate index``
(MiniLM). Each is asked every demo query by ``rankgate retrieve`` (a run and a JSON summary each),
then ``rankgate compare`` and ``rankgate gate`` decide with the docs' ship criteria: a promotion
rule (R@10 must rise by 3%, on the means), a guard on nDCG@10, a p95 ceiling and a limit on p95
growth against the old summary. The docs' test (tests/test_docs_examples.py) lists these commands
as not run because they need the service; this test is where they run.

Oracles: R@10 and nDCG's guard recomputed by hand from the qrels and the run files (trec_eval's
tie rule), the latency gates' statuses recomputed from the two summaries, and the old run checked
against the BM25 function the service serves.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli_support import invoke
from tests.docs_support import ROOT, Block, commands

pytestmark = [pytest.mark.slow, pytest.mark.extra("retrieve", "bench", "lancedb")]

DOC = ROOT / "docs" / "retrieve.md"
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


def doc_block(language: str, marker: str) -> Block:
    """The one block of docs/retrieve.md in ``language`` that holds ``marker``."""
    text = DOC.read_text(encoding="utf-8")
    found = [m for m in _FENCE.finditer(text) if m.group(1) == language and marker in m.group(2)]
    assert len(found) == 1, f"docs/retrieve.md: {len(found)} {language} blocks hold {marker!r}"
    line = text.count("\n", 0, found[0].start()) + 2
    return Block(f"docs/retrieve.md:{line}", language, found[0].group(2))


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The docs' service command, on a free port instead of 8080, in a child process; its URL."""
    monkeypatch.chdir(tmp_path)
    from rankgate.data import demo_dir

    for name in ("queries.jsonl", "qrels.txt"):
        shutil.copy(demo_dir() / name, tmp_path / name)
    monkeypatch.setenv("RANKGATE_CACHE_DIR", str(tmp_path / "embeddings"))
    [command] = commands(doc_block("sh", "rankgate.retrieve.demo_service"))
    argv = shlex.split(command.text, comments=True)
    assert argv[:3] == ["python", "-m", "rankgate.retrieve.demo_service"] and "--port" in argv
    argv[argv.index("--port") + 1] = "0"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    process = subprocess.Popen([sys.executable, *argv[1:]], stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stderr is not None
        ready = process.stderr.readline()  # printed once the socket listens and the SPEC is written
        match = re.search(r"serving BM25 over the demo corpus at (http://\S+)/search", ready)
        assert match is not None, ready + process.stderr.read()
        yield match.group(1)
    finally:
        process.terminate()
        process.wait(30)


def read_run(path: Path) -> dict[str, list[str]]:
    """Each query's doc ids in trec_eval's order: score descending, ties by doc id descending."""
    rows: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        rows[qid].append((float(score), doc))
    return {q: [d for _, d in sorted(r, key=lambda x: (x[0], x[1].encode()), reverse=True)] for q, r in rows.items()}


def recall_at_10(qrels: dict[str, set[str]], run: dict[str, list[str]]) -> float:
    """R@10 by hand: every qrels query counts (0 without a relevant document or without hits)."""
    values = [len(rel & set(run.get(q, [])[:10])) / len(rel) if rel else 0.0 for q, rel in qrels.items()]
    return sum(values) / len(values)


def relevant(path: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for line in path.read_text().splitlines():
        qid, _, doc, grade = line.split()
        out.setdefault(qid, set())  # every judged query counts, with or without a relevant document
        if int(grade) >= 1:
            out[qid].add(doc)
    return out


def run_docs_commands(capsys: pytest.CaptureFixture[str]) -> dict[str, tuple[int, str, str]]:
    """Each command of the docs' A/B block, in-process; by verb (``retrieve`` twice: old, new)."""
    ship = doc_block("yaml", "min_relative_improvement")
    Path("ab").mkdir(exist_ok=True)
    Path("ab/ship.yaml").write_text(ship.text, encoding="utf-8")
    results: dict[str, tuple[int, str, str]] = {}
    for command in commands(doc_block("sh", "rankgate compare")):
        argv = shlex.split(command.text, comments=True)
        assert argv[0] == "rankgate", command
        code, out, err = invoke(capsys, *argv[1:])
        key = argv[1] if argv[1] != "retrieve" else f"retrieve {Path(argv[argv.index('-o') + 1]).stem}"
        results[key] = (code, out, err)
    return results


def test_the_ab_walk_through_of_the_docs(service: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert f"url: {service}/search" in Path("ab/old.yaml").read_text()  # the SPEC the service wrote
    done = run_docs_commands(capsys)
    assert list(done) == ["index", "retrieve old", "retrieve new", "compare", "gate"]
    for verb in ("index", "retrieve old", "retrieve new", "compare"):
        assert done[verb][0] == 0, f"{verb}: {done[verb][2][-2000:]}"

    summaries = {name: json.loads(Path(f"ab/{name}.json").read_text()) for name in ("old", "new")}
    assert summaries["old"]["retriever"]["kind"] == "http" and summaries["new"]["retriever"]["kind"] == "lancedb"
    for summary in summaries.values():
        assert (summary["queries"], summary["answered"], summary["failed"]) == (63, 63, 0)
        assert 0 < summary["latency_ms"]["p50"] <= summary["latency_ms"]["p95"] <= summary["latency_ms"]["p99"]
    old, new = read_run(Path("ab/old.txt")), read_run(Path("ab/new.txt"))
    assert len(old) == len(new) == 63 and all(len(docs) <= 100 for docs in [*old.values(), *new.values()])
    from rankgate.data import demo_dir
    from rankgate.io.texts import read_queries
    from rankgate.retrieve.demo_service import demo_search

    bm25, texts = demo_search(), read_queries(demo_dir() / "queries.jsonl")
    for qid in ("q01", "q17", "q40"):  # the old run is what the service's BM25 answers
        assert set(old[qid]) == {d for d, _ in bm25(texts[qid], 100)}

    qrels = relevant(Path("qrels.txt"))
    r_old, r_new = recall_at_10(qrels, old), recall_at_10(qrels, new)
    assert f"{r_new - r_old:+.4f}" in done["compare"][1]  # the compare table's R@10 delta

    code, text, err = done["gate"]
    verdict = check_gate_json(capsys, r_old, r_new, summaries)
    assert code == (1 if verdict == "fail" else 0), err
    lines = text.splitlines()
    assert lines[0].startswith(f"rankgate gate: {verdict.upper()}")
    assert f"R@10 rose from {r_old:.1%} to {r_new:.1%}" in text and "needs +3%" in text
    assert any("(ceiling 2000 ms)" in line for line in lines)
    assert any("max growth 50%" in line for line in lines)


def check_gate_json(capsys: pytest.CaptureFixture[str], r_old: float, r_new: float, summaries: dict[str, Any]) -> str:
    """The docs' gate command again with --format json: every gate's status against the oracles; the verdict."""
    [command] = [c for c in commands(doc_block("sh", "rankgate compare")) if c.text.startswith("rankgate gate")]
    code, out, err = invoke(capsys, *shlex.split(command.text)[1:], "--format", "json")
    result = json.loads(out)
    gates = {g["name"]: g for g in result["gates"]}
    assert list(gates) == ["promote_recall", "ndcg_guard", "p95_budget", "p95_growth"]
    promote = gates["promote_recall"]
    assert (promote["baseline"], promote["value"]) == pytest.approx((r_old, r_new), abs=1e-12)
    assert promote["relative_delta"] == pytest.approx(r_new / r_old - 1, abs=1e-12)
    assert promote["status"] == ("pass" if r_new >= 1.03 * r_old else "fail")
    assert r_new >= 1.03 * r_old  # MiniLM beats BM25 on the demo by about 30% R@10: the story's premise
    assert gates["ndcg_guard"]["status"] == "pass"  # nDCG@10 rises too (the compare table shows it)
    p95_old, p95_new = (summaries[n]["latency_ms"]["p95"] for n in ("old", "new"))
    budget, growth = gates["p95_budget"], gates["p95_growth"]
    assert budget["value"] == pytest.approx(p95_new) and budget["source"] == "ab/new.json"
    assert budget["status"] == ("pass" if p95_new <= 2000 else "fail")
    assert (growth["value"], growth["baseline"]) == pytest.approx((p95_new, p95_old))
    assert growth["status"] == ("pass" if p95_new <= 1.5 * p95_old else "fail")
    expected = "fail" if any(g["status"] == "fail" for g in gates.values()) else "pass"
    assert result["verdict"] == expected and code == (1 if expected == "fail" else 0), err
    return expected
