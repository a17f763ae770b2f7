"""``rankgate report`` end to end: real eval/gate/compare/store outputs in, one HTML file out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli_support import invoke
from tests.report_support import BASE_RR, CAND_RR, write_collection


def _figures(page: str) -> dict:
    found = re.search(r'id="rg-figures">(.*?)</script>', page, re.S)
    assert found is not None
    return json.loads(found.group(1))


@pytest.fixture
def outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """eval (both runs, per query), compare and gate JSON of the hand-worked collection, and a store."""
    paths = write_collection(tmp_path)
    q, base, cand = paths["qrels"], paths["base"], paths["cand"]
    for name, run in (("base", base), ("cand", cand)):
        code, _, err = invoke(capsys, "eval", q, run, "-m", "RR,P@1,P@2,P@3,Judged@1", "--per-query",
                           "--format", "json", "-o", str(tmp_path / f"{name}.json"))  # fmt: skip
        assert code == 0, err
    code, out, err = invoke(capsys, "compare", q, base, cand, "-m", "RR", "--format", "json")
    assert code == 0, err
    (tmp_path / "compare.json").write_text(out)
    store = str(tmp_path / "results.db")
    code, out, err = invoke(capsys, "gate", "--qrels", q, "--run", cand, "--config", paths["gates"],
                         "--baseline-run", base, "--store", store, "--format", "json")  # fmt: skip
    assert code == 1, err  # RR drops from 0.8333 to 0.5: the gate fails
    (tmp_path / "gate.json").write_text(out)
    jsons = {f"{k}_json": str(tmp_path / f"{k}.json") for k in ("base", "cand", "compare", "gate")}
    return {**paths, **jsons, "store": store}


@pytest.mark.extra("report", "gate")
def test_report_from_eval_compare_gate_and_store(outputs, tmp_path: Path, capsys):
    out = tmp_path / "report.html"
    inputs = [outputs[f"{k}_json"] for k in ("base", "cand", "compare", "gate")]
    code, stdout, err = invoke(capsys, "report", *inputs, "--store", outputs["store"], "--out", str(out))
    assert code == 0, err
    assert stdout.startswith(f"wrote {out} (")
    page = out.read_text(encoding="utf-8")
    assert "verdict-fail" in page and "1 gate failed" in page
    figures = _figures(page)
    # The per-query deltas are the hand-worked ones (candidate - baseline), sorted.
    expected = sorted((CAND_RR[q] - BASE_RR[q], q) for q in BASE_RR)
    bars = figures["delta-cand-vs-base-rr"]["data"][0]
    assert list(zip(bars["y"], bars["x"], strict=True)) == expected
    # P@k at three cutoffs is a curve per system; the values are the hand-worked means.
    curve = {t["name"]: t["y"] for t in figures["curve-p"]["data"]}
    assert curve["base"] == pytest.approx([2 / 3, 1 / 2, 4 / 9])
    assert curve["cand"] == pytest.approx([1 / 3, 1 / 3, 1 / 3])
    # The gate recorded the candidate in the store: the history shows it.
    history = figures["history-rr"]["data"]
    assert [t["y"] for t in history if t["name"] == "cand"] == [[pytest.approx(0.5)]]


@pytest.mark.extra("report", "gate")
def test_report_from_the_store_alone(outputs, tmp_path: Path, capsys):
    from datetime import datetime, timedelta, timezone

    from rankgate.evaluation.evaluate import evaluate
    from rankgate.io import read_qrels, read_run
    from rankgate.store.base import open_store
    from rankgate.store.provenance import Provenance

    # The store holds the gated candidate (recorded by the gate); main's run of yesterday becomes the baseline.
    with open_store(outputs["store"]) as store:
        res = evaluate(read_qrels(outputs["qrels"]), read_run(outputs["base"]), ["RR"])
        yesterday = Provenance(created_at=datetime.now(timezone.utc) - timedelta(days=1), branch="main")
        store.set_baseline(store.add(res, name="base", provenance=yesterday))
    out = tmp_path / "stored.html"
    code, _, err = invoke(capsys, "report", "--store", outputs["store"], "-o", str(out))
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert "result 2 (baseline)" in page and "result 1 (latest)" in page
    figures = _figures(page)
    bars = figures["delta-cand-vs-base-rr"]["data"][0]  # the latest result against the baseline
    assert list(zip(bars["y"], bars["x"], strict=True)) == sorted((CAND_RR[q] - BASE_RR[q], q) for q in BASE_RR)
    assert [t["name"] for t in figures["history-rr"]["data"]] == ["base", "cand", "baseline"]


@pytest.mark.extra("report", "gate")
def test_query_texts_and_targets(outputs, tmp_path: Path, capsys):
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q3", "text": "where is the sixth document"}\n')
    targets = tmp_path / "targets.yaml"
    targets.write_text("targets:\n  - metric: MRR\n    min: 0.9\n    advice: Add synonyms for product names.\n")
    out = tmp_path / "r.html"
    code, _, err = invoke(capsys, "report", outputs["base_json"], outputs["cand_json"], "--queries", str(queries),
                       "--targets", str(targets), "-o", str(out), "--title", "Nightly")  # fmt: skip
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert "where is the sixth document" in page
    assert "Add synonyms for product names." in page
    assert "<title>Nightly</title>" in page
    assert page.count('class="advice"') == 1  # one target, below for both systems


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"measures": ["P@5"],\n "aggregate": {"P@5": "x"}}', "bad.json: aggregate.P@5: expected a number or null"),
        ('{"measures": ["P@5"],\n "aggregate": {', "bad.json:2: invalid JSON"),
        ('{"rows": []}', "bad.json: not a rankgate eval, compare, cutoffs, gate or bench JSON object"),
    ],
)
def test_bad_input_exits_2_naming_the_file(tmp_path: Path, capsys, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    code, out, err = invoke(capsys, "report", str(bad), "-o", str(tmp_path / "r.html"))
    assert code == 2
    assert message in err and "Traceback" not in err
    assert out == "" and not (tmp_path / "r.html").exists()


@pytest.mark.extra("report")
def test_usage_errors(outputs, tmp_path: Path, capsys, monkeypatch):
    monkeypatch.delenv("RANKGATE_STORE", raising=False)
    code, _, err = invoke(capsys, "report", "-o", str(tmp_path / "r.html"))
    assert code == 2 and "give at least one INPUT.json, or --store URL" in err
    code, _, err = invoke(capsys, "report", "--store", str(tmp_path / "none.db"), "-o", str(tmp_path / "r.html"))
    assert code == 2 and "no results store at" in err
    from rankgate.store.base import open_store

    open_store(tmp_path / "empty.db").close()
    code, _, err = invoke(capsys, "report", "--store", str(tmp_path / "empty.db"), "-o", str(tmp_path / "r.html"))
    assert code == 2 and "empty.db: the store holds no results to report on" in err
    targets = tmp_path / "t.yaml"
    targets.write_text("targets:\n  - metric: R@10\n    min: lots\n")
    code, _, err = invoke(
        capsys, "report", outputs["base_json"], "--targets", str(targets), "-o", str(tmp_path / "r.html")
    )
    assert code == 2 and "targets[0].min" in err and "t.yaml" in err


def test_help_has_examples(capsys):
    code, out, _ = invoke(capsys, "report", "--help")
    assert code == 0
    assert "Examples:" in out and "rankgate report dense.json gate.json --store results.db --out report.html" in out


def test_progress_bar_shows_each_step():
    import io

    from rich.console import Console

    from rankgate.cli.report_cmd import _progress

    buffer = io.StringIO()
    with _progress(3, enabled=True, console=Console(file=buffer, force_terminal=True, width=80)) as step:
        for message in ("reading a.json", "building the charts", "writing r.html"):
            step(message)
    shown = buffer.getvalue()
    assert all(m in shown for m in ("reading a.json", "building the charts", "writing r.html"))
    with _progress(3, enabled=False) as step:
        step("nothing drawn")  # a no-op


@pytest.mark.extra("report", "gate")
def test_without_out_the_report_goes_to_the_default_path(outputs, tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, stdout, err = invoke(capsys, "report", outputs["base_json"], outputs["cand_json"])
    assert code == 0, err
    assert stdout.startswith("wrote rankgate-report.html (") and (tmp_path / "rankgate-report.html").is_file()
