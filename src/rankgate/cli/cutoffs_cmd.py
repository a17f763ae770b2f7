"""``rankgate cutoffs``: a measure at several cutoffs, for one or more runs (choosing k)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from rankgate.cli.options import (
    Semantics,
    emit,
    format_option,
    measure_option,
    output_file_option,
    semantics_options,
    split_measures,
)

if TYPE_CHECKING:
    from rankgate.measures.registry import Measure

DEFAULT_KS = (1, 3, 5, 10, 20, 50, 100)


@click.command("cutoffs")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@measure_option(
    ("R", "nDCG"),
    dest="families",
    help="Measure family without a cutoff (R, nDCG, P, RR, AP, Success...). Default: R, nDCG.",
)
@click.option(
    "-k", "--k", "ks", default=",".join(map(str, DEFAULT_KS)), show_default=True, help="Cutoffs, separated by commas."
)
@format_option(["table", "json", "csv"])
@output_file_option
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
    from rankgate.measures.registry import Measure

    try:
        cutoffs = sorted({int(k) for k in ks.split(",") if k.strip()})
    except ValueError:
        raise ConfigError(f"--k takes whole numbers separated by commas. Got {ks!r} instead.", key_path="k") from None
    if not cutoffs or cutoffs[0] < 1:
        raise ConfigError(f"--k needs cutoffs >= 1. Got {ks!r} instead.", key_path="k")
    rel = semantics.settings.rel
    # family label (e.g. "P(rel=2)") -> its measures, one per cutoff
    rows: dict[str, list[Measure]] = {}
    for text in split_measures(families) or ["R", "nDCG"]:
        base = _family(text)
        at_k = [Measure.make(base.name, k, **dict(base.params)).with_defaults(rel=rel) for k in cutoffs]
        rows[str(at_k[0]).rsplit("@", 1)[0]] = at_k
    measures = [m for at_k in rows.values() for m in at_k]
    session = semantics.session(qrels, measures)
    table: dict[str, dict[str, float]] = {}
    for path in runs:
        res = session.evaluate(path, run_format=semantics.run_format)
        name = res.run_name or path
        if name in table:  # two runs with the same file stem: tell them apart by path
            name = path
        table[name] = res.aggregate
    if fmt == "json":
        emit(json.dumps({"cutoffs": cutoffs, "runs": table}, indent=2), output)
        return
    if fmt == "csv":
        emit(_csv(table, rows, cutoffs), output)
        return
    from rich.table import Table

    from rankgate.render.terminal import to_text

    t = Table(title="measure at cutoff k (mean over queries)")
    t.add_column("run", no_wrap=True)  # run and measure names: never shrunk (render.terminal)
    t.add_column("measure", no_wrap=True)
    for k in cutoffs:
        t.add_column(f"@{k}", justify="right")
    for run, agg in table.items():
        for family, at_k in rows.items():
            t.add_row(run, family, *(f"{agg[str(m)]:.3f}" for m in at_k))
    emit(to_text(t), output)


def _family(text: str) -> Measure:
    """A measure family without its cutoff: ``P``, ``recall``, ``nDCG(gain=exp)``."""
    from rankgate.errors import ConfigError, MeasureError
    from rankgate.measures.parse import parse_measure

    try:  # families such as P need a cutoff to parse; any k will do, --k replaces it
        with_k = parse_measure(f"{text}@1")
    except MeasureError:
        with_k = None
    if with_k is not None and "@" not in text:
        return with_k
    measure = parse_measure(text)
    if measure.cutoff is not None:
        raise ConfigError(f"Give measures without a cutoff (e.g. {measure.name}); --k sets them. Got {measure}.")
    raise ConfigError(f"{measure} takes no cutoff, so it cannot be tabulated against k.")


def _csv(table: dict[str, Any], rows: dict[str, Any], cutoffs: list[int]) -> str:
    """One row per run and measure family, a column per cutoff; run names quoted and defused."""
    import csv
    import io

    from rankgate.render.escape import csv_cell

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["run", "measure", *(f"k={k}" for k in cutoffs)])
    for run, agg in table.items():
        for family, at_k in rows.items():
            writer.writerow([csv_cell(run), family, *(repr(agg[str(m)]) for m in at_k)])
    return buf.getvalue()
