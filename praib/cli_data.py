"""``praib data``: collect, convert, verify and publish the benchmark's records."""

from __future__ import annotations

import click


@click.group()
def data() -> None:
    """Build the benchmark's datasets: OpenReview collection, paper text, citations, Hub publishing."""
