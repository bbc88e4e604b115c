"""Turn free-text reviews into sections and scores.

:func:`parse_review` reads one review as a model or a person wrote it and
returns a :class:`ParsedReview`; :func:`parse_reviews` does so for every record
of a review Dataset that came without structured fields.
:func:`strength_weakness_bullets` gives the items of the lists in a review's
strengths and weaknesses sections, the points the target-aspect study labels.

What is recognised
------------------
Section labels, matched through the synonym table ``_SECTION_LABELS``
(case, punctuation, numbering and parenthesised notes are ignored), written as

* markdown headers of any level, also repeated (``## ## Weaknesses``,
  ``### ## Summary``) or inside bold (``**## Summary**``);
* bold labels with the colon inside or outside (``**Summary:**``,
  ``**Summary**:``), and HTML ``<b>``/``<strong>`` labels at the start of a
  ``<p>`` block; the other HTML tags are removed and entities unescaped;
* plain ``Label:`` at the start of a line, or a label alone on its line.

The content of a section is the text after its label, on the same line and on
the following lines, up to the next recognised label (or the next markdown
header at the same or a higher level than the section's own header). Lists
stay in their section; whitespace is normalised (runs of spaces collapsed,
lines stripped, at most one blank line). A numbered or bulleted line is a label
only when the label stands alone on it, so that list items such as
``- **Limitations:** ...`` inside the weaknesses stay there. Text before the
first section and after score or closing labels (key reasons, justifications,
"Review:") is discarded; it stays in the record's ``text``.

A combined "Strengths and weaknesses" section (NeurIPS 2022-2024 form, ICLR
2022 "Main review") fills whichever of ``strengths`` and ``weaknesses`` has no
section of its own: both when the review has neither, and the reason notes it.

Scores are read from ``Label: value`` (also ``**Label:** value``,
``<b>Label:</b> value``, several on one line, ``;``-separated lists, list
items such as ``- **Quality:** 4 (excellent)``) and from a label alone on its
line or header followed by the value on the next non-empty line. A value is a
number (``6``, ``6: marginally above...``, ``4 (Borderline Accept)``,
``8/10``, ``8 out of 10``: read only when the total is the top of the scale, so ``3/5`` on a
1-10 scale is rejected); when it has no number, its label is mapped through the scale
(``Rating: Weak Accept``). A number wins over a label that disagrees with it.
Other values not on the venue scale (3.5, a sub-score of 5 on a 1-4 scale) are
rejected: the field stays None and the reason says so. A whole-number rating or
confidence off the scale (a rating of 7 on ICLR 2025, a confidence of 7 on its
1-5 scale) is kept, as one given in a record's field is, for evaluate to count
off scale and leave out; the reason notes it.

* rating: "Rating", "Overall score", "Score", ...; else a number under a
  decision label ("Decision", "Final recommendation", ... - OpenReviewer's own
  prompt puts the rating under ``**Decision:**``); else a bare number under
  "Numerical ratings". The first valid value of the best of these kinds wins.
* confidence: "Confidence" and variants, on the venue's confidence scale.
* sub-scores: the names of ``scales.subscores`` ("Soundness: 3 good").
* recommendation: a decision label whose value starts with an accept/reject
  verdict ("Final Decision: Accept as Poster", "Recommendation: Weak Accept")
  gives ``"accept"`` or ``"reject"``.

Status
------
``PARSE_OK``: summary, strengths and weaknesses found, a rating (on the scale or a whole number kept off it), a
confidence (the same) when the scale has a confidence and the review has a confidence
label (prompts that ask for none are not penalised), and no value rejected.
``PARSE_FAILED``: no section and no score label found. ``PARSE_PARTIAL``:
anything in between. The reason lists what was missing or rejected, and notes
combined sections and confidence values the scale has no room for.
"""

from __future__ import annotations

import html
import logging
import multiprocessing
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, NamedTuple

from datasets import Dataset

from praib.records import (PARSE_FAILED, PARSE_GIVEN, PARSE_OK, PARSE_PARTIAL, REVIEW_FEATURES, REVIEW_SECTIONS,
                      records_to_dataset)
from praib.scales import GENERIC_VENUE, Scale, UnknownScaleError, VenueScales, generic_scales, venue_scales

logger = logging.getLogger(__name__)

_SECTION_LABELS: dict[str, tuple[str, ...]] = {
    "summary": ("summary", "review summary", "paper summary", "summary of the paper", "summary of paper",
                "summary of the submission", "summary of contributions", "summary of the contributions",
                "summary and contributions", "brief summary", "overview", "synopsis"),
    "strengths": ("strengths", "strength", "strong points", "strong point", "pros", "positives", "positive points",
                  "positive aspects", "main strengths", "strengths of the paper", "reasons to accept"),
    "weaknesses": ("weaknesses", "weakness", "weak points", "weak point", "cons", "negatives", "negative points",
                   "negative aspects", "main weaknesses", "weaknesses of the paper", "reasons to reject", "concerns",
                   "main concerns"),
    "questions": ("questions", "question", "questions for authors", "questions for the authors",
                  "questions to authors", "questions to the authors", "questions and suggestions",
                  "questions and suggestions for the authors", "clarifying questions", "questions for rebuttal"),
    "limitations": ("limitations", "limitation", "limitations and societal impact", "limitations and broader impact",
                    "limitations and negative societal impact", "societal impact", "broader impact",
                    "broader impacts"),
    "additional_feedback": ("additional feedback", "additional comments", "detailed comments", "comments",
                            "other comments", "minor comments", "additional feedback for the authors",
                            "additional comments for the authors", "comments to the authors",
                            "comments for the authors", "suggestions", "suggestions for improvement", "feedback",
                            "other feedback", "minor issues", "minor points", "typos"),
}
_COMBINED_LABELS = ("strengths and weaknesses", "strength and weaknesses", "strengths and weakness",
                    "strength and weakness", "strengths weaknesses", "pros and cons", "main review")
# Labels that close the section before them and open none.
_STOP_LABELS = ("review", "review report", "scores", "ratings", "key reason", "key reasons",
                "core evaluative criterion", "justification", "justification for why not higher score",
                "justification for why not lower score", "rationale", "rationale of recommendation",
                "rationale for recommendation", "conclusion", "summary of the review", "summary of review",
                "final remarks", "metareview", "meta review", "ethics flag", "ethics review flag",
                "flag for ethics review", "ethics review area", "details of ethics concerns", "ethical concerns",
                "code of conduct", "first time reviewer")

# Score labels by kind; the kind order is the rating priority (see the module docstring).
_SCORE_LABELS: dict[str, tuple[str, ...]] = {
    "rating": ("rating", "overall rating", "overall score", "score", "final score", "final rating", "overall",
               "overall assessment", "overall evaluation"),
    "decision": ("decision", "final decision", "recommendation", "final recommendation", "overall recommendation",
                 "final judgement", "final judgment", "final judgemen", "verdict"),
    "fallback": ("numerical ratings", "numerical rating", "numerical assessment"),
    "confidence": ("confidence", "confidence score", "reviewer confidence", "confidence level"),
}
_RATING_PRIORITY = {"rating": 0, "decision": 1, "fallback": 2}
_SUBSCORE = "sub:"

_PAREN = re.compile(r"\([^)]*\)")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_LEADING_NUMBER_WORD = re.compile(r"^(?:\d{1,2}|[ivx]{1,4}) ")

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Only runs and non-space blanks are rewritten: replacing every single space is measurably slower.
# Runs of two or more horizontal spaces, and any single one that is not " "; written so that a run
# starts with one character class (the plain alternation tried both branches at every character).
_HSPACE = re.compile(r"[^\S\n ][^\S\n]*| [^\S\n]+")
_LINE_EDGES = re.compile(r" \n ?|\n ")
_BLANK_LINES = re.compile(r"\n{3,}")
# A tag is its name then attributes or the end: "$a<b$ and $c>d$" in LaTeX is no tag.
_TAG_END = r"(?:\s[^<>]{0,500})?/?>"
_HTML_TAG = re.compile(r"</?(?:p|br|b|strong|i|em|u|div|span|li|ul|ol|h[1-6]|math|code|pre|sup|sub|a|table|tbody"
                       r"|thead|tr|td|th|blockquote|hr|img|font|section)" + _TAG_END, re.I)
_HTML_BLOCK = re.compile(r"</?(?:p|br|div|ul|ol|table|tbody|thead|tr|blockquote|hr|section)" + _TAG_END + r"|</h[1-6]>",
                         re.I)
_HTML_ITEM = re.compile(r"<li" + _TAG_END, re.I)
_HTML_HEADING = re.compile(r"<h([1-6])" + _TAG_END, re.I)
_HTML_INLINE = re.compile(r"</?(?:i|em|u|span|math|code|pre|sup|sub|a|td|th|img|font|li)" + _TAG_END, re.I)
_HTML_BOLD = re.compile(r"</?(?:b|strong)" + _TAG_END, re.I)

# A line that may carry a label: decorations, the label, then a colon, a closing bold or the end of the line.
_LABEL_LINE = re.compile(r"""
    ^(?:>\ ?)*
    (?P<bullet>(?:[-*+•]\ |\(?\d{1,2}[.)]\ ?|[IVX]{1,4}\.\ ))?
    (?P<hashes>\#[\#\ ]*+)?
    (?P<open>\*\*|__|<b>|<strong>)?\ ?
    (?P<inner>\#[\#\ ]*+)?
    (?:\d{1,2}[.)]\ ?)?
    (?P<label>[^\W\d][\w ,/&'’()\-]{0,80}?)\ ?
    (?:(?P<colon>[:：])\ ?(?:\*\*|__|</b>|</strong>)?
      |(?:\*\*|__|</b>|</strong>)\ ?[:：]?
      |$)
    \ ?(?P<rest>[^\n]*)
""", re.M | re.X | re.I)
_HEADER_LINE = re.compile(r"^(?:[-*+] )?(?:\*\*|__)?(#{1,6})(?= |#|$)", re.M)
_HEADER_STARTS = frozenset("#-*+_")  # what a header line can start with
_DIGIT_START = re.compile(r"[*_\[( ]*\d")
_EMPHASIS_EDGES = " *_"

_NUMBER = re.compile(r"[\s*_\[(\"']*+(\d++(?:\.\d++)?+)(?![\d.]*\d)")
# "8/10", "8 out of 10": a value is read only when its total is the top of the scale.
_OUT_OF = re.compile(r"[\s*_]*(?:/|out\s+of\b|of\b)\s*(\d+)", re.I)
_LABEL_CUT = re.compile(r"\*\*|__|[<;|()\[\]:]| - ")
_LABEL_STRIP = " .,!*_\"'“”`"
_SCORE_CONTEXT = re.compile(r"(?:> ?)*(?:[-*+•] |\d{1,2}[.)] ?)?[ #*_]*")
_MAX_PREFIX, _MAX_VALUE = 200, 400
_OPEN_BEFORE = re.compile(r"(?:\*\*|__|<b>|<strong>)[# ]*\Z")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_VERDICT = re.compile(r"[\s*_\"'“(\[]*(?:(?:very|strong(?:ly)?|weak(?:ly)?|borderline|clear(?:ly)?|marginal(?:ly)?"
                      r"|lean(?:ing)?(?: towards?)?|probabl[ey])[ -]+)*(accept|reject)(?:s|ed|ance|ion)?\b", re.I)
_BLANKS = re.compile(r"\s*")
_RULE_LINE = re.compile(r"[-*_=#+ ]*")
_RULE_CHARACTERS = frozenset("-*_=#+ ")

# Where a search over every character would cost most of a parse, cheap tests of the whole text or
# line (substrings, the last character) tell first whether the expression can match at all.
# The horizontal spaces other than " " and the tab that are left after _CONTROL (what _HSPACE
# rewrites), and the only character whose lower-case form is longer than itself (a test checks both
# against the Unicode tables of this Python).
_OTHER_HSPACE = re.compile(r"[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
# Both in one character class: most texts have neither, and one scan of the text tells.
_CONTROL_OR_OTHER_HSPACE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_GROWS_WHEN_LOWERED = "\u0130"
# A label line without a colon or a closing bold ends with its label: its last character is a label's,
# [\w ,/&'’()\-], i.e. alphanumeric (str.isalnum, as \w reads it) or one of these (see _line_reading).
_LABEL_PUNCTUATION = frozenset(" _,/&'’()-")
_SCORE_SEPARATORS = (":", "=", "：")  # one of them ends every inline score label
_NORMALISED: dict[str, str] = {}


def _normalise(label: str) -> str:
    """Compare labels by their words: "Strengths & Weaknesses", "strengths_and_weaknesses" and
    "2. Strengths and weaknesses (optional)" are the same label."""
    normalised = _NORMALISED.get(label)
    if normalised is None:
        normalised = _PAREN.sub(" ", label.lower().replace("&", " and "))
        normalised = _LEADING_NUMBER_WORD.sub("", _NON_ALNUM.sub(" ", normalised).strip())
        if len(_NORMALISED) > 100_000:  # labels repeat; the rest of what lines start with need not be kept
            _NORMALISED.clear()
        _NORMALISED[label] = normalised
    return normalised


@dataclass
class ParsedReview:
    """The sections and scores read from one review text (see the module docstring)."""

    sections: dict[str, str | None]
    rating: int | None
    confidence: int | None
    subscores: dict[str, int]
    recommendation: str | None
    status: str
    reason: str | None


class _Score(NamedTuple):
    """One value read for a field; ``rank`` orders the kinds of label that can give it."""

    rank: int
    pos: int
    value: int | None
    problem: str | None
    off_scale: int | None = None  # the whole number a rejected value was, when it was one off the scale


class _Findings:
    """What _scan reads in a text (a class of its own, not a dataclass: made for every review, it is made faster)."""

    __slots__ = ("spans", "scores", "verdicts", "labels_seen", "ignored_confidence", "rule_lines")

    def __init__(self) -> None:
        # (start, end) of each piece of the prepared text that belongs to a section ("combined" too), by
        # section; a section without pieces has no entry
        self.spans: dict[str, list[tuple[int, int]]] = {}
        self.scores: dict[str, list[_Score]] = {}
        self.verdicts: list[tuple[int, str]] = []
        self.labels_seen: set[str] = set()
        self.ignored_confidence = False
        self.rule_lines: list[int] = []  # where the text's rule lines start


@lru_cache(maxsize=64)
def _grammar(subscore_names: tuple[str, ...]) -> tuple[dict[str, tuple[str, str | None]], re.Pattern]:
    """The label table and the inline score pattern for one set of sub-score names."""
    table: dict[str, tuple[str, str | None]] = {}
    for section, synonyms in _SECTION_LABELS.items():
        table.update({s: ("section", section) for s in synonyms})
    table.update({s: ("combined", None) for s in _COMBINED_LABELS})
    table.update({s: ("stop", None) for s in _STOP_LABELS})
    score_labels = {label: kind for kind, labels in _SCORE_LABELS.items() for label in labels}
    score_labels.update({_normalise(name): _SUBSCORE + name for name in subscore_names})
    table.update({label: ("score", kind) for label, kind in score_labels.items()})
    alternatives = "|".join(r"[ _]+".join(map(re.escape, label.split()))
                            for label in sorted(score_labels, key=len, reverse=True))
    # Case-sensitive, run over an ASCII-lowercased copy: several times faster than re.IGNORECASE,
    # and parsing 20,000 reviews is dominated by this scan.
    # The lookahead on the labels' first letters lets most positions fail at once.
    first_letters = "".join(sorted({label[0] for label in score_labels}))
    inline = re.compile(
        rf"\b(?=[{re.escape(first_letters)}])(?P<label>{alternatives})(?:[ _]+(?:score|rating))?\b"
        r" ?(?:\([^()\n]{0,30}\))? ?(?:\*\*|__|</b>|</strong>)? ?[:=：] ?(?:\*\*|__|</b>|</strong>)?")
    return table, inline


def _scale_name(scales: VenueScales) -> str:
    if scales.venue == GENERIC_VENUE:
        return "generic"
    return f"{scales.venue} {scales.year if scales.year is not None else scales.year_group}"


def _prepare(text: str) -> tuple[str, bool]:
    """Normalise line ends and whitespace, and turn HTML blocks into lines; report whether it was HTML."""
    text, is_html = _prepare_characters(text)
    return _prepare_lines(text), is_html


def _prepare_characters(text: str) -> tuple[str, bool]:
    """The first steps of :func:`_prepare`, stripped: line ends, control characters, HTML, horizontal blanks.
    What is left, blanks at line edges and runs of blank lines, :func:`_prepare_lines` does. Stripping first
    changes nothing there: those steps rewrite runs of blanks alone, which the first and last characters that
    are not blanks bound."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    special = _CONTROL_OR_OTHER_HSPACE.search(text) is not None  # one scan instead of two
    if special:
        text = _CONTROL.sub(" ", text)
    is_html = "<" in text and _HTML_TAG.search(text) is not None
    if is_html:
        text = _HTML_HEADING.sub(lambda m: "\n" + "#" * int(m.group(1)) + " ", text)
        text = _HTML_ITEM.sub("\n- ", _HTML_BLOCK.sub("\n", text))
        # Bold tags stay until the labels are read: "<b>Strengths:</b>" is one.
        text = html.unescape(_HTML_INLINE.sub("", text))
    if "  " in text or "\t" in text or (special or is_html) and not text.isascii() and _OTHER_HSPACE.search(text):
        text = _HSPACE.sub(" ", text)
    return text.strip(), is_html


def _prepare_lines(text: str) -> str:
    """The last steps of :func:`_prepare`: blanks at line edges dropped, runs of blank lines made one."""
    if " \n" in text or "\n " in text:
        text = _LINE_EDGES.sub("\n", text)
    if "\n\n\n" in text:
        text = _BLANK_LINES.sub("\n\n", text)
    return text.strip()


def _clean(chunk: str, is_html: bool) -> str | None:
    """A section's text as stored: tags gone, lines stripped, rules dropped, at most one blank line."""
    if is_html:
        chunk = _HSPACE.sub(" ", _HTML_BOLD.sub("", chunk))
    lines = [line.strip() for line in chunk.split("\n")]
    text = "\n".join("" if (not line or line[0] in _RULE_CHARACTERS) and _RULE_LINE.fullmatch(line) else line
                      for line in lines)
    if "\n\n\n" in text:
        text = _BLANK_LINES.sub("\n\n", text)
    return text.strip() or None


def _section(text: str, spans: list[tuple[int, int]], is_html: bool, rule_lines: list[int]) -> str | None:
    """A section's text as stored, from its pieces of the prepared ``text``."""
    if is_html or _holds_rule(text, spans, rule_lines):
        return _clean("\n\n".join(text[a:b] for a, b in spans), is_html)
    # _prepare leaves " " and "\n" as the only blanks of a text that is not HTML, strips its lines and leaves no
    # three line ends in a row: what _clean would change are the line ends where the pieces meet, which become
    # one blank line.
    if len(spans) == 1:
        return text[spans[0][0]:spans[0][1]].strip() or None
    return "\n\n".join(piece for a, b in spans if (piece := text[a:b].strip("\n"))).strip() or None


def _sections(text: str, spans: dict[str, list[tuple[int, int]]], is_html: bool, rule_lines: list[int]
              ) -> dict[str, str | None]:
    """Every section of REVIEW_SECTIONS as stored (None where it has no text), from the pieces of the prepared
    ``text`` that _scan found."""
    sections: dict[str, str | None] = {}
    for name in REVIEW_SECTIONS:
        pieces = spans.get(name)
        if not pieces:
            sections[name] = None
            continue
        section = _NOT_PLAIN if is_html or rule_lines else _plain_section(text, pieces)
        sections[name] = _section(text, pieces, is_html, rule_lines) if section is _NOT_PLAIN else section
    return sections


_NOT_PLAIN = object()


def _plain_section(text: str, pieces: list[tuple[int, int]]) -> str | None | object:
    """:func:`_section` of pieces of a text that is not HTML and has no rule line, where each piece starts on a
    line of its own or at the end of its label's line (so that none of its lines is a rule: see _holds_rule);
    _NOT_PLAIN for other pieces. Each piece is sliced without its line ends at its edges (slicing a text that
    is not ASCII reads every character of the slice: strip() then has nothing to copy)."""
    parts = []
    for start, end in pieces:
        if start and text[start - 1] != "\n" and text[start:start + 1] != "\n":
            return _NOT_PLAIN
        while start < end and text[start] == "\n":
            start += 1
        while end > start and text[end - 1] == "\n":
            end -= 1
        if start < end:
            parts.append(text[start:end])
    return "\n\n".join(parts).strip() or None


def _holds_rule(text: str, spans: list[tuple[int, int]], rule_lines: list[int]) -> bool:
    """Whether a line of these pieces of ``text`` is a rule: a rule line of the text, or the end of a line
    where a piece starts."""
    for start, end in spans:
        if rule_lines and any(start <= rule < end for rule in rule_lines):
            return True
        if start and text[start - 1] != "\n":
            line_end = text.find("\n", start, end)
            first = text[start:end if line_end < 0 else line_end]
            if first and _RULE_LINE.fullmatch(first):
                return True
    return False


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _read_value(raw: str, what: str, scale: Scale, scale_name: str,
                report_labels: bool) -> tuple[int | None, str | None, int | None] | None:
    """The value a score label gives, as (value, problem, off scale): off scale is the whole number given
    when it is not on the scale (and fits a record's int32 field), else None; None when ``raw`` holds no
    value at all."""
    number = _NUMBER.match(raw)
    if number:
        token = number.group(1)
        total = _OUT_OF.match(raw, number.end())
        if total and int(total.group(1)) != max(scale.values):
            return None, (f"{what} {token} out of {total.group(1)} is not on the {scale_name} scale "
                          f"({scale.describe()})"), None
        value = float(token)
        if value.is_integer() and int(value) in scale:
            return int(value), None, None
        off_scale = int(value) if value.is_integer() and value < 2 ** 31 else None
        return None, f"{what} {_shorten(token)} is not on the {scale_name} scale ({scale.describe()})", off_scale
    label = _LABEL_CUT.split(raw.lstrip(_LABEL_STRIP), maxsplit=1)[0].strip(_LABEL_STRIP)
    if not label:
        return None
    value = scale.value_for_label(label)
    if value is not None:
        return value, None, None
    # Longer text after a score label is prose ("Confidence: I read the proofs..."), not a failed label;
    # so is any text after a sub-score name, which reviewers also use as a point's heading.
    if not report_labels or len(label.split()) > 6:
        return None
    return None, f"{what} '{_shorten(label)}' matches no label on the {scale_name} scale", None


def _take_score(found: _Findings, kind: str, raw: str, pos: int, scales: VenueScales, scale_name: str) -> None:
    """Record what a score label of ``kind`` says, ``raw`` being the text after it."""
    _record(found, kind, _value_reading(kind, raw, scales, scale_name), pos)


def _value_reading(kind: str, raw: str, scales: VenueScales, scale_name: str) -> tuple | None:
    """:func:`_reading` of a score label of ``kind`` followed by ``raw``, on ``scales``."""
    if kind in _RATING_PRIORITY:
        scale = scales.rating
    elif kind == "confidence":
        scale = scales.confidence
    else:
        scale = scales.subscores[kind[len(_SUBSCORE):]]
    # What a value says depends on the value and the scale alone, and values recur ("3 good").
    key = (kind, raw, scale_name)
    cached = _READINGS.get(key)
    if cached is not None and cached[0] is scale:
        reading = cached[1]
    else:
        reading = _reading(kind, raw, scale, scale_name)
        if len(raw) <= _CACHED_LINE_LENGTH:
            _READINGS.keep(key, (scale, reading), len(raw))
    return reading


def _record(found: _Findings, kind: str, reading: tuple | None, pos: int) -> None:
    """Record a score label of ``kind`` at ``pos`` and what its value says (see :func:`_reading`)."""
    found.labels_seen.add(kind)
    if reading is None:
        return
    if reading[0] == "verdict":
        found.verdicts.append((pos, reading[1]))
    elif reading[0] == "ignored confidence":
        found.ignored_confidence = found.ignored_confidence or reading[1]
    else:
        _, target, rank, value, problem, off_scale = reading
        # tuple.__new__ makes the named tuple without the keyword handling of _Score(...), twice as fast
        found.scores.setdefault(target, []).append(tuple.__new__(_Score, (rank, pos, value, problem, off_scale)))


def _reading(kind: str, raw: str, scale: Scale | None, scale_name: str) -> tuple | None:
    """What a score label of ``kind`` followed by ``raw`` says, on the scale of its field (None: a confidence
    where the venue has none): ("verdict", "accept" or "reject"), ("ignored confidence", whether a number
    was given), ("score", field, rank, value, problem, off scale), or None for nothing."""
    if kind == "decision":
        verdict = _VERDICT.match(raw)
        if verdict:
            return "verdict", verdict.group(1).lower()
    if kind in _RATING_PRIORITY:
        if kind != "rating" and not _NUMBER.match(raw):
            return None  # a decision or a heading without a number says nothing about the rating
        target, what = "rating", "rating"
    elif kind == "confidence":
        if scale is None:
            return "ignored confidence", bool(_NUMBER.match(raw))
        target, what = "confidence", "confidence"
    else:
        target, what = kind, kind[len(_SUBSCORE):]
    read = _read_value(raw, what, scale, scale_name, report_labels=target in ("rating", "confidence"))
    if read is None:
        return None
    return ("score", target, _RATING_PRIORITY.get(kind, 0), *read)


def _read_label_line(line: str, table: dict[str, tuple[str, str | None]]
                     ) -> tuple[str, str | None, int | None, int] | None:
    """(kind, key, header level, where the content starts) of a label line, None when the line is none."""
    m = _LABEL_LINE.match(line)
    if m is None:
        return None
    entry = table.get(_normalise(m.group("label")))
    if entry is None:
        return None
    kind, key = entry
    rest = m.group("rest").strip(_EMPHASIS_EDGES)
    hashes = m.group("hashes") or m.group("inner")
    if m.group("bullet") and rest:
        return None
    if kind == "score" and rest and not hashes and not _DIGIT_START.match(rest):
        # "**Clarity:** the notation is heavy" is a point inside a section, and "Overall: I liked it"
        # a sentence; a bold score label followed by prose ("**Recommendation:** I lean...") closes one.
        if key.startswith(_SUBSCORE) or not (m.group("open") or len(rest.split()) <= 6):
            return None
    level = len(hashes) - len(hashes.lstrip("#")) if hashes else None
    return kind, key, level, m.start("rest")


# Lines kept per venue's scales (and score values read): reviews repeat their label and score lines, also long
# ones (a scale's description after "Confidence: 4:"); lines longer than a label, a value and its description are
# read each time, and a cache is emptied past so many entries or characters, so that it stays within a few MB.
_LINE_CACHE_SIZE = 20_000
_LINE_CACHE_CHARACTERS = 4_000_000
_CACHED_LINE_LENGTH = 1000
_CACHED_PROSE_LENGTH = 200  # a longer line is looked up only when it can hold a score: prose is seldom repeated


class _BoundedCache(dict):
    """A dict emptied when it grows past _LINE_CACHE_SIZE entries or _LINE_CACHE_CHARACTERS characters of the
    texts it is keyed by (what repeats comes back at once)."""

    characters = 0

    def keep(self, key: Any, value: Any, characters: int) -> None:
        """``self[key] = value``, ``key`` standing for a text of ``characters``."""
        if len(self) >= _LINE_CACHE_SIZE or self.characters + characters > _LINE_CACHE_CHARACTERS:
            self.clear()
            self.characters = 0
        self.characters += characters
        self[key] = value


# (kind, value, scale name) -> (the scale, what _reading made of the value on it)
_READINGS: dict[tuple[str, str, str], tuple[Scale | None, tuple | None]] = _BoundedCache()


class _ScanContext(NamedTuple):
    """What _scan reads a text with on one venue's scales."""

    scales: VenueScales
    table: dict[str, tuple[str, str | None]]  # and the inline pattern: see _grammar
    inline: re.Pattern
    scale_name: str
    # What lines were read as (see _line_reading), by line: reading a line depends on the line and the scales
    # alone, and the same labels and scores recur from review to review.
    line_cache: _BoundedCache


_SCAN_CONTEXTS: dict[int, tuple[VenueScales, _ScanContext]] = {}  # by id(scales), holding scales (so that its
# id is not another's)
_CONTEXTS_BY_SCALES: dict[tuple, _ScanContext] = {}  # by what the readings depend on (see _scan_context)


def _scan_context(scales: VenueScales) -> _ScanContext:
    """The _ScanContext of ``scales``, worked out once per scales object (callers keep theirs). Scales objects
    that name the same scale objects (each ``venue_scales`` call makes a new one of the same venue-year) share
    one, and so its line cache."""
    held = _SCAN_CONTEXTS.get(id(scales))
    if held is not None and held[0] is scales:
        return held[1]
    subscore_names = tuple(sorted(scales.subscores))
    scale_name = _scale_name(scales)
    # What a value says depends on the scale name and the scale objects (see _value_reading); the context holds
    # a scales object that holds them, so that their ids are not others'.
    key = (scale_name, id(scales.rating), id(scales.confidence), subscore_names,
           tuple(id(scales.subscores[name]) for name in subscore_names))
    context = _CONTEXTS_BY_SCALES.get(key)
    if context is None:
        context = _ScanContext(scales, *_grammar(subscore_names), scale_name, _BoundedCache())
        if len(_CONTEXTS_BY_SCALES) >= 64:
            _CONTEXTS_BY_SCALES.clear()
        _CONTEXTS_BY_SCALES[key] = context
    if len(_SCAN_CONTEXTS) >= 64:
        _SCAN_CONTEXTS.clear()
    _SCAN_CONTEXTS[id(scales)] = (scales, context)
    return context


_NO_SCORES: tuple = ()
_NOTHING = (None, _NO_SCORES, False)  # what a line of prose says (see _line_reading), one object for all
# Last characters of a line that no test of _line_reading passes on: not a label's (alphanumeric or
# _LABEL_PUNCTUATION), not a rule's.
_PROSE_ENDS = frozenset('.?!;"”]')


def _line_reading(line: str, context: _ScanContext, grows: bool, is_html: bool
                  ) -> tuple[tuple | None, tuple[tuple[int, str, tuple | None], ...], bool]:
    """What one non-empty line of a prepared text says on ``context``'s scales: (event, inline scores, whether it
    is a rule line). The event is the line's label, (kind, key, header level, where its content starts, whether
    nothing but emphasis follows the label), or, for a line that is no label line, its header,
    ("header", None, level, where the header marks end, False); None for neither. The inline scores are
    (offset, kind, what the value says: see _reading) of :func:`_inline_scores`' (``grows``: the text holds the
    one letter that grows when lower-cased).

    The cheap tests first tell whether each pattern can match at all: a label line holds a colon or a
    closing bold (``**``, ``__``, ``</b>``, ``</strong>``), or else ends with its label (its last character
    is one of a label's); a header line starts with "#" or a list marker and has its "#" within its first
    five characters (after "- " and "**"); an inline score label is followed by one of _SCORE_SEPARATORS."""
    scales, table, inline, scale_name, _ = context
    last = line[-1]
    colon = ":" in line or "：" in line
    event = None
    # A search for two characters only where the first of them (found with a faster search for one) is.
    if (colon or last.isalnum() or last in _LABEL_PUNCTUATION or "*" in line and "**" in line
            or "_" in line and "__" in line or "<" in line and "</" in line):
        label = _read_label_line(line, table)
        if label is not None:
            kind, key, level, rest_offset = label
            # A match of _LABEL_LINE spans its whole line.
            event = (kind, key, level, rest_offset, not line[rest_offset:].strip(_EMPHASIS_EDGES))
    if event is None and line[0] in _HEADER_STARTS and "#" in line[:5]:
        header = _HEADER_LINE.match(line)
        if header:
            event = ("header", None, len(header.group(1)), header.end(), False)
    scores = _NO_SCORES
    if colon or "=" in line:
        scores = tuple((offset, kind, _value_reading(kind, value, scales, scale_name))
                       for offset, kind, value in _inline_scores(line, grows, is_html, table, inline))
    is_rule = last in _RULE_CHARACTERS and _RULE_LINE.fullmatch(line) is not None
    return (event, scores, is_rule) if event or scores or is_rule else _NOTHING


_CHARACTERS_UNPREPARED = object()  # what _scan says of a text that needs _prepare_characters


def _scan(text: str, is_html: bool, scales: VenueScales, stripped_only: bool = False) -> _Findings | object | None:
    """Read the sections and every score label of a prepared text, line by line. None when ``text``
    (stripped) still needs :func:`_prepare_lines`: a line starts or ends with " ", or two blank lines follow
    each other (telling it here, on the lines read anyway, spares three scans of the text).

    ``stripped_only``: ``text`` is a text without "\\r" or "<" only stripped, not passed through
    :func:`_prepare_characters`; _CHARACTERS_UNPREPARED when a line holds what that would rewrite (a control
    character, a blank other than " ", two spaces in a row). The lines found in the line cache need no such
    test: the cache holds lines of prepared texts and of texts that passed it."""
    context = _scan_context(scales)
    scale_name, line_cache = context.scale_name, context.line_cache
    found = _Findings()
    spans, labels_seen, rule_lines = found.spans, found.labels_seen, found.rule_lines
    grows = _GROWS_WHEN_LOWERED in text
    # Lines lower-case alike (see _inline_scores) unless the text holds the one letter that grows, and an
    # HTML text's score values lose their bold tags.
    cache = line_cache if not (grows or is_html) else None
    current: tuple[str, int | None, int] | None = None  # the open section: name, header level, content start
    waiting: str | None = None  # a score label whose value sits on the next non-empty line
    values_below: list[tuple[str, str, int]] = []  # (kind, value, position) of those values
    inline_scores: list[tuple[int, tuple]] = []  # (line start, its inline scores)
    start, blank = 0, -2
    for line in text.split("\n"):
        if not line:
            if start == blank + 1:
                return None
            blank = start
            start += 1
            continue
        if line[0] == " " or line[-1] == " ":
            return None
        size = len(line)
        reading = None
        if cache is not None and (size <= _CACHED_PROSE_LENGTH or ":" in line):
            reading = cache.get(line)
        if reading is None:
            # Every character _prepare_characters rewrites but " " is not printable, and str.isprintable reads a
            # line faster than the expression.
            if stripped_only and ("  " in line or not line.isprintable()
                                  and ("\t" in line or _CONTROL_OR_OTHER_HSPACE.search(line))):
                return _CHARACTERS_UNPREPARED
            if (line[-1] in _PROSE_ENDS and ":" not in line and "：" not in line and "=" not in line
                    and "#" not in line and "*" not in line and "_" not in line and "<" not in line):
                reading = _NOTHING  # what _line_reading would say, told by the characters its tests look for
            else:
                reading = _line_reading(line, context, grows, is_html)
            if cache is not None and size <= _CACHED_LINE_LENGTH and (size <= _CACHED_PROSE_LENGTH or ":" in line):
                cache.keep(line, reading, size)
        if reading is _NOTHING:  # most lines of prose
            if waiting is not None:
                values_below.append((waiting, line[:_MAX_VALUE], start))
                waiting = None
            start += size + 1
            continue
        event, scores, is_rule = reading
        if waiting is not None:
            # "### Soundness:\n\n3 (good)": the value is the next non-empty line, unless it is a label or header.
            if event is None:
                values_below.append((waiting, line[:_MAX_VALUE], start))
            waiting = None
        if event is not None:
            kind, key, level, offset, bare = event
            if kind == "header":
                if current and current[1] is not None and level <= current[1]:
                    spans.setdefault(current[0], []).append((current[2], start))
                    current = None
            else:
                if current:
                    spans.setdefault(current[0], []).append((current[2], start))
                    current = None
                if kind == "section" or kind == "combined":
                    current = (key or "combined", level, start + offset)
                elif kind == "score":
                    labels_seen.add(key)
                    if bare:
                        waiting = key
        if scores:
            inline_scores.append((start, scores))
        if is_rule:
            rule_lines.append(start)
        start += size + 1
    if current:
        spans.setdefault(current[0], []).append((current[2], len(text)))
    for kind, value, position in values_below:
        _take_score(found, kind, value, position, scales, scale_name)
    for line_start, scores in inline_scores:
        for offset, kind, value_reading in scores:
            _record(found, kind, value_reading, line_start + offset)
    return found


def _inline_scores(line: str, grows: bool, is_html: bool, table: dict[str, tuple[str, str | None]],
                   inline: re.Pattern) -> tuple[tuple[int, str, str], ...]:
    """(offset, kind, value) of the inline score labels of one line: the matches of ``inline`` in the line
    lower-cased (only its ASCII letters when the text ``grows`` when lower-cased: "İ" moves positions)
    that stand where a score label counts, with the text after them."""
    scores = []
    for m in inline.finditer(line.translate(_ASCII_LOWER) if grows else line.lower()):
        start, end = m.span()
        # Score labels count at the start of a line, in bold, or after a separator ("Soundness: 3; ...").
        before = line[max(0, start - _MAX_PREFIX):start]  # bounded, so that a huge one-line text stays linear
        if not (_SCORE_CONTEXT.fullmatch(before) or _OPEN_BEFORE.search(before[-16:])
                or before.rstrip()[-1:] in (";", ",", "|", "(")):
            continue
        value = line[end:end + _MAX_VALUE]
        if not value.strip(_EMPHASIS_EDGES):
            continue
        if is_html:
            value = _HTML_BOLD.sub(" ", value)
        scores.append((start, table[_normalise(m.group("label"))][1], value))
    return tuple(scores)


def _pick(scores: list[_Score]) -> _Score | None:
    """The first valid value of the best-ranked kind of label; else that kind's first rejection."""
    if not scores:
        return None
    if len(scores) == 1:
        return scores[0]
    best = min(s.rank for s in scores)
    ranked = sorted((s for s in scores if s.rank == best), key=lambda s: s.pos)
    return next((s for s in ranked if s.value is not None), ranked[0])


def parse_review(text: str, scales: VenueScales) -> ParsedReview:
    """Read the sections, rating, confidence, sub-scores and recommendation of one review.

    Never raises on a string: empty, structureless or garbled text gives a
    ``PARSE_FAILED`` result with a reason. See the module docstring for the
    formats, the section synonyms and how the status is decided.
    """
    if not isinstance(text, str):
        return ParsedReview(dict.fromkeys(REVIEW_SECTIONS), None, None, {}, None, PARSE_FAILED, "no text")
    found = _CHARACTERS_UNPREPARED
    if "\r" not in text and "<" not in text and (prepared := text.strip()):
        # Most texts need no step of _prepare_characters but the strip: _scan tests their lines for the others
        # as it reads them (one scan for most of the text instead of two over all of it).
        is_html = False
        found = _scan(prepared, is_html, scales, stripped_only=True)
    if found is None or found is _CHARACTERS_UNPREPARED:
        lines_too = found is None  # a line starts or ends with " ": so it does once its characters are prepared
        prepared, is_html = _prepare_characters(text)
        if not prepared:
            return ParsedReview(dict.fromkeys(REVIEW_SECTIONS), None, None, {}, None, PARSE_FAILED, "empty text")
        # _prepare_lines changes nothing in a text that _scan reads (no line starts or ends with " ", no two
        # blank lines follow each other): when it is known to be needed, it comes first.
        found = None if lines_too else _scan(prepared, is_html, scales)
        if found is None:
            prepared = _prepare_lines(prepared)
            found = _scan(prepared, is_html, scales)

    spans = found.spans
    sections = _sections(prepared, spans, is_html, found.rule_lines)
    notes: list[str] = []
    combined = "combined" in spans and _section(prepared, spans["combined"], is_html, found.rule_lines)
    if combined:
        filled = [name for name in ("strengths", "weaknesses") if sections[name] is None]
        for name in filled:
            sections[name] = combined
        if len(filled) == 2:
            notes.append("strengths and weaknesses came as one combined section, stored in both fields")
    if not (any(sections.values()) or found.scores or found.verdicts or found.labels_seen):
        return ParsedReview(sections, None, None, {}, None, PARSE_FAILED, "no review sections or scores found")

    problems: list[str] = []
    missing = [name for name in ("summary", "strengths", "weaknesses") if not sections[name]]
    if missing:
        listed = " or ".join([", ".join(missing[:-1]), missing[-1]] if len(missing) > 1 else missing)
        problems.append(f"no {listed} section found")
    picked = {target: scores[0] if len(scores) == 1 else _pick(scores) for target, scores in found.scores.items()}
    rating, confidence = picked.get("rating"), picked.get("confidence")
    rating_value = rating.value if rating else None
    if rating is None:
        problems.append("no rating found")
    elif rating.value is None and rating.off_scale is not None:
        # Kept as a rating given in a record's field is: evaluate counts it off scale and leaves it out.
        rating_value = rating.off_scale
        notes.append(f"{rating.problem}: kept, counted off scale")
    elif rating.value is None:
        problems.append(rating.problem)
    confidence_value = confidence.value if confidence else None
    if confidence is not None and confidence.value is None and confidence.off_scale is not None:
        confidence_value = confidence.off_scale  # the same rule as for the rating above
        notes.append(f"{confidence.problem}: kept, counted off scale")
    elif confidence is not None and confidence.value is None:
        problems.append(confidence.problem)
    elif confidence is None and scales.confidence is not None and "confidence" in found.labels_seen:
        problems.append("no confidence found")
    subscores = {}
    for sub in scales.subscores:
        choice = picked.get(_SUBSCORE + sub)
        if choice and choice.value is not None:
            subscores[sub] = choice.value
        elif choice:
            problems.append(choice.problem)
    if found.ignored_confidence:
        notes.append(f"confidence ignored: the {_scale_name(scales)} scale has no confidence")
    recommendation = min(found.verdicts)[1] if found.verdicts else None

    status = PARSE_PARTIAL if problems else PARSE_OK
    return ParsedReview(
        sections=sections,
        rating=rating_value,
        confidence=confidence_value,
        subscores=subscores,
        recommendation=recommendation,
        status=status,
        reason="; ".join(problems + notes) or None,
    )


def strength_weakness_bullets(text: str) -> dict[str, list[str]]:
    """The review's own strength and weakness points: the items of the Markdown lists (``-``, ``*``,
    ``+``, ``1.``, ``1)``) in its strengths and weaknesses sections, found as :func:`parse_review`
    finds them. Returns ``{"strengths": [...], "weaknesses": [...]}``, each item as written, bold
    lead-ins included, without its list marker.

    An item runs until the next item at its own indentation or less, a heading, a rule, or a blank
    line followed by an unindented paragraph; its continuation lines are joined with spaces, and a nested
    item stays with its parent, on a line of its own with its marker. Text on the label's own line
    (``**Weaknesses:** - a - b``) and prose around the list are not items. A combined "Strengths and
    weaknesses" section gives no items unless "Strengths" and "Weaknesses" labels split it (those
    are sections of their own): its points are not said to be one or the other. In HTML reviews,
    nested lists cannot be told from their parents and count as items of their own.
    """
    bullets: dict[str, list[str]] = {"strengths": [], "weaknesses": []}
    if not isinstance(text, str):
        return bullets
    prepared, is_html = _prepare(text)
    found = _scan(prepared, is_html, generic_scales())
    indents = _line_indents(text, prepared, is_html)
    for name, items in bullets.items():
        for start, end in found.spans.get(name, ()):
            items.extend(_list_items(prepared, start, end, indents))
    return bullets


def section_end(text: str, name: str) -> int | None:
    """Where, in ``text``, the last line of the review's ``name`` section (``"weaknesses"``, ...) ends, as
    :func:`parse_review` reads the sections: an inline label ("Weaknesses: ... / Rating: 3") closes it as a
    heading does. None when the review has no such section, or is HTML or has bare carriage returns (whose
    lines the parser rewrites, so offsets in the original cannot be recovered)."""
    if not isinstance(text, str) or "\r" in text:
        return None
    prepared, is_html = _prepare(text)
    spans = _scan(prepared, is_html, generic_scales()).spans.get(name)
    if is_html or not spans:
        return None
    k = sum(1 for line in prepared[:spans[-1][1]].rstrip().split("\n") if line.strip())
    lines = _nonblank_lines(text)
    if not 0 < k <= len(lines):
        return None
    offset, line = lines[k - 1]
    return offset + len(line.rstrip())


# A list marker and the start of its item's text ("* * *" is a rule, no item).
_LIST_ITEM = re.compile(r"(?:[-*+]|\d{1,3}[.)]) (?=\S)")


def _nonblank_lines(text: str) -> list[tuple[int, str]]:
    """(offset, line) of every non-blank line of ``text``, its line ends made "\\n" (offsets into that form,
    which are ``text``'s own when it has no carriage return). ``_prepare`` keeps every non-blank line of a
    non-HTML text, in order, so the n-th non-blank line of the prepared text is the n-th of these."""
    lines, offset = [], 0
    for line in _CONTROL.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n")).split("\n"):
        if line.strip():
            lines.append((offset, line))
        offset += len(line) + 1
    return lines


def _line_indents(text: str, prepared: str, is_html: bool) -> dict[int, int]:
    """The indentation (tabs as 4 spaces) of each line of ``prepared``, by the offset where it starts (see
    :func:`_nonblank_lines`)."""
    if is_html:
        return {}
    original = (len(line) - len(line.lstrip()) for line in (raw.expandtabs(4) for _, raw in _nonblank_lines(text)))
    indents, start = {}, 0
    for line in prepared.split("\n"):
        if line:
            indents[start] = next(original)
        start += len(line) + 1
    return indents


def _list_items(prepared: str, start: int, end: int, indents: dict[int, int]) -> list[str]:
    """The list items of ``prepared[start:end]`` (see :func:`strength_weakness_bullets`)."""
    items: list[list[str]] = []
    current: list[str] | None = None
    current_indent = 0
    after_blank = False
    if start > 0 and prepared[start - 1] != "\n":
        start = prepared.find("\n", start, end) + 1 or end  # the rest of the label's line is no item
    position = start
    for line in prepared[start:end].split("\n"):
        indent = indents.get(position, 0)
        position += len(line) + 1
        if not line:
            after_blank = True
            continue
        marker = _LIST_ITEM.match(line)
        ends_item = _RULE_LINE.fullmatch(line) or _HEADER_LINE.match(line)
        if marker and not ends_item:
            if current is not None and indent > current_indent:
                current.append("\n" + line)
            else:
                current, current_indent = [line[marker.end():]], indent
                items.append(current)
        elif current is not None and not ends_item and not (after_blank and indent <= current_indent):
            current.append(" " + line)
        else:
            current = None
        after_blank = False
    return ["".join(parts) for parts in items]


def _has_fields(row: dict[str, Any]) -> bool:
    return row.get("rating") is not None or any(map(row.get, REVIEW_SECTIONS))


def _has_text(row: dict[str, Any]) -> bool:
    return bool(row.get("text") and row["text"].strip())


def parse_reviews(records: Dataset, scale: str = "venue") -> Dataset:
    """Fill the section and score fields of review records from their text.

    Records that came with any section or a rating keep their fields (their
    ``parse_status`` becomes ``PARSE_GIVEN`` when unset). Records with only a
    text are parsed against their venue-year scale - or the generic scale when
    ``scale == "generic"``, when the venue is missing, or (with one warning per
    venue) when no scale file covers it. Records with neither get
    ``PARSE_FAILED`` "no text". Rows, their order and ``text`` are unchanged.
    """
    return records_to_dataset(ReviewParser(scale).parse(records.to_list()), "review")


_REVIEW_FIELDS = list(REVIEW_FEATURES)


class ReviewParser:
    """:func:`parse_reviews` for rows given as dicts, batch after batch: the scales it looks up and
    the venues it warned about are kept between batches. ``warn_unknown`` False leaves the warning about a
    venue without a scale file to the caller (an evaluation names them all once, after its workers)."""

    def __init__(self, scale: str = "venue", warn_unknown: bool = True) -> None:
        if scale not in ("venue", "generic"):
            raise ValueError(f"unknown scale {scale!r}; use 'venue' or 'generic'")
        self.scale = scale
        self._warn_unknown = warn_unknown
        self._generic = generic_scales()
        self._cache: dict[tuple[Any, Any], VenueScales] = {}
        self._warned: set[str] = set()

    def _scales_for(self, venue: str | None, year: int | None) -> VenueScales:
        if self.scale == "generic" or not venue:
            return self._generic
        scales = self._cache.get((venue, year))
        if scales is not None:
            return scales
        if (venue, year) not in self._cache:
            try:
                self._cache[(venue, year)] = venue_scales(venue, year)
            except UnknownScaleError as err:
                if self._warn_unknown and venue not in self._warned:
                    self._warned.add(venue)
                    logger.warning("%s; parsing its reviews with the generic scale", err)
                self._cache[(venue, year)] = self._generic
        return self._cache[(venue, year)]

    def parse(self, records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The review records (``REVIEW_FEATURES`` fields) with sections and scores filled from their text."""
        rows = []
        for raw in records:
            # Records read by praib.records hold every field, in order: a copy is the row, and much faster made
            # (dict.copy clones a dict's table where dict() may insert key by key: 0.2 against 0.9 us).
            if list(raw) == _REVIEW_FIELDS:
                row = raw.copy() if type(raw) is dict else dict(raw)
            else:
                row = {name: raw.get(name) for name in _REVIEW_FIELDS}
            row["subscores"] = row["subscores"] or []
            if _has_fields(row):
                row["parse_status"] = row["parse_status"] or PARSE_GIVEN
            elif _has_text(row):
                parsed = parse_review(row["text"], self._scales_for(row["venue"], row["year"]))
                row.update(parsed.sections)
                row["rating"] = parsed.rating
                if parsed.confidence is not None:
                    row["confidence"] = parsed.confidence
                if parsed.subscores:
                    row["subscores"] = [{"name": k, "value": v} for k, v in parsed.subscores.items()]
                row["recommendation"] = parsed.recommendation or row["recommendation"]
                row["parse_status"], row["parse_reason"] = parsed.status, parsed.reason
            else:
                row["parse_status"], row["parse_reason"] = PARSE_FAILED, "no text"
            rows.append(row)
        return rows

    def parse_in_processes(self, records: list[dict[str, Any]], workers: int) -> list[dict[str, Any]]:
        """:meth:`parse` of ``records`` spread over ``workers`` forked processes, rows in order. The scales
        are looked up (and unknown venues warned about) here first, so that each warning is given once."""
        workers = min(workers, len(records) // _ROWS_WORTH_A_PROCESS)
        if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
            return self.parse(records)
        for raw in records:
            if not _has_fields(raw) and _has_text(raw):  # the rows parse() parses
                self._scales_for(raw.get("venue"), raw.get("year"))
        global _forked_parser
        _forked_parser = self  # what the forked workers parse with, cache included
        size = -(-len(records) // workers)
        try:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                parts = pool.map(_parse_in_worker, [records[i:i + size] for i in range(0, len(records), size)])
        finally:
            _forked_parser = None
        return [row for part in parts for row in part]


_ROWS_WORTH_A_PROCESS = 1000  # below this, starting a process costs more than the parse
_forked_parser: ReviewParser | None = None


def _parse_in_worker(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return _forked_parser.parse(records)
