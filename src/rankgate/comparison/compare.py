"""`compare`: evaluate several runs on the same queries and compare each with a baseline.

The per-query values come from `rankgate.evaluate` with one set of semantics for all runs;
the statistics from `paired_summary` (bootstrap CI, paired t-test, optional randomization
test, effect size, wins/ties/losses, minimum detectable effect). p-values are adjusted
across every candidate x measure pair at once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankgate.errors import ConfigError, InputError
from rankgate.evaluation.groups import MIN_GROUP, group_rows, natural_order
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
            "settings": dict(self.settings),
            "notes": list(self.notes),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)


def compare(
    qrels: Any,
    runs: Sequence[Any],
    measures: str | Measure | Iterable[str | Measure],
    *,
    names: Sequence[str] | None = None,
    baseline: str | None = None,
    test: str = "t",
    randomization: bool = False,
    correction: str = "holm",
    n_resamples: int = 10_000,
    n_permutations: int = 10_000,
    confidence: float = 0.95,
    alpha: float = 0.05,
    detect: float | None = None,
    seed: int = 0,
    tags: dict[str, dict[str, str]] | None = None,
    all_pairs: bool = False,
    **evaluate_options: Any,
) -> Comparison:
    """Compare runs on the same queries; the first run (or ``baseline``) is the baseline.

    Args:
        qrels: judgments (anything `rankgate.evaluate` takes).
        runs: two or more runs (paths, `Run` objects, dicts, DataFrames), or `Results` already
            evaluated with ``measures`` (say, on a Ray cluster), used as they are.
        measures: measure names or values.
        names: a name per run (default: the run's name or file stem).
        baseline: name of the baseline system (default: the first run).
        test: ``"t"`` (paired t-test) or ``"randomization"`` for the reported p-value.
        randomization: also compute the randomization test's p-value when ``test="t"``.
        correction: ``"holm"``, ``"bonferroni"``, ``"bh"`` or ``"none"``, over every
            candidate x measure pair.
        n_resamples: bootstrap resamples for the confidence interval of each delta.
        n_permutations: sign flips of the randomization test.
        confidence: coverage of the intervals.
        alpha: significance level (marks, power analysis).
        detect: a delta to detect; each row then says how many queries that needs.
        seed: seed of every random draw; the same seed gives the same numbers.
        tags: ``{qid: {tag: value}}``; adds a breakdown per tag value (``by_tag``), worst
            delta first, with group sizes; groups under 10 queries are marked ``small``.
        all_pairs: also test every pair of systems with a randomized Tukey HSD (queries as
            blocks, ``n_permutations`` shuffles), which controls the family-wise error rate.
        **evaluate_options: ``queries=``, ``ties=``, ``rel=``, ``empty=``, ``duplicates=``,
            ``judged_only=`` as in `rankgate.evaluate`.
    """
    from rankgate.evaluation.evaluate import evaluate
    from rankgate.io.coerce import as_qrels, as_run

    if len(runs) < 2:
        raise ConfigError("compare needs at least two runs: a baseline and a candidate.", key_path="runs")
    _check_correction(correction)
    duplicates = evaluate_options.get("duplicates", "error")
    q = as_qrels(qrels, duplicates=duplicates)
    loaded = [r if isinstance(r, Results) else as_run(r, duplicates=duplicates) for r in runs]
    labels = list(names) if names else [_name(r) or f"run{i + 1}" for i, r in enumerate(loaded)]
    if len(labels) != len(loaded):
        raise ConfigError(f"Got {len(labels)} names for {len(loaded)} runs.", key_path="names")
    if len(set(labels)) != len(labels):
        raise ConfigError(f"System names must differ (got {', '.join(labels)}); pass --name.", key_path="names")
    base_name = baseline or labels[0]
    if base_name not in labels:
        raise ConfigError(f"No system named {base_name!r} (have: {', '.join(labels)}).", key_path="baseline")

    results = {
        name: r if isinstance(r, Results) else evaluate(q, r, measures, **evaluate_options)
        for name, r in zip(labels, loaded, strict=True)
    }
    return compare_results(
        results,
        baseline=base_name,
        test=test,
        randomization=randomization,
        correction=correction,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        confidence=confidence,
        alpha=alpha,
        detect=detect,
        seed=seed,
        tags=tags,
        all_pairs=all_pairs,
    )


def compare_results(
    results: dict[str, Results],
    *,
    baseline: str | None = None,
    test: str = "t",
    randomization: bool = False,
    correction: str = "holm",
    n_resamples: int = 10_000,
    n_permutations: int = 10_000,
    confidence: float = 0.95,
    alpha: float = 0.05,
    detect: float | None = None,
    seed: int = 0,
    tags: dict[str, dict[str, str]] | None = None,
    all_pairs: bool = False,
) -> Comparison:
    """`compare` on results already evaluated (say, a baseline read back from the store).

    Every `Results` must hold the same measures; they are paired on the queries they share.
    """
    if len(results) < 2:
        raise ConfigError("compare needs at least two results: a baseline and a candidate.", key_path="runs")
    _check_correction(correction)
    labels = list(results)
    base_name = baseline or labels[0]
    if base_name not in results:
        raise ConfigError(f"No system named {base_name!r} (have: {', '.join(labels)}).", key_path="baseline")
    names_of = {name: res.names for name, res in results.items()}
    for name, measures_of in names_of.items():
        if set(measures_of) != set(names_of[base_name]):
            missing = sorted(set(names_of[base_name]) ^ set(measures_of))
            raise InputError(f"{name!r} and {base_name!r} hold different measures ({', '.join(missing)}).")
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
    base_res = results[base_name]
    measure_names = base_res.names
    base_matrix = _matrix(base_res, common, measure_names)
    rows: list[dict[str, Any]] = []
    candidates = [n for n in labels if n != base_name]
    for name in candidates:
        summary = paired_summary(
            base_matrix,
            _matrix(results[name], common, measure_names),
            test=test,
            randomization=randomization,
            n_resamples=n_resamples,
            n_permutations=n_permutations,
            confidence=confidence,
            alpha=alpha,
            seed=seed,
            names=measure_names,
        )
        notes.extend(f"{name}: {n}" for n in summary.notes)
        for j, measure in enumerate(measure_names):
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
            if detect is not None:
                row["queries_needed"] = _needed(detect, row["sd_delta"], alpha)
            rows.append(row)
    adjusted = adjust_p(np.array([r["p_value"] for r in rows]), method=correction)
    for r, p in zip(rows, adjusted.tolist(), strict=True):
        r["p_adjusted"] = p
        r["significant"] = bool(p < alpha)

    pairs = _all_pairs(results, labels, common, measure_names, n_permutations, seed) if all_pairs else []
    by_tag = _breakdown(tags, common, base_matrix, results, candidates, measure_names, n_resamples, seed)
    settings = {
        **base_res.settings,
        "test": test,
        "randomization": bool(randomization or test == "randomization"),
        "correction": correction,
        "family_size": len(rows),
        "n_resamples": n_resamples,
        "n_permutations": n_permutations if (randomization or test == "randomization" or all_pairs) else None,
        "all_pairs": all_pairs,
        "confidence": confidence,
        "ci_method": "paired bootstrap, percentile",
        "alpha": alpha,
        "mde_power": 0.8,
        "seed": seed,
        "detect": detect,
    }
    return Comparison(
        baseline=base_name,
        systems=labels,
        measures=measure_names,
        query_ids=common,
        rows=rows,
        results=results,
        settings=settings,
        notes=notes,
        by_tag=by_tag,
        pairs=pairs,
    )


def _all_pairs(
    results: dict[str, Results], labels: list[str], queries: list[str], measures: list[str], n: int, seed: int
) -> list[dict[str, Any]]:
    """Randomized Tukey HSD per measure over all systems (Carterette 2012)."""
    from rankgate.stats.tukey import randomized_tukey_hsd

    matrices = [_matrix(results[name], queries, measures) for name in labels]
    rows: list[dict[str, Any]] = []
    for j, measure in enumerate(measures):
        tukey = randomized_tukey_hsd(np.column_stack([m[:, j] for m in matrices]), n_resamples=n, seed=seed)
        for a, b, delta, p in tukey.pairs():
            rows.append(
                {
                    "measure": measure,
                    "a": labels[a],
                    "b": labels[b],
                    "mean_a": float(tukey.means[a]),
                    "mean_b": float(tukey.means[b]),
                    "delta": delta,
                    "p_value": p,
                    "test": "randomized Tukey HSD",
                }
            )
    return rows


def _breakdown(
    tags: dict[str, dict[str, str]] | None,
    queries: list[str],
    base_matrix: np.ndarray,
    results: dict[str, Results],
    candidates: list[str],
    measures: list[str],
    n_resamples: int,
    seed: int,
) -> list[dict[str, Any]]:
    """Deltas per tag value (unadjusted p-values: a breakdown explores, it does not decide)."""
    if not tags:
        return []
    groups = group_rows(tags, queries, untagged=None)  # a query without a tag is in no group of it
    rows: list[dict[str, Any]] = []
    for name in candidates:
        cand_matrix = _matrix(results[name], queries, measures)
        for key, value, members in ((k, v, m) for k, values in groups.items() for v, m in values.items()):
            idx = np.asarray(members)
            base, cand = base_matrix[idx], cand_matrix[idx]
            for j, measure in enumerate(measures):
                row: dict[str, Any] = {
                    "tag": key,
                    "value": value,
                    "n": len(members),
                    "small": len(members) < MIN_GROUP,
                    "system": name,
                    "measure": measure,
                    "baseline_mean": float(base[:, j].mean()),
                    "mean": float(cand[:, j].mean()),
                    "delta": float(cand[:, j].mean() - base[:, j].mean()),
                    "ci": [math.nan, math.nan],
                    "p_value": math.nan,
                }
                rows.append(row)
            if len(members) >= 2:
                summary = paired_summary(base, cand, n_resamples=n_resamples, seed=seed, names=measures)
                for j, row in enumerate(rows[-len(measures) :]):
                    row["ci"] = [float(summary.ci_low[j]), float(summary.ci_high[j])]
                    row["p_value"] = float(summary.p_value[j])
    rows.sort(key=lambda r: (r["system"], r["measure"], r["small"], r["delta"], r["tag"], natural_order(r["value"])))
    return rows


def _name(run: Any) -> str | None:
    return run.run_name if isinstance(run, Results) else run.name


def _check_correction(correction: str) -> None:
    if correction not in CORRECTIONS:
        raise ConfigError(
            f"The 'correction' parameter must be one of {', '.join(CORRECTIONS)}. Got {correction!r} instead.",
            key_path="correction",
        )


def _common_queries(results: dict[str, Results]) -> list[str]:
    sets = [set(res.query_ids) for res in results.values()]
    shared = set.intersection(*sets)
    return sorted(shared, key=lambda q: q.encode())


def _matrix(res: Results, queries: list[str], measures: list[str] | None = None) -> np.ndarray:
    """Per-query values in ``queries`` order, columns in ``measures`` order (default: as held)."""
    position = {q: i for i, q in enumerate(res.query_ids)}
    rows = res.values[[position[q] for q in queries]]
    if measures is None or measures == res.names:
        return rows
    return rows[:, [res.names.index(m) for m in measures]]


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
