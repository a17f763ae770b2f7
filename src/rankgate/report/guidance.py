"""Targets for retrieval metrics and concrete suggestions when a system falls short of one.

The defaults are common starting points for a RAG retriever: R@10 >= 0.85, P@10 >= 0.5,
nDCG@10 >= 0.8 and MRR (RR) >= 0.7. A YAML file replaces them::

    targets:
      - metric: recall@10        # any name rankgate reads; printed in canonical form (R@10)
        min: 0.85
      - metric: MRR              # RR; a run holding only RR@k is matched to its deepest RR@k
        min: 0.7
        advice: Our FAQ bot needs the answer first; see the re-ranker runbook.

or, shorter, ``targets: {recall@10: 0.85, MRR: 0.7}``.

>>> match_measure("MRR", ["nDCG@10", "RR@10"])
'RR@10'
>>> match_measure("recall@10", ["R@10", "R@100"])
'R@10'
>>> match_measure("P@10", ["P@5"]) is None
True
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankgate.errors import ConfigError, MeasureError
from rankgate.io.yaml import brief, cut

RECALL_FAMILIES = frozenset({"R", "Success", "NumRelRet"})
JUDGED_LOW = 0.8  # below this Judged@k, scores are notably lower bounds
ANN_RECALL_LOW = 0.95


@dataclass(frozen=True)
class Target:
    """A floor for one metric.

    Attributes:
        metric: canonical measure name (``R@10``, ``RR``).
        minimum: the value to reach.
        label: the name as written (``recall@10``, ``MRR``), shown beside the canonical one.
        advice: the user's own suggestions, listed first.
    """

    metric: str
    minimum: float
    label: str
    advice: tuple[str, ...] = ()


DEFAULT_TARGETS: tuple[Target, ...] = (
    Target("R@10", 0.85, "recall@10"),
    Target("P@10", 0.5, "P@10"),
    Target("nDCG@10", 0.8, "nDCG@10"),
    Target("RR", 0.7, "MRR"),
)


@dataclass
class Assessment:
    """How the systems stand against one target, and what to try where they fall short."""

    target: Target
    values: dict[str, tuple[str, float | None] | None]  # system -> (measure matched, value) or None
    suggestions: list[str] = field(default_factory=list)

    def status(self, system: str) -> str:
        """``met``, ``below`` or ``not measured``."""
        found = self.values.get(system)
        if found is None or found[1] is None:
            return "not measured"
        return "met" if found[1] >= self.target.minimum - 1e-12 else "below"

    @property
    def below(self) -> list[str]:
        return [s for s in self.values if self.status(s) == "below"]


def load_targets(source: str | os.PathLike[str] | Mapping[str, Any]) -> list[Target]:
    """Targets from a YAML file or a mapping (see the module docstring).

    Raises:
        ConfigError: naming the key path (``targets[1].min``) of a bad value.
    """
    where: str | None = None
    if isinstance(source, Mapping):
        doc: Any = source
    else:
        where = str(source)
        doc = _read_yaml(where)
    if not isinstance(doc, Mapping) or "targets" not in doc:
        raise ConfigError("expected a mapping with a 'targets' list (metric and min per entry)", source=where)
    extra = sorted(set(doc) - {"targets"}, key=str)
    if extra:
        raise ConfigError(
            f"unknown key {brief(extra[0])}; the file holds only 'targets'", key_path=cut(str(extra[0])), source=where
        )
    raw = doc["targets"]
    if isinstance(raw, Mapping):
        raw = [{"metric": k, "min": v} for k, v in raw.items()]
    if not isinstance(raw, list) or not raw:
        raise ConfigError("expected a non-empty list of {metric, min}", key_path="targets", source=where)
    targets: list[Target] = []
    for i, entry in enumerate(raw):
        targets.append(_target(entry, f"targets[{i}]", where))
    seen = [t.metric for t in targets]
    for i, metric in enumerate(seen):
        if metric in seen[:i]:
            raise ConfigError(f"{metric} has a target already", key_path=f"targets[{i}].metric", source=where)
    return targets


def _read_yaml(path: str) -> Any:
    from rankgate.io.source import read_bytes
    from rankgate.io.yaml import YAMLSyntaxError, load_yaml

    try:
        text = read_bytes(path).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError("not UTF-8 text", source=path) from None
    try:
        return load_yaml(text, path)  # bounded aliases, no duplicate keys
    except YAMLSyntaxError as e:
        line = f"line {e.line}: " if e.line is not None else ""
        raise ConfigError(f"{line}invalid YAML ({e.problem})", source=path) from None


def _target(entry: Any, path: str, where: str | None) -> Target:
    from rankgate.measures.parse import parse_measure

    if not isinstance(entry, Mapping):
        raise ConfigError("expected a mapping with 'metric' and 'min'", key_path=path, source=where)
    unknown = sorted(set(entry) - {"metric", "min", "advice"}, key=str)
    if unknown:
        raise ConfigError(
            f"unknown key {brief(unknown[0])} (allowed: metric, min, advice)",
            key_path=f"{path}.{cut(str(unknown[0]))}",
            source=where,
        )
    label = entry.get("metric")
    if not isinstance(label, str) or not label.strip():
        raise ConfigError("expected a measure name such as recall@10", key_path=f"{path}.metric", source=where)
    try:
        metric = str(parse_measure(label))
    except MeasureError as e:
        raise ConfigError(cut(str(e), 200), key_path=f"{path}.metric", source=where) from None
    minimum = entry.get("min")
    if isinstance(minimum, bool) or not isinstance(minimum, int | float) or not math.isfinite(minimum):
        raise ConfigError(
            f"expected a finite number. Got {brief(minimum)} instead.", key_path=f"{path}.min", source=where
        )
    advice = entry.get("advice", ())
    if isinstance(advice, str):
        advice = (advice,)
    if not isinstance(advice, list | tuple) or not all(isinstance(a, str) for a in advice):
        raise ConfigError("expected a string or a list of strings", key_path=f"{path}.advice", source=where)
    return Target(metric, float(minimum), label.strip(), tuple(advice))


def match_measure(target: str, measures: Iterable[str]) -> str | None:
    """The measure of ``measures`` that answers ``target``, by canonical name.

    An exact match wins; a target without a cutoff (``MRR`` = ``RR``) takes the same
    measure at its deepest cutoff. A target at a cutoff never matches another cutoff.
    """
    from rankgate.measures.parse import parse_measure

    want = parse_measure(target)
    same: list[tuple[int, str]] = []
    for name in measures:
        try:
            have = parse_measure(name)
        except MeasureError:
            continue
        if have == want:
            return name
        if want.cutoff is None and have.name == want.name and have.params == want.params and have.cutoff:
            same.append((have.cutoff, name))
    return max(same)[1] if same else None


def assess(
    targets: Sequence[Target],
    systems: Mapping[str, Mapping[str, float | None]],
    *,
    curves: Mapping[str, Mapping[str, Sequence[tuple[int, float | None]]]] | None = None,
    tag_rows: Sequence[Mapping[str, Any]] = (),
    ann_recall: float | None = None,
) -> list[Assessment]:
    """Each target against each system's aggregates, with suggestions where one falls short.

    Args:
        targets: the floors.
        systems: ``{system: {measure: mean}}``.
        curves: ``{system: {family: [(k, value)]}}``, for "found, but ranked too low" hints.
        tag_rows: per-tag rows (tag, value, n, measure, delta or mean), to name the worst group.
        ann_recall: the lowest neighbor recall of a benchmarked approximate index, if any.
    """
    out: list[Assessment] = []
    for target in targets:
        values: dict[str, tuple[str, float | None] | None] = {}
        for system, aggregate in systems.items():
            name = match_measure(target.metric, aggregate)
            values[system] = None if name is None else (name, aggregate[name])
        a = Assessment(target, values)
        if a.below:
            a.suggestions = _suggest(a, systems, curves or {}, tag_rows, ann_recall)
        out.append(a)
    return out


def _suggest(
    a: Assessment,
    systems: Mapping[str, Mapping[str, float | None]],
    curves: Mapping[str, Mapping[str, Sequence[tuple[int, float | None]]]],
    tag_rows: Sequence[Mapping[str, Any]],
    ann_recall: float | None,
) -> list[str]:
    from rankgate.measures.parse import parse_measure

    t = a.target
    family = parse_measure(t.metric).name
    out = list(t.advice)
    low_judged = []
    for system in a.below:
        judged = _judged(systems[system])
        if judged is not None and judged[1] < JUDGED_LOW:
            low_judged.append(
                f"{system} {judged[0]} = {judged[1]:.2f}" if len(systems) > 1 else f"{judged[0]} is {judged[1]:.2f}"
            )
    if low_judged:
        out.append(
            f"Label coverage first: {', '.join(low_judged)}. Unjudged documents count as not relevant, so "
            f"{t.metric} is a lower bound there. Judge the unjudged top documents (rankgate label --run RUN ... "
            "pools and judges them), then measure again before changing the retriever."
        )
    for system in a.below:
        found = a.values[system]
        if found is None or found[1] is None:  # "below" implies a value; keeps mypy sure of it
            continue
        measure = found[0]
        who = f"{system}: " if len(systems) > 1 else ""
        deeper = _deeper(measure, systems[system], curves.get(system, {}))
        if deeper is not None and deeper[1] is not None and deeper[1] >= t.minimum and family in RECALL_FAMILIES:
            out.append(
                f"{who}{deeper[0]} is {deeper[1]:.3f}: the relevant documents are found, but below the cutoff. "
                f"Retrieve that deep and re-rank the candidates with a cross-encoder, or raise the top-k passed on."
            )
    worst = _worst_group(t.metric, tag_rows)
    if worst:
        out.append(worst)
    if family in RECALL_FAMILIES:
        if ann_recall is not None and ann_recall < ANN_RECALL_LOW:
            out.append(
                f"The approximate index finds only {ann_recall:.1%} of the exact nearest neighbors: raise HNSW "
                "efSearch or IVF nprobe (rankgate bench shows the trade-off) before changing the model."
            )
        out.extend(RECALL_ADVICE)
    else:
        out.extend(FAMILY_ADVICE.get(family, ()))
        out.extend(RANKING_ADVICE)
    return list(dict.fromkeys(out))


def _judged(aggregate: Mapping[str, float | None]) -> tuple[str, float] | None:
    for name, value in aggregate.items():
        if name.startswith("Judged@") and value is not None:
            return name, value
    return None


def _deeper(
    measure: str, aggregate: Mapping[str, float | None], curves: Mapping[str, Sequence[tuple[int, float | None]]]
) -> tuple[str, float | None] | None:
    """The same measure at the deepest cutoff known beyond ``measure``'s."""
    from rankgate.measures.parse import parse_measure

    m = parse_measure(measure)
    if m.cutoff is None:
        return None
    family = str(m).rsplit("@", 1)[0]
    points = dict(curves.get(family, ()))
    for name, value in aggregate.items():
        if name.rsplit("@", 1)[0] == family and "@" in name and name.rsplit("@", 1)[1].isdigit():
            points.setdefault(int(name.rsplit("@", 1)[1]), value)
    deeper = [k for k in points if k > m.cutoff]
    if not deeper:
        return None
    k = max(deeper)
    return f"{family}@{k}", points[k]


def _worst_group(metric: str, rows: Sequence[Mapping[str, Any]]) -> str | None:
    mine = [r for r in rows if r.get("measure") == metric and not r.get("small")]
    with_delta = [r for r in mine if r.get("baseline_mean") is not None and r.get("delta") is not None]
    if with_delta:
        r = min(with_delta, key=lambda r: r["delta"])
        if r["delta"] < 0:
            return (
                f"The largest drop is in {r['tag']}={r['value']} ({r.get('n', '?')} queries, {metric} "
                f"{r['delta']:+.3f}): read those queries' results first."
            )
        return None
    with_mean = [r for r in mine if r.get("mean") is not None]
    if len(with_mean) > 1:
        r = min(with_mean, key=lambda r: r["mean"])
        return (
            f"The weakest group is {r['tag']}={r['value']} ({r.get('n', '?')} queries, {metric} {r['mean']:.3f}): "
            "start with those queries."
        )
    return None


RECALL_ADVICE = (
    "Retrieve more candidates: raise the first-stage depth (e.g. top 100) and cut to the final k after re-ranking.",
    "Hybrid retrieval: fuse BM25 and dense rankings (reciprocal rank fusion, k=60); BM25 catches exact terms "
    "(product names, ids, error codes) that embeddings blur.",
    "Revisit chunking: long chunks dilute the embedding, short ones lose context; try 200-400 tokens with 10-20% "
    "overlap, and prepend the document title to each chunk.",
    "Expand or rewrite queries (synonyms, multi-query, HyDE) when they are short or use other words than the "
    "documents.",
)
RANKING_ADVICE = (
    "Re-rank the top 50-100 candidates with a cross-encoder (e.g. an MS MARCO MiniLM cross-encoder).",
    "Remove near-duplicate chunks (the same passage from several files or overlapping windows) so they do not "
    "crowd the top k.",
    "Fine-tune the embedding model on in-domain (query, relevant passage) pairs, with hard negatives mined from "
    "the current top k.",
    "Check label coverage with Judged@10: unjudged documents count as not relevant, so missing labels lower the score.",
)
FAMILY_ADVICE: dict[str, tuple[str, ...]] = {
    "P": (
        "P@k is capped by the number of relevant documents per query (a query with 3 relevant documents scores at "
        "most 0.3 on P@10); compare with R@k before tuning for precision.",
    ),
    "RR": ("The first relevant result is often not at rank 1: boost exact title or keyword matches, and re-rank.",),
    "nDCG": ("Highly relevant documents rank below partly relevant ones: a re-ranker trained on graded labels helps.",),
}
