"""`Settings`: the semantic policies of an evaluation, one frozen value validated once.

Six policies say how a run is scored (queries, ties, rel, empty, duplicates, judged_only); the
chunk policies (chunk_sep, chunk_map, chunk_agg) say how a run of chunk ids is read as a ranking
of documents, and the span policies (chunk_offsets, span_overlap) how character-span judgments
become chunk judgments (docs/rag.md).

Every output echoes `Settings.to_dict` under ``"settings"``; the command-line options
(`rankgate.cli.options.semantics_options`) and the gate file's ``settings:`` schema
(`rankgate.gate.config`) are derived from `CHOICES`, `HELP` and the field defaults here.
The tie and duplicate rule names live in `core` (which applies them and sits below this
package); they are read from there, not spelled twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from numbers import Integral, Real
from os import PathLike
from typing import Any

from rankgate.core.policies import CHUNK_AGGREGATIONS, DUPLICATE_POLICIES, TIE_POLICIES
from rankgate.errors import ConfigError

QUERY_POLICIES: tuple[str, ...] = ("qrels", "intersection")
EMPTY_POLICIES: tuple[str, ...] = ("zero", "skip")

# The policies that take one of a few names, and those names (the first is the default).
CHOICES: dict[str, tuple[str, ...]] = {
    "queries": QUERY_POLICIES,
    "ties": TIE_POLICIES,
    "empty": EMPTY_POLICIES,
    "duplicates": DUPLICATE_POLICIES,
    "chunk_agg": CHUNK_AGGREGATIONS,
}

# One line per policy, for `--help` and the docs.
HELP: dict[str, str] = {
    "queries": "Average over every qrels query (absent from the run: 0, trec_eval -c) or only queries in both.",
    "ties": "Break score ties by doc id descending (trec_eval) or keep input order.",
    "rel": "Minimum grade counted as relevant (binary measures; nDCG uses grades).",
    "empty": "Queries without a relevant judgment: keep them (score 0) or leave them out.",
    "duplicates": "Repeated (query, doc) pairs: stop with an error, keep the first, or keep the max.",
    "judged_only": "Drop unjudged docs from each ranking first (condensed lists).",
    "chunk_sep": "The run ranks chunks named DOCID<SEP>ANYTHING (split at the last SEP): score the documents.",
    "chunk_map": "The run ranks chunks: FILE (CSV or JSONL: chunk_id, doc_id) names each chunk's document.",
    "chunk_agg": "A document of several chunks: rank of its best chunk, later ones dropped (first); "
    "its best chunk's score (max); or the sum of its chunks' scores (sum).",
    "chunk_offsets": "QRELS holds character spans (query, doc, start, end, grade); FILE gives chunk offsets "
    "(chunk_id, doc_id, start, end): chunks are judged by the gold spans they overlap.",
    "drop_self": "Leave out every retrieved document whose id equals its query's id (BEIR's ignore_identical_ids).",
    "span_overlap": "Least overlap for a chunk to take a span's grade: a share of the shorter of the two "
    "(0: any shared character; 1: one holds the other).",
}

# Policies that are echoed (and compared by gates) only when they are in use: a result recorded
# before they existed, or without chunks, reads as having them at their defaults.
CHUNK_NAMES: tuple[str, ...] = ("chunk_sep", "chunk_map", "chunk_agg")
SPAN_NAMES: tuple[str, ...] = ("chunk_offsets", "span_overlap")
PEER_NAMES: tuple[str, ...] = ("drop_self",)
OPTIONAL_NAMES: tuple[str, ...] = CHUNK_NAMES + SPAN_NAMES + PEER_NAMES


@dataclass(frozen=True)
class Settings:
    """How an evaluation reads and scores its inputs.

    Attributes:
        queries: "qrels" averages every qrels query (absent from the run: 0, trec_eval -c);
            "intersection" only queries in both (pytrec_eval, BEIR).
        ties: "trec" breaks score ties by doc id descending (byte-wise); "input" keeps input order.
        rel: minimum grade counted as relevant, for measures that do not set ``rel`` themselves.
        empty: "zero" keeps queries with no relevant judgment (they score 0); "skip" drops them.
        duplicates: repeated (query, doc) pairs in raw inputs: "error", keep "first", or "max".
        judged_only: drop unjudged documents from rankings first (condensed lists).
        chunk_sep: the run's doc ids are chunk ids ``docid<SEP>anything``, split at the last SEP;
            an id without SEP (or with nothing before it) is kept as it is and counted unmapped.
        chunk_map: path of a CSV or JSONL file of (chunk_id, doc_id) naming each chunk's document;
            a run id not in it is kept as it is and counted unmapped. At most one of the two.
        chunk_agg: how the chunks of one document become one ranked document. "first" (MaxP):
            the document takes the rank of its best chunk in evaluation order (the settings' tie
            rule applied to the chunks) and that chunk's score; its later chunks are dropped, and
            the documents keep exactly the chunks' order, even among equal scores. "max": the
            same score, but documents with equal scores are ordered by the tie rule on doc ids.
            "sum": the sum of its chunks' scores.
        chunk_offsets: path of a chunk offsets file (chunk_id, doc_id, start, end); when set, the
            qrels are character spans and each chunk is judged by the spans it overlaps.
        span_overlap: least overlap, as a share of the shorter of chunk and span, for a chunk to
            take a span's grade; 0 (default) means any shared character.
        drop_self: leave out of every ranking the document whose id equals the query's id, as
            BEIR's evaluator does (``ignore_identical_ids``); echoed only when set.

    >>> Settings(ties="input").to_dict()["ties"]
    'input'
    >>> Settings(ties="x")
    Traceback (most recent call last):
    ...
    rankgate.errors.ConfigError: ties: The 'ties' parameter must be one of ('trec', 'input'). Got 'x' instead.
    """

    queries: str = "qrels"
    ties: str = "trec"
    rel: int = 1
    empty: str = "zero"
    duplicates: str = "error"
    judged_only: bool = False
    chunk_sep: str | None = None
    chunk_map: str | None = None
    chunk_agg: str = "first"
    chunk_offsets: str | None = None
    span_overlap: float = 0.0
    drop_self: bool = False

    def __post_init__(self) -> None:
        for name, allowed in CHOICES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ConfigError(
                    f"The '{name}' parameter must be one of {allowed}. Got {value!r} instead.", key_path=name
                )
        rel = self.rel
        if isinstance(rel, bool) or not isinstance(rel, Integral) or rel < 1:
            raise ConfigError(f"The 'rel' parameter must be an int >= 1. Got {rel!r} instead.", key_path="rel")
        object.__setattr__(self, "rel", int(rel))
        object.__setattr__(self, "judged_only", bool(self.judged_only))
        object.__setattr__(self, "drop_self", bool(self.drop_self))
        self._check_chunks()

    def _check_chunks(self) -> None:
        for name in ("chunk_sep", "chunk_map", "chunk_offsets"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str | PathLike) or not str(value)):
                raise ConfigError(
                    f"The '{name}' parameter must be a non-empty string or None. Got {value!r} instead.", key_path=name
                )
            if value is not None:
                object.__setattr__(self, name, str(value))
        if self.chunk_sep is not None and self.chunk_map is not None:
            raise ConfigError("Give 'chunk_sep' or 'chunk_map', not both.", key_path="chunk_map")
        if self.chunk_offsets is not None and (self.chunk_sep is not None or self.chunk_map is not None):
            raise ConfigError(
                "Span judgments ('chunk_offsets') judge the chunks themselves: a run scored against them is not "
                "mapped to documents, so leave out 'chunk_sep' and 'chunk_map'.",
                key_path="chunk_offsets",
            )
        overlap = self.span_overlap
        if isinstance(overlap, bool) or not isinstance(overlap, Real) or not 0.0 <= float(overlap) <= 1.0:
            raise ConfigError(
                f"The 'span_overlap' parameter must be a number in [0, 1]. Got {overlap!r} instead.",
                key_path="span_overlap",
            )
        object.__setattr__(self, "span_overlap", float(overlap))

    @property
    def chunked(self) -> bool:
        """Whether the run's ids are chunk ids to map to documents."""
        return self.chunk_sep is not None or self.chunk_map is not None

    @classmethod
    def of(cls, settings: Settings | Mapping[str, Any] | None = None, **policies: Any) -> Settings:
        """``settings`` (a value, a mapping, or the defaults) with ``policies`` given by name on top."""
        base = cls(**settings) if isinstance(settings, Mapping) else (settings or cls())
        unknown = sorted(set(policies) - set(NAMES))
        if unknown:
            raise TypeError(f"unknown evaluation settings: {', '.join(unknown)} (known: {', '.join(NAMES)})")
        return replace(base, **policies) if policies else base

    def options(self) -> dict[str, Any]:
        """The policies by name (keyword arguments of `Settings`)."""
        return asdict(self)

    def to_dict(self) -> dict[str, Any]:
        """What every output echoes under ``"settings"`` (a JSON contract): the six policies, the
        chunk policies when the run is mapped to documents, the span policies when the qrels are spans."""
        shown = self.options()
        if not self.chunked:
            shown = {k: v for k, v in shown.items() if k not in CHUNK_NAMES}
        if self.chunk_offsets is None:
            shown = {k: v for k, v in shown.items() if k not in SPAN_NAMES}
        if not self.drop_self:
            shown.pop("drop_self")
        return {
            **shown,
            "scores": "float64",
            "aggregate": "mean over queries; sum for NumRel, NumRet, NumRelRet",
        }


NAMES: Sequence[str] = tuple(f.name for f in fields(Settings))
DEFAULTS = Settings()
