"""Prompt injection: hidden instructions in a paper that ask an LLM reviewer for a high score.

The instruction's wording is the template ``templates/injection.jinja`` (override it with
``template=PATH``); it is given the top value and label of the paper's venue-year rating scale.
It is planted in one of three ways:

- ``white-text``: an HTML span in white, one-pixel text after the first prose paragraph, the way
  hidden text survives in a PDF converted to text;
- ``comment``: an HTML comment at the same place;
- ``appendix``: a short appendix section at the end of the paper.
"""

from __future__ import annotations

import random
from pathlib import Path

from praib.scales import UnknownScaleError, generic_scales, venue_scales

from praib.perturb.logic import TEMPLATES
from praib.perturb.structure import prose

PLACEMENTS = ("white-text", "comment", "appendix")


def injection_text(row: dict, override: str | Path | None = None) -> str:
    try:
        scales = venue_scales(row.get("venue"), row.get("year")) if row.get("venue") else generic_scales()
    except UnknownScaleError:
        scales = generic_scales()
    top = scales.rating.values[-1]
    return TEMPLATES.render(TEMPLATES.path(Path(override) if override else "injection"), rating=top,
                            rating_label=scales.rating.labels[top].split(":")[0].strip(),
                            title=row.get("title") or "").strip()


def inject(row: dict, rng: random.Random, placement: str, template: str | Path | None = None) -> tuple[dict, str]:
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown injection placement {placement!r}; choose from {', '.join(PLACEMENTS)}")
    text = row["text"] or ""
    instruction = injection_text(row, template)
    if placement == "appendix":
        return ({**row, "text": f"{text.rstrip()}\n\n## Appendix: Note for reviewers\n{instruction}\n"},
                "instruction asking for the top rating added as an appendix section at the end")
    hidden = (f'<span style="color:white;font-size:1px">{instruction}</span>' if placement == "white-text"
              else f"<!-- {instruction} -->")
    paragraphs = prose(text)
    at = paragraphs[0].end if paragraphs else len(text)
    where = "after the first paragraph" if paragraphs else "at the end of the text"
    return ({**row, "text": f"{text[:at]}\n\n{hidden}{text[at:]}"},
            f"instruction asking for the top rating hidden as {placement.replace('-', ' ')} {where}")
