"""trec_eval's ``-m`` requests: its measure table, its nicknames, its parameter rules.

A request ``name[.params]`` names a trec_eval measure or a nickname (``official``, ``all_trec``,
``set``). `expand_requests` turns the requests into the measures trec_eval prints, in its table
order, each with the name trec_eval prints (``P_5``, ``iprec_at_recall_0.10``, ``utility_2,-1,0,0``)
and the canonical rankgate measure that computes it.

>>> [p.name for p in expand_requests(["P.10,5", "map"])]
['map', 'P_5', 'P_10']
>>> [str(p.measure) for p in expand_requests(["utility.2,-1,0,1", "set_F.0.5"], docs_in_collection=100)]
['Utility(a=2.0,d=1.0,num_docs=100)', 'SetF(beta=0.5)']
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from rankgate.errors import MeasureError
from rankgate.measures.name_hints import glued_spelling
from rankgate.measures.parse import parse_measure
from rankgate.measures.registry import MAX_CUTOFF, Measure
from rankgate.measures.trec_names import NUMBER_PARAMS, not_read_refusal
from rankgate.measures.trec_params import GAIN_FAMILY, c_float, levels_measure, pair_measure

Kind = Literal["runid", "num_q", "long", "float", "long_cuts", "double_cuts", "float_params", "pair_params", "string"]

_DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class TrecMeasure:
    """One of trec_eval's measures (a row of its measure table).

    Attributes:
        name: trec_eval's name, e.g. ``P``.
        kind: how its parameters read and its values print: ``long`` values print as integers,
            ``long_cuts`` / ``double_cuts`` are one value per cutoff (``P_5``,
            ``iprec_at_recall_0.10``), ``float_params`` / ``pair_params`` are one value whose
            printed name carries the parameters when given (``set_F_0.5``), ``string`` is
            ``relstring``'s text per query.
        defaults: the cutoffs used when the request gives none.
        per_query: whether ``-q`` prints it for each query (``gm_map`` is a summary only).
    """

    name: str
    kind: Kind
    defaults: tuple[float, ...] = ()
    per_query: bool = True


def _m(name: str, kind: Kind, defaults: tuple[float, ...] = (), per_query: bool = True) -> TrecMeasure:
    return TrecMeasure(name, kind, defaults, per_query)


_TENTHS = tuple(i / 10 for i in range(11))
_RPREC_MULT = tuple(i / 10 for i in range(2, 21, 2))

# trec_eval 10's measure table, in its order (the order in which it computes and prints);
# yaap and the prefs and qrels_jg measures (TREC_EVAL_NOT_READ, refused by name) are left out.
TREC_MEASURES: tuple[TrecMeasure, ...] = (
    _m("runid", "runid", per_query=False),
    _m("num_q", "num_q", per_query=False),
    _m("num_ret", "long"),
    _m("num_rel", "long"),
    _m("num_rel_ret", "long"),
    _m("map", "float"),
    _m("gm_map", "float", per_query=False),
    _m("Rprec", "float"),
    _m("bpref", "float"),
    _m("recip_rank", "float"),
    _m("iprec_at_recall", "double_cuts", _TENTHS),
    _m("P", "long_cuts", _DEFAULT_CUTOFFS),
    _m("relstring", "string", (10,)),
    _m("recall", "long_cuts", _DEFAULT_CUTOFFS),
    _m("infAP", "float"),
    _m("gm_bpref", "float", per_query=False),
    _m("Rprec_mult", "double_cuts", _RPREC_MULT),
    _m("utility", "float_params"),
    _m("11pt_avg", "float_params"),
    _m("binG", "float"),
    _m("G", "pair_params"),
    _m("dcg", "pair_params"),
    _m("ideal_dcg", "pair_params"),
    _m("ndcg", "pair_params"),
    _m("ndcg_rel", "pair_params"),
    _m("Rndcg", "pair_params"),
    _m("ndcg_cut", "long_cuts", _DEFAULT_CUTOFFS),
    _m("map_cut", "long_cuts", _DEFAULT_CUTOFFS),
    _m("relative_P", "long_cuts", _DEFAULT_CUTOFFS),
    _m("success", "long_cuts", (1, 5, 10)),
    _m("set_P", "float"),
    _m("set_relative_P", "float"),
    _m("set_recall", "float"),
    _m("set_map", "float"),
    _m("set_F", "float_params"),
    _m("num_nonrel_judged_ret", "long"),
    _m("rbp", "pair_params"),
    _m("rbp_resid", "pair_params"),
    _m("unj", "long_cuts", (5, 10, 20)),
)
_BY_NAME = {m.name: m for m in TREC_MEASURES}


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# trec_eval 10's nicknames (measures.c); a nickname marks each of its measures.
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": _words("runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P"),
    "all_trec": _words(
        "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P relstring "
        "recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg ndcg relative_P Rprec_mult success map_cut "
        "ndcg_cut ndcg_rel Rndcg binG G set_P set_recall set_relative_P set_map set_F num_nonrel_judged_ret"
    ),
    "set": _words("runid num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P set_map set_F"),
}

# Said when rbp is asked for by name (-m rbp, -m rbp.p=0.5), not for the rbp line of all_trec: a
# note that every all_trec call repeats is noise in CI logs (docs/semantics.md says it once).
RBP_NOTE = (
    "note: trec_eval 10.0-rc2's rbp reads uninitialised variables; rankgate prints its Makefile build's "
    "value (optimised builds differ; docs/semantics.md)."
)


def rbp_named(requests: Iterable[str]) -> bool:
    """Whether a ``-m`` request names trec_eval's rbp itself (``rbp``, ``rbp.p=0.5``), not a nickname."""
    return any(str(r).partition(".")[0] == "rbp" for r in requests)


def bare_measure(name: str) -> Measure:
    """The canonical measure of trec_eval's measure ``name`` requested without parameters.

    A printed name is read by rankgate's parser (``P_5`` is P@5), except ``rbp``: the word alone is
    refused there (two readings), and trec_eval's rbp is `GradedRBP`.

    Raises:
        MeasureError: rankgate has no measure for it.
    """
    return Measure.make("GradedRBP") if name == "rbp" else parse_measure(name)


@dataclass(frozen=True)
class Printed:
    """One printed measure: trec_eval's name for it and the canonical measure that computes it.

    ``measure`` is None for ``runid``, ``num_q`` and ``relstring`` (``length`` characters), which
    `rankgate.compat.trec_eval` prints from the files.
    """

    name: str
    source: TrecMeasure
    measure: Measure | None = None
    length: int = 0

    @property
    def integer(self) -> bool:
        return self.source.kind in ("long", "num_q")


def expand_requests(requests: Iterable[str], *, docs_in_collection: int = 0) -> list[Printed]:
    """trec_eval's ``-m`` requests as printed measures, in trec_eval's order.

    A request is ``name`` or ``name.params``; a nickname marks all its measures. As in trec_eval,
    the first request of a measure that gives parameters sets them (``-m P.5 -m P.10`` is P_5
    alone) and long cutoffs are sorted. ``docs_in_collection`` is ``-N`` (utility's ``d`` term).

    Raises:
        MeasureError: the name is not one of trec_eval's, its parameters are malformed, or
            rankgate has no measure for it (the message names it).
    """
    marked: set[str] = set()
    params: dict[str, str] = {}
    for request in requests:
        name, dot, given = str(request).partition(".")
        if dot and not given:
            raise MeasureError(f"trec_eval request {request!r} has a '.' but no parameters after it.")
        if dot:
            params.setdefault(name, given)
        if (refusal := not_read_refusal(name, any_case=False)) is not None:
            raise MeasureError(refusal)
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in _BY_NAME:
            marked.add(name)
        else:
            hint = trec_eval_spelling(str(request)) or _suggest(name, [*_BY_NAME, *NICKNAMES])
            raise MeasureError(
                f"{name!r} is not a trec_eval measure or nickname (request {request!r}). "
                f"{hint}trec_eval's nicknames are {', '.join(NICKNAMES)}."
            )
    shared = sorted(marked & {"dcg", "ideal_dcg", "ndcg"})
    if len(shared) > 1 and set(shared) & set(params):
        raise MeasureError(
            f"trec_eval 10.0-rc2's dcg, ideal_dcg and ndcg share one parameter table (m_ndcg.c): with "
            f"parameters for one of them and {' and '.join(shared)} requested it crashes (a double free). "
            f"Request them in separate runs."
        )
    out: list[Printed] = []
    for m in TREC_MEASURES:
        if m.name not in marked:
            continue
        try:
            out.extend(_printed(m, params.get(m.name), docs_in_collection))
        except _Unavailable as e:
            raise MeasureError(
                f"{e} {_suggest(m.name, _available())}`rankgate eval` reads rankgate's own names (`rankgate measures`)."
            ) from None
    return out


def _printed(m: TrecMeasure, given: str | None, docs: int) -> list[Printed]:
    if m.kind in ("runid", "num_q", "long", "float"):  # trec_eval ignores their parameters (see ignored_notes)
        return [Printed(m.name, m, None if m.kind in ("runid", "num_q") else _canonical(m.name, m.name))]
    if m.kind == "string":
        length = int(m.defaults[0]) if given is None else _relstring_length(given)
        return [Printed(m.name if given is None else f"{m.name}_{given}", m, length=length)]
    if m.kind == "long_cuts":
        cuts = _long_cutoffs(m.name, given) if given is not None else [int(c) for c in m.defaults]
        return [Printed(f"{m.name}_{k}", m, _canonical(f"{m.name}_{k}", m.name)) for k in cuts]
    if m.kind == "double_cuts":
        values = _double_cutoffs(m.name, given) if given is not None else list(m.defaults)
        # trec_eval's name buffer holds 9 characters after the measure's name ("%s_%3.2f")
        return [Printed(f"{m.name}_{v:3.2f}"[: len(m.name) + 9], m, _at_level(m.name, v)) for v in values]
    if given is None:
        return [Printed(m.name, m, _canonical(m.name, m.name))]
    return [Printed(f"{m.name}_{given}", m, _with_params(m.name, given, docs))]


def _with_params(name: str, given: str, docs: int) -> Measure:
    """The canonical measure of ``name.given`` for trec_eval's parameter forms rankgate reads."""
    if name in GAIN_FAMILY or name == "rbp_resid":
        return pair_measure(name, given)
    if name == "11pt_avg":
        return levels_measure(given)
    numbers = [c_float(name, x) for x in given.split(",")]
    if name == "utility":
        if len(numbers) != 4:
            raise MeasureError(
                f"trec_eval's utility takes 4 coefficients a,b,c,d (trec_eval: 'improper number of "
                f"coefficients'). Got utility.{given}."
            )
        a, b, c, d = numbers
        extra = {"num_docs": docs} if d != 0 else {}
        return Measure.make("Utility", a=a, b=b, c=c, d=d, **extra)
    if numbers[0] < 0:  # set_F: trec_eval reads the first number only
        raise MeasureError(f"The beta of trec_eval's set_F must be >= 0. Got set_F.{given}.")
    return Measure.make("SetF", beta=numbers[0])


def _relstring_length(given: str) -> int:
    """relstring's length: C's ``(long)`` of the first number (negative: 0)."""
    value = c_float("relstring", given.split(",")[0])
    return int(max(min(value, 2.0**62), 0.0))


def ignored_notes(requests: Iterable[str]) -> list[str]:
    """What trec_eval ignores in these requests, for the user (trec_eval itself says nothing).

    The parameters of a nickname or of a measure that takes none (``map.5`` is map), and those of
    a later request of a measure whose parameters an earlier one set (``-m P.5 -m P.10`` is P_5).
    """
    notes: list[str] = []
    seen: set[str] = set()
    for request in requests:
        name, dot, given = str(request).partition(".")
        if not dot:
            continue
        kind = _BY_NAME[name].kind if name in _BY_NAME else "nickname"
        if kind in ("nickname", "runid", "num_q", "long", "float"):
            notes.append(f"note: trec_eval ignores the parameters of {name!r}: -m {request} is -m {name}.")
        elif kind == "long_cuts" and "=" in given and name not in seen:
            notes.append(
                f"note: {name} takes cutoffs, not gains: trec_eval reads {request} as the cutoffs before each '='."
            )
        elif name in seen:
            notes.append(
                f"note: trec_eval takes {name}'s parameters from its first -m with parameters; -m {request} is ignored."
            )
        seen.add(name)
    return notes


def _leading_int(name: str, text: str) -> int:
    """C's ``atol`` on a cutoff: the leading whole number (``23.4`` is 23)."""
    found = re.match(r"\s*[+-]?\d+", text)
    if not found:
        raise MeasureError(f"The cutoffs of trec_eval's {name!r} must be whole numbers. Got {text!r}.")
    return int(found.group())


def _long_cutoffs(name: str, given: str) -> list[int]:
    cuts = sorted(_leading_int(name, c) for c in given.split(","))
    if cuts[0] <= 0:
        raise MeasureError(f"The cutoffs of trec_eval's {name!r} must be > 0. Got {given!r}.")
    if len(set(cuts)) != len(cuts):
        raise MeasureError(f"The cutoffs of trec_eval's {name!r} repeat a value. Got {given!r}.")
    if cuts[-1] > MAX_CUTOFF:  # rankgate's kernels index with machine ints (as `rankgate eval` says)
        raise MeasureError(f"The cutoffs of trec_eval's {name!r} must be at most {MAX_CUTOFF}. Got {given!r}.")
    return cuts


def _double_cutoffs(name: str, given: str) -> list[float]:
    values = sorted(c_float(name, c) for c in given.split(","))
    if len(set(values)) != len(values):
        raise MeasureError(f"The cutoffs of trec_eval's {name!r} repeat a value. Got {given!r}.")
    return values


# trec_eval sorts gains with (int)(g1 - g2) as comparison, so gains this far apart overflow it
_GAIN_LIMIT = 1e9


def check_gain_order(measure: Measure, max_grade: int) -> None:
    """Refuse gains that trec_eval's sort would put out of order (G, ndcg, ndcg_rel, Rndcg).

    trec_eval sorts the gain levels with ``(int)(g1 - g2)`` as comparison: two different gains
    less than 1 apart compare equal, and its ideal ranking then depends on the order the gains
    were written in and on the C library's sort (it can even leave a positive gain out).
    """
    if measure.name not in ("G", "GainNDCG", "nDCGRel", "RnDCG", "IdealDCG"):
        return
    table = [float(measure.get(f"g{level}")) for level in range(10)] + [float(g) for g in range(10, max_grade + 1)]
    given = [float(v) for k, v in measure.params if k.startswith("g")]
    values = sorted(set(table[: max_grade + 1] + given))
    if any(abs(v) > _GAIN_LIMIT for v in values):
        raise MeasureError(f"rankgate's trec_eval reads gains up to {_GAIN_LIMIT:g} in size (request {measure}).")
    close = [(a, b) for a, b in itertools.pairwise(values) if b - a < 1]
    if close:
        a, b = close[0]
        raise MeasureError(
            f"trec_eval compares gains by their whole-number difference, so gains {a:g} and {b:g} "
            f"(less than 1 apart) make its ideal ranking depend on the order written and on the C library "
            f"(request {measure}); rankgate refuses rather than guess. Use gains at least 1 apart."
        )


def _at_level(name: str, value: float) -> Measure:
    """``iprec_at_recall`` / ``Rprec_mult`` at ``value`` itself (its printed name rounds it)."""
    spec = NUMBER_PARAMS[name.lower()]
    try:
        return Measure.make(spec.family, None, **{spec.params[0]: value})
    except MeasureError as e:
        raise MeasureError(f"trec_eval's {name}.{value:g} cannot be read: {e}") from None


def _canonical(printed: str, trec_name: str) -> Measure:
    try:
        return bare_measure(printed)
    except MeasureError:
        raise _Unavailable(
            f"trec_eval's {trec_name!r} (printed as {printed!r}) is not available in rankgate's trec_eval."
        ) from None


class _Unavailable(MeasureError):
    """A trec_eval measure rankgate has no canonical measure for (`expand_requests` adds suggestions)."""


def trec_eval_spelling(name: str) -> str:
    """How trec_eval spells the rankgate measure ``name`` (``nDCG@10``, ``P_5``, ``ndcg@10``), as a hint.

    ``""`` when ``name`` is not a rankgate measure either. The spelling is checked by reading it
    back as a ``-m`` request, so the hint names the very measure ``name`` is.

    >>> trec_eval_spelling("ndcg@10")
    "nDCG@10 is trec_eval's 'ndcg_cut.10' (-m ndcg_cut.10). "
    >>> trec_eval_spelling("P(rel=2)@5")
    "P(rel=2)@5 is trec_eval's 'P.5' with -l 2 (-l 2 -m P.5). "
    >>> trec_eval_spelling("RR@10")
    "trec_eval has no RR@10; `rankgate eval -m 'RR@10'` computes it. "
    """
    try:
        wanted = parse_measure(name)
    except MeasureError:
        glued = glued_spelling(name)  # ndcg10 is nDCG@10
        if glued is None:
            return ""
        wanted = parse_measure(glued)
    level = int(wanted.get("rel")) if any(p.name == "rel" for p in wanted.spec.params) else 1
    plain = Measure.make(wanted.name, wanted.cutoff, **{k: v for k, v in wanted.params if k != "rel"})
    for m in TREC_MEASURES:
        levels = NUMBER_PARAMS.get(m.name.lower()) if m.kind == "double_cuts" else None
        values = [float(plain.get(levels.params[0]))] if levels and levels.family == plain.name else []
        cuts = [plain.cutoff] if plain.cutoff is not None and m.kind == "long_cuts" else []
        for request in [m.name, *(f"{m.name}.{c}" for c in cuts), *(f"{m.name}.{v!r}" for v in values)]:
            try:
                printed = expand_requests([request])
            except MeasureError:
                continue
            if plain in [p.measure for p in printed] and (len(printed) == 1 or request != m.name):
                flag = f"-l {level} " if level != 1 else ""
                with_level = f" with -l {level}" if level != 1 else ""
                return f"{wanted} is trec_eval's {request!r}{with_level} ({flag}-m {request}). "
    return f"trec_eval has no {wanted}; `rankgate eval -m '{wanted}'` computes it. "


def _suggest(word: str, names: Iterable[str]) -> str:
    """``"Did you mean 'a', 'b'? "`` over trec_eval's names close to ``word``, or ``""``."""
    import difflib

    close = difflib.get_close_matches(word, [n for n in names if n != word], n=3, cutoff=0.6)
    return f"Did you mean {', '.join(repr(c) for c in close)}? " if close else ""


def _available() -> list[str]:
    """trec_eval's measure names that rankgate's trec_eval reads (with their default parameters)."""
    out = []
    for m in TREC_MEASURES:
        try:
            _printed(m, None, 0)
        except MeasureError:
            continue
        out.append(m.name)
    return out
