"""trec_eval's names that are not plain ``word_k`` cutoffs: number parameters and text lines.

Read by the parser (`rankgate.measures.parse`) without loading the registry's families.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rankgate.measures.registry import ParamValue

IPREC_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
UNJ_CUTOFFS = (5, 10, 20)

# trec_eval names that are not numbers: the `rankgate trec_eval` command prints these lines itself.
TEXT_FIELDS: dict[str, str] = {
    "runid": "the run's name (the run file's sixth column); results carry it as run_name",
    "relstring": "the grades of each query's top 10 docs as a string of characters",
}

_PREFS = "it reads trec_eval's preference qrels, a format rankgate does not read"
_JG = "it reads trec_eval's judgment-group qrels (qrels_jg), a format rankgate does not read"
# trec_eval 10's measures and nicknames rankgate does not compute: refused by name wherever a
# measure name is read (`rankgate eval`, the API) and by `rankgate trec_eval`, never skipped.
TREC_EVAL_NOT_READ: dict[str, str] = {
    "yaap": "rankgate does not compute it",
    **dict.fromkeys(
        [
            "prefs_num_prefs_poss",
            "prefs_num_prefs_ful",
            "prefs_num_prefs_ful_ret",
            "prefs_simp",
            "prefs_pair",
            "prefs_avgjg",
            "prefs_avgjg_Rnonrel",
            "prefs_simp_ret",
            "prefs_pair_ret",
            "prefs_avgjg_ret",
            "prefs_avgjg_Rnonrel_ret",
            "prefs_simp_imp",
            "prefs_pair_imp",
            "prefs_avgjg_imp",
            "all_prefs",
            "prefs",
        ],
        _PREFS,
    ),
    **dict.fromkeys(["map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "qrels_jg"], _JG),
}
_NOT_READ_BY_LOWER = {k.lower(): k for k in TREC_EVAL_NOT_READ}


def not_read_refusal(name: str, *, any_case: bool = True) -> str | None:
    """The refusal of trec_eval's measure (or nickname) ``name[.params]`` if rankgate lacks it, else None.

    >>> not_read_refusal("yaap")
    "trec_eval's 'yaap' is not available in rankgate: rankgate does not compute it (docs/trec_eval.md)."
    >>> not_read_refusal("YAAP", any_case=False) is None
    True
    """
    word = name.partition(".")[0]
    known = _NOT_READ_BY_LOWER.get(word.lower()) if any_case else word if word in TREC_EVAL_NOT_READ else None
    if known is None:
        return None
    return f"trec_eval's {known!r} is not available in rankgate: {TREC_EVAL_NOT_READ[known]} (docs/trec_eval.md)."


@dataclass(frozen=True)
class NumberParams:
    """A trec_eval word whose ``word_x`` / ``word.x,y`` numbers set parameters, not a cutoff.

    ``params`` has one name when each number is one measure (``iprec_at_recall.0.1,0.2`` is two),
    several when the numbers together are one measure (``utility.1,-1,0,0``). ``defaults``: the
    measures the bare word stands for, each as its parameter values.
    """

    family: str
    params: tuple[str, ...]
    defaults: tuple[tuple[ParamValue, ...], ...]


# trec_eval words that take no cutoff list: in trec_eval `map.5` is map (the `.5` is ignored) and
# `ndcg.5` is an error (ndcg takes gain pairs), while rankgate's aliases of these words take a
# cutoff. `word.k` would be read two ways, so the parser refuses it and names both readings.
TREC_EVAL_NO_CUTOFF: dict[str, str] = {
    "map": "map_cut",
    "recip_rank": "",
    "num_ret": "",
    "num_rel_ret": "",
    "num_nonrel_judged_ret": "",
    "ndcg": "ndcg_cut",
    "dcg": "",
}

NUMBER_PARAMS: dict[str, NumberParams] = {
    "iprec_at_recall": NumberParams("IPrec", ("recall",), tuple((x,) for x in IPREC_LEVELS)),
    "rprec_mult": NumberParams("RprecMult", ("mult",), tuple((x,) for x in RPREC_MULTS)),
    "set_f": NumberParams("SetF", ("beta",), ((1.0,),)),
    "utility": NumberParams("Utility", ("a", "b", "c", "d"), ((1.0, -1.0, 0.0, 0.0),)),
}


def levels_text(levels: Iterable[float]) -> str:
    """IPrecAvg's ``levels`` parameter for these recall levels: ``"0.25,0.5"``."""
    return ",".join(repr(float(x)) for x in levels)


def recall_levels(text: str) -> tuple[float, ...]:
    """The recall levels of IPrecAvg's ``levels`` (empty: trec_eval's 11 points 0, 0.1, ..., 1)."""
    return tuple(float(x) for x in text.split(",")) if text else IPREC_LEVELS


def valid_levels(text: str) -> bool:
    """Whether ``text`` is canonical: numbers from 0 to 1 in ascending order, each as Python prints it."""
    if text == "":
        return True
    if not isinstance(text, str):
        return False
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        return False
    return levels_text(values) == text and values == sorted(values) and values[0] >= 0.0 and values[-1] <= 1.0
