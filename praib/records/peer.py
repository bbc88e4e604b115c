"""Reviews in the formats other tools write, read by the one loader as praib review records.

- **AI-Scientist** review JSON (the object its ``perform_review`` returns and its runs save: ``Summary``,
  ``Strengths`` and ``Weaknesses`` lists, ``Questions``, ``Limitations``, ``Ethical Concerns``, the 1-4
  sub-scores, ``Overall``, ``Confidence``, ``Decision``), one object a file or a list of them;
- **OpenReview notes**, API v2 (content fields wrapped in ``{"value": ...}``) and v1 (flat content): the
  review notes of a forum, e.g. what ``/notes?forum=ID`` or ``/notes?invitation=...Official_Review`` returns.

:class:`RecordFormats` turns each stored record into the fields of the review schema before it is checked,
and fills ``source`` (and ``model``) where a record names none (``--source NAME``). The mapping tables are in
the documentation's records page; :data:`AI_SCIENTIST_FIELDS` and :data:`OPENREVIEW_REVIEW_FORM` are them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from praib.records.schema import HUMAN_SOURCE, PARSE_GIVEN, SCHEMAS, RecordError
from praib.scales import Scale, UnknownScaleError, VenueScales, venue_scales

#: The source (and model) of an AI-Scientist review when neither the review nor ``--source`` names one.
AI_SCIENTIST_SOURCE = "ai-scientist"

#: AI-Scientist's keys and the review fields they fill: a section, ``rating``, ``confidence``,
#: ``recommendation`` or ``subscores.NAME``.
AI_SCIENTIST_FIELDS = {
    "Summary": "summary",
    "Strengths": "strengths",
    "Weaknesses": "weaknesses",
    "Questions": "questions",
    "Limitations": "limitations",
    "Ethical Concerns": "additional_feedback",
    "Originality": "subscores.originality",
    "Quality": "subscores.quality",
    "Clarity": "subscores.clarity",
    "Significance": "subscores.significance",
    "Soundness": "subscores.soundness",
    "Presentation": "subscores.presentation",
    "Contribution": "subscores.contribution",
    "Overall": "rating",
    "Confidence": "confidence",
    "Decision": "recommendation",
}

#: The fields of OpenReview's review forms (ICLR 2017-2025, NeurIPS 2021-2025) and the review fields they fill:
#: a section, ``body`` (text of the review that is no single section), ``rating``, ``confidence`` or
#: ``subscores.NAME``. Every edition in ``praib/data/openreview`` maps its fields the same way.
OPENREVIEW_REVIEW_FORM = {
    "summary": "summary",
    "summary_of_the_paper": "summary",
    "review": "body",
    "main_review": "body",
    "strength_and_weaknesses": "body",
    "strengths_and_weaknesses": "body",
    "clarity,_quality,_novelty_and_reproducibility": "body",
    "summary_of_the_review": "body",
    "strengths": "strengths",
    "weaknesses": "weaknesses",
    "questions": "questions",
    "limitations": "limitations",
    "limitations_and_societal_impact": "limitations",
    "rating": "rating",
    "recommendation": "rating",
    "confidence": "confidence",
    "soundness": "subscores.soundness",
    "presentation": "subscores.presentation",
    "contribution": "subscores.contribution",
    "correctness": "subscores.correctness",
    "technical_novelty_and_significance": "subscores.technical_novelty_and_significance",
    "empirical_novelty_and_significance": "subscores.empirical_novelty_and_significance",
    "originality": "subscores.originality",
    "quality": "subscores.quality",
    "clarity": "subscores.clarity",
    "significance": "subscores.significance",
}

_SECTION_TITLES = {"summary": "Summary", "strengths": "Strengths", "weaknesses": "Weaknesses",
                   "questions": "Questions", "limitations": "Limitations"}
_VENUE_YEAR = re.compile(r"([A-Za-z][\w-]*)\.cc/(\d{4})/")


def flat_content(content: dict | None) -> dict:
    """A note's content with API v2's ``{"value": ...}`` wrappers removed (v1 is already flat)."""
    return {key: value.get("value") if isinstance(value, dict) and "value" in value else value
            for key, value in (content or {}).items()}


def text_of(value: Any) -> str | None:
    """A form value as text: a list one item a line, stripped; None when empty."""
    if value is None:
        return None
    if isinstance(value, list):
        value = "\n".join(str(v) for v in value)
    value = str(value).strip()
    return value or None


def scored(value: Any, scale: Scale | None, where: str, field_name: str) -> Any:
    """OpenReview scores are "6: label" strings or bare numbers; a bare label ("good") is looked up on the
    venue-year's scale."""
    if isinstance(value, str) and scale is not None and not re.match(r"\s*[+-]?\d", value):
        found = scale.value_for_label(value)
        if found is None:
            raise RecordError(where, field_name, f"{value!r} is no label of the {scale.name} scale")
        return found
    return value


def form_fields(content: dict, form: dict[str, str], scales: VenueScales | None, where: str) -> dict:
    """Record fields from a note's (flat) content through a form map; ``text`` is the section and body fields
    in the form's order, a blank line between them."""
    row: dict[str, Any] = {"subscores": {}}
    parts = []
    for name, target in form.items():
        value = content.get(name)
        if value is None:
            continue
        if target.startswith("subscores."):
            subscore = target.split(".", 1)[1]
            scale = scales.subscores.get(subscore) if scales else None
            row["subscores"][subscore] = scored(value, scale, where, name)
        elif target in ("rating", "confidence"):
            row[target] = scored(value, getattr(scales, target) if scales else None, where, name)
        elif target == "recommendation":
            row["recommendation"] = text_of(value)
        else:
            text = text_of(value)
            if text:
                parts.append(text)
                if target != "body":
                    row[target] = (row[target] + "\n\n" + text) if row.get(target) else text
    row["text"] = "\n\n".join(parts) or None
    return row


def signer(note: dict) -> str | None:
    """The last part of a note's first signature (``.../Reviewer_abcd`` gives ``Reviewer_abcd``)."""
    signatures = note.get("signatures") or []
    return signatures[0].rsplit("/", 1)[-1] if signatures else None


def invitations(note: dict) -> list[str]:
    """A note's invitations: API v2's ``invitations`` list, or API v1's one ``invitation``."""
    return list(note.get("invitations") or ([note["invitation"]] if note.get("invitation") else []))


def is_ai_scientist_review(raw: Any) -> bool:
    return isinstance(raw, dict) and "Overall" in raw and any(key in raw for key in ("Summary", "Strengths",
                                                                                     "Weaknesses", "Decision"))


def is_openreview_note(raw: Any) -> bool:
    return isinstance(raw, dict) and isinstance(raw.get("content"), dict) and isinstance(raw.get("forum"), str)


def _bullets(value: Any) -> str | None:
    """A list of points as a Markdown list, one ``- point`` a line; text as it is."""
    if isinstance(value, list):
        points = [text_of(point) for point in value]
        return "\n".join(f"- {point}" for point in points if point) or None
    return text_of(value)


def from_ai_scientist(raw: dict, paper_id: str | None, where: str) -> dict:
    """The review fields of one AI-Scientist review. Its written parts become the sections (lists as Markdown
    lists) and the text (each section under its heading, as a model's review reads), its scores the rating,
    confidence and sub-scores, its ``Decision`` the recommendation; keys praib's schema names (``paper_id``,
    ``source``, ``model``, ``venue``, ...) are kept, and ``paper_id`` is the file's stem where it names none."""
    row: dict[str, Any] = {key: value for key, value in raw.items() if key not in AI_SCIENTIST_FIELDS}
    subscores = {}
    for key, target in AI_SCIENTIST_FIELDS.items():
        value = raw.get(key)
        if value is None:
            continue
        if target.startswith("subscores."):
            subscores[target.split(".", 1)[1]] = value
        elif target == "additional_feedback":
            if not isinstance(value, bool):
                raise RecordError(where, key, f"expected true or false, got {value!r:.60}")
            row[target] = f"Ethical concerns: {'yes' if value else 'no'}"
        elif target in ("rating", "confidence"):
            row[target] = value
        elif target == "recommendation":
            row[target] = text_of(value)
        else:
            row[target] = _bullets(value)
    row["subscores"] = subscores
    row.setdefault("parse_status", PARSE_GIVEN)
    sections = [f"## {title}\n\n{row[name]}" for name, title in _SECTION_TITLES.items() if row.get(name)]
    row.setdefault("text", "\n\n".join(sections) or None)
    if not row.get("paper_id") and paper_id:
        row["paper_id"] = paper_id
    return row


def _venue_year(note: dict) -> tuple[str | None, int | None]:
    """The venue and year of a note's invitation or domain (``ICLR.cc/2024/Conference/...``)."""
    for name in [*invitations(note), note.get("domain") or ""]:
        match = _VENUE_YEAR.match(name)
        if match:
            return match[1], int(match[2])
    return None, None


def _scales_of(venue: str | None, year: int | None) -> VenueScales | None:
    try:
        return venue_scales(venue, year) if venue else None
    except UnknownScaleError:
        return None


def note_kind(note: dict) -> str:
    """``review`` for an official review note, else what the note is (``submission``, ``official comment``,
    ``meta review``, ``decision``, ...), for the count of the notes left out."""
    named = [name.lower().rsplit("/-/", 1)[-1] for name in invitations(note)]  # e.g. paper12/official_review
    if any(name.endswith(("official_review", "official/review")) or name == "review" for name in named):
        return "review"
    if not named:  # a note stripped of its invitations: a review by its form
        return "review" if flat_content(note.get("content")).keys() & {"rating", "recommendation"} else "note"
    if note.get("id") == note.get("forum"):
        return "submission"
    return named[0].rsplit("/", 1)[-1].replace("_", " ") or "note"


def from_openreview_note(note: dict, where: str) -> dict:
    """The review fields of one OpenReview review note: ``forum`` is the paper, ``id`` the review,
    ``signatures`` the reviewer, the invitation's venue and year (scores read on their scale), and the
    content through :data:`OPENREVIEW_REVIEW_FORM`."""
    venue, year = _venue_year(note)
    fields = form_fields(flat_content(note.get("content")), OPENREVIEW_REVIEW_FORM, _scales_of(venue, year), where)
    return {**fields, "paper_id": note["forum"], "review_id": note.get("id"), "reviewer_id": signer(note),
            "venue": venue, "year": year, "parse_status": PARSE_GIVEN}


@dataclass
class RecordFormats:
    """What the loader does to each stored record of ``kind`` before checking it against the schema: review
    records in a peer format become praib reviews (AI-Scientist's ``paper_id`` is the file's stem where the
    review names none; OpenReview notes that are no reviews are left out, counted in ``left_out``), and
    ``source_name`` fills ``source`` where a record names none, and ``model`` too for a source other than
    human."""

    kind: str
    source_name: str | None = None
    left_out: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        if self.source_name is not None and not self.source_name.strip():
            raise ValueError("the source name is empty")
        features = SCHEMAS[self.kind][0]
        self._fills_source, self._fills_model = "source" in features, "model" in features

    def changes_none(self, raws: list[Any]) -> bool:
        """Whether :meth:`prepare` would give every one of ``raws`` back as it is: none in another tool's format (with
        AI-Scientist's ``Overall`` or a note's ``content``) and none whose source is to be filled; a batch's check in
        one pass, where :meth:`prepare` looks at each record's format in turn."""
        records = [raw for raw in raws if isinstance(raw, dict)]
        if self.kind == "review" and any("Overall" in raw or "content" in raw for raw in records):
            return False
        return (self.source_name is None or not self._fills_source
                or all(raw.get("source") not in (None, "") for raw in records))

    def prepare(self, raw: Any, path: Path | None, where: str) -> Any:
        """The record to check against the schema, or None for a note that is no review."""
        if self.kind == "review" and is_ai_scientist_review(raw):
            raw = from_ai_scientist(raw, path.stem if path is not None else None, where)
            if not raw.get("source") and self.source_name is None:
                raw["source"] = raw.get("model") or AI_SCIENTIST_SOURCE
                raw["model"] = raw.get("model") or AI_SCIENTIST_SOURCE
        elif self.kind == "review" and is_openreview_note(raw):
            kind = note_kind(raw)
            if kind != "review":
                self.left_out[kind] += 1
                return None
            raw = {**from_openreview_note(raw, where), "source": self.source_name or HUMAN_SOURCE}
        if self.source_name is None or not self._fills_source or not isinstance(raw, dict):
            return raw
        if raw.get("source") in (None, ""):
            raw = {**raw, "source": self.source_name}
            if self._fills_model and self.source_name != HUMAN_SOURCE and raw.get("model") in (None, ""):
                raw["model"] = self.source_name
        return raw
