"""``praib report``: the leaderboard report of a results directory."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("report")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The HTML page to write (self-contained: styles and plots inline).")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the report's tables as Markdown here.")
@click.option("--title", default="praib leaderboard", show_default=True, help="Title of the page.")
def report(directory, output, markdown, title):
    """Write the leaderboard report of DIRECTORY (written by `praib leaderboard run`): PRAIB's
    Table 1 with 95% CIs and distances to the human reference, coverage, target/aspect,
    robustness and treatment-effect tables when computed, score-distribution plots and the
    pre/post-LLM era comparison of the human reviews."""
    from praib.leaderboard.report import ReportError, write_report

    try:
        sections = write_report(directory, output, markdown, title)
    except ReportError as err:
        raise click.ClickException(str(err)) from None
    shown = [s.title for s in sections if s.tables or s.plots]
    left_out = [s.title for s in sections if not (s.tables or s.plots)]
    n_tables = sum(len(s.tables) for s in sections)
    n_plots = sum(len(s.plots) for s in sections)
    click.echo(f"wrote {output} ({n_tables} tables, {n_plots} plots)" + (f" and {markdown}" if markdown else ""))
    click.echo("sections: " + ", ".join(shown))
    if left_out:
        click.echo("left out (no data): " + ", ".join(left_out))
