"""What the parser says about a name it cannot read, or will not read one way silently.

`refuse_rbp_word` refuses the spellings of rank-biased precision that mean different numbers in
different tools: ``rbp`` alone is trec_eval's graded rbp (`GradedRBP`) and, read as a family name,
binary `RBP`; ranx's ``rbp@80`` is its persistence 0.80, while ``@80`` is a cutoff everywhere
else. `suggest` and `other_tool_hint` turn a name that is not a measure into a pointer at the one
that is: digits glued to a word (``ndcg_cut10`` is ``ndcg_cut.10``), close spellings, and the
diversity measures of ir_measures and ndeval, which `rankgate diversity` computes over subtopic
judgments.
"""

from __future__ import annotations

import re

from rankgate.errors import MeasureError
from rankgate.measures.registry import all_specs, all_words, get_spec, reading

_RBP_AT = re.compile(r"^rbp@(?P<digits>[0-9]+)$")


def refuse_rbp_word(name: str) -> None:
    """Refuse ``rbp`` alone and ranx's ``rbp@NN``, naming each reading.

    >>> refuse_rbp_word("RBP@10")  # the canonical family at a cutoff: read as written
    >>> try:
    ...     refuse_rbp_word("rbp@95")
    ... except MeasureError as e:
    ...     print(str(e).split(":")[0])
    'rbp@95' can be read two ways
    """
    if name == "rbp":
        raise MeasureError(
            "'rbp' can be read two ways: trec_eval's rbp, graded with gains scaled to [0, 1] and p = 0.9 "
            "(write 'GradedRBP'), or rank-biased precision with binary relevance and p = 0.8 (write 'RBP'). "
            "ranx's rbp.80 weighs each relevant doc by its grade: 'WeightedRBP' (or 'rbp.80')."
        )
    found = _RBP_AT.match(name)
    if found:
        digits = found.group("digits")
        p = int(digits) / 10 ** len(digits)
        raise MeasureError(
            f"{name!r} can be read two ways: ranx reads it as rbp.{digits}, persistence {p!r} with graded "
            f"weights (write 'rbp.{digits}', i.e. 'WeightedRBP(p={p!r})'), or binary RBP at cutoff {digits} "
            f"(write 'RBP@{digits}')."
        )


def suggest(word: str) -> str:
    """``"Did you mean ...? "`` for an unknown family word, then where the list is.

    >>> suggest("ndcg_cut10")
    "Did you mean 'ndcg_cut.10' (nDCG@10)? Run 'rankgate measures' for the list."
    """
    import difflib

    glued = _glued_digits(word)
    if glued:
        return f"Did you mean {glued}? Run 'rankgate measures' for the list."
    names = sorted({s.name for s in all_specs(plugins=False)} | set(all_words()))
    close = difflib.get_close_matches(word, names, n=3, cutoff=0.6)
    close += [n for n in names if n.lower() == word.lower() and n not in close]
    hint = f"Did you mean {', '.join(repr(c) for c in close)}? " if close else ""
    return hint + "Run 'rankgate measures' for the list."


def _glued_digits(word: str) -> str:
    """``ndcg_cut10`` -> ``'ndcg_cut.10' (nDCG@10)``; ``ndcg10`` -> ``'nDCG@10'``; else ``""``."""
    spelled = glued_spelling(word)
    if spelled is None:
        return ""
    from rankgate.measures.parse import read_name

    canonical = ", ".join(str(m) for m in read_name(spelled))
    return repr(spelled) + ("" if canonical == spelled else f" ({canonical})")


def glued_spelling(word: str) -> str | None:
    """The name ``word`` means when its digits were glued to a family word: ``ndcg_cut10`` is
    trec_eval's ``ndcg_cut.10``, ``ndcg10`` is ``nDCG@10``; None when it is not such a slip."""
    found = re.fullmatch(r"(?P<word>[A-Za-z][A-Za-z_\-]*?)_?(?P<digits>[0-9]+)", word)
    if found is None:
        return None
    stem, digits = found.group("word"), found.group("digits")
    meaning = reading(stem)
    if meaning is None or get_spec(meaning.family).cutoff == "none":
        return None
    from rankgate.measures.parse import read_name

    spelled = f"{stem}.{digits}" if meaning.trec_eval and meaning.trec_eval[0] == stem else f"{meaning.family}@{digits}"
    try:
        read_name(spelled)
    except MeasureError:
        return None
    return spelled


# ir_measures' (and ndeval's) diversity families, and rankgate's spelling of each
_DIVERSITY = {
    "alpha_ndcg": "alpha-nDCG",
    "alpha-ndcg": "alpha-nDCG",
    "err_ia": "ERR-IA",
    "err-ia": "ERR-IA",
    "nrbp": "NRBP",
    "p_ia": "P-IA",
    "p-ia": "P-IA",
    "strecall": "S-recall",
    "s-recall": "S-recall",
    "subtopic_recall": "S-recall",
}
_DIVERSITY_NAME = re.compile(r"^(?P<family>[A-Za-z][A-Za-z_\-]*?)(?P<rest>(?:\(.*\))?(?:@.*)?)$")
_NOT_COMPUTED = ("alpha_dcg", "nerr_ia", "nnrbp", "ap_ia")


def other_tool_hint(name: str) -> str | None:
    """A pointer for a diversity measure named where plain qrels are read, else None.

    >>> other_tool_hint("alpha_nDCG@10").split(": ")[1].split(" (")[0]
    '`rankgate diversity SUBTOPIC_QRELS RUN -m alpha-nDCG@10` computes it'
    """
    found = _DIVERSITY_NAME.match(name)
    if found is None:
        return None
    family = found.group("family").lower()
    if family in _NOT_COMPUTED:
        return (
            f"{name!r} is a diversity measure rankgate does not compute; `rankgate diversity` computes "
            f"alpha-nDCG@k, ERR-IA@k, NRBP, P-IA@k and S-recall@k over subtopic judgments."
        )
    if family not in _DIVERSITY:
        return None
    from rankgate.measures.diversity import parse_diversity

    ours = _DIVERSITY[family]
    try:
        how = f"`rankgate diversity SUBTOPIC_QRELS RUN -m {parse_diversity(ours + found.group('rest'))}` computes it"
    except MeasureError:
        how = f"`rankgate diversity` computes {ours} (as in `-m {ours}@20`)"
    return (
        f"{name!r} is a diversity measure, read over subtopic judgments: {how} "
        f'(ndeval\'s definitions; docs/semantics.md, "Diversity measures").'
    )
