"""What a perturbation run changed: edits counted by hand on small texts and records."""

from praib.perturb.statistics import (EditCount, Spread, count_edits, counterfactual_statistics, kind_statistics,
                                      record_edits)


def test_a_replaced_word_is_one_edit_of_one_word():
    assert count_edits("the model is fast and small", "the model is slow and small") == EditCount(1, 1)


def test_separate_changes_on_one_line_are_separate_edits():
    # "fast" -> "slow" and "small" -> "large tiny": two runs; the second removes one word and adds two.
    assert count_edits("the model is fast and small", "the model is slow and large tiny") == EditCount(2, 3)


def test_inserted_lines_are_one_edit_each_even_when_adjacent():
    before = "Weaknesses:\n- the baseline is weak\nRating: 6"
    after = "Weaknesses:\n- the baseline is weak\n- claim one is false\n- claim two too\nRating: 6"
    assert count_edits(before, after) == EditCount(2, 5 + 4)  # the list markers are words too


def test_a_removed_line_and_a_blank_line_count_only_the_line_with_words():
    assert count_edits("a b\n\nc d\ne f", "a b\ne f") == EditCount(1, 2)


def test_a_change_of_line_breaks_only_is_one_edit_of_no_words():
    assert count_edits("one two three\nfour five", "one two\nthree four five") == EditCount(1, 0)


def test_identical_or_missing_texts_have_no_edit():
    assert count_edits("same\ntext", "same\ntext") == EditCount(0, 0)
    assert count_edits(None, None) == EditCount(0, 0)
    assert count_edits(None, "new words here") == EditCount(1, 3)


def test_a_record_without_a_text_change_counts_its_changed_fields():
    original = {"paper_id": "p", "text": None, "rating": 8, "recommendation": "accept", "perturbation": None}
    flipped = {**original, "rating": 1, "recommendation": "reject", "perturbation": {"kind": "rating-flip"}}
    assert record_edits(original, flipped) == EditCount(2, 0)
    assert record_edits(original, {**original, "perturbation": {"kind": "x"}}) == EditCount(0, 0)


def test_kind_statistics_sum_a_papers_records_and_count_the_records_left_out():
    originals = [{"paper_id": "p1", "review_id": "r1", "text": "a b c"},
                 {"paper_id": "p1", "review_id": "r2", "text": "d e f"},
                 {"paper_id": "p2", "review_id": "r3", "text": "g h i"},
                 {"paper_id": "p3", "review_id": "r4", "text": "j k l"}]
    perturbed = [{"paper_id": "p1", "review_id": "r1", "text": "a X c"},     # 1 edit
                 {"paper_id": "p1", "review_id": "r2", "text": "Y e Z W"},   # 2 edits, 3 words
                 {"paper_id": "p3", "review_id": "r4", "text": "j k l"}]     # unchanged; r3 left out
    stats = kind_statistics("review-tone", "review", "tone", originals, perturbed,
                            llm_edits={"unit": "review", "accepted": 2, "rejected": 1, "unanswered": 1}, seconds=1.5)
    assert (stats.records, stats.changed, stats.unchanged, stats.left_out) == (4, 2, 1, 1)
    assert stats.edits == {"p1": 3, "p3": 0} and stats.words == {"p1": 4, "p3": 0}
    assert stats.edit_spread == Spread(3, 1.5, 0, 3, 2)
    assert stats.accepted_share == 0.5
    data = stats.to_dict()
    assert data["edits"] == {"sum": 3, "mean": 1.5, "min": 0, "max": 3, "papers": 2}
    assert data["changed_share"] == 0.5 and data["written_share"] == 0.75
    assert stats.describe() == "3 edits in 2 papers (mean 1.5 a paper, 0-3); 1.50 s"


def test_counterfactual_statistics_of_variants_counted_by_hand():
    papers = [{"paper_id": "a", "venue": "ACL", "text": "x y z\nw v"},
              {"paper_id": "b", "venue": "ACL", "text": "one two three"},
              {"paper_id": "c", "venue": "EMNLP", "text": "p q r"},
              {"paper_id": "d", "venue": "EMNLP", "text": "no variant"}]
    critical, neutral = {"category": "soundness-critical"}, {"category": "soundness-neutral"}
    variants = [{"paper_id": "a", "text": "x Y z\nw V", "perturbation": critical},        # 2 edits, 2 words
                {"paper_id": "a", "text": "x y z\nw v extra words", "perturbation": neutral},  # 1 edit, 2 words
                {"paper_id": "b", "text": "one TWO three", "perturbation": critical},      # 1 edit, 1 word
                {"paper_id": "c", "text": "p q r s", "perturbation": neutral}]             # 1 edit, 1 word
    logic = [{"paper_id": "a", "goal": {"genre": "method"}, "findings": [{}, {}, {}]},
             {"paper_id": "b", "goal": {"genre": "analysis"}, "findings": [{}]},
             {"paper_id": "c", "goal": {"genre": "method"}, "findings": [{}, {}]},
             {"paper_id": "d", "goal": {"genre": "dataset"}, "findings": []}]
    stats = counterfactual_statistics(papers, variants, logic)
    assert stats["papers"] == {"given": 4, "with_variants": 3, "by_venue": {"ACL": 2, "EMNLP": 1},
                               "per_venue": {"mean": 1.5, "std": 0.5 ** 0.5, "n": 2}, "with_logic": 3,
                               "paper_types": 2, "by_paper_type": {"analysis": 1, "method": 2},
                               "per_paper_type": {"mean": 1.5, "std": 0.5 ** 0.5, "n": 2},
                               "findings_per_paper": {"mean": 2.0, "std": 1.0, "n": 3}}
    rows = stats["counterfactuals"]
    assert rows["soundness-critical"] == {"variants": 2, "per_paper": 2 / 3, "edits": {"mean": 1.5, "std": 0.5 ** 0.5},
                                          "words": {"mean": 1.5, "std": 0.5 ** 0.5}}
    assert rows["soundness-neutral"]["edits"] == {"mean": 1.0, "std": 0.0}
    assert rows["soundness-neutral"]["words"] == {"mean": 1.5, "std": 0.5 ** 0.5}
    assert rows["total"]["variants"] == 4 and rows["total"]["per_paper"] == 4 / 3
    assert rows["total"]["edits"]["mean"] == 5 / 4
