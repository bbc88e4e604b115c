"""`praib metrics export`: praib's evaluate modules as Hugging Face Space repositories."""

from __future__ import annotations

import click

from praib.cli.common import output_option


@click.group()
def metrics():
    """praib's metrics as `evaluate` modules."""


@metrics.command()
@output_option("Folder to write one Space repository per module into (<name>/ each).", default="metric-spaces",
               file_okay=False, writes=None)
@click.option("--org", default="praib", show_default=True,
              help="The Hub organisation (or user) the modules will live under: their cards load ORG/<name>.")
def export(output, org):
    """Write each evaluate module (the metrics/<name> folders) as a Space repository: the module, its card
    with the Space's YAML header, app.py (evaluate's widget) and requirements.txt. Upload one with
    `hf upload ORG/<name> OUTPUT/<name> --repo-type space`; then `evaluate.load("ORG/<name>")` works."""
    from praib.metrics.spaces import ExportError, export_modules

    try:
        written = export_modules(output, org)
    except ExportError as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"wrote {len(written)} module Spaces into {output}: {', '.join(p.name for p in written)}")
    click.echo(f"upload each with `hf upload {org}/NAME {output}/NAME --repo-type space`")
