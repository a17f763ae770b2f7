"""`run_gate`: evaluate a run, find its baseline, decide every gate, record the result.

This is the library behind ``rankgate gate``; the CLI only parses options and prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rankgate.evaluation.groups import MIN_GROUP, group_rows
from rankgate.evaluation.results import Results
from rankgate.gate import notes as gate_notes
from rankgate.gate.config import GateConfig, load_config
from rankgate.gate.decide import GateOutcome, decide, verdict

if TYPE_CHECKING:
    from rankgate.evaluation.engines import Engine

EXIT_CODES = {"pass": 0, "warn": 0, "fail": 1}


@dataclass
class GateReport:
    """Everything a gate run found; rendered as text, Markdown, JSON or JUnit."""

    verdict: str
    outcomes: list[GateOutcome]
    current: Results
    baseline: Results | None
    baseline_label: str | None  # a baseline run's name, or the stored result's id, name, branch, commit and date
    run_name: str
    qrels_fingerprint: str
    config_source: str
    stored_id: int | None = None
    by_tag: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    baseline_kind: str | None = None  # "run" (evaluated on the spot) or "stored"; None without a baseline

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract of ``rankgate gate --format json`` (DESIGN.md)."""
        return _finite(
            {
                "verdict": self.verdict,
                "gates": [o.to_dict() for o in self.outcomes],
                "run": self.run_name,
                "baseline": self.baseline_label,
                "stored_id": self.stored_id,
                "qrels_fingerprint": self.qrels_fingerprint,
                "config": self.config_source,
                "aggregate": self.current.aggregate,
                "baseline_aggregate": self.baseline.aggregate if self.baseline is not None else None,
                "queries": dict(self.current.queries),
                "by_tag": self.by_tag,
                "per_query": self.current.per_query,
                "baseline_per_query": self.baseline.per_query if self.baseline is not None else None,
                "notes": list(self.notes),
                "warnings": list(self.current.warnings),
                "settings": dict(self.settings),
                "versions": dict(self.current.versions),
            }
        )


def run_gate(
    qrels: Any,
    run: Any,
    config: GateConfig | str | os.PathLike[str] | dict[str, Any],
    *,
    baseline_run: Any = None,
    baseline: str | None = None,
    store: Any = None,
    record: bool = True,
    allow_qrels_change: bool = False,
    allow_settings_change: bool = False,
    tags: dict[str, dict[str, str]] | None = None,
    run_name: str | None = None,
    baseline_name: str | None = None,
    qrels_format: str | None = None,
    run_format: str | None = None,
    engine: Engine | str | None = None,
    disjoint: str = "allow",
    bench: str | os.PathLike[str] | None = None,
    baseline_bench: str | os.PathLike[str] | None = None,
) -> GateReport:
    """Evaluate ``run``, compare it with its baseline, decide every gate, and record the result.

    Args:
        qrels: judgments (a path or anything `rankgate.evaluate` takes).
        run: the candidate run, or a list of runs: repeats of one system (seeds, folds), whose
            per-query mean is gated (`rankgate.comparison.repeats`); the same for ``baseline_run``.
        config: a `GateConfig`, a YAML path, or a mapping.
        baseline_run: a baseline run evaluated on the spot (no store needed).
        baseline: a stored result to compare with: an id, ``latest``, ``latest:BRANCH``,
            ``baseline`` or ``baseline:KEY``; needs ``store``.
        store: a store URL/path or an open store. Without ``baseline``/``baseline_run`` the
            store's baseline for the config's ``baseline_key`` is used when set.
        record: add the evaluated run to ``store``.
        allow_qrels_change: compare with a stored baseline evaluated on other judgments.
        allow_settings_change: compare with a stored baseline evaluated with other settings
            (``judged_only``, ``queries``, ``empty``...); the report's notes then say which.
        tags: ``{qid: {tag: value}}`` for tag filters and the breakdown (else ``tags_file``).
        run_name: the name recorded and shown (default: the run's file stem).
        baseline_name: the baseline run's name (default: its file stem; of repeats, the first's).
        engine: where the runs are evaluated (an `Engine`, or ``"local"`` / ``"ray"``: out of
            core, or a Ray cluster for runs sharded into files); default: in memory. The qrels
            are read once for the run and its baseline run.
        disjoint: "error" refuses a run that shares no query with the qrels (see `rankgate.evaluate`).
        bench: ``rankgate bench --format json`` output or a ``rankgate retrieve`` JSON summary:
            the operational figures (latency, qps, neighbor recall, index size, build time) of
            the candidate, for the gates on them; stored with the result.
        baseline_bench: the baseline's figures (default: the stored baseline's, when stored with them).
    """
    from rankgate.evaluation.session import Session
    from rankgate.gate.operational import check_bench_given, read_operational
    from rankgate.store.fingerprint import qrels_fingerprint

    cfg = config if isinstance(config, GateConfig) else load_config(config)
    check_bench_given(cfg, bench)
    if tags is None and cfg.tags_file is not None:
        from rankgate.io.tags import read_query_tags

        tags = read_query_tags(cfg.tags_file)
    measures = cfg.measures or _recorded_measures()  # only operational gates: the run is still evaluated and recorded
    session = Session.open(
        qrels, measures, settings=cfg.settings, engine=engine or "local", qrels_format=qrels_format, disjoint=disjoint
    )
    q = session.qrels

    notes: list[str] = []
    evaluate_run = _evaluator(session, run_format, notes)
    current = evaluate_run(run, run_name)
    fingerprint = qrels_fingerprint(q)

    opened = _open_store(store)
    try:
        base_results, base_label, stored = _baseline(
            cfg, lambda r, _: evaluate_run(r, baseline_name), opened, baseline_run, baseline
        )
        if stored is not None:
            notes.extend(_check_stored(stored, fingerprint, allow_qrels_change))
            notes.extend(_check_settings(stored, current.settings, allow_settings_change))
        if base_results is not None:
            base_results = _restrict(base_results, measures, base_label or "baseline")
        figures = read_operational(cfg, bench, baseline_bench, stored.figures if stored is not None else None)
        notes.extend(figures.notes)
        _check_baselines_given(cfg, base_results, figures.values, store_key=cfg.baseline_key if opened else None)
        outcomes = decide(cfg, current, base_results, tags=tags, figures=figures.values)
        result = verdict(outcomes)
        stored_id = None
        if opened is not None and record:
            stored_id = opened.add(
                current,
                name=current.run_name or "run",
                qrels=q,
                labels={"source": "gate", "verdict": result, "config": cfg.source},
                figures=figures.record or None,
            )
    finally:
        if opened is not None and opened is not store:
            opened.close()

    notes = [*gate_notes.unchecked(outcomes), *notes, *gate_notes.coverage(base_results, current)]
    return GateReport(
        verdict=result,
        outcomes=outcomes,
        current=current,
        baseline=base_results,
        baseline_label=base_label,
        run_name=current.run_name or "run",
        qrels_fingerprint=fingerprint,
        config_source=cfg.source,
        stored_id=stored_id,
        by_tag=_breakdown(current, base_results, measures, tags, cfg),
        notes=notes,
        settings={**current.settings, "seed": cfg.seed, "n_resamples": cfg.n_resamples},
        baseline_kind=None if base_results is None else "stored" if stored is not None else "run",
    )


def _evaluator(session: Any, run_format: str | None, notes: list[str]) -> Callable[[Any, str | None], Results]:
    """Evaluate a run, or (a list) the repeats of one system: their per-query mean, with a note of their spread."""

    def evaluate_run(run: Any, name: str | None) -> Results:
        if not isinstance(run, list | tuple):
            return session.evaluate(run, name=name, run_format=run_format)
        from rankgate.comparison.repeats import mean_over_repeats

        each = [session.evaluate(r, run_format=run_format) for r in run]
        merged, spread = mean_over_repeats(each, name or each[0].run_name or "run")
        notes.append(spread.note())
        return merged

    return evaluate_run


def _check_baselines_given(
    cfg: GateConfig,
    baseline: Results | None,
    figures: dict[int, tuple[float, float | None, str]],
    *,
    store_key: str | None = None,
) -> None:
    """A rule that needs a baseline (a bar of improvement) and has none is a config error naming it.

    ``store_key``: the baseline key looked up in a store that had none set; the message then says
    how a store gets its first baseline (main's first result, docs/ci.md)."""
    from rankgate.errors import ConfigError

    for i, gate in enumerate(cfg.gates):
        missing = figures[i][1] is None if gate.figure is not None else baseline is None
        if gate.needs_baseline and missing:
            if gate.figure:
                where = "--baseline-bench FILE or a stored baseline recorded with --bench"
            elif store_key is not None:
                where = (
                    f"--baseline-run RUN or --baseline ID, or pin one (the store has no baseline set for key "
                    f"{store_key!r}: `rankgate store baseline set ID|latest:main`); to record main's results, gate "
                    "main with a config without bars (docs/ci.md)"
                )
            else:
                where = "--baseline-run RUN, --baseline ID, or --store with a baseline set"
            raise ConfigError(
                f"{gate.needs_baseline[0]} compares with a baseline and there is none: pass {where}",
                key_path=f"gates[{i}].{gate.needs_baseline[0]}",
                source=cfg.source,
            )


def _recorded_measures() -> list[Any]:
    from rankgate.measures.parse import parse_measure

    return [parse_measure("nDCG@10")]


def _open_store(store: Any) -> Any:
    if store is None or not isinstance(store, str | os.PathLike):
        return store
    from rankgate.store.base import open_store

    return open_store(str(store))


def _baseline(
    cfg: GateConfig,
    evaluate_run: Callable[[Any, str | None], Results],
    store: Any,
    baseline_run: Any,
    baseline: str | None,
) -> tuple[Results | None, str | None, Any]:
    """The baseline's results, how to name it, and the stored result it came from (if any)."""
    from rankgate.errors import ConfigError

    if baseline_run is not None and baseline is not None:
        raise ConfigError("give a baseline run or a stored baseline, not both", key_path="baseline")
    if baseline_run is not None:
        res = evaluate_run(baseline_run, None)
        return res, res.run_name or "baseline", None
    if store is None:
        if baseline is not None:
            raise ConfigError(f"--baseline {baseline} needs a results store (--store URL)", key_path="baseline")
        return None, None, None
    stored = store.resolve(baseline) if baseline is not None else store.baseline(key=cfg.baseline_key)
    if stored is None:
        return None, None, None
    return stored.to_results(), f"stored result {stored.id} ({stored.name}, {_where(stored)})", stored


def _where(stored: Any) -> str:
    bits = []
    if stored.branch:
        bits.append(str(stored.branch))
    if stored.commit:
        bits.append(str(stored.commit)[:8])
    bits.append(stored.created_at.strftime("%Y-%m-%d %H:%M UTC"))
    return " ".join(bits)


def _check_stored(stored: Any, fingerprint: str, allow: bool) -> list[str]:
    from rankgate.store.base import check_baseline_compatible

    check_baseline_compatible(stored, fingerprint, allow=allow)
    if stored.qrels_fingerprint != fingerprint:
        shown = (stored.qrels_fingerprint or "unknown")[:12]
        return [f"the baseline was evaluated on other qrels ({shown}); compared anyway"]
    return []


def _check_settings(stored: Any, settings: dict[str, Any], allow: bool) -> list[str]:
    """Refuse a stored baseline evaluated with other settings (unless ``allow``; then a note says so).

    The six policies change the numbers themselves (``judged_only`` alone can lift a metric from
    27% to 81%), so a delta across them is not a regression test.
    """
    from rankgate.errors import InputError
    from rankgate.evaluation.settings import DEFAULTS, NAMES, OPTIONAL_NAMES

    # the chunk and span policies are recorded only when in use: absent means their default
    defaults = {n: getattr(DEFAULTS, n) for n in OPTIONAL_NAMES}
    theirs = {**defaults, **(stored.settings or {})}
    settings = {**defaults, **settings}
    changed = [
        f"{name}: {theirs[name]!r} in the baseline, {settings.get(name)!r} here"
        if name in theirs
        else f"{name}: not recorded in the baseline, {settings.get(name)!r} here"
        for name in NAMES
        if name not in theirs or theirs[name] != settings.get(name)
    ]
    if not changed:
        return []
    if not allow:
        raise InputError(
            f"baseline {stored.id} was evaluated with other settings ({'; '.join(changed)}), so its numbers "
            "are not comparable; record a new baseline with these settings, or pass --allow-settings-change "
            "to compare anyway"
        )
    return [f"the baseline was evaluated with other settings ({'; '.join(changed)}); compared anyway"]


def _restrict(results: Results, measures: list[Any], label: str) -> Results:
    from rankgate.errors import InputError

    names = [str(m) for m in measures]
    missing = [n for n in names if n not in results.names]
    if missing:
        raise InputError(
            f"the baseline ({label}) holds no values of {', '.join(missing)}; "
            "record a baseline evaluated with every gated metric"
        )
    return results.select(names)


def _breakdown(
    current: Results,
    baseline: Results | None,
    measures: list[Any],
    tags: dict[str, dict[str, str]] | None,
    cfg: GateConfig,
) -> list[dict[str, Any]]:
    """Per tag value: each gated metric's mean, and its delta against the baseline when there is one."""
    if not tags:
        return []
    names = [str(m) for m in measures]
    if baseline is None or len(set(baseline.query_ids) & set(current.query_ids)) < 2:
        return _levels_by_tag(current, names, tags, measures)
    from rankgate.comparison.compare import compare_results

    comparison = compare_results(
        {"baseline": baseline, "current": current.select(names)},
        tags=tags,
        n_resamples=min(cfg.n_resamples, 2_000),  # many small groups: a coarser CI is enough here
        seed=cfg.seed,
    )
    fraction = {str(m): m.spec.bounds == (0.0, 1.0) for m in measures}
    return [{**row, "fraction": fraction[row["measure"]]} for row in comparison.by_tag]


def _levels_by_tag(
    current: Results, names: list[str], tags: dict[str, dict[str, str]], measures: list[Any]
) -> list[dict[str, Any]]:
    """Each tag value's means when there is no baseline: no delta to report, so none is made up."""
    rows = []
    for key, values in group_rows(tags, current.query_ids, untagged=None).items():
        for value, members in values.items():
            for m in measures:
                column = current.values[members, current.names.index(str(m))]
                rows.append(
                    {
                        "tag": key,
                        "value": value,
                        "n": len(members),
                        "small": len(members) < MIN_GROUP,
                        "measure": str(m),
                        "mean": float(column.mean()),
                        "baseline_mean": None,
                        "delta": None,
                        "ci": None,
                        "fraction": m.spec.bounds == (0.0, 1.0),
                    }
                )
    return rows


def _finite(value: Any) -> Any:
    import math

    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
