"""Weak labels, made locally and for free: BM25 scores, click logs, a cross-encoder.

Each maps a number to a grade by thresholds: the grade is how many thresholds the number
reaches (``thresholds=(0.25, 0.5, 0.75)``: 0.6 -> grade 2). One threshold gives binary labels.
They are cheap first passes, not gold: check them against a human sample (`agreement`).
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankgate.errors import BackendError, ConfigError, InputError
from rankgate.extras import require
from rankgate.label.types import TIER_WEAK, Judgment, Pair

BM25_THRESHOLDS = (0.25, 0.5, 0.75)
CLICK_THRESHOLDS = (0.05, 0.15, 0.3)

if TYPE_CHECKING:
    from rankgate.online.clickmodels import ClickModelFit
CROSS_ENCODER_THRESHOLDS = (0.25, 0.5, 0.75)


def check_thresholds(thresholds: Sequence[float], key_path: str = "thresholds") -> tuple[float, ...]:
    """Thresholds as a strictly increasing tuple of finite numbers, or `ConfigError`.

    >>> check_thresholds([0.1, 0.5])
    (0.1, 0.5)
    """
    values = tuple(float(t) for t in thresholds)
    if not values:
        raise ConfigError("at least one threshold is needed", key_path=key_path)
    if not all(math.isfinite(v) for v in values) or any(b <= a for a, b in itertools.pairwise(values)):
        raise ConfigError(
            f"thresholds must be finite and strictly increasing. Got {list(values)} instead.", key_path=key_path
        )
    return values


def grade(value: float, thresholds: Sequence[float]) -> int:
    """How many thresholds ``value`` reaches.

    >>> [grade(v, (0.25, 0.5, 0.75)) for v in (0.0, 0.25, 0.6, 0.9)]
    [0, 1, 2, 3]
    """
    return bisect.bisect_right(list(thresholds), value)


def _short_hash(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:12]


def _judgment(judge: Any, pair: Pair, label: int, score: float, reason: str) -> Judgment:
    return Judgment(
        pair.query_id,
        pair.doc_id,
        label,
        judge.judge_id,
        judge.kind,
        model=judge.model,
        prompt_hash=judge.prompt_hash,
        reason=reason,
        attempts=1,
        tier=judge.tier,
        score=score,
    )


class BM25Judge:
    """Grades from BM25 scores (bm25s, Lucene variant) over the whole corpus.

    Args:
        corpus: ``{doc_id: text}``; document frequencies come from all of it.
        queries: ``{query_id: text}``.
        thresholds: on the normalized score (``normalize="max"``: score / best score of the
            query in the corpus, so the best document scores 1) or on the raw score ("none").
        k1, b: BM25 parameters.
    """

    kind = "bm25"
    needs_text = True
    prompt_hash = ""

    def __init__(
        self,
        corpus: Mapping[str, str],
        queries: Mapping[str, str],
        *,
        thresholds: Sequence[float] = BM25_THRESHOLDS,
        normalize: str = "max",
        k1: float = 1.2,
        b: float = 0.75,
        tier: str = TIER_WEAK,
    ) -> None:
        if normalize not in ("max", "none"):
            raise ConfigError(f"normalize must be 'max' or 'none'. Got {normalize!r} instead.", key_path="normalize")
        self.thresholds = check_thresholds(thresholds)
        self.normalize = normalize
        self.k1, self.b = k1, b
        self.tier = tier
        self._corpus = corpus
        self._queries = queries
        digest = hashlib.sha256()
        for did in sorted(corpus):
            digest.update(did.encode("utf-8") + b"\x00" + corpus[did].encode("utf-8") + b"\x01")
        self.model = f"bm25s(k1={k1:g},b={b:g})"
        self.judge_id = "bm25:" + _short_hash(k1, b, normalize, self.thresholds, digest.hexdigest())
        self._retriever: Any = None
        self._ids: list[str] = []
        self._row: dict[str, int] = {}

    def describe(self) -> dict[str, object]:
        return {
            "judge": self.kind,
            "judge_id": self.judge_id,
            "k1": self.k1,
            "b": self.b,
            "normalize": self.normalize,
            "thresholds": list(self.thresholds),
            "tier": self.tier,
        }

    def _index(self) -> None:
        bm25s = require("bm25s", "bench", purpose="the BM25 judge")
        self._ids = list(self._corpus)
        self._row = {d: i for i, d in enumerate(self._ids)}
        tokens = bm25s.tokenize([self._corpus[d] for d in self._ids], stopwords="en", show_progress=False)
        self._retriever = bm25s.BM25(k1=self.k1, b=self.b)
        self._retriever.index(tokens, show_progress=False)

    def scores(self, query_id: str) -> Any:
        """BM25 scores of every corpus document for one query (corpus order)."""
        import numpy as np

        if self._retriever is None:
            self._index()
        bm25s = require("bm25s", "bench", purpose="the BM25 judge")  # after the guard: a missing bm25s is one line
        words = bm25s.tokenize([self._queries[query_id]], stopwords="en", show_progress=False, return_ids=False)[0]
        if not words:
            return np.zeros(len(self._ids))
        return np.asarray(self._retriever.get_scores(words), dtype=np.float64)

    def judge_batch(self, pairs: Sequence[Pair]) -> list[Judgment]:
        by_query: dict[str, list[Pair]] = {}
        for pair in pairs:
            by_query.setdefault(pair.query_id, []).append(pair)
        out: list[Judgment] = []
        for qid, group in by_query.items():
            if qid not in self._queries:
                raise InputError(f"query {qid!r} has no text in the queries file")
            scores = self.scores(qid)
            best = float(scores.max()) if len(scores) else 0.0
            for pair in group:
                if pair.doc_id not in self._row:
                    raise InputError(f"document {pair.doc_id!r} is not in the corpus")
                raw = float(scores[self._row[pair.doc_id]])
                value = (raw / best if best > 0 else 0.0) if self.normalize == "max" else raw
                reason = f"BM25 {raw:.4g}" + (f" = {value:.3f} of the query's best" if self.normalize == "max" else "")
                out.append(_judgment(self, pair, grade(value, self.thresholds), value, reason))
        return out


class ClickCounts(dict[tuple[str, str], tuple[int, int]]):
    """``{(query_id, doc_id): (impressions, clicks)}``; from an impression-level log, also the click model's fit."""

    fit: ClickModelFit | None = None


def read_clicks(path: str | os.PathLike[str], *, model: str = "pbm", min_impressions: int = 10) -> ClickCounts:
    """``{(query_id, doc_id): (impressions, clicks)}`` from a click log, repeated pairs summed.

    Two layouts. Aggregated: CSV/TSV with a header, or JSONL; columns: a query id (``qid``,
    ``query_id``, ``query``...), a doc id (``docid``, ``doc_id``, ``doc``...), ``impressions``
    (or ``views``, ``shown``) and ``clicks`` (or ``click_count``). Impression-level (one row per
    result shown: query id, doc id, ``position``, ``clicked``, optional session and timestamp;
    CSV/TSV, JSONL or Parquet): read with `rankgate.online.read_click_log`, and the click
    ``model`` (``pbm``, ``cascade``, ``sdbn``) is fitted; the result's ``fit`` holds its
    debiased estimates, which `ClickJudge` grades instead of raw CTR.
    """
    from rankgate.online.clickmodels import fit_click_model
    from rankgate.online.logs import is_impression_table, read_click_log

    if is_impression_table(_column_names(path)):
        log = read_click_log(path)
        fit = fit_click_model(log, model, min_impressions=min_impressions)
        counts = ClickCounts(
            zip(fit.pairs(), zip(fit.impressions.tolist(), fit.clicks.tolist(), strict=True), strict=True)
        )
        counts.fit = fit
        return counts
    return ClickCounts(_read_aggregated(path))


def _column_names(path: str | os.PathLike[str]) -> set[str]:
    """The lowercased column names of a log (its header, first JSON object, or Parquet schema); empty if unknown."""
    import json

    source = str(path)
    if source.lower().endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq

        try:
            return {n.lower().strip() for n in pq.read_schema(source).names}
        except OSError as e:
            raise InputError(f"cannot read the Parquet file: {e}", source=source) from None
    from rankgate.io.rows import numbered_lines, peek

    first, _ = peek(numbered_lines(path, errors="replace"))
    if not first:
        return set()
    line = first[0][1].strip()
    if line.startswith("{"):
        try:
            obj = json.loads(line)
        except ValueError:
            return set()
        return {str(k).lower().strip() for k in obj} if isinstance(obj, dict) else set()
    return {c.lower().strip() for c in line.replace("\t", ",").split(",")}


def _read_aggregated(path: str | os.PathLike[str]) -> dict[tuple[str, str], tuple[int, int]]:
    from rankgate.io.rows import json_lines, numbered_lines, peek, table_rows
    from rankgate.io.tables import DOC_COLUMNS, QUERY_COLUMNS

    source = str(path)
    first, lines = peek(numbered_lines(path, errors="replace"))
    if not first:
        raise InputError(
            "file is empty: expected a header and one (query, doc, impressions, clicks) row per line", source=source
        )
    rows: list[tuple[int, dict[str, Any]]] = []
    if first[0][1].lstrip().startswith("{"):
        for number, obj in json_lines(lines, source):
            if not isinstance(obj, dict):
                raise InputError("expected a JSON object", source=source, line=number, text=repr(obj))
            rows.append((number, {str(k).lower().strip(): v for k, v in obj.items()}))
    else:
        _, table = table_rows(lines)
        rows = [(number, {(k or "").lower().strip(): v for k, v in row.items()}) for number, row in table]
    if not rows:
        raise InputError("no click rows", source=source)
    names = set(rows[0][1])
    columns = {}
    for what, options in (
        ("query id", QUERY_COLUMNS),
        ("document id", DOC_COLUMNS),
        ("impressions", ("impressions", "views", "shown", "impression_count")),
        ("clicks", ("clicks", "click_count", "clicked")),
    ):
        found = next((o for o in options if o in names), None)
        if found is None:
            raise InputError(f"no {what} column: expected one of {', '.join(options)}", source=source, line=1)
        columns[what] = found
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for number, row in rows:
        qid, did = str(row.get(columns["query id"]) or "").strip(), str(row.get(columns["document id"]) or "").strip()
        if not qid or not did:
            raise InputError("missing query or document id", source=source, line=number)
        shown = _count(row.get(columns["impressions"]), "impressions", source, number)
        clicked = _count(row.get(columns["clicks"]), "clicks", source, number)
        if clicked > shown:
            raise InputError(f"{clicked} clicks but only {shown} impressions", source=source, line=number)
        before = out.get((qid, did), (0, 0))
        out[(qid, did)] = (before[0] + shown, before[1] + clicked)
    return out


def _count(value: Any, what: str, source: str, line: int) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a whole number >= 0", source=source, line=line, text=repr(value)) from None
    if not math.isfinite(number) or number < 0 or number != int(number):
        raise InputError(f"{what} must be a whole number >= 0", source=source, line=line, text=repr(value))
    return int(number)


class ClickJudge:
    """Grades from click-through rates; pairs shown fewer than ``min_impressions`` times stay unjudged.

    When ``clicks`` came from an impression-level log (`read_clicks` attached a click model's
    ``fit``), the thresholds apply to the debiased score (the model's relevance: attractiveness,
    or attractiveness x satisfaction for sdbn) instead of raw CTR.

    >>> judge = ClickJudge({("q1", "d1"): (100, 40), ("q1", "d2"): (3, 3)}, thresholds=(0.1, 0.3))
    >>> [(j.doc_id, j.label) for j in judge.judge_batch([Pair("q1", "d1"), Pair("q1", "d2")])]
    [('d1', 2)]
    """

    kind = "clicks"
    needs_text = False
    prompt_hash = ""

    def __init__(
        self,
        clicks: Mapping[tuple[str, str], tuple[int, int]],
        *,
        thresholds: Sequence[float] = CLICK_THRESHOLDS,
        min_impressions: int = 10,
        tier: str = TIER_WEAK,
    ) -> None:
        if min_impressions < 1:
            raise ConfigError(
                f"min_impressions must be >= 1. Got {min_impressions!r} instead.", key_path="min_impressions"
            )
        self.clicks = clicks
        self.thresholds = check_thresholds(thresholds)
        self.min_impressions = min_impressions
        self.tier = tier
        self.fit: ClickModelFit | None = getattr(clicks, "fit", None)
        self.model = self.fit.model if self.fit is not None else "ctr"
        self._score: dict[tuple[str, str], tuple[float, float]] = {}
        if self.fit is not None:
            values = zip(self.fit.relevance.tolist(), self.fit.stderr.tolist(), strict=True)
            self._score = dict(zip(self.fit.pairs(), values, strict=True))
        digest = _short_hash(sorted(clicks.items()))
        self.judge_id = "clicks:" + _short_hash(self.thresholds, min_impressions, digest, self.model)

    def describe(self) -> dict[str, object]:
        return {
            "judge": self.kind,
            "judge_id": self.judge_id,
            "thresholds": list(self.thresholds),
            "min_impressions": self.min_impressions,
            "pairs_in_log": len(self.clicks),
            "model": self.model,
            "tier": self.tier,
        } | ({"click_model": self.fit.summary()} if self.fit is not None else {})

    def labelable(self) -> list[tuple[str, str]]:
        """Every logged pair with enough impressions (the pool when no run is given)."""
        return sorted(
            (k for k, (shown, _) in self.clicks.items() if shown >= self.min_impressions),
            key=lambda k: (k[0].encode(), k[1].encode()),
        )

    def judge_batch(self, pairs: Sequence[Pair]) -> list[Judgment]:
        out = []
        for pair in pairs:
            shown, clicked = self.clicks.get((pair.query_id, pair.doc_id), (0, 0))
            if shown < self.min_impressions:
                continue
            ctr = clicked / shown
            if self.fit is None:
                out.append(
                    _judgment(self, pair, grade(ctr, self.thresholds), ctr, f"CTR {ctr:.3f} ({clicked}/{shown})")
                )
                continue
            score, stderr = self._score[(pair.query_id, pair.doc_id)]
            reason = f"{self.model} relevance {score:.3f} +- {stderr:.3f} (raw CTR {ctr:.3f} = {clicked}/{shown})"
            out.append(_judgment(self, pair, grade(score, self.thresholds), score, reason))
        return out


class CrossEncoderJudge:
    """Grades from a cross-encoder loaded from a local path (sentence-transformers).

    Thresholds apply to the model's output as sentence-transformers returns it (a
    probability in [0, 1] for a single-label model, which applies a sigmoid).
    """

    kind = "cross-encoder"
    needs_text = True
    prompt_hash = ""

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        thresholds: Sequence[float] = CROSS_ENCODER_THRESHOLDS,
        batch_size: int = 32,
        device: str | None = None,
        tier: str = TIER_WEAK,
    ) -> None:
        path = Path(model_path)
        if not path.is_dir():
            raise InputError("cross-encoder model folder not found (give a local path)", source=str(model_path))
        self.path = path.resolve()
        self.thresholds = check_thresholds(thresholds)
        self.batch_size = batch_size
        self.device = device
        self.tier = tier
        self.model = self.path.name
        self.judge_id = f"cross-encoder:{self.model}:" + _short_hash(str(self.path), self.thresholds)
        self._model: Any = None

    def describe(self) -> dict[str, object]:
        return {
            "judge": self.kind,
            "judge_id": self.judge_id,
            "model_path": str(self.path),
            "thresholds": list(self.thresholds),
            "tier": self.tier,
        }

    def _load(self) -> Any:
        if self._model is None:
            CrossEncoder = require("sentence_transformers", "bench", purpose="the cross-encoder judge").CrossEncoder
            try:
                self._model = CrossEncoder(str(self.path), local_files_only=True, device=self.device)
            except (OSError, ValueError) as e:
                raise BackendError(f"{self.path}: cannot load the cross-encoder ({e})") from None
        return self._model

    def predict(self, pairs: Sequence[Pair]) -> list[float]:
        """The model's score of each pair."""
        import numpy as np

        model = self._load()
        if not pairs:
            return []
        raw = model.predict([(p.query, p.document) for p in pairs], batch_size=self.batch_size, show_progress_bar=False)
        scores = np.asarray(raw, dtype=np.float64)
        if scores.ndim != 1:
            raise BackendError(
                f"{self.path}: the cross-encoder must output one score per pair (got shape {scores.shape})"
            )
        return [float(s) for s in scores]

    def judge_batch(self, pairs: Sequence[Pair]) -> list[Judgment]:
        return [
            _judgment(self, pair, grade(score, self.thresholds), score, f"cross-encoder {score:.4f}")
            for pair, score in zip(pairs, self.predict(pairs), strict=True)
        ]
