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
