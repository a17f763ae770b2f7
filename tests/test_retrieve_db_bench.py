"""``bench`` with live retrievers: a LanceDB index next to exact search, and the adapter's bookkeeping."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from rankgate.bench.encoders import HashingEncoder
from rankgate.bench.harness import run_benchmark
from rankgate.bench.matrix import parse_retriever_specs, plan_from_dict
from rankgate.bench.retrievers.live import LiveBenchRetriever
from rankgate.errors import BackendError, ConfigError
from rankgate.retrieve.base import Hit, QueryFailed, TransientFailure
from rankgate.retrieve.indexing import index_corpus, spec_yaml
from rankgate.retrieve.runner import RetryPolicy
from tests.bench_support import CountingEncoder, factory_of


class ScriptedLive:
    """A live retriever that answers from a script: a list of answers or failures per call."""

    kind = "scripted"

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, str, int]] = []
        self.closed = False

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind}

    def search(self, query_id: str, text: str, k: int) -> Sequence[Hit]:
        self.calls.append((query_id, text, k))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def close(self) -> None:
        self.closed = True


def _bound(live: Any, **options: Any) -> LiveBenchRetriever:
    r = LiveBenchRetriever("team", live, **options)
    r.bind(["d1", "d2", "d3"], ["q1", "q2"], ["first query", "second query"])
    return r


def test_hits_map_to_corpus_positions_unknown_ids_are_kept_and_duplicates_reported() -> None:
    live = ScriptedLive([[Hit("d3", 2.0), Hit("zz", 1.5), Hit("d3", 1.0), Hit("d1", 0.5)], [Hit("d2")]])
    r = _bound(live)
    hits = r.search(r.encode_queries(["first query", "second query"]), 3)
    assert live.calls == [("q1", "first query", 3), ("q2", "second query", 3)]  # the query ids are sent
    assert hits.ids.tolist() == [[2, 3, 0], [1, -1, -1]]  # zz got position 3, after the corpus
    assert r.doc_ids == ["d1", "d2", "d3", "zz"]
    assert hits.scores[0].tolist() == [2.0, 1.5, 0.5] and hits.scores[1, 0] == 0.0  # no score: -rank
    assert any("1 returned document ids are not in the dataset's corpus (e.g. 'zz')" in w for w in r.warnings)
    assert any("1 duplicate hits" in w for w in r.warnings)


def test_transient_failures_are_retried_and_lasting_ones_name_the_query(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr("rankgate.bench.retrievers.live.time.sleep", waits.append)
    live = ScriptedLive([TransientFailure("HTTP 503", retry_after=1.5), [Hit("d1", 1.0)]])
    r = _bound(live)
    assert r.search([("q1", "first query")], 5).ids.tolist() == [[0, -1, -1, -1, -1]]
    assert waits == [1.5]  # Retry-After honoured
    waits.clear()
    r = _bound(ScriptedLive([TransientFailure("HTTP 500")] * 4))  # the runner's policy: 3 retries by default
    with pytest.raises(BackendError, match="team: query 'q1' failed 4 times: HTTP 500"):
        r.search([("q1", "first query")], 5)
    assert len(waits) == 3 and all(0.0 <= w <= 0.5 * 2**n for n, w in enumerate(waits))  # full-jitter backoff
    r = _bound(ScriptedLive([TransientFailure("HTTP 500")] * 2), retry=RetryPolicy(retries=1))
    with pytest.raises(BackendError, match="team: query 'q1' failed 2 times: HTTP 500"):
        r.search([("q1", "first query")], 5)
    r = _bound(ScriptedLive([QueryFailed("hit 0 has no _id")]))
    with pytest.raises(BackendError, match="team: query 'q2': hit 0 has no _id"):
        r.search([("q2", "second query")], 5)


def test_live_specs_on_the_command_line_and_in_matrix_files() -> None:
    (spec,) = parse_retriever_specs(["live:indexes/lance.yaml"])
    assert (spec.name, spec.kind, spec.params["spec"]) == ("live:lance", "live", "indexes/lance.yaml")
    plan = plan_from_dict({"matrix": {"retrievers": [{"name": "team", "type": "live", "spec": {"kind": "lancedb"}}]}})
    assert plan.retrievers[0].params["spec"] == {"kind": "lancedb"}
    bad = [
        ({"type": "live"}, "matrix.retrievers[0].spec: a live retriever needs spec"),
        ({"type": "live", "spec": "x.yaml", "model": "m"}, "matrix.retrievers[0].model: a live retriever takes"),
        ({"type": "dense", "spec": "x.yaml"}, "matrix.retrievers[0].spec: spec applies to type: live only"),
    ]
    for entry, message in bad:
        with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
            plan_from_dict({"matrix": {"retrievers": [entry]}})
    with pytest.raises(ConfigError, match="'team' is a live retriever: it cannot be fused"):
        plan_from_dict(
            {
                "matrix": {
                    "retrievers": [
                        "bm25",
                        {"name": "team", "type": "live", "spec": "x.yaml"},
                        {"name": "h", "type": "hybrid", "of": ["bm25", "team"]},
                    ]
                }
            }
        )


@pytest.mark.extra("bench", "lancedb")
def test_bench_puts_a_lancedb_index_next_to_exact_search(tmp_path: Path) -> None:
    """The same vectors searched by LanceDB (brute force) and by bench's exact index: same ranking."""
    encoder = CountingEncoder(HashingEncoder(64))
    spec = index_corpus("demo", f"lancedb:{tmp_path / 'lance'}", encoder_factory=factory_of(encoder)).spec
    (tmp_path / "lance.yaml").write_text(spec_yaml(spec))
    plan = plan_from_dict(
        {
            "measures": ["nDCG@10", "R@10", "RR@10"],
            "latency": {"queries": 3, "warmup": 1},
            "matrix": {
                "retrievers": ["bm25", "dense", {"name": "team", "type": "live", "spec": str(tmp_path / "lance.yaml")}],
                "k": [10],
            },
        }
    )
    report = run_benchmark("demo", plan, encoder_factory=factory_of(encoder))
    dense, team = report["dense/exact/k=10"], report["team/-/k=10"]
    assert team.neighbor_recall is not None and team.neighbor_recall >= 0.99  # ties at the 10th place may differ
    for name, value in dense.metrics.items():
        assert team.metrics[name] == pytest.approx(value, abs=0.01), name
    assert team.retriever_info["retriever"]["kind"] == "lancedb"
    assert team.latency_ms["n"] == 3 and team.throughput_qps is not None
    assert "bm25/-/k=10" in {r.id for r in report.results}


@pytest.mark.extra("bench", "lancedb")
def test_bench_refuses_chunking_with_a_live_retriever_and_names_a_bad_spec_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: lancedb\npath: /no/such/folder\ntable: t\n")
    plan = plan_from_dict({"matrix": {"retrievers": [f"live:{bad}"]}})
    with pytest.raises(ConfigError, match=r"bad.yaml: path: /no/such/folder: no such folder"):
        run_benchmark("demo", plan, encoder_factory=factory_of(HashingEncoder(8)))
    spec = index_corpus("demo", f"lancedb:{tmp_path / 'l'}", encoder_factory=factory_of(HashingEncoder(8))).spec
    plan = plan_from_dict({"chunking": {"size": 20}, "matrix": {"retrievers": [{"type": "live", "spec": spec}]}})
    with pytest.raises(ConfigError, match="chunking: live:lancedb is a live retriever"):
        run_benchmark("demo", plan, encoder_factory=factory_of(HashingEncoder(8)))


def test_live_throughput_is_queries_over_the_batch_without_the_services_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """A live service that takes 50 s to load its model, then 0.1 s a query: 10 queries answer at 10 q/s, not 0.2.

    A fake clock stands for time: the batch runs over the budget, so only one batch is timed.
    """
    import types

    from rankgate.bench import harness
    from rankgate.bench.report import caption
    from rankgate.bench.retrievers.live import LiveBenchRetriever
    from rankgate.retrieve.base import Hit

    now = [0.0]

    class SlowStart:
        encoder = None
        loaded = False

        def search(self, qid: str, text: str, k: int) -> list[Hit]:
            now[0] += 0.1 if self.loaded else 50.1
            self.loaded = True
            return [Hit("d1", 1.0)]

    monkeypatch.setattr(harness, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    live = LiveBenchRetriever("live:slow", SlowStart())
    live.bind(["d1"], [f"q{i}" for i in range(10)], [f"text {i}" for i in range(10)])
    encoded = live.encode_queries([f"text {i}" for i in range(10)])
    hits, seconds = harness.timed_search(live, encoded, 5)
    assert hits.num_queries == 10
    assert 10 / seconds == pytest.approx(10.0)  # queries over the seconds of the whole batch
    assert "search q/s: one batch of all queries, search alone (live: the queries asked one after another" in caption()
