"""The DISAPERE adapter: a file written here in DISAPERE's shape (our own sentences), and, where the shared
data folder has it, the real release (optional, skipped elsewhere)."""

import json
from collections import defaultdict

import pytest

from praib.llm.judge import Judge
from praib.metrics.judged.target_aspect import ASPECTS
from praib.metrics.judged.validation import validate_judge
from praib.records import RecordError
from praib.sources.disapere import ASPECT_TABLE, FILENAME, read_disapere
from tests.doubles import StubBackend
from tests.paths import SHARED_DATA

REAL = SHARED_DATA / "disapere"

# (text, DISAPERE aspect, DISAPERE polarity) of the sentences of two reviews.
REVIEWS = {
    "R1": [("This paper studies graph pruning.", "none", "none"),
           ("The writing is hard to follow.", "asp_clarity", "pol_negative"),
           ("The idea is fresh.", "asp_originality", "pol_positive"),
           ("No code is released.", "asp_replicability", "pol_negative"),
           ("Section 4 reports the results.", "asp_substance", "none")],
    "R2": [("More ablations are needed.", "asp_substance", "pol_negative"),
           ("Comparisons with earlier pruning methods are missing.", "asp_meaningful-comparison", "pol_negative"),
           ("Thanks for the appendix.", "arg_other", "pol_positive"),
           ("The problem matters to practitioners.", "asp_motivation-impact", "pol_positive"),
           ("The proof of Lemma 2 has a gap.", "asp_soundness-correctness", "pol_negative")],
}


def _review(review_id, sentences):
    return {"split": "test", "review_id": review_id, "review_sentences": [
        {"review_id": review_id, "sentence_index": i, "text": text, "suffix": " ", "review_action": "arg_evaluative",
         "fine_review_action": "none", "aspect": aspect, "polarity": polarity}
        for i, (text, aspect, polarity) in enumerate(sentences)], "rebuttal_sentences": []}


@pytest.fixture
def release(tmp_path):
    folder = tmp_path / "disapere"
    folder.mkdir()
    (folder / FILENAME).write_text("".join(json.dumps(_review(r, s)) + "\n" for r, s in REVIEWS.items()))
    return folder


def test_aspect_items_are_mapped_and_the_rest_counted(release):
    gold = read_disapere(release, "aspect")
    assert [(item.id, item.label, item.kind) for item in gold.items] == [
        ("R1/1", "Clarity", "weakness"), ("R1/2", "Novelty", "strength"), ("R2/0", "Validity", "weakness"),
        ("R2/1", "Validity", "weakness"), ("R2/3", "Impact", "strength"), ("R2/4", "Validity", "weakness")]
    assert gold.items[0].text == "The writing is hard to follow."
    assert gold.left_out == {"asp_replicability (no counterpart)": 1, "arg_other (no counterpart)": 1,
                             "aspect without a polarity": 1}
    assert gold.summary["yielded"] == {"Validity": 3, "Clarity": 1, "Novelty": 1, "Impact": 1}
    assert (gold.summary["reviews"], gold.summary["sentences"]) == (2, 10)
    assert gold.summary["aspects"]["asp_substance"] == 2 and gold.summary["polarities"]["pol_negative"] == 5
    assert (gold.name, gold.source, gold.task) == ("DISAPERE", f"disapere:{release}", "aspect")


def test_every_sentence_with_a_polarity_is_a_strength_or_a_weakness(release):
    gold = read_disapere(release / FILENAME, "polarity")
    labels = {item.id: item.label for item in gold.items}
    assert labels == {"R1/1": "weakness", "R1/2": "strength", "R1/3": "weakness", "R2/0": "weakness",
                      "R2/1": "weakness", "R2/2": "strength", "R2/3": "strength", "R2/4": "weakness"}
    assert gold.left_out == {} and gold.summary["yielded"] == {"weakness": 5, "strength": 3}


def test_the_table_maps_onto_praibs_codebook():
    assert {label for label, _ in ASPECT_TABLE.values() if label} <= set(ASPECTS)


@pytest.mark.parametrize("task", ["target", "math", "atomic", "coverage"])
def test_disapere_has_no_labels_for_the_other_tasks(release, task):
    with pytest.raises(ValueError, match=f"DISAPERE labels aspect and polarity, not {task}"):
        read_disapere(release, task)


@pytest.mark.parametrize("change, message", [
    (lambda r: r["review_sentences"][1].update(aspect="asp_tone"), "field 'review_sentences[1].aspect': unknown "
                                                                   "DISAPERE aspect 'asp_tone'"),
    (lambda r: r["review_sentences"][2].update(polarity="pol_mixed"), "unknown DISAPERE polarity 'pol_mixed'"),
    (lambda r: r.pop("review_sentences"), "field 'review_sentences': expected list"),
    (lambda r: r["review_sentences"][0].update(text=None), "field 'review_sentences[0].text': expected str"),
])
def test_a_line_that_is_not_disapere_is_named(tmp_path, change, message):
    reviews = [_review(r, s) for r, s in REVIEWS.items()]
    change(reviews[1])
    path = tmp_path / FILENAME
    path.write_text("".join(json.dumps(r) + "\n" for r in reviews))
    with pytest.raises(RecordError) as caught:
        read_disapere(path, "aspect")
    assert str(caught.value).startswith(f"{path}: line 2: ") and message in str(caught.value)


def test_a_folder_without_the_release_is_named(tmp_path):
    with pytest.raises(RecordError, match=f"{tmp_path}: expected DISAPERE's {FILENAME} in this folder"):
        read_disapere(tmp_path, "polarity")


def _gold_answering_judge(gold):
    """A stub judge that answers every item's gold label, in the order the items are asked."""
    answers = defaultdict(list)
    for item in gold.items:
        answers[f"judge:aspect_{item.kind}" if gold.task == "aspect" else "judge:polarity"].append(item.label)
    queues = {template: iter(labels) for template, labels in answers.items()}
    return Judge(StubBackend(lambda request: next(queues[request.template])))


def test_a_judge_that_answers_the_gold_label_scores_one(release):
    gold = read_disapere(release, "aspect")
    result, wrong = validate_judge(_gold_answering_judge(gold), gold, resamples=50)
    assert result.metrics["accuracy"].value == 1.0 and result.metrics["cohen_kappa"].value == 1.0
    assert wrong == [] and result.counts["left_out"] == gold.left_out


@pytest.mark.skipif(not (REAL / FILENAME).exists(), reason="the DISAPERE release is not in the shared data folder")
def test_the_real_release_yields_the_documented_items():
    aspect = read_disapere(REAL, "aspect")
    assert aspect.summary["aspects"] == {
        "none": 4717, "asp_substance": 1700, "asp_clarity": 1102, "asp_soundness-correctness": 953,
        "asp_originality": 383, "asp_motivation-impact": 367, "asp_meaningful-comparison": 313,
        "asp_replicability": 284, "arg_other": 127}
    assert aspect.summary["polarities"] == {"none": 5909, "pol_negative": 2927, "pol_positive": 1110}
    assert (aspect.summary["reviews"], aspect.summary["sentences"]) == (506, 9946)
    # substance 893 + 347, soundness 647 + 126 and meaningful comparison 170 + 30 sentences with a polarity
    assert aspect.summary["yielded"] == {"Validity": 2213, "Clarity": 793, "Novelty": 369, "Impact": 333}
    assert aspect.left_out == {"aspect without a polarity": 1110, "asp_replicability (no counterpart)": 284,
                               "arg_other (no counterpart)": 127}
    polarity = read_disapere(REAL, "polarity")
    assert polarity.summary["yielded"] == {"weakness": 2927, "strength": 1110}
    for gold in (aspect, polarity):
        result, wrong = validate_judge(_gold_answering_judge(gold), gold, resamples=20)
        assert result.metrics["accuracy"].value == 1.0 and result.metrics["macro_f1"].value == 1.0
        assert result.metrics["cohen_kappa"].value == 1.0 and wrong == []
