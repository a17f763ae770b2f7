"""Hypothesis properties of measures, the name parser and the input policies."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankgate
from rankgate.measures import parse_measures
from rankgate.measures.registry import Measure, all_specs

DOCS = [f"d{i}" for i in range(12)]

judgments = st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), min_size=1, max_size=10)
scores = st.dictionaries(st.sampled_from(DOCS), st.integers(0, 6).map(lambda s: s / 2), min_size=1, max_size=12)
collections = st.tuples(
    st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), judgments, min_size=1, max_size=3),
    st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4"]), scores, min_size=1, max_size=4),
)

BOUNDED = ["P@5", "R@5", "R", "nDCG", "nDCG@5", "nDCG(gain=exp)@3", "RR", "RR@3", "AP", "AP@3", "Rprec",
           "Success@3", "Judged@5", "Bpref", "RBP", "ERR@5"]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(collections)
def test_bounded_measures_stay_in_0_1(data):
    qrels, run = data
    res = rankgate.evaluate(qrels, run, BOUNDED)
    assert ((res.values >= 0) & (res.values <= 1 + 1e-12)).all()


@settings(max_examples=150, deadline=None)
@given(judgments)
def test_ideal_ranking_scores_one(j):
    """Ranking every judged doc by grade gives nDCG = AP = RR = Rprec = 1 when a doc is relevant."""
    ranked = sorted(j.items(), key=lambda kv: (-kv[1], kv[0]))
    run = {"q": {d: float(len(ranked) - i) for i, (d, _) in enumerate(ranked)}}
    res = rankgate.evaluate({"q": j}, run, ["nDCG", "nDCG@3", "AP", "RR", "Rprec", "Bpref"])
    if max(j.values()) >= 1:
        for name, v in res.aggregate.items():
            assert v == pytest.approx(1.0), name
    elif max(j.values()) <= 0:
        assert all(v == 0.0 for v in res.aggregate.values())


@settings(max_examples=150, deadline=None)
@given(collections, st.integers(1, 6))
def test_adding_a_doc_below_the_cutoff_changes_nothing_at_k(data, k):
    qrels, run = data
    names = [f"P@{k}", f"R@{k}", f"nDCG@{k}", f"AP@{k}", f"RR@{k}", f"Success@{k}", f"RBP@{k}", f"ERR@{k}"]
    before = rankgate.evaluate(qrels, run, names)
    extended = {q: dict(d) for q, d in run.items()}
    for docs in extended.values():
        if len(docs) >= k:
            docs["zz-new"] = min(docs.values()) - 1.0  # ranked last, below every cutoff <= len
    after = rankgate.evaluate(qrels, extended, names)
    for q in before.query_ids:
        for name in names:
            if q in run and len(run[q]) >= k:
                assert before.per_query[q][name] == after.per_query[q][name]


@settings(max_examples=100, deadline=None)
@given(collections, st.randoms(use_true_random=False))
def test_input_order_does_not_matter_with_trec_ties(data, rnd):
    qrels, run = data
    items = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    rnd.shuffle(items)
    shuffled = rankgate.Run([i[0] for i in items], [i[1] for i in items], [i[2] for i in items])
    a = rankgate.evaluate(qrels, run, BOUNDED)
    b = rankgate.evaluate(qrels, shuffled, BOUNDED)
    assert (a.values == b.values).all()


def param_values(p):
    """Valid values of any parameter, from its spec alone (so a new family needs no new strategy)."""
    if p.choices:
        return st.sampled_from(p.choices)
    if p.kind is int:
        values = st.integers(-2, 10)
    else:
        values = st.floats(0.0, 1.0, exclude_min=True, exclude_max=True) | st.floats(-10.0, 10.0)
    return values.filter(lambda v: p.check is None or p.check(v))


def measure_values():
    """Any measure of any registered family, with or without parameters and a cutoff."""

    @st.composite
    def one(draw):
        spec = draw(st.sampled_from(all_specs()))
        if spec.cutoff == "none":
            cutoff = None
        elif spec.cutoff == "required":
            cutoff = draw(st.integers(1, 1000))
        else:
            cutoff = draw(st.none() | st.integers(1, 1000))
        params = {p.name: draw(param_values(p)) for p in spec.params if draw(st.booleans())}
        return Measure.make(spec.name, cutoff, **params)

    return one()


@settings(max_examples=300, deadline=None)
@given(measure_values())
def test_canonical_names_round_trip(m):
    if len(str(m)) > 200:  # names longer than the parser's bound are refused, not read
        with pytest.raises(rankgate.MeasureError, match="at most 200 characters"):
            rankgate.parse_measure(str(m))
        return
    assert rankgate.parse_measure(str(m)) == m
    assert str(rankgate.parse_measure(str(m))) == str(m)
    assert parse_measures([str(m)]) == [m]  # a canonical name is never one of trec_eval's lists


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("ndcg_cut.10", "nDCG@10"), ("ndcg_cut_10", "nDCG@10"), ("ndcg@10", "nDCG@10"), ("NDCG@10", "nDCG@10"),
        ("ndcg_burges@10", "nDCG(gain=exp)@10"), ("P_10", "P@10"), ("P.5", "P@5"), ("precision@5", "P@5"),
        ("recall@10", "R@10"), ("recall_100", "R@100"), ("recall.100", "R@100"), ("mrr@10", "RR@10"),
        ("MRR", "RR"), ("recip_rank", "RR"), ("map", "AP"), ("MAP@100", "AP@100"), ("map_cut.100", "AP@100"),
        ("hit_rate@5", "Success@5"), ("success.5", "Success@5"), ("r-precision", "Rprec"), ("bpref", "Bpref"),
        ("num_rel", "NumRel"), ("num_ret", "NumRet"), ("num_rel_ret", "NumRelRet"), ("rbp.95", "WeightedRBP(p=0.95)"),
        ("P(rel=2)@5", "P(rel=2)@5"), ("nDCG(gain=linear)@10", "nDCG@10"), ("RBP(p=0.8)", "RBP"),
        ("err@20", "ERR@20"), ("judged@10", "Judged@10"), (" nDCG@10 ", "nDCG@10"),
    ],
)  # fmt: skip
def test_aliases(alias, canonical):
    assert str(rankgate.parse_measure(alias)) == canonical


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("foo@10", "Unknown measure"), ("nDCG@ten", "cutoff"), ("P", "needs a cutoff"), ("Rprec@5", "takes no cutoff"),
        ("P(rel=0)@5", "'rel' parameter of P must be an int >= 1"), ("RBP(p=2)", "'p' parameter of RBP"),
        ("nDCG(gain=cubic)@10", "one of linear, exp"), ("P(k=3)@5", "no parameter 'k'"), ("P@0", ">= 1"),
        ("__import__('os')", "Unknown measure"), ("P(2)@5", "must be named"), ("", "must not be empty"),
        ("ndcg@10.5", "whole number"),
    ],
)  # fmt: skip
def test_bad_names_explain_themselves(text, message):
    with pytest.raises(rankgate.MeasureError, match=None) as info:
        rankgate.parse_measure(text)
    assert message in str(info.value)


def test_suggests_close_names():
    with pytest.raises(rankgate.MeasureError) as info:
        rankgate.parse_measure("nDGC@10")
    assert "nDCG" in str(info.value)


def test_registry_metadata_is_complete():
    for spec in all_specs():
        assert spec.summary and spec.definition and spec.examples
        for example in spec.examples:
            assert str(rankgate.parse_measure(example)) == example
        # utility can be negative (trec_eval's utility: a*rel_ret + b*nonrel_ret, b < 0 by default)
        assert spec.bounds[0] in (0.0, -math.inf) and (spec.bounds[1] == 1.0 or math.isinf(spec.bounds[1]))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["q1", "q2", "q10"]),
            st.sampled_from(["a", "b", "bb", "doc-0123456789"]),
            st.integers(0, 5).map(float),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_duplicate_policies_match_a_dict_reference(rows):
    """Hash-based duplicate detection equals keeping the first / the max-score copy by hand."""
    first: dict[tuple[str, str], float] = {}
    best: dict[tuple[str, str], float] = {}
    for q, d, s in rows:
        first.setdefault((q, d), s)
        best[(q, d)] = max(best.get((q, d), s), s)
    qs, ds, ss = zip(*rows, strict=True)
    has_dups = len(first) < len(rows)
    if has_dups:
        with pytest.raises(rankgate.InputError, match="duplicate document"):
            rankgate.Run(qs, ds, ss)
    for policy, expected in (("first", first), ("max", best)):
        run = rankgate.Run(qs, ds, ss, duplicates=policy)
        got = {(q, d): s for q, docs in run.to_dict().items() for d, s in docs.items()}
        assert got == expected


def test_duplicates_found_across_arrow_chunks_in_a_large_file(tmp_path):
    """A 300k-line run parsed in several Arrow chunks: far-apart duplicates are still found."""
    lines = [f"q{i // 1000} Q0 doc{i % 1000}-{i // 1000} 1 {1000 - i % 1000} r\n" for i in range(300_000)]
    lines.append("q7 Q0 doc5-7 9 0.5 r\n")  # repeats line 7,006
    lines.append("q250 Q0 doc999-250 9 0.25 r\n")  # repeats line 251,000
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    with pytest.raises(rankgate.InputError) as info:
        rankgate.read_run(str(path))
    assert "run.txt:300001" in str(info.value) and "run.txt:7006" in str(info.value)
    run = rankgate.read_run(str(path), duplicates="max")
    assert run.num_rows == 300_000
    assert run.to_dict()["q7"]["doc5-7"] == 995.0
