"""Cross-references (Xref.): mentions in a review of numbered elements of the reviewed paper.

PRAIB section 4.2 and Appendix C.1 count how often a review points at a specific place in
the manuscript, a proxy for how concretely it engages with it. This module writes its own
expression for that; the rules are:

Types (:data:`XREF_TYPES`)
    ``figure``      Figure 2, Fig. 2a, Fig 3(b), Figs. 2-4, Figures 2 and 3, Figure S3
    ``table``       Table 1, Tab. 2, Tbl. 3, Tables 1-3, Table A.1, Table S2, Table IV
    ``section``     Section 3, Sec. 3.2, Sect. 4, Subsection 2.1, Sub-section 2.1, §3.2, § 4,
                    §§ 3-4, and appendices: Appendix B, Appendix A.2, Appendices A and C,
                    App. B, Appx. C (an appendix is a section of the paper)
    ``equation``    Eq. (3), Eq 3, Eqs. 2-4, Eqs. (2) and (3), Eqn. 5, equation 5, Equation (A.1)
    ``theorem``     Theorem 1, Thm. 2, Theorems 1 and 2
    ``lemma``       Lemma 3, Lem. 2, Lemmas 1-3
    ``corollary``   Corollary 1, Cor. 2, Coro. 2, Corollaries 1 and 2
    ``definition``  Definition 3, Def. 2, Defn. 4, Definitions 1-2
    ``page``        page 5, Page 5, pages 3 and 4, p. 5, p.5, pp. 3-4, pg. 7, pgs. 7-8
    ``line``        line 12, Lines 180-182, l. 12, ll. 3-5, L180, L180-L182, L57-59

Identifiers
    A reference needs an identifier right after the keyword (an optional dot, spaces or a
    LaTeX ``~`` in between): a number with optional dotted parts (``3.2.1``), an optional
    panel suffix (``2a``, ``4abcd``) or bracketed panels (``2(a)``, ``2(a-c)``) but not an
    ordinal suffix (``2nd``), and optionally a capital-letter prefix (``S3``, ``A.1``,
    ``A1``); for figures, tables, sections, theorems, lemmas, corollaries and definitions
    also an upper-case Roman numeral (``Table IV``; a lone ``I`` only before punctuation or
    at the end); for sections and appendices also a single capital letter A-H
    (``Appendix B``). Equation identifiers may be bracketed: ``(3)``. Pages and lines take
    plain numbers only.

One mention per reference
    A range or list that continues with further identifiers of the same element type, joined
    by ``-``, ``–``, ``—``, ``to``, ``/``, ``,``, ``and``, ``or``, ``&``, is one mention:
    "Figures 2 and 3", "Tables 1-3", "Eqs. (2)-(4)", "L180-L182", "Sections 3.1, 3.2 and 4".
    Repeating the keyword ("Figure 2 and Figure 3") makes two mentions.

Not references
    Words used as prose, i.e. without an identifier: "figure out", "table of contents",
    "a section of the community", "page limit", "in line with", "theorem proving", "the
    definition of fairness". A keyword (``§`` included) must not follow a letter, digit or
    underscore ("subfigure 2" is no figure; "Subsection 2" is a section). ``L`` with a
    one-digit number is not a line ("L1 loss", "L2 norm", "L1-L2 regularisation"): a line
    written as ``L<n>`` needs two or more digits (``L57``, ``L57-59``, ``L180-L182``).
    ``p``/``pp`` need their dot ("p 5" and "p5" are not pages), and a ``p.``/``pp.`` right
    after a year or a volume/issue number and a comma ("2017, pp. 5998-6008", "vol. 30,
    pp. 1-9": the page range of a formatted citation) is not a page of the reviewed paper.

Case
    Keywords are matched in any case ("FIGURE 2", "figure 2") except the abbreviations
    ``p.``, ``pp.``, ``l.``, ``ll.`` (lower case only) and ``L<n>`` (upper case only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

__all__ = ["XREF_TYPES", "XREF_PATTERN", "GROUP_TYPES", "iter_xref_matches", "XrefMatch", "find_xrefs",
           "xref_counts", "KEYWORD_RUN", "WHOLE_KEYWORD_RUN", "PAPER_XREF_TYPES", "PAPER_XREF_PATTERN",
           "PAPER_KEYWORD_RUN", "PAPER_DIFFERING_TYPES", "PAPER_TYPE_OF_GROUP", "paper_xref_counts"]

#: Element types, in the order used for count columns.
XREF_TYPES: tuple[str, ...] = (
    "figure", "table", "section", "equation", "theorem", "lemma", "corollary", "definition",
    "page", "line",
)

# Separator between keyword and identifier: optional dot, then up to three spaces or "~".
# Up to three spaces between keyword and number, never a blank line ("definition.\n\nP.2" is two sentences).
_GAP = r"\.?(?:(?!\n[^\S\n]*\n)[\s~]){0,3}"
# Numeric identifier: 3, 3.2.1, 2a, 4abcd, 2(a), 2(a-c), S3, A.1, A1 (not an ordinal: "2nd").
_NUM = (r"(?:[A-Z]\.?)?\d+(?:\.\d+)*"
        r"(?:(?!(?:st|nd|rd|th)(?![A-Za-z]))[a-z]{1,4}(?![A-Za-z])|\([a-z](?:\s*[-–,]\s*[a-z])*\))?(?![\da-z])")
# Upper-case Roman numeral; a lone "I" only when punctuation or the end follows.
_ROMAN = r"(?:(?=[IVX]{2})X{0,3}(?:IX|IV|V?I{0,3})|[VX])(?![A-Za-z0-9])|I(?=\s*(?:[.,;:)\]]|\Z))"
_ID = rf"(?:{_NUM}|{_ROMAN})"
_SECTION_ID = rf"(?:{_NUM}|{_ROMAN}|[A-H](?![A-Za-z0-9]))"
_EQ_ID = rf"(?:\(\s*{_NUM}\s*\)|{_NUM})"
_PLAIN = r"\d+(?![\da-z])"

# Continuation of a list or range with more identifiers of the same element.
_JOIN = r"(?:\s*(?:[-–—/&]|,(?:\s*(?:and|or)\b)?|\b(?:and|or|to)\b)\s*)"


def _ids(ident: str) -> str:
    """An identifier and any continuation of the list or range."""
    return rf"{ident}(?:{_JOIN}{ident})*"


# Keywords, written as (first character, rest). ``(?i:...)`` makes the rest
# case-insensitive ("FIGURE 2", "figure 2"); the first character class gives the case.
_KEYWORDS: tuple[tuple[str, str, str, str], ...] = (
    # (type, first character, rest of the keyword, identifier list)
    ("figure", "[Ff]", r"(?i:ig(?:ure)?s?)", _GAP + _ids(_ID)),
    ("table", "[Tt]", r"(?i:ab(?:le)?s?|bls?)", _GAP + _ids(_ID)),
    ("section", "[Ss]", r"(?i:(?:ub-?sec|ec)(?:tion|t)?s?)", _GAP + _ids(_SECTION_ID)),
    ("section", "[Aa]", r"(?i:ppendix|ppendices|ppx|pp(?=\.))", _GAP + _ids(_SECTION_ID)),
    ("equation", "[Ee]", r"(?i:q(?:uation|n)?s?)", _GAP + _ids(_EQ_ID)),
    ("theorem", "[Tt]", r"(?i:heorems?|hms?)", _GAP + _ids(_ID)),
    ("lemma", "[Ll]", r"(?i:emm(?:a|as|ata)|em)", _GAP + _ids(_ID)),
    ("corollary", "[Cc]", r"(?i:orollar(?:y|ies)|oro?)", _GAP + _ids(_ID)),
    ("definition", "[Dd]", r"(?i:efinitions?|efn?s?)", _GAP + _ids(_ID)),
    ("page", "[Pp]", r"(?i:ages?|gs?)", _GAP + _ids(_PLAIN)),
    ("line", "[Ll]", r"(?i:ines?)", _GAP + _ids(_PLAIN)),
)
#: A lower-cased run of ASCII letters in which a reference begins: a keyword of
#: _KEYWORDS or _SPECIAL (or "sub" of "Sub-section"), possibly followed by the letters that
#: open its identifier when nothing comes between ("TableIV", "FigureS3", "AppendixB").
#: A reference starts right before such a run or before "§";
#: :mod:`praib.metrics.text.textstats` tries the expression only there (a test checks that
#: every keyword is covered).
_SHARED_RUNS = (r"fig(?:ure)?s?|tab(?:le)?s?|tbls?|(?:sub)?sec(?:tion|t)?s?|sub|eq(?:uation|n)?s?|theorems?|thms?"
                r"|lemm(?:a|as|ata)|lem|corollar(?:y|ies)|coro?|definitions?|defn?s?|pages?|pgs?|pp?")
KEYWORD_RUN = re.compile(rf"(?:{_SHARED_RUNS}|appendix|appendices|appx|app|lines?|ll?)(?:[a-z]|[ivx]+)?")
#: A lower-cased run of ASCII letters that is a whole keyword of _KEYWORDS or _SPECIAL ("sub" of "Sub-section" is
#: not one): a reference that begins right before such a run, however it is written, goes on after it with an
#: optional full stop, at most three spaces or "~", then a digit, a capital ASCII letter or "(" (its identifier, or
#: the rest of one that the run's last letter begins, as in "FigS3"). :mod:`praib.metrics.text.textstats` tries the
#: expression before such a run only where that follows (a test checks every spelling in every case).
WHOLE_KEYWORD_RUN = re.compile(r"fig(?:ure)?s?|tab(?:le)?s?|tbls?|(?:sub)?sec(?:tion|t)?s?|eq(?:uation|n)?s?|theorems?"
                               r"|thms?|lemm(?:a|as|ata)|lem|corollar(?:y|ies)|coro?|definitions?|defn?s?|pages?|pgs?"
                               r"|pp?|appendix|appendices|appx|app|lines?|ll?")
# "p."/"pp." right after a year or a volume/issue number and a comma is the page range of a
# formatted citation ("2017, pp. 5998-6008", "vol. 30, pp. 1-9"), not a page of the paper.
# (Written as look-behinds that end with the already consumed "p".)
# A paper under review has no page 1000; a page range followed by a year is a reference's.
_NOT_CITED_SPAN = r"(?!\d{4})(?![\d\s–-]{1,12},\s*(?:19|20)\d\d(?!\d))"
_NOT_CITED_PAGES = "".join(
    f"(?<!{before},{space}p)"
    for before in (r"[12]\d{3}", r"vol\.\s\d", r"vol\.\s\d\d", r"vol\.\s\d{3}", r"no\.\s\d", r"no\.\s\d\d")
    for space in ("", r"\s")
)
_SPECIAL: tuple[tuple[str, str, str], ...] = (
    # (type, first character, the rest of the reference)
    # p. 5, pp. 3-4; not the pages of a cited work ("pp. 5998-6008", "pp. 112-120, 2017").
    ("page", "p", _NOT_CITED_PAGES + r"p?\.[\s~]{0,3}" + _NOT_CITED_SPAN + _ids(_PLAIN)),
    ("line", "l", r"l?\.[\s~]{0,3}" + _ids(_PLAIN)),  # l. 12, ll. 3-5
    ("line", "L", r"\d{2,}(?:\s*[-–]\s*L?\d+)?(?![\d])"),  # L180, L180-L182, L57-59
    ("section", "§", r"§?\s{0,2}" + _ids(_SECTION_ID)),  # §3.2, §§ 3-4
)


def _alternatives(keywords=_KEYWORDS, special=_SPECIAL) -> list[tuple[str, str, str, str]]:
    """(type, group name, first letter, rest) of each alternative of the expression, in order: one per keyword and
    first-letter case; group names repeat the type with a number (``section_2``)."""
    alternatives, used = [], {}
    entries = [(t, first, rest + ids) for t, first, rest, ids in keywords] + list(special)
    for kind, first, body in entries:
        for char in first.strip("[]"):
            n = used[kind] = used.get(kind, 0) + 1
            alternatives.append((kind, kind if n == 1 else f"{kind}_{n}", char, body))
    return alternatives


def _build_pattern(alternatives: list[tuple[str, str, str, str]]) -> re.Pattern:
    # A reference must not follow a letter, digit or underscore. The expression therefore
    # starts by consuming one character that is none of those (the searched text is given
    # a leading space, see iter_xref_matches), then the alternatives (_alternatives), each
    # starting with its literal letter. This shape lets the regex engine scan quickly for
    # candidate positions and skip alternatives on their first letter; it is about twice as
    # fast as a leading look-behind. An empty named group closing each alternative names its
    # type (``match.lastgroup``). (Side effect: a keyword glued to a previous reference that
    # ends in ")", as in "Eq. (3)Table 1", is not found, the ")" being taken.)
    return re.compile(r"[^A-Za-z0-9_](?:" + "|".join(f"{re.escape(first)}{rest}(?P<{name}>)"
                                                     for _, name, first, rest in alternatives) + ")")


#: The single compiled expression (alternatives marked by named groups). Search
#: ``" " + text``: each match then starts with the character before the reference.
_XREF_ALTERNATIVES = _alternatives()
XREF_PATTERN = _build_pattern(_XREF_ALTERNATIVES)
#: Group name (``match.lastgroup``) -> element type.
GROUP_TYPES: dict[str, str] = {name: name.split("_")[0] for name in XREF_PATTERN.groupindex}


def iter_xref_matches(text: str):
    """Raw matches of :data:`XREF_PATTERN` over ``" " + text`` (offsets shifted by one)."""
    return XREF_PATTERN.finditer(" " + text)


@dataclass(frozen=True)
class XrefMatch:
    """One mention: its element ``type``, the matched ``text`` and its ``start`` offset."""

    type: str
    text: str
    start: int


def _type_of(match: re.Match) -> str:
    return GROUP_TYPES[match.lastgroup]


def find_xrefs(text: Optional[str]) -> list[XrefMatch]:
    """All cross-reference mentions in ``text``, in order of appearance."""
    if not text:
        return []
    # Each match includes the character before the reference, and offsets in " " + text
    # are one more than in text: both cancel out below.
    return [XrefMatch(_type_of(m), m.group()[1:], m.start()) for m in iter_xref_matches(text)]


# ---------------------------------------------------------------------------------------------------------------
# PRAIB's own categories (Appendix C.1)
# ---------------------------------------------------------------------------------------------------------------

#: The element types of PRAIB's expression (Appendix C.1): praib's but lines, ``§`` and appendices, plus datasets and
#: databases ("Dataset 2", "data set 3", "DS 1", "Database 1", "DB 2").
PAPER_XREF_TYPES: tuple[str, ...] = (
    "figure", "table", "section", "equation", "theorem", "lemma", "corollary", "definition", "page", "dataset",
    "database",
)
_PAPER_KEYWORDS = tuple(entry for entry in _KEYWORDS if entry[0] in PAPER_XREF_TYPES and entry[1] != "[Aa]") + (
    ("dataset", "[Dd]", r"(?i:ata[^\S\n]?sets?)", _GAP + _ids(_ID)),
    ("dataset", "D", "S", _GAP + _ids(_ID)),
    ("database", "[Dd]", r"(?i:atabases?)", _GAP + _ids(_ID)),
    ("database", "D", "B", _GAP + _ids(_ID)),
)
#: PRAIB's categories written with praib's rules (identifiers, lists and ranges, prose that is no reference):
#: a named variant of :data:`XREF_PATTERN`, to count references as the paper counts them. Search ``" " + text``.
_PAPER_ALTERNATIVES = _alternatives(_PAPER_KEYWORDS, tuple(entry for entry in _SPECIAL if entry[0] == "page"))
PAPER_XREF_PATTERN = _build_pattern(_PAPER_ALTERNATIVES)
#: The categories in which PRAIB's count differs from praib's: sections (without § and appendices), datasets and
#: databases. The others are written with the same rules (on the real texts of ../shared/data their counts agree).
PAPER_DIFFERING_TYPES: tuple[str, ...] = ("section", *(t for t in PAPER_XREF_TYPES if t not in XREF_TYPES))
#: Group name of :data:`XREF_PATTERN` -> element type, for the alternatives that :data:`PAPER_XREF_PATTERN` has too.
#: At any place both expressions try, in order, their alternatives that begin with the letter found there, and those
#: they share come first in both (a test checks it): where praib's expression matches with one of these, PRAIB's
#: matches the same text with the same type; where praib's matches with another (a line, an appendix, §) or not at
#: all, PRAIB's matches a dataset, a database or nothing. :mod:`praib.metrics.text.textstats` derives PRAIB's count
#: from praib's matches so.
PAPER_TYPE_OF_GROUP: dict[str, str] = {
    name: kind for kind, name, first, rest in _XREF_ALTERNATIVES
    if (kind, first, rest) in {(k, f, r) for k, _, f, r in _PAPER_ALTERNATIVES}}
#: What :data:`KEYWORD_RUN` is to :data:`XREF_PATTERN`, for :data:`PAPER_XREF_PATTERN`: a lower-cased run of ASCII
#: letters in which one of its references begins ("data" of "data set 2" included); it has no "§".
PAPER_KEYWORD_RUN = re.compile(rf"(?:{_SHARED_RUNS}|data(?:sets?|bases?)?|ds|db)(?:[a-z]|[ivx]+)?")


def paper_xref_counts(text: Optional[str]) -> dict[str, int]:
    """Number of mentions of each type in :data:`PAPER_XREF_TYPES` under PRAIB's categories (zeros included)."""
    counts = dict.fromkeys(PAPER_XREF_TYPES, 0)
    if text:
        for match in PAPER_XREF_PATTERN.finditer(" " + text):
            counts[match.lastgroup.split("_")[0]] += 1
    return counts


def xref_counts(text: Optional[str]) -> dict[str, int]:
    """Number of mentions of each type in :data:`XREF_TYPES` (zeros included)."""
    counts = dict.fromkeys(XREF_TYPES, 0)
    if text:
        for m in iter_xref_matches(text):
            counts[_type_of(m)] += 1
    return counts
