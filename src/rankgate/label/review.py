"""Human review: a stratified sample out to CSV (without the judge's label), human labels back in.

The sample CSV has one row per pair::

    sample_id,query_id,doc_id,query,document,label,notes

Reviewers fill ``label`` (an integer of the scale; leave it empty to skip a pair) and may
write ``notes``. Rows come in a random order, so neighbouring rows do not hint at a label.
The stratification draws the same number of pairs from each label the judge gave (rare
grades are the ones agreement statistics need most), or from each query.
"""

from __future__ import annotations

import csv
import io
import os
import random
from collections.abc import Mapping, Sequence
from typing import Any

from rankgate.core.qrels import Qrels
from rankgate.errors import ConfigError, InputError
from rankgate.io.source import atomic_writer, read_bytes
from rankgate.label.types import TIER_HUMAN, Judgment

CSV_FIELDS = ("sample_id", "query_id", "doc_id", "query", "document", "label", "notes")
STRATA = ("label", "query")


def stratified_sample(qrels: Qrels, size: int, *, strata: str = "label", seed: int = 0) -> list[tuple[str, str, int]]:
    """``size`` judged pairs ``(query_id, doc_id, label)``, spread evenly over the strata.

    Each stratum (a label, or a query) gets ``size // strata`` pairs; what a small stratum
    cannot fill goes to the others. The order of the result is shuffled.

    >>> q = Qrels.from_dict({"q1": {"a": 0, "b": 0, "c": 0, "d": 0, "e": 3}, "q2": {"f": 1, "g": 0}})
    >>> sorted(lab for _, _, lab in stratified_sample(q, 4))
    [0, 0, 1, 3]
    """
    if strata not in STRATA:
        raise ConfigError(f"strata must be one of {', '.join(STRATA)}. Got {strata!r} instead.", key_path="strata")
    if size < 1:
        raise ConfigError(f"the sample size must be >= 1. Got {size!r} instead.", key_path="size")
    rng = random.Random(seed)
    groups: dict[Any, list[tuple[str, str, int]]] = {}
    for qid, docs in qrels.to_dict().items():
        for did, grade in docs.items():
            key = grade if strata == "label" else qid
            groups.setdefault(key, []).append((qid, did, int(grade)))
    for key in groups:
        rng.shuffle(groups[key])
    order = sorted(groups)
    take = {k: 0 for k in order}
    left = min(size, sum(len(g) for g in groups.values()))
    while left:
        open_ = [k for k in order if take[k] < len(groups[k])]
        share = max(1, left // len(open_))
        for k in open_:
            extra = min(share, len(groups[k]) - take[k], left)
            take[k] += extra
            left -= extra
            if not left:
                break
    chosen = [pair for k in order for pair in groups[k][: take[k]]]
    rng.shuffle(chosen)
    return chosen


def read_review_texts(
    sample: Sequence[tuple[str, str, int]], queries_path: str, corpus_path: str
) -> tuple[dict[str, str], dict[str, str]]:
    """The ``(queries, corpus)`` texts a review sample needs, read from the two files.

    Raises:
        InputError: no query of the sample has text in the queries, or no document in the
            corpus (the message suggests a swap of ``--queries`` and ``--corpus``).
    """
    from rankgate.label.collection import read_texts, require_some_text

    queries, corpus = read_texts(queries_path, what="query"), read_texts(corpus_path)
    require_some_text(
        (q for q, _, _ in sample), queries, subject="query of the sample", option="--queries", path=queries_path,
        other=corpus, other_option="--corpus", ask="is it the queries file of these judgments?",
    )  # fmt: skip
    require_some_text(
        (d for _, d, _ in sample), corpus, subject="document of the sample", option="--corpus", path=corpus_path,
        other=queries, other_option="--queries", ask="is it the corpus of these judgments?",
    )  # fmt: skip
    return queries, corpus


def write_review_csv(
    sample: Sequence[tuple[str, str, int]],
    queries: Mapping[str, str],
    corpus: Mapping[str, str],
    path: str | os.PathLike[str],
) -> int:
    """Write the sample for reviewers (texts included, the judge's label left out) atomically."""
    missing_q = next((q for q, _, _ in sample if q not in queries), None)
    if missing_q is not None:
        raise InputError(f"query {missing_q!r} of the sample has no text in the queries file")
    missing_d = next((d for _, d, _ in sample if d not in corpus), None)
    if missing_d is not None:
        raise InputError(f"document {missing_d!r} of the sample is not in the corpus")
    with atomic_writer(path) as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(CSV_FIELDS)
        for i, (qid, did, _) in enumerate(sample, start=1):
            writer.writerow([f"s{i:05d}", qid, did, queries[qid], corpus[did], "", ""])
    return len(sample)


def read_review_csv(
    path: str | os.PathLike[str],
    *,
    labels: Sequence[int] = (0, 1, 2, 3),
    annotator: str = "human",
    tier: str = TIER_HUMAN,
) -> tuple[list[Judgment], int]:
    """Reviewers' labels from a filled-in sample CSV: ``(judgments, rows left blank)``.

    Only ``query_id``, ``doc_id`` and ``label`` are required (``notes`` is kept as the reason);
    a label must be one of ``labels``; a pair may appear once.
    """
    source = str(path)
    text = read_bytes(path).decode("utf-8-sig", errors="replace")
    if not text.strip():
        raise InputError("file is empty: expected the review CSV with a header", source=source)
    delimiter = "\t" if "\t" in text.split("\n", 1)[0] and "," not in text.split("\n", 1)[0] else ","
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    header = [(h or "").strip().lower() for h in reader.fieldnames or []]
    for needed in ("query_id", "doc_id", "label"):
        if needed not in header:
            raise InputError(f"no {needed!r} column (found {', '.join(header) or 'none'})", source=source, line=1)
    allowed = ", ".join(str(v) for v in labels)
    out: list[Judgment] = []
    seen: dict[tuple[str, str], int] = {}
    blank = 0
    judge_id = f"human:{annotator}"
    for row in reader:
        line = reader.line_num
        clean = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items() if k is not None}
        qid, did, raw = clean.get("query_id", ""), clean.get("doc_id", ""), clean.get("label", "")
        if not qid or not did:
            raise InputError("missing query_id or doc_id", source=source, line=line)
        if not raw:
            blank += 1
            continue
        try:
            value = int(raw)
        except ValueError:
            raise InputError(f"label must be one of {allowed}", source=source, line=line, text=raw) from None
        if value not in labels:
            raise InputError(f"label must be one of {allowed}", source=source, line=line, text=raw)
        if (qid, did) in seen:
            raise InputError(
                f"pair ({qid!r}, {did!r}) labeled twice (first on line {seen[(qid, did)]})", source=source, line=line
            )
        seen[(qid, did)] = line
        out.append(
            Judgment(qid, did, value, judge_id, "human", model=annotator, reason=clean.get("notes", ""), tier=tier)
        )
    return out, blank
