import pytest

from praib.scales import UnknownScaleError, known_venues, venue_scales


def test_iclr_2025_rating_uses_the_six_point_form():
    scales = venue_scales("ICLR", 2025)
    assert scales.rating.values == (1, 3, 5, 6, 8, 10)
    assert scales.confidence.values == (1, 2, 3, 4, 5)
    assert set(scales.subscores) == {"soundness", "presentation", "contribution"}
    assert 7 not in scales.rating


def test_iclr_editions_up_to_2018_share_one_year_group():
    assert venue_scales("ICLR", 2017).year_group == "<=2018"
    assert venue_scales("ICLR", 2018).year_group == "<=2018"
    assert venue_scales("ICLR", 2019).year_group == "2019"


def test_iclr_2020_has_a_four_point_rating_and_no_confidence():
    scales = venue_scales("ICLR", 2020)
    assert scales.rating.values == (1, 3, 6, 8)
    assert scales.confidence is None


def test_neurips_2025_switched_to_six_points_and_new_subscores():
    assert venue_scales("NeurIPS", 2024).rating.values == tuple(range(1, 11))
    scales = venue_scales("NeurIPS", 2025)
    assert scales.rating.values == (1, 2, 3, 4, 5, 6)
    assert set(scales.subscores) == {"quality", "clarity", "significance", "originality"}


def test_labels_map_to_values_by_full_label_or_head():
    rating = venue_scales("NeurIPS", 2025).rating
    assert rating.value_for_label("Borderline Accept") == 4
    assert rating.value_for_label("accept") == 5
    assert rating.value_for_label("strong accept") == 6
    assert rating.value_for_label("outstanding") is None
    iclr = venue_scales("ICLR", 2024).rating
    assert iclr.value_for_label("Marginally above the acceptance threshold") == 6


def test_venue_names_match_aliases_and_openreview_groups():
    assert venue_scales("neurips", 2023).venue == "NeurIPS"
    assert venue_scales("ICLR.cc/2024/Conference", 2024).venue == "ICLR"


def test_unknown_venue_and_year_say_what_is_known():
    with pytest.raises(UnknownScaleError, match="known venues: ICLR, NeurIPS"):
        venue_scales("ACL", 2023)
    with pytest.raises(UnknownScaleError, match="2017-2025"):
        venue_scales("ICLR", 2012)


def test_a_new_venue_is_a_data_file(tmp_path, monkeypatch):
    (tmp_path / "tmlr.yaml").write_text(
        "venue: TMLR\naliases: []\neditions:\n  - years: [2024]\n    rating: {1: reject, 2: accept}\n")
    monkeypatch.setenv("PRAIB_SCALES_PATH", str(tmp_path))
    assert "TMLR" in known_venues()
    assert venue_scales("TMLR", 2024).rating.value_for_label("Accept") == 2
