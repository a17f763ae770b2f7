"""``rankgate cutoffs``: a measure at several cutoffs, for one or more runs (choosing k)."""

from __future__ import annotations

import json

import click

from rankgate.cli.options import Semantics, emit, semantics_options, split_measures

DEFAULT_KS = (1, 3, 5, 10, 20, 50, 100)


@click.command("cutoffs")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "-m",
    "--measure",
    "families",
    multiple=True,
    metavar="MEASURE",
    help="Measure family without a cutoff (R, nDCG, P, RR, AP, Success...). Default: R, nDCG.",
)
@click.option(
    "-k", "--k", "ks", default=",".join(map(str, DEFAULT_KS)), show_default=True, help="Cutoffs, separated by commas."
)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write the output to this file.")
@semantics_options
def cutoffs_command(
    qrels: str,
    runs: tuple[str, ...],
    families: tuple[str, ...],
    ks: str,
    fmt: str,
    output: str | None,
    semantics: Semantics,
) -> None:
    """Tabulate measures at several cutoffs k, to choose the top-k of a RAG pipeline.

    \b
    Examples:
      rankgate cutoffs qrels.txt run.txt
      rankgate cutoffs qrels.txt bm25.txt dense.txt -m R -m nDCG -k 1,5,10,20
    """
    from rankgate.errors import ConfigError
    from rankgate.measures.evaluate import evaluate
    from rankgate.measures.parse import parse_measure
    from rankgate.measures.registry import Measure

    try:
        cutoffs = sorted({int(k) for k in ks.split(",") if k.strip()})
    except ValueError:
        raise ConfigError(f"--k takes whole numbers separated by commas. Got {ks!r} instead.", key_path="k") from None
    if not cutoffs or cutoffs[0] < 1:
        raise ConfigError(f"--k needs cutoffs >= 1. Got {ks!r} instead.", key_path="k")
    bases = [parse_measure(f) for f in (split_measures(families) or ["R", "nDCG"])]
    for b in bases:
        if b.cutoff is not None:
            raise ConfigError(f"Give measures without a cutoff (e.g. {b.name}); --k sets them. Got {b}.")
    measures = [Measure.make(b.name, k, **dict(b.params)) for b in bases for k in cutoffs]
    rel = semantics.rel
    q = semantics.read_qrels(qrels)
    table: dict[str, dict[str, float]] = {}
    for path in runs:
        r = semantics.read_run(path)
        res = evaluate(q, r, measures, **semantics.evaluate_options())
        table[r.name or path] = res.aggregate
    names = [str(m.with_defaults(rel=rel)) for m in measures]
    if fmt == "json":
        emit(json.dumps({"cutoffs": cutoffs, "runs": table}, indent=2), output)
        return
    if fmt == "csv":
        lines = ["run,measure," + ",".join(f"k={k}" for k in cutoffs)]
        for run, agg in table.items():
            for b in bases:
                row = [f"{agg[n]!r}" for n in names if n.split("@")[0] == str(b.with_defaults(rel=rel))]
                lines.append(f"{run},{b.with_defaults(rel=rel)}," + ",".join(row))
        emit("\n".join(lines) + "\n", output)
        return
    from rich.table import Table

    from rankgate.report.eval_output import to_text

    t = Table(title="measure at cutoff k (mean over queries)")
    t.add_column("run")
    t.add_column("measure")
    for k in cutoffs:
        t.add_column(f"@{k}", justify="right")
    for run, agg in table.items():
        for b in bases:
            family = str(b.with_defaults(rel=rel))
            t.add_row(run, family, *(f"{agg[n]:.3f}" for n in names if n.split("@")[0] == family))
    emit(to_text(t), output)
