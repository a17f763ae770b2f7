"""``rankgate label agreement|merge``: agreement among raters, and merging their judgments into one gold set."""

from __future__ import annotations

import json
from typing import Any

import click

from rankgate.cli.options import emit, format_option, measure_option, output_file_option, split_measures


@click.command("agreement", short_help="Kappa, Fleiss, Krippendorff, confusion matrix, ranking correlation.")
@click.argument("files", nargs=-1, required=True, metavar="REFERENCE CANDIDATE [RATER ...]")
@click.option("--run", "runs", multiple=True, type=click.Path(dir_okay=False), help="Systems to rank (two or more).")
@measure_option(("nDCG@10", "P@10"))
@click.option("--rel", type=click.IntRange(min=1), default=1, show_default=True, help="Binary threshold.")
@click.option("--scale", type=click.Choice(["graded", "binary", "observed"]), default="observed", show_default=True)
@click.option("--all-pairs", is_flag=True, help="Rank systems with each qrels whole, not only the shared pairs.")
@click.option(
    "--unjudged-as",
    type=int,
    help="A pair one file lacks and another judges counts as this label (0 for relevant-only qrels, e.g. BEIR).",
)
@click.option("--bootstrap", type=click.IntRange(min=0), default=1000, show_default=True, help="Resamples for CIs.")
@click.option("--seed", type=int, default=0, show_default=True)
@format_option(["table", "json"])
@output_file_option
def agreement_command(
    files: tuple[str, ...],
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    rel: int,
    scale: str,
    all_pairs: bool,
    unjudged_as: int | None,
    bootstrap: int,
    seed: int,
    fmt: str,
    output: str | None,
) -> None:
    """Agreement among two or more sets of judgments of the same pairs (raters).

    Every pair of raters: Cohen's kappa (unweighted, linear, quadratic). All raters: Fleiss'
    kappa (pairs every rater judged) and Krippendorff's alpha, nominal and ordinal (pairs two
    or more judged), each with a bootstrap CI over pairs. With exactly two files, also the
    confusion matrix and binary kappa of CANDIDATE against REFERENCE, and with two or more
    --run Kendall's tau-b of the systems' scores under the two.

    \b
    Examples:
      rankgate label agreement human.txt llm.txt
      rankgate label agreement human.txt llm.jsonl --run bm25.txt --run dense.txt --run splade.txt -m nDCG@10
      rankgate label agreement alice.txt bob.txt carol.txt --format json
      rankgate label agreement beir-qrels.tsv llm.txt --unjudged-as 0
    """
    from rankgate.io.readers import read_qrels, read_run
    from rankgate.label.agreement import label_agreement, ranking_correlation
    from rankgate.label.prompts import SCALES
    from rankgate.label.raters import fill_unjudged, multi_rater_agreement
    from rankgate.render.label import agreement_tables
    from rankgate.render.ppi import raters_tables
    from rankgate.render.terminal import to_text

    if len(files) < 2:
        raise click.UsageError("give two or more judgment files")
    qrels = [read_qrels(f) for f in files]
    if unjudged_as is not None:
        qrels = fill_unjudged(qrels, unjudged_as)
    raters = multi_rater_agreement(qrels, list(files), unjudged_as=unjudged_as, n_boot=bootstrap, seed=seed)
    if len(files) > 2:
        if runs:
            raise click.UsageError("--run (ranking correlation) compares two files; give exactly two")
        emit(json.dumps(raters, indent=2) if fmt == "json" else raters_tables(raters), output)
        return
    ref, cand = qrels
    labels = None if scale == "observed" else SCALES[scale]
    body: dict[str, Any] = {
        "reference": files[0],
        "candidate": files[1],
        **label_agreement(ref, cand, labels=labels, rel=rel),
    }
    ranking = None
    if runs:
        wanted = split_measures(measures) or ["nDCG@10", "P@10"]
        ranking = ranking_correlation(
            ref, cand, [read_run(r) for r in runs], wanted, shared_only=not all_pairs, rel=rel
        )
        body["ranking"] = ranking
    body["raters"] = raters
    text = to_text(agreement_tables(body, ranking)) + raters_tables(raters) if fmt != "json" else ""
    emit(json.dumps(body, indent=2) if fmt == "json" else text, output)


@click.command("merge", short_help="Merge qrels into a gold set: first file, majority, mean, max or Dawid-Skene.")
@click.argument("sources", nargs=-1, required=True, metavar="QRELS[:TIER] ...")
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False), help="Merged TREC qrels.")
@click.option(
    "--strategy",
    type=click.Choice(["first", "majority", "mean", "max", "dawid-skene"]),
    default="first",
    show_default=True,
    help="first: the first file judging a pair; majority (tie: lowest label); mean (half-way: down); max; "
    "dawid-skene (EM on each rater's confusion matrix).",
)
@click.option("--jsonl", "jsonl_path", type=click.Path(dir_okay=False), help="Also write JSONL with a tier column.")
@click.option("--tags-out", type=click.Path(dir_okay=False), help="Write each query's tiers as a query tags file.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write the strategy's report (JSON).")
def merge_command(
    sources: tuple[str, ...],
    out: str,
    strategy: str,
    jsonl_path: str | None,
    tags_out: str | None,
    report_path: str | None,
) -> None:
    """Merge judgment files into one gold set, by --strategy (default: the first file that judges a pair wins).

    Give each file's tier after a colon (human.txt:A); a rankgate JSONL keeps its own. A merged
    pair takes the tier of the first file that judges it. The tags file (one {"_id", "tier"}
    line per query, tier e.g. A, B or A+B) feeds `rankgate compare --tags`. Dawid-Skene prints
    each rater's estimated confusion matrix (rows: true label; columns: label given).

    \b
    Examples:
      rankgate label merge human.txt:A llm.jsonl --out gold.txt --tags-out tiers.jsonl
      rankgate label merge alice.txt bob.txt carol.txt --strategy majority --out gold.txt
      rankgate label merge alice.txt bob.txt carol.txt --strategy dawid-skene --out gold.txt --report ds.json
    """
    from rankgate.io.source import atomic_writer
    from rankgate.label.export import merge_tiers, read_tiered, write_jsonl, write_tier_tags, write_trec
    from rankgate.label.merge import merge_labels
    from rankgate.render.ppi import merge_text

    loaded = [read_tiered(spec) for spec in sources]
    lines: list[str] = []
    if strategy == "first":
        merged, overridden = merge_tiers([judgments for judgments, _ in loaded])
        for (judgments, tier), spec, (_, lost) in zip(loaded, sources, overridden.items(), strict=True):
            lines.append(f"{spec}: {len(judgments)} judgments (tier {tier}), {lost} overridden by earlier files")
        info: dict[str, Any] = {"strategy": strategy, "pairs": len(merged)}
    else:
        merged, info = merge_labels([j for j, _ in loaded], strategy, names=list(sources))
        lines.append(merge_text(info))
    write_trec(merged, out)
    if jsonl_path:
        write_jsonl(merged, jsonl_path)
    if tags_out:
        write_tier_tags(merged, tags_out)
    if report_path:
        with atomic_writer(report_path) as f:
            f.write(json.dumps(info, indent=2) + "\n")
    click.echo("\n".join([*lines, f"wrote {len(merged)} judgments to {out} ({strategy})"]))
