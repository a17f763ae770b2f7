"""``rankgate demo``: the main job on the embedded demo collection."""

from __future__ import annotations

from typing import Any

import click

from rankgate.extras import install_hint

DEMO_MEASURES = ("nDCG@10", "R@10", "P@10", "RR@10", "AP", "Judged@10")


DEFAULT_REPORT = "rankgate-demo-report.html"


@click.command("demo")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False),
    default=DEFAULT_REPORT,
    show_default=True,
    help="Where to write the HTML report (needs the report and gate extras).",
)
@click.option("--no-report", is_flag=True, help="Write no HTML report.")
@click.option("--no-bench", is_flag=True, help="Skip the BM25/MiniLM benchmark (needs the bench extra).")
@click.option("--no-retrieve", is_flag=True, help="Skip asking a local search service (needs retrieve, bench).")
def demo_command(fmt: str, report_path: str, no_report: bool, no_bench: bool, no_retrieve: bool) -> None:
    """Evaluate, benchmark, gate and report on the built-in demo collection.

    The collection is synthetic, written for rankgate: 200 documents on five topics,
    63 queries tagged by topic and difficulty, graded judgments 0-3, and four runs.
    With every extra installed (pip install 'rankgate[demo]') the demo evaluates the runs,
    benchmarks BM25 against MiniLM (exact and HNSW), gates a candidate run against a stored
    baseline as CI would, asks a local BM25 search service over HTTP for a run (rankgate retrieve),
    prints the PR comment and writes an HTML report. Parts whose extra
    is missing are skipped, saying which extra to install.

    \b
    Examples:
      rankgate demo
      rankgate demo --report out/demo.html
      rankgate demo --no-bench --no-report --format json
      rankgate demo --no-bench --no-retrieve
    """
    import json
    from datetime import datetime, timezone

    from rankgate.data import demo_dir

    results, qrels = _evaluate_runs()
    now = datetime.now(timezone.utc)  # when main's baseline was "recorded", in the terminal and the report
    by_difficulty = _by_difficulty(results)
    if fmt == "json":
        gate = _demo_gate(qrels, now)
        bench = None if no_bench else _demo_bench()
        retrieved = None if no_retrieve else _demo_retrieve(qrels)
        report, _ = (None, None) if no_report else _write_report(report_path, bench, qrels, now)
        out = {
            "dataset": str(demo_dir()),
            "runs": {name: res.to_dict() for name, res in results.items()},
            "nDCG@10_by_difficulty": {
                name: {level: g.aggregate["nDCG@10"] for level, g in groups.items()}
                for name, groups in by_difficulty.items()
            },
            "gate": gate.to_dict() if gate is not None else None,
            "bench": bench.rows() if bench is not None else None,
            "retrieve": retrieved,
            "report": str(report) if report is not None else None,
        }
        click.echo(json.dumps(out, indent=2))
        return
    # Each part is printed as soon as it is ready: the evaluation takes a second, the benchmark a minute.
    console = _print_results(results, by_difficulty, qrels)
    bench = None if no_bench else _demo_bench()
    if not no_bench:
        _print_bench(console, bench)
    if not no_retrieve:
        _print_retrieve(console, _demo_retrieve(qrels))
    _print_gate(console, _demo_gate(qrels, now))
    if not no_report:
        report, skipped = _write_report(report_path, bench, qrels, now)
        console.print(f"HTML report: {report}" if report is not None else skipped, style=None if report else "dim")
    console.print("Try: rankgate eval QRELS RUN -m nDCG@10 --per-query   (rankgate measures lists every measure)")
    console.print(
        "Browse stored results in a web dashboard (the demo's store is temporary): rankgate store add "
        "QRELS RUN --store results.db, then rankgate serve --store results.db   (docs/dashboard.md)"
    )


DIFFICULTIES = ("easy", "medium", "hard")


def _evaluate_runs() -> tuple[dict[str, Any], Any]:
    """Every demo run evaluated in one session (the qrels read once), and the qrels."""
    from rankgate.data import DEMO_RUNS, demo_qrels_path, demo_run_path
    from rankgate.evaluation.session import Session

    session = Session.open(demo_qrels_path(), DEMO_MEASURES)
    evaluated = session.evaluate_all([demo_run_path(name) for name in DEMO_RUNS])
    return dict(zip(DEMO_RUNS, evaluated, strict=True)), session.qrels


def _by_difficulty(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each run's query groups by difficulty (`Results.by_group`), easy to hard."""
    from rankgate.data import demo_query_tags

    tags = demo_query_tags()
    out = {}
    for name, res in results.items():
        groups = res.by_group(tags, group_by=["difficulty"], untagged=None)["difficulty"]
        out[name] = {level: groups[level] for level in DIFFICULTIES}
    return out


def _print_results(results: dict[str, Any], by_difficulty: dict[str, dict[str, Any]], qrels: Any) -> Any:
    """The quality tables and the runs' warnings; returns the console."""
    from rich.table import Table

    from rankgate.data import demo_dir
    from rankgate.render.terminal import console as make_console
    from rankgate.render.terminal import styled

    console = make_console()
    first = next(iter(results.values()))
    console.print(
        styled(
            ("rankgate demo", "bold"),
            f": {first.queries['evaluated']} queries, {qrels.num_rows} judgments (grades 0-3), "
            f"{len(results)} runs; data in {demo_dir()}",
        )
    )
    t = Table(title="Retrieval quality (mean over queries)")
    t.add_column("run")
    for m in DEMO_MEASURES:
        t.add_column(m, justify="right")
    for name, res in results.items():
        t.add_row(name, *(f"{v:.3f}" for v in res.aggregate.values()))
    console.print(t)
    d = Table(title="nDCG@10 by query difficulty")
    d.add_column("run")
    for level, group in next(iter(by_difficulty.values())).items():
        d.add_column(f"{level} ({group.n})", justify="right")
    for name, groups in by_difficulty.items():
        d.add_row(name, *(f"{g.aggregate['nDCG@10']:.3f}" for g in groups.values()))
    console.print(d)
    errors = make_console(stderr=True)
    for name, res in results.items():
        for w in res.warnings:
            errors.print(f"{name}: {w}", style="dim")
    return console


def _demo_gate(qrels: Any, now: Any) -> Any:
    """Gate the candidate dense_v2 against dense; None when the gate extra is not installed."""
    from rankgate.extras import installed

    if not installed("gate"):
        return None
    from rankgate.data import DEMO_CANDIDATE, demo_gates_path, demo_run_path
    from rankgate.gate.config import load_config
    from rankgate.gate.runner import run_gate
    from rankgate.report.demo import record_demo_history
    from rankgate.store.base import open_store

    config = load_config(demo_gates_path())
    # As in CI: main's runs were recorded and today's made the baseline; a pull request's run is
    # gated against it. The report records the same history, so both name the same baseline.
    with open_store(":memory:") as store:
        record_demo_history(store, qrels, config, now=now)
        return run_gate(qrels, demo_run_path(DEMO_CANDIDATE), config, store=store)


def _print_gate(console: Any, report: Any) -> None:
    from rankgate.data import demo_gates_path
    from rankgate.render.gate import markdown, plain_text
    from rankgate.render.terminal import styled

    console.print()
    if report is None:
        console.print(f"{install_hint('gate')} to gate a candidate run as CI would (rankgate gate)", style="dim")
        return
    console.print(
        styled(
            ("CI gate", "bold"),
            ": a candidate ",
            ("dense_v2", "italic"),
            " (a new embedding model) against the stored baseline ",
            ("dense", "italic"),
            f", with {demo_gates_path()}",
        )
    )
    console.print(plain_text(report))
    console.rule("PR comment (Markdown, as posted by --post-comment)")
    console.print(markdown(report), soft_wrap=True)
    console.rule()
    console.print(
        f"The gate exits {report.exit_code} here ({report.verdict}): in CI that stops the merge. "
        "Run it yourself: rankgate gate --qrels QRELS --run RUN --config gates.yaml --baseline-run BASE "
        "(or --store results.db to compare with a stored baseline; see docs/gate.md)"
    )


def _demo_bench() -> Any:
    """The BM25/MiniLM benchmark (a `BenchReport`); None when the bench extra is not installed."""
    from rankgate.bench.demo import bench_available, demo_bench_report

    return demo_bench_report(progress=True) if bench_available() else None


def _demo_retrieve(qrels: Any) -> dict[str, Any] | None:
    """Ask a local BM25 service for the demo queries (rankgate retrieve): its summary with the run's
    nDCG@10, or None when the retrieve or bench extra is missing."""
    import tempfile

    from rankgate.evaluation.evaluate import evaluate
    from rankgate.retrieve.demo_service import demo_retrieve

    with tempfile.TemporaryDirectory(prefix="rankgate-demo-") as folder:
        report = demo_retrieve(folder)
        if report is None:
            return None
        summary: dict[str, Any] = report.to_dict()
        summary["nDCG@10"] = evaluate(qrels, report.run, ["nDCG@10"]).aggregate["nDCG@10"]
    summary["run"] = None  # the temporary folder is gone
    return summary


def _print_retrieve(console: Any, summary: dict[str, Any] | None) -> None:
    from rankgate.render.retrieve import summary_text
    from rankgate.render.terminal import styled

    console.print()
    if summary is None:
        hint = install_hint("retrieve,bench")
        console.print(f"{hint} to ask a local search service (rankgate retrieve)", style="dim")
        return
    console.print(styled(("Live retriever", "bold"), ": a BM25 search service on a local port, asked over HTTP"))
    console.print(summary_text(summary))
    console.print(f"nDCG@10 of the run it returned: {summary['nDCG@10']:.3f}")
    console.print(
        "Yours: rankgate retrieve --queries queries.jsonl --retriever search.yaml -k 100 -o run.txt "
        "(an http, python or vector-database SPEC; see docs/retrieve.md)",
        style="dim",
    )


def _print_bench(console: Any, bench: Any) -> None:
    from rankgate.render.bench import demo_table

    if bench is None:
        console.print(f"{install_hint('bench')} to benchmark BM25 and MiniLM (rankgate bench demo)", style="dim")
    else:
        console.print(demo_table(bench.rows()))
        console.print(
            "This benchmark builds its own BM25 and MiniLM runs from the corpus; the quality table above "
            "scores the run files shipped with the demo, so the two bm25 rows differ.",
            style="dim",
        )


def _write_report(path: str, bench: Any, qrels: Any, now: Any) -> tuple[Any, str | None]:
    """Write the HTML report: (its path, None), or (None, why not) when an extra is missing."""
    from rankgate.errors import BackendError

    try:
        from rankgate.report.demo import demo_report

        return demo_report(path, bench=bench.to_dict() if bench is not None else None, qrels=qrels, now=now), None
    except ImportError:
        return None, f"{install_hint('report,gate')} to also write the HTML report"
    except BackendError as e:
        return None, f"HTML report not written: {e}"
