"""``rankgate eval``: evaluate one run against relevance judgments."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from rankgate.cli.options import (
    Semantics,
    emit,
    engine_options,
    output_options,
    semantics_options,
    split_measures,
    warn,
)

if TYPE_CHECKING:
    from rankgate.evaluation.engines import Engine
    from rankgate.evaluation.results import Results

DEFAULT_MEASURES = ("nDCG@10", "R@100", "RR@10", "AP", "P@10")


@click.command("eval")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path())
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    metavar="MEASURE",
    help="Measure to compute; repeat or separate with commas. Default: " + ", ".join(DEFAULT_MEASURES) + ".",
)
@click.option("--per-query", is_flag=True, help="Also report the value of every query.")
@click.option("--name", help="Name of the run in the output (default: the file stem).")
@click.option(
    "--ci", "with_ci", is_flag=True, help="Add a 95% bootstrap confidence interval (over queries) to each mean."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap resamples (with --ci).")
@click.option(
    "--tags",
    "tags_path",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Query tags (JSONL/CSV/TSV: query id + tags such as topic, tier; e.g. label's --tags-out): "
    "adds the aggregates of each tag value's queries.",
)
@click.option(
    "--group-by",
    "group_by",
    multiple=True,
    metavar="TAG",
    help="With --tags: only these tags (repeat or separate with commas; default: every tag in FILE).",
)
@click.option(
    "--ppi",
    "ppi_path",
    type=click.Path(dir_okay=False),
    metavar="HUMAN_QRELS",
    help="QRELS are an LLM's; correct each mean with these human labels on a random sample of queries "
    "(prediction-powered inference): naive and corrected means with CIs (--format table|json).",
)
@engine_options
@semantics_options
@output_options
def eval_command(
    qrels: str,
    run: str,
    measures: tuple[str, ...],
    per_query: bool,
    name: str | None,
    with_ci: bool,
    seed: int,
    tags_path: str | None,
    group_by: tuple[str, ...],
    ppi_path: str | None,
    engine: Engine,
    semantics: Semantics,
    fmt: str,
    output: str | None,
) -> None:
    """Evaluate RUN against QRELS with trec_eval's semantics.

    QRELS and RUN may be TREC text, JSON, JSONL, CSV/TSV (e.g. BEIR qrels) or Parquet,
    compressed or not. Measure names are canonical (nDCG@10, R@100, P(rel=2)@5) or
    aliases from trec_eval (ndcg_cut.10), ranx (mrr@10) and plain words (recall@10).

    With --tags, the aggregates are also given per value of each tag (e.g. gold-set tier),
    with the group's size; groups under 10 queries are marked small, and queries without a
    tag form the group "(untagged)". JSON gets a "groups" key, CSV and JSONL rows with
    query_id "all" and tag/value/n/small columns; --format trec stays per query (no groups).

    \b
    Examples:
      rankgate eval qrels.txt run.txt -m nDCG@10 -m R@100 -m RR@10
      rankgate eval qrels.tsv run.trec.gz -m ndcg_cut.10,recall.100 --format json
      rankgate eval qrels.txt run.txt -m AP --per-query --format trec
      rankgate eval qrels.txt run.txt -m P@10 --rel 2 --queries intersection
      rankgate eval qrels.txt run.txt -m nDCG@10 --ci
      rankgate eval gold.txt run.txt -m nDCG@10 --tags tiers.jsonl --ci
      rankgate eval qrels.txt run.txt --tags queries.csv --group-by topic --format json
      rankgate eval qrels.txt huge-run.txt.gz -m nDCG@10 --memory 4GB
      rankgate eval qrels.txt 'shards/*.parquet' -m nDCG@10 --engine ray --ray-address auto
      rankgate eval llm.txt run.txt -m nDCG@10 --ppi human.txt
    """
    from rankgate.evaluation.evaluate import evaluate
    from rankgate.measures.parse import parse_measures
    from rankgate.render.eval import aggregate_collision, render

    wanted = parse_measures(split_measures(measures) or list(DEFAULT_MEASURES))
    if ppi_path is not None:
        _ppi(qrels, ppi_path, run, wanted, semantics, fmt, output)
        return
    tags, tag_names = _read_tags(tags_path, group_by)  # before evaluating: a bad file fails fast
    results = evaluate(qrels, run, wanted, engine=engine, name=name, **semantics.evaluate_options())
    if with_ci:
        results.with_confidence_intervals(seed=seed)
    notes: list[str] = aggregate_collision(results, fmt, per_query=per_query)
    if with_ci and fmt in ("csv", "jsonl", "trec"):
        notes.append(f"--format {fmt} holds no confidence intervals: --ci shows them in --format table and json")
    if tags is not None:
        results.with_groups(tags, group_by=tag_names)
        results.warnings.extend(_coverage(results, tags, tags_path or ""))  # in the JSON's "warnings" too
        if fmt == "trec":
            notes.append(
                "--format trec holds per-query lines only: the --tags group aggregates are left out; "
                "use --format json, jsonl, csv or table"
            )
    emit(render(results, fmt, per_query=per_query), output)
    warn(results.warnings + notes)


def _ppi(qrels: str, human: str, run: str, wanted: list[Any], semantics: Semantics, fmt: str, out: str | None) -> None:
    """``--ppi``: `rankgate.label.ppi.evaluate_ppi`, rendered side by side."""
    from rankgate.label.ppi import evaluate_ppi
    from rankgate.render.ppi import render_ppi

    if fmt not in ("table", "json"):
        raise click.UsageError(f"--ppi prints --format table or json, not {fmt}")
    emit(render_ppi(evaluate_ppi(qrels, human, run, wanted, **semantics.evaluate_options()), fmt), out)


def _read_tags(
    path: str | None, group_by: tuple[str, ...]
) -> tuple[dict[str, dict[str, str]] | None, list[str] | None]:
    """The query tags of ``--tags`` and the tags to group by (``None``: all), checked."""
    from rankgate.errors import InputError
    from rankgate.evaluation.groups import check_tag_names, tag_names
    from rankgate.io.tags import read_query_tags

    names = split_measures(group_by)  # commas, as for -m
    if path is None:
        if names:
            raise click.UsageError("--group-by needs --tags FILE (the query tags to group by)")
        return None, None
    tags = read_query_tags(path)
    if not tag_names(tags):
        raise InputError(
            'holds query ids but no tags; expected e.g. {"_id": "q1", "tier": "A"} or a CSV column per tag',
            source=path,
        )
    return tags, (check_tag_names(tags, names, source=path) if names else None)


def _coverage(results: Results, tags: dict[str, dict[str, str]], path: str) -> list[str]:
    """A warning when no evaluated query is in the tags file (its ids differ, most likely)."""
    if results.query_ids and not any(q in tags for q in results.query_ids):
        return [
            f"none of the {len(results.query_ids)} evaluated queries is in {path} (e.g. {results.query_ids[0]!r}): "
            "every query is (untagged); check that the tags file uses the qrels' query ids"
        ]
    return []
