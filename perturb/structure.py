"""A paper's markdown as editable prose and the markup rule-based edits must leave alone.

:func:`blocks` cuts a paper text into blocks, each ``prose`` or one kind of markup: the ``title``
(the opening ``#`` heading with any lines it wraps onto), ``heading``, ``figure``, ``table``,
``algorithm``, ``caption``, ``equation`` (display maths, and equation-number rows: one-row pipe
tables holding a formula and its number), ``code``, ``html``, ``reference`` (an entry of the
reference list) and ``other`` (anything else that is not white space, such as link definitions).
Between two blocks there is only white space. Inside prose, :func:`inline_spans` finds the markup a
word edit must step over: maths, code, images, HTML, URLs, link targets with their titles,
citations (author-year, numeric, LaTeX and pandoc keys) and footnote marks.

The three formats praib reads all pass through here: plain markdown, the markdown ``praib data pdf``
writes (headings, blank-line paragraphs, captions as paragraphs; with an OCR model also ``$$``
maths and tables), and the UKP counterfactual release's ``paper.md``, converted from ar5iv HTML:
``[FIGURE id]...[/FIGURE]``, ``[TABLE id]...[/TABLE]`` and ``[ALGORITHM id]...[/ALGORITHM]``
blocks around an image or an HTML table and its caption, equations as pipe-table rows
``|  | $$...$$ |  | (1) |``, cross-references as links whose title names the target, and a title
that wraps onto a second line.

Markdown's own structure (headings, fenced and indented code, HTML blocks, pipe tables, list items,
paragraphs) comes from markdown-it-py, a CommonMark parser. Three things are parsed by hand:

- the UKP markers and display maths, because they are not Markdown: to a Markdown parser
  ``[TABLE S3.T1]`` and ``$$`` are paragraph text, and the blank lines inside such a block would cut
  it into paragraphs. They are found on whole lines before markdown-it runs (never inside code),
  and markdown-it parses the text between them;
- which pipe tables are equation rows, since both are tables to Markdown (and a formula's ``||``
  spoils the column count of some of them, which leaves them plain paragraphs of ``|`` lines);
- inline markup, since markdown-it's inline tokens carry no offsets into the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from markdown_it import MarkdownIt

from praib.perturb.text import sections

PROSE = "prose"
FLOAT_KINDS = ("figure", "table", "algorithm")  # the blocks a layout edit moves, in the order it lays them out

_MARKDOWN = MarkdownIt("commonmark").enable("table")
_MARKER_OPEN = re.compile(r"^\[(FIGURE|TABLE|ALGORITHM)(?:[ \t][^\]\n]*)?\][ \t]*\r?$", re.M)
# Display maths alone on its lines; "$$x$$ is the loss" is a paragraph (its maths is an inline span).
_DISPLAY_MATHS = re.compile(r"^[ \t]*(?:\$\$(?:(?!\$\$).)*\$\$|\\\[.*?\\\]|\\begin\{(\w+\*?)\}.*?\\end\{\1\})[ \t]*\r?$",
                            re.S | re.M)
_CAPTION = re.compile(r"^(?:\*\*|__)?(?:(figure|fig\.)|(table)|(algorithm))\s*[A-Z]?\d+(?:\.\d+)*\s*[.:|]", re.I)
_IMAGES = re.compile(r"^(?:!\[[^\]]*\]\([^)]*\)\s*)+$")
_DELIMITER_ROW = re.compile(r"^\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?$")
_MATHS = re.compile(r"\$\$.*?\$\$|\$[^$]+\$|\\\[.*?\\\]|\\\(.*?\\\)", re.S)
_EQUATION_NUMBER = re.compile(r"^\(\s*(?:[A-Z]\.?)?\d+(?:\.\d+)*[a-z]?\s*\)$")
_BLANK_LINE = re.compile(r"\n[ \t]*\r?\n")

_LINK_TARGET = (r"\]\(\s*(?:<[^<>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
                r"(?:\s+(?:\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\((?:[^()\\]|\\.)*\)))?\s*\)")
_NAME = r"(?:(?:van|von|de|der|den|da|di|du|le|la)\s+)*[A-Z][^\W\d_]*(?:[-'’][^\W\d_]+)*"
# At most eight names before "and": an unbounded list would make the search quadratic in long paragraphs.
_AUTHORS = rf"{_NAME}(?:\s+et\s+al\.?|(?:,\s+{_NAME}){{0,6}},?\s+(?:and|&)\s+{_NAME})?"
_YEAR = rf"(?:\[(?:1[89]|20)\d\d[a-z]?{_LINK_TARGET}|(?:1[89]|20)\d\d[a-z]?\b)"
_CITATION = rf"{_AUTHORS},?\s*\(?{_YEAR}"
_INLINE = re.compile(
    r"\$\$.+?\$\$|\$[^$\n]+\$|\\\(.+?\\\)|\\\[.+?\\\]"        # maths
    r"|(`+).+?\1"                                          # code
    r"|!\[[^\]]*\]\([^)]*\)"                               # images
    r"|<!--.*?-->|<[^<>\n]+>"                              # HTML comments, tags and autolinks
    rf"|{_CITATION}(?:\s*;\s*{_CITATION})*|\bet\s+al\."     # author-year: Liu et al. ([2020](#bib.bib13))
    rf"|{_LINK_TARGET}"                                     # link targets and titles: [1](#S1.F1 "Figure 1 ...")
    r"|https?://\S+|www\.\S+"                              # URLs
    r"|\\[a-zA-Z]+\*?(?:\[[^\]]*\])?\{[^}]*\}"             # LaTeX commands with a key: \cite{...}, \ref{...}
    r"|\[@[^\]]*\]|@[A-Za-z][\w:-]*\d\w*"                  # pandoc citation keys
    r"|\[\^[^\]\s]+\]"                                     # footnote marks
    r"|\[\d+(?:\s*[,;–-]\s*\d+)*\](?!\()"                   # numeric citations (a link's text is no citation)
    r"|^[ \t]*(?:>[ \t]*)+(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?"  # quote and list marks that open a line
    r"|^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+",
    re.S | re.M)
_WORD = re.compile(r"(?<![\w'’])[A-Za-z]+(?:['’][a-z]+)?(?![\w'’])")


@dataclass(frozen=True)
class Block:
    start: int
    end: int
    kind: str  # prose or a kind of markup (see the module docstring)


@dataclass(frozen=True)
class Float:
    """A figure, table or algorithm with its caption: what a layout edit moves, ``text[start:end]``."""

    start: int
    end: int
    kind: str  # figure, table or algorithm


def blocks(text: str) -> list[Block]:
    """The blocks of ``text`` in reading order, without the white space around them."""
    code = [(block.start, block.end) for block in _markdown_blocks(text, 0, len(text)) if block.kind == "code"]
    out, position = [], 0
    for region in _hand_regions(text, code):
        out += _markdown_blocks(text, position, region.start)
        out.append(region)
        position = region.end
    out += _markdown_blocks(text, position, len(text))
    return _references(text, _title(text, out))


def prose(text: str) -> list[Block]:
    """The prose blocks of ``text``, references excluded: the only blocks rule-based edits change."""
    return [block for block in blocks(text) if block.kind == PROSE]


def _hand_regions(text: str, code: list[tuple[int, int]]) -> list[Block]:
    """UKP marker blocks and display maths, on whole lines, outside code, in order."""
    found = []
    for match in _MARKER_OPEN.finditer(text):
        close = re.compile(rf"^\[/{match.group(1)}\][ \t]*\r?$", re.M).search(text, match.end())
        # A marker left open is no figure or table: it protects its own line, and what follows is parsed as usual.
        found.append(Block(match.start(), close.end(), match.group(1).lower()) if close
                     else Block(match.start(), match.end(), "other"))
    found += [Block(m.start(), m.end(), "equation") for m in _DISPLAY_MATHS.finditer(text)]
    out, position = [], 0
    for region in sorted(found, key=lambda b: b.start):
        if region.start >= position and not any(start <= region.start < end for start, end in code):
            out.append(_trimmed(text, region.start, region.end, region.kind))
            position = region.end
    return out


def _markdown_blocks(text: str, start: int, end: int) -> list[Block]:
    """The blocks markdown-it finds in ``text[start:end]`` (whole lines), and the leftovers as ``other``."""
    segment = text[start:end]
    line_starts = [0] + [m.end() for m in re.finditer("\n", segment)]
    line_ends = [m.start() for m in re.finditer("\n", segment)] + [len(segment)]
    found = []
    for token in _MARKDOWN.parse(segment):
        kind = _TOKEN_KINDS.get(token.type)
        if kind is None or token.map is None:
            continue
        first, last = token.map[0], token.map[1] - 1
        block = _trimmed(text, start + line_starts[first], start + line_ends[last], kind)
        if block.end > block.start:
            found.append(Block(block.start, block.end, _classified(text[block.start:block.end], kind)))
    out, position = [], start
    for block in found:
        out += _leftovers(text, position, block.start)
        out.append(block)
        position = block.end
    return out + _leftovers(text, position, end)


_TOKEN_KINDS = {"heading_open": "heading", "paragraph_open": PROSE, "table_open": "table", "fence": "code",
                "code_block": "code", "html_block": "html", "hr": "other"}


def _classified(content: str, kind: str) -> str:
    if kind == "html":
        tag = content.lstrip().lower()
        return "table" if tag.startswith("<table") else "figure" if tag.startswith(("<img", "<figure")) else "html"
    if kind == "table" or (kind == PROSE and all(line.lstrip().startswith("|") for line in content.split("\n"))):
        return "equation" if _equation_rows(content) else "table"
    if kind == PROSE and _IMAGES.match(content):
        return "figure"
    if kind == PROSE and _CAPTION.match(content):
        return "caption"
    return kind


def _equation_rows(content: str) -> bool:
    """Whether pipe-table rows hold nothing but formulas, equation numbers like ``(3)`` and empty cells."""
    has_formula = False
    for line in content.split("\n"):
        row = line.strip()
        if _DELIMITER_ROW.match(row):
            continue
        # A formula's own bars (``||x||``) are no cell borders.
        cells = [cell.strip() for cell in _MATHS.sub("\0", row).strip("|").split("|")]
        if not all(cell in ("", "\0") or _EQUATION_NUMBER.match(cell) for cell in cells):
            return False
        has_formula = has_formula or "\0" in cells
    return has_formula


def _leftovers(text: str, start: int, end: int) -> list[Block]:
    """Text no block holds that is not white space (link definitions, say), one ``other`` block per run of lines."""
    out, position = [], start
    for gap in [*_BLANK_LINE.finditer(text, start, end), None]:
        stop = gap.start() if gap else end
        if text[position:stop].strip():
            out.append(_trimmed(text, position, stop, "other"))
        position = gap.end() if gap else end
    return out


def _trimmed(text: str, start: int, end: int, kind: str) -> Block:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Block(start, end, kind)


def _title(text: str, found: list[Block]) -> list[Block]:
    """The opening ``#`` heading becomes the title, with the lines it wraps onto before the first blank line."""
    if not found or found[0].kind != "heading" or text[found[0].start:found[0].start + 2] != "# " \
            or text[:found[0].start].strip():
        return found
    blank = _BLANK_LINE.search(text, found[0].start)
    until = blank.start() if blank else len(text)
    wrapped = [block for block in found if block.start < until]
    return [Block(found[0].start, max(block.end for block in wrapped), "title"), *found[len(wrapped):]]


def _references(text: str, found: list[Block]) -> list[Block]:
    """Prose of a references section is a reference list: a respelt or misspelt entry changes a citation."""
    lists = [(s.start, s.end) for s in sections(text) if s.type == "references"]
    return [Block(b.start, b.end, "reference") if b.kind == PROSE and any(start <= b.start < end for start, end in lists)
            else b for b in found]


def _caption_kind(content: str) -> str | None:
    """``figure``, ``table`` or ``algorithm`` for a caption ("Table 2: ...", "Fig. 3.", ...), else None."""
    match = _CAPTION.match(content)
    if not match:
        return None
    return "figure" if match.group(1) else "table" if match.group(2) else "algorithm"


def floats(text: str, parsed: list[Block] | None = None) -> list[Float]:
    """The figures, tables and algorithms of ``text`` in reading order, each with its caption.

    A UKP marker block holds its caption already; an image, HTML table or pipe table (equation rows
    are no tables) takes the caption of its kind right after it, else the one right before it. A
    caption with no figure or table beside it (the text layer of a PDF keeps only the caption) is a
    float of its own.
    """
    parsed = blocks(text) if parsed is None else parsed
    captions = {i: _caption_kind(text[b.start:b.end]) for i, b in enumerate(parsed) if b.kind == "caption"}
    out = []
    for index, block in enumerate(parsed):
        if block.kind not in FLOAT_KINDS:
            continue
        start, end = block.start, block.end
        caption = next((i for i in (index + 1, index - 1) if captions.get(i) == block.kind), None)
        if caption is not None:
            del captions[caption]
            start, end = min(start, parsed[caption].start), max(end, parsed[caption].end)
        out.append(Float(start, end, block.kind))
    out += [Float(parsed[i].start, parsed[i].end, kind) for i, kind in captions.items() if kind]
    return sorted(out, key=lambda f: f.start)


def inline_spans(chunk: str) -> list[tuple[int, int]]:
    """(start, end) of the inline markup in a prose ``chunk`` that edits step over."""
    return [(m.start(), m.end()) for m in _INLINE.finditer(chunk)]


def editable_words(chunk: str) -> list[re.Match]:
    """The words of a prose ``chunk`` outside its inline markup, in order."""
    words, position = [], 0
    for start, end in [*inline_spans(chunk), (len(chunk), len(chunk))]:
        words += list(_WORD.finditer(chunk, position, start))
        position = end
    return words


def edit_words(chunk: str, edit: Callable[[re.Match], str | None]) -> tuple[str, int]:
    """Apply ``edit`` to every word of a prose ``chunk`` outside its inline markup; a None answer keeps
    the word. Returns the new chunk and the number of words changed."""
    pieces, cursor, changed = [], 0, 0
    for word in editable_words(chunk):
        replacement = edit(word)
        if replacement is not None and replacement != word.group():
            pieces += [chunk[cursor:word.start()], replacement]
            cursor = word.end()
            changed += 1
    return "".join(pieces) + chunk[cursor:], changed
