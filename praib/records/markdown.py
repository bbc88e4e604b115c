"""The paragraphs and headings of a paper's markdown text, for every stage that numbers or edits them.

A blank line (a line of nothing but spaces and tabs, as CommonMark defines it; lines may end in
``\n`` or ``\r\n``) ends a paragraph.
Spans are character offsets into the text itself, so that an edit of one paragraph leaves every
other character where it was, and ids built on them (``p3``, ``s3.p2``) stay stable.
"""

from __future__ import annotations

import re

# An ATX heading line: its '#' marks and its words.
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BLANK_LINES = re.compile(r"\n[ \t]*\r?\n\s*")


def blank_line_chunks(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of ``text[start:end]`` between blank lines, as it stands: a run
    may keep trailing white space, and one before a leading blank line is empty."""
    end = len(text) if end is None else end
    chunks, position = [], start
    for gap in _BLANK_LINES.finditer(text, start, end):
        chunks.append((position, gap.start()))
        position = gap.end()
    chunks.append((position, end))
    return chunks


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each paragraph of ``text`` in reading order, without the white space around it."""
    spans = []
    for start, end in blank_line_chunks(text):
        chunk = text[start:end]
        if chunk.strip():
            spans.append((start + len(chunk) - len(chunk.lstrip()), start + len(chunk.rstrip())))
    return spans
