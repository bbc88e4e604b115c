"""Optional checks on real ICLR reviews (DISAPERE, ICLR 2019/2020) from the shared data folder.
Skipped where the folder is absent, e.g. in a fresh clone without ../shared."""

import json

import pytest

from praib.evaluation.evaluate import evaluate_reviews
from praib.records import coerce_record, records_to_dataset
from tests.paths import SHARED_DATA

DISAPERE = SHARED_DATA / "disapere" / "disapere_review_rebuttal_pairs.jsonl"


@pytest.mark.skipif(not DISAPERE.exists(), reason="shared real data not available")
def test_human_baselines_on_real_iclr_reviews_are_in_the_published_range():
    rows = []
    for number, line in enumerate(DISAPERE.read_text().splitlines(), start=1):
        raw = json.loads(line)
        rows.append(coerce_record({"paper_id": raw["forum_id"], "source": "human", "venue": "ICLR",
                                   "year": int(raw["conference"][-4:]), "text": raw["review_text"],
                                   "rating": raw["rating"]}, "review", f"{DISAPERE}: line {number}"))
    results = evaluate_reviews(records_to_dataset(rows))
    human = results.groups[0]
    # PRAIB Table 4, human ICLR 2019/2020: FRE 43.5/43.3, FKG 11.7/11.7.
    assert 41 <= human.fre.mean <= 46
    assert 11.3 <= human.fkg.mean <= 12.2
    # Human-only ordinal alpha per ICLR year is 0.32-0.37 in PRAIB Table 9 (2021-2025).
    assert 0.25 <= human.krippendorff_alpha["ICLR"] <= 0.5
    assert set(human.krippendorff["ICLR"]["per_year"]) == {"2019", "2020"}
