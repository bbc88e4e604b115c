"""The batch engine gives exactly the per-text functions' values, in order, with any workers."""

import math

import numpy as np
import pytest

from praib.metrics.text.citations import find_citations
from praib.metrics.text.readability import readability
from praib.metrics.text.textstats import CHUNK_SIZE, TEXT_METRICS, score_texts
from praib.metrics.text.xref import XREF_TYPES, xref_counts

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
                            *(f"xref_{t}" for t in XREF_TYPES), "citations")


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
