"""trec_eval's parameter strings that are not cutoffs: ``name=value`` pairs and recall-level lists.

trec_eval reads ``G.1=3,2=9`` (a gain for each grade), ``rbp.p=0.8``, ``rbp_resid.p=0.5`` and
``11pt_avg.0.25,0.5`` (recall levels). `pair_measure` and `levels_measure` turn them into
canonical measures, for ``rankgate trec_eval -m`` (``strict=False``: a name trec_eval ignores is
ignored) and for rankgate's own measure names (``strict=True``: it is refused, since rankgate
never reads part of a name silently). `read_param_form` is the parser's entry.

>>> str(pair_measure("G", "1=3,2=9"))
'G(g1=3.0,g2=9.0)'
>>> [str(m) for m in read_param_form("11pt_avg_0.25,.5") or ()]
["IPrecAvg(levels='0.25,0.5')"]
"""

from __future__ import annotations

import math
import re

from rankgate.errors import MeasureError
from rankgate.measures.registry import Measure
from rankgate.measures.trec_names import IPREC_LEVELS, levels_text

# trec_eval's words with name=value parameters whose gains rankgate reads, and their families
# (trec_eval's rbp; the word `rbp` alone is refused elsewhere: GradedRBP or binary RBP)
GAIN_FAMILY = {
    "G": "G", "dcg": "GainDCG", "ideal_dcg": "IdealDCG", "ndcg": "GainNDCG", "ndcg_rel": "nDCGRel",
    "Rndcg": "RnDCG", "rbp": "GradedRBP",
}  # fmt: skip
_PAIR_WORDS = {w.lower(): w for w in (*GAIN_FAMILY, "rbp_resid")}
_C_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_LEVELS_FORM = re.compile(r"^11pt_avg[._](?P<given>[0-9.eE+-]+(?:,[0-9.eE+-]+)*)$", re.IGNORECASE)


def c_float(name: str, text: str) -> float:
    """C's ``atof`` on a parameter written as a plain number (``""`` is 0, as in trec_eval)."""
    if text == "":
        return 0.0
    if not _C_NUMBER.fullmatch(text) or not math.isfinite(value := float(text)):
        raise MeasureError(
            f"rankgate's trec_eval reads the parameters of {name!r} as plain finite numbers. Got {text!r}."
        )
    return value


def pairs(name: str, given: str) -> list[tuple[str, str]]:
    """trec_eval's ``name=value,...`` (each item has exactly one '='), as (name, value text) pairs."""
    items = given.split(",")
    if any(item.count("=") != 1 for item in items):
        raise MeasureError(
            f"trec_eval's {name!r} takes name=value parameters (trec_eval: 'malformed pair parameters'). "
            f"Got {name}.{given}."
        )
    return [(key, value) for key, _, value in (item.partition("=") for item in items)]


def pair_measure(name: str, given: str, *, strict: bool = False) -> Measure:
    """``ndcg.1=3,2=9``, ``rbp.p=0.8,2=4``, ``rbp_resid.p=0.5``: trec_eval's name=value parameters.

    As trec_eval: a whole-number name is a grade's gain (grades 0 to 9 here), ``p`` is rbp's
    persistence (the last one given); any other name is ignored, or refused when ``strict``.
    """
    gains: dict[str, float] = {}
    persistence: float | None = None
    for key, value in pairs(name, given):
        if key == "p" and name in ("rbp", "rbp_resid"):
            persistence = c_float(name, value)
        elif re.fullmatch(r"[+-]?\d+", key) and name != "rbp_resid":
            level = int(key)
            if not 0 <= level <= 9 or f"g{level}" in gains:
                raise MeasureError(f"rankgate reads {name} gains for grades 0 to 9, each once. Got {name}.{given}.")
            gains[f"g{level}"] = c_float(name, value)
        elif strict:
            what = "p=" if name == "rbp_resid" else "grade=gain pairs" + (" and p=" if name == "rbp" else "")
            raise MeasureError(
                f"In {name}.{given}, trec_eval would ignore {key!r}; rankgate reads only {what} for {name!r}."
            )
    if persistence is not None and not 0.0 <= persistence <= 1.0:
        raise MeasureError(f"The p of trec_eval's {name!r} must be between 0 and 1. Got {name}.{given}.")
    p = {} if persistence is None else {"p": persistence}
    if name == "rbp_resid":
        return Measure.make("RBPResid", None, **p)
    if name == "rbp":
        _check_rbp_gains(given, gains)
    return Measure.make(GAIN_FAMILY[name], None, **p, **gains)


def _check_rbp_gains(given: str, gains: dict[str, float]) -> None:
    same = [k[1:] for k, g in gains.items() if g == float(k[1:])]
    if same:
        raise MeasureError(
            f"rbp.{given} gives grade {same[0]} its own value as gain; trec_eval then counts that gain when "
            f"rescaling every query's gains, even a query without that grade, which rankgate's GradedRBP "
            f"cannot express. Leave {same[0]}={same[0]} out."
        )


def levels_measure(given: str) -> Measure:
    """``11pt_avg.0.25,0.5``: IPrecAvg at those recall levels (ascending, from 0 to 1)."""
    levels = [c_float("11pt_avg", x) for x in given.split(",")]
    if levels != sorted(levels) or not 0.0 <= levels[0] <= levels[-1] <= 1.0:
        raise MeasureError(
            f"rankgate reads 11pt_avg's recall levels when they are ascending numbers from 0 to 1 "
            f"(trec_eval keeps them in the order written and its average assumes ascending order). "
            f"Got 11pt_avg.{given}."
        )
    if tuple(levels) == IPREC_LEVELS:
        return Measure.make("IPrecAvg")
    return Measure.make("IPrecAvg", levels=levels_text(levels))


def read_param_form(name: str) -> tuple[Measure, ...] | None:
    """The measure of a rankgate measure name in one of these trec_eval forms, or None when it is not one.

    ``G.1=3,2=9`` and ``G_1=3,2=9`` (the name trec_eval prints) are ``G(g1=3.0,g2=9.0)``; trec_eval's
    ``rbp.p=...`` is refused with its two readings, as ``rbp`` alone is: trec_eval's GradedRBP, or
    binary RBP.
    """
    levels = _LEVELS_FORM.match(name)
    if levels:
        return (levels_measure(levels.group("given")),)
    if "=" not in name:
        return None
    lower = name.lower()
    for key in sorted(_PAIR_WORDS, key=len, reverse=True):  # ndcg_rel before ndcg
        if lower.startswith(key) and name[len(key) : len(key) + 1] in (".", "_"):
            word, given = _PAIR_WORDS[key], name[len(key) + 1 :]
            break
    else:
        return None
    measure = pair_measure(word, given, strict=True)
    if word == "rbp":
        binary = Measure.make("RBP", p=measure.get("p")) if not any(k != "p" for k, _ in measure.params) else None
        other = (
            f"binary rank-biased precision, {binary} (write {str(binary)!r})"
            if binary
            else "binary RBP, which has no gains"
        )
        raise MeasureError(
            f"{name!r} can be read two ways: trec_eval's rbp, {measure} (write {str(measure)!r}), or {other}."
        )
    return (measure,)
