"""Cross-references: positive and negative examples per type, counted by hand."""

import re

import pytest

from praib.metrics.text import xref
from praib.metrics.text.xref import KEYWORD_RUN, XREF_PATTERN, XREF_TYPES, XrefMatch, find_xrefs, xref_counts
from tests.metrics.text.spellings import regex_parser, spellings


def test_types_are_exactly_the_documented_ones():
    assert XREF_TYPES == ("figure", "table", "section", "equation", "theorem", "lemma",
                          "corollary", "definition", "page", "line")
    assert isinstance(XREF_PATTERN, re.Pattern)


# Each string is one mention of the given type, matched in full.
POSITIVE = {
    "figure": ["Figure 2", "Fig. 2", "Fig 2", "fig.2", "Fig.~5", "FIGURE 3", "Figs. 2-4", "Figures 2 and 3",
               "Fig. 2a", "Figure 4abcd", "Fig 3(b)", "Fig. 2(a-c)", "Figure S3", "Figure A.1", "figures 1, 2 and 5", "Fig. IV"],
    "table": ["Table 1", "Tab. 2", "Tbl. 3", "table 4", "Tables 1-3", "Table A.1", "Table S2", "Table IV",
              "tables 2 and 3", "Tab 3"],
    "section": ["Section 3", "Sec. 3.2", "sec 4", "Sect. 4", "Subsection 2.1", "sub-section 2.1", "Sections 3.1 and 3.2",
                "§3.2", "§ 4", "§§ 3-4", "Appendix B", "Appendix A.2", "appendix C", "Appendices A and C",
                "App. B", "Appx. D", "Section II"],
    "equation": ["Eq. (3)", "Eq (3)", "Eq. 3", "eq.3", "Eqs. 2-4", "Eqs. (2)-(4)", "Eqs. (2) and (3)", "Eqn. 5",
                 "equation 5", "Equation (A.1)", "equations 4 to 6"],
    "theorem": ["Theorem 1", "Thm. 2", "Thm 3.1", "Theorems 1 and 2", "theorem 4"],
    "lemma": ["Lemma 3", "Lem. 2", "Lemmas 1-3", "lemma B.2"],
    "corollary": ["Corollary 1", "Cor. 2", "Coro. 2", "Corollaries 1 and 2"],
    "definition": ["Definition 3", "Def. 2", "Defn. 4", "Definitions 1-2"],
    "page": ["page 5", "Page 5", "pages 3 and 4", "p. 5", "p.5", "pp. 3-4", "pg. 7", "pgs. 7-8"],
    "line": ["line 12", "Lines 180-182", "l. 12", "ll. 3-5", "L180", "L180-L182", "L57-59", "lines 3, 7 and 9"],
}


@pytest.mark.parametrize("kind,mention", [(k, m) for k, ms in POSITIVE.items() for m in ms])
def test_one_mention(kind, mention):
    text = f"As shown in {mention}, the claim holds."
    found = find_xrefs(text)
    assert found == [XrefMatch(kind, mention, len("As shown in "))]
    counts = xref_counts(text)
    assert counts[kind] == 1 and sum(counts.values()) == 1


NEGATIVE = [
    "We could not figure out the setting.", "The table of contents is long.",
    "A section of the community disagrees.", "The page limit was exceeded.", "This is in line with prior work.",
    "Theorem proving is hard.", "The definition of fairness is vague.", "The L1 loss and the L2 norm.",
    "L1-L2 regularisation helps.", "The subfigure 2 is small.", "p 5 and p5 are not pages.",
    "Vaswani et al., in Proc. NeurIPS, 2017, pp. 5998-6008.", "J. Mach. Learn. Res., vol. 9, pp. 2579-2605, 2008.",
    "The equations are correct.", "Several lemmas are missing.", "In the appendix I found typos.",
    "In Table I think nothing.", "correct 3 equals 2 tablet 4 defense 5 corpus 6 linear 7 paged 8",
    "an Eq-based approach", "a 3-page appendix", "Tables, figures and sections.",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_not_a_reference(text):
    assert find_xrefs(text) == []
    assert sum(xref_counts(text).values()) == 0


def test_review_counted_by_hand():
    text = ("The bound in Theorem 1 relies on Lemma 2 and Lemmas 3-4 (see Appendix B). "
            "Fig. 3 and Figure 4 contradict Table 2; Eq. (5) on p. 6 has a typo (line 120, cf. L200-L210). "
            "Definition 2 and Corollary 1 are fine. We should figure out the page limit.\n"
            "Ref: A. B. Smith, \"Title,\" in Proc. X, 2020, pp. 1-9.")
    # theorem: Theorem 1; lemma: Lemma 2, Lemmas 3-4; section: Appendix B; figure: Fig. 3,
    # Figure 4; table: Table 2; equation: Eq. (5); page: p. 6 (not "pp. 1-9" after a year);
    # line: line 120, L200-L210; definition: Definition 2; corollary: Corollary 1.
    assert xref_counts(text) == {"figure": 2, "table": 1, "section": 1, "equation": 1, "theorem": 1, "lemma": 2,
                                 "corollary": 1, "definition": 1, "page": 1, "line": 2}
    found = find_xrefs(text)
    assert [m.text for m in found][:4] == ["Theorem 1", "Lemma 2", "Lemmas 3-4", "Appendix B"]
    assert all(text[m.start:m.start + len(m.text)] == m.text for m in found)


def test_keyword_repeated_gives_two_mentions():
    assert [m.text for m in find_xrefs("Figure 2 and Figure 3")] == ["Figure 2", "Figure 3"]
    assert [m.type for m in find_xrefs("Table 1 and Section 2")] == ["table", "section"]


def test_reference_at_start_and_end_of_text():
    assert find_xrefs("Fig. 1") == [XrefMatch("figure", "Fig. 1", 0)]
    assert find_xrefs("§2") == [XrefMatch("section", "§2", 0)]


def test_counts_include_every_type():
    assert xref_counts("") == dict.fromkeys(XREF_TYPES, 0)
    assert xref_counts(None) == dict.fromkeys(XREF_TYPES, 0)
    assert list(xref_counts("Table 1")) == list(XREF_TYPES)
    assert find_xrefs(None) == []


def test_every_keyword_spelling_is_a_keyword_run():
    # The batch engine tries the expression only before a KEYWORD_RUN (or "§"): every
    # keyword must be one, alone or followed at once by the letters that open an identifier
    # (S3, A.1, IV, B). The part before a hyphen counts ("Sub-section" begins with "sub").
    checked = 0
    for kind, first, rest, _ in xref._KEYWORDS:
        for spelling in spellings(regex_parser.parse(rest)):
            run = (first.strip("[]")[0] + spelling).lower().split("-")[0]
            for identifier in ("", "s", "a", "b", "i", "iv", "xiii"):
                assert KEYWORD_RUN.fullmatch(run + identifier), (kind, run + identifier)
            checked += 1
    assert checked > 60
    # p. 5, pp. 3-4, l. 12, ll. 3-5, L180
    assert [first for _, first, _ in xref._SPECIAL] == ["p", "l", "L", "§"]
    for run in ("p", "pp", "l", "ll"):
        assert KEYWORD_RUN.fullmatch(run)
    for prose in ("approach", "secretary", "corrects", "figueras", "lemon", "pagoda", "linear", "the", "paper"):
        assert not KEYWORD_RUN.fullmatch(prose)


def test_a_reference_before_a_whole_keyword_has_its_identifier_after_it():
    # The batch engine tries the expression before a WHOLE_KEYWORD_RUN only where an optional full stop, at most
    # three spaces or "~", then a digit, a capital letter or "(" follow it. Every spelling, in every mix of case,
    # followed by what is none of that, begins no reference; followed by an identifier, each keyword begins one.
    import itertools

    not_followed = ["", " ", " the", ", 2", "-2", "–2", "/2", " and 2", "’ 2", ")", "]", ":", ";", "\n\n2",
                    "    2", "\t\t\t\t2", ". . 2", "..2", "é2", "_2", "#2", "*2", "§2", "~~~~2", " a", " iv", " b",
                    ".\u00a0\u00a0\u00a0\u00a0IV", "-section 2"]
    runs = spellings(regex_parser.parse(xref.WHOLE_KEYWORD_RUN.pattern))
    assert {"fig", "figures", "subsections", "eqn", "lemmata", "corollaries", "defns", "pgs", "pp", "appx",
            "ll"} <= set(runs) and "sub" not in runs
    begun = set()
    for run in runs:
        assert KEYWORD_RUN.fullmatch(run)
        for written in map("".join, itertools.product(*((c, c.upper()) for c in run))):
            for after in not_followed:
                assert XREF_PATTERN.match(f" {written}{after}") is None, written + after
            if any(XREF_PATTERN.match(f" {written}{gap}{identifier}")
                   for gap in ("", ".", " ", ". ") for identifier in ("12", "(3)", "B", "IV")):
                begun.add(run)
    assert begun == set(runs)


def test_the_pages_of_a_cited_work_are_not_page_references():
    # Issue 12, item 7: reference lists in real reviews cite page spans of other papers.
    cited = ("[3] A. Vaswani et al., \"Attention is all you need,\" in Proc. NeurIPS, pp. 5998-6008, 2017.\n"
             "Smith, J. Deep nets. J. Mach. Learn. Res., pp. 112-120, 2019.")
    assert find_xrefs(cited) == []
    assert [m.text for m in find_xrefs("The bound on p. 5 and the proof on pp. 13-14, in 2019, differ.")] == [
        "p. 5", "pp. 13-14"]


def test_a_keyword_and_a_number_across_a_blank_line_are_two_sentences():
    text = "The argument rests on an informal definition.\n\nP.2 The experiments use one seed."
    assert find_xrefs(text) == []
    assert [m.text for m in find_xrefs("as in Definition\n2 of the paper")] == ["Definition\n2"]
