"""The cross-references in PRAIB's own categories (``xref.paper``) in evaluate's typed results and JSON, the same in
memory, in batches, in worker processes and in shards saved and merged; and on ../shared/data when present."""

import json

import pytest

from praib.evaluation.evaluate import evaluate_reviews, result_of
from praib.evaluation.partial import Partial
from praib.evaluation.results import PaperXrefSummary, XrefSummary
from praib.evaluation.streamed import Inputs, fold, fold_shards
from praib.metrics.registry import BY_NAME, kept_columns, per_review_metrics
from praib.metrics.text.xref import paper_xref_counts, xref_counts
from praib.records import load_records
from tests.paths import SHARED_DATA

# By hand, praib's / PRAIB's categories: 3 / 1 (Table 2, line 4, Appendix A / Table 2), 1 / 2 (§ 3 / Dataset 2,
# DB 1), 0 / 0, and the model's 1 / 1 (Fig. 2) and 0 / 1 (data set 5).
HUMAN = ["Table 2 and line 4 of Appendix A.", "Dataset 2 and DB 1 contradict § 3.", "No references here."]
MODEL = ["See Fig. 2.", "The data set 5 is small."]


def write_reviews(path):
    rows = [{"paper_id": f"p{i}", "source": "human", "venue": "ICLR", "year": 2017, "text": text}
            for i, text in enumerate(HUMAN)]
    rows += [{"paper_id": f"p{i}", "source": "lm", "model": "lm", "prompt": "p", "venue": "ICLR", "year": 2017,
              "text": text} for i, text in enumerate(MODEL)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def test_evaluate_reports_both_counts_with_hand_values(tmp_path):
    result = evaluate_reviews(load_records(write_reviews(tmp_path / "r.jsonl"), "review"), workers=1, progress=False)
    human, model = result.reference, result.group("lm/p")
    assert isinstance(human.xref, XrefSummary) and isinstance(human.xref.paper, PaperXrefSummary)
    assert (human.xref.mean, human.xref.paper.mean) == (4 / 3, 1.0)
    assert (model.value("xref"), model.xref.paper.mean) == (0.5, 1.0)
    third = pytest.approx(1 / 3)
    assert human.xref.paper.per_type == {"section": 0.0, "dataset": third, "database": third}
    assert human.xref.per_type["section"] == pytest.approx(2 / 3) and human.xref.per_type["line"] == third
    group = result.to_dict()["groups"][0]
    assert list(group["xref"]) == ["mean", "std", "n", "per_100_tokens", "per_type", "paper"]
    assert list(group["xref"]["paper"]) == ["mean", "std", "n", "per_type"] and group["xref"]["paper"]["mean"] == 1.0
    assert group["xref"]["mean"] == pytest.approx(4 / 3) and "dataset" not in group["xref"]["per_type"]


def test_the_registry_keeps_its_columns_once_as_details_of_xref():
    # A detail of Xref., not a metric of its own: the leaderboard does not rank or compare a near copy of it.
    assert "xref_paper" not in BY_NAME and "xref_paper" not in per_review_metrics()
    assert [column.name for column in BY_NAME["xref"].columns][-4:] == [
        "xref_paper", "xref_paper_section", "xref_paper_dataset", "xref_paper_database"]
    names = [column.name for column in kept_columns()]
    assert len(names) == len(set(names))
    assert [name for name in names if name.startswith("xref_paper")] == [
        "xref_paper", "xref_paper_section", "xref_paper_dataset", "xref_paper_database"]


def test_batches_workers_and_shards_merge_to_the_in_memory_counts(tmp_path):
    path = write_reviews(tmp_path / "r.jsonl")
    expected = evaluate_reviews(load_records(path, "review"), workers=1, progress=False).to_dict()
    assert result_of(fold_shards(Inputs(path, batch_rows=2), workers=2)).to_dict() == expected
    inputs = Inputs(path, batch_rows=1)
    parts = [fold(inputs, (index, 3)) for index in (2, 0, 1)]
    merged = Partial.merged(Partial.from_bytes(part.to_bytes()) for part in parts)
    assert result_of(merged).to_dict() == expected
    assert [group["xref"]["paper"]["mean"] for group in expected["groups"]] == [1.0, 1.0]


DISAPERE = SHARED_DATA / "disapere" / "disapere_review_rebuttal_pairs.jsonl"


@pytest.mark.skipif(not DISAPERE.exists(), reason="needs ../shared/data/disapere")
def test_on_disapere_evaluate_gives_both_counts(tmp_path):
    """DISAPERE's ICLR 2019 and 2020 human reviews: per year, evaluate's two counts are the means of the per-text
    functions, they differ by what the categories add and remove, and both stay below what PRAIB prints for those
    years (Table 4: 2.42 and 2.45)."""
    pairs = [json.loads(line) for line in DISAPERE.read_text(encoding="utf-8").splitlines()]
    records = tmp_path / "disapere.jsonl"
    records.write_text("".join(json.dumps({"paper_id": pair["forum_id"], "source": "human", "venue": "ICLR",
                                           "year": int(pair["conference"][4:]), "rating": pair["rating"],
                                           "text": pair["review_text"]}) + "\n" for pair in pairs))
    reviews = load_records(str(records), "review")
    result = evaluate_reviews(reviews, group_by=["venue", "year"], workers=1, progress=False)
    printed = {2019: 2.42, 2020: 2.45}
    for year, paper_cell in printed.items():
        texts = [pair["review_text"] for pair in pairs if pair["conference"] == f"ICLR{year}"]
        group = result.group(f"human/ICLR/{year}")
        ours, theirs = [xref_counts(text) for text in texts], [paper_xref_counts(text) for text in texts]
        assert group.xref.mean == pytest.approx(sum(sum(c.values()) for c in ours) / len(texts), rel=1e-12)
        assert group.xref.paper.mean == pytest.approx(sum(sum(c.values()) for c in theirs) / len(texts), rel=1e-12)
        difference = sum(o["line"] + o["section"] - t["section"] - t["dataset"] - t["database"]
                         for o, t in zip(ours, theirs)) / len(texts)
        assert group.xref.mean - group.xref.paper.mean == pytest.approx(difference)
        assert 0 < difference and group.xref.paper.mean < group.xref.mean < paper_cell - 0.4
