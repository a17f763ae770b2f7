"""Interleaving: team-draft and balanced outputs satisfy their definitions on random rankings
(hypothesis), and on simulated users with a known preference the analysis gets the sign right and
its CI covers the exact expected preference (computed by enumerating coin flips)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankgate
from rankgate.errors import ConfigError, InputError
from rankgate.online import analyze_interleaving, interleave
from rankgate.online.logs import build_log
from tests.cli_support import invoke

rankings = st.lists(st.sampled_from([f"d{i}" for i in range(12)]), unique=True, max_size=12)


@settings(max_examples=300, deadline=None)
@given(a=rankings, b=rankings, k=st.one_of(st.none(), st.integers(0, 14)), seed=st.integers(0, 2**32 - 1))
def test_team_draft_satisfies_its_definition(a, b, k, seed):
    out = interleave(a, b, k=k, seed=seed)
    union = set(a) | set(b)
    assert len(out.docs) == (len(union) if k is None else min(k, len(union)))
    assert len(set(out.docs)) == len(out.docs) and set(out.docs) <= union
    for i, (doc, team) in enumerate(zip(out.docs, out.teams, strict=True)):
        ranking = a if team == "A" else b
        other = b if team == "A" else a
        # the picking team adds its best document not already in the list
        assert doc == next(d for d in ranking if d not in out.docs[:i])
        picks_a, picks_b = out.teams[:i].count("A"), out.teams[:i].count("B")
        other_left = any(d not in out.docs[:i] for d in other)
        if other_left:  # while both rankings have documents left, the team behind picks
            mine, theirs = (picks_a, picks_b) if team == "A" else (picks_b, picks_a)
            assert mine <= theirs
    assert rankgate.interleave(a, b, k=k, seed=seed) == out  # the public entry point


@settings(max_examples=200, deadline=None)
@given(a=rankings, b=rankings, seed=st.integers(0, 2**32 - 1))
def test_balanced_keeps_every_top_k_of_both_rankings_in_a_prefix(a, b, seed):
    out = interleave(a, b, method="balanced", seed=seed)
    assert len(set(out.docs)) == len(out.docs) == len(set(a) | set(b))
    # Joachims 2003: every prefix of the list holds the top ka of a and top kb of b, |ka - kb| <= 1
    for n in range(1, len(out.docs) + 1):
        prefix = set(out.docs[:n])
        ka = next((i for i, d in enumerate(a) if d not in prefix), len(a))
        kb = next((i for i, d in enumerate(b) if d not in prefix), len(b))
        assert set(a[:ka]) | set(b[:kb]) == prefix or abs(ka - kb) <= 1 or ka == len(a) or kb == len(b)


def test_bad_arguments():
    with pytest.raises(InputError, match="ranking a repeats a document"):
        interleave(["x", "x"], ["y"])
    with pytest.raises(ConfigError, match="method must be one of team-draft, balanced"):
        interleave(["x"], ["y"], method="probabilistic")


# Simulated users: a PBM on the interleaved list; A ranks by true attractiveness, B reversed on part.
THETA = np.array([1.0, 0.7, 0.5, 0.35, 0.25, 0.2])
QUERIES, DOCS = 30, 8


def _world(seed):
    rng = np.random.default_rng(seed)
    gamma = rng.beta(0.6, 1.2, size=(QUERIES, DOCS))
    a = [[f"d{j}" for j in np.argsort(-g)] for g in gamma]
    b = [[f"d{j}" for j in np.argsort(-(g + rng.normal(0, 0.3, DOCS)))] for g in gamma]
    return gamma, a, b


def _team_draft_with_coins(a, b, coins, k):
    """An independent team draft: round-based, ``coins[r]`` says whether A picks first in round r."""
    docs, teams = [], []
    for first_a in coins:
        for team in ("A", "B") if first_a else ("B", "A"):
            ranking = a if team == "A" else b
            doc = next((d for d in ranking if d not in docs), None)
            if doc is not None and len(docs) < k:
                docs.append(doc)
                teams.append(team)
    return docs, teams


def _poisson_binomial(ps):
    dist = np.array([1.0])
    for p in ps:
        dist = np.convolve(dist, [1 - p, p])
    return dist


def _exact_preference(gamma, a, b, k):
    """E[outcome]/2 per page, exactly: every coin sequence, clicks' Poisson-binomial per team."""
    total = 0.0
    for q in range(QUERIES):
        g = {f"d{j}": gamma[q, j] for j in range(DOCS)}
        value = 0.0
        for coins in itertools.product([True, False], repeat=k // 2):
            docs, teams = _team_draft_with_coins(a[q], b[q], coins, k)
            pa = [THETA[i] * g[d] for i, (d, t) in enumerate(zip(docs, teams, strict=True)) if t == "A"]
            pb = [THETA[i] * g[d] for i, (d, t) in enumerate(zip(docs, teams, strict=True)) if t == "B"]
            da, db = _poisson_binomial(pa), _poisson_binomial(pb)
            cdf_b = np.cumsum(db)
            win = sum(da[x] * (cdf_b[x - 1] if x >= 1 else 0.0) for x in range(len(da)))
            lose = sum(db[y] * (np.cumsum(da)[y - 1] if y >= 1 else 0.0) for y in range(len(db)))
            value += (win - lose) / 2 ** (k // 2)
        total += value
    return total / QUERIES / 2


def _simulate(gamma, a, b, pages, seed, k=6):
    rng = np.random.default_rng(seed)
    query = rng.integers(0, QUERIES, size=pages)
    rows_q, rows_d, rows_p, rows_t, rows_s = [], [], [], [], []
    for s, q in enumerate(query.tolist()):
        out = interleave(a[q], b[q], k=k, seed=rng)
        rows_q += [q] * k
        rows_d += [int(d[1:]) for d in out.docs]
        rows_p += list(range(1, k + 1))
        rows_t += [0 if t == "A" else 1 for t in out.teams]
        rows_s += [s] * k
    qd = np.array(rows_q), np.array(rows_d)
    clicked = rng.random(len(qd[0])) < THETA[np.array(rows_p) - 1] * gamma[qd]
    return build_log(
        [f"q{i}" for i in range(QUERIES)],
        [f"d{j}" for j in range(DOCS)],
        qd[0],
        qd[1],
        np.array(rows_p),
        clicked,
        session=np.array(rows_s),
        team=np.array(rows_t),
    )


def test_simulated_preference_has_the_right_sign_and_its_ci_covers_the_truth():
    gamma, a, b = _world(11)
    truth = _exact_preference(gamma, a, b, 6)
    result = analyze_interleaving(_simulate(gamma, a, b, 20_000, seed=1))
    print(
        f"\ntrue preference {truth:+.4f}; estimated {result.preference:+.4f}, CI {result.ci}, "
        f"sign test p {result.sign_test_p:.2g}, pages needed {result.pages_needed}"
    )
    assert truth > 0 and result.preference > 0
    assert result.ci[0] <= truth <= result.ci[1]
    assert result.sign_test_p < 0.01
    assert result.wins + result.ties + result.losses == result.pages == 20_000


@pytest.mark.slow
def test_ci_coverage_over_repeated_simulations():
    gamma, a, b = _world(11)
    truth = _exact_preference(gamma, a, b, 6)
    covered = [
        (r := analyze_interleaving(_simulate(gamma, a, b, 1500, seed=100 + i), n_resamples=2000)).ci[0]
        <= truth
        <= r.ci[1]
        for i in range(60)
    ]
    print(f"\ncoverage of the 95% CI over {len(covered)} simulated logs: {np.mean(covered):.3f}")
    assert 0.85 <= np.mean(covered) <= 1.0


TINY = """session,query_id,doc_id,position,clicked,team
s1,q1,a,1,1,A
s1,q1,b,2,0,B
s2,q1,b,1,1,B
s2,q1,a,2,1,A
s3,q2,c,1,0,B
s3,q2,d,2,1,B
s4,q2,c,1,0,A
s4,q2,d,2,0,B
"""


def test_cli_on_a_tiny_log_by_hand(tmp_path, capsys):
    import json

    path = tmp_path / "il.csv"
    path.write_text(TINY)
    code, out, err = invoke(capsys, "online", "interleave", str(path), "--format", "json", "--per-query")
    assert code == 0, err
    body = json.loads(out)
    # s1: A 1-0 (win), s2: 1-1 (tie), s3: B 0-1 (loss), s4: no clicks (tie)
    assert (body["wins"], body["ties"], body["losses"]) == (1, 2, 1)
    assert body["preference"] == pytest.approx((1 + 2 / 2) / 4 - 0.5)
    assert body["sign_test_p"] == pytest.approx(1.0)
    assert body["per_query"] == {"q1": {"wins": 1, "ties": 1, "losses": 0}, "q2": {"wins": 0, "ties": 1, "losses": 1}}
    assert body["queries"] == {"won": 1, "tied": 0, "lost": 1}
    code, out, _ = invoke(capsys, "online", "interleave", str(path))
    assert code == 0 and "A wins 1, ties 2, B wins 1" in out
    (tmp_path / "noteam.csv").write_text("query_id,doc_id,position,clicked\nq1,a,1,1\n")
    code, _, err = invoke(capsys, "online", "interleave", str(tmp_path / "noteam.csv"))
    assert code == 2 and "no team column" in err
