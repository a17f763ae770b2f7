"""`rankgate overlap`: overlap@k, Jaccard@k and extrapolated RBO of two runs, hand-worked and against `rbo`."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankgate.comparison.overlap import jaccard_at_k, overlap_at_k, ranked_lists, rbo_ext, run_overlap
from rankgate.core.run import Run
from rankgate.errors import ConfigError
from tests.cli_support import invoke


def test_overlap_and_jaccard_hand_worked() -> None:
    a, b = ["d1", "d2", "d3", "d4"], ["d4", "d9", "d1"]
    # top 2: {d1, d2} vs {d4, d9}: nothing shared
    assert overlap_at_k(a, b, 2) == 0.0 and jaccard_at_k(a, b, 2) == 0.0
    # top 4: {d1..d4} vs {d4, d9, d1}: 2 shared, 5 in the union; overlap divides by k = 4 even though b has 3
    assert overlap_at_k(a, b, 4) == 2 / 4
    assert jaccard_at_k(a, b, 4) == 2 / 5


def test_rbo_hand_worked() -> None:
    # Equal lengths, p = 0.5: X = 1, 1, 3 at depths 1..3, so (1-p)/p = 1 and
    # RBO_ext = (1/1 * 0.5 + 1/2 * 0.25 + 3/3 * 0.125) + 3/3 * 0.125 = 0.875
    assert rbo_ext(["a", "b", "c"], ["a", "c", "b"], p=0.5) == pytest.approx(0.875)
    # Swapped top two, p = 0.9: X = 0, 2: 1/9 * (0 + 2/2 * 0.81) + 1 * 0.81 = 0.09 + 0.81
    assert rbo_ext(["a", "b"], ["b", "a"], p=0.9) == pytest.approx(0.9)
    # Uneven lengths (eq. 32), p = 0.5, S = [a] (s = 1), L = [b, a] (l = 2): X_1 = 0, X_2 = 1, X_s = 0:
    # 1 * (0 * 0.5 + 1/2 * 0.25 + 0) + ((1 - 0)/2 + 0) * 0.25 = 0.125 + 0.125
    assert rbo_ext(["a"], ["b", "a"], p=0.5) == pytest.approx(0.25)
    assert rbo_ext(["x", "y"], ["x", "y"], p=0.3) == pytest.approx(1.0)
    assert rbo_ext(["x", "y"], ["u", "v"], p=0.3) == 0.0


def test_rbo_top_weighted() -> None:
    """A disagreement at rank 1 costs more than one at rank 5."""
    base = list("abcdefgh")
    early = ["z", *base[1:]]
    late = [*base[:4], "z", *base[5:]]
    assert rbo_ext(base, early) < rbo_ext(base, late) < 1.0


rankings = st.lists(st.sampled_from([f"d{i}" for i in range(12)]), max_size=12, unique=True)


@settings(max_examples=300, deadline=None)
@given(rankings.filter(bool), rankings.filter(bool), st.sampled_from([0.1, 0.5, 0.8, 0.9, 0.98]))
def test_rbo_matches_the_rbo_package(a: list[str], b: list[str], p: float) -> None:
    """The independent oracle: the `rbo` package (PyPI, RankingSimilarity.rbo_ext), used only here."""
    rbo = pytest.importorskip("rbo")
    expected = rbo.RankingSimilarity(a, b).rbo_ext(p=p)
    assert rbo_ext(a, b, p) == pytest.approx(expected, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(rankings.filter(bool), rankings.filter(bool), st.sampled_from([0.5, 0.9]))
def test_rbo_properties(a: list[str], b: list[str], p: float) -> None:
    value = rbo_ext(a, b, p)
    assert 0.0 <= value <= 1.0
    assert value == pytest.approx(rbo_ext(b, a, p))  # symmetric
    assert rbo_ext(a, a, p) == pytest.approx(1.0)
    if not set(a) & set(b):
        assert value == 0.0


def test_ranked_lists_use_trec_tie_order() -> None:
    run = Run.from_dict({"q1": {"a": 1.0, "c": 1.0, "b": 2.0, "d": 0.5}})
    assert ranked_lists(run) == {"q1": ["b", "c", "a", "d"]}
    assert ranked_lists(run, 2) == {"q1": ["b", "c"]}


def test_run_overlap_per_query_and_query_sets() -> None:
    a = Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0}, "q2": {"d5": 1.0}}, name="ref")
    b = Run.from_dict({"q1": {"d2": 5.0, "d1": 4.0}, "q3": {"d7": 1.0}}, name="cand")
    result = run_overlap(a, b, ks=(1, 2), p=0.5)
    assert result.queries == {"both": 1, "only_a": 1, "only_b": 1, "evaluated": 3}
    q1 = result.per_query["q1"]
    assert q1["overlap@1"] == 0.0 and q1["overlap@2"] == 1.0 and q1["Jaccard@2"] == 1.0
    # [d1, d2] vs [d2, d1], p = 0.5: 1 * (0 + 2/2 * 0.25) + 1 * 0.25 = 0.5
    assert q1["RBO@2"] == pytest.approx(0.5)
    assert result.per_query["q2"] == {m: 0.0 for m in result.measures}
    assert result.aggregate["overlap@2"] == pytest.approx(1 / 3)
    assert [q for q, _ in result.worst(2)] == ["q2", "q3"]
    inter = run_overlap(a, b, ks=(2,), queries="intersection")
    assert list(inter.per_query) == ["q1"] and inter.aggregate["overlap@2"] == 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ks": (0,)}, "'ks' parameter"),
        ({"ks": ()}, "'ks' parameter"),
        ({"p": 1.0}, "'p' parameter of RBO"),
        ({"queries": "all"}, "'queries' parameter"),
        ({"ties": "random"}, "'ties' parameter"),
    ],
)
def test_bad_options(kwargs: dict[str, object], message: str) -> None:
    run = Run.from_dict({"q1": {"d1": 1.0}})
    with pytest.raises(ConfigError, match=message):
        run_overlap(run, run, **kwargs)  # type: ignore[arg-type]


def _write_run(path: Path, lists: dict[str, list[str]]) -> str:
    lines = [f"{q} Q0 {d} {r} {100 - r} x" for q, docs in lists.items() for r, d in enumerate(docs, start=1)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_cli_json_and_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(30)]
    lists_a = {f"q{i}": rng.sample(docs, 10) for i in range(5)}
    lists_b = {q: [*v[:5], *rng.sample([d for d in docs if d not in v], 5)] for q, v in lists_a.items()}
    lists_b["q0"] = list(reversed(docs[:10]))
    ra, rb = _write_run(tmp_path / "ref.txt", lists_a), _write_run(tmp_path / "cand.txt", lists_b)
    code, out, err = invoke(capsys, "overlap", ra, rb, "-k", "5", "-k", "10", "--p", "0.8", "--format", "json")
    assert code == 0, err
    body = json.loads(out)
    assert body["runs"] == ["ref", "cand"] and body["settings"]["p"] == 0.8
    for q in ("q1", "q2", "q3", "q4"):  # the top 5 agree, ranks 6-10 are new documents
        assert body["per_query"][q]["overlap@5"] == 1.0 and body["per_query"][q]["overlap@10"] == 0.5
    expected = rbo_ext(lists_a["q0"], lists_b["q0"], 0.8)
    assert body["per_query"]["q0"]["RBO@10"] == pytest.approx(expected)
    assert body["worst"][0]["query_id"] == min(body["per_query"], key=lambda q: body["per_query"][q]["RBO@10"])
    code, out, _ = invoke(capsys, "overlap", ra, rb, "--worst", "2")
    assert code == 0 and "agreement of cand with ref" in out and "lowest RBO@10" in out


def test_cli_bad_input_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 notanumber x\n")
    good = _write_run(tmp_path / "good.txt", {"q1": ["d1"]})
    code, _, err = invoke(capsys, "overlap", good, str(bad))
    assert code == 2 and "bad.txt:1" in err
