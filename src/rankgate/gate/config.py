"""The gate configuration (YAML): which metrics to gate, their floors and allowed drops.

A minimal file::

    gates:
      - name: retrieval_recall_at_5   # metric taken from the name: recall@5 -> R@5
        threshold: 0.85               # absolute floor
        regression_max: 0.03          # largest allowed drop against the baseline (3 points)
        severity: error               # error blocks the merge; warning only reports

Errors name the file and the key path (``gates[1].threshold``) and exit 2. Numbers must be
finite numbers written as numbers (``.nan``, ``'0.8'`` or ``no`` are refused, not read as a
value), a key given twice is refused with its line, and YAML aliases that expand past a bound
are refused (`rankgate.io.yaml`). A value the metric cannot take (``threshold: 85`` on a 0-1
measure, meant as 85%) is refused with a hint (`rankgate.gate.ranges`). A gate that matches no
query fails unless it says otherwise (``on_no_queries: warn`` or ``pass``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from rankgate.errors import ConfigError, MeasureError
from rankgate.evaluation.settings import CHOICES, Settings
from rankgate.evaluation.settings import DEFAULTS as DEFAULT_SETTINGS
from rankgate.evaluation.settings import NAMES as SETTING_NAMES
from rankgate.gate.config_keys import describe, key_path
from rankgate.gate.figures import NAMES as FIGURE_NAMES
from rankgate.gate.figures import Figure, parse_figure, suggest_figure
from rankgate.gate.names import metric_from_name  # re-exported: gates use it by this path
from rankgate.gate.ranges import check_values_in_range
from rankgate.io.yaml import brief, load_yaml
from rankgate.measures.parse import parse_measure
from rankgate.measures.registry import Measure
from rankgate.stats import MAX_RESAMPLES, MIN_RESAMPLES

Mode = Literal["mean", "noninferiority"]
DecideOn = Literal["mean", "ci"]
Rule = Literal["all", "any"]
Outcome = Literal["pass", "warn", "fail"]
Severity = Literal["error", "warning"]


class _Strict(BaseModel):
    # strict: no "0.8" -> 0.8, no False -> 0, no 2.0 -> 2; finite: a NaN floor is a gate that cannot fail.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class GateDefaults(_Strict):
    """Defaults every gate inherits unless it sets its own."""

    mode: Mode = "mean"
    on_inconclusive: Outcome = "warn"
    on_no_queries: Outcome = "fail"
    severity: Severity = "error"
    min_queries: int = Field(default=1, ge=1)
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    decide_on: DecideOn = "mean"


class GateSpec(_Strict):
    """One gate as written in the file; `Gate` is the resolved form."""

    name: str = Field(min_length=1)
    metric: str | None = None
    threshold: float | None = None
    max: float | None = None
    regression_max: float | None = None
    regression_max_relative: float | None = None
    regression_rule: Rule = "all"
    min_improvement: float | None = None
    min_relative_improvement: float | None = None
    decide_on: DecideOn | None = None
    retriever: str | None = Field(default=None, min_length=1)
    index: str | None = Field(default=None, min_length=1)
    baseline_retriever: str | None = Field(default=None, min_length=1)
    baseline_index: str | None = Field(default=None, min_length=1)
    severity: Severity | None = None
    mode: Mode | None = None
    on_inconclusive: Outcome | None = None
    on_no_queries: Outcome | None = None
    min_queries: int | None = Field(default=None, ge=1)
    tags: dict[str, str | list[str]] | None = None

    @field_validator("tags")
    @classmethod
    def _tags_not_empty(cls, value: dict[str, str | list[str]] | None) -> dict[str, str | list[str]] | None:
        if value is not None and not value:
            raise ValueError("give at least one tag, e.g. {topic: billing}, or leave 'tags' out")
        return value

    @field_validator("regression_max", "regression_max_relative", "min_improvement", "min_relative_improvement")
    @classmethod
    def _not_negative(cls, value: float | None, info: ValidationInfo) -> float | None:
        if value is not None and value < 0:
            hint = (
                "; to require an improvement use min_improvement or min_relative_improvement"
                if info.field_name and info.field_name.startswith("regression")
                else "; to allow a drop use regression_max or regression_max_relative"
            )
            raise ValueError(f"must be >= 0{hint}")
        return value

    @model_validator(mode="after")
    def _something_to_check(self) -> GateSpec:
        if all(getattr(self, key) is None for key in CHECK_KEYS):
            raise ValueError("a gate needs at least one of " + ", ".join(f"'{k}'" for k in CHECK_KEYS))
        return self


CHECK_KEYS = (
    "threshold",
    "max",
    "regression_max",
    "regression_max_relative",
    "min_improvement",
    "min_relative_improvement",
)
BASELINE_KEYS = ("min_improvement", "min_relative_improvement")  # a gate with these needs a baseline


def _settings_schema() -> type[BaseModel]:
    """The ``settings:`` block of the file, derived from `Settings` (names, choices, defaults)."""
    fields: dict[str, Any] = {}
    for name in SETTING_NAMES:
        default = getattr(DEFAULT_SETTINGS, name)
        if name in CHOICES:
            fields[name] = (Literal[CHOICES[name]], default)
        elif name == "rel":
            fields[name] = (int, Field(default=default, ge=1))
        elif name == "span_overlap":
            fields[name] = (float, Field(default=default, ge=0.0, le=1.0))
        elif name in ("chunk_sep", "chunk_map", "chunk_offsets"):
            fields[name] = (str | None, Field(default=default, min_length=1))
        else:
            fields[name] = (bool, default)
    return create_model("EvaluationSettings", __base__=_Strict, **fields)


EvaluationSettings = _settings_schema()


class GateFile(_Strict):
    version: Literal[1] = 1
    defaults: GateDefaults = GateDefaults()
    settings: EvaluationSettings = EvaluationSettings()  # type: ignore[valid-type]
    tags_file: str | None = None
    baseline_key: str = Field(default="default", min_length=1)
    seed: int = Field(default=0, ge=0, lt=2**63)
    n_resamples: int = Field(default=10_000, ge=MIN_RESAMPLES, le=MAX_RESAMPLES)  # the one range (stats)
    gates: list[GateSpec] = Field(min_length=1)


class Gate(BaseModel):
    """A gate with its metric parsed and defaults applied."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    metric: Measure | Figure  # a Figure: an operational figure read from --bench
    label: str  # the metric as the user wrote it (or as read from the name): "recall@5"
    threshold: float | None
    regression_max: float | None
    severity: Severity
    max: float | None = None
    regression_max_relative: float | None = None
    regression_rule: Rule = "all"
    min_improvement: float | None = None
    min_relative_improvement: float | None = None
    decide_on: DecideOn = "mean"
    retriever: str | None = None
    index: str | None = None
    baseline_retriever: str | None = None
    baseline_index: str | None = None
    mode: Mode
    on_inconclusive: Outcome
    on_no_queries: Outcome = "fail"
    min_queries: int
    confidence: float
    tags: dict[str, tuple[str, ...]] | None

    @property
    def figure(self) -> Figure | None:
        """The operational figure this gate checks, or None for a measure."""
        return self.metric if isinstance(self.metric, Figure) else None

    @property
    def higher_is_better(self) -> bool:
        m = self.metric
        return m.higher_is_better if isinstance(m, Figure) else m.spec.higher_is_better

    @property
    def needs_baseline(self) -> list[str]:
        """The keys set on this gate that cannot be decided without a baseline."""
        return [k for k in BASELINE_KEYS if getattr(self, k) is not None]


class GateConfig(BaseModel):
    """The whole file, resolved: gates, evaluation settings, where tags come from."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    gates: tuple[Gate, ...]
    settings: Settings
    tags_file: Path | None
    baseline_key: str
    seed: int
    n_resamples: int
    source: str
    settings_given: frozenset[str] = frozenset()  # the settings the file sets (flags may not change them)

    @property
    def measures(self) -> list[Measure]:
        """Every metric the gates need, once each, in gate order."""
        out: list[Measure] = []
        for gate in self.gates:
            if not isinstance(gate.metric, Figure) and gate.metric not in out:
                out.append(gate.metric)
        return out

    @property
    def figure_gates(self) -> list[tuple[int, Gate]]:
        """The gates on operational figures, with their index in ``gates`` (for key paths)."""
        return [(i, g) for i, g in enumerate(self.gates) if isinstance(g.metric, Figure)]


def load_config(source: str | os.PathLike[str] | Mapping[str, Any]) -> GateConfig:
    """Read and check a gate config from a YAML file or a mapping.

    >>> cfg = load_config({"gates": [{"name": "retrieval_mrr", "threshold": 0.6}]})
    >>> cfg.gates[0].label, str(cfg.gates[0].metric)
    ('MRR', 'RR')
    """
    if isinstance(source, Mapping):
        return _resolve(_validate(source, "<config>"), "<config>", base=Path.cwd())
    path = Path(source)
    name = str(source)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", source=name) from None
    except IsADirectoryError:
        raise ConfigError("is a directory, not a YAML file", source=name) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read the file ({e})", source=name) from None
    return _resolve(_validate(_parse_yaml(text, name), name), name, base=path.parent)


def _parse_yaml(text: str, source: str) -> Any:
    data = load_yaml(text, source)
    if not isinstance(data, Mapping):
        raise ConfigError("expected a mapping with a 'gates' list at the top", source=source)
    return data


def _validate(data: Mapping[str, Any], source: str) -> GateFile:
    try:
        spec = GateFile.model_validate(dict(data))
    except ValidationError as e:
        errors = e.errors()  # an unknown key first: `gate:` explains the missing `gates:`
        first = next((x for x in errors if x.get("type") == "extra_forbidden"), errors[0])
        raise ConfigError(describe(first, GateFile), key_path=key_path(first["loc"]) or None, source=source) from None
    first_named: dict[str, int] = {}
    for i, gate in enumerate(spec.gates):
        if gate.name in first_named:
            raise ConfigError(
                f"{brief(gate.name)} is already the name of gates[{first_named[gate.name]}]; gate names must differ",
                key_path=f"gates[{i}].name",
                source=source,
            )
        first_named[gate.name] = i
    return spec


def _resolve(spec: GateFile, source: str, *, base: Path) -> GateConfig:
    gates = []
    for i, g in enumerate(spec.gates):
        metric, label = _metric_of(g, f"gates[{i}]", source)
        d = spec.defaults
        _check_direction(g, metric, f"gates[{i}]", source)
        check_values_in_range(g, metric, f"gates[{i}]", source)
        is_figure = isinstance(metric, Figure)
        gates.append(
            Gate(
                name=g.name,
                metric=metric if is_figure else metric.with_defaults(rel=spec.settings.rel),  # type: ignore[union-attr,attr-defined]
                label=label,
                threshold=g.threshold,
                regression_max=g.regression_max,
                max=g.max,
                regression_max_relative=g.regression_max_relative,
                regression_rule=g.regression_rule,
                min_improvement=g.min_improvement,
                min_relative_improvement=g.min_relative_improvement,
                decide_on="mean" if is_figure else (g.decide_on or d.decide_on),
                retriever=g.retriever,
                index=g.index,
                baseline_retriever=g.baseline_retriever,
                baseline_index=g.baseline_index,
                severity=g.severity or d.severity,
                mode="mean" if is_figure else (g.mode or d.mode),
                on_inconclusive=g.on_inconclusive or d.on_inconclusive,
                on_no_queries=g.on_no_queries or d.on_no_queries,
                min_queries=g.min_queries or d.min_queries,
                confidence=d.confidence,
                tags={k: (v,) if isinstance(v, str) else tuple(v) for k, v in g.tags.items()} if g.tags else None,
            )
        )
    tags_file = None
    if spec.tags_file:
        tags_file = Path(spec.tags_file)
        if not tags_file.is_absolute():
            tags_file = base / tags_file
    return GateConfig(
        gates=tuple(gates),
        settings=Settings(**_files_beside(spec.settings.model_dump(), base)),  # type: ignore[attr-defined]
        tags_file=tags_file,
        baseline_key=spec.baseline_key,
        seed=spec.seed,
        n_resamples=spec.n_resamples,
        source=source,
        settings_given=frozenset(spec.settings.model_fields_set),  # type: ignore[attr-defined]
    )


def _check_direction(g: GateSpec, metric: Measure | Figure, key: str, source: str) -> None:
    """Refuse keys that make no sense for the metric: a ceiling on a higher-is-better one, a floor
    on a lower-is-better one, a CI rule or a tag filter on a figure, a bench row on a measure."""
    higher = metric.higher_is_better if isinstance(metric, Figure) else metric.spec.higher_is_better
    if g.max is not None and higher:
        raise ConfigError(
            f"{metric} is higher-is-better: a ceiling ('max') cannot fail by getting worse; use 'threshold' (a floor)",
            key_path=f"{key}.max",
            source=source,
        )
    if g.threshold is not None and not higher:
        raise ConfigError(
            f"{metric} is lower-is-better: a floor ('threshold') cannot fail by getting worse; use 'max' (a ceiling)",
            key_path=f"{key}.threshold",
            source=source,
        )
    if isinstance(metric, Figure):
        one = "an operational figure is one number per file, with no per-query values"
        for name, bad in (("mode", "noninferiority"), ("decide_on", "ci")):
            if getattr(g, name) == bad:
                raise ConfigError(f"{one}, so no CI: use {name}: mean", key_path=f"{key}.{name}", source=source)
        if g.tags is not None:
            raise ConfigError(f"{one}, so no tag subset", key_path=f"{key}.tags", source=source)
        return
    for name in ("retriever", "index", "baseline_retriever", "baseline_index"):
        if getattr(g, name) is not None:
            raise ConfigError(
                f"'{name}' picks a row of the --bench file, for operational metrics ({', '.join(FIGURE_NAMES)})",
                key_path=f"{key}.{name}",
                source=source,
            )


def _metric_of(gate: GateSpec, key: str, source: str) -> tuple[Measure | Figure, str]:
    if gate.metric is not None:
        try:
            figure = parse_figure(gate.metric)
        except ConfigError as e:
            raise ConfigError(str(e), key_path=f"{key}.metric", source=source) from None
        if figure is not None:
            return figure, gate.metric
        try:
            return parse_measure(gate.metric), gate.metric
        except MeasureError as e:
            close = suggest_figure(gate.metric)
            if close:
                message = (
                    f"unknown metric {brief(gate.metric)}; did you mean {' or '.join(close)}? "
                    f"(operational figures: {', '.join(FIGURE_NAMES)})"
                )
                raise ConfigError(message, key_path=f"{key}.metric", source=source) from None
            raise ConfigError(str(e), key_path=f"{key}.metric", source=source) from None
    found = metric_from_name(gate.name)
    if found is None:
        why = _why_not_a_measure(gate.name.strip().split("_")[-1])
        raise ConfigError(
            f"cannot tell the metric from the gate name {brief(gate.name)}; "
            + (f"{why} Add 'metric:'." if why else "add 'metric:' (e.g. metric: nDCG@10)"),
            key_path=f"{key}.name",
            source=source,
        )
    return found


def _why_not_a_measure(word: str) -> str | None:
    """Why the name's last word, a measure's name, is not one measure (``rbp``: two readings);
    None for any other word."""
    from rankgate.measures.name_hints import refuse_rbp_word

    try:
        refuse_rbp_word(word)
    except MeasureError as e:
        return str(e)
    return None


def _files_beside(settings: dict[str, Any], base: Path) -> dict[str, Any]:
    """The settings' files (chunk map, chunk offsets) found beside the gate file, as ``tags_file`` is."""
    for name in ("chunk_map", "chunk_offsets"):
        if settings.get(name) and not Path(settings[name]).is_absolute():
            settings[name] = str(base / settings[name])
    return settings
