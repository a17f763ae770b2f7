"""``rankgate gate``: evaluate a run, compare it with its baseline, decide, record, report."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from rankgate.cli.options import allow_disjoint_option, emit, engine_options, output_file_option, store_option, warn
from rankgate.cli.options import chunk_options as with_chunk_options

if TYPE_CHECKING:
    from rankgate.evaluation.engines import Engine

FORMATS = ("text", "markdown", "json", "junit")


class _NoArguments(click.Argument):
    """Words given to ``gate`` as arguments: never shown in the usage line, refused with a message
    that says how gate takes its files (``eval qrels.txt run.txt`` habits carry over)."""

    def get_usage_pieces(self, ctx: click.Context) -> list[str]:
        return []


def _refuse_arguments(ctx: click.Context, param: click.Parameter, words: tuple[str, ...]) -> None:
    # Click processes this before the missing --qrels/--run it would otherwise report: the files
    # the user gave as arguments are the cause, so say that, with the options that take them.
    if not words:
        return
    import shlex

    missing = [name for name in ("qrels", "run") if ctx.params.get(name) is None]
    if missing and len(words) == len(missing):
        fix = "; did you mean " + " ".join(f"--{n} {shlex.quote(w)}" for n, w in zip(missing, words, strict=True)) + "?"
    else:
        fix = ""
    raise click.UsageError(
        f"unexpected argument{'s' if len(words) > 1 else ''} {' '.join(shlex.quote(w) for w in words)}: "
        f"gate takes its files as options (--qrels QRELS --run RUN), unlike eval and compare{fix}",
        ctx=ctx,
    )


@click.command("gate")
@click.argument("words", nargs=-1, cls=_NoArguments, expose_value=False, callback=_refuse_arguments)
@click.option("--qrels", required=True, type=click.Path(dir_okay=False), help="Relevance judgments.")
@click.option(
    "--run", "run", required=True, type=click.Path(), help="The run to gate (with --engine ray: a folder or glob too)."
)
@click.option("--config", required=True, type=click.Path(dir_okay=False), help="Gate config (YAML).")
@click.option("--baseline-run", type=click.Path(), help="Evaluate this run as the baseline (no store needed).")
@click.option(
    "--bench",
    type=click.Path(dir_okay=False),
    help="Operational figures: `rankgate bench --format json` output or a `rankgate retrieve` JSON summary.",
)
@click.option("--baseline-bench", type=click.Path(dir_okay=False), help="The baseline's operational figures.")
@click.option(
    "--baseline",
    metavar="ID",
    help="Stored baseline: a result id, latest, latest:BRANCH, baseline or baseline:KEY. "
    "Default with --store: the baseline set for the config's baseline_key.",
)
@store_option(dest="store")
@click.option("--no-record", is_flag=True, help="Do not add this evaluation to the store.")
@click.option("--allow-qrels-change", is_flag=True, help="Compare with a baseline evaluated on other qrels.")
@click.option("--allow-settings-change", is_flag=True, help="Compare with a baseline evaluated with other settings.")
@allow_disjoint_option
@click.option("--tags", "tags_path", type=click.Path(dir_okay=False), help="Query tags (qid -> tags) file.")
@click.option("--name", help="Name of the run (default: the file stem).")
@click.option("--qrels-format", help="Override the detected qrels format.")
@click.option("--run-format", help="Override the detected run format.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@output_file_option
@click.option("--comment", "comment_path", type=click.Path(dir_okay=False), help="Also write the Markdown comment.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Also write JUnit XML.")
@click.option(
    "--post-comment", is_flag=True, help="Create or update one sticky PR comment (GitHub Actions, GITHUB_TOKEN)."
)
@click.option("--comment-key", default="default", show_default=True, help="Tells sticky comments of two gates apart.")
@engine_options
@with_chunk_options
@click.pass_context
def gate_command(
    ctx: click.Context,
    qrels: str,
    run: str,
    config: str,
    baseline_run: str | None,
    bench: str | None,
    baseline_bench: str | None,
    baseline: str | None,
    store: str | None,
    no_record: bool,
    allow_qrels_change: bool,
    allow_settings_change: bool,
    allow_disjoint: bool,
    tags_path: str | None,
    name: str | None,
    qrels_format: str | None,
    run_format: str | None,
    fmt: str,
    output: str | None,
    comment_path: str | None,
    junit_path: str | None,
    post_comment: bool,
    comment_key: str,
    engine: Engine,
) -> None:
    """Gate RUN in CI: floors and maximum drops against a baseline, decided on per-query evidence.

    The files are options (--qrels QRELS --run RUN), not arguments as in eval and compare.
    Exit code 0 when every error gate passes (warnings allowed), 1 when one fails, 2 on bad
    input or config. When GITHUB_STEP_SUMMARY is set, the Markdown report is added to the
    job summary. --post-comment outside a pull request (a push to main) posts nothing and
    says so; its token and repository are checked before anything is evaluated or recorded.

    \b
    Examples:
      rankgate gate --qrels qrels.txt --run new.txt --config gates.yaml --baseline-run main.txt
      rankgate gate --qrels qrels.txt --run new.txt --config gates.yaml --store results.db
      rankgate gate --qrels qrels.txt --run new.txt --config gates.yaml \\
          --store results.db --baseline latest:main --format markdown --post-comment
      rankgate gate --qrels qrels.txt --run 'new/*.parquet' --config gates.yaml \\
          --baseline-run 'main/*.parquet' --engine ray
      rankgate gate --qrels qrels.txt --run new.txt --config ship-criteria.yaml \\
          --baseline-run main.txt --bench new-bench.json --baseline-bench main-bench.json
      rankgate gate --qrels qrels.txt --run 'new=seed*.txt' --baseline-run 'main=m1.txt,m2.txt' \\
          --config gates.yaml    # repeats: the per-query mean over each system's runs

    \b
    gates.yaml:
      gates:
        - name: retrieval_recall_at_5   # metric from the name (or set metric: R@5)
          threshold: 0.85               # floor
          regression_max: 0.03          # largest allowed drop (3 points)
          severity: error               # error blocks; warning reports
          mode: noninferiority          # decide on the CI of the paired delta
    """
    _require_gate_extra()
    from rankgate.gate.github import comment_marker, comment_target
    from rankgate.gate.runner import run_gate
    from rankgate.io.source import atomic_writer
    from rankgate.render.gate import markdown, plain_text
    from rankgate.render.junit import junit_xml

    # Usage errors of the comment end the command before anything is evaluated or recorded:
    # a retried job must not record the same run twice.
    comment_marker(comment_key)
    pull_request = comment_target() if post_comment else None
    tags = None
    if tags_path:
        from rankgate.io.tags import read_query_tags

        tags = read_query_tags(tags_path)
    from rankgate.comparison.repeats import parse_system

    run_label, runs = parse_system(run)
    base_label, base_runs = parse_system(baseline_run) if baseline_run else (None, [])
    with _options_named(base_runs or ([baseline_run] if baseline_run else [])):
        report = run_gate(
            qrels,
            runs if run_label else run,
            config,
            baseline_run=(base_runs if base_label else baseline_run) or None,
            baseline=baseline,
            store=store,
            record=not no_record,
            allow_qrels_change=allow_qrels_change,
            allow_settings_change=allow_settings_change,
            tags=tags,
            run_name=name or run_label,
            baseline_name=base_label,
            qrels_format=qrels_format,
            run_format=run_format,
            engine=engine,
            disjoint="allow" if allow_disjoint else "error",
            bench=bench,
            baseline_bench=baseline_bench,
        )
    comment = markdown(report, key=comment_key)
    rendered = {
        "text": lambda: plain_text(report, stored=True),
        "markdown": lambda: comment,
        "json": lambda: _json(report),
        "junit": lambda: junit_xml(report),
    }[fmt]()
    emit(rendered, output)
    for path, text in ((comment_path, comment), (junit_path, junit_xml(report) if junit_path else "")):
        if path:
            with atomic_writer(path) as f:
                f.write(text)
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        from rankgate.gate.github import write_step_summary

        write_step_summary(comment)
    if post_comment and pull_request is None:
        _notice_comment_skipped()
    elif post_comment:
        from rankgate.gate.github import post_or_update_comment

        posted = post_or_update_comment(comment, key=comment_key)
        click.echo(f"PR comment {posted.action}: {posted.url}", err=True)
    warn(report.current.warnings)
    ctx.exit(report.exit_code)


def _require_gate_extra() -> None:
    """Without the gate extra (pydantic, PyYAML): one line naming it and exit 2, never a traceback's
    exit 1, which CI reads as a failed gate."""
    from rankgate.extras import require

    for module in ("pydantic", "yaml"):
        require(module, "gate", purpose="rankgate gate")


@contextlib.contextmanager
def _options_named(baseline_runs: list[str]) -> Iterator[None]:
    """A qrels file given to --run or --baseline-run (a run to --qrels) is named by its option: gate
    takes its files as options, so eval's "pass the qrels first, then the run" would mislead."""
    from fnmatch import fnmatch

    from rankgate.errors import InputError
    from rankgate.io.hints import name_option

    try:
        yield
    except InputError as e:
        source = e.source or ""
        baseline = any(source == b or fnmatch(source, b) for b in baseline_runs)
        raise name_option(e, {"run": "--baseline-run" if baseline else "--run", "qrels": "--qrels"}) from None


def _notice_comment_skipped() -> None:
    """Say that --post-comment found no pull request (a push, a schedule): the exit code stays the verdict's."""
    event = (os.environ.get("GITHUB_EVENT_NAME") or "").strip()
    named = f" (event {event!r})" if event.isidentifier() else ""  # event names are words; echo nothing else
    text = f"not a pull request{named}: no PR comment posted"
    if os.environ.get("GITHUB_ACTIONS") == "true":
        click.echo(f"::notice title=rankgate::{text}", err=True)  # an annotation on the run, as the Action makes
    else:
        click.echo(f"rankgate: note: {text} (set RANKGATE_PULL_REQUEST to post to one)", err=True)


def _json(report: object) -> str:
    import json

    return json.dumps(report.to_dict(), indent=2, allow_nan=False)  # type: ignore[attr-defined]
