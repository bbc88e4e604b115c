"""LLM-driven edits: an LLM rewrites spans of the targeted parts of a paper, review or rebuttal.

The aspect-guided perturbation prompts ask the model to name each span it edits by its first and
last words and to give the edited span (``_span_edit_output.jinja``). Here every answer is parsed
into (start words, ending words, edited span) and applied to the unit it was asked about: a paper
section of the aspect's type (``data/section_types.yaml``), a whole review or rebuttal. Text outside
the units, and every span the answer does not name, stays byte-identical; spans that cannot be found
are counted in the record's description. The active/passive voice edit rewrites whole paragraphs.

Every prompt goes through the judge's backend (so through the call cache when it has one), in one
batch for all records. A record with a unit the judge gave no answer for is left out (``None`` in
place of the edited record, with the reason); the failure is in the judge's log. Templates live in
``templates/``; pass ``template=PATH`` to use your own.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from praib.perturb.logic import TEMPLATES
from praib.perturb.text import prose_blocks, sections

_SPAN_EDIT = re.compile(
    r"Start Words\s*:[ \t]*(?P<start>[^\n]*)\n[ \t\-*]*Ending Words\s*:[ \t]*(?P<end>[^\n]*)\n"
    r".*?Edited Text Span[ \t*:]*\n?(?P<edited>.*?)(?=\n[^\n]*Text Span to Edit|\Z)", re.S | re.I)
_QUOTES = " \t\"'“”‘’`*"


@dataclass(frozen=True)
class SpanEdit:
    start: str
    end: str
    edited: str


def generate_texts(judge, template: str, items: Sequence[dict[str, Any]], progress: bool = False,
                   override: str | Path | None = None, ids: Sequence[str] | None = None) -> list[Any]:
    """One free-text :class:`~praib.llm.judge.Answer` per item from ``template`` rendered with the
    item, through the judge; ``ids`` name the items in failure records."""
    path = TEMPLATES.path(Path(override) if override else template)
    return judge.text(path, items, label=f"perturb:{path.stem}", progress=progress, ids=ids)


def record_name(row: dict) -> str:
    """How a failure record names the record an edit was for."""
    return str(row.get("review_id") or row.get("rebuttal_id") or row.get("paper_id"))


def _failed(answers: Sequence[Any]) -> str | None:
    """Why a record cannot be edited: the first of its units that got no answer."""
    bad = [a for a in answers if not a.ok]
    if not bad:
        return None
    return f"failed: {len(bad)} of {len(answers)} answers missing ({bad[0].error}: {bad[0].reason})"


def parse_span_edits(output: str) -> list[SpanEdit]:
    edits = []
    for match in _SPAN_EDIT.finditer(output):
        start, end = match.group("start").strip(_QUOTES), match.group("end").strip(_QUOTES)
        start, end = start.removesuffix("...").removesuffix("…").strip(), end.removeprefix("...").removeprefix("…").strip()
        edited = match.group("edited").strip().strip("\"“”").strip()
        if start and end:
            edits.append(SpanEdit(start, end, edited))
    return edits


def apply_span_edits(text: str, edits: Sequence[SpanEdit]) -> tuple[str, list[tuple[str, str]], int]:
    """``text`` with each edit's span (from its start words to its ending words) replaced.
    Returns the new text, the (old span, new span) pairs applied, and how many spans were not found."""
    applied, missed = [], 0
    for edit in edits:
        begin = text.find(edit.start)
        finish = text.find(edit.end, begin + len(edit.start)) if begin >= 0 else -1
        if begin >= 0 and finish < 0 and edit.end in edit.start:
            finish = text.find(edit.end, begin)
        if begin < 0 or finish < 0:
            missed += 1
            continue
        old = text[begin:finish + len(edit.end)]
        text = text[:begin] + edit.edited + text[finish + len(edit.end):]
        applied.append((old, edit.edited))
    return text, applied, missed


def _summary(applied: int, missed: int, where: str) -> str:
    if not applied and not missed:
        return "unchanged: the model's answer named no span to edit"
    text = f"{applied} span{'s' if applied != 1 else ''} rewritten {where}"
    return text + (f"; {missed} span{'s' if missed != 1 else ''} named by the model not found" if missed else "")


def edit_paper_sections(rows: list[dict], judge, template: str, section_types: tuple[str, ...] | None,
                        progress: bool = False, override: str | Path | None = None) -> list[tuple[dict, str]]:
    """Span edits in each section of the given types (``None``: every section but the references)."""
    units = []  # (row index, section)
    for index, row in enumerate(rows):
        text = row["text"] or ""
        for section in sections(text):
            wanted = (section.type in section_types) if section_types else section.type != "references"
            if wanted and text[section.start:section.end].strip():
                units.append((index, section))
    outputs = generate_texts(judge, template, [{"title": rows[i]["title"] or "", "section": s.heading or "",
                                                "text": rows[i]["text"][s.start:s.end]} for i, s in units],
                             progress=progress, override=override,
                             ids=[f"{record_name(rows[i])}/section {s.heading or s.start}" for i, s in units])
    results: list[tuple[dict | None, str]] = []
    for index, row in enumerate(rows):
        mine = [(s, out) for (i, s), out in zip(units, outputs) if i == index]
        if not mine:
            kinds = ", ".join(section_types) if section_types else "any"
            results.append((row, f"unchanged: no sections of type {kinds}"))
            continue
        failure = _failed([out for _, out in mine])
        if failure:
            results.append((None, failure))
            continue
        mine = [(s, out.value) for s, out in mine]
        text, applied, missed, touched = row["text"], 0, 0, []
        for section, output in sorted(mine, key=lambda item: item[0].start, reverse=True):
            body, pairs, lost = apply_span_edits(text[section.start:section.end], parse_span_edits(output))
            text = text[:section.start] + body + text[section.end:]
            applied, missed = applied + len(pairs), missed + lost
            if pairs:
                touched.insert(0, section.heading or "(untitled)")
        where = f"in {len(touched)} of {len(mine)} targeted sections" + (f" ({'; '.join(touched)})" if touched else "")
        results.append(({**row, "text": text}, _summary(applied, missed, where)))
    return results


def edit_whole_texts(rows: list[dict], judge, template: str, progress: bool = False,
                     override: str | Path | None = None, fields: Sequence[str] = ()) -> list[tuple[dict, str]]:
    """Span edits of each record's whole text; an edit that lies inside one of ``fields`` (a review's
    sections) is made there too, so fields and text stay consistent."""
    with_text = [row for row in rows if (row["text"] or "").strip()]
    answers = dict(zip(map(id, with_text), generate_texts(judge, template, [{"text": row["text"]} for row in with_text],
                                                          progress=progress, override=override,
                                                          ids=[record_name(row) for row in with_text])))
    results: list[tuple[dict | None, str]] = []
    for row in rows:
        if id(row) not in answers:
            results.append((row, "unchanged: no text"))
            continue
        failure = _failed([answers[id(row)]])
        if failure:
            results.append((None, failure))
            continue
        text, pairs, missed = apply_span_edits(row["text"], parse_span_edits(answers[id(row)].value))
        edited, unsynced = {**row, "text": text}, 0
        for old, new in pairs:
            holders = [f for f in fields if edited.get(f) and edited[f].count(old) == 1]
            if holders:
                edited[holders[0]] = edited[holders[0]].replace(old, new)
            elif any(row.get(f) for f in fields):
                unsynced += 1
        description = _summary(len(pairs), missed, "in the text")
        if unsynced:
            description += f"; {unsynced} of them cross section fields, which keep their original wording"
        results.append((edited, description))
    return results


def rewrite_voice(rows: list[dict], rngs: list[random.Random], judge, fraction: float = 0.4,
                  progress: bool = False, override: str | Path | None = None) -> list[tuple[dict, str]]:
    """Rewrite a ``fraction`` of each paper's prose paragraphs between active and passive voice."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    units = []
    for index, (row, rng) in enumerate(zip(rows, rngs)):
        paragraphs = prose_blocks(row["text"] or "")
        if paragraphs:
            count = max(1, round(fraction * len(paragraphs)))
            units += [(index, paragraphs[i]) for i in sorted(rng.sample(range(len(paragraphs)), count))]
    outputs = generate_texts(judge, "paper_voice", [{"text": rows[i]["text"][b.start:b.end]} for i, b in units],
                             progress=progress, override=override,
                             ids=[f"{record_name(rows[i])}/paragraph at {b.start}" for i, b in units])
    results: list[tuple[dict | None, str]] = []
    for index, row in enumerate(rows):
        answers = [out for (i, _), out in zip(units, outputs) if i == index]
        failure = _failed(answers)
        if failure:
            results.append((None, failure))
            continue
        mine = [(b, out.value.strip()) for (i, b), out in zip(units, outputs) if i == index]
        text, rewritten = row["text"] or "", 0
        for block, output in sorted(mine, key=lambda item: item[0].start, reverse=True):
            if output and output != text[block.start:block.end]:
                text = text[:block.start] + output + text[block.end:]
                rewritten += 1
        total = len(prose_blocks(row["text"] or ""))
        results.append(({**row, "text": text},
                         f"{rewritten} of {total} paragraphs rewritten between active and passive voice"
                         + (f" ({len(mine) - rewritten} answers empty or unchanged)" if len(mine) > rewritten else "")))
    return results
