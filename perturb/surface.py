"""Deterministic surface edits of a paper's text: spelling, whitespace, layout, typos, language errors.

These are the soundness-neutral edits of the counterfactual-review study (American-to-British
spelling, minor language errors, layout) and the typo side of the presentation perturbation, done
by rule rather than by an LLM so that they are exact under a seed. Each edit takes the paper record,
a ``random.Random`` seeded for that record, and its options, and returns the edited record with a
description of what changed. They see the paper through :mod:`praib.perturb.structure`: word and
space edits change prose paragraphs only (never the title, headings, figures, tables, captions,
equations, code, HTML or the reference list), and inside prose they step over maths, code, links'
targets and titles, URLs and citations; ``layout`` moves whole figure and table blocks.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache

from praib.perturb.structure import FLOAT_KINDS, Block, blocks, edit_words, editable_words, floats, inline_spans, prose
from praib.perturb.text import match_case, read_pairs

_LISTED = 6  # word changes quoted in a description before "..."


@lru_cache(maxsize=None)
def american_to_british() -> dict[str, str]:
    return read_pairs("american_british.tsv")


@lru_cache(maxsize=None)
def language_error_rules() -> dict[str, str]:
    return read_pairs("language_errors.tsv")


def _pick(paragraphs: list[Block], rng: random.Random, fraction: float) -> list[Block]:
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    if not paragraphs:
        return []
    count = max(1, round(fraction * len(paragraphs)))
    return [paragraphs[i] for i in sorted(rng.sample(range(len(paragraphs)), count))]


def _listing(changes: list[str]) -> str:
    return ", ".join(changes[:_LISTED]) + (", ..." if len(changes) > _LISTED else "")


def _replace_blocks(text: str, edited: dict[Block, str]) -> str:
    for block in sorted(edited, key=lambda b: b.start, reverse=True):
        text = text[:block.start] + edited[block] + text[block.end:]
    return text


def spelling(row: dict, rng: random.Random, fraction: float = 0.4) -> tuple[dict, str]:
    """Respell American words in British spelling in a ``fraction`` of the paragraphs (whole words, case kept)."""
    text = row["text"] or ""
    table = american_to_british()
    chosen = _pick(prose(text), rng, fraction)
    changes: list[str] = []

    def respell(word: re.Match) -> str | None:
        stem, apostrophe, tail = word.group().partition("'")
        british = table.get(stem.lower())
        if british is None or not (stem.islower() or stem.isupper() or stem[1:].islower()):
            return None
        changes.append(f"{stem}→{match_case(stem, british)}")
        return match_case(stem, british) + apostrophe + tail

    edited = {}
    for block in chosen:
        new, count = edit_words(text[block.start:block.end], respell)
        if count:
            edited[block] = new
    described = (f"{len(changes)} words respelled in {len(edited)} of {len(chosen)} chosen paragraphs: "
                 f"{_listing(changes)}" if changes else
                 f"no American spellings found in the {len(chosen)} chosen paragraphs")
    return {**row, "text": _replace_blocks(text, edited)}, described


def whitespace(row: dict, rng: random.Random, rate: float = 0.1, widths: tuple[int, ...] = (2, 3)) -> tuple[dict, str]:
    """Widen a ``rate`` share of the single spaces between words in prose to one of ``widths`` spaces."""
    if not 0 < rate <= 1:
        raise ValueError(f"rate must be in (0, 1], got {rate}")
    text = row["text"] or ""
    edited, total, widened = {}, 0, 0
    for block in prose(text):
        chunk = text[block.start:block.end]
        protected = inline_spans(chunk)
        pieces, cursor = [], 0
        for space in re.finditer(r"(?<=\S) (?=\S)", chunk):
            if any(start <= space.start() < end for start, end in protected):
                continue
            total += 1
            if rng.random() < rate:
                pieces += [chunk[cursor:space.start()], " " * rng.choice(widths)]
                cursor = space.end()
                widened += 1
        if cursor:
            edited[block] = "".join(pieces) + chunk[cursor:]
    return ({**row, "text": _replace_blocks(text, edited)},
            f"{widened} of {total} spaces between words widened to {'/'.join(map(str, widths))} spaces")


FIGURES_AND_TABLES = "## Figures and Tables"


def layout(row: dict, rng: random.Random, line_breaks: tuple[int, ...] = (1, 2, 3)) -> tuple[dict, str]:
    """The UKP release's layout variant: every figure, table and algorithm, with its caption, moves into
    a closing "Figures and Tables" section (figures, then tables, then algorithms, each in reading
    order), and the line breaks between blocks are multiplied by one of ``line_breaks``, drawn once per
    paper. Equation rows stay in place, and every block keeps its bytes."""
    if not line_breaks or any(not isinstance(n, int) or n < 1 for n in line_breaks):
        raise ValueError(f"line_breaks must be whole numbers of at least 1, got {line_breaks}")
    text = row["text"] or ""
    parsed = blocks(text)
    moved = floats(text, parsed)
    if not moved:
        return row, "no figures, tables or algorithms to move"
    factor = rng.choice(line_breaks)
    units = sorted([(f.start, f.end, True) for f in moved]
                   + [(b.start, b.end, False) for b in parsed if not any(f.start <= b.start < f.end for f in moved)])
    pieces, separator, position = [], None, 0
    for start, end, is_moved in units:
        # A moved block takes the white space after it along; the one before it stays.
        separator = text[position:start] if separator is None else separator
        if not is_moved:
            pieces += [separator.replace("\n", "\n" * factor), text[start:end]]
            separator = None
        position = end
    # The white space that ended the last kept line (a markdown line break, say) stays with it.
    body = "".join(pieces) + re.match(r"[ \t]*", text[position:] if separator is None else separator).group()
    ordered = sorted(moved, key=lambda f: (FLOAT_KINDS.index(f.kind), f.start))
    between = "\n\n" * factor
    closing = between.join([FIGURES_AND_TABLES, *(text[f.start:f.end] for f in ordered)])
    trailing = "\n" * (factor * text[len(text.rstrip()):].count("\n"))
    counts = [(kind, sum(f.kind == kind for f in moved)) for kind in FLOAT_KINDS]
    listing = ", ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in counts if n)
    spacing = f"line breaks between blocks multiplied by {factor}" if factor > 1 else "line breaks kept"
    return ({**row, "text": f"{body}{between if body else ''}{closing}{trailing}"},
            f"moved {listing} into a closing 'Figures and Tables' section; {spacing}")


def _typo(word: str, rng: random.Random) -> str:
    # The first and last letters stay, as in most real typos: swap two inner neighbours, drop or double a letter.
    operation = rng.choice(("swap", "drop", "double"))
    if operation == "swap" and len(word) >= 4:
        i = rng.randrange(1, len(word) - 2)
        swapped = word[:i] + word[i + 1] + word[i] + word[i + 2:]
        if swapped != word:
            return swapped
        operation = "drop"
    i = rng.randrange(1, len(word) - 1)
    return word[:i] + word[i + 1:] if operation == "drop" else word[:i] + word[i] + word[i:]


def typos(row: dict, rng: random.Random, fraction: float = 0.2, per_paragraph: int = 2) -> tuple[dict, str]:
    """Misspell ``per_paragraph`` words of four or more letters in a ``fraction`` of the paragraphs."""
    return _word_errors(row, rng, fraction, per_paragraph, "typo",
                        lambda w: len(w.group()) >= 4 and w.group().isalpha(), lambda w: _typo(w, rng))


def language_errors(row: dict, rng: random.Random, fraction: float = 0.2, per_paragraph: int = 2) -> tuple[dict, str]:
    """Make ``per_paragraph`` minor grammar slips (a dropped article, is/are, its/it's, ...) in a
    ``fraction`` of the paragraphs, from the rules in ``data/language_errors.tsv``."""
    rules = language_error_rules()
    return _word_errors(row, rng, fraction, per_paragraph, "language error",
                        lambda w: w.group().lower() in rules, lambda w: match_case(w, rules[w.lower()]))


def _word_errors(row, rng, fraction, per_paragraph, label, eligible, corrupt) -> tuple[dict, str]:
    if per_paragraph < 1:
        raise ValueError(f"per_paragraph must be at least 1, got {per_paragraph}")
    text = row["text"] or ""
    chosen = _pick(prose(text), rng, fraction)
    edited, changes = {}, []
    for block in chosen:
        chunk = text[block.start:block.end]
        candidates = [w for w in editable_words(chunk) if eligible(w)]
        picked = sorted(rng.sample(candidates, min(per_paragraph, len(candidates))), key=lambda w: w.start())
        replacements = [(w, corrupt(w.group())) for w in picked]
        for word, new in reversed(replacements):
            end = word.end()
            if not new and chunk[end:end + 1] == " ":  # a dropped word takes its space with it
                end += 1
            chunk = chunk[:word.start()] + new + chunk[end:]
        changes += [f"{w.group()}→{new or '∅'}" for w, new in replacements]
        if replacements:
            edited[block] = chunk
    described = (f"{len(changes)} {label}{'s' if len(changes) > 1 else ''} in {len(edited)} of {len(chosen)} chosen "
                 f"paragraphs: {_listing(changes)}" if changes else f"no place for a {label} in the {len(chosen)} chosen paragraphs")
    return {**row, "text": _replace_blocks(text, edited)}, described
