"""Venue rating, confidence and sub-score scales, read from YAML data files.

Each file in ``praib/data/scales/`` (and in any directory listed in the
``PRAIB_SCALES_PATH`` environment variable, separated by ``os.pathsep``)
describes one venue: its aliases and, per group of years, the labelled values
of its overall rating, its confidence and its sub-scores. Adding a venue is
adding such a file; nothing in the code names a venue.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

BUILTIN_SCALES_DIR = Path(__file__).parent / "data" / "scales"
GENERIC_VENUE = "generic"


class UnknownScaleError(LookupError):
    """No scale is known for a venue or year."""


def _normalise_label(text: str) -> str:
    return re.sub(r"[^a-z0-9%]+", " ", text.lower()).strip()


@dataclass(frozen=True)
class Scale:
    """One ordinal scale: its allowed integer values and their labels."""

    name: str
    labels: dict[int, str]

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(sorted(self.labels))

    def __contains__(self, value: object) -> bool:
        return value in self.labels

    def describe(self) -> str:
        return ", ".join(str(v) for v in self.values)

    def value_for_label(self, text: str) -> int | None:
        """The value whose label is ``text`` (case, punctuation and a trailing
        description are ignored: "Accept" matches "Accept: Technically solid...").
        Returns None when no label, or more than one, matches."""
        wanted = _normalise_label(text)
        if not wanted:
            return None
        exact = [v for v, label in self.labels.items() if label and _normalise_label(label) == wanted]
        if len(exact) == 1:
            return exact[0]
        # A label's head is the part before its first colon ("Borderline accept: ...").
        heads = [v for v, label in self.labels.items()
                 if label and _normalise_label(label.split(":")[0]) == wanted]
        if len(heads) == 1:
            return heads[0]
        return None


@dataclass(frozen=True)
class VenueScales:
    """The scales one venue used in one year."""

    venue: str
    year: int | None
    year_group: str
    rating: Scale
    confidence: Scale | None
    subscores: dict[str, Scale] = field(default_factory=dict)


@dataclass(frozen=True)
class _Edition:
    years: tuple[int, ...] | None  # None: any year
    year_group: str | None
    rating: Scale
    confidence: Scale | None
    subscores: dict[str, Scale]


@dataclass(frozen=True)
class _Venue:
    name: str
    aliases: tuple[str, ...]
    editions: tuple[_Edition, ...]
    source: Path


def _scale(name: str, raw: object, source: Path) -> Scale:
    if not isinstance(raw, dict) or not raw:
        raise ValueError(f"{source}: scale '{name}' must be a mapping of integer values to labels")
    labels = {}
    for value, label in raw.items():
        if not isinstance(value, int):
            raise ValueError(f"{source}: scale '{name}' has a non-integer value {value!r}")
        labels[value] = "" if label is None else str(label)
    return Scale(name=name, labels=labels)


def _read_venue_file(path: Path) -> _Venue:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "venue" not in data or "editions" not in data:
        raise ValueError(f"{path}: a scale file needs the keys 'venue' and 'editions'")
    editions = []
    for i, raw in enumerate(data["editions"]):
        where = f"{path} (edition {i + 1})"
        years = raw.get("years")
        if years == "any":
            years_tuple = None
        elif isinstance(years, list) and years and all(isinstance(y, int) for y in years):
            years_tuple = tuple(years)
        else:
            raise ValueError(f"{where}: 'years' must be a list of years or 'any'")
        if "rating" not in raw:
            raise ValueError(f"{where}: missing 'rating'")
        editions.append(_Edition(
            years=years_tuple,
            year_group=raw.get("year_group"),
            rating=_scale("rating", raw["rating"], path),
            confidence=_scale("confidence", raw["confidence"], path) if raw.get("confidence") else None,
            subscores={name: _scale(name, s, path) for name, s in (raw.get("subscores") or {}).items()},
        ))
    return _Venue(name=str(data["venue"]), aliases=tuple(str(a) for a in data.get("aliases") or ()),
                  editions=tuple(editions), source=path)


def _scale_dirs() -> list[Path]:
    extra = [Path(p) for p in os.environ.get("PRAIB_SCALES_PATH", "").split(os.pathsep) if p]
    return extra + [BUILTIN_SCALES_DIR]


@lru_cache(maxsize=None)
def _venues(dirs: tuple[Path, ...]) -> dict[str, _Venue]:
    venues: dict[str, _Venue] = {}
    for directory in dirs:
        for path in sorted(directory.glob("*.yaml")):
            venue = _read_venue_file(path)
            for key in (venue.name, *venue.aliases):
                # Earlier directories (the user's) take precedence over the built-in files.
                venues.setdefault(key.lower(), venue)
    return venues


def known_venues() -> list[str]:
    """Names of all venues with a scale file."""
    return sorted({v.name for v in _venues(tuple(_scale_dirs())).values()})


def venue_scales(venue: str | None, year: int | None) -> VenueScales:
    """The scales of ``venue`` in ``year``.

    ``venue="generic"`` (or None) gives the venue-agnostic 1-10 rating and 1-5
    confidence scales. Venue names are matched case-insensitively, and also by
    alias and by OpenReview group prefix ("ICLR.cc/2024/Conference").
    """
    venues = _venues(tuple(_scale_dirs()))
    key = (venue or GENERIC_VENUE).split("/")[0].lower()
    if key not in venues:
        raise UnknownScaleError(
            f"no scale file for venue {venue!r}; known venues: {', '.join(known_venues())}. "
            f"Add a YAML file to a directory listed in PRAIB_SCALES_PATH.")
    spec = venues[key]
    for edition in spec.editions:
        if edition.years is None or year in edition.years:
            group = edition.year_group or (str(year) if year is not None else "any")
            return VenueScales(venue=spec.name, year=year, year_group=group, rating=edition.rating,
                               confidence=edition.confidence, subscores=dict(edition.subscores))
    covered = sorted(y for e in spec.editions for y in (e.years or ()))
    raise UnknownScaleError(
        f"{spec.name} has no scale for year {year}; {spec.source.name} covers "
        f"{covered[0]}-{covered[-1]}" if covered else f"{spec.name} has no dated editions")


def generic_scales() -> VenueScales:
    return venue_scales(GENERIC_VENUE, None)


def subscore_names() -> frozenset[str]:
    """Every sub-score name used by any known venue."""
    return _subscore_names(tuple(_scale_dirs()))


@lru_cache(maxsize=None)
def _subscore_names(dirs: tuple[Path, ...]) -> frozenset[str]:
    # The record reader asks for every record it validates: derive it once per set of scale files.
    return frozenset(name for v in _venues(dirs).values() for e in v.editions for name in e.subscores)
