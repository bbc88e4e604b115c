"""Every metrics/<name> folder is an `evaluate` module that loads offline and returns what the
praib functions return, with values checked by hand."""


import evaluate
import pytest

from praib.metrics.text.citations import find_citations
from praib.metrics.text.readability import readability
from tests.paths import METRICS



def load(name, config_name=None):
    return evaluate.load(str(METRICS / name), config_name)


@pytest.mark.parametrize("name", sorted(p.name for p in METRICS.iterdir() if p.is_dir()))
def test_every_module_has_a_card_with_formula_and_citation(name):
    card = (METRICS / name / "README.md").read_text()
    assert card.startswith("---\n") and "## Citation" in card and "@" in card
    assert (METRICS / name / f"{name}.py").exists()
    module = load(name)
    assert module.citation.strip() and module.description.strip()


def test_readability_module_matches_hand_counts():
    text = "The method is sound. The results are weak."
    result = load("readability").compute(predictions=[text, "", None], return_per_review=True)
    # 8 words, 2 sentences; syllables by the CMU dictionary: the(1) method(2) is(1) sound(1)
    # the(1) results(2) are(1) weak(1) = 10.
    assert result["tkc"] == {"mean": 8.0, "std": None, "n": 1}
    assert result["ttr"]["mean"] == pytest.approx(7 / 8)
    assert result["fre"]["mean"] == pytest.approx(206.835 - 1.015 * 4 - 84.6 * 10 / 8)
    assert result["fkg"]["mean"] == pytest.approx(0.39 * 4 + 11.8 * 10 / 8 - 15.59)
    assert result["skipped"] == 2
    assert result["per_review"]["tkc"][0] == readability(text).tkc


def test_xref_module_counts_mentions_per_type():
    result = load("xref").compute(predictions=["Figure 2 contradicts Eq. (3) and Table 1.", "No references here."])
    assert result["xref"]["mean"] == 1.5
    assert result["per_type"]["figure"] == 0.5 and result["per_type"]["equation"] == 0.5
    assert result["per_type"]["theorem"] == 0


def test_citations_module_returns_extracted_references():
    text = "See Vaswani, A., & Shazeer, N. (2017). Attention is all you need. NeurIPS."
    result = load("citations").compute(predictions=[text, "Smith et al. (2020) did this."], return_citations=True)
    assert result["citations"]["mean"] == 0.5
    assert result["extracted"][1] == []
    assert result["extracted"][0][0]["year"] == 2017
    assert result["extracted"][0][0]["title"] == find_citations(text)[0].title


def test_krippendorff_module_simple_and_panel_forms():
    kripp = load("krippendorff_alpha")
    assert kripp.compute(paper_ids=["a", "a", "b", "b"], ratings=[1, 1, 3, 3])["alpha"] == 1.0
    result = load("krippendorff_alpha", "panel").compute(
        paper_ids=["a", "a", "b", "b", "a", "b"], ratings=[1, 1, 3, 3, 3, 1],
        sources=["human"] * 4 + ["m"] * 2, venues=["ICLR"] * 6, year_groups=["2025"] * 6)
    assert result["human"]["ICLR"]["alpha"] == 1.0
    # With the model disagreeing on both papers: units (1,1,3) and (3,3,1); n_1 = n_3 = 3, n = 6.
    # Ordinal delta^2(1,3) = (3 + 3 - (3 + 3)/2)^2 = 9. D_o = (2 * 2 * 9 * 2) / (2 * 3 * 2) = 6,
    # D_e = (2 * 3 * 3 * 9) / (6 * 5) = 5.4, alpha = 1 - 6 / 5.4 = -1/9.
    assert result["m"]["ICLR"]["alpha_with_model"] == pytest.approx(-1 / 9)


def test_score_distribution_module_by_hand():
    result = load("score_distribution").compute(
        scores=[4, 3, 5, 5], sources=["human", "human", "m", "m"], paper_ids=["a", "a", "a", "a"],
        scale_values=[1, 2, 3, 4, 5])
    assert result["m"]["sum_abs_diff_pp"] == pytest.approx(200.0)
    assert result["m"]["total_variation"] == pytest.approx(1.0)
    assert result["m"]["gap_to_human_median"]["mean"] == pytest.approx(1.5)
    assert result["human"]["distribution"][3] == pytest.approx(0.5)


def test_grounding_specificity_module_by_hand():
    texts = ["The method is unclear.", "Table 2 lacks error bars.", "See Table 1 and Figure 2.",
             "Sections 2, 3 and 4, Table 5, Figure 6, Eq. (7), Theorem 8 and Lemma 9 disagree.", ""]
    # Per review: mean rating 2, 4, 3, 5, 1; cross-references 0, 1, 2, 6 ("Sections 2, 3 and 4" is one mention),
    # none for the empty text, which counts in no bin and no correlation.
    result = load("grounding_specificity").compute(scores=[[1, 3], [4, None], [3], [5, 5, 5], [1]], texts=texts)
    assert (result["reviews"], result["reviews_scored"], result["comments"], result["comments_failed"]) == (5, 5, 9, 1)
    assert result["score"]["mean"] == pytest.approx(3.0) and result["score"]["n"] == 5
    assert {name: (entry["mean"], entry["n"], entry["gain"]) for name, entry in result["bins"].items()} == {
        "0": (2.0, 1, 0.0), "1": (4.0, 1, 2.0), "2-5": (3.0, 1, 1.0), ">5": (5.0, 1, 3.0)}
    # Ranks of the means [2, 4, 3, 5] and of the counts [0, 1, 2, 6]: [1, 3, 2, 4] and [1, 2, 3, 4];
    # rho = 1 - 6 * (0 + 1 + 1 + 0) / (4 * 15) = 0.8.
    assert result["spearman"]["xref"]["rho"] == pytest.approx(0.8) and result["spearman"]["xref"]["n"] == 4
    with pytest.raises(ValueError, match="review 2: score 6 is not on RevUtil's scale"):
        load("grounding_specificity").compute(scores=[[1], [6]], texts=["a", "b"])
