"""`compare_results`: systems' `Results` lined up by query and compared with a baseline.

The comparison works on results only; `compare` is the convenience that evaluates runs first
(one evaluation `Session`, so one set of semantics for all runs). The statistics come from
`paired_summary` (bootstrap CI, paired t-test, optional randomization test, effect size,
wins/ties/losses, minimum detectable effect). p-values are adjusted
across every candidate x measure pair at once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from rankgate.comparison.breakdowns import aligned_matrix, all_pairs, tag_breakdown
from rankgate.comparison.repeats import Repeats, mean_over_repeats
from rankgate.errors import ConfigError, InputError
from rankgate.evaluation.results import Results
from rankgate.measures.registry import Measure
from rankgate.stats.corrections import adjust_p
from rankgate.stats.power import queries_needed
from rankgate.stats.summary import paired_summary

CORRECTIONS: tuple[str, ...] = ("holm", "bonferroni", "bh", "none")


@dataclass
class Comparison:
    """Every candidate compared with the baseline on every measure (``rankgate compare``)."""

    baseline: str
    systems: list[str]
    measures: list[str]
    query_ids: list[str]
    rows: list[dict[str, Any]]
    results: dict[str, Results]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    by_tag: list[dict[str, Any]] = field(default_factory=list)
    pairs: list[dict[str, Any]] = field(default_factory=list)
    repeats: list[Repeats] = field(default_factory=list)  # the spread of systems measured more than once

    def row(self, system: str, measure: str) -> dict[str, Any]:
        for r in self.rows:
            if r["system"] == system and r["measure"] == measure:
                return r
        raise KeyError(f"no comparison of {system!r} on {measure!r}")

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract of ``rankgate compare --format json`` (DESIGN.md)."""
        return {
            "baseline": self.baseline,
            "systems": list(self.systems),
            "measures": list(self.measures),
            "comparisons": [_jsonable(r) for r in self.rows],
            "means": {s: _jsonable(res.aggregate) for s, res in self.results.items()},
            "queries": {
                "compared": len(self.query_ids),
                "policy": self.settings.get("queries"),
                "per_system": {s: dict(res.queries) for s, res in self.results.items()},
            },
            "warnings": [f"{s}: {w}" for s, res in self.results.items() for w in res.warnings],
            "by_tag": [_jsonable(r) for r in self.by_tag],
            "pairs": [_jsonable(r) for r in self.pairs],
            "repeats": [r.to_dict() for r in self.repeats],
            "settings": dict(self.settings),
            "notes": list(self.notes),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)


@dataclass(frozen=True)
class Statistics:
    """How systems are compared: the tests, intervals and corrections of `compare_results`.

    Attributes:
        test: ``"t"`` (paired t-test) or ``"randomization"`` for the reported p-value.
        randomization: also compute the randomization test's p-value when ``test="t"``.
        correction: ``"holm"``, ``"bonferroni"``, ``"bh"`` or ``"none"``, over every
            candidate x measure pair.
        n_resamples: bootstrap resamples for the confidence interval of each delta.
        n_permutations: sign flips of the randomization test (shuffles of the Tukey HSD).
        confidence: coverage of the intervals.
        alpha: significance level (marks, power analysis).
        detect: a delta to detect; each row then says how many queries that needs.
        seed: seed of every random draw; the same seed gives the same numbers.
        all_pairs: also test every pair of systems with a randomized Tukey HSD (queries as
            blocks), which controls the family-wise error rate.
    """

    test: str = "t"
    randomization: bool = False
    correction: str = "holm"
    n_resamples: int = 10_000
    n_permutations: int = 10_000
    confidence: float = 0.95
    alpha: float = 0.05
    detect: float | None = None
    seed: int = 0
    all_pairs: bool = False

    def __post_init__(self) -> None:
        if self.correction not in CORRECTIONS:
            raise ConfigError(
                f"The 'correction' parameter must be one of {', '.join(CORRECTIONS)}. Got {self.correction!r} instead.",
                key_path="correction",
            )

    @classmethod
    def of(cls, stats: Statistics | None = None, **options: Any) -> Statistics:
        """``stats`` (default: the defaults) with ``options`` given by name on top."""
        return replace(stats or cls(), **options) if options else (stats or cls())

    @property
    def randomized(self) -> bool:
        """Whether a randomization test runs (asked for, or the reported test)."""
        return bool(self.randomization or self.test == "randomization")

    def settings(self, family_size: int) -> dict[str, Any]:
        """What a comparison echoes under ``"settings"`` after the evaluation's (a JSON contract)."""
        return {
            "test": self.test,
            "randomization": self.randomized,
            "correction": self.correction,
            "family_size": family_size,
            "n_resamples": self.n_resamples,
            "n_permutations": self.n_permutations if (self.randomized or self.all_pairs) else None,
            "all_pairs": self.all_pairs,
            "confidence": self.confidence,
            "ci_method": "paired bootstrap, percentile",
            "alpha": self.alpha,
            "mde_power": 0.8,
            "seed": self.seed,
            "detect": self.detect,
        }


STATISTICS: tuple[str, ...] = tuple(f.name for f in fields(Statistics))


def compare(
    qrels: Any,
    runs: Sequence[Any],
    measures: str | Measure | Iterable[str | Measure],
    *,
    names: Sequence[str] | None = None,
    baseline: str | None = None,
    tags: dict[str, dict[str, str]] | None = None,
    stats: Statistics | None = None,
    engine: Any = "local",
    qrels_format: str | None = None,
    run_format: str | None = None,
    disjoint: str = "allow",
    **options: Any,
) -> Comparison:
    """Evaluate runs on the same queries (one `Session`: the qrels are read once) and compare
    each with the baseline (the first run, or ``baseline``) with `compare_results`.

    Args:
        qrels: judgments (anything `rankgate.evaluate` takes).
        runs: two or more runs (paths, `Run` objects, dicts, DataFrames), or `Results` already
            evaluated with ``measures`` (say, on a Ray cluster), used as they are. A list or
            tuple of runs is one system measured more than once (seeds, folds): its per-query
            values are the mean over the repeats, and ``Comparison.repeats`` keeps their spread
            (`rankgate.comparison.repeats`).
        measures: measure names or values.
        names: a name per run (default: the run's name or file stem).
        baseline: name of the baseline system (default: the first run).
        tags: ``{qid: {tag: value}}``; adds a breakdown per tag value (`compare_results`).
        stats: the `Statistics` (default: the defaults).
        engine: where the runs are evaluated (``"local"``, ``"ray"`` or an `Engine`).
        qrels_format, run_format: the files' formats (default: from extension and content).
        disjoint: "error" refuses a run that shares no query with the qrels (see `rankgate.evaluate`).
        **options: `Statistics` fields by name (``n_resamples=``, ``correction=``, ...) and the
            evaluation's ``settings=`` or single policies (``queries=``, ``ties=``, ``rel=``,
            ``empty=``, ``duplicates=``, ``judged_only=``), as in `rankgate.evaluate`.
    """
    from rankgate.evaluation.session import Session
    from rankgate.evaluation.settings import Settings

    if len(runs) < 2:
        raise ConfigError("compare needs at least two runs: a baseline and a candidate.", key_path="runs")
    chosen = Statistics.of(stats, **{k: options.pop(k) for k in STATISTICS if k in options})
    settings = Settings.of(options.pop("settings", None), **options)
    if names and len(names) != len(runs):
        raise ConfigError(f"Got {len(names)} names for {len(runs)} runs.", key_path="names")
    session = Session.open(
        qrels, measures, settings=settings, engine=engine, qrels_format=qrels_format, disjoint=disjoint
    )

    def one(r: Any) -> Results:
        return r if isinstance(r, Results) else session.evaluate(r, run_format=run_format)

    evaluated, repeats = [], []
    for i, r in enumerate(runs):
        if not isinstance(r, list | tuple):
            evaluated.append(one(r))
            continue
        each = [one(x) for x in r]
        merged, spread = mean_over_repeats(each, names[i] if names else each[0].run_name or f"run{i + 1}")
        evaluated.append(merged)
        repeats.append(spread)
    result = compare_results(by_name(evaluated, names), baseline=baseline, tags=tags, stats=chosen)
    result.repeats = repeats
    result.notes.extend(r.note() for r in repeats)
    return result


def by_name(evaluated: Sequence[Results], names: Sequence[str] | None = None) -> dict[str, Results]:
    """The results by system name: ``names`` in order, else each run's name (``run1``... when it has none)."""
    if names and len(names) != len(evaluated):
        raise ConfigError(f"Got {len(names)} names for {len(evaluated)} runs.", key_path="names")
    labels = list(names) if names else [r.run_name or f"run{i + 1}" for i, r in enumerate(evaluated)]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"System names must differ (got {', '.join(labels)}); pass --name.", key_path="names")
    return dict(zip(labels, evaluated, strict=True))


def compare_results(
    results: dict[str, Results],
    *,
    baseline: str | None = None,
    tags: dict[str, dict[str, str]] | None = None,
    stats: Statistics | None = None,
    **options: Any,
) -> Comparison:
    """Compare results already evaluated: every candidate with the baseline on every measure.

    Every `Results` must hold the same measures; they are paired on the queries they share.
    p-values are adjusted across every candidate x measure pair at once.

    Args:
        results: the systems' results by name (two or more).
        baseline: name of the baseline system (default: the first).
        tags: ``{qid: {tag: value}}``; adds a breakdown per tag value (``by_tag``), worst
            delta first, with group sizes; groups under 10 queries are marked ``small``.
        stats: the `Statistics`; ``options`` set single fields of it by name.
    """
    if len(results) < 2:
        raise ConfigError("compare needs at least two results: a baseline and a candidate.", key_path="runs")
    chosen = Statistics.of(stats, **options)
    labels = list(results)
    base_name = _check_systems(results, baseline or labels[0])
    common, notes = _shared_queries(results)
    measure_names = results[base_name].names
    base_matrix = aligned_matrix(results[base_name], common, measure_names)
    candidates = [n for n in labels if n != base_name]
    rows: list[dict[str, Any]] = []
    for name in candidates:
        found, said = _rows_against(
            base_matrix, aligned_matrix(results[name], common, measure_names), name, measure_names, chosen
        )
        rows.extend(found)
        notes.extend(said)
    _adjust(rows, chosen)
    pairs = (
        all_pairs(results, labels, common, measure_names, chosen.n_permutations, chosen.seed)
        if chosen.all_pairs
        else []
    )
    by_tag = tag_breakdown(
        tags, common, base_matrix, results, candidates, measure_names, chosen.n_resamples, chosen.seed
    )
    return Comparison(
        baseline=base_name,
        systems=labels,
        measures=measure_names,
        query_ids=common,
        rows=rows,
        results=results,
        settings={**results[base_name].settings, **chosen.settings(len(rows))},
        notes=notes,
        by_tag=by_tag,
        pairs=pairs,
    )


def _check_systems(results: dict[str, Results], base_name: str) -> str:
    """The baseline's name, once it is known that every system holds the baseline's measures."""
    if base_name not in results:
        raise ConfigError(f"No system named {base_name!r} (have: {', '.join(results)}).", key_path="baseline")
    names_of = {name: res.names for name, res in results.items()}
    for name, measures_of in names_of.items():
        if set(measures_of) != set(names_of[base_name]):
            missing = sorted(set(names_of[base_name]) ^ set(measures_of))
            raise InputError(f"{name!r} and {base_name!r} hold different measures ({', '.join(missing)}).")
    return base_name


def _shared_queries(results: dict[str, Results]) -> tuple[list[str], list[str]]:
    """The queries every system was evaluated on (byte order), and a note when they differ."""
    common = _common_queries(results)
    notes = []
    sizes = {name: len(res.query_ids) for name, res in results.items()}
    if len(set(sizes.values())) > 1 or len(common) < max(sizes.values()):
        notes.append(
            "The runs were evaluated on different query sets ("
            + ", ".join(f"{k}: {v}" for k, v in sizes.items())
            + f"); the comparison uses the {len(common)} queries they share."
        )
    if len(common) < 2:
        raise InputError(f"The runs share {len(common)} evaluated queries; a comparison needs at least 2.")
    return common, notes


def _rows_against(
    base: np.ndarray, cand: np.ndarray, name: str, measures: list[str], stats: Statistics
) -> tuple[list[dict[str, Any]], list[str]]:
    """One candidate against the baseline: a row per measure (p-values not yet adjusted), and notes."""
    summary = paired_summary(
        base,
        cand,
        test=stats.test,
        randomization=stats.randomization,
        n_resamples=stats.n_resamples,
        n_permutations=stats.n_permutations,
        confidence=stats.confidence,
        alpha=stats.alpha,
        seed=stats.seed,
        names=measures,
    )
    rows = []
    for j, measure in enumerate(measures):
        row: dict[str, Any] = {
            "system": name,
            "measure": measure,
            "baseline_mean": float(summary.baseline_mean[j]),
            "mean": float(summary.mean[j]),
            "delta": float(summary.delta[j]),
            "relative_delta": float(summary.relative_delta[j]),
            "ci": [float(summary.ci_low[j]), float(summary.ci_high[j])],
            "p_value": float(summary.p_value[j]),
            "p_adjusted": math.nan,
            "test": "paired t-test" if summary.test == "t" else "paired randomization test",
            "t_statistic": float(summary.t_statistic[j]),
            "effect_size": float(summary.effect_size[j]),
            "sd_delta": float(summary.sd_delta[j]),
            "mde": float(summary.mde[j]),
            "wins": int(summary.wins[j]),
            "ties": int(summary.ties[j]),
            "losses": int(summary.losses[j]),
        }
        if summary.randomization_p_value is not None:
            row["randomization_p_value"] = float(summary.randomization_p_value[j])
        if stats.detect is not None:
            row["queries_needed"] = _needed(stats.detect, row["sd_delta"], stats.alpha)
        rows.append(row)
    return rows, [f"{name}: {n}" for n in summary.notes]


def _adjust(rows: list[dict[str, Any]], stats: Statistics) -> None:
    """Adjust every row's p-value over the whole family (candidates x measures) and mark significance."""
    adjusted = adjust_p(np.array([r["p_value"] for r in rows]), method=stats.correction)
    for r, p in zip(rows, adjusted.tolist(), strict=True):
        r["p_adjusted"] = p
        r["significant"] = bool(p < stats.alpha)


def _common_queries(results: dict[str, Results]) -> list[str]:
    sets = [set(res.query_ids) for res in results.values()]
    shared = set.intersection(*sets)
    return sorted(shared, key=lambda q: q.encode())


def _needed(delta: float, sd: float, alpha: float) -> int | None:
    if sd == 0 or delta == 0:
        return None
    return int(queries_needed(delta, sd, alpha=alpha))


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
