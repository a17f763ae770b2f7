"""What an evaluation noticed about its input, kept as counts so that partitions merge exactly.

The warnings of `rankgate.evaluate` are written from these facts; an evaluation split into
query partitions (out of core, or on a cluster) merges the facts and writes the same warnings
as one evaluation of everything.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

UNJUDGED_WARNING_FRACTION = 0.5
UPSIDE_DOWN_FRACTION = 0.75  # of the queries that tell, those with their relevant documents nearer the bottom
UPSIDE_DOWN_P = 0.001  # and a ranking that is a coin toss per query would give as many that rarely
EXAMPLES = 3


@dataclass
class EvaluationFacts:
    counts: dict[str, int]  # evaluated, missing_from_run, run_only, no_relevant
    missing_ids: list[str]  # a few qrels queries absent from the run
    run_only_ids: list[str]  # a few run queries absent from the qrels
    self_matches: list[str]  # a few queries that retrieve a doc with their own id
    n_self_matches: int
    run_rows: int
    deepest: int  # most documents retrieved for one query
    cutoffs: dict[int, list[str]] = field(default_factory=dict)  # cutoff -> measure names
    shallow: dict[int, int] = field(default_factory=dict)  # cutoff -> evaluated queries with fewer documents
    probe_k: int = 10  # depth at which unjudged documents are counted
    unjudged: int = 0
    shown: int = 0
    queries: str = "qrels"
    empty: str = "zero"
    n_self_on_top: int = 0  # of n_self_matches: queries whose own-id document is their top result
    chunk_matches: dict[str, int] = field(default_factory=dict)  # separator -> sampled ids judged once cut there
    scores_one: list[str] = field(
        default_factory=list
    )  # measures with empty=one: a query without relevant docs scores 1
    run_is_qrels: bool = False  # every run row a judged document scored with its grade: the qrels as the run?
    relevant_near_top: int = 0  # queries whose relevant documents sit nearer the top of the ranking than its bottom
    relevant_near_bottom: int = 0  # the other way round (scores that are distances rank upside down)
    ranked: int = 0  # evaluated queries that rank two or more documents
    all_tied: int = 0  # of them, those whose documents all have one score (ties=trec: ordered by doc id)

    @classmethod
    def merge(cls, parts: Sequence[EvaluationFacts]) -> EvaluationFacts:
        first = parts[0]
        counts = {key: sum(p.counts.get(key, 0) for p in parts) for key in first.counts}
        return cls(
            counts=counts,
            missing_ids=_first([p.missing_ids for p in parts]),
            run_only_ids=_first([p.run_only_ids for p in parts]),
            self_matches=_first([p.self_matches for p in parts]),
            n_self_matches=sum(p.n_self_matches for p in parts),
            n_self_on_top=sum(p.n_self_on_top for p in parts),
            run_rows=sum(p.run_rows for p in parts),
            deepest=max(p.deepest for p in parts),
            cutoffs=first.cutoffs,
            shallow={k: sum(p.shallow.get(k, 0) for p in parts) for k in first.cutoffs},
            probe_k=first.probe_k,
            unjudged=sum(p.unjudged for p in parts),
            shown=sum(p.shown for p in parts),
            queries=first.queries,
            empty=first.empty,
            scores_one=first.scores_one,
            run_is_qrels=any(p.run_rows for p in parts) and all(p.run_is_qrels for p in parts if p.run_rows),
            relevant_near_top=sum(p.relevant_near_top for p in parts),
            relevant_near_bottom=sum(p.relevant_near_bottom for p in parts),
            ranked=sum(p.ranked for p in parts),
            all_tied=sum(p.all_tied for p in parts),
            chunk_matches={  # partitions sample on their own: a partition mostly judged samples nothing
                key: sum(p.chunk_matches.get(key, 0) for p in parts) for p0 in parts for key in p0.chunk_matches
            },
        )

    @property
    def unjudged_fraction(self) -> float:
        return self.unjudged / self.shown if self.shown else 0.0

    @property
    def upside_down(self) -> bool:
        """Whether most queries' relevant documents sit nearer the bottom of their ranking: at least
        `UPSIDE_DOWN_FRACTION` of the queries that tell, and more than a random ranking (each query a
        fair coin) gives with probability `UPSIDE_DOWN_P` (so at least 10 queries, all of them).
        Real rankings put well under half there; a run scored by distance, most of them even when
        it is cut at depth 3 (a few queries' relevant documents then sit at both ends: no vote)."""
        voted, bottom = self.relevant_near_top + self.relevant_near_bottom, self.relevant_near_bottom
        return voted > 0 and bottom >= UPSIDE_DOWN_FRACTION * voted and _coin_tail(voted, bottom) <= UPSIDE_DOWN_P

    def warnings(self) -> list[str]:
        out: list[str] = []
        c = self.counts
        if not c["evaluated"]:
            out.append("no query was evaluated, so every aggregate is null; see the query counts")
        if not self.run_rows:
            out.append("the run holds no results")
        if c["missing_from_run"]:
            eg = ", ".join(repr(x) for x in self.missing_ids)
            one = c["missing_from_run"] == 1
            consequence = (
                f"{'it scores' if one else 'they score'} 0 unless you pass --queries intersection"
                + (f" (1 on {', '.join(self.scores_one)} where no doc is relevant)" if self.scores_one else "")
                if self.queries == "qrels"
                else f"{'it is' if one else 'they are'} left out of the averages"
            )
            out.append(
                f"{c['missing_from_run']} qrels {_queries(c['missing_from_run'], 'is', 'are')} not in the run "
                f"(e.g. {eg}); {consequence}"
            )
        if c["run_only"]:
            eg = ", ".join(repr(x) for x in self.run_only_ids)
            ignored = "it is" if c["run_only"] == 1 else "they are"
            out.append(f"{c['run_only']} run {_queries(c['run_only'])} no judgments (e.g. {eg}); {ignored} ignored")
        if c["no_relevant"]:
            one = c["no_relevant"] == 1
            they, them = ("it scores", "it") if one else ("they score", "them")
            ones = f", 1 on {', '.join(self.scores_one)}" if self.scores_one else ""
            consequence = (
                f"{they} 0 on most measures{ones} (pass --empty skip to leave {them} out)"
                if self.empty == "zero"
                else f"{'it is' if one else 'they are'} left out of the averages"
            )
            out.append(f"{c['no_relevant']} {_queries(c['no_relevant'])} no relevant judgment; {consequence}")
        # Ids that merely coincide (classic collections number queries and documents alike) rank
        # their namesake anywhere; a corpus that holds the queries (Quora, ArguAna) ranks it first.
        if self.n_self_matches and 2 * self.n_self_on_top >= self.n_self_matches:
            out.append(
                f"{self.n_self_matches} {_queries(self.n_self_matches, 'retrieves', 'retrieve')} a document "
                "whose id equals the query id "
                f"(e.g. {self.self_matches[0]!r}), {self.n_self_on_top} of them as their top result; "
                "BEIR drops such self-matches, rankgate keeps them"
            )
        out.extend(self._cutoff_warnings())
        if self.run_rows and self.run_is_qrels:  # a TREC qrels file given as the run fails on its fields first
            out.append(
                "every document in the run is judged and scored with its grade: the run looks like the qrels; "
                "if it is, the qrels were given where the run goes (eval and compare take the qrels first, gate "
                "takes them with --qrels)"
            )
        out.extend(self._score_order_warnings())
        if self.unjudged_fraction > UNJUDGED_WARNING_FRACTION:
            out.append(
                f"{self.unjudged_fraction:.0%} of the top-{self.probe_k} documents are unjudged, so scores are lower "
                f"bounds; look at Judged@{self.probe_k} or Bpref, or judge more (rankgate label)"
            )
            out.extend(_chunk_hint(self))
        return out

    def _score_order_warnings(self) -> list[str]:
        """Scores that do not order the run as its author likely meant: all tied, or distances."""
        out: list[str] = []
        if self.all_tied and 2 * self.all_tied >= self.ranked:
            out.append(
                f"in {self.all_tied} of {self.ranked} queries every document has the same score, so they are ranked "
                "by doc id (descending, trec_eval's tie rule), not by their order in the file or their rank column; "
                "write scores that fall with rank, or pass --ties input to keep the file's order"
            )
        if self.upside_down:
            voted = self.relevant_near_top + self.relevant_near_bottom
            out.append(
                f"in {self.relevant_near_bottom} of {voted} queries the relevant documents sit nearer the bottom of "
                "the ranking than the top: are the scores distances (lower is better)? rankgate, like trec_eval, "
                "ranks by score, highest first; write the run with scores that are higher for better documents "
                "(negate distances)"
            )
        return out

    def _cutoff_warnings(self) -> list[str]:
        """Cutoffs deeper than the run, or than some of its queries."""
        out: list[str] = []
        if not self.run_rows:
            return out
        for k in sorted(self.cutoffs):
            names = ", ".join(self.cutoffs[k])
            if k > self.deepest:
                out.append(
                    f"the run returns at most {self.deepest} {'document' if self.deepest == 1 else 'documents'} "
                    f"per query, fewer than the cutoff of {names}"
                )
            elif self.shallow.get(k):
                out.append(
                    f"{self.shallow[k]} {_queries(self.shallow[k], 'returns', 'return')} fewer than {k} "
                    f"documents (the cutoff of {names}); "
                    "the ranks they lack count as not relevant"
                )
        return out


def _chunk_hint(facts: EvaluationFacts) -> list[str]:
    """The ``--chunk-sep`` hint when most sampled run ids, cut at a separator, are judged documents."""
    sampled = facts.chunk_matches.get("sampled", 0)
    found = {sep: n for sep, n in facts.chunk_matches.items() if sep != "sampled"}
    if not sampled or not found:
        return []
    sep, n = max(found.items(), key=lambda item: item[1])
    if 2 * n <= sampled:
        return []
    return [
        f"{n} of {sampled} sampled run ids cut at their last {sep!r} are judged document ids: if the run holds "
        f"chunk ids, pass --chunk-sep '{sep}' (chunk_sep={sep!r} in Python) to score their documents"
    ]


def _queries(n: int, one: str = "has", several: str = "have") -> str:
    """``"query has"`` for one query, ``"queries have"`` for several (or the verbs given)."""
    return f"query {one}" if n == 1 else f"queries {several}"


def _coin_tail(n: int, k: int) -> float:
    """P(X >= k) for X ~ Binomial(n, 1/2), exactly; past 1,000 trials ``k`` is far in the tail
    whenever the caller asks (k >= 0.75 n: under 1e-50), so it is not summed.

    >>> _coin_tail(10, 10), _coin_tail(9, 9), round(_coin_tail(26, 22), 5)
    (0.0009765625, 0.001953125, 0.00027)
    """
    if n > 1000 and k >= 0.75 * n:
        return 0.0
    return sum(math.comb(n, i) for i in range(k, n + 1)) / 2**n


def _first(lists: Sequence[Sequence[str]]) -> list[str]:
    """The first examples in byte order of query id, as one evaluation of everything lists them."""
    return sorted((x for items in lists for x in items), key=str.encode)[:EXAMPLES]
