"""``rankgate label synth``: a golden set of questions, answers and qrels asked of an LLM from sampled passages."""

from __future__ import annotations

import json
from typing import Any

import click

from rankgate.cli.llm_options import interrupt_message, llm_options, pop_llm_job
from rankgate.cli.options import emit, format_option, warn
from rankgate.label.synth import DEFAULT_K, DEFAULT_MIN_WORDS, DEFAULT_NEAR_DUPLICATE


@click.command("synth", short_help="Generate a golden set (questions, answers, qrels) from the corpus.")
@click.option("--corpus", required=True, type=click.Path(dir_okay=False), help="Passages: BEIR JSONL, JSON or TSV.")
@click.option("--n", "n", required=True, type=click.IntRange(min=1), help="Passages to sample (one question each).")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder for the golden set's files.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the passage sample.")
@click.option(
    "-k", "--k", "k", type=click.IntRange(min=1), default=DEFAULT_K, show_default=True,
    help="Round trip: keep a question only if BM25 ranks its source passage in the top k.",
)  # fmt: skip
@click.option(
    "--near-duplicate", type=click.FloatRange(0, 1, min_open=True), default=DEFAULT_NEAR_DUPLICATE,
    show_default=True, help="Drop a question whose word-set Jaccard with a kept one reaches this.",
)  # fmt: skip
@click.option(
    "--min-words", type=click.IntRange(min=1), default=DEFAULT_MIN_WORDS, show_default=True,
    help="Sample only passages of at least this many words.",
)  # fmt: skip
@llm_options
@format_option(["text", "json"], default="text")
def synth_command(**opts: Any) -> None:
    """Sample --n passages of --corpus, ask an LLM for one question and its answer per passage, filter, write.

    Writes OUT/queries.jsonl, OUT/qrels.txt (source passage relevant, grade 1), OUT/answers.jsonl
    and OUT/candidates.jsonl (every question with its fate). Answers are stored as they arrive
    (OUT/synth.sqlite): rerun the same command to resume (after Ctrl-C too); nothing is paid twice.
    Malformed answers are stored as failed: --retry-failed asks for them again. Exit 1 when the
    cost cap or missing answers left sampled passages without a question; 2 when no passage has
    --min-words words (a queries file given as --corpus).

    \b
    Examples:
      rankgate label synth --corpus corpus.jsonl --n 200 --out golden --base-url http://localhost:8000/v1 \\
        --model qwen2.5-7b-instruct
      rankgate label synth --corpus corpus.jsonl --n 500 --seed 7 --out golden \\
        --base-url https://api.openai.com/v1 --model gpt-4o-mini --price-in 0.15 --price-out 0.6 --max-cost 2
    \b
    Review a sample by hand:
      rankgate label sample golden/qrels.txt --corpus corpus.jsonl --queries golden/queries.jsonl \\
        --strata query --size 50 -o review.csv
    """
    from rankgate.label.synth import run_synth
    from rankgate.render.label import STOP_TEXT, estimate_table
    from rankgate.render.synth import text
    from rankgate.render.terminal import to_text

    fmt = opts.pop("fmt")
    llm = pop_llm_job(opts)
    priced = bool(llm.price_in or llm.price_out)

    def show_estimate(estimate: Any) -> None:
        if fmt == "text" and estimate.requests:
            click.echo(to_text(estimate_table(estimate, priced=priced)), err=True, nl=False)

    with interrupt_message("answers"):
        report, warnings = run_synth(opts.pop("corpus"), opts.pop("out"), llm, on_estimate=show_estimate, **opts)
    warn(warnings)
    emit(json.dumps(report.to_dict(), indent=2) if fmt == "json" else text(report.to_dict()), None)
    if report.stop_reason is not None and not llm.dry_run:
        left = report.counts["not_started"] + report.counts["no_answer"]
        reason = STOP_TEXT.get(report.stop_reason, report.stop_reason)
        click.echo(
            f"error: {reason}; {left} sampled passages have no question yet (rerun to continue); exit 1", err=True
        )
        raise SystemExit(1)
