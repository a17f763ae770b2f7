"""Scores that do not order the run as its author meant: distances (lower is better), ranked upside
down, and queries whose documents all share one score, ranked by doc id. Both are evaluated as
trec_eval evaluates them, with a warning that says so, in every engine; real and random rankings
get none."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

import rankgate
from rankgate.evaluation.engines.outofcore import evaluate_out_of_core
from rankgate.evaluation.facts import EvaluationFacts
from tests.cli_support import invoke

UPSIDE_DOWN = "are the scores distances (lower is better)?"


def _write(
    tmp: Path, n_queries: int, *, distances: bool, relevant_anywhere: bool = False, seed: int = 0
) -> tuple[Path, Path]:
    """Queries of 50 results each, three relevant among the top ten (or anywhere: a random
    ranking); scores are similarities, or their distances."""
    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(n_queries):
        docs = [f"d{q}-{i}" for i in range(50)]
        for d in rng.sample(docs[:-1] if relevant_anywhere else docs[:10], 3):
            qrels.append(f"q{q} 0 {d} {rng.choice([1, 2])}")
        qrels.append(f"q{q} 0 d{q}-49 0")  # a judged non-relevant one does not count
        for i, d in enumerate(docs):
            similarity = 1 - i / 50
            run.append(f"q{q} Q0 {d} {i + 1} {1 - similarity if distances else similarity:.4f} t")
    qrels_path, run_path = tmp / "qrels.txt", tmp / "run.txt"
    qrels_path.write_text("\n".join(qrels) + "\n")
    run_path.write_text("\n".join(run) + "\n")
    return qrels_path, run_path


def _upside_down(results: rankgate.Results) -> list[str]:
    return [w for w in results.warnings if UPSIDE_DOWN in w]


def test_distances_get_the_warning_and_are_still_ranked_by_score(tmp_path: Path) -> None:
    qrels, run = _write(tmp_path, 30, distances=True)
    results = rankgate.evaluate(qrels, run, ["nDCG@10", "RR"])
    (warning,) = _upside_down(results)
    assert warning.startswith("in 30 of 30 queries the relevant documents sit nearer the bottom")
    assert results.facts is not None and (results.facts.relevant_near_top, results.facts.relevant_near_bottom) == (
        0,
        30,
    )
    assert np.all(results.values[:, 0] == 0)  # highest score first, as trec_eval: the relevant ones are at 41-50
    assert np.all(results.values[:, 1] < 0.1)


def test_similarities_get_no_warning(tmp_path: Path) -> None:
    qrels, run = _write(tmp_path, 30, distances=False)
    results = rankgate.evaluate(qrels, run, ["nDCG@10"])
    assert not _upside_down(results)
    assert results.facts is not None and (results.facts.relevant_near_top, results.facts.relevant_near_bottom) == (
        30,
        0,
    )


@pytest.mark.parametrize("seed", range(3))
def test_random_rankings_get_no_warning(tmp_path: Path, seed: int) -> None:
    """Relevant documents anywhere: about half the queries on each side, far from 75%."""
    qrels, run = _write(tmp_path, 300, distances=False, relevant_anywhere=True, seed=seed)
    facts = rankgate.evaluate(qrels, run, ["AP"]).facts
    assert facts is not None and not facts.upside_down
    assert 0.35 < facts.relevant_near_bottom / (facts.relevant_near_top + facts.relevant_near_bottom) < 0.65


def test_too_few_queries_say_nothing(tmp_path: Path) -> None:
    qrels, run = _write(tmp_path, 9, distances=True)
    assert not _upside_down(rankgate.evaluate(qrels, run, ["AP"]))


def test_relevance_follows_the_rel_setting(tmp_path: Path) -> None:
    """With --rel 3 nothing here is relevant: no query has a side to be on."""
    qrels, run = _write(tmp_path, 30, distances=True)
    facts = rankgate.evaluate(qrels, run, ["AP"], rel=3).facts
    assert facts is not None and facts.relevant_near_top + facts.relevant_near_bottom == 0


def test_judged_only_counts_the_ranking_as_retrieved(tmp_path: Path) -> None:
    """Condensed lists drop the unjudged rows; the warning reads the ranking before that."""
    qrels, run = _write(tmp_path, 30, distances=True)
    assert _upside_down(rankgate.evaluate(qrels, run, ["AP"], judged_only=True))


def test_partitions_merge_to_the_same_warning(tmp_path: Path) -> None:
    qrels, run = _write(tmp_path, 40, distances=True)
    whole = rankgate.evaluate(qrels, run, ["AP"])
    parted = evaluate_out_of_core(qrels, run, ["AP"], partitions=7, workdir=tmp_path)
    assert _upside_down(whole) and whole.warnings == parted.warnings

    def part(top: int, bottom: int) -> EvaluationFacts:
        counts = {"evaluated": 1, "missing_from_run": 0, "run_only": 0, "no_relevant": 0}
        return EvaluationFacts(counts, [], [], [], 0, 3, 3, relevant_near_top=top, relevant_near_bottom=bottom)

    assert EvaluationFacts.merge([part(0, 5), part(0, 5)]).upside_down  # 10 of 10: a coin gives that 0.1% of the time
    assert not EvaluationFacts.merge([part(0, 5), part(0, 4)]).upside_down  # 9 of 9: too few to tell
    assert not EvaluationFacts.merge([part(1, 5), part(0, 5)]).upside_down  # 10 of 11: p = 0.6%
    assert EvaluationFacts.merge([part(1, 10), part(1, 10)]).upside_down  # 20 of 22
    assert EvaluationFacts.merge([part(25, 75)]).upside_down  # 75%, on the line
    assert not EvaluationFacts.merge([part(30, 70)]).upside_down  # 70%: under it, however many queries
    assert not EvaluationFacts.merge([part(5, 15)]).upside_down  # 75%, but a coin gives 15 of 20 2% of the time


def test_cli_prints_the_warning_on_stderr(capsys, tmp_path: Path) -> None:
    qrels, run = _write(tmp_path, 12, distances=True)
    code, out, err = invoke(capsys, "eval", str(qrels), str(run), "-m", "nDCG@10")
    assert code == 0 and "nDCG@10" in out
    assert "warning: in 12 of 12 queries" in " ".join(err.split())


# -- every document of a query with one score: ranked by doc id, not by the file --

ALL_TIED = "every document has the same score, so they are ranked by doc id"


def _constant_scores(tmp: Path, n_queries: int, n_tied: int) -> tuple[Path, Path]:
    """Queries whose first result (d..-00, the lowest id) is the relevant one; ``n_tied`` of them score
    every result 1.0 (trec_eval then puts d..-00 last), the rest score by rank."""
    qrels, run = [], []
    for q in range(n_queries):
        qrels.append(f"q{q} 0 d{q}-00 1")
        for i in range(20):
            run.append(f"q{q} Q0 d{q}-{i:02d} {i + 1} {1.0 if q < n_tied else 1 - i / 20} t")
    qrels_path, run_path = tmp / "qrels.txt", tmp / "run.txt"
    qrels_path.write_text("\n".join(qrels) + "\n")
    run_path.write_text("\n".join(run) + "\n")
    return qrels_path, run_path


def test_a_run_of_equal_scores_is_ranked_by_doc_id_with_a_warning(tmp_path: Path) -> None:
    qrels, run = _constant_scores(tmp_path, 12, 12)
    results = rankgate.evaluate(qrels, run, ["RR"])
    assert np.all(results.values[:, 0] == 1 / 20)  # trec_eval's tie rule: doc id descending puts d..-00 last
    (warning,) = [w for w in results.warnings if ALL_TIED in w]
    assert warning.startswith("in 12 of 12 queries every document has the same score")
    assert not _upside_down(results)  # ranked by id, not by score: those queries say nothing of direction
    kept = rankgate.evaluate(qrels, run, ["RR"], ties="input")  # the file's order, as asked: no warning
    assert np.all(kept.values[:, 0] == 1) and not [w for w in kept.warnings if ALL_TIED in w]
    assert kept.facts is not None and kept.facts.relevant_near_top == 12  # in the file's order they do tell


@pytest.mark.parametrize(("n_tied", "warned"), [(6, True), (5, False), (0, False)])
def test_the_tie_warning_needs_half_the_queries(tmp_path: Path, n_tied: int, warned: bool) -> None:
    """A few queries with nothing to tell apart (a lexical retriever's all-zero misses) are no evidence."""
    qrels, run = _constant_scores(tmp_path, 12, n_tied)
    facts = rankgate.evaluate(qrels, run, ["RR"]).facts
    assert facts is not None and (facts.all_tied, facts.ranked) == (n_tied, 12)
    assert bool([w for w in facts.warnings() if ALL_TIED in w]) is warned


def test_one_document_queries_are_not_tied(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 1 t\nq2 Q0 b 1 1 t\n")
    facts = rankgate.evaluate(tmp_path / "q.txt", tmp_path / "r.txt", ["RR"]).facts
    assert facts is not None and (facts.all_tied, facts.ranked) == (0, 0)


def test_tie_counts_merge_over_partitions(tmp_path: Path) -> None:
    qrels, run = _constant_scores(tmp_path, 30, 20)
    whole = rankgate.evaluate(qrels, run, ["RR"])
    parted = evaluate_out_of_core(qrels, run, ["RR"], partitions=4, workdir=tmp_path)
    assert [w for w in whole.warnings if ALL_TIED in w] and whole.warnings == parted.warnings


@pytest.mark.parametrize("distances", [True, False])
def test_a_shallow_run_of_distances_is_caught(tmp_path: Path, distances: bool) -> None:
    """A RAG retriever's top 3 by distance: its best document last. Some queries' only relevant
    document is its third best (nearer the top once inverted), so 30 of 36 queries vote "bottom":
    83%, which a fixed 90% bar missed."""
    qrels, run = [], []
    for q in range(40):
        best = 0 if q < 30 else 2 if q < 36 else 1  # the relevant document's place in the true order
        qrels.append(f"q{q} 0 d{q}-{best} 1")
        for i in range(3):
            run.append(f"q{q} Q0 d{q}-{i} {i + 1} {0.1 * (i + 1) if distances else 1 - 0.1 * i:.1f} t")
    (tmp_path / "q.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "r.txt").write_text("\n".join(run) + "\n")
    results = rankgate.evaluate(tmp_path / "q.txt", tmp_path / "r.txt", ["RR"])
    assert results.facts is not None
    top, bottom = (6, 30) if distances else (30, 6)
    assert (results.facts.relevant_near_top, results.facts.relevant_near_bottom) == (top, bottom)
    assert bool(_upside_down(results)) is distances
