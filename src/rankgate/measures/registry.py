"""Measure values and the registry that describes every measure family.

A `Measure` is an immutable value (family, parameters, cutoff). ``str(m)`` is its canonical
name, the key used everywhere (JSON, store, gates, comments); `parse_measure` reads it back.
Each family's `MeasureSpec` is the one entry that says everything about it: definition,
parameters, cutoff rule, direction, bounds, aggregation, its vectorized kernel, its reference
implementation and the other tools' names for it (`Alias`), which the parser reads. Adding a
family is one `register` call in `rankgate.measures.definitions`.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from rankgate.errors import MeasureError

if TYPE_CHECKING:
    from rankgate.measures.kernels import Kernel
    from rankgate.measures.reference import Reference

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
    hint: str = ""  # added to a refusal of a value that is not a choice

    def coerce(self, family: str, value: Any) -> ParamValue:
        what = f"The '{self.name}' parameter of {family}"
        if self.kind is str:
            value = str(value)
            if self.choices and value not in self.choices:
                hint = f" ({self.hint})" if self.hint else ""
                raise MeasureError(f"{what} must be one of {', '.join(self.choices)}{hint}. Got {value!r} instead.")
            if self.check is not None and not self.check(value):
                raise MeasureError(f"{what} must be {self.requirement}. Got {value!r} instead.")
            return value
        if isinstance(value, float) and not math.isfinite(value):  # int(inf) would raise OverflowError
            raise MeasureError(f"{what} must be a finite number{self.requirement}. Got {value!r} instead.")
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
class LazyFunction:
    """A function named by its module and name, imported on the first call.

    A spec names its kernel and its reference this way so that reading the registry (to parse
    a name, to list the measures) stays light: the kernels import numpy, whose import would
    about double the time ``rankgate measures`` takes.

    >>> LazyFunction("math", "hypot")(3.0, 4.0)
    5.0
    """

    module: str
    name: str

    @property
    def function(self) -> Callable[..., Any]:
        """The function itself (imports its module)."""
        return _resolve(self.module, self.name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _resolve(self.module, self.name)(*args, **kwargs)


@functools.cache
def _resolve(module: str, name: str) -> Callable[..., Any]:
    function: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return function


AliasSource = Literal["trec_eval", "ranx", "plain"]

# The largest cutoff: deeper than any ranking, small enough for the kernels' machine ints.
MAX_CUTOFF = 2**31 - 1

# trec_eval's cutoffs for a cut family named without one: "ndcg_cut" is nDCG at all nine.
TREC_EVAL_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class Alias:
    """Another spelling of a measure family: a word from trec_eval, ranx or plain English.

    The word is read in any case, alone (``map``) or followed by a number: ``word@k``,
    ``word.k`` and ``word_k`` set the cutoff (``ndcg_cut.10``, ``mrr@10``, ``P_5``), except
    that ``word.digits`` sets the parameter ``dot_param`` to the decimal fraction the digits
    spell when it is given. With ``dot_only`` the word names this family in that form only,
    the bare word being another family's (ranx: ``rbp.95`` is ``WeightedRBP(p=0.95)``, while
    ``RBP`` is binary rank-biased precision).

    A word with ``default_cutoffs`` is a trec_eval cut family: spelled exactly so and without a
    number it is the family at each of those cutoffs (``ndcg_cut`` is nDCG at 5, 10, ..., 1000),
    and ``word.a,b`` / ``word_a,b`` are lists, as in trec_eval.

    Attributes:
        word: the word, e.g. ``ndcg_cut``.
        source: who spells it so, for the docs.
        listed: full names shown in the listing (``rankgate measures``), e.g. ``ndcg_cut.10``;
            each must parse to this family (a test checks it). Empty: accepted, not listed.
        fixed: parameters the word sets, e.g. ``(("gain", "exp"),)`` for ``ndcg_burges``.
        dot_param: the parameter that ``word.digits`` sets, if not the cutoff.
        default_cutoffs: the cutoffs the bare word means (trec_eval's defaults); empty: none.
        dot_only: the word names this family only as ``word.digits`` (needs ``dot_param``).
    """

    word: str
    source: AliasSource
    listed: tuple[str, ...] = ()
    fixed: tuple[tuple[str, ParamValue], ...] = ()
    dot_param: str | None = None
    default_cutoffs: tuple[int, ...] = ()
    dot_only: bool = False


@dataclass(frozen=True)
class ParamAlias:
    """Another tool's spelling of a parameter: ir_measures' ``nDCG(dcg='exp-log2')`` is ``gain=exp``,
    torchmetrics' ``P(adaptive_k=True)`` is ``denominator=min_k_retrieved``.

    Attributes:
        word: the other tool's parameter name, e.g. ``dcg``.
        param: the parameter it sets, e.g. ``gain``.
        values: (their value, ours) pairs; a value not listed is refused.
        hint: added to that refusal (what to do instead).
        source: the tool that spells it so, for the docs.
    """

    word: str
    param: str
    values: tuple[tuple[ParamValue, ParamValue], ...]
    hint: str = ""
    source: str = "ir_measures"


@dataclass(frozen=True, kw_only=True)
class MeasureSpec:
    """One measure family: its definition and conventions, how it is computed, how it is spelled.

    Attributes:
        name: the canonical family name, e.g. ``nDCG``; also read in any case.
        summary: one line for listings.
        definition: the exact definition, with its edge cases.
        kernel: the vectorized kernel (a function of `rankgate.measures.kernels`), all queries of
            a block at once.
        reference: its slow, obviously-right twin (a function of `rankgate.measures.reference`),
            one query at a time; the tests check that the two agree.
        params: the parameters the family takes.
        cutoff: whether ``@k`` is forbidden, optional or required.
        higher_is_better: the direction of improvement.
        bounds: the range of a per-query value.
        aggregate: how per-query values combine into one number (`rankgate.measures.aggregate`).
        trec_eval: trec_eval's name for it, for the docs ("" when trec_eval has none).
        aliases: the other spellings the parser reads.
        param_aliases: other tools' spellings of its parameters.
        examples: canonical names, for listings; each parses back to itself.
        at_param: the parameter that ``@x`` sets instead of a cutoff (ir_measures' ``AT_PARAM``:
            ``IPrec@0.5`` is ``IPrec(recall=0.5)``); None: ``@k`` is the cutoff.
    """

    name: str
    summary: str
    definition: str
    kernel: Kernel
    reference: Reference
    params: tuple[ParamSpec, ...] = ()
    cutoff: Literal["none", "optional", "required"] = "optional"
    higher_is_better: bool = True
    bounds: tuple[float, float] = (0.0, 1.0)
    aggregate: Literal["mean", "sum", "gmean"] = "mean"
    trec_eval: str = ""
    aliases: tuple[Alias, ...] = ()
    param_aliases: tuple[ParamAlias, ...] = ()
    examples: tuple[str, ...] = ()
    at_param: str | None = None

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def listed_aliases(self) -> tuple[str, ...]:
        """The alias names shown in listings, in order."""
        return tuple(name for alias in self.aliases for name in alias.listed)

    @property
    def words(self) -> tuple[str, ...]:
        """Every word the parser reads as this family, lower-cased: its name and its aliases' words
        (not a ``dot_only`` word, which names it only followed by ``.digits``)."""
        return tuple(dict.fromkeys([self.name.lower(), *(a.word.lower() for a in self.aliases if not a.dot_only)]))


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
        if cutoff is not None and cutoff > MAX_CUTOFF:  # the kernels index with machine ints
            raise MeasureError(f"The cutoff of {name} must be at most {MAX_CUTOFF}. Got {cutoff} instead.")
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
    if isinstance(value, str) and not value.isidentifier():  # IPrecAvg(levels='0.25,0.5') reads back
        return repr(value)
    return str(value)


@dataclass(frozen=True)
class Reading:
    """How the parser reads one word: the family, the parameters it fixes, what ``word.digits`` sets.

    ``trec_eval`` is the exact spelling of a trec_eval cut family and its default cutoffs, when
    the word is one (``("ndcg_cut", (5, 10, ...))``).
    """

    family: str
    fixed: tuple[tuple[str, ParamValue], ...] = ()
    dot_param: str | None = None
    trec_eval: tuple[str, tuple[int, ...]] | None = None


_REGISTRY: dict[str, MeasureSpec] = {}
_WORDS: dict[str, Reading] = {}  # lower-cased word -> reading, built from the specs' aliases
_DOT_WORDS: dict[str, Reading] = {}  # lower-cased word -> reading of word.digits, for dot_only aliases


def register(spec: MeasureSpec) -> MeasureSpec:
    """Add a family; its name and aliases become words the parser reads.

    Raises:
        ValueError: the family is registered twice, or one of its words already reads differently.
    """
    if spec.name in _REGISTRY:
        raise ValueError(f"measure {spec.name} registered twice")
    readings = {spec.name.lower(): Reading(spec.name)}
    dotted: dict[str, Reading] = {}
    for alias in spec.aliases:
        if alias.dot_only:
            if alias.dot_param is None or alias.word.lower() in _DOT_WORDS:
                raise ValueError(f"alias {alias.word!r} of {spec.name}: dot_only needs dot_param and a free word")
            dotted[alias.word.lower()] = Reading(spec.name, alias.fixed, alias.dot_param)
            continue
        cut = (alias.word, alias.default_cutoffs) if alias.default_cutoffs else None
        meaning = Reading(spec.name, alias.fixed, alias.dot_param, cut)
        word = alias.word.lower()
        if word in readings and meaning.trec_eval is None:  # ranx's recall is trec_eval's recall
            meaning = dataclasses.replace(meaning, trec_eval=readings[word].trec_eval)
        # A word may be listed twice (trec_eval's and ranx's map) with one meaning; an alias of
        # the family's own name may add what word.digits sets (a dot_param).
        if readings.get(word, meaning) != meaning and word != spec.name.lower():
            raise ValueError(f"alias {alias.word!r} of {spec.name} is given two meanings")
        readings[word] = meaning
    for word, meaning in readings.items():
        if word in _WORDS and _WORDS[word] != meaning:
            raise ValueError(f"alias {word!r} of {spec.name} already reads as {_WORDS[word].family}")
    _REGISTRY[spec.name] = spec
    _WORDS.update(readings)
    _DOT_WORDS.update(dotted)
    return spec


def reading(word: str) -> Reading | None:
    """How the parser reads ``word`` (any case), or None when no family uses it."""
    _ensure_loaded()
    found = _WORDS.get(word.lower())
    if found is None and _load_plugins():
        found = _WORDS.get(word.lower())
    return found


def dot_reading(word: str) -> Reading | None:
    """How the parser reads ``word.digits`` when a ``dot_only`` alias gives that form its own
    family (ranx's ``rbp.95``), else None."""
    _ensure_loaded()
    return _DOT_WORDS.get(word.lower())


def all_words() -> list[str]:
    """Every lower-cased word the parser reads as a family name."""
    _ensure_loaded()
    return list(_WORDS)


def get_spec(name: str) -> MeasureSpec:
    _ensure_loaded()
    if name not in _REGISTRY:
        _load_plugins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise MeasureError(f"Unknown measure {name!r}. Run 'rankgate measures' for the list.") from None


def all_specs(*, plugins: bool = True) -> list[MeasureSpec]:
    """Every registered family; with ``plugins``, after reading the entry points (see `_load_plugins`)."""
    _ensure_loaded()
    if plugins:
        _load_plugins()
    return list(_REGISTRY.values())


def _ensure_loaded() -> None:
    if not _REGISTRY:
        from rankgate.measures import definitions  # noqa: F401  (registers on import)


def _load_plugins() -> bool:
    """Register the ``rankgate.measures`` entry points (once); whether that added a family.

    Called only when a name is not found, or when every family is listed, so built-in names
    never pay for scanning the installed distributions. See `rankgate.measures.plugins`.
    """
    from rankgate.measures.plugins import load_entry_points

    return load_entry_points()
