"""``rankgate label sample|import|judges``: the human-review round trip (agreement and merge: `label_raters_cmd`)."""

from __future__ import annotations

import json

import click

from rankgate.cli.options import emit


@click.command("sample", short_help="Export a stratified sample to CSV for human review.")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.option("--corpus", required=True, type=click.Path(dir_okay=False), help="Documents (texts for reviewers).")
@click.option("--queries", "queries_path", required=True, type=click.Path(dir_okay=False), help="Queries (texts).")
@click.option("--size", type=click.IntRange(min=1), default=200, show_default=True, help="Pairs in the sample.")
@click.option("--strata", type=click.Choice(["label", "query"]), default="label", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--whole-queries", is_flag=True, help="For `eval --ppi`: --size queries drawn at random, with all their pairs."
)
@click.option(
    "--target-width",
    type=click.FloatRange(min=0, min_open=True),
    help="With --whole-queries: draw as many queries as a 95%% PPI interval this wide needs (replaces --size).",
)
@click.option(
    "--rectifier-sd",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="Spread of (LLM - human) per query: 1.0 is the bound for a measure in [0, 1]; `eval --ppi` measures it.",
)
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False), help="CSV to write.")
def sample_command(
    qrels: str,
    corpus: str,
    queries_path: str,
    size: int,
    strata: str,
    seed: int,
    whole_queries: bool,
    target_width: float | None,
    rectifier_sd: float,
    out: str,
) -> None:
    """Export a stratified sample of QRELS to CSV for human review, without the labels.

    Each label (or each query, --strata query) contributes the same number of pairs where it
    can. Reviewers fill the `label` column; `rankgate label import` reads it back.

    \b
    Examples:
      rankgate label sample llm.jsonl --corpus corpus.jsonl --queries queries.jsonl --size 200 -o review.csv
      rankgate label sample llm.txt --corpus corpus.jsonl --queries queries.jsonl --strata query -o review.csv
      rankgate label sample llm.txt --corpus c.jsonl --queries q.jsonl --whole-queries --target-width 0.05 \
        --rectifier-sd 0.3 -o review.csv
    """
    from collections import Counter

    from rankgate.io.readers import read_qrels
    from rankgate.label.ppi import required_labels, whole_query_sample
    from rankgate.label.review import read_review_texts, stratified_sample, write_review_csv

    judged = read_qrels(qrels)
    if target_width is not None and not whole_queries:
        raise click.UsageError("--target-width needs --whole-queries (PPI's units are queries)")
    if target_width is not None:
        size = required_labels(target_width, rectifier_sd=rectifier_sd) or size
        click.echo(
            f"a 95% PPI interval {target_width} wide needs about {size} human-judged queries "
            f"(rectifier sd {rectifier_sd}; the LLM's own spread adds a little)"
        )
    if whole_queries:
        chosen = whole_query_sample(judged, size, seed=seed)
    else:
        chosen = stratified_sample(judged, size, strata=strata, seed=seed)
    n = write_review_csv(chosen, *read_review_texts(chosen, queries_path, corpus), out)
    by_label = Counter(label for _, _, label in chosen)
    spread = ", ".join(f"{k}: {v}" for k, v in sorted(by_label.items()))
    click.echo(f"wrote {n} pairs to {out} (judge labels in the sample: {spread}; not in the file)")


@click.command("import", short_help="Read reviewers' labels back from the sample CSV.")
@click.argument("csv_path", metavar="CSV", type=click.Path(dir_okay=False))
@click.option("-o", "--out", type=click.Path(dir_okay=False), help="Write the human labels as TREC qrels.")
@click.option("--jsonl", "jsonl_path", type=click.Path(dir_okay=False), help="Also write them as JSONL (with tier).")
@click.option("--tags-out", type=click.Path(dir_okay=False), help="Write each query's tier as a query tags file.")
@click.option("--scale", type=click.Choice(["graded", "binary"]), default="graded", show_default=True)
@click.option("--annotator", default="human", show_default=True, help="Who labeled (judge id human:NAME).")
@click.option("--tier", default="A", show_default=True, help="Gold-set tier of these labels.")
@click.option("--store", "store_path", type=click.Path(dir_okay=False), help="Also keep them in this judgment store.")
def import_command(
    csv_path: str,
    out: str | None,
    jsonl_path: str | None,
    tags_out: str | None,
    scale: str,
    annotator: str,
    tier: str,
    store_path: str | None,
) -> None:
    """Read reviewers' labels from a filled-in sample CSV (empty labels are skipped).

    \b
    Examples:
      rankgate label import review.csv -o human.txt --jsonl human.jsonl
      rankgate label import review.csv -o human.txt --annotator alice --store labels.sqlite
    """
    from rankgate.label.export import write_jsonl, write_tier_tags, write_trec
    from rankgate.label.prompts import SCALES
    from rankgate.label.review import read_review_csv
    from rankgate.label.store import JudgmentStore

    if not (out or jsonl_path or store_path):
        raise click.UsageError("give -o/--out, --jsonl or --store: somewhere to put the labels")
    judgments, blank = read_review_csv(csv_path, labels=SCALES[scale], annotator=annotator, tier=tier)
    if out:
        write_trec(judgments, out)
    if jsonl_path:
        write_jsonl(judgments, jsonl_path)
    if tags_out:
        write_tier_tags(judgments, tags_out)
    if store_path:
        with JudgmentStore(store_path) as store:
            store.record_judge(f"human:{annotator}", "human", {"source": csv_path, "tier": tier})
            store.put_many(judgments)
    click.echo(f"read {len(judgments)} labels from {csv_path} ({blank} rows left blank)")


@click.command("judges", short_help="List the judges in a judgment store.")
@click.argument("store_path", metavar="STORE", type=click.Path(dir_okay=False, exists=True))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def judges_command(store_path: str, fmt: str) -> None:
    """List the judges in a judgment store, with counts, tokens and cost.

    \b
    Examples:
      rankgate label judges llm.sqlite
    """
    from rich.table import Table

    from rankgate.label.store import JudgmentStore
    from rankgate.render.terminal import to_text

    with JudgmentStore(store_path) as store:
        rows = store.judges()
    if fmt == "json":
        emit(json.dumps(rows, indent=2), None)
        return
    keys = ("judge_id", "tier", "ok", "failed", "error", "input_tokens", "output_tokens", "cost")
    t = Table(title=store_path, title_justify="left")
    for name in keys:
        t.add_column(name, justify="left" if name in ("judge_id", "tier") else "right")
    for r in rows:
        t.add_row(*(f"{r[k]:.4f}" if k == "cost" else str(r[k]) for k in keys))
    emit(to_text(t), None)
