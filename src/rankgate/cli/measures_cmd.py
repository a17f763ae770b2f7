"""``rankgate measures``: the measure registry, for people and for scripts."""

from __future__ import annotations

import json

import click


@click.command("measures")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown", "docs"]),
    default="table",
    show_default=True,
    help="docs: the reference page docs/measures.md, in Markdown.",
)
@click.argument("names", nargs=-1)
def measures_command(fmt: str, names: tuple[str, ...]) -> None:
    """List every measure with its definition, parameters and aliases.

    With NAMES, show how each name is read (its canonical form).

    \b
    Examples:
      rankgate measures
      rankgate measures --format docs > docs/measures.md
      rankgate measures ndcg_cut.10 mrr@10 hit_rate@5 ndcg_cut 'nDCG(cutoff=20)'
    """
    from rankgate.measures.parse import read_name
    from rankgate.measures.registry import all_specs

    if names:
        for n in names:  # trec_eval's ndcg_cut reads as nine measures
            click.echo(f"{n}\t{', '.join(str(m) for m in read_name(n))}")
        return
    if fmt == "docs":
        from rankgate.measures.docs import markdown

        click.echo(markdown(), nl=False)
        return
    specs = all_specs()
    if fmt == "json":
        rows = [
            {
                "name": s.name,
                "summary": s.summary,
                "definition": s.definition,
                "cutoff": s.cutoff,
                "parameters": [
                    {
                        "name": p.name,
                        "default": p.default,
                        "doc": p.doc,
                        **({"choices": list(p.choices)} if p.choices else {}),
                    }
                    for p in s.params
                ],
                "higher_is_better": s.higher_is_better,
                "bounds": [s.bounds[0], None if s.bounds[1] == float("inf") else s.bounds[1]],
                "aggregate": s.aggregate,
                "trec_eval": s.trec_eval,
                "aliases": list(s.listed_aliases),
                "examples": list(s.examples),
            }
            for s in specs
        ]
        click.echo(json.dumps(rows, indent=2))
        return
    if fmt == "markdown":
        lines = ["| measure | definition | parameters | trec_eval | aliases |", "|---|---|---|---|---|"]
        for s in specs:
            params = "; ".join(f"`{p.name}` (default {p.default}): {p.doc}" for p in s.params) or "-"
            examples = ", ".join(f"`{e}`" for e in s.examples)
            aliases = ", ".join(f"`{a}`" for a in s.listed_aliases) or "-"
            cells = [examples, s.definition, params, s.trec_eval or "-", aliases]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        click.echo("\n".join(lines))
        return
    from rich.table import Table

    from rankgate.render.terminal import console, styled

    t = Table(show_lines=True)
    t.add_column("measure", no_wrap=True)
    t.add_column("definition")
    t.add_column("parameters")
    t.add_column("aliases")
    for s in specs:
        params = "\n".join(f"{p.name}={p.default}: {p.doc}" for p in s.params) or "-"
        aliases = "\n".join(s.listed_aliases) or "-"
        t.add_row("\n".join(s.examples), styled((s.summary, "bold"), "\n" + s.definition), params, aliases)
    console().print(t)
