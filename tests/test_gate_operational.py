"""Operational gates (issue 16 item 3, 4, 7) on a real benchmark: latency ceilings, a relative p95
growth limit against a baseline bench file, a neighbor-recall floor on an IVF-PQ index; the
store keeps the figures next to the quality numbers, and a stored baseline's figures are used.

The bench JSON is `rankgate bench --format json`'s (``BenchReport.to_json``, what the CLI
prints) of a BEIR-layout collection the test writes, searched with a hashing encoder, an exact
index and a deliberately coarse IVF-PQ (1 of 16 lists probed, 4-bit codes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.bench_support import factory_of, write_beir
from tests.cli_support import invoke

pytestmark = pytest.mark.extra("bench", "gate")
PQ = "ivf-pq:nlist=16,nprobe=1,m=8,nbits=4"


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from rankgate.bench.encoders import HashingEncoder
    from rankgate.bench.harness import run_benchmark
    from rankgate.bench.matrix import plan_from_dict

    root = tmp_path_factory.mktemp("bench")
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(300)]
    docs = {f"d{i}": " ".join(rng.choice(words, 12)) for i in range(400)}
    queries = {f"q{i}": " ".join(docs[f"d{i}"].split()[:4]) for i in range(40)}
    write_beir(root / "col", docs, queries, {f"q{i}": {f"d{i}": 1} for i in range(40)})
    plan = plan_from_dict(
        {
            "measures": ["R@10"],
            "latency": {"queries": 5, "warmup": 1},
            "matrix": {"retrievers": [{"name": "hash", "type": "dense", "model": "hash"}],
                       "indexes": ["exact", PQ], "k": [10]},
        }
    )  # fmt: skip
    report = run_benchmark(
        root / "col", plan, out_dir=root / "runs", encoder_factory=factory_of(HashingEncoder(dim=64))
    )
    (root / "bench.json").write_text(report.to_json())
    data = json.loads(report.to_json())
    rows = {r["index"]: r for r in data["results"]}
    return {"root": root, "data": data, "exact": rows["exact"], "pq": rows["ivf-pq"],
            "qrels": root / "col" / "qrels" / "test.tsv", "run": Path(rows["exact"]["run_file"])}  # fmt: skip


def _gate(capsys: Any, bench: dict[str, Any], config: str, *extra: str, fmt: str = "json") -> tuple[int, str, str]:
    path = bench["root"] / "ship-criteria.yaml"
    path.write_text(config)
    args = ["gate", "--qrels", str(bench["qrels"]), "--run", str(bench["run"]), "--config", str(path), "--format", fmt]
    return invoke(capsys, *args, *extra)


def _baseline_bench(bench: dict[str, Any], name: str, factor: float) -> Path:
    """The same bench file with every p95 latency divided by ``factor`` (the current one grew by it)."""
    data = json.loads(json.dumps(bench["data"]))
    for row in data["results"]:
        row["latency_ms"]["p95"] /= factor
    path = bench["root"] / name
    path.write_text(json.dumps(data))
    return path


def test_latency_ceiling_that_holds_and_one_that_fails(capsys, bench):
    p95 = bench["exact"]["latency_ms"]["p95"]
    ok = f"gates:\n  - {{name: p95, metric: latency_p95_ms, index: exact, max: {p95 * 2}}}\n"
    code, out, err = _gate(capsys, bench, ok, "--bench", str(bench["root"] / "bench.json"))
    found = json.loads(out)["gates"][0]
    assert code == 0, err
    assert found["value"] == p95 and found["status"] == "pass" and found["source"].endswith("bench.json")
    tight = f"gates:\n  - {{name: p95, metric: latency_p95_ms, index: exact, max: {p95 / 2}}}\n"
    code, text, _ = _gate(capsys, bench, tight, "--bench", str(bench["root"] / "bench.json"), fmt="text")
    assert code == 1
    assert f"❌ latency_p95_ms is {p95:.4g} ms (ceiling {p95 / 2:.4g} ms) — above the ceiling" in text


def test_relative_p95_growth_against_a_baseline_bench_file(capsys, bench):
    config = "gates:\n  - {name: p95_growth, metric: latency_p95_ms, index: exact, regression_max_relative: 0.2}\n"
    current = str(bench["root"] / "bench.json")
    grew_10 = _baseline_bench(bench, "base10.json", 1.1)
    code, out, _ = _gate(capsys, bench, config, "--bench", current, "--baseline-bench", str(grew_10))
    found = json.loads(out)["gates"][0]
    assert code == 0 and found["relative_delta"] == pytest.approx(0.1)
    assert found["checks"][0]["gain"] == pytest.approx(-0.1) and found["checks"][0]["bar"] == -0.2
    grew_50 = _baseline_bench(bench, "base50.json", 1.5)
    code, text, _ = _gate(capsys, bench, config, "--bench", current, "--baseline-bench", str(grew_50), fmt="text")
    assert code == 1
    assert "(+" in text and "+50.0%; max growth 20%) — grew more than the allowed 20%" in text


def test_neighbor_recall_floor_on_ivf_pq_misses(capsys, bench):
    recall = bench["pq"]["neighbor_recall"]
    assert recall < 0.95  # the coarse index misses neighbors
    config = "gates:\n  - {name: ann, metric: neighbor_recall@10, index: ivf-pq, threshold: 0.95}\n"
    code, out, _ = _gate(capsys, bench, config, "--bench", str(bench["root"] / "bench.json"))
    found = json.loads(out)["gates"][0]
    assert code == 1 and found["value"] == recall and found["failed"] == ["floor"]


def test_index_swap_example_from_the_docs(capsys, bench):
    """docs/gate.md's index swap: the ANN row against the exact row of one bench file:
    neighbor recall >= 0.95 and p95 at most 1.2x the exact index's."""
    config = (
        "gates:\n"
        "  - {name: ann_recall, metric: neighbor_recall@10, index: ivf-pq, threshold: 0.95}\n"
        "  - {name: ann_p95, metric: latency_p95_ms, index: ivf-pq, baseline_index: exact,"
        " regression_max_relative: 0.2}\n"
    )
    code, out, err = _gate(capsys, bench, config, "--bench", str(bench["root"] / "bench.json"))
    recall, p95 = json.loads(out)["gates"]
    assert code == 1 and recall["status"] == "fail" and recall["value"] == bench["pq"]["neighbor_recall"]
    assert p95["value"] == bench["pq"]["latency_ms"]["p95"] and p95["baseline"] == bench["exact"]["latency_ms"]["p95"]
    grew = bench["pq"]["latency_ms"]["p95"] / bench["exact"]["latency_ms"]["p95"] - 1
    assert p95["relative_delta"] == pytest.approx(grew)
    assert p95["status"] == ("pass" if grew <= 0.2 else "fail")
    exact_only = bench["root"] / "exact-bench.json"
    exact_only.write_text(json.dumps(bench["data"] | {"results": [bench["exact"]]}))
    code, out, err = _gate(capsys, bench, config, "--bench", str(bench["root"] / "bench.json"),
                           "--baseline-bench", str(exact_only))  # fmt: skip
    assert code == 1, err  # the floor reads no baseline row; the p95 gate reads the file's exact row
    assert json.loads(out)["gates"][1]["baseline"] == bench["exact"]["latency_ms"]["p95"]
    config = config.replace("metric: latency_p95_ms, index: ivf-pq, baseline_index: exact", "metric: latency_p95_ms")
    code, out, err = _gate(capsys, bench, config, "--bench", str(bench["root"] / "bench.json"))
    assert code == 2 and "gates[1]: 2 rows of" in err and "retriever:" in err  # two rows, no selector


@pytest.mark.parametrize(
    ("gate", "key", "message"),
    [
        ("{name: g, metric: latency_p95_ms, max: '20'}", "gates[0].max", "valid number"),
        ("{name: g, metric: latency_p95_ms, max: 20, regression_max_relative: -0.2}",
         "gates[0].regression_max_relative", "must be >= 0"),
        ("{name: g, metric: R@10, min_relative_improvement: -0.03}", "gates[0].min_relative_improvement", ">= 0"),
        ("{name: g, metric: R@10, min_improvement: true}", "gates[0].min_improvement", "valid number"),
        ("{name: g, metric: R@10, min_improvement: .nan}", "gates[0].min_improvement", "finite"),
        ("{name: g, metric: R@10, threshold: 0.5, decide_on: always}", "gates[0].decide_on", "'mean' or 'ci'"),
        ("{name: g, metric: R@10, regression_max: 0.1, regression_rule: some}", "gates[0].regression_rule",
         "'all' or 'any'"),
        ("{name: g, metric: qps, max: 100}", "gates[0].max", "higher-is-better"),
        ("{name: g, metric: R@10, max: 0.9}", "gates[0].max", "higher-is-better"),
        ("{name: g, metric: latency_p95_ms, threshold: 10}", "gates[0].threshold", "lower-is-better"),
        ("{name: g, metric: p95, max: 10}", "gates[0].metric", "did you mean latency_p95_ms"),
        ("{name: g, metric: neighbor_recall@0, threshold: 0.9}", "gates[0].metric", "K >= 1"),
        ("{name: g, metric: qps, threshold: 5, decide_on: ci}", "gates[0].decide_on", "no CI"),
        ("{name: g, metric: qps, threshold: 5, retriever: ''}", "gates[0].retriever", "must not be empty"),
        ("{name: g, metric: R@10, threshold: 0.5, index: hnsw}", "gates[0].index", "picks a row"),
        ("{name: g, metric: latency_p95_ms, max: 10}", "gates[0].metric", "--bench"),
    ],
)  # fmt: skip
def test_bad_configs_exit_2_with_the_key_path(capsys, bench, gate, key, message):
    code, out, err = _gate(capsys, bench, f"gates:\n  - {gate}\n")
    assert code == 2 and out == "" and "Traceback" not in err
    assert key in err and message in err, err


def test_the_store_keeps_figures_and_a_stored_baseline_gives_them(capsys, bench, tmp_path):
    from rankgate.report.history import load_history
    from rankgate.store.base import open_store

    db = str(tmp_path / "results.db")
    current = str(bench["root"] / "bench.json")
    config = "gates:\n  - {name: p95, metric: latency_p95_ms, index: exact, regression_max_relative: 0.2}\n"
    code, out, err = _gate(capsys, bench, config, "--bench", str(_baseline_bench(bench, "b.json", 2.0)), "--store", db)
    assert code == 0, err
    first = json.loads(out)["stored_id"]
    with open_store(db) as store:
        store.set_baseline(first)
        assert store.get(first).figures["latency_p95_ms"] == bench["exact"]["latency_ms"]["p95"] / 2.0
        assert store.get(first).figures["qps"] == bench["exact"]["throughput_qps"]
    code, out, _ = _gate(capsys, bench, config, "--bench", current, "--store", db)
    found = json.loads(out)["gates"][0]
    assert code == 1 and found["baseline"] == pytest.approx(bench["exact"]["latency_ms"]["p95"] / 2.0)
    history = load_history(db, ["latency_p95_ms"])
    assert [p.aggregate["latency_p95_ms"] for p in history.points] == pytest.approx(
        [bench["exact"]["latency_ms"]["p95"] / 2.0, bench["exact"]["latency_ms"]["p95"]]
    )


def test_the_seeds_ship_criteria_file_verbatim_still_works(capsys, bench):
    seeds = (
        "# config/ship-criteria.yaml\n"
        "gates:\n"
        "  - name: retrieval_recall_at_5\n"
        "    threshold: 0.85 # absolute floor\n"
        "    regression_max: 0.03 # may not drop more than 3pp from baseline\n"
        "    severity: error # blocks merge\n"
        "  - name: retrieval_mrr\n"
        "    threshold: 0.62\n"
        "    regression_max: 0.05\n"
        "    severity: warning # PR comment, no block\n"
    )
    code, out, err = _gate(capsys, bench, seeds, "--baseline-run", str(bench["run"]))
    assert code in (0, 1) and "Traceback" not in err
    assert [g["metric"] for g in json.loads(out)["gates"]] == ["R@5", "RR"]


def test_a_bench_file_no_gate_reads_says_nothing_false(tmp_path):
    """--bench beside a config without an operational gate: the one row of a retrieve summary is
    kept for later growth gates, and no note speaks of "0 rows" read."""
    from rankgate.gate.config import load_config
    from rankgate.gate.operational import read_operational

    cfg = load_config({"gates": [{"name": "q", "metric": "nDCG@10", "threshold": 0.1}]})
    summary = {"queries": 3, "failed": 0, "qps": 10.0, "latency_ms": {"p50": 1.0, "p95": 2.0, "p99": 3.0}}
    (tmp_path / "one.json").write_text(json.dumps(summary))
    out = read_operational(cfg, tmp_path / "one.json", None, None)
    assert out.notes == [] and out.record.get("latency_p95_ms") == 2.0
