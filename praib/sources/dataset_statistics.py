"""The counts of a built dataset per venue and year: PRAIB's Table 3 (papers accepted, rejected and withdrawn,
and reviews, per venue and year), Table 7 (reviews per venue and year of a sample) and Table 8 (model-written
reviews per venue, year, model and prompt).

``praib data build`` writes them to ``statistics.json`` in the dataset folder (:data:`STATISTICS_FILE`), where
``praib tables`` reads them. Years are the venue's year groups (the editions that share one rating scale, as
PRAIB pools ICLR up to 2018 into "<=2018"; a venue without a scale file keeps its years). Only original papers
count (a counterfactual or perturbed variant shares its original's id); a paper's decision is an acceptance,
a rejection, a withdrawal or desk rejection (:func:`praib.sources.sampling.is_withdrawn`), or none of these.
"""

from __future__ import annotations

from typing import Any, Mapping

from datasets import Dataset

from praib._version import __version__
from praib.metrics.scores.distributions import decision_class
from praib.records import HUMAN_SOURCE, perturbation_kind
from praib.scales import UnknownScaleError, venue_scales
from praib.sources.sampling import is_withdrawn

STATISTICS_FILE = "statistics.json"
#: The ``statistics_of`` of the file, by which ``praib tables`` knows it.
DATA_BUILD = "praib data build"
UNKNOWN = "unknown"
PAPER_COUNTS = ("papers", "accepted", "rejected", "withdrawn", "undecided")


def _year_group(venue: str | None, year: int | None, cache: dict) -> str:
    if (venue, year) not in cache:
        try:
            cache[(venue, year)] = venue_scales(venue, year).year_group
        except UnknownScaleError:
            cache[(venue, year)] = str(year) if year is not None else UNKNOWN
    return cache[(venue, year)]


def _decision(decision: str | None) -> str:
    if is_withdrawn(decision):
        return "withdrawn"
    return {"accept": "accepted", "reject": "rejected"}.get(decision_class(decision), "undecided")


def _cell(table: dict, venue: str, group: str) -> dict:
    return table.setdefault(venue, {}).setdefault(group, {})


def _add(counts: dict, name: str, by: int = 1) -> None:
    counts[name] = counts.get(name, 0) + by


def dataset_statistics(configs: Mapping[str, Dataset]) -> dict[str, Any]:
    """Counts per venue and year group of the configs built (config name -> records): from ``papers`` the
    papers and their decisions, from ``reviews`` the human reviews, from ``generated_reviews`` (and the model
    reviews a ``reviews`` config holds) the reviews per model and prompt. A count whose config was not built is
    absent (the table prints it as missing), not 0.

    Returns ``{"statistics_of", "praib_version", "configs": [names], "venues": {venue: {"years": {group:
    counts}, "total": counts}}, "total": counts}``, where counts hold ``papers``, ``accepted``, ``rejected``,
    ``withdrawn``, ``undecided``, ``reviews``, ``generated_reviews`` and ``by_model`` ({model: {prompt: n}})
    as far as the configs give them."""
    years: dict[str, dict[str, dict]] = {}
    cache: dict = {}
    papers = configs.get("papers")
    if papers is not None:
        for row in papers.select_columns(["venue", "year", "decision", "perturbation"]):
            if perturbation_kind(row) is not None:
                continue
            venue = row["venue"] or UNKNOWN
            counts = _cell(years, venue, _year_group(row["venue"], row["year"], cache))
            _add(counts, "papers")
            _add(counts, _decision(row["decision"]))
    for name in ("reviews", "generated_reviews"):
        if configs.get(name) is None:
            continue
        for row in configs[name].select_columns(["venue", "year", "source", "model", "prompt", "perturbation"]):
            if perturbation_kind(row) is not None:
                continue
            counts = _cell(years, row["venue"] or UNKNOWN, _year_group(row["venue"], row["year"], cache))
            if name == "reviews" and row["source"] == HUMAN_SOURCE:
                _add(counts, "reviews")
                continue
            _add(counts, "generated_reviews")
            by_prompt = counts.setdefault("by_model", {}).setdefault(str(row["model"] or row["source"]), {})
            _add(by_prompt, str(row["prompt"] or UNKNOWN))
    wanted = _wanted(configs)
    venues = {}
    for venue, groups in sorted(years.items()):
        ordered = dict(sorted(groups.items(), key=lambda item: year_order(item[0])))
        venues[venue] = {"years": {group: _complete(counts, wanted) for group, counts in ordered.items()},
                         "total": _complete(_sum(ordered.values()), wanted)}
    return {"statistics_of": DATA_BUILD, "praib_version": __version__, "configs": sorted(configs),
            "venues": venues, "total": _complete(_sum(v["total"] for v in venues.values()), wanted)}


def _wanted(configs: Mapping[str, Dataset]) -> tuple[str, ...]:
    return ((PAPER_COUNTS if "papers" in configs else ()) + (("reviews",) if "reviews" in configs else ())
            + (("generated_reviews",) if {"reviews", "generated_reviews"} & set(configs) else ()))


def _complete(counts: dict, wanted: tuple[str, ...]) -> dict:
    """``counts`` with a 0 for every count its configs give but it has none of (a year without rejections)."""
    return {**{name: counts.get(name, 0) for name in wanted}, **counts}


def _sum(many) -> dict:
    total: dict = {}
    for counts in many:
        for name, value in counts.items():
            if name == "by_model":
                for model, prompts in value.items():
                    for prompt, n in prompts.items():
                        _add(total.setdefault("by_model", {}).setdefault(model, {}), prompt, n)
            else:
                _add(total, name, value)
    return total


def year_order(group: str) -> tuple:
    """The sort key of a year group: "<=2018" before "2019", by the first number in the name."""
    digits = "".join(c if c.isdigit() else " " for c in group).split()
    return (int(digits[0]) if digits else 10 ** 6, group)


def describe_statistics(folder) -> str:
    """``statistics.json: 8 papers (4 accepted, 4 rejected), 26 human reviews, 32 model reviews``: the totals of
    the file a build wrote in ``folder``."""
    import json
    from pathlib import Path

    total = json.loads((Path(folder) / STATISTICS_FILE).read_text(encoding="utf-8"))["total"]
    def counted(n: int, what: str) -> str:
        return f"{n} {what}{'s' if n != 1 else ''}"

    parts = []
    if "papers" in total:
        decided = [f"{total[name]} {name}" for name in PAPER_COUNTS[1:] if total[name]]
        parts.append(counted(total["papers"], "paper") + (f" ({', '.join(decided)})" if decided else ""))
    parts += [counted(total[name], what) for name, what in (("reviews", "human review"),
                                                             ("generated_reviews", "model review")) if name in total]
    return f"{STATISTICS_FILE}: {', '.join(parts) or 'no paper or review'}"
