"""Formatted bibliographic references (MLA, APA, IEEE) inside review texts.

PRAIB section 4.2 and Appendix C.2 count the external references a review gives in a
standard citation style, with authors, title and year, so that each can be checked against
a bibliographic database. An in-text marker such as "Smith et al. (2020)" carries no title
and cannot be checked: it is not a formatted citation and is not returned.

Recognised forms (this module's own expressions; matching is deliberately tolerant of
small deviations such as "and" for "&" or a missing bracket number):

APA
    ``Laine, S., & Aila, T. (2022). Visual counterfactual explanations. In CVPR.``
    Authors as "Surname, I." (initials with dots, "J.-P." allowed), separated by commas,
    the last joined by "&" or "and", optionally ending in "et al." or an ellipsis and a last
    author; then "(YYYY)" (a letter suffix or ", Month" allowed), a full stop, and the title
    running to the first ``.``/``?``/``!`` followed by whitespace, ``)``, ``]`` or the end. An
    optional source ("In CVPR.", "NeurIPS.", "arXiv ...", "Proceedings ...") belongs to the
    matched text. The short author forms "Vaswani et al. (2017). Title." and
    "Surname and Surname (YYYY). Title." also count, but only where a reference list item
    would start: at the start of a line (after an optional "-", "*", "1.", "[1]" marker) or
    right after ``:``, ``;``, ``(`` or ``[``; elsewhere "... as in Smith et al. (2020). The
    authors ..." is ordinary prose.
MLA
    ``Vaswani, Ashish, et al. "Attention Is All You Need." Advances in Neural Information
    Processing Systems, vol. 30, 2017.`` First author "Surname, Given names" (optionally
    after a "[n]" number), then either ", et al." or further authors "Given Surname" joined
    by commas and a final "and"; then the title in double quotes (straight or curly), and a
    container with the year.
IEEE
    ``[3] A. Vaswani, N. Shazeer, and N. Parmar, "Attention is all you need," in Proc.
    NeurIPS, 2017, pp. 5998–6008.`` Optional bracket number; authors as "I. Surname"
    (initials first), joined by commas and "and", optionally "et al."; then the quoted title
    and a container with the year. A numbered item whose year is in parentheses is IEEE whatever
    the order of its names (``[1] Vaswani, Ashish, et al. "Title." Venue (2017).``), as the PRAIB
    paper's IEEE expression (Appendix C.2) takes it; its authors are read as MLA's.

For MLA and IEEE the year is the first number 1800-2099 within 250 characters after the
closing quote (no quote or line break in between; "arXiv:2010.11929" is not a year), and the
matched text runs to the year plus an optional page range and full stop. A reference needs
a year: without one it is not returned. A reference lies on one line: its authors, title
and year are not searched across line breaks. Surnames may carry particles ("van der Maaten",
"de Freitas") and non-ASCII letters ("Müller", "Żurawicki").

Fields of :class:`Citation`: ``authors`` are the names as written, one per author, without
"et al." (APA "Laine, S."; MLA first author "Vaswani, Ashish", later ones "Noam Shazeer";
IEEE "A. Vaswani"); ``title`` is stripped of its quotes and of a final ``.`` or ``,``
(a final ``?`` or ``!`` is kept); ``text`` is the whole matched reference; the property
``surnames`` gives the family names ("Laine", "van der Maaten") for look-ups.

Checking the references against Crossref, OpenAlex, DBLP or a local bibliography, and the
share verified per review, is :mod:`praib.sources.verification`'s work; this module has no network code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import Callable, Optional

__all__ = ["Citation", "find_citations", "count_citations", "STYLES"]

STYLES: tuple[str, ...] = ("APA", "MLA", "IEEE")

# --- building blocks ---------------------------------------------------------------------
_UP = r"[A-ZÀ-ÖØ-ÞĀ-ſ]"                      # capital (Latin-1 and Latin Extended-A)
_LET = r"[^\W\d_]"                            # any letter
_PARTICLE = r"(?:[Vv]an|[Vv]on|[Dd]er|[Dd]en|[Dd]e|[Dd]el|[Dd]ella|[Dd]i|[Dd]a|[Dd]os|[Dd]u|[Ll]e|[Ll]a|[Tt]er|[Zz]u)"
_SURNAME = rf"(?:{_PARTICLE}\s+){{0,3}}{_UP}{_LET}+(?:[-'’]{_UP}?{_LET}+)*"
_INITIALS = rf"{_UP}\.(?:\s?-?{_UP}\.)*"
_GIVEN = rf"(?:{_UP}{_LET}+(?:-{_UP}{_LET}+)?|{_UP}\.)"
_GIVENS = rf"{_GIVEN}(?:\s+{_GIVEN})*"
_ET_AL = r"et\s+al\."
_NOT_IN_WORD = rf"(?<!{_LET})(?<![-'’])"
_YEAR = r"(?<![\d.:/])(?P<year>(?:1[89]|20)\d{2})(?![\d]|\.\d)"

# APA authors "Surname, I." ... and the short forms, each ending where "(YYYY)" starts.
_APA_AUTHOR = rf"{_SURNAME},\s+{_INITIALS}"
_APA_AUTHORS_RE = re.compile(
    rf"{_NOT_IN_WORD}{_APA_AUTHOR}(?:,\s+{_APA_AUTHOR})*"
    rf"(?:,?\s+(?:&|and)\s+{_APA_AUTHOR}|,?\s+(?:\.\.\.|…)\s+{_APA_AUTHOR}|,?\s+{_ET_AL})?\s*\Z"
)
_APA_SHORT_AUTHORS_RE = re.compile(
    rf"{_NOT_IN_WORD}{_SURNAME}(?:\s+{_ET_AL}|(?:,\s+{_SURNAME})*,?\s+(?:&|and)\s+{_SURNAME})?\s*\Z"
)
# Where a short-form APA reference may begin: what precedes it on its line is only a list
# marker (or nothing), or ends in ":", ";", "(" or "[".
_LIST_ITEM_PREFIX_RE = re.compile(r"[ \t]*(?:(?:[-*+•]|\d{1,3}[.)]|\[\d{1,3}\])[ \t]*)?|.*[:;(\[][ \t]*")
_APA_ANCHOR_RE = re.compile(
    r"\(" + _YEAR + r"[a-z]?(?:,\s*[A-Za-z][A-Za-z .]{0,20})?\)\.[ \t]+"
    r"(?P<title>[A-Z0-9À-Þ\"“'‘][^\n]{1,300}?)(?<!\bvs)(?<!\b[A-Z])(?P<stop>[.?!])(?=[\s)\]]|\Z)"
    r"(?:[ \t]+(?:In\s[^\n]{1,150}?|(?:arXiv|Proc\.|Proceedings|Advances|Journal|Transactions|IEEE|ACM)[^\n]{0,150}?"
    r"|[A-Z][A-Za-z]*[A-Z][A-Za-z]*(?:\s+\d{4})?)\.(?=\s|\Z))?"
)

# MLA and IEEE: a quoted title, then the container with the year.
_QUOTED_RE = re.compile(
    r"[\"“](?P<title>[^\"“”\n]{2,300}?)(?P<stop>[.,?!]?)[\"”]"
    r"(?P<container>[^\"“”\n]{0,250}?)" + _YEAR
    + r"(?:,?\s*(?:pp?\.\s*)?\d+(?:\s*[-–—]\s*\d+)?)?\.?"
)
_IEEE_AUTHOR = rf"{_INITIALS}\s?{_SURNAME}"
_IEEE_AUTHORS_RE = re.compile(
    rf"(?:\[\d{{1,3}}\]\s*)?{_NOT_IN_WORD}{_IEEE_AUTHOR}(?:,\s+{_IEEE_AUTHOR})*"
    rf"(?:,?\s+and\s+{_IEEE_AUTHOR})?(?:,?\s+{_ET_AL})?,?\s*\Z"
)
_MLA_AUTHORS_RE = re.compile(
    rf"(?:\[\d{{1,3}}\]\s*)?{_NOT_IN_WORD}(?P<first>{_SURNAME},\s+{_GIVENS})"
    rf"(?P<others>(?:,\s+{_GIVENS}\s+{_SURNAME})*,?\s+and\s+{_GIVENS}\s+{_SURNAME}|,\s+{_ET_AL})?\.?\s*\Z"
)
_MLA_SPLIT_RE = re.compile(r",\s*(?:and\s+)?|\s+and\s+")

_APA_AUTHOR_RE = re.compile(_APA_AUTHOR)
_SURNAME_RE = re.compile(_SURNAME)
_IEEE_AUTHOR_RE = re.compile(_IEEE_AUTHOR)
_LEADING_INITIALS_RE = re.compile(rf"^(?:{_UP}\.\s?-?)+\s*")
_SPACES_RE = re.compile(r"\s+")

_WINDOW = 300  # characters searched for the author list before a year or a title
# How far before its year a match of _QUOTED_RE can start: the opening quote, a title of at most 300
# characters and its stop, the closing quote, and at most 250 characters of container. (A match of
# _APA_ANCHOR_RE starts right before its year.)
_QUOTED_REACH = 1 + 300 + 1 + 1 + 250


@dataclass(frozen=True)
class Citation:
    """One formatted reference found in a text."""

    style: str
    authors: tuple[str, ...]
    title: str
    year: int
    text: str

    @property
    def surnames(self) -> tuple[str, ...]:
        """Family names of the authors (for look-ups), e.g. ("Vaswani", "Shazeer")."""
        return tuple(_surname(a) for a in self.authors)


def _surname(author: str) -> str:
    if "," in author:
        return author.split(",", 1)[0].strip()
    words = _LEADING_INITIALS_RE.sub("", author).split()
    for i, word in enumerate(words[:-1]):
        if re.fullmatch(_PARTICLE, word):
            return " ".join(words[i:])
    return words[-1] if words else author


def _clean(text: str) -> str:
    return _SPACES_RE.sub(" ", text).strip()


def _title(title: str, stop: str) -> str:
    title = _clean(title)
    if stop in ("?", "!"):
        title += stop
    return title


def _window(text: str, end: int) -> tuple[str, int]:
    """The text before ``end`` on the same line (at most :data:`_WINDOW` characters)."""
    start = max(0, end - _WINDOW, text.rfind("\n", 0, end) + 1)
    return text[start:end], start


def _apa(text: str, start: int) -> list[tuple[int, int, Callable[[], Citation]]]:
    found = []
    for anchor in _APA_ANCHOR_RE.finditer(text, start):
        window, offset = _window(text, anchor.start())
        authors_match = _APA_AUTHORS_RE.search(window)
        short = authors_match is None
        if short:
            authors_match = _APA_SHORT_AUTHORS_RE.search(window)
            if not authors_match:
                continue
            start = offset + authors_match.start()
            if not _LIST_ITEM_PREFIX_RE.fullmatch(text, text.rfind("\n", 0, start) + 1, start):
                continue
        start = offset + authors_match.start()
        found.append((start, anchor.end(), partial(_apa_citation, text, start, anchor, authors_match.group(), short)))
    return found


def _apa_citation(text: str, start: int, anchor: re.Match, authors_text: str, short: bool) -> Citation:
    if short:
        authors = tuple(a.group() for a in _SURNAME_RE.finditer(authors_text))
    else:
        authors = tuple(_clean(a.group()) for a in _APA_AUTHOR_RE.finditer(authors_text))
    return Citation("APA", authors, _title(anchor["title"], anchor["stop"]), int(anchor["year"]),
                    _clean(text[start:anchor.end()]))


_OPENING_QUOTE_RE = re.compile(r"[\"“]")
_UNQUOTED_RUN_RE = re.compile(r"[^\"“”\n]*")  # what a title or a container of _QUOTED_RE is made of
_YEAR_LIKE_RE = re.compile(r"(?:1[89]|20)\d\d")


def _quoted_anchors(text: str, start: int):
    """The matches of ``_QUOTED_RE.finditer(text, start)``, the expression tried only at the opening quotes that
    can begin one: the first quote or line break after it is a closing quote, 2 to 301 characters on (a title and
    its stop), and a year-like number begins at most 250 characters after that, before the next quote or line
    break (in its container). (A match begins with a quote: trying each of those in turn finds the same.)"""
    end = len(text)
    while True:
        opening = _OPENING_QUOTE_RE.search(text, start)
        if opening is None:
            return
        at = opening.start()
        closing = _UNQUOTED_RUN_RE.match(text, at + 1).end()
        if 2 <= closing - at - 1 <= 301 and closing < end and text[closing] in "\"”":
            container_end = min(_UNQUOTED_RUN_RE.match(text, closing + 1).end(), closing + 1 + 250 + 4)
            if _YEAR_LIKE_RE.search(text, closing + 1, container_end) is not None:
                anchor = _QUOTED_RE.match(text, at)
                if anchor is not None:
                    yield anchor
                    start = anchor.end()
                    continue
        start = at + 1


def _quoted(text: str, start: int) -> list[tuple[int, int, Callable[[], Citation]]]:
    found = []
    for anchor in _quoted_anchors(text, start):
        window, offset = _window(text, anchor.start())
        authors_match = _IEEE_AUTHORS_RE.search(window)
        style = names = "IEEE"
        if not authors_match:
            authors_match = _MLA_AUTHORS_RE.search(window)
            style = names = "MLA"
            if not authors_match:
                continue
            if _numbered_with_year_in_parentheses(authors_match, anchor, text):
                style = "IEEE"
        start = offset + authors_match.start()
        found.append((start, anchor.end(), partial(_quoted_citation, text, start, anchor, authors_match, style, names)))
    return found


def _numbered_with_year_in_parentheses(authors_match: re.Match, anchor: re.Match, text: str) -> bool:
    """``[1] Vaswani, Ashish, et al. "Title." Venue (2017)``: a numbered item whose year closes in
    parentheses is the PRAIB paper's IEEE pattern (Appendix C.2), whatever the order of the names."""
    year = anchor.start("year")
    return (authors_match.group().startswith("[") and text[year - 1:year] == "("
            and text[anchor.end("year"):anchor.end("year") + 1] == ")")


def _quoted_citation(text: str, start: int, anchor: re.Match, authors_match: re.Match, style: str,
                     names: str) -> Citation:
    if names == "IEEE":
        authors = tuple(_clean(a.group()) for a in _IEEE_AUTHOR_RE.finditer(authors_match.group()))
    else:
        others = [a for a in _MLA_SPLIT_RE.split(authors_match["others"] or "") if a and not a.startswith("et al")]
        authors = tuple(_clean(a) for a in [authors_match["first"], *others])
    return Citation(style, authors, _title(anchor["title"], anchor["stop"]), int(anchor["year"]),
                    _clean(text[start:anchor.end()]))


def _first_of_overlaps(text: Optional[str], first_year: int = 0) -> list[tuple[int, int, Callable[[], Citation]]]:
    """The references found in ``text``, in order of appearance (overlaps: the first wins); no year of one
    starts before ``first_year`` (see count_citations)."""
    if not text:
        return []
    # The expressions are searched from where their first match can start (a search from a position
    # still sees the text before it, as the look-behinds need). Cheap substring tests first: APA needs
    # "(YYYY)." and the other styles a quote.
    candidates = []
    apa_start, quoted_start = max(0, first_year - 1), max(0, first_year - _QUOTED_REACH)
    if text.find(").", apa_start) >= 0:
        candidates += _apa(text, apa_start)
    if text.find('"', quoted_start) >= 0 or text.find("“", quoted_start) >= 0:
        candidates += _quoted(text, quoted_start)
    if not candidates:
        return []
    candidates.sort(key=lambda c: (c[0], -c[1]))
    result, last_end = [], -1
    for start, end, citation in candidates:
        if start >= last_end:
            result.append((start, end, citation))
            last_end = end
    return result


def find_citations(text: Optional[str]) -> list[Citation]:
    """Formatted references in ``text`` in order of appearance (overlaps: the first wins)."""
    return [citation() for _, _, citation in _first_of_overlaps(text)]


def count_citations(text: Optional[str], first_year: int = 0) -> int:
    """``len(find_citations(text))``, without building the citations.

    ``first_year``: for a caller that knows it, where in ``text`` the first number that a year can be
    (18xx, 19xx or 20xx, as four digits) starts; the search skips the text before it that no reference
    can reach."""
    return len(_first_of_overlaps(text, first_year))
