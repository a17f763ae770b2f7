"""The measures reference page (``docs/measures.md``), written from the registry.

The page is generated, never edited by hand: ``rankgate measures --format docs`` prints it,
and a test fails when the committed file differs from what `markdown` returns.

>>> page = markdown()
>>> page.startswith("# Measures")
True
>>> "| `ndcg_cut.10` | trec_eval | `nDCG@10` |" in page
True
"""

from __future__ import annotations

import math

from rankgate.errors import MeasureError
from rankgate.measures.parse import MAX_NAME_LENGTH, read_name
from rankgate.measures.registry import MAX_CUTOFF, TREC_EVAL_CUTOFFS, Alias, MeasureSpec, ParamSpec, all_specs

COMMAND = "rankgate measures --format docs > docs/measures.md"

SOURCES = {"trec_eval": "trec_eval", "ranx": "ranx", "plain": "plain word"}

CUTOFF_RULES = {
    "required": "Required: `{name}@k`",
    "optional": "Optional: `{name}@k` counts the top k only, `{name}` the whole ranking",
    "none": "None: `{name}` always reads the whole ranking",
}

INTRO = """\
Every measure rankgate computes, with its exact definition, its parameters and the names other
tools give it. `rankgate measures` prints the same registry as a table or as JSON, and
`rankgate measures NAME...` shows how each name is read.

This page is generated from the measure registry (`rankgate.measures`); do not edit it by
hand. To update it, run:

```
{command}
```"""

NAMES = """\
## Names

A measure is written `Family(param=value,...)@k`: `nDCG@10`, `P(rel=2)@5`,
`RBP(p=0.95)@100`. Parameters left at their default are dropped from the name, so one measure
has one name (`P(rel=1)@5` is `P@5`); that name is the key in every output (JSON, CSV, the
store, gates, comments). Names are parsed, never evaluated as code.

The parser also reads other tools' names. A family's name is read in any case (`ndcg@10`,
`MAP`), and so is every alias word below. An alias word followed by a number sets the
cutoff, written `word@k` (ranx), `word.k` or `word_k` (trec_eval, pytrec_eval): `ndcg_cut.10`,
`P_5`, `mrr@10` and `map_cut_100` are `nDCG@10`, `P@5`, `RR@10` and `AP@100`. The one
exception is ranx's RBP: in `rbp.95` the digits are the persistence, and ranx weighs each relevant
document by its grade, so `rbp.95` is `WeightedRBP(p=0.95)` (`rbp.95-l2`: `WeightedRBP(p=0.95,rel=2)`).
The word `rbp` alone is refused with its two readings: trec_eval's `rbp` (`GradedRBP`, gains
scaled to [0, 1]) and binary rank-biased precision (`RBP`); so is ranx's `rbp@95`, whose digits
are the persistence in ranx and a cutoff everywhere else (`RBP@95`).

trec_eval's names mean what they mean in trec_eval, so one name may stand for several
measures. A cut family spelled as trec_eval spells it and given no cutoff is the family at
trec_eval's default cutoffs: `P`, `recall`, `ndcg_cut` and `map_cut` are P, R, nDCG and AP at
{cutoffs}; `success` is Success at 1, 5 and 10. `word.a,b` and `word_a,b` are lists:
`P.5,10` is `P@5` and `P@10` (`-m P.5,10` keeps the list whole). On a word trec_eval does not cut
(`map.5`, `recip_rank.10`; `ndcg.10`, whose trec_eval parameters are gain pairs) the number
would be read two ways, so it is refused with both readings (write `AP@5` or `map_cut.5`). The same word in another
case (`Recall`, `NDCG_CUT`) is not trec_eval's spelling and could also be the uncut measure,
so it is refused with both readings; `R`, `nDCG` and `AP` are the uncut measures. Where one
measure is wanted (a gate's `metric:`, a lookup such as `result["P@10"]`), a name of several
is refused.

ir_measures' spellings are read too: `nDCG(cutoff=20)` is `nDCG@20`, `P(rel=2)@5` is itself,
`IPrec@0.5` is `IPrec(recall=0.5)` (as in ir_measures, `@` sets IPrec's recall level), and a
family's other parameter names are listed under it (`nDCG(dcg='exp-log2')@10` is
`nDCG(gain=exp)@10`). ir_measures' diversity measures (`alpha_nDCG@10`, `ERR_IA@20`, `NRBP`,
`P_IA@10`, `StRecall@10`) read subtopic judgments: the error names the `rankgate diversity` call
that computes each. A parameter rankgate does not have (`judged_only=`) is refused by name.
Every name that cannot be read is a `MeasureError` (exit 2 on the command line): names longer
than {max_length} characters or not printable ASCII, cutoffs above {max_cutoff}, parameter
values that are not finite."""

SEMANTICS = """\
## Conventions shared by every measure

- **Ranking order.** Documents are ordered by score, descending; the rank column of a TREC run
  is ignored. Equal scores are ordered by doc id **descending**, compared byte-wise, like
  trec_eval; `ties="input"` (`--ties input`) keeps the input order among equal scores instead.
- **Relevance.** A judged document with grade >= `rel` (default 1) is relevant for the binary
  measures. Grade 0 is judged non-relevant, and so are grades < 0, except for Judged@k and
  Bpref, which treat grades < 0 as unjudged (trec_eval's "pooled but unjudged").
- **nDCG** uses the grade itself as gain (linear gain, trec_eval's choice) and ignores `rel`;
  `nDCG(gain=exp)` uses 2^g - 1 (Burges, ranx's `ndcg_burges`). Negative grades gain 0. The
  ideal ranking holds every judged document of the query, truncated at the cutoff.
- **AP@k divides by all relevant documents** of the query (R), not by min(R, k), like
  trec_eval's `map_cut_k`.
- **P@k divides by k**, even when the run returned fewer than k documents.
- **Queries.** A query with judgments but missing from the run scores 0 (trec_eval `-c`);
  `queries="intersection"` averages only the queries in both. Counts (NumRel, NumRet,
  NumRelRet) are summed over queries, every other measure is averaged."""


def markdown() -> str:
    """The whole reference page, as Markdown."""
    specs = all_specs()
    parts = [
        "# Measures",
        INTRO.format(command=COMMAND),
        _overview(specs),
        NAMES.format(cutoffs=", ".join(map(str, TREC_EVAL_CUTOFFS)), max_length=MAX_NAME_LENGTH, max_cutoff=MAX_CUTOFF),
        SEMANTICS,
        "## Families",
        *(_family(spec) for spec in specs),
    ]
    return "\n\n".join(parts) + "\n"


def _overview(specs: list[MeasureSpec]) -> str:
    rows = ["| family | what it measures | cutoff | aggregation | examples |", "|---|---|---|---|---|"]
    for s in specs:
        examples = ", ".join(f"`{e}`" for e in s.examples)
        rows.append(f"| [{s.name}](#{s.name.lower()}) | {_cell(s.summary)} | {s.cutoff} | {s.aggregate} | {examples} |")
    return "\n".join(rows)


def _family(spec: MeasureSpec) -> str:
    facts = [
        f"- **Definition.** {spec.definition}.",
        f"- **Cutoff.** {CUTOFF_RULES[spec.cutoff].format(name=spec.name)}.",
        f"- **Direction.** {'Higher' if spec.higher_is_better else 'Lower'} is better.",
        f"- **Bounds.** {_bounds(spec.bounds)}.",
        f"- **Aggregation.** {spec.aggregate.capitalize()} over queries.",
        f"- **trec_eval.** {spec.trec_eval or 'no equivalent'}.",
        f"- **Examples.** {', '.join(f'`{e}`' for e in spec.examples)}.",
    ]
    parts = [f"### {spec.name}", spec.summary + ".", "\n".join(facts)]
    if spec.params:
        parts.append(_params(spec.params))
    if spec.param_aliases:
        spelled = (
            f"`{a.word}={v!r}` ({a.source}) is `{a.param}={ours}`" for a in spec.param_aliases for v, ours in a.values
        )
        parts.append(f"Other evaluators' parameter names: {'; '.join(spelled)}.")
    parts.append(_aliases(spec))
    return "\n\n".join(parts)


def _params(params: tuple[ParamSpec, ...]) -> str:
    rows = ["| parameter | default | meaning | values |", "|---|---|---|---|"]
    for p in params:
        kind = {int: "int", str: "text: "}.get(p.kind, "number")
        values = ", ".join(p.choices) if p.choices else f"{kind}{p.requirement}"
        default = "''" if p.default == "" else p.default
        rows.append(f"| `{p.name}` | `{default}` | {_cell(p.doc)} | {_cell(values)} |")
    return "\n".join(rows)


def _aliases(spec: MeasureSpec) -> str:
    spelled = [(name, SOURCES[a.source], a) for a in spec.aliases for name in a.listed or (a.word,)]
    if spec.name.lower() not in {name for name, _, _ in spelled}:  # else the alias row says it (bpref)
        spelled.insert(0, (spec.name.lower(), "family name, any case", Alias(spec.name.lower(), "plain")))
    rows = ["| alias | from | reads as |", "|---|---|---|"]
    rows.extend(f"| `{name}` | {source} | {_reading(spec, alias, name)} |" for name, source, alias in spelled)
    return "\n".join(rows)


def _reading(spec: MeasureSpec, alias: Alias, name: str) -> str:
    """What ``name`` parses to (trec_eval's ``P`` is several measures); for a bare word that needs
    a cutoff, the family with ``@k``; a word refused as ambiguous (``rbp``) says so."""
    try:
        return "`" + ", ".join(str(m) for m in read_name(name)) + "`"
    except MeasureError:
        if spec.cutoff != "required":
            return "refused in this spelling: read two ways (see Names)"
        fixed = ",".join(f"{k}={v}" for k, v in alias.fixed)
        return f"`{spec.name}({fixed})@k`" if fixed else f"`{spec.name}@k`"


def _bounds(bounds: tuple[float, float]) -> str:
    low, high = bounds
    return f"{low:g} and up (unbounded)" if math.isinf(high) else f"{low:g} to {high:g}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
