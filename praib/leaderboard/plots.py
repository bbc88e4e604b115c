"""The leaderboard report's plots, drawn with matplotlib's Agg canvas into PNG bytes.

Figures are built with the object-oriented API (no pyplot, so no global state and no
display backend). Names from submissions are drawn with mathtext off, so a "$" in a
name is printed, never interpreted. Every function takes what it draws, titles included
(the report lays them out), and returns PNG bytes.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from praib.records import HUMAN_SOURCE

HUMAN_COLOUR, MODEL_COLOUR, SPREAD_COLOUR, POST_ERA_COLOUR = "#7f7f7f", "#1f77b4", "#cfdcea", "#fbe3c8"
# Longer submission names are cut on the axes (the tables carry them in full).
NAME_WIDTH = 28


def _short(name: str) -> str:
    return name if len(name) <= NAME_WIDTH else name[:NAME_WIDTH - 1] + "…"


def _png(figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()


def _figure(n_panels: int, ncols: int, panel_size: tuple[float, float], sharey: bool = False):
    from matplotlib.figure import Figure

    ncols = max(1, min(ncols, n_panels))
    nrows = -(-n_panels // ncols)
    figure = Figure(figsize=(panel_size[0] * ncols, panel_size[1] * nrows), layout="constrained")
    axes = figure.subplots(nrows, ncols, squeeze=False, sharey=sharey).ravel()
    for ax in axes[n_panels:]:
        ax.set_visible(False)
    return figure, axes[:n_panels]


def score_distribution_png(group: dict) -> bytes | None:
    """Grouped bars of the share of reviews per scale value, the submission's group against the
    human reviews, one panel per venue-year: ratings on the first row, confidences on the second.
    ``group`` is one non-reference entry of the ``groups`` of a submission's details
    (``EvaluationResult.to_dict()``). None when no venue-year has both distributions."""
    panels = []
    for kind in ("rating", "confidence"):
        for venue_year, entry in (group.get(f"{kind}_distribution") or {}).items():
            model, human = entry.get("model"), entry.get("human")
            if model and human and None not in model.values() and None not in human.values():
                panels.append((kind, venue_year, model, human, entry.get("n_model"), entry.get("n_human")))
    if not panels:
        return None
    import numpy as np

    per_row = max(sum(p[0] == "rating" for p in panels), sum(p[0] == "confidence" for p in panels))
    figure, axes = _figure(len(panels), per_row, (3.6, 2.8))
    for ax, (kind, venue_year, model, human, n_model, n_human) in zip(axes, panels):
        values = list(model)
        x = np.arange(len(values))
        ax.bar(x - 0.2, [human[v] for v in values], 0.4, color=HUMAN_COLOUR, label=f"human (n={n_human})")
        ax.bar(x + 0.2, [model[v] for v in values], 0.4, color=MODEL_COLOUR, label=f"submission (n={n_model})")
        ax.set_xticks(x, values)
        ax.set_xlabel(kind)
        ax.set_ylabel("share of reviews")
        ax.set_ylim(0, 1)
        ax.set_title(f"{kind}: {venue_year}", fontsize=10, parse_math=False)
        ax.legend(fontsize=7, frameon=False)
    return _png(figure)


@dataclass
class IntervalPanel:
    """One metric of :func:`metric_intervals_png`: its title, each source's result row (``value``, ``ci_low``,
    ``ci_high``, ``human_value``) in the order the sources are drawn, and the (mean, std) of a source's
    per-review values where known."""

    title: str
    rows: dict[str, dict]
    spreads: dict[str, tuple[float, float]] = field(default_factory=dict)


def metric_intervals_png(panels: list[IntervalPanel]) -> bytes | None:
    """One panel per metric (pooled over venues): every source's value with its 95% CI as a thin
    error bar, the spread of its per-review values as a wide pale bar, and the human value as a
    dashed line. None when no panel has a row."""
    panels = [panel for panel in panels if panel.rows]
    if not panels:
        return None
    sources = list(dict.fromkeys(source for panel in panels for source in panel.rows))
    position = {source: len(sources) - 1 - i for i, source in enumerate(sources)}
    figure, axes = _figure(len(panels), 4, (2.6, 0.9 + 0.4 * len(sources)), sharey=True)
    for ax, panel in zip(axes, panels):
        rows = panel.rows
        for source, row in rows.items():
            y, value = position[source], row["value"]
            if source in panel.spreads:
                mean, std = panel.spreads[source]
                ax.errorbar([mean], [y], xerr=[std], fmt="none", ecolor=SPREAD_COLOUR, elinewidth=7, zorder=1)
            if row["ci_low"] is not None and row["ci_high"] is not None:
                # Drawn about the interval's midpoint: a percentile interval need not contain the value
                # (a biased statistic such as a total variation on few reviews).
                low, high = row["ci_low"], row["ci_high"]
                ax.errorbar([(low + high) / 2], [y], xerr=[(high - low) / 2], fmt="none", ecolor="#444", capsize=3)
            ax.scatter([value], [y], color=HUMAN_COLOUR if source == HUMAN_SOURCE else MODEL_COLOUR, zorder=3)
        human = rows[HUMAN_SOURCE]["value"] if HUMAN_SOURCE in rows else next(
            (r["human_value"] for r in rows.values() if r["human_value"] is not None), None)
        if human is not None:
            ax.axvline(human, color=HUMAN_COLOUR, linestyle="--", linewidth=1)
        ax.set_title(panel.title, fontsize=10)
    axes[0].set_yticks(list(position.values()), [_short(s) for s in position])
    for label in axes[0].get_yticklabels():
        label.set_parse_math(False)
    axes[0].set_ylim(-0.7, len(sources) - 0.3)
    return _png(figure)


def era_trends_png(series: list[dict]) -> bytes | None:
    """Yearly means of human review metrics, one panel per venue and metric, with the post-LLM
    years shaded. ``series`` holds ``{"title", "years": [...], "means": [...], "first_post_year": int
    | None}`` entries, optionally with ``"year_labels"`` (the tick labels, e.g. "<=2018" for a year
    group). None when it is empty."""
    if not series:
        return None
    figure, axes = _figure(len(series), 4, (3.2, 2.5))
    for ax, entry in zip(axes, series):
        years, means = entry["years"], entry["means"]
        ax.plot(years, means, marker="o", color=MODEL_COLOUR)
        if entry.get("first_post_year") is not None:
            ax.axvspan(entry["first_post_year"] - 0.5, max(years) + 0.5, color=POST_ERA_COLOUR, zorder=0)
        ax.set_xticks(years, entry.get("year_labels") or [str(y) for y in years])
        ax.set_title(entry["title"], fontsize=9, parse_math=False)
    return _png(figure)
