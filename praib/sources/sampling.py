"""Balanced accept/reject samples of papers per venue-year, as the PRAIB benchmark draws them.

For every venue-year, half of the papers asked for are accepted and half rejected
(100 per venue-year by default: 50 and 50; with an odd number the accepted side
gets the extra paper). PRAIB draws 100 papers in each of the five years 2021-2025 per
venue: ``sample_records(papers, years=range(2021, 2026))``, or
``praib data sample --year 2021 ... --year 2025``. Withdrawn and desk-rejected papers are left out unless
``include_withdrawn`` is set, in which case they count as rejected. Papers whose
decision is neither an acceptance nor a rejection are never drawn.

The draw is reproducible and independent of the order of the input: each
candidate's rank is the SHA-256 of ``"{seed}/{venue}/{year}/{paper_id}"``, and the
papers with the lowest ranks in each class are taken. The same seed therefore
gives the same papers from the same pool, however the records were sorted or
sharded, and adding papers to a pool only displaces the papers they outrank.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Iterable

from datasets import Dataset

from praib.metrics.scores.distributions import decision_class
from praib.records import perturbation_kind

_NOT_REVIEWED_WORDS = ("withdraw", "desk")


class SamplingError(ValueError):
    """A venue-year has too few papers of a class for the sample asked for."""


def is_withdrawn(decision: str | None) -> bool:
    """True for withdrawn and desk-rejected papers ("Withdrawn", "Desk rejected", ...)."""
    return isinstance(decision, str) and any(word in decision.lower() for word in _NOT_REVIEWED_WORDS)


def _rank(seed: int, venue: str, year: int, paper_id: str) -> str:
    return hashlib.sha256(f"{seed}/{venue}/{year}/{paper_id}".encode("utf-8")).hexdigest()


def sample_paper_ids(papers: Dataset, per_venue_year: int = 100, seed: int = 0,
                     include_withdrawn: bool = False, years: Iterable[int] | None = None,
                     rejected_share: float | None = None) -> list[str]:
    """The ids of a balanced sample of ``papers`` (Paper records), in venue, year, class and rank order.

    ``years`` restricts the draw to those years (all years when None). Raises
    :class:`SamplingError` naming every venue-year and class that has fewer papers than its
    share of ``per_venue_year``, and on a paper id listed twice. With ``rejected_share`` the
    sample is instead that share of all the rejected papers (rounded, at least one), ranked the
    same way: the target-aspect study's draw (7.5% of the rejected papers, its §5).
    """
    if rejected_share is not None and not 0 < rejected_share <= 1:
        raise ValueError(f"rejected_share must be in (0, 1], got {rejected_share}")
    if per_venue_year < 2:
        raise ValueError("per_venue_year must be at least 2 (one accepted and one rejected paper)")
    wanted = {"accept": per_venue_year - per_venue_year // 2, "reject": per_venue_year // 2}
    years = None if years is None else set(years)
    pools: dict[tuple[str, int], dict[str, set[str]]] = defaultdict(lambda: {"accept": set(), "reject": set()})
    seen: set[str] = set()
    duplicates: set[str] = set()
    venues: set[str] = set()
    for row in papers:
        if perturbation_kind(row) is not None:
            continue  # variants share their original's paper_id; the original stands for them
        if row["paper_id"] in seen:
            duplicates.add(row["paper_id"])
        seen.add(row["paper_id"])
        venues.add(row["venue"])
        if years is not None and row["year"] not in years:
            continue
        decision = row["decision"]
        if is_withdrawn(decision) and not include_withdrawn:
            continue
        label = decision_class(decision)
        if label is not None:
            pools[(row["venue"], row["year"])][label].add(row["paper_id"])
    if duplicates:
        listed = sorted(duplicates)
        raise SamplingError(f"{len(listed)} paper id(s) listed more than once (are these paper records?): "
                            + ", ".join(listed[:5]) + (", ..." if len(listed) > 5 else ""))
    if pools and years is not None:
        for venue in venues:  # a year asked for and absent is a shortage, not a smaller sample
            for year in years:
                pools[(venue, year)]
    if not pools:
        where = f" in {', '.join(map(str, sorted(years)))}" if years is not None else ""
        raise SamplingError(f"no original paper{where} has an accept or reject decision to sample from "
                            f"({len(papers)} records, {len(seen)} originals; perturbed variants are never drawn)")
    if rejected_share is not None:
        rejected = sorted(((venue, year, paper_id) for (venue, year), pool in pools.items() for paper_id in pool["reject"]),
                          key=lambda v: _rank(seed, *v))
        if not rejected:
            raise SamplingError("no rejected paper to sample from")
        chosen = rejected[:max(1, round(rejected_share * len(rejected)))]
        return [paper_id for _, _, paper_id in sorted(chosen, key=lambda v: (v[0], v[1], _rank(seed, *v)))]
    shortages = [f"{venue} {year}: {len(pool[label])} {label}ed paper(s), {wanted[label]} needed"
                 for (venue, year), pool in sorted(pools.items()) for label in ("accept", "reject")
                 if len(pool[label]) < wanted[label]]
    if shortages:
        raise SamplingError("too few papers to sample " + f"{per_venue_year} per venue-year: " + "; ".join(shortages))
    chosen = []
    for (venue, year), pool in sorted(pools.items()):
        for label in ("accept", "reject"):
            ranked = sorted(pool[label], key=lambda paper_id: _rank(seed, venue, year, paper_id))
            chosen.extend(ranked[:wanted[label]])
    return chosen


def sample_records(papers: Dataset, reviews: Dataset | None = None, meta_reviews: Dataset | None = None,
                   rebuttals: Dataset | None = None, per_venue_year: int = 100, seed: int = 0,
                   include_withdrawn: bool = False, years: Iterable[int] | None = None,
                   rejected_share: float | None = None) -> dict[str, Dataset]:
    """The sampled papers and the reviews, meta-reviews and rebuttals of those papers
    (record kinds as keys; kinds passed as None are left out)."""
    chosen = sample_paper_ids(papers, per_venue_year, seed, include_withdrawn, years, rejected_share)
    keep = set(chosen)
    order = {paper_id: index for index, paper_id in enumerate(chosen)}
    sampled = papers.filter(lambda row: row["paper_id"] in keep and perturbation_kind(row) is None)
    ids = sampled["paper_id"]
    out = {"paper": sampled.select(sorted(range(len(ids)), key=lambda i: order[ids[i]]))}
    for kind, table in (("review", reviews), ("meta_review", meta_reviews), ("rebuttal", rebuttals)):
        if table is not None:
            out[kind] = table.filter(lambda row: row["paper_id"] in keep)
    return out
