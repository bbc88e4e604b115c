"""The parser's shortcuts give what the long way gives: lines read from the line cache on the scales they
were read on, texts taken as they stand only when nothing in them needs preparing, prose told by its characters.
(The large corpus is checked by ``benchmarks/equality_check.py --against DIR``.)"""

import sys

import pytest

from praib import parsing
from praib.parsing import parse_review
from praib.records import PARSE_OK
from praib.scales import venue_scales
from tests.review_variants import corpus

ICLR_2025 = venue_scales("ICLR", 2025)  # rating 1, 3, 5, 6, 8, 10; the same sub-score names as NeurIPS 2024's
NEURIPS_2024 = venue_scales("NeurIPS", 2024)  # rating 1-10
CLEAN = "Summary: A fast model.\nStrengths: Simple.\nWeaknesses: Small data.\nRating: 6\nConfidence: 3"


def _forget_the_caches():
    parsing._SCAN_CONTEXTS.clear()
    parsing._CONTEXTS_BY_SCALES.clear()
    parsing._READINGS.clear()


def test_a_cached_score_line_is_read_on_each_venues_scale_in_turn():
    text = "Summary: s.\nStrengths: a.\nWeaknesses: b.\n**Rating:** 7\n**Confidence:** 3"
    off_scale = "rating 7 is not on the ICLR 2025 scale (1, 3, 5, 6, 8, 10): kept, counted off scale"
    for scales, reason in ((ICLR_2025, off_scale), (NEURIPS_2024, None), (ICLR_2025, off_scale),
                           (venue_scales("ICLR", 2025), off_scale), (NEURIPS_2024, None)):
        parsed = parse_review(text, scales)
        assert (parsed.rating, parsed.confidence, parsed.status, parsed.reason) == (7, 3, PARSE_OK, reason)


def test_scale_files_of_the_same_venue_and_year_from_other_folders_are_not_confused(tmp_path, monkeypatch):
    text = "Summary: s.\nStrengths: a.\nWeaknesses: b.\nRating: 4"
    for folder, values in (("two", "{1: reject, 2: accept}"), ("five", "{1: a, 2: b, 3: c, 4: d, 5: e}")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "tmlr.yaml").write_text(
            f"venue: TMLR\naliases: []\neditions:\n  - years: [2024]\n    rating: {values}\n")
    readings = []
    for folder in ("two", "five", "two"):
        monkeypatch.setenv("PRAIB_SCALES_PATH", str(tmp_path / folder))
        parsed = parse_review(text, venue_scales("TMLR", 2024))
        readings.append((parsed.rating, parsed.reason))
    two = (4, "rating 4 is not on the TMLR 2024 scale (1, 2): kept, counted off scale")
    assert readings == [two, (4, None), two]


@pytest.mark.parametrize("line, summary", [
    ("Summary: A fast  model.", "A fast model."),  # two spaces
    ("Summary: A fast\tmodel.", "A fast model."),
    ("Summary: A fast\u00a0model.", "A fast model."),  # no-break space
    ("Summary: A fast\x01model.", "A fast model."),  # a control character
    ("Summary: A fast\u3000\u3000model.", "A fast model."),
])
def test_a_line_that_needs_preparing_is_prepared_though_its_labels_are_cached(line, summary):
    assert parse_review(CLEAN, ICLR_2025).sections["summary"] == "A fast model."  # the label lines cached
    parsed = parse_review(CLEAN.replace("Summary: A fast model.", line), ICLR_2025)
    assert (parsed.sections["summary"], parsed.rating, parsed.confidence) == (summary, 6, 3)


def test_edge_spaces_and_characters_to_prepare_in_one_text():
    text = ("Summary: A fast model.\n  Still\x01the summary. \nStrengths:\u00a0Simple.\n\n\n\nWeaknesses: Small data."
            "\nRating:\u00a06\nConfidence: 3")
    parsed = parse_review(text, ICLR_2025)
    assert parsed.sections["summary"] == "A fast model.\nStill the summary."
    assert (parsed.sections["strengths"], parsed.sections["weaknesses"]) == ("Simple.", "Small data.")
    assert (parsed.rating, parsed.confidence, parsed.status) == (6, 3, PARSE_OK)


def test_what_ends_prose_ends_no_label_and_no_rule():
    for character in parsing._PROSE_ENDS:
        assert not character.isalnum()
        assert character not in parsing._LABEL_PUNCTUATION and character not in parsing._RULE_CHARACTERS


def test_what_preparing_rewrites_is_not_printable():
    # _scan takes a printable line without two spaces in a row as _prepare_characters would leave it.
    rewritten = [chr(c) for c in range(sys.maxunicode + 1) if parsing._CONTROL_OR_OTHER_HSPACE.fullmatch(chr(c))]
    assert len(rewritten) > 40 and not any(c.isprintable() for c in rewritten + ["\t", "\r"])


def test_warm_caches_give_what_cold_ones_give():
    rows = corpus(n_variants=200)

    def fields():
        return [(parsed.sections, parsed.rating, parsed.confidence, parsed.subscores, parsed.recommendation,
                 parsed.status, parsed.reason)
                for parsed in (parse_review(text, venue_scales(venue, year) if venue else ICLR_2025)
                               for text, venue, year in rows)]

    _forget_the_caches()
    cold = fields()
    assert fields() == cold
