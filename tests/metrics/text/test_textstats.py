"""The batch engine gives exactly the per-text functions' values, in order, with any workers."""

import json
import math
import multiprocessing
import os
import random
import re
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from praib.metrics.text import readability as readability_module
from praib.metrics.text import textstats
from praib.metrics.text.citations import find_citations
from praib.metrics.text.readability import readability
from praib.metrics.text.textstats import CHUNK_SIZE, TEXT_METRICS, score_texts
from praib.metrics.text.xref import (KEYWORD_RUN, PAPER_DIFFERING_TYPES, PAPER_KEYWORD_RUN, XREF_TYPES,
                                     paper_xref_counts, xref_counts)
from tests.review_variants import corpus, variant

DISAPERE = Path("/work/shared/data/disapere/disapere_review_rebuttal_pairs.jsonl")

VARIED = [
    "The method is sound. The results are weak.",
    None,
    "",
    "   \n\t ",
    "123 456. 7!",
    "§3.2 and Table 1",
    "Figure 2 contradicts Eq. (3) and Table 1. See Appendix B, L120-L125 and pp. 3-4.",
    "Strengths:\n- clear writing\n- strong baselines\n\nWeaknesses:\n1. Theorem 1 needs Lemma 2.\n2. Fig. 3a?",
    "Don’t over-claim; the authors' state-of-the-art ResNet50 isn't naïve, e.g. w.r.t. Sec. 4 (cf. Def. 2).",
    "Missing: Laine, S., & Aila, T. (2022). Visual counterfactual explanations. In CVPR.\n"
    '[3] A. Vaswani, N. Shazeer, and N. Parmar, "Attention is all you need," in Proc. NeurIPS, 2017, pp. 5998–6008.',
    'Vaswani, Ashish, et al. "Attention Is All You Need." Advances in NeurIPS, vol. 30, 2017.',
    "Smith et al. (2020) did this. quysmiomvust hyperparameterization softmaxed GANs",
    "İstanbul Kelvin \u212a café — “quoted” text… with ’curly’ marks 🙂",
    "UPPER CASE SHOUTING! lower case whisper...",
]


def expected_row(text):
    if text is None or not text.strip():
        return {name: math.nan for name in TEXT_METRICS}
    r = readability(text)
    counts = xref_counts(text)
    total = sum(counts.values())
    row = {"tkc": r.tkc, "ttr": r.ttr, "fre": r.fre, "fkg": r.fkg, "xref": total,
           "xref_per_100_tokens": 100 * total / r.tkc if r.tkc else None,
           "citations": len(find_citations(text))}
    row.update({f"xref_{t}": counts[t] for t in XREF_TYPES})
    paper = paper_xref_counts(text)
    row.update({"xref_paper": sum(paper.values()), **{f"xref_paper_{t}": paper[t] for t in PAPER_DIFFERING_TYPES}})
    return {k: math.nan if v is None else float(v) for k, v in row.items()}


def assert_identical(scores, texts):
    assert set(scores) == set(TEXT_METRICS)
    for name in TEXT_METRICS:
        column = scores[name]
        assert column.dtype == np.float64 and column.shape == (len(texts),)
        expected = np.array([expected_row(t)[name] for t in texts])
        # Exact equality, NaN where expected.
        assert np.array_equal(column, expected, equal_nan=True), name


def test_column_order():
    assert TEXT_METRICS == ("tkc", "ttr", "fre", "fkg", "xref", "xref_per_100_tokens",
                            *(f"xref_{t}" for t in XREF_TYPES), "xref_paper", "xref_paper_section",
                            "xref_paper_dataset", "xref_paper_database", "citations")


def test_equals_per_text_functions_in_process():
    assert_identical(score_texts(VARIED, workers=1), VARIED)


def test_hand_values_and_missing_texts():
    scores = score_texts(VARIED[:6], workers=1)
    # "The method is sound. The results are weak.": 8 words, 7 types, no reference.
    assert scores["tkc"][0] == 8 and scores["ttr"][0] == 7 / 8 and scores["xref"][0] == 0
    # None, "" and whitespace: every column NaN.
    for i in (1, 2, 3):
        assert all(math.isnan(scores[name][i]) for name in TEXT_METRICS)
    # Text without words: tkc 0, scores undefined, counts defined.
    assert scores["tkc"][4] == 0 and math.isnan(scores["fre"][4]) and scores["xref"][4] == 0
    # "§3.2 and Table 1": 2 words ("and", "Table"); 2 references (§3.2, Table 1).
    assert scores["tkc"][5] == 2 and scores["xref"][5] == 2 and scores["xref_section"][5] == 1
    assert scores["xref_per_100_tokens"][5] == 100.0


def many_texts():
    # More than two chunks, each text distinct so that order mistakes show.
    texts = []
    for i in range(2 * CHUNK_SIZE + 37):
        base = VARIED[i % len(VARIED)]
        texts.append(None if base is None else f"{base} Extra sentence number {'x' * (i % 7)} {i}. " * (1 + i % 3))
    return texts


def test_workers_give_identical_results_and_keep_order():
    texts = many_texts()
    one = score_texts(texts, workers=1)
    two = score_texts(texts, workers=2, progress=True)
    for name in TEXT_METRICS:
        assert np.array_equal(one[name], two[name], equal_nan=True), name
    assert_identical(two, texts)


def test_default_workers_and_empty_input():
    texts = VARIED * 3
    assert_identical(score_texts(texts), texts)
    empty = score_texts([])
    assert set(empty) == set(TEXT_METRICS) and all(v.shape == (0,) for v in empty.values())
    with pytest.raises(ValueError):
        score_texts(["text"], workers=0)


# References where the engine's shortcut (trying the expression only before keyword tokens)
# could go wrong: no gap before the identifier, after an apostrophe, digit or underscore, at
# the start and the end, upper case, the non-ASCII letters that case-insensitive matching
# takes for ASCII ones, "§", and prose words that begin like keywords.
XREF_EDGES = [
    "Figure 1 opens this text, which ends with Table 2",
    "TableIV, FigureS3, AppendixB, SectionA.2, Eq.(3), Fig.2a, Thm.1, Lem.3, Coro.2, Defn.4, Tbls. 2-3",
    "the paper's Figure 2, x'Fig. 3, don’t Table 2, it's Sec. 4, model’s Eq. (1), l'Appendix C, o'L120",
    "2Figure 3, _Table 1, x2Sec. 3 and a3Lemma 2 are not references",
    "Sub-section 2.1, sub-Section 3, Subsection 4, §3, §§ 3-4, § 5, and §",
    "p. 5, pp. 3-4, 2017, pp. 5998-6008, vol. 30, pp. 1-9, L180-L182, L1 loss, l. 12, ll. 3-5",
    "FIGURE 2, TABLES 1-3, APPENDIX D, LEMMAS 1 and 2, DEFINITIONS 1-2",
    "fıgure 2, Figureſ 3, defİnition 4 and a Kelvin sign \u212a",
    "Figures 2 and 3 and Table 1; Figure 2 and Figure 3; Eq. (3)Table 1",
    "the section on the table of the approach, a corollary, page limits, in line with lemmata",
    "see Figure",
    # PRAIB's categories: datasets and databases, a keyword across a space ("data set"), glued identifiers.
    "Dataset 2, data set 3, DATA SET 4, Data\u00a0set 5, data\nset 6, DS 1, DSS3, DB 2, Databases 1-3, DatasetIV",
    "x'Dataset 2, the authors' data set 3, 2DS 1, _DB 2, metadata set 2, datasets are small, DB and DS",
    "dataſet 2, Databaſe 3 and L120, § 2, Appendix A, line 4: none of these is in both categories",
    # Where the two categories' scans part (the kernel derives PRAIB's count from praib's matches elsewhere): a
    # reference of one category set takes the ")" before a keyword that the other set's then finds.
    "§3(a)Table 1",
    "Appendix 2(b)Figure 3, line 3",
    "Dataset 2(a)Figure 3",
    "Figure 2(a)DS 1",
]


def test_references_in_awkward_places():
    scores = score_texts(XREF_EDGES, workers=1)
    assert_identical(scores, XREF_EDGES)
    # Not vacuous: "TableIV, FigureS3, ..." has 11 references, "2Figure 3, ..." none.
    assert scores["xref"][1] == 11 and scores["xref"][3] == 0
    assert scores["xref"][7] == 3  # fıgure 2, Figureſ 3, defİnition 4
    # PRAIB's categories, by hand: every piece of the first is one mention but "data\nset 6" (a line break), 7
    # datasets and 2 databases; the second has "x'Dataset 2" and "data set 3" only; the third "dataſet 2" and
    # "Databaſe 3" (its text searched whole), where praib's categories find L120, § 2, Appendix A and line 4.
    assert (scores["xref_paper_dataset"][11], scores["xref_paper_database"][11]) == (7, 2)
    assert (scores["xref_paper_dataset"][12], scores["xref_paper_database"][12]) == (2, 0)
    assert (scores["xref_paper"][13], scores["xref"][13]) == (2, 4)
    # §3(a) and Appendix 2(b) take the ")" that Table 1 and Figure 3 need in praib's categories, where they count
    # (with line 3) as a section, a section and a line; in PRAIB's, Table 1 and Figure 3 count. Dataset 2(a) and
    # Figure 2(a) take the ")" before Figure 3 and DS 1 in PRAIB's: one dataset, one figure; praib's find the figures.
    assert [(scores["xref"][j], scores["xref_section"][j]) for j in range(14, 18)] == [(1, 1), (2, 1), (1, 0), (1, 0)]
    assert [(scores["xref_paper"][j], scores["xref_paper_dataset"][j]) for j in range(14, 18)] == [(1, 0), (1, 0),
                                                                                                   (1, 1), (1, 0)]


@pytest.mark.parametrize("texts", [["Appendix B, line 3 and § 2"], ["DS 1 of Appendix B"], ["Figure 2", "line 3"],
                                   ["Dataset 2 and line 4 of Appendix A."]])
def test_chunks_where_one_category_set_has_nowhere_to_begin(texts):
    # (No place where PRAIB's categories can begin, none where praib's can, or only one of praib's own.)
    assert_identical(score_texts(texts, workers=1), texts)


def test_random_mixtures_of_references_and_prose():
    rng = random.Random(7)
    pieces = [piece for text in XREF_EDGES + [t for t in VARIED if t] for piece in text.split()]
    glue = [" ", " ", " ", "", "'", "’", "\n", "2", "_", "(", "~", ". ", "\n\n- "]
    texts = ["".join(rng.choice(pieces) + rng.choice(glue) for _ in range(rng.randint(1, 60)))
             for _ in range(400)]
    scores = score_texts(texts, workers=1)
    assert_identical(scores, texts)
    assert np.sum(scores["xref"]) > 400


def test_words_learnt_in_a_process_match_the_uncached_counts():
    score_texts(VARIED + XREF_EDGES + many_texts(), workers=1)
    numbers = textstats._WORD_NUMBERS
    assert len(numbers) > 100 and sorted(numbers.values()) == list(range(len(numbers)))
    for token, number in numbers.items():
        word = token.decode("ascii")
        assert textstats._SYLLABLES[number] == readability_module._syllables_uncached(word), word
        # A token has keyword offsets exactly where one of its apostrophe-separated parts is
        # a keyword run.
        parts = word.split("'")
        for k, run in enumerate((KEYWORD_RUN, PAPER_KEYWORD_RUN)):  # praib's categories, then PRAIB's
            offsets = textstats._XREF_OFFSETS[textstats._XREF_ENTRIES[number]][k]
            expected = [sum(len(p) + 1 for p in parts[:i]) for i, p in enumerate(parts) if run.fullmatch(p)]
            assert list(offsets) == expected, word
    # (praib's, PRAIB's, PRAIB's alone)
    assert textstats._XREF_OFFSETS[textstats._XREF_ENTRIES[numbers[b"x'fig"]]] == ((2,), (2,), ())
    assert textstats._XREF_OFFSETS[textstats._XREF_ENTRIES[numbers[b"x'dataset"]]] == ((), (2,), (2,))
    assert textstats._XREF_OFFSETS[textstats._XREF_ENTRIES[numbers[b"line"]]] == ((0,), (), ())


def test_the_word_table_finds_every_word_learnt_by_its_bytes(monkeypatch):
    # Lengths around the two packed integers (8, 16), repeated letters whose packed bytes differ only by length,
    # curly apostrophes, words too long for the table, and enough new words for it to grow a few times.
    rng = random.Random(5)
    edges = ["a" * k for k in range(1, 20)] + ["ab" * k for k in range(1, 10)] + [
        "abcdefgh", "abcdefghi", "xabcdefgh", "abcdefghijklmnop", "abcdefghijklmnopq", "bcdefghijklmnopq",
        "don’t", "don't", "Don’T", "o’neill’s", "hyperparameterizations", "counterrevolutionaries"]
    made_up = ["".join(rng.choices("aeioulmnrstkz'", k=rng.randint(1, 24))).strip("'") or "q" for _ in range(6000)]
    texts = [" ".join(edges)] + [" ".join(made_up[i:i + 50]) for i in range(0, len(made_up), 50)]
    assert_identical(score_texts(texts, workers=1), texts)
    known = list(textstats._WORD_NUMBERS.items())
    assert len(textstats._TABLE) >= 4 * sum(len(word) <= 16 for word, _ in known)  # (it has grown)
    for word in ("aaaaaaaa", "aaaaaaaaa", "abcdefghijklmnop", "abcdefghijklmnopq", "don't", "o'neill's"):
        assert word.encode() in textstats._WORD_NUMBERS, word
    import pyarrow as pa

    words = pa.array([word for word, _ in known], pa.binary())
    # (the words of at most 16 letters from the table alone)
    monkeypatch.setattr(textstats, "_WORD_NUMBERS", {word: number for word, number in known if len(word) > 16})
    assert textstats._word_numbers(words).tolist() == [number for _, number in known]
    assert textstats._word_numbers(words.slice(7, 100)).tolist() == [number for _, number in known[7:107]]


def test_the_word_table_tells_apart_words_that_share_their_first_slot(monkeypatch):
    # Every word is sent to the same first slot, three before the end of a small table, so that each lookup
    # must walk a chain longer than one read of _PROBES slots, wrap around, and compare both halves of the key:
    # the pairs below share their last 8 bytes or the bytes before them, or differ only in length. Each word in
    # turn is learnt first, so that each is once the one in the first slot.
    import pyarrow as pa

    words = [b"abcdefghijklmnop", b"xbcdefghijklmnop", b"abcdefghijklmnoq", b"bcdefghijklmnop",
             b"aabcdefgh", b"babcdefgh", b"abcdefgh", b"bcdefgh", b"a", b"aa", b"aaaaaaaa", b"aaaaaaaaa",
             b"aaaaaaaaaaaaaaaa", b"don't", b"xdon't", b"paper's", b"papers", b"zzzzzzzzzzzzzzz", b"zzzzzzzzzzzzzzzz"]
    absent = [b"abcdefghijklmnoz", b"zbcdefghijklmnop", b"aaa", b"cabcdefgh", b"aaaaaaaaaaaaaaa"]
    numbers = {word: 1000 + 7 * i for i, word in enumerate(words)}
    asked = []

    class Unkeyed(dict):  # where a word the table does not hold is looked for
        def __missing__(self, word):
            asked.append(word)
            return -1

    monkeypatch.setattr(textstats, "_slots", lambda last, before: np.full(len(last), len(textstats._TABLE) - 3))
    monkeypatch.setattr(textstats, "_WORD_NUMBERS", Unkeyed())
    for first in range(len(words)):
        monkeypatch.setattr(textstats, "_TABLE", np.zeros((16, 3), dtype=np.uint64))
        monkeypatch.setattr(textstats, "_keyed", 0)
        monkeypatch.setattr(textstats, "_hash_shift", np.uint64(64 - 4))
        for word in words[first:] + words[:first]:
            textstats._key(numbers[word], word)
        assert len(textstats._TABLE) == 128  # (it grew three times, each time placing its words anew)
        asked.clear()
        looked_up = words[::-1] + absent
        assert textstats._word_numbers(pa.array(looked_up, pa.binary())).tolist() == \
            [numbers.get(word, -1) for word in looked_up]
        assert sorted(asked) == sorted(absent)


@pytest.mark.parametrize("n_values", [7, 3000, 60_000, 70_000])  # (flags per pair; a radix sort; a sort)
def test_distinct_values_per_group(n_values):
    rng = np.random.default_rng(n_values)
    n_groups = 120
    groups = np.sort(rng.integers(0, n_groups - 1, 20_000))  # (the last group has none)
    values = np.minimum(rng.zipf(1.3, len(groups)) - 1, n_values - 1)
    expected = [len(set(values[groups == g].tolist())) for g in range(n_groups)]
    for _ in range(2):  # (the flags of one call do not count in the next)
        assert textstats._distinct_per_group(groups, values, n_values, n_groups).tolist() == expected


def children():
    return {process.pid for process in multiprocessing.active_children()}


def test_batches_equal_one_call_and_leave_no_worker_behind():
    texts = many_texts()
    whole = score_texts(texts, workers=1)
    before = children()
    # Batches of several chunks, of one text and empty ones, one call each.
    bounds = [0, 2 * CHUNK_SIZE + 1, 2 * CHUNK_SIZE + 2, 2 * CHUNK_SIZE + 2, len(texts)]
    parts = [score_texts(texts[a:b], workers=2) for a, b in zip(bounds, bounds[1:])]
    assert children() == before
    for name in TEXT_METRICS:
        joined = np.concatenate([part[name] for part in parts])
        assert np.array_equal(joined, whole[name], equal_nan=True), name


def test_an_error_in_either_process_is_raised_in_the_caller(monkeypatch):
    texts = many_texts()
    before = children()
    caller = os.getpid()
    real = textstats._score_chunk
    for failing_in in ("caller", "worker"):
        def fails(chunk, failing_in=failing_in):
            if (os.getpid() == caller) == (failing_in == "caller"):
                raise ValueError(f"failed in the {failing_in}")
            if os.getpid() == caller:
                time.sleep(0.2)  # so that the worker takes a chunk too
            return real(chunk)

        monkeypatch.setattr(textstats, "_score_chunk", fails)
        with pytest.raises(ValueError, match=f"failed in the {failing_in}"):
            score_texts(texts, workers=2)
    monkeypatch.setattr(textstats, "_score_chunk", real)
    assert children() == before
    assert_identical(score_texts(texts, workers=2), texts)
    with pytest.raises(AttributeError):  # not a text
        score_texts(texts + [123] * 3 * CHUNK_SIZE, workers=2)


def test_a_worker_that_dies_is_an_error(monkeypatch):
    caller = os.getpid()
    real = textstats._score_chunk

    def dies_in_a_worker(texts):
        if os.getpid() != caller:
            os._exit(1)
        time.sleep(0.2)  # so that the worker takes a chunk
        return real(texts)

    monkeypatch.setattr(textstats, "_score_chunk", dies_in_a_worker)
    with pytest.raises(RuntimeError, match="worker process scoring text metrics stopped"):
        score_texts(many_texts(), workers=2)


def test_words_learnt_in_a_worker_are_kept_by_the_caller(monkeypatch):
    caller = os.getpid()
    real = textstats._score_chunk

    def slow_in_the_caller(chunk):
        if os.getpid() == caller:
            time.sleep(0.2)  # so that the worker takes the later chunks
        return real(chunk)

    monkeypatch.setattr(textstats, "_score_chunk", slow_in_the_caller)
    rng = random.Random(3)
    made_up = ["qz" + "".join(rng.choices("aeioulmnrst", k=9)) for _ in range(3 * CHUNK_SIZE)]
    texts = [f"The {word} is new." for word in made_up]
    assert not any(word.encode() in textstats._WORD_NUMBERS for word in made_up)
    assert_identical(score_texts(texts, workers=2), texts)
    for word in made_up[CHUNK_SIZE:]:  # the worker's chunks
        number = textstats._WORD_NUMBERS.get(word.encode())
        assert number is not None, word
        assert textstats._SYLLABLES[number] == readability_module._syllables_uncached(word)


# Where the array engine decides what the sentence expression decides: marks, closing marks and what
# follows them, abbreviations (in and out of case, glued to digits and non-ASCII letters, doubled full
# stops), list markers and headers at their limits, Unicode spaces and digits, and text edges.
SENTENCE_EDGES = [
    "Good. Bad! Ugly? Fine?! Yes... No.) Maybe.\" Sure.' Ok.] End",
    "It works?). Next ?)x no cut. \"Quoted.\" Then ...",
    "e.g. this, i.e. that, w.r.t. it, et al. said, cf. Fig. 2, Figs. 3, Eq. 4, Eqs. 5, Sec. 2 and Tab. 3 hold.",
    "FIG. 2 is shouted. RESP. too. Resp. too. resp. not. Approx. cut. approx. not. APPX. cut. Appx. not.",
    "x3al. cut, éal. cut, _cf. cut, 2vs. cut, a.b.c. not, A.B. not, et al.. cut, e.g.. cut, p. 3 and l. 4.",
    "xe.g. cut, 3i.e. cut, _a.b. cut, éw.r.t. not, (e.g. not, EG. cut, Eg. cut, eG. cut, eQ. cut, EQ. cut.",
    "Line one\n\nLine two\n \t\nLine three\n- item\n* item\n+ item\n• item\n-not an item\n1. one\n12) two",
    "\n123. three\n1234. not\n٣. Arabic digit\n# h1\n###### h6\n####### not\n#not\n  - indented\n\t2. tab",
    "Stop.\u00a0Next.\u2028Next.\u3000Next.\x1cNext.\x85Next.\x0bNext.\x0cNext",
    "Ends with a mark.", "No mark at the end", "...", ". Starts with a mark", "a", "A.B", "Mr.\nSmith",
    "Emoji 🙂. After. “Curly.” ‘Single.’ Done’s done. Trailing’",
]


def test_sentence_rule_at_its_edges():
    texts = SENTENCE_EDGES + [a + b for a in SENTENCE_EDGES for b in SENTENCE_EDGES[::3]]
    assert_identical(score_texts(texts, workers=1), texts)


def test_the_suites_review_corpus():
    texts = [text for text, _, _ in corpus()]
    assert_identical(score_texts(texts, workers=1), texts)


@pytest.mark.skipif(not DISAPERE.exists(), reason="the DISAPERE sample in ../shared/data is not available")
def test_real_reviews_and_pieces_of_them():
    records = [json.loads(line) for line in DISAPERE.read_text(encoding="utf-8").splitlines()]
    texts = [r["review_text"] for r in records] + [r["rebuttal_text"] for r in records]
    rng = random.Random(5)
    texts += [variant(texts, rng) for _ in range(1000)]
    assert_identical(score_texts(texts, workers=1), texts)


def test_character_classes_agree_with_the_regex_engine():
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    textstats._code_points(every[0x10000:])  # classes the characters beyond the Basic Multilingual Plane
    classes = textstats._classes()
    for flag, pattern in ((textstats._WORD, r"\w"), (textstats._SPACE, r"\s"), (textstats._DIGIT, r"\d")):
        expected = np.zeros(len(every), dtype=bool)
        expected[[m.start() for m in re.finditer(pattern, every)]] = True
        assert np.array_equal((classes & flag) != 0, expected), pattern


def test_abbreviation_runs_cover_the_sentence_rule():
    # Every alternative of the rule's look-behinds, its character classes expanded, is a listed run
    # (lower-cased) or the "x.y" form ("e.g.", "w.r.t.").
    alternatives = set()
    for group in readability_module._NO_BREAK_AFTER:
        body = re.fullmatch(r"\\b(?:\(\?:)?(.*?)\)?\\\.", group)[1]
        for alternative in body.split("|"):
            expanded = [""]
            for part in re.findall(r"\[[^]]+\]|\\.|.", alternative):
                if part == "[A-Za-z]":
                    choices = ["<letter>"]
                elif part.startswith("["):
                    choices = list(part[1:-1])
                else:
                    choices = [part.lstrip("\\")]
                expanded = [e + c for e in expanded for c in choices]
            alternatives.update(e.lower() for e in expanded)
    assert alternatives == {*textstats.ABBREVIATION_RUNS, "<letter>.<letter>"}
