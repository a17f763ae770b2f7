"""``rankgate rag``: answer-aware retrieval measures (string match, and LLM-judged context recall/precision)."""

from __future__ import annotations

import click

from rankgate.cli.options import emit, format_option, output_file_option
from rankgate.cli.rag_context_cmd import context_command


@click.group("rag")
def rag_group() -> None:
    """Score retrieved context against reference answers.

    \b
    Examples:
      rankgate rag answers --run run.txt --corpus chunks.jsonl --answers answers.jsonl -k 1 -k 5 -k 20
      rankgate rag context --run run.txt --corpus chunks.jsonl --queries queries.jsonl --answers answers.jsonl \\
        -k 5 --base-url http://localhost:8000/v1 --model qwen2.5-7b-instruct
    """


@rag_group.command("answers")
@click.option("--run", "run_path", required=True, type=click.Path(dir_okay=False), help="Run of passages or chunks.")
@click.option("--corpus", required=True, type=click.Path(dir_okay=False), help="Passage texts: BEIR JSONL, JSON, TSV.")
@click.option("--answers", "answers_path", required=True, type=click.Path(dir_okay=False), help="Answers JSONL.")
@click.option(
    "-k", "--k", "ks", multiple=True, type=click.IntRange(min=1), help="Cutoff; repeat. Default: 1, 5, 10, 20."
)
@click.option("--ties", type=click.Choice(["trec", "input"]), default="trec", show_default=True, help="Tie rule.")
@click.option("--per-query", is_flag=True, help="Also print each query's values and first answer rank.")
@format_option(["text", "json"], default="text")
@output_file_option
def answers_command(
    run_path: str,
    corpus: str,
    answers_path: str,
    ks: tuple[int, ...],
    ties: str,
    per_query: bool,
    fmt: str,
    output: str | None,
) -> None:
    """AnswerRecall@k: share of queries with a reference answer string in a top-k passage (no model).

    Answers JSONL: {"query_id": "q1", "answers": ["Paris", "Paris, France"]} per line; texts are
    normalised as in open-domain QA (lowercase, no punctuation, no a/an/the).

    \b
    Examples:
      rankgate rag answers --run run.txt --corpus chunks.jsonl --answers answers.jsonl -k 1 -k 5 -k 20
    """
    from rankgate.io.readers import read_run
    from rankgate.io.texts import read_corpus
    from rankgate.rag.answers import answer_recall, read_answers
    from rankgate.render.answers import render

    result = answer_recall(
        read_run(run_path), read_corpus(corpus), read_answers(answers_path), ks=ks or (1, 5, 10, 20), ties=ties
    )
    body = result.to_dict(per_query=per_query)
    if result.missing_passages:
        example = result.missing_passages[0]
        body["notes"] = [f"{len(result.missing_passages)} retrieved ids have no text in {corpus}, e.g. {example!r}"]
    emit(render(body, fmt, title="answer recall (mean over queries)"), output)


rag_group.add_command(context_command)
