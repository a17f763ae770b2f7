"""Fusion: hand-worked RRF and CombMNZ, optimisation on a constructed case, CLI and eval end to end."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest

from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import ConfigError
from rankgate.fusion import fuse, optimize
from tests.cli_support import invoke

A = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}
B = {"q1": {"c": 5.0, "a": 4.0}}


def test_rrf_by_hand() -> None:
    # a: ranks 1 and 2; b: rank 2 in A only; c: ranks 3 and 1.
    fused = fuse([Run.from_dict(A), Run.from_dict(B)], method="rrf", params={"k": 60}).to_dict()["q1"]
    assert fused == {"a": 1 / 61 + 1 / 62, "c": 1 / 63 + 1 / 61, "b": 1 / 62}
    assert [d for _, d, _, _ in fuse([Run.from_dict(A), Run.from_dict(B)]).iter_rows()] == ["a", "c", "b"]


def test_combmnz_by_hand_raw_and_min_max() -> None:
    runs = [Run.from_dict(A), Run.from_dict(B)]
    assert fuse(runs, method="mnz", norm="none").to_dict()["q1"] == {"a": 14.0, "c": 12.0, "b": 2.0}
    # min-max: A -> a 1, b .5, c 0; B -> c 1, a 0. a: 1*2, c: 1*2, b: .5*1; a and c tie: doc id descending.
    fused = fuse(runs, method="mnz", norm="min-max")
    assert fused.to_dict()["q1"] == {"a": 2.0, "c": 2.0, "b": 0.5}
    assert [d for _, d, _, _ in fused.iter_rows()] == ["c", "a", "b"]


def test_a_query_only_one_run_has_is_fused_from_it() -> None:
    fused = fuse([Run.from_dict(A), Run.from_dict({"q2": {"x": 1.0}})], method="rrf").to_dict()
    assert fused == {"q1": {"a": 1 / 61, "b": 1 / 62, "c": 1 / 63}, "q2": {"x": 1 / 61}}


def test_optimisation_recovers_the_weight_that_ranks_the_relevant_documents_first() -> None:
    # Run A is right on q1..q3, run B on q4..q6: only weights with B at 0.7 or more put every
    # relevant document on top for q4..q6 while A's 0.3 still beats B's noise on q1..q3 ... so
    # build it so that exactly one weight wins: A's evidence is 3x stronger than B's mistakes.
    a, b, judged = {}, {}, {}
    for i in range(6):
        q = f"q{i}"
        judged[q] = {"r": 1}
        a[q] = {"r": 1.0, "n": 0.0} if i < 3 else {"r": 0.0, "n": 1.0}
        b[q] = {"r": 1.0, "n": 0.0}
    best = optimize([Run.from_dict(a), Run.from_dict(b)], Qrels.from_dict(judged), method="wsum", metric="RR")
    assert best.train_score == 1.0
    assert best.weights == [0.0, 1.0]  # the first weight in grid order that scores 1: B alone is always right
    assert best.candidates == 11


def test_cross_validation_reports_a_held_out_score_per_fold() -> None:
    a = {f"q{i}": {"r": 0.0, "n": 1.0} for i in range(6)}
    b = {f"q{i}": {"r": 1.0, "n": 0.0} for i in range(6)}
    judged = Qrels.from_dict({f"q{i}": {"r": 1} for i in range(6)})
    best = optimize([Run.from_dict(a), Run.from_dict(b)], judged, method="wsum", metric="RR", folds=3)
    assert [f["queries"] for f in best.folds] == [2, 2, 2]
    assert best.held_out == 1.0 and all(f["weights"][1] > f["weights"][0] for f in best.folds)


def test_rrf_k_is_optimised_on_its_grid() -> None:
    runs = [Run.from_dict(A), Run.from_dict(B)]
    best = optimize(runs, Qrels.from_dict({"q1": {"a": 1}}), method="rrf", metric="RR")
    assert best.params == {"k": 10.0} and best.candidates == 10


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "nope"}, "unknown fusion method 'nope'"),
        ({"method": "rbc"}, "rbc needs phi"),
        ({"method": "rrf", "params": {"q": 1}}, "rrf takes no parameter 'q'"),
        ({"method": "wsum", "weights": [1.0]}, "1 weights for 2 runs"),
        ({"method": "posfuse"}, "posfuse learns from judgments"),
        ({"method": "rrf", "norm": "borda"}, "rrf reads ranks"),
        ({"method": "sum", "norm": "l2"}, "unknown normalisation 'l2'"),
    ],
)
def test_bad_options_say_what_to_do(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        fuse([Run.from_dict(A), Run.from_dict(B)], **kwargs)


def test_cli_fuses_and_the_fused_run_evaluates_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.trec").write_text("q1 Q0 a 1 3 x\nq1 Q0 b 2 2 x\nq1 Q0 c 3 1 x\n")
    (tmp_path / "b.trec").write_text("q1 Q0 c 1 5 x\nq1 Q0 a 2 4 x\n")
    (tmp_path / "q.txt").write_text("q1 0 c 1\n")
    out = tmp_path / "f.trec"
    code, _, err = invoke(
        capsys,
        "fuse",
        str(tmp_path / "a.trec"),
        str(tmp_path / "b.trec"),
        "-o",
        str(out),
        "--method",
        "mnz",
        "--norm",
        "none",
    )
    assert code == 0, err
    assert out.read_text().split("\n")[:3] == ["q1 Q0 a 1 14.0 mnz", "q1 Q0 c 2 12.0 mnz", "q1 Q0 b 3 2.0 mnz"]
    code, shown, err = invoke(capsys, "eval", str(tmp_path / "q.txt"), str(out), "-m", "RR", "--format", "json")
    assert code == 0, err
    assert json.loads(shown)["aggregate"]["RR"] == 0.5
    code, _, err = invoke(
        capsys, "fuse", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), "-o", str(out), "--params", "k"
    )
    assert code == 2 and "NAME=NUMBER" in err


def _tied_runs(seed: int) -> list[Run]:
    rng = np.random.default_rng(seed)
    ids = [f"d{i}" for i in range(40)] + ["é", "D1", "d10x", "a/b"]
    out = []
    for _ in range(3):
        queries = rng.choice(8, size=6, replace=False)
        picks = {f"q{q}": rng.choice(ids, size=int(rng.integers(1, 30)), replace=False) for q in queries}
        out.append(Run.from_dict({q: {str(d): float(rng.integers(0, 4)) for d in docs} for q, docs in picks.items()}))
    return out


@pytest.mark.parametrize("method", ["rrf", "mnz", "med", "bordafuse", "condorcet"])
@pytest.mark.parametrize("bits", [0, 1])
def test_hash_collisions_are_split_on_the_ids(monkeypatch, method, bits):
    """Doc ids hashing alike (all of them, or half of them by pairs) must give the very same fused
    run: the strings decide, not the hashes."""
    runs = _tied_runs(3)
    expected = fuse(runs, method=method, norm="none").to_arrow().to_pylist()
    real = Run.doc_hash_high.fget

    def colliding(run: Run) -> np.ndarray:
        return real(run) & np.uint32(bits)  # bits 0: one key for all; 1: two keys for all

    monkeypatch.setattr(Run, "doc_hash_high", property(colliding))
    fresh = [Run(r.query_ids.take(r.query_codes), r.doc_ids, r.scores) for r in runs]
    assert fuse(fresh, method=method, norm="none").to_arrow().to_pylist() == expected


def test_fused_ties_are_ordered_by_doc_id_descending():
    fused = fuse(_tied_runs(5), method="mnz", norm="none").to_arrow()
    back = fused.take(list(range(fused.num_rows))[::-1])
    rebuilt = Run(back["query_id"], back["doc_id"], back["score"].to_numpy())  # the Run's own tie rule
    assert rebuilt.to_arrow().equals(fused)
    rows = list(
        zip(fused["query_id"].to_pylist(), fused["score"].to_pylist(), fused["doc_id"].to_pylist(), strict=True)
    )
    for (q1, s1, d1), (q2, s2, d2) in itertools.pairwise(rows):
        assert q1 < q2 or (q1 == q2 and (s1 > s2 or (s1 == s2 and d1.encode() > d2.encode())))


def test_fused_run_holds_what_the_run_constructor_would_compute() -> None:
    """`Run.from_checked` (the fused run) against `Run(...)` on the same rows: offsets, codes, doc-id
    hashes and the own-id documents (BEIR's self matches), found here in two queries of three."""
    a = Run.from_dict({"q1": {"q1": 9.0, "d1": 1.0}, "q2": {"d2": 5.0, "q1": 4.0}, "q3": {"d3": 1.0}})
    b = Run.from_dict({"q1": {"d1": 3.0}, "q2": {"q2": 0.5, "d2": 2.0}, "q4": {"q4": 1.0}})
    fused = fuse([a, b], method="sum", norm="none")
    table = fused.to_arrow()
    rebuilt = Run(table["query_id"], table["doc_id"], table["score"].to_numpy())
    assert fused.self_matches == rebuilt.self_matches == ["q1", "q2", "q4"]
    assert fused.self_matches_on_top == rebuilt.self_matches_on_top == 2  # q2's own id is not on top
    assert fused.query_ids.equals(rebuilt.query_ids)
    assert np.array_equal(fused.offsets, rebuilt.offsets)
    assert np.array_equal(fused.query_codes, rebuilt.query_codes)
    assert np.array_equal(fused.doc_hash_high, rebuilt.doc_hash_high)
    assert fused.doc_ids.equals(rebuilt.doc_ids) and np.array_equal(fused.scores, rebuilt.scores)


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("rrf", {"k": -60}, "rrf's k must be a number >= 0; got -60"),
        ("rrf", {"k": float("nan")}, "rrf's k must be a number >= 0; got nan"),
        ("logn_isr", {"sigma": 0}, "logn_isr's sigma must be a number > 0"),
        ("rbc", {"phi": 0.0}, "rbc's phi must be a number > 0 and <= 1"),
        ("slidefuse", {"w": 1.5}, "slidefuse's w must be a whole number >= 0"),
        ("gmnz", {"gamma": float("inf")}, "gmnz's gamma must be a finite number"),
    ],
)
def test_a_parameter_outside_its_domain_is_refused_by_name(method, params, message):
    # RRF with k = -60 gave negative or infinite scores (a numpy warning, then a confusing error).
    from rankgate.fusion.fuse import check_params
    from rankgate.fusion.methods import resolve

    with pytest.raises(ConfigError, match=re.escape(message)) as caught:
        check_params(resolve(method), params)
    assert caught.value.key_path == f"params.{next(iter(params))}"
