"""``praib tables``: results laid out as the papers' own tables."""

from __future__ import annotations

import click

from praib.cli.common import output_option


@click.command()
@click.argument("results", nargs=-1, type=click.Path(path_type=str))
@click.option("--table", "-t", "keys", multiple=True,
              help="A table to render, e.g. praib-17 (repeatable; default: every table the results can fill). "
                   "`--list` names them.")
@click.option("--format", "-f", "fmt", type=click.Choice(["markdown", "latex"]), default="markdown", show_default=True,
              help="Markdown for reading, LaTeX (booktabs) for a paper.")
@click.option("--list", "list_tables", is_flag=True, help="Name every table with the result it is built from, and exit.")
@output_option("Write the tables to this file instead of standard output.", dir_okay=False)
def tables(results, keys, fmt, list_tables, output):
    """Lay out RESULTS (files written by `praib evaluate`, `praib robustness`, `praib counterfactual
    effects`, `praib leaderboard eras`, or a `praib leaderboard run` folder) as the papers' tables,
    with their rows, columns, units and rounding. A cell the results cannot fill prints as "—", and the
    table's notes name the input or option that fills it."""
    from praib.tables import PRODUCED_BY, TABLES, in_order, load_result, make_tables, unknown_tables

    if list_tables:
        for spec in in_order():
            click.echo(f"{spec.key:<22} {spec.paper} Table {spec.number}: {spec.title}  [from: {spec.produced_by}]")
        return
    if not results:
        raise click.UsageError("give one or more result files (or --list)")
    if unknown_tables(keys):
        raise click.BadParameter(f"no table {', '.join(unknown_tables(keys))}; `praib tables --list` names them",
                                 param_hint="--table")
    try:
        loaded = [load_result(path) for path in results]
        built = make_tables(loaded, list(keys) or None)
    except ValueError as err:
        raise click.ClickException(str(err)) from None
    text = "\n".join(table.to_latex() if fmt == "latex" else table.to_markdown() for table in built)
    if output:
        from praib.records.atomic import write_text_atomically

        write_text_atomically(output, text)
        click.echo(f"wrote {len(built)} tables to {output}", err=True)
    else:
        click.echo(text, nl=False)
    if not keys:
        others = sorted({spec.kind for spec in TABLES.values()} - {result.kind for result in loaded})
        if others:
            click.echo(f"{len([s for s in TABLES.values() if s.kind in others])} more tables need results of: "
                       + "; ".join(f"`{PRODUCED_BY[kind]}`" for kind in others), err=True)
