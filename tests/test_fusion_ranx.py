"""Every fusion method and normalisation against ranx's own output (ranx as a test-only oracle).

ranx orders a run's tied scores by an unstable quicksort; these tests hand ranx each input
run already in trec_eval's order (score descending, doc id descending), the order rankgate
uses, so both rank the same lists. ranx also orders fused ties by that quicksort: rankings
are compared with ranx's fused scores sorted by trec_eval's rule.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.fusion import fuse, train

ranx = pytest.importorskip("ranx")
pytestmark = pytest.mark.slow  # ranx compiles its kernels with numba (about a minute)

from numba import types  # noqa: E402  (ranx brings numba)
from numba.typed import Dict  # noqa: E402

PARAMS = {
    "rrf": {"k": 60},
    "gmnz": {"gamma": 0.7},
    "logn_isr": {"sigma": 0.01},
    "rbc": {"phi": 0.8},
    "probfuse": {"n_segments": 3},
    "slidefuse": {"w": 2},
}
WEIGHTS = [0.5, 0.3, 0.2]
RANX_NAMES = {"bordafuse": "bordafuse", "w_bordafuse": "w_bordafuse"}


def _random_runs(seed: int, *, distinct: bool = False) -> list[dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    docs = [f"d{i:02d}" for i in range(14)]
    runs = []
    for _ in range(3):
        run = {}
        for q in range(6):
            chosen = rng.choice(docs, size=int(rng.integers(1, 10)), replace=False)
            values = rng.permutation(len(chosen)) + rng.random() if distinct else rng.integers(0, 4, len(chosen)) * 0.5
            run[f"q{q}"] = {str(d): float(v) for d, v in zip(chosen, values, strict=True)}
        runs.append(run)
    return runs


def _ranx_run(run: Run) -> object:
    """A ranx Run holding ``run``'s documents in trec_eval's order."""
    outer = Dict.empty(key_type=types.unicode_type, value_type=types.DictType(types.unicode_type, types.float64))
    for qid, doc, _, score in run.iter_rows("trec"):
        if qid not in outer:
            outer[qid] = Dict.empty(key_type=types.unicode_type, value_type=types.float64)
        outer[qid][doc] = score
    out = ranx.Run()
    out.run = outer
    return out


def _check(ours: Run, theirs: object) -> None:
    expected = {q: dict(d) for q, d in theirs.run.items()}  # type: ignore[attr-defined]
    got = ours.to_dict()
    assert set(got) == set(expected)
    for q, docs in expected.items():
        assert set(got[q]) == set(docs), q
        for d, s in docs.items():
            assert got[q][d] == pytest.approx(s, rel=1e-9, abs=1e-9), (q, d)
        ranking = [d for d, _ in sorted(docs.items(), key=lambda kv: (-kv[1], _desc(kv[0])))]
        assert [d for qid, d, _, _ in ours.iter_rows() if qid == q] == ranking or _near_ties(docs), q


def _desc(doc: str) -> tuple[int, ...]:
    return tuple(-b for b in doc.encode())


def _near_ties(docs: dict[str, float]) -> bool:
    values = sorted(docs.values())
    return any(0 < b - a < 1e-9 for a, b in itertools.pairwise(values))


@pytest.fixture(scope="module")
def runs() -> list[Run]:
    return [Run.from_dict(r, name=f"r{i}") for i, r in enumerate(_random_runs(7))]


@pytest.mark.parametrize("norm", ["min-max", "max", "sum", "zmuv", "rank", "borda"])
@pytest.mark.parametrize("method", ["sum", "mnz", "max", "min", "med", "anz", "gmnz", "wsum", "wmnz", "mixed"])
def test_score_methods_under_every_normalisation_equal_ranx(runs: list[Run], method: str, norm: str) -> None:
    params = dict(PARAMS.get(method, {}))
    weighted = method in ("wsum", "wmnz", "mixed")
    ours = fuse(runs, method=method, norm=norm, params=params, weights=WEIGHTS if weighted else None)
    theirs = ranx.fuse(
        [_ranx_run(r) for r in runs],
        norm=norm,
        method=method,
        params={**params, **({"weights": WEIGHTS} if weighted else {})},
    )
    _check(ours, theirs)


@pytest.mark.parametrize("method", ["rrf", "isr", "log_isr", "logn_isr", "rbc", "bordafuse", "w_bordafuse"])
def test_rank_methods_equal_ranx(runs: list[Run], method: str) -> None:
    params = dict(PARAMS.get(method, {}))
    weighted = method == "w_bordafuse"
    ours = fuse(runs, method=method, norm="none", params=params, weights=WEIGHTS if weighted else None)
    theirs = ranx.fuse(
        [_ranx_run(r) for r in runs],
        norm=None,
        method=method,
        params={**params, **({"weights": WEIGHTS} if weighted else {})},
    )
    _check(ours, theirs)


@pytest.mark.parametrize("method", ["posfuse", "probfuse", "segfuse", "slidefuse", "bayesfuse", "mapfuse"])
def test_trained_methods_learn_and_fuse_like_ranx(runs: list[Run], method: str) -> None:
    train_runs = [Run.from_dict(r) for r in _random_runs(11, distinct=True)]
    rng = np.random.default_rng(3)
    qrels = Qrels.from_dict({f"q{q}": {f"d{i:02d}": int(rng.integers(0, 3)) for i in range(14)} for q in range(6)})
    params = dict(PARAMS.get(method, {}))
    ranx_qrels = ranx.Qrels.from_dict(qrels.to_dict())
    train_params = {k: v for k, v in params.items() if k == "n_segments"}
    learnt = getattr(ranx.fusion, f"{method}_train")(ranx_qrels, [_ranx_run(r) for r in train_runs], **train_params)
    ours_learnt = train.train(method, qrels, train_runs, params)
    for a, b in zip(ours_learnt, learnt, strict=True):
        theirs_table = np.atleast_1d(np.asarray(b, dtype=float))
        np.testing.assert_allclose(np.atleast_1d(np.asarray(a, dtype=float)), theirs_table[: np.size(a)], atol=1e-12)
    apply = {k: v for k, v in params.items() if k == "w"}
    theirs = getattr(ranx.fusion, method)([_ranx_run(r) for r in runs], learnt, **apply)
    ours = fuse(runs, method=method, norm="none", params=params, train_qrels=qrels, train_runs=train_runs)
    _check(ours, theirs)


def test_condorcet_equals_ranx_where_the_majority_is_a_total_order() -> None:
    rng = np.random.default_rng(5)
    base = [f"d{i:02d}" for i in range(9)]
    dicts = []
    for _ in range(3):
        order = list(base)
        i = int(rng.integers(0, 8))
        order[i], order[i + 1] = order[i + 1], order[i]
        dicts.append({"q": {d: float(len(order) - j) for j, d in enumerate(order)}})
    runs = [Run.from_dict(d) for d in dicts]
    _check(
        fuse(runs, method="condorcet", norm="none"),
        ranx.fuse([_ranx_run(r) for r in runs], norm=None, method="condorcet"),
    )
