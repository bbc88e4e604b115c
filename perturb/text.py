"""The typed sections of a paper's markdown text that perturbations work on.

Sections run from one ``#`` heading (outside code and display maths) to the next and get a canonical
type from the section-name taxonomy in ``data/section_types.yaml`` (method, experiments, background,
...), so aspect-targeted edits touch only the sections of their aspect. The blocks of a paper (prose,
headings, figures, tables, captions, maths, ...) and which parts of it an edit may change are
:mod:`praib.perturb.structure`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from praib.records.markdown import HEADING, blank_line_chunks

DATA_DIR = Path(__file__).resolve().parent / "data"

# Code and display maths may hold blank lines and lines that look like headings: they are cut out first.
_FENCED = re.compile(r"^```.*?^```[^\n]*$|\$\$.*?\$\$|\\begin\{(\w+\*?)\}.*?\\end\{\1\}", re.S | re.M)
_NUMBERING = re.compile(r"^(?:(?:\d+|[ivxlc]+)(?:\.\d+)*\.?|[A-H](?:\.\d+)+\.?)\s+", re.I)
_LETTER_NUMBERED = re.compile(r"^[A-H](?:\.\d+)*[.:]?\s+\S")


@dataclass(frozen=True)
class Section:
    heading: str | None  # the heading's words, None for the text before the first heading
    type: str | None     # canonical section type, None when the taxonomy does not know the heading
    start: int           # where the section body starts (after its heading line)
    end: int


def heading_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every ``#`` heading line of ``text`` outside code and display maths, in reading
    order, without its line break. (The blocks of a paper's markdown are :func:`praib.perturb.structure.blocks`'.)"""
    spans: list[tuple[int, int]] = []
    position = 0
    for match in _FENCED.finditer(text):
        spans += _heading_lines(text, position, match.start())
        position = match.end()
    return spans + _heading_lines(text, position, len(text))


def _heading_lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    # A heading line directly followed by its first paragraph is common in converted papers: any line may be one.
    found = []
    for chunk_start, chunk_end in blank_line_chunks(text, start, end):
        position = chunk_start
        for line in text[chunk_start:chunk_end].split("\n"):
            if HEADING.match(line):
                found.append((position, position + len(line)))
            position += len(line) + 1
    return found


@lru_cache(maxsize=None)
def section_taxonomy() -> tuple[tuple[tuple[str, tuple[re.Pattern, ...]], ...], dict[str, tuple[str, ...]]]:
    """(section type, heading patterns) in matching order, and the section types of each aspect."""
    raw = yaml.safe_load((DATA_DIR / "section_types.yaml").read_text(encoding="utf-8"))
    types = tuple((name, tuple(re.compile(p) for p in patterns)) for name, patterns in raw["types"].items())
    aspects = {name: tuple(kinds) for name, kinds in raw["aspects"].items()}
    return types, aspects


def heading_type(heading: str) -> str | None:
    """The canonical type of a section heading ("3.2 Training details" -> "method"), None if unknown."""
    words = _NUMBERING.sub("", heading.strip().strip("*_").strip()).lower()
    for name, patterns in section_taxonomy()[0]:
        if any(p.search(words) for p in patterns):
            return name
    return None


def sections(text: str) -> list[Section]:
    """The sections of ``text``, each typed by its heading; unmatched subsections inherit their parent's type."""
    headings = [((start, end), HEADING.match(text[start:end])) for start, end in heading_spans(text)]
    out: list[Section] = []
    if not headings or text[:headings[0][0][0]].strip():
        out.append(Section(None, None, 0, headings[0][0][0] if headings else len(text)))
    parents: list[tuple[int, str | None]] = []
    after_references = False
    for index, ((_, heading_end), match) in enumerate(headings):
        level, words = len(match.group(1)), match.group(2)
        kind = heading_type(words)
        # "A Proofs" names an appendix only once the references are behind us (a title may start with "A ").
        if after_references and kind is None and _LETTER_NUMBERED.match(words.strip("*_ ")):
            kind = "appendix"
        while parents and parents[-1][0] >= level:
            parents.pop()
        if kind is None and parents:
            kind = parents[-1][1]
        parents.append((level, kind))
        after_references = after_references or kind == "references"
        end = headings[index + 1][0][0] if index + 1 < len(headings) else len(text)
        out.append(Section(words.strip("*_ "), kind, min(heading_end + 1, end), end))
    return out


def aspect_section_types(aspect: str) -> tuple[str, ...]:
    return section_taxonomy()[1][aspect]








def match_case(template: str, word: str) -> str:
    """``word`` in the case pattern of ``template`` (COLOR -> COLOUR, Color -> Colour)."""
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def read_pairs(name: str) -> dict[str, str]:
    """A two-column tab-separated data file (``#`` lines are comments) as a mapping."""
    pairs = {}
    for number, line in enumerate((DATA_DIR / name).read_text(encoding="utf-8").split("\n"), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        source, sep, target = line.partition("\t")
        if not sep:
            raise ValueError(f"{DATA_DIR / name}: line {number}: expected WORD<TAB>REPLACEMENT")
        pairs[source.strip()] = target.strip()
    return pairs
