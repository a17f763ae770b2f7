"""``rankgate label``: pool runs and judge the pool (LLM, BM25, clicks, cross-encoder);
``rankgate label sample|import|agreement|merge|judges``: the human-review round trip and tiers."""

from __future__ import annotations

import json
from typing import Any

import click
from click.core import ParameterSource

from rankgate.cli.options import emit, format_option, measure_option, output_file_option, split_measures, warn
from rankgate.errors import ConfigError

JUDGES = ("llm", "bm25", "clicks", "cross-encoder")


def _floats(value: str | None, key: str) -> tuple[float, ...] | None:
    if value is None:
        return None
    try:
        return tuple(float(v) for v in value.split(",") if v.strip())
    except ValueError:
        raise ConfigError(
            f"expected numbers separated by commas, e.g. 0.25,0.5,0.75 (got {value!r})", key_path=key
        ) from None


@click.group(
    "label",
    invoke_without_command=True,
    subcommand_metavar="[sample|import|agreement|merge|judges ...]",
)
@click.option("--run", "runs", multiple=True, type=click.Path(dir_okay=False), help="Run to pool; repeat for several.")
@click.option(
    "--corpus", type=click.Path(dir_okay=False), help="Documents: BEIR JSONL (_id, title, text), JSON or TSV."
)
@click.option("--queries", "queries_path", type=click.Path(dir_okay=False), help="Queries: BEIR JSONL, JSON or TSV.")
@click.option("--depth", type=click.IntRange(min=1), default=10, show_default=True, help="Pool depth k per run.")
@click.option(
    "--judge",
    "judge_kind",
    type=click.Choice(JUDGES),
    default="llm",
    show_default=True,
    help="llm: a chat model; bm25, clicks, cross-encoder: local weak labels (tier C).",
)
@click.option(
    "--base-url", help="OpenAI-compatible endpoint, e.g. https://api.openai.com/v1, http://localhost:8000/v1."
)
@click.option("--model", help="Model name at the endpoint (--judge llm) or local model folder (--judge cross-encoder).")
@click.option(
    "--api-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    help="Environment variable holding the API key (unset: no key is sent).",
)
@click.option(
    "--scale",
    type=click.Choice(["graded", "binary"]),
    default="graded",
    show_default=True,
    help="Built-in prompt and labels: graded 0-3 or binary 0-1.",
)
@click.option(
    "--prompt", "prompt_path", type=click.Path(dir_okay=False), help="Custom prompt template ({query}, {document})."
)
@click.option(
    "--qrels", "existing_path", type=click.Path(dir_okay=False), help="Existing judgments: their pairs are skipped."
)
@click.option(
    "--merge-qrels", is_flag=True, help="Also write the --qrels judgments to the outputs (tier --existing-tier)."
)
@click.option("--existing-tier", default="A", show_default=True, help="Tier of the --qrels judgments in the outputs.")
@click.option("-o", "--out", type=click.Path(dir_okay=False), help="Write the pool's judgments as TREC qrels here.")
@click.option(
    "--jsonl", "jsonl_path", type=click.Path(dir_okay=False), help="Also write JSONL with model, prompt hash, reason."
)
@click.option(
    "--tags-out", type=click.Path(dir_okay=False), help="Write each query's tiers as a query tags file (JSONL)."
)
@click.option(
    "--store", "store_path", type=click.Path(dir_okay=False), help="Judgment store (default: OUT with .sqlite)."
)
@click.option("--max-judgments", type=click.IntRange(min=0), help="At most this many new judgments in this run.")
@click.option("--max-cost", type=float, help="Stop before the cost could cross this (needs --price-in/--price-out).")
@click.option(
    "--price-in", type=click.FloatRange(min=0), default=0.0, show_default=True, help="Price per 1M input tokens."
)
@click.option(
    "--price-out", type=click.FloatRange(min=0), default=0.0, show_default=True, help="Price per 1M output tokens."
)
@click.option("--dry-run", is_flag=True, help="Print the pool and the estimate; send nothing.")
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True, help="Requests in flight.")
@click.option("--rpm", type=click.FloatRange(min=0, min_open=True), help="Requests per minute limit.")
@click.option("--tpm", type=click.FloatRange(min=0, min_open=True), help="Tokens per minute limit.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    help="Seconds for one request.",
)
@click.option("--max-retries", type=click.IntRange(min=0), default=5, show_default=True, help="Retries per request.")
@click.option("--backoff", type=click.FloatRange(min=0), default=1.0, show_default=True, help="Base backoff seconds.")
@click.option(
    "--parse-retries",
    type=click.IntRange(min=0),
    default=2,
    show_default=True,
    help="Requests after an unreadable answer before the pair is recorded as failed.",
)
@click.option("--max-tokens", type=click.IntRange(min=1), default=256, show_default=True, help="Answer length cap.")
@click.option(
    "--temperature", type=click.FloatRange(min=0), default=0.0, show_default=True, help="Sampling temperature."
)
@click.option("--json-mode", is_flag=True, help='Ask for response_format {"type": "json_object"}.')
@click.option("--max-doc-chars", type=click.IntRange(min=0), default=6000, show_default=True, help="0: no cut.")
@click.option("--retry-failed", is_flag=True, help="Judge again pairs whose stored answers were unreadable.")
@click.option("--tier", help="Tier of the new judgments (default: B for llm, C for weak judges).")
@click.option("--thresholds", help="Weak judges: score thresholds of grades 1, 2, 3..., e.g. 0.25,0.5,0.75.")
@click.option("--normalize", type=click.Choice(["max", "none"]), default="max", show_default=True, help="BM25 scores.")
@click.option(
    "--clicks", "clicks_path", type=click.Path(dir_okay=False), help="Click log (query, doc, impressions, clicks)."
)
@click.option(
    "--min-impressions",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Clicks: pairs shown fewer times stay unjudged.",
)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--per-query", is_flag=True, help="Print the coverage of every query.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
@click.pass_context
def label_command(ctx: click.Context, **opts: Any) -> None:
    """Pool the top --depth documents of each --run and judge the pool.

    Judgments are stored in a SQLite file as they arrive: rerun the same command to resume
    (pairs judged before cost nothing). Outputs: TREC qrels (--out), JSONL with model,
    prompt hash and reason (--jsonl), per-query tiers (--tags-out). Exit code 1 when a
    budget or missing answers left the pool incomplete (outputs are still written).

    \b
    Examples:
      rankgate label --run bm25.txt --run dense.txt --corpus corpus.jsonl --queries queries.jsonl \\
        --depth 10 --judge llm --base-url https://api.openai.com/v1 --model gpt-4o-mini \\
        --price-in 0.15 --price-out 0.60 --max-cost 5 --out llm.txt --jsonl llm.jsonl
      rankgate label --run bm25.txt --corpus corpus.jsonl --queries queries.jsonl --depth 20 \\
        --base-url http://localhost:11434/v1 --model llama3.1:8b --out llm.txt --dry-run
      rankgate label --run bm25.txt --corpus corpus.jsonl --queries queries.jsonl --judge bm25 --out weak.txt
      rankgate label --judge clicks --clicks clicks.csv --min-impressions 20 --out clicks.txt
    \b
    Human review round trip:
      rankgate label sample llm.jsonl --corpus corpus.jsonl --queries queries.jsonl --size 200 --out review.csv
      rankgate label import review.csv --out human.txt
      rankgate label agreement human.txt llm.txt --run bm25.txt --run dense.txt -m nDCG@10
      rankgate label merge human.txt:A llm.txt:B --out gold.txt --tags-out tiers.jsonl
    """
    given = [
        p.opts[0] for p in ctx.command.params if ctx.get_parameter_source(p.name or "") == ParameterSource.COMMANDLINE
    ]
    if ctx.invoked_subcommand is not None:
        if given:
            raise click.UsageError(f"{given[0]} belongs to 'rankgate label' itself, not to its subcommands")
        return
    if not given:  # plain `rankgate label`: the help
        click.echo(ctx.get_help())
        return
    _run(opts)


def _run(opts: dict[str, Any]) -> None:
    from rankgate.label.export import coverage, label_distribution
    from rankgate.label.pipeline import job_from_options, run_job
    from rankgate.label.runner import Estimate
    from rankgate.render.eval import to_text
    from rankgate.render.label import coverage_digest, coverage_table, estimate_table, report_table

    fmt, per_query = opts.pop("fmt"), opts.pop("per_query")
    renames = {"queries_path": "queries", "judge_kind": "judge", "prompt_path": "prompt", "existing_path": "existing"}
    renames |= {"merge_qrels": "merge_existing", "jsonl_path": "jsonl", "store_path": "store", "clicks_path": "clicks"}
    options = {renames.get(k, k): v for k, v in opts.items()}
    options["runs"] = list(options["runs"])
    options["thresholds"] = _floats(options["thresholds"], "--thresholds")
    priced = bool(options["price_in"] or options["price_out"])

    def show_estimate(estimate: Estimate) -> None:
        if fmt == "table" and options["judge"] == "llm":
            click.echo(to_text(estimate_table(estimate, priced=priced)), err=True, nl=False)

    result = run_job(job_from_options(options), on_estimate=show_estimate)
    report = result.report
    warn(result.warnings)
    cov = coverage(report.per_query, report.judgments, report.failed)
    distribution = label_distribution(report.judgments)
    if fmt == "json":
        body = report.to_dict()
        body["labels"] = {str(k): v for k, v in distribution.items()}
        body["coverage"] = {
            q: {**row, "labels": {str(k): v for k, v in row["labels"].items()}} for q, row in cov.items()
        }
        body["outputs"] = result.outputs
        body["store"] = result.store
        emit(json.dumps(body, indent=2), None)
    else:
        labels = sorted(distribution) or [0, 1]
        parts = [to_text(report_table(report, distribution))]
        if not report.dry_run:
            parts.append(to_text(coverage_table(cov, labels, None if per_query else 20)))
            parts.append(coverage_digest(cov) + "\n")
        if result.outputs:
            parts.append(
                "wrote " + ", ".join(f"{k} {v}" for k, v in result.outputs.items()) + f"; store {result.store}\n"
            )
        emit("".join(parts), None)
    if report.failed:
        example = report.failed[0]
        where = f"{example.query_id}/{example.doc_id}"
        warn([f"{len(report.failed)} pairs failed (kept out of the qrels), e.g. {where}: {example.error}"])
    if not report.dry_run and not report.complete:
        raise SystemExit(1)


@label_command.command("sample", short_help="Export a stratified sample to CSV for human review.")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.option("--corpus", required=True, type=click.Path(dir_okay=False), help="Documents (texts for reviewers).")
@click.option("--queries", "queries_path", required=True, type=click.Path(dir_okay=False), help="Queries (texts).")
@click.option("--size", type=click.IntRange(min=1), default=200, show_default=True, help="Pairs in the sample.")
@click.option("--strata", type=click.Choice(["label", "query"]), default="label", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False), help="CSV to write.")
def sample_command(qrels: str, corpus: str, queries_path: str, size: int, strata: str, seed: int, out: str) -> None:
    """Export a stratified sample of QRELS to CSV for human review, without the labels.

    Each label (or each query, --strata query) contributes the same number of pairs where it
    can. Reviewers fill the `label` column; `rankgate label import` reads it back.

    \b
    Examples:
      rankgate label sample llm.jsonl --corpus corpus.jsonl --queries queries.jsonl --size 200 -o review.csv
      rankgate label sample llm.txt --corpus corpus.jsonl --queries queries.jsonl --strata query -o review.csv
    """
    from collections import Counter

    from rankgate.io.readers import read_qrels
    from rankgate.label.collection import read_texts
    from rankgate.label.review import stratified_sample, write_review_csv

    judged = read_qrels(qrels)
    chosen = stratified_sample(judged, size, strata=strata, seed=seed)
    n = write_review_csv(chosen, read_texts(queries_path, what="query"), read_texts(corpus), out)
    by_label = Counter(label for _, _, label in chosen)
    spread = ", ".join(f"{k}: {v}" for k, v in sorted(by_label.items()))
    click.echo(f"wrote {n} pairs to {out} (judge labels in the sample: {spread}; not in the file)")


@label_command.command("import", short_help="Read reviewers' labels back from the sample CSV.")
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


@label_command.command("agreement", short_help="Kappa, confusion matrix, ranking correlation of two qrels.")
@click.argument("reference", type=click.Path(dir_okay=False))
@click.argument("candidate", type=click.Path(dir_okay=False))
@click.option("--run", "runs", multiple=True, type=click.Path(dir_okay=False), help="Systems to rank (two or more).")
@measure_option(("nDCG@10", "P@10"))
@click.option("--rel", type=click.IntRange(min=1), default=1, show_default=True, help="Binary threshold.")
@click.option("--scale", type=click.Choice(["graded", "binary", "observed"]), default="observed", show_default=True)
@click.option("--all-pairs", is_flag=True, help="Rank systems with each qrels whole, not only the shared pairs.")
@format_option(["table", "json"])
@output_file_option
def agreement_command(
    reference: str,
    candidate: str,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    rel: int,
    scale: str,
    all_pairs: bool,
    fmt: str,
    output: str | None,
) -> None:
    """Agreement of CANDIDATE (e.g. LLM) judgments with REFERENCE (e.g. human) ones.

    On the pairs both judge: confusion matrix, raw agreement, Cohen's kappa (unweighted,
    linear, quadratic), binary kappa at --rel. With two or more --run: Kendall's tau-b of
    the systems' scores under the two sets of judgments.

    \b
    Examples:
      rankgate label agreement human.txt llm.txt
      rankgate label agreement human.txt llm.jsonl --run bm25.txt --run dense.txt --run splade.txt -m nDCG@10
    """
    from rankgate.io.readers import read_qrels, read_run
    from rankgate.label.agreement import label_agreement, ranking_correlation
    from rankgate.label.prompts import SCALES
    from rankgate.render.eval import to_text
    from rankgate.render.label import agreement_tables

    ref, cand = read_qrels(reference), read_qrels(candidate)
    labels = None if scale == "observed" else SCALES[scale]
    body: dict[str, Any] = {
        "reference": reference,
        "candidate": candidate,
        **label_agreement(ref, cand, labels=labels, rel=rel),
    }
    ranking = None
    if runs:
        wanted = split_measures(measures) or ["nDCG@10", "P@10"]
        ranking = ranking_correlation(
            ref, cand, [read_run(r) for r in runs], wanted, shared_only=not all_pairs, rel=rel
        )
        body["ranking"] = ranking
    emit(json.dumps(body, indent=2) if fmt == "json" else to_text(agreement_tables(body, ranking)), output)


@label_command.command("merge", short_help="Merge qrels into a gold set with tiers; export tier tags.")
@click.argument("sources", nargs=-1, required=True, metavar="QRELS[:TIER] ...")
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False), help="Merged TREC qrels.")
@click.option("--jsonl", "jsonl_path", type=click.Path(dir_okay=False), help="Also write JSONL with a tier column.")
@click.option("--tags-out", type=click.Path(dir_okay=False), help="Write each query's tiers as a query tags file.")
def merge_command(sources: tuple[str, ...], out: str, jsonl_path: str | None, tags_out: str | None) -> None:
    """Merge judgment files into one gold set; the first file that judges a pair wins.

    Give each file's tier after a colon (human.txt:A); a rankgate JSONL keeps its own. The
    tags file (one {"_id", "tier"} line per query, tier e.g. A, B or A+B) feeds
    `rankgate compare --tags`, to see results by tier.

    \b
    Examples:
      rankgate label merge human.txt:A llm.jsonl --out gold.txt --tags-out tiers.jsonl
      rankgate compare gold.txt bm25.txt dense.txt --tags tiers.jsonl
    """
    from rankgate.label.export import merge_tiers, read_tiered, write_jsonl, write_tier_tags, write_trec

    loaded = [read_tiered(spec) for spec in sources]
    merged, overridden = merge_tiers([judgments for judgments, _ in loaded])
    write_trec(merged, out)
    if jsonl_path:
        write_jsonl(merged, jsonl_path)
    if tags_out:
        write_tier_tags(merged, tags_out)
    for (judgments, tier), spec, (_, lost) in zip(loaded, sources, overridden.items(), strict=True):
        click.echo(f"{spec}: {len(judgments)} judgments (tier {tier}), {lost} overridden by earlier files")
    click.echo(f"wrote {len(merged)} judgments to {out}")


@label_command.command("judges", short_help="List the judges in a judgment store.")
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
    from rankgate.render.eval import to_text

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
    emit(to_text(t, width=140), None)
