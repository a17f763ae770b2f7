"""Interleaving: build team-draft and balanced interleavings, and score team-draft click logs.

Team draft (Radlinski, Kurup & Joachims 2008): in each round the team with fewer picks (a coin
flip when equal) adds its highest-ranked document not yet shown; a click credits the team that
picked the document. Balanced (Joachims 2003): one coin flip decides which ranking leads; the
list takes the next unseen document of the ranking with fewer documents taken so far (the leader
on ties); clicks are credited by the ranks at which each ranking holds the clicked documents.
When one ranking runs out, the other fills the rest of the list.

Scoring a team-draft log: each page is won by the team with more clicks (a tie when equal,
pages without clicks included). The preference score is ``(wins + ties / 2) / pages - 1/2``
(Chapelle et al. 2012): positive when A is preferred.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankgate.errors import ConfigError, InputError
from rankgate.online.logs import ClickLog

METHODS = ("team-draft", "balanced")
MIN_CLUSTERS = 10  # fewer queries than this: the bootstrap resamples pages, not queries


@dataclass(frozen=True)
class Interleaving:
    """An interleaved list: ``docs[i]`` was contributed by ranking ``teams[i]`` (``"A"`` or ``"B"``)."""

    docs: tuple[str, ...]
    teams: tuple[str, ...]
    method: str


def interleave(
    a: Sequence[str], b: Sequence[str], *, method: str = "team-draft", k: int | None = None, seed: Any = None
) -> Interleaving:
    """Interleave rankings ``a`` and ``b`` (best first) into one list of at most ``k`` documents.

    Args:
        a, b: two rankings of document ids, without repeats.
        method: ``"team-draft"`` or ``"balanced"``.
        k: length of the list (default: every document of either ranking).
        seed: an int or numpy Generator for the coin flips (None: fresh randomness).

    >>> interleave(["d1", "d2", "d3"], ["d2", "d4"], seed=0)
    Interleaving(docs=('d2', 'd1', 'd3', 'd4'), teams=('B', 'A', 'A', 'B'), method='team-draft')
    """
    if method not in METHODS:
        raise ConfigError(f"method must be one of {', '.join(METHODS)}. Got {method!r} instead.", key_path="method")
    for name, ranking in (("a", a), ("b", b)):
        if len(set(ranking)) != len(ranking):
            raise InputError(f"ranking {name} repeats a document")
    total = len(set(a) | set(b))
    k = total if k is None else min(int(k), total)
    if k < 0:
        raise ConfigError(f"k must be >= 0. Got {k} instead.", key_path="k")
    rng = np.random.default_rng(seed)
    if method == "team-draft":
        return _team_draft(list(a), list(b), k, rng)
    return _balanced(list(a), list(b), k, rng)


def _next_unseen(ranking: list[str], start: int, seen: set[str]) -> int:
    while start < len(ranking) and ranking[start] in seen:
        start += 1
    return start


def _team_draft(a: list[str], b: list[str], k: int, rng: np.random.Generator) -> Interleaving:
    docs: list[str] = []
    teams: list[str] = []
    seen: set[str] = set()
    picks = {"A": 0, "B": 0}
    cursor = {"A": 0, "B": 0}
    lists = {"A": a, "B": b}
    while len(docs) < k:
        for t in ("A", "B"):
            cursor[t] = _next_unseen(lists[t], cursor[t], seen)
        left = [t for t in ("A", "B") if cursor[t] < len(lists[t])]
        if len(left) == 2:
            if picks["A"] != picks["B"]:
                team = "A" if picks["A"] < picks["B"] else "B"
            else:
                team = "A" if rng.random() < 0.5 else "B"
        else:
            team = left[0]
        doc = lists[team][cursor[team]]
        docs.append(doc)
        teams.append(team)
        seen.add(doc)
        picks[team] += 1
    return Interleaving(tuple(docs), tuple(teams), "team-draft")


def _balanced(a: list[str], b: list[str], k: int, rng: np.random.Generator) -> Interleaving:
    a_first = rng.random() < 0.5
    docs: list[str] = []
    teams: list[str] = []
    seen: set[str] = set()
    ka = kb = 0
    while len(docs) < k:
        take_a = kb >= len(b) or (ka < len(a) and (ka < kb or (ka == kb and a_first)))
        ranking, index = (a, ka) if take_a else (b, kb)
        doc = ranking[index]
        if doc not in seen:
            docs.append(doc)
            teams.append("A" if take_a else "B")
            seen.add(doc)
        if take_a:
            ka += 1
        else:
            kb += 1
    return Interleaving(tuple(docs), tuple(teams), "balanced")


@dataclass(frozen=True)
class InterleavingResult:
    """Outcome of a team-draft interleaving log; A is preferred when ``preference`` > 0."""

    pages: int
    wins: int
    ties: int
    losses: int
    preference: float
    ci: tuple[float, float]
    sign_test_p: float
    pages_needed: int | None
    per_query: dict[str, tuple[int, int, int]]
    queries: dict[str, int]
    confidence: float

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        body: dict[str, Any] = {
            "pages": self.pages,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "preference": self.preference,
            "ci": list(self.ci),
            "confidence": self.confidence,
            "sign_test_p": self.sign_test_p,
            "pages_needed": self.pages_needed,
            "queries": self.queries,
        }
        if per_query:
            body["per_query"] = {q: {"wins": w, "ties": t, "losses": lo} for q, (w, t, lo) in self.per_query.items()}
        return body


def page_outcomes(log: ClickLog) -> np.ndarray:
    """Per page: +1 when team A got more clicks, -1 when B did, 0 on a tie (no clicks included)."""
    if log.team is None:
        raise InputError("an interleaving log needs a team column (A or B per result)", source=log.source)
    starts = log.page_start[:-1]
    a = np.add.reduceat((log.clicked & (log.team == 0)).astype(np.int64), starts)
    b = np.add.reduceat((log.clicked & (log.team == 1)).astype(np.int64), starts)
    return np.sign(a - b).astype(np.int64)


def _cluster_bootstrap(sums: np.ndarray, counts: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Preference of each resample of the queries (with replacement), in blocks of bounded memory."""
    out = np.empty(n_resamples)
    block = max(1, 20_000_000 // len(sums))
    uniform = np.full(len(sums), 1 / len(sums))
    for start in range(0, n_resamples, block):
        draws = rng.multinomial(len(sums), uniform, size=min(block, n_resamples - start)).astype(np.float64)
        out[start : start + len(draws)] = (draws @ sums) / np.maximum(draws @ counts, 1) / 2
    return out


def analyze_interleaving(
    log: ClickLog,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    power: float = 0.8,
    seed: int = 0,
) -> InterleavingResult:
    """Wins, ties and losses of A against B, and the preference score with a bootstrap CI.

    The bootstrap resamples queries (pages of one query together), or pages when the log has
    fewer than 10 queries. Also: a two-sided sign test on wins vs losses, and the pages a
    two-sided test at level ``1 - confidence`` needs to detect the observed preference with ``power``.
    """
    from scipy import stats

    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1). Got {confidence} instead.", key_path="confidence")
    outcome = page_outcomes(log)
    wins, losses = int((outcome > 0).sum()), int((outcome < 0).sum())
    ties = len(outcome) - wins - losses
    preference = float(outcome.mean()) / 2
    per_q_sum = np.bincount(log.page_query, weights=outcome, minlength=len(log.query_ids))
    per_q_pages = np.bincount(log.page_query, minlength=len(log.query_ids)).astype(np.float64)
    present = per_q_pages > 0
    sums, counts = per_q_sum[present], per_q_pages[present]
    rng = np.random.default_rng(seed)
    if len(sums) < MIN_CLUSTERS:  # too few queries to resample: pages are the units (3 outcome values)
        shares = np.array([(outcome == v).mean() for v in (-1, 0, 1)])
        draws = rng.multinomial(len(outcome), shares, size=n_resamples).astype(np.float64)
        boot = (draws @ np.array([-1.0, 0.0, 1.0])) / len(outcome) / 2
    else:
        boot = _cluster_bootstrap(sums, counts, n_resamples, rng)
    alpha = 1 - confidence
    low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    p = float(stats.binomtest(wins, wins + losses, 0.5).pvalue) if wins + losses else 1.0
    sd = float(outcome.std(ddof=1)) if len(outcome) > 1 else 0.0
    needed = None
    if outcome.mean() != 0 and sd > 0:
        z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
        needed = math.ceil((z * sd / abs(float(outcome.mean()))) ** 2)
    counted = [np.bincount(log.page_query, weights=outcome == v, minlength=len(log.query_ids)) for v in (1, 0, -1)]
    per_query = {
        log.query_ids[qi]: (int(counted[0][qi]), int(counted[1][qi]), int(counted[2][qi]))
        for qi in np.flatnonzero(present).tolist()
    }
    q_out = np.array([np.sign(w - lo) for w, _, lo in per_query.values()])
    queries = {"won": int((q_out > 0).sum()), "tied": int((q_out == 0).sum()), "lost": int((q_out < 0).sum())}
    return InterleavingResult(
        len(outcome),
        wins,
        ties,
        losses,
        preference,
        (float(low), float(high)),
        p,
        needed,
        per_query,
        queries,
        confidence,
    )
