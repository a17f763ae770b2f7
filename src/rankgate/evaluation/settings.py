"""`Settings`: the six semantic policies of an evaluation, one frozen value validated once.

Every output echoes `Settings.to_dict` under ``"settings"``; the command-line options
(`rankgate.cli.options.semantics_options`) and the gate file's ``settings:`` schema
(`rankgate.gate.config`) are derived from `CHOICES`, `HELP` and the field defaults here.
The tie and duplicate rule names live in `core` (which applies them and sits below this
package); they are read from there, not spelled twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from numbers import Integral
from typing import Any

from rankgate.core.policies import DUPLICATE_POLICIES, TIE_POLICIES
from rankgate.errors import ConfigError

QUERY_POLICIES: tuple[str, ...] = ("qrels", "intersection")
EMPTY_POLICIES: tuple[str, ...] = ("zero", "skip")

# The policies that take one of a few names, and those names (the first is the default).
CHOICES: dict[str, tuple[str, ...]] = {
    "queries": QUERY_POLICIES,
    "ties": TIE_POLICIES,
    "empty": EMPTY_POLICIES,
    "duplicates": DUPLICATE_POLICIES,
}

# One line per policy, for `--help` and the docs.
HELP: dict[str, str] = {
    "queries": "Average over every qrels query (absent from the run: 0, trec_eval -c) or only queries in both.",
    "ties": "Break score ties by doc id descending (trec_eval) or keep input order.",
    "rel": "Minimum grade counted as relevant (binary measures; nDCG uses grades).",
    "empty": "Queries without a relevant judgment: keep them (score 0) or leave them out.",
    "duplicates": "Repeated (query, doc) pairs: stop with an error, keep the first, or keep the max.",
    "judged_only": "Drop unjudged docs from each ranking first (condensed lists).",
}


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

    @classmethod
    def of(cls, settings: Settings | Mapping[str, Any] | None = None, **policies: Any) -> Settings:
        """``settings`` (a value, a mapping, or the defaults) with ``policies`` given by name on top."""
        base = cls(**settings) if isinstance(settings, Mapping) else (settings or cls())
        unknown = sorted(set(policies) - set(NAMES))
        if unknown:
            raise TypeError(f"unknown evaluation settings: {', '.join(unknown)} (known: {', '.join(NAMES)})")
        return replace(base, **policies) if policies else base

    def options(self) -> dict[str, Any]:
        """The six policies by name (keyword arguments of `rankgate.evaluate`)."""
        return asdict(self)

    def to_dict(self) -> dict[str, Any]:
        """What every output echoes under ``"settings"`` (a JSON contract)."""
        return {
            **self.options(),
            "scores": "float64",
            "aggregate": "mean over queries; sum for NumRel, NumRet, NumRelRet",
        }


NAMES: Sequence[str] = tuple(f.name for f in fields(Settings))
DEFAULTS = Settings()
