"""``rankgate report``: one self-contained HTML file from eval, compare, gate and bench JSON, and the store."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

import click

from rankgate.cli.options import store_option


@click.command("report")
@click.argument("inputs", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--out",
    "out",
    default="rankgate-report.html",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="The HTML file to write (atomically).",
)
@store_option(
    "Results store for the history charts: a SQLite path, sqlite:///PATH or postgresql://... "
    "[env: RANKGATE_STORE]. Without INPUT files, the store's baseline and latest result are reported."
)
@click.option(
    "--targets",
    "targets",
    type=click.Path(dir_okay=False),
    help="YAML of metric targets for the guidance table (default: R@10>=0.85, P@10>=0.5, nDCG@10>=0.8, MRR>=0.7).",
)
@click.option(
    "--queries",
    "queries",
    type=click.Path(dir_okay=False),
    help="Queries JSONL (BEIR: _id, text), to show query text beside query ids.",
)
@click.option("--title", default="rankgate report", show_default=True, help="The page title.")
@click.option("--branch", help="History: results of this branch only.")
@click.option("--name", "system_name", help="History: results of this system name only.")
@click.option("--baseline-key", default="default", show_default=True, help="History: which stored baseline to mark.")
@click.option(
    "--history-limit", type=click.IntRange(min=1), default=200, show_default=True, help="History: newest N results."
)
@click.option(
    "--export",
    "export_dir",
    type=click.Path(file_okay=False),
    help="Also write every chart as an image into this folder (needs kaleido and Chrome/Chromium).",
)
@click.option(
    "--export-format", type=click.Choice(["svg", "png"]), default="svg", show_default=True, help="Image format."
)
@click.option("-q", "--quiet", is_flag=True, help="No progress display on stderr.")
def report_command(
    inputs: tuple[str, ...],
    out: str,
    store_url: str | None,
    targets: str | None,
    queries: str | None,
    title: str,
    branch: str | None,
    system_name: str | None,
    baseline_key: str,
    history_limit: int,
    export_dir: str | None,
    export_format: str,
    quiet: bool,
) -> None:
    """Write an HTML report (one file, viewable offline) with plots, guidance and history.

    INPUT files are JSON written by `rankgate eval|compare|cutoffs|gate|bench --format json`
    (or `rankgate demo --format json`); plain or compressed. The report shows the verdict,
    metric-against-k curves, per-query deltas, a per-tag breakdown with confidence
    intervals, judged-fraction warnings, recall against throughput (bench), targets with
    suggestions, and with --store the history of each gated metric, baseline marked.

    \b
    Examples:
      rankgate eval qrels.txt dense.txt -m R@5,R@10,R@20,nDCG@10,Judged@10 --per-query --format json -o dense.json
      rankgate gate --qrels qrels.txt --run new.txt --config gates.yaml --store results.db --format json > gate.json
      rankgate report dense.json gate.json --store results.db --out report.html
      rankgate report compare.json bench.json --targets targets.yaml --out report.html --export charts/
      rankgate report --store results.db --branch main --out history.html
    """
    from rankgate.errors import InputError
    from rankgate.report.html import write_report
    from rankgate.report.inputs import load_inputs, read_query_texts

    if not inputs and not store_url:
        raise click.UsageError("give at least one INPUT.json, or --store URL to report on stored results")
    steps = len(inputs) + 4 + (1 if export_dir else 0) + (1 if queries else 0)
    with _progress(steps, enabled=not quiet and sys.stderr.isatty()) as step:
        loaded: list[Any] = []
        for path in inputs:
            step(f"reading {path}")
            loaded.extend(load_inputs([path]))
        if not inputs:
            step("reading the stored results")
            loaded = stored_inputs(store_url, branch=branch, name=system_name, baseline_key=baseline_key)
        texts = None
        if queries:
            step(f"reading {queries}")
            texts = read_query_texts(queries)
        if not loaded:
            raise InputError("the store holds no results to report on", source=store_url)
        written = write_report(
            out,
            loaded,
            store=store_url,
            targets=targets,
            title=title,
            branch=branch,
            name=system_name,
            baseline_key=baseline_key,
            history_limit=history_limit,
            query_texts=texts,
            export_dir=export_dir,
            export_format=export_format,
            progress=step,
        )
    click.echo(f"wrote {written} ({written.stat().st_size / 1e6:.1f} MB)")
    if export_dir:
        click.echo(f"charts as {export_format.upper()} in {export_dir}")


def stored_inputs(
    store_url: str | None, *, branch: str | None = None, name: str | None = None, baseline_key: str = "default"
) -> list[dict[str, Any]]:
    """The store's baseline and its latest result (of ``branch``/``name``) as eval inputs, baseline first."""
    from rankgate.store.base import open_store

    with open_store(store_url, read_only=True) as store:
        base = store.baseline(key=baseline_key)
        latest = store.latest(branch=branch, name=name)
        chosen = [r for r in (base, latest) if r is not None]
        if len(chosen) == 2 and chosen[0].id == chosen[1].id:
            chosen = chosen[:1]
        out = []
        for r in chosen:
            data = r.to_dict(per_query=True)
            role = "baseline" if base is not None and r.id == base.id else "latest"
            label = f"{r.name} #{r.id}" if len(chosen) == 2 and chosen[0].name == chosen[1].name else r.name
            out.append(
                {"kind": "eval", "source": f"{store.url} result {r.id} ({role})", "data": {**data, "run": label}}
            )
        return out


@contextlib.contextmanager
def _progress(total: int, *, enabled: bool, console: Any = None) -> Iterator[Callable[[str], None]]:
    """A rich progress bar (on stderr unless ``console`` is given); yields ``step(description)``,
    which advances it by one step and shows the description."""
    if not enabled:
        yield lambda _message: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}", markup=False),  # descriptions name files: brackets stay
        BarColumn(),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
        transient=True,
    )
    with bar:
        task = bar.add_task("report", total=total)
        first = True

        def step(message: str) -> None:
            nonlocal first
            if not first:
                bar.advance(task, 1)
            first = False
            bar.update(task, description=message)
            bar.refresh()  # steps are few and some are quick: show each one

        yield step
        bar.update(task, completed=total)
