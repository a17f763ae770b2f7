"""Measure values and the registry that describes every measure family.

A `Measure` is an immutable value (family, parameters, cutoff). ``str(m)`` is its canonical
name, the key used everywhere (JSON, store, gates, comments); `parse_measure` reads it back.
Each family's `MeasureSpec` carries what the CLI listing, the docs and the generic tests
need: definition, parameters, cutoff rule, direction, bounds and aggregation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from rankgate.errors import MeasureError

ParamValue = int | float | str


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of a measure family, e.g. ``rel`` or ``gain``."""

    name: str
    kind: type
    default: ParamValue
    doc: str
    choices: tuple[str, ...] | None = None
    check: Callable[[Any], bool] | None = None
    requirement: str = ""

    def coerce(self, family: str, value: Any) -> ParamValue:
        what = f"The '{self.name}' parameter of {family}"
        if self.kind is str:
            value = str(value)
            if self.choices and value not in self.choices:
                raise MeasureError(f"{what} must be one of {', '.join(self.choices)}. Got {value!r} instead.")
            return value
        if self.kind is int:
            if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
                raise MeasureError(f"{what} must be an int{self.requirement}. Got {value!r} instead.")
            value = int(value)
        else:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise MeasureError(f"{what} must be a number{self.requirement}. Got {value!r} instead.")
            value = float(value)
        if self.check is not None and not self.check(value):
            noun = "an int" if self.kind is int else "a number"
            raise MeasureError(f"{what} must be {noun}{self.requirement}. Got {value!r} instead.")
        return value


REL = ParamSpec(
    "rel",
    int,
    1,
    "minimum grade counted as relevant",
    check=lambda v: v >= 1,
    requirement=" >= 1",
)


@dataclass(frozen=True)
class MeasureSpec:
    """What a measure family is: its definition, parameters and conventions."""

    name: str
    summary: str
    definition: str
    params: tuple[ParamSpec, ...] = ()
    cutoff: Literal["none", "optional", "required"] = "optional"
    higher_is_better: bool = True
    bounds: tuple[float, float] = (0.0, 1.0)
    aggregate: Literal["mean", "sum"] = "mean"
    empty_value: float = 0.0
    trec_eval: str = ""
    aliases: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


@dataclass(frozen=True, order=True)
class Measure:
    """A measure with its parameters, e.g. ``nDCG(gain=exp)@10``.

    Parameters equal to their default are dropped, so equal measures have equal names.

    >>> str(Measure.make("nDCG", cutoff=10, gain="exp"))
    'nDCG(gain=exp)@10'
    >>> str(Measure.make("P", cutoff=5, rel=1))
    'P@5'
    """

    name: str
    params: tuple[tuple[str, ParamValue], ...] = field(default=())
    cutoff: int | None = None

    @classmethod
    def make(cls, name: str, cutoff: int | None = None, **params: Any) -> Measure:
        spec = get_spec(name)
        if spec.cutoff == "none" and cutoff is not None:
            raise MeasureError(f"{name} takes no cutoff. Got @{cutoff} instead.")
        if spec.cutoff == "required" and cutoff is None:
            raise MeasureError(f"{name} needs a cutoff, e.g. {name}@10.")
        if cutoff is not None and (isinstance(cutoff, bool) or not isinstance(cutoff, int) or cutoff < 1):
            raise MeasureError(f"The cutoff of {name} must be an int >= 1. Got {cutoff!r} instead.")
        known = {p.name: p for p in spec.params}
        kept: list[tuple[str, ParamValue]] = []
        for key in sorted(params):
            if key not in known:
                allowed = ", ".join(known) or "none"
                raise MeasureError(f"{name} has no parameter {key!r} (parameters: {allowed}).")
            value = known[key].coerce(name, params[key])
            if value != known[key].default:
                kept.append((key, value))
        return cls(name=name, params=tuple(kept), cutoff=cutoff)

    @property
    def spec(self) -> MeasureSpec:
        return get_spec(self.name)

    def get(self, key: str) -> Any:
        """Value of parameter ``key`` (its default when not set)."""
        for k, v in self.params:
            if k == key:
                return v
        return self.spec.param(key).default

    def with_defaults(self, **defaults: Any) -> Measure:
        """This measure with ``defaults`` applied to parameters it leaves at their default."""
        names = {p.name for p in self.spec.params}
        explicit = dict(self.params)
        merged = {k: v for k, v in defaults.items() if k in names and k not in explicit}
        merged.update(explicit)
        return Measure.make(self.name, self.cutoff, **merged)

    def __str__(self) -> str:
        text = self.name
        if self.params:
            text += "(" + ",".join(f"{k}={_fmt(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"


def _fmt(value: ParamValue) -> str:
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    return str(value)


_REGISTRY: dict[str, MeasureSpec] = {}


def register(spec: MeasureSpec) -> MeasureSpec:
    if spec.name in _REGISTRY:
        raise ValueError(f"measure {spec.name} registered twice")
    _REGISTRY[spec.name] = spec
    return spec


def get_spec(name: str) -> MeasureSpec:
    _ensure_loaded()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise MeasureError(f"Unknown measure {name!r}. Run 'rankgate measures' for the list.") from None


def all_specs() -> list[MeasureSpec]:
    _ensure_loaded()
    return list(_REGISTRY.values())


def _ensure_loaded() -> None:
    if not _REGISTRY:
        from rankgate.measures import definitions  # noqa: F401  (registers on import)
