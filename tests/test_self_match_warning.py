"""The self-match warning (a query retrieving a document with its own id) fires where it matters.

BEIR drops such pairs because some corpora hold the queries themselves (Quora, ArguAna): there the
query's own document is its top result. Classic collections number queries and documents alike
(query 51, document 51), and their namesakes turn up anywhere in a ranking by chance: no warning.
"""

from __future__ import annotations

import rankgate

QRELS = {f"{i}": {f"{i + 100}": 1} for i in range(1, 11)}


def _run(self_rank: int | None) -> dict[str, dict[str, float]]:
    """Ten queries with five results each; the query's own id at ``self_rank`` (1-based), if any."""
    run = {}
    for i in range(1, 11):
        docs = [f"{i + 100}", f"{i + 200}", f"{i + 300}", f"{i + 400}", f"{i + 500}"]
        if self_rank is not None:
            docs[self_rank - 1] = f"{i}"
        run[f"{i}"] = {d: 5.0 - r for r, d in enumerate(docs)}
    return run


def _self_warnings(run: dict[str, dict[str, float]]) -> list[str]:
    return [w for w in rankgate.evaluate(QRELS, run, ["nDCG@10"]).warnings if "equals the query id" in w]


def test_coinciding_integer_ids_below_the_top_do_not_warn() -> None:
    assert _self_warnings(_run(self_rank=4)) == []


def test_own_documents_ranked_first_warn_with_the_count() -> None:
    (warning,) = _self_warnings(_run(self_rank=1))
    assert warning.startswith("10 queries retrieve a document whose id equals the query id (e.g. '1')")
    assert "10 of them as their top result" in warning


def test_a_tie_with_the_top_counts_as_the_top() -> None:
    run = _run(self_rank=2)
    for qid, docs in run.items():
        docs[qid] = max(docs.values())
    assert len(_self_warnings(run)) == 1


def test_no_self_match_no_warning() -> None:
    assert _self_warnings(_run(self_rank=None)) == []
