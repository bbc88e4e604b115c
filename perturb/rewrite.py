"""LLM-driven edits: an LLM rewrites spans of the targeted parts of a paper, review or rebuttal.

The aspect-guided perturbation prompts ask the model to name each span it edits by its first and
last words and to give the edited span (``_span_edit_output.jinja``). Here every answer is parsed
into (start words, ending words, edited span) and applied to the unit it was asked about: a paper
section of the aspect's type (``data/section_types.yaml``), a whole review or rebuttal. Text outside
the units, and every span the answer does not name, stays byte-identical; spans that cannot be found
are counted in the record's description. The active/passive voice edit rewrites whole paragraphs.

Every answer is checked before it is applied (:mod:`praib.perturb.validation`): a span-edit answer
must name at least one span in the format, found in its unit, lying in prose (no heading, table,
figure, maths or code inside it), changed, and within its kind's length and word-overlap bounds;
a voice answer must be one paragraph within the bounds. A rejected unit is asked again with the
reasons (``max_tries`` answers in all), then left unedited, recorded in the judge's failure log
(``RejectedEdit``) and counted in the record's description.

Every prompt goes through the judge's backend (so through the call cache when it has one), in one
batch for all records. A record with a unit the judge gave no answer for is left out (``None`` in
place of the edited record, with the reason); the failure is in the judge's log. Templates live in
``templates/``; pass ``template=PATH`` to use your own (it is given ``rejected``, the reasons the
unit's earlier answers were rejected: show them, or a retry asks the same question again).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from praib.perturb.logic import TEMPLATES
from praib.perturb.structure import blocks, prose
from praib.perturb.text import sections
from praib.perturb.validation import (EDIT_BOUNDS, MAX_TRIES, REJECTED_EDIT, EditBounds, EditTally, ask_checked,
                                      check_edit, describe_rejections)

_SPAN_EDIT = re.compile(
    r"Start Words\s*:[ \t]*(?P<start>[^\n]*)\n[ \t\-*]*Ending Words\s*:[ \t]*(?P<end>[^\n]*)\n"
    r".*?Edited Text Span[ \t*:]*\n?(?P<edited>.*?)(?=\n[^\n]*Text Span to Edit|\Z)", re.S | re.I)
_QUOTES = " \t\"'“”‘’`*"
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class SpanEdit:
    start: str
    end: str
    edited: str


def generate_checked(judge, template: str, items: Sequence[dict[str, Any]], ids: Sequence[str],
                     check, *, progress: bool = False, override: str | Path | None = None,
                     max_tries: int = MAX_TRIES):
    """:func:`~praib.perturb.validation.ask_checked` with ``template`` (or ``override``) and the
    ``perturb:<template>`` label the call cache knows these prompts by."""
    path = TEMPLATES.path(Path(override) if override else template)
    return ask_checked(judge, path, items, ids, check, label=f"perturb:{path.stem}", max_tries=max_tries,
                       progress=progress)


def record_name(row: dict) -> str:
    """How a failure record names the record an edit was for."""
    return str(row.get("rebuttal_id") or row.get("review_id") or row.get("paper_id"))


def _failed(outcomes: Sequence[Any]) -> str | None:
    """Why a record cannot be edited: the first of its units that got no answer (a rejected one is
    left unedited instead)."""
    bad = [o for o in outcomes if not o.ok and o.error != REJECTED_EDIT]
    if not bad:
        return None
    return f"failed: {len(bad)} of {len(outcomes)} answers missing ({bad[0].error}: {bad[0].reason})"


def parse_span_edits(output: str) -> list[SpanEdit]:
    edits = []
    for match in _SPAN_EDIT.finditer(output):
        start, end = match.group("start").strip(_QUOTES), match.group("end").strip(_QUOTES)
        start, end = start.removesuffix("...").removesuffix("…").strip(), end.removeprefix("...").removeprefix("…").strip()
        edited = match.group("edited").strip().strip("\"“”").strip()
        if start and end:
            edits.append(SpanEdit(start, end, edited))
    return edits


def _locate(text: str, edit: SpanEdit) -> tuple[int, int] | None:
    """Where ``edit``'s span (from its start words to its ending words) lies in ``text``, None if it is not there."""
    begin = text.find(edit.start)
    finish = text.find(edit.end, begin + len(edit.start)) if begin >= 0 else -1
    if begin >= 0 and finish < 0 and edit.end in edit.start:
        finish = text.find(edit.end, begin)
    if begin < 0 or finish < 0:
        return None
    return begin, finish + len(edit.end)


def check_span_answer(bounds: EditBounds, text: str, output: str
                      ) -> tuple[tuple[str, list[tuple[str, str]], int] | None, str | None]:
    """((edited text, applied pairs, spans not found), None) when ``output`` is an acceptable span-edit
    answer for ``text``, else (None, why not). Spans not found in ``text``, and spans the answer
    leaves as they were, touch nothing and are skipped; any other span must lie in prose and keep
    ``bounds``."""
    edits = parse_span_edits(output)
    if not edits:
        return None, "the answer names no span in the format asked for (Start Words, Ending Words, Edited Text Span)"
    applied, missed = [], 0
    for edit in edits:
        where = _locate(text, edit)
        if where is None:
            missed += 1
            continue
        old = text[where[0]:where[1]]
        if " ".join(old.split()) == " ".join(edit.edited.split()):
            continue
        name = f"span {edit.start[:40]!r}...{edit.end[-40:]!r}"
        crossed = next((b.kind for b in blocks(text) if b.kind != "prose" and b.start < where[1] and where[0] < b.end),
                       None)
        if crossed:
            return None, f"{name} covers a {crossed}, which the edit may not touch"
        problem = check_edit(bounds, old, edit.edited)
        if problem:
            return None, f"{name}: {problem}"
        text = text[:where[0]] + edit.edited + text[where[1]:]
        applied.append((old, edit.edited))
    if not applied:
        return None, (f"none of the {len(edits)} spans the answer names is in the text" if missed == len(edits)
                      else "the answer changes none of the spans it names")
    return (text, applied, missed), None


def _summary(applied: int, missed: int, where: str, rejections: str) -> str:
    text = f"{applied} span{'s' if applied != 1 else ''} rewritten {where}" if applied else "unchanged"
    if missed:
        text += f"; {missed} span{'s' if missed != 1 else ''} named by the model not found"
    return text + (f"{': ' if not applied else '; '}{rejections}" if rejections else "")


def _tally(tally: EditTally | None, kind: str, outcomes) -> None:
    if tally is not None:
        tally.add(kind, EDIT_BOUNDS[kind].unit, outcomes)


def edit_paper_sections(rows: list[dict], judge, template: str, section_types: tuple[str, ...] | None,
                        progress: bool = False, override: str | Path | None = None, *, kind: str,
                        max_tries: int = MAX_TRIES, tally: EditTally | None = None) -> list[tuple[dict, str]]:
    """Span edits in each section of the given types (``None``: every section but the references),
    checked against the bounds of ``kind``."""
    units = []  # (row index, section)
    for index, row in enumerate(rows):
        text = row["text"] or ""
        for section in sections(text):
            wanted = (section.type in section_types) if section_types else section.type != "references"
            if wanted and text[section.start:section.end].strip():
                units.append((index, section))
    bodies = [rows[i]["text"][s.start:s.end] for i, s in units]
    outcomes = generate_checked(
        judge, template, [{"title": rows[i]["title"] or "", "section": s.heading or "", "text": body}
                          for (i, s), body in zip(units, bodies)],
        [f"{record_name(rows[i])}/section {s.heading or s.start}" for i, s in units],
        lambda n, output: check_span_answer(EDIT_BOUNDS[kind], bodies[n], output),
        progress=progress, override=override, max_tries=max_tries)
    _tally(tally, kind, outcomes)
    results: list[tuple[dict | None, str]] = []
    for index, row in enumerate(rows):
        mine = [(s, out) for (i, s), out in zip(units, outcomes) if i == index]
        if not mine:
            kinds = ", ".join(section_types) if section_types else "any"
            results.append((row, f"unchanged: no sections of type {kinds}"))
            continue
        failure = _failed([out for _, out in mine])
        if failure:
            results.append((None, failure))
            continue
        text, applied, missed, touched = row["text"], 0, 0, []
        for section, outcome in sorted(mine, key=lambda item: item[0].start, reverse=True):
            if not outcome.ok:
                continue
            body, pairs, lost = outcome.value
            text = text[:section.start] + body + text[section.end:]
            applied, missed = applied + len(pairs), missed + lost
            touched.insert(0, section.heading or "(untitled)")
        where = f"in {len(touched)} of {len(mine)} targeted sections" + (f" ({'; '.join(touched)})" if touched else "")
        results.append(({**row, "text": text},
                         _summary(applied, missed, where, describe_rejections([o for _, o in mine], "section"))))
    return results


def edit_whole_texts(rows: list[dict], judge, template: str, progress: bool = False,
                     override: str | Path | None = None, fields: Sequence[str] = (), *, kind: str,
                     max_tries: int = MAX_TRIES, tally: EditTally | None = None) -> list[tuple[dict, str]]:
    """Span edits of each record's whole text, checked against the bounds of ``kind``; an edit that
    lies inside one of ``fields`` (a review's sections) is made there too, so fields and text stay
    consistent."""
    with_text = [row for row in rows if (row["text"] or "").strip()]
    outcomes = generate_checked(
        judge, template, [{"text": row["text"]} for row in with_text], [record_name(row) for row in with_text],
        lambda n, output: check_span_answer(EDIT_BOUNDS[kind], with_text[n]["text"], output),
        progress=progress, override=override, max_tries=max_tries)
    _tally(tally, kind, outcomes)
    by_row = dict(zip(map(id, with_text), outcomes))
    results: list[tuple[dict | None, str]] = []
    for row in rows:
        if id(row) not in by_row:
            results.append((row, "unchanged: no text"))
            continue
        outcome = by_row[id(row)]
        failure = _failed([outcome])
        if failure:
            results.append((None, failure))
            continue
        if not outcome.ok:
            results.append((row, f"unchanged: the edit was rejected: {outcome.reason}"))
            continue
        text, pairs, missed = outcome.value
        edited, unsynced = {**row, "text": text}, 0
        for old, new in pairs:
            holders = [f for f in fields if edited.get(f) and edited[f].count(old) == 1]
            if holders:
                edited[holders[0]] = edited[holders[0]].replace(old, new)
            elif any(row.get(f) for f in fields):
                unsynced += 1
        description = _summary(len(pairs), missed, "in the text", "")
        if unsynced:
            description += f"; {unsynced} of them cross section fields, which keep their original wording"
        results.append((edited, description))
    return results


def check_paragraph_answer(bounds: EditBounds, paragraph: str, output: str) -> tuple[str | None, str | None]:
    """(the rewritten paragraph, None) when ``output`` may replace ``paragraph``, else (None, why not)."""
    rewritten = output.strip()
    problem = check_edit(bounds, paragraph, rewritten)
    if problem is None and _BLANK_LINE.search(rewritten):
        problem = "the answer is more than one paragraph"
    return (rewritten, None) if problem is None else (None, problem)


def rewrite_voice(rows: list[dict], rngs: list[random.Random], judge, fraction: float = 0.4,
                  progress: bool = False, override: str | Path | None = None, *, max_tries: int = MAX_TRIES,
                  tally: EditTally | None = None) -> list[tuple[dict, str]]:
    """Rewrite a ``fraction`` of each paper's prose paragraphs between active and passive voice."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    units = []
    for index, (row, rng) in enumerate(zip(rows, rngs)):
        paragraphs = prose(row["text"] or "")
        if paragraphs:
            count = max(1, round(fraction * len(paragraphs)))
            units += [(index, paragraphs[i]) for i in sorted(rng.sample(range(len(paragraphs)), count))]
    originals = [rows[i]["text"][b.start:b.end] for i, b in units]
    outcomes = generate_checked(
        judge, "paper_voice", [{"text": original} for original in originals],
        [f"{record_name(rows[i])}/paragraph at {b.start}" for i, b in units],
        lambda n, output: check_paragraph_answer(EDIT_BOUNDS["voice"], originals[n], output),
        progress=progress, override=override, max_tries=max_tries)
    _tally(tally, "voice", outcomes)
    results: list[tuple[dict | None, str]] = []
    for index, row in enumerate(rows):
        mine = [(b, out) for (i, b), out in zip(units, outcomes) if i == index]
        failure = _failed([out for _, out in mine])
        if failure:
            results.append((None, failure))
            continue
        text = row["text"] or ""
        accepted = sorted(((b, out.value) for b, out in mine if out.ok), key=lambda item: item[0].start, reverse=True)
        for block, rewritten in accepted:
            text = text[:block.start] + rewritten + text[block.end:]
        rejections = describe_rejections([out for _, out in mine], "paragraph")
        total = len(prose(row["text"] or ""))
        results.append(({**row, "text": text},
                        f"{len(accepted)} of {total} paragraphs rewritten between active and passive voice"
                        + (f"; {rejections}" if rejections else "")))
    return results
