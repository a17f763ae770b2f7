"""``rankgate label``: pool runs and judge the pool (LLM, BM25, clicks, cross-encoder).

Its subcommands (the human-review round trip, agreement, tiers) live in `rankgate.cli.label_review_cmd`.
"""

from __future__ import annotations

import importlib
import json
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from rankgate.cli.label_raters_cmd import agreement_command, merge_command
from rankgate.cli.label_review_cmd import import_command, judges_command, sample_command
from rankgate.cli.llm_options import interrupt_message
from rankgate.cli.options import emit, warn
from rankgate.errors import ConfigError
from rankgate.label.types import JUDGES

if TYPE_CHECKING:
    from rankgate.label.outcome import LabelReport
    from rankgate.label.pipeline import JobResult


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
@click.option(
    "--answer-format",
    type=click.Choice(["json", "lenient"]),
    default="json",
    show_default=True,
    help="json: one JSON object (or a bare grade); lenient: also 'grade: N' lines, a leading grade or Yes/No, "
    "JSON inside prose. Part of the judge's identity: cached answers are never shared between formats.",
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
    "--click-model",
    type=click.Choice(["pbm", "cascade", "sdbn"]),
    default="pbm",
    show_default=True,
    help="Impression-level click logs: the model that corrects for position bias (docs/online.md).",
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
    (pairs judged before cost nothing; Ctrl-C says how many are saved, exit 130). Outputs:
    TREC qrels (--out), JSONL with model, prompt hash and reason (--jsonl), per-query tiers
    (--tags-out). Exit code 1 when any pair
    has no judgment: failed (unreadable answers), no answer, or left by a budget (outputs are
    still written; the last line of stderr gives the counts).

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
      rankgate label agreement alice.txt bob.txt carol.txt --unjudged-as 0
      rankgate label merge alice.txt bob.txt carol.txt --strategy dawid-skene --out gold.txt
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
    with interrupt_message():
        _run(opts)


def _run(opts: dict[str, Any]) -> None:
    """Pool and judge with the group's options, print the report, exit 1 when the pool is left incomplete."""
    from rankgate.label.pipeline import job_from_options, run_job
    from rankgate.label.runner import Estimate
    from rankgate.render.label import estimate_table
    from rankgate.render.terminal import to_text

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

    result = run_job(job_from_options(options), on_estimate=show_estimate)  # Ctrl-C: see label_command
    report = result.report
    warn(result.warnings)
    _show(result, fmt, per_query)
    if not report.dry_run:
        _exit_when_incomplete(report)


def _exit_when_incomplete(report: LabelReport) -> None:
    """Name one example of each kind of missing judgment, then exit 1 with the counts in stderr's last line.

    Any pair left out of the qrels (failed, without an answer, or not started) makes the exit
    code 1: a CI job must not go on with qrels that silently lack them.
    """
    examples = []
    kinds = (("failed (kept out of the qrels)", report.failed), ("got no answer (retried next run)", report.errors))
    for (kind, judgments), remedy in zip(kinds, ("; --retry-failed asks them again", ""), strict=True):
        if judgments:
            example = judgments[0]
            examples.append(
                f"{len(judgments)} pairs {kind}, e.g. {example.query_id}/{example.doc_id}: {example.error}{remedy}"
            )
    warn(examples)
    not_started = report.counts.get("not_started", 0)
    missing = len(report.failed) + len(report.errors) + not_started
    if report.complete and not report.failed:
        return
    parts = [f"{len(report.failed)} failed", f"{len(report.errors)} without an answer", f"{not_started} not started"]
    pool = report.counts.get("pool", 0)
    click.echo(f"error: {missing} of {pool} pairs have no judgment ({', '.join(parts)}); exit 1", err=True)
    raise SystemExit(1)


def _show(result: JobResult, fmt: str, per_query: bool) -> None:
    """Print the labeling report, coverage and outputs as JSON or tables."""
    from rankgate.label.export import coverage, label_distribution
    from rankgate.render.label import coverage_digest, coverage_table, report_table
    from rankgate.render.terminal import to_text

    report = result.report
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
        return
    labels = sorted(distribution) or [0, 1]
    parts = [to_text(report_table(report, distribution))]
    if not report.dry_run:
        parts.append(to_text(coverage_table(cov, labels, None if per_query else 20)))
        parts.append(coverage_digest(cov) + "\n")
    if result.outputs:
        parts.append("wrote " + ", ".join(f"{k} {v}" for k, v in result.outputs.items()) + f"; store {result.store}\n")
    emit("".join(parts), None)


for _subcommand in (sample_command, import_command, agreement_command, merge_command, judges_command):
    label_command.add_command(_subcommand)
label_command.add_command(importlib.import_module("rankgate.cli.label_leakage_cmd").leakage_command)
label_command.add_command(importlib.import_module("rankgate.cli.label_synth_cmd").synth_command)
