"""Answer-aware retrieval measures without a model: does a top-k passage contain the reference answer?

``AnswerRecall@k`` is the share of queries for which at least one of the reference answer
strings appears in at least one of the top k retrieved passages (DPR's "top-k retrieval
accuracy", Karpukhin et al. 2020). Texts and answers are normalised as in open-domain QA (the
SQuAD evaluation script, also DPR's): lowercase, punctuation removed, the articles a/an/the
removed, whitespace collapsed; an answer matches where its normalised words appear as a run of
whole words in the normalised passage ("cat" does not match "category").

Answers come from JSONL, one ``{"query_id": "q1", "answers": ["Paris", "Paris, France"]}`` a
line (every string is an accepted alias). Queries are those of the answers file: one the run
lacks scores 0; run queries without answers are ignored; both are counted.

>>> normalize_answer("The  Eiffel-Tower, in PARIS!")
'eiffeltower in paris'
>>> contains_answer("It opened in 1889 as the entrance arch.", "1889")
True
"""

from __future__ import annotations

import math
import os
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rankgate.errors import ConfigError, InputError

if TYPE_CHECKING:
    from rankgate.core.run import Run

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD/DPR normalisation: lowercase, no punctuation, no articles a/an/the, single spaces.

    >>> normalize_answer("An  Apple a Day.")
    'apple day'
    """
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def contains_answer(passage: str, answer: str, *, normalized: bool = False) -> bool:
    """Whether ``answer`` appears in ``passage`` as whole words, both normalised (`normalize_answer`).

    >>> contains_answer("The category is wide.", "cat"), contains_answer("A black cat.", "the Cat")
    (False, True)
    """
    p = passage if normalized else normalize_answer(passage)
    a = answer if normalized else normalize_answer(answer)
    return bool(a) and f" {a} " in f" {p} "


def read_answers(path: str | os.PathLike[str]) -> dict[str, list[str]]:
    """``{query_id: [answer, ...]}`` from JSONL lines ``{"query_id": ..., "answers": [...]}``.

    ``_id``/``id``/``qid`` are accepted for the id, a single string for ``answers`` (also under
    ``answer``). A malformed line, a query given twice, or no answer is an `InputError` naming
    the file and line.
    """
    from rankgate.io.rows import json_lines, numbered_lines

    source = str(path)
    out: dict[str, list[str]] = {}
    first: dict[str, int] = {}
    for number, row in json_lines(numbered_lines(path), source):
        if not isinstance(row, dict):
            raise InputError("expected a JSON object with query_id and answers", source=source, line=number)
        qid = next((row[k] for k in ("query_id", "_id", "id", "qid") if k in row), None)
        if not isinstance(qid, str | int) or isinstance(qid, bool) or str(qid) == "":
            raise InputError("missing or empty query_id", source=source, line=number)
        raw = row.get("answers", row.get("answer"))
        answers = [raw] if isinstance(raw, str) else raw
        if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
            raise InputError("answers must be a non-empty list of strings", source=source, line=number)
        key = str(qid)
        if key in first:
            raise InputError(f"query {key!r} given twice (first at line {first[key]})", source=source, line=number)
        if not any(normalize_answer(a) for a in answers):
            raise InputError(
                f"no answer of query {key!r} has a word left after normalisation (articles and punctuation "
                "are removed): it could never match",
                source=source,
                line=number,
            )
        first[key] = number
        out[key] = answers
    if not out:
        raise InputError("no answers in the file", source=source)
    return out


@dataclass
class AnswerResults:
    """``AnswerRecall@k`` per query (1 or 0) and its mean, with the rank of the first answer-bearing passage.

    Attributes:
        measures: ``AnswerRecall@k`` for each cutoff, ascending.
        per_query: ``{query_id: {measure: 0.0 or 1.0}}``.
        first_hit: ``{query_id: rank}`` (from 1) of the first passage holding an answer within the
            largest cutoff, or None.
        aggregate: the mean of each measure over the queries of the answers file (None when it has none).
        queries: counts: evaluated, missing_from_run, run_only.
        missing_passages: retrieved ids (within the largest cutoff) with no text in the corpus, matched as empty.
    """

    measures: list[str]
    per_query: dict[str, dict[str, float]]
    first_hit: dict[str, int | None]
    aggregate: dict[str, float | None]
    queries: dict[str, int]
    missing_passages: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "measures": self.measures,
            "aggregate": self.aggregate,
            "queries": self.queries,
            "missing_passages": {"count": len(self.missing_passages), "examples": self.missing_passages[:5]},
            "settings": self.settings,
        }
        if per_query:
            out["per_query"] = {q: {**v, "first_hit": self.first_hit[q]} for q, v in self.per_query.items()}
        return out


def answer_recall(
    run: Run,
    passages: Mapping[str, str],
    answers: Mapping[str, Sequence[str]],
    *,
    ks: Sequence[int] = (1, 5, 10, 20),
    ties: str = "trec",
) -> AnswerResults:
    """``AnswerRecall@k`` of ``run``: share of queries with a reference answer in a top-k passage.

    Args:
        run: the retrieved passages (or chunks).
        passages: ``{passage_id: text}`` (a corpus of documents or chunks).
        answers: ``{query_id: [answer, ...]}`` (`read_answers`); any alias counts.
        ks: cutoffs (>= 1).
        ties: the tie rule of `Run.ranking_order` ("trec" or "input").

    >>> from rankgate.core.run import Run
    >>> run = Run.from_dict({"q1": {"p1": 2.0, "p2": 1.0}, "q2": {"p1": 1.0}})
    >>> texts = {"p1": "Paris is large.", "p2": "The capital is PARIS."}
    >>> r = answer_recall(run, texts, {"q1": ["the capital"], "q2": ["Lyon"]}, ks=(1, 2))
    >>> r.aggregate, r.first_hit
    ({'AnswerRecall@1': 0.0, 'AnswerRecall@2': 0.5}, {'q1': 2, 'q2': None})
    """
    from rankgate.comparison.overlap import ranked_lists

    cutoffs = sorted(set(ks))
    if not cutoffs or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in cutoffs):
        raise ConfigError(f"The 'ks' parameter must hold whole numbers >= 1. Got {list(ks)!r} instead.", key_path="k")
    depth = cutoffs[-1]
    lists = ranked_lists(run, depth, ties=ties)
    normalized: dict[str, str] = {}
    missing: list[str] = []
    names = [f"AnswerRecall@{k}" for k in cutoffs]
    per_query: dict[str, dict[str, float]] = {}
    first_hit: dict[str, int | None] = {}
    for qid, alternatives in answers.items():
        wanted = [a for a in (normalize_answer(x) for x in alternatives) if a]
        hit = None
        for rank, pid in enumerate(lists.get(qid, []), start=1):
            if pid not in normalized:
                if pid not in passages:
                    missing.append(pid)
                normalized[pid] = normalize_answer(passages.get(pid, ""))
            if any(contains_answer(normalized[pid], a, normalized=True) for a in wanted):
                hit = rank
                break
        first_hit[qid] = hit
        per_query[qid] = {f"AnswerRecall@{k}": float(hit is not None and hit <= k) for k in cutoffs}
    n = len(per_query)
    aggregate: dict[str, float | None] = {
        m: math.fsum(v[m] for v in per_query.values()) / n if n else None for m in names
    }  # a mean over no query is None (JSON null), as evaluate's
    counts = {
        "evaluated": n,
        "missing_from_run": sum(1 for q in answers if q not in lists),
        "run_only": sum(1 for q in lists if q not in answers),
    }
    settings = {"ks": cutoffs, "ties": ties, "normalisation": "SQuAD/DPR: lowercase, punctuation, articles, spaces"}
    return AnswerResults(names, per_query, first_hit, aggregate, counts, missing, settings)
