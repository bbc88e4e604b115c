"""PRAIB Tables 4, 5 and 6 from `praib leaderboard eras`: every number is the eras result's own, the greater era mean
is bold, the p-values print as the paper prints them; checked on the demo reviews and on synthetic reviews whose
readability is counted by hand."""

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import mannwhitneyu

from praib.cli.main import main
from praib.leaderboard import eras as eras_module
from praib.leaderboard.eras import era_analysis
from praib.metrics.text.readability import readability
from praib.tables import load_result
from praib.tables.layout import Cell, Table, label
from praib.tables.praib_leaderboard_tables import SIGNIFICANCE, PlusMinus, PValue, Verdict
from tests.tables.eras_results import (CAT, DOG, MAT, SYNTHETIC, check_tables, eras_demo, eras_synthetic, human_reviews,
                                       tables_of, write)


def fre(words: int, sentences: int, syllables: int) -> float:
    return 206.835 - 1.015 * words / sentences - 84.6 * syllables / words


FRE = {CAT: fre(3, 1, 3), DOG: fre(4, 1, 4), MAT: fre(7, 1, 7)}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("eras")


@pytest.fixture(scope="module")
def synthetic(folder):
    path = eras_synthetic(folder)
    return path, {table.key: table for table in tables_of(path, "eras")}


@pytest.fixture(scope="module")
def demo(folder):
    return {table.key: table for table in tables_of(eras_demo(folder), "eras")}


def rows_by_label(table: Table, column: int = 0) -> dict:
    return {row[column].text(): row for row in table.rows}


def test_generic_checks_on_the_demo_and_on_synthetic_reviews(synthetic, demo):
    check_tables(list(synthetic[1].values()), "eras", at_least=100)
    check_tables(list(demo.values()), "eras", at_least=30)


def test_hand_counted_readability_is_what_the_formulas_give():
    for text, (words, syllables) in ((CAT, (3, 3)), (DOG, (4, 4)), (MAT, (7, 7))):
        scores = readability(text)
        assert (scores.words, scores.sentences, scores.syllables) == (words, 1, syllables)
        assert scores.fre == pytest.approx(FRE[text])


def test_table_4_means_per_venue_and_year(synthetic):
    table = synthetic[1]["praib-4"]
    assert table.header == ["Metric", "2022", "2023", "2024", "2025", "2022", "2023"]
    assert table.header_groups == [("", 1), ("ICLR", 4), ("NeurIPS", 2)]
    fre_row, tkc_row = rows_by_label(table)["FRE"], rows_by_label(table)["TKC"]
    # ICLR 2023: five "The cat sat." (119.19) and two "The dog ran far." (118.175): 832.3 / 7 = 118.90.
    assert fre_row[2].value == pytest.approx((5 * 119.19 + 2 * 118.175) / 7) and fre_row[2].text() == "118.90"
    # ICLR 2025: four "A big cat sat on the mat." (115.13), two cats: 698.9 / 6 = 116.48.
    assert fre_row[4].text() == "116.48"
    assert fre_row[5].text() == "118.85"  # NeurIPS 2022: (2 × 119.19 + 118.175) / 3
    assert tkc_row[2].text() == "3.29"  # (5 × 3 + 2 × 4) / 7
    assert [cell.text() for cell in rows_by_label(table)["Xref."][1:]] == ["0.00"] * 6


NOTE_START = ("Xref. is praib's count, in which lines, § and appendices (as sections) count and datasets and databases "
              "do not; PRAIB's own expression (Appendix C.1) counts datasets and databases and leaves out lines, § and "
              "appendices")


def test_table_4_note_says_how_xref_differs_from_the_papers_categories_and_gives_both_counts(synthetic):
    # The synthetic reviews have no cross-reference in either category set.
    assert synthetic[1]["praib-4"].notes[-1] == (
        f"{NOTE_START}. Per review, praib's / PRAIB's categories: ICLR 2022 0.00 / 0.00, 2023 0.00 / 0.00, "
        "2024 0.00 / 0.00, 2025 0.00 / 0.00; NeurIPS 2022 0.00 / 0.00, 2023 0.00 / 0.00.")


def test_eras_count_each_years_references_in_both_category_sets_and_table_4_gives_both(folder):
    # By hand: "Table 2 and line 5" is 2 mentions in praib's categories, 1 in PRAIB's (no lines); "Dataset 3 and
    # Appendix B" 1 in each (PRAIB's counts the dataset, praib's the appendix); "See § 4, Fig. 1 and DB 2." 2 in
    # each (§ 4 and Fig. 1 against Fig. 1 and DB 2); "Lines 3-4 and data set 2." 1 in each. ICLR ≤2018:
    # (2 + 1) / 2 = 1.50 against (1 + 1) / 2 = 1.00.
    texts = {"ICLR": {2017: ["Table 2 and line 5."], 2018: ["Dataset 3 and Appendix B."],
                      2024: ["See § 4, Fig. 1 and DB 2."]},
             "NeurIPS": {2023: ["The cat sat.", "Lines 3-4 and data set 2."]}}
    data = era_analysis(human_reviews(texts), workers=1)
    years = {venue: data["venues"][venue]["years"] for venue in texts}
    assert years["ICLR"]["<=2018"]["xref"] == {"mean": 1.5, "std": np.std([2, 1], ddof=1), "n": 2,
                                               "paper": {"mean": 1.0, "std": 0.0, "n": 2}}
    assert years["ICLR"]["2024"]["xref"]["paper"] == {"mean": 2.0, "std": None, "n": 1}
    assert years["NeurIPS"]["2023"]["xref"]["paper"] == {"mean": 0.5, "std": np.std([0, 1], ddof=1), "n": 2}
    # A detail of Xref.: the eras' summaries and tests are of the registry's metrics alone.
    assert "paper" not in data["venues"]["ICLR"]["eras"]["pre"]["xref"] and "xref_paper" not in data["metrics"]
    table = tables_of(write(folder, "eras-xref.json", data), "eras")[0]
    assert [cell.text() for cell in rows_by_label(table)["Xref."][1:]] == ["1.50", "2.00", "0.50"]
    note = table.notes[-1]
    assert note == (f"{NOTE_START}. Per review, praib's / PRAIB's categories: ICLR ≤2018 1.50 / 1.00, 2024 2.00 / 2.00; "
                    "NeurIPS 2023 0.50 / 0.50.")
    assert "2024 2.00 / 2.00" in table.to_latex()
    # An eras result written before it held PRAIB's categories: the note says where both counts are.
    for venue in years.values():
        for year in venue.values():
            del year["xref"]["paper"]
    note = tables_of(write(folder, "eras-before.json", data), "eras")[0].notes[-1]
    assert note == (f"{NOTE_START}. Both counts per venue and year: `praib evaluate HUMAN_REVIEWS --group-by "
                    "venue,year` (each group's `xref` and `xref.paper`).")


def test_an_iclr_column_up_to_2018_prints_as_the_paper_does(folder):
    reviews = human_reviews({"ICLR": {2017: [CAT], 2018: [CAT, DOG], 2024: [MAT]}})
    (table, *_) = tables_of(write(folder, "eras-early.json", era_analysis(reviews, workers=1)), "eras")
    assert table.header == ["Metric", "≤2018", "2024"]
    assert rows_by_label(table)["FRE"][1].text() == "118.85"  # (2 × 119.19 + 118.175) / 3
    assert "$\\leq$2018" in table.to_latex()


def test_table_5_means_sds_and_the_greater_mean_in_bold(synthetic):
    table = synthetic[1]["praib-5"]
    assert table.header == ["Metric", "Pre-LLM (< 2024)", "Post-LLM (≥ 2024)", "Pre-LLM (< 2023)",
                            "Post-LLM (≥ 2023)"]
    rows = rows_by_label(table)
    pre, post = rows["FRE"][1], rows["FRE"][2]
    # Pre: 15 cats and 2 dogs, (15 × 119.19 + 2 × 118.175) / 17 = 119.07; post: 12 mats and 2 cats, 1619.94 / 14 = 115.71,
    # sample SD sqrt((12 × 0.58² + 2 × 3.48²) / 13) = 1.47.
    post_values = [FRE[MAT]] * 12 + [FRE[CAT]] * 2
    assert (pre.text(), post.text()) == ("119.07 ± 0.34", "115.71 ± 1.47")
    assert post.value[1].value == pytest.approx(np.std(post_values, ddof=1))
    assert pre.value[0].bold and not post.value[0].bold and not pre.value[1].bold
    tkc_pre, tkc_post = rows["TKC"][1], rows["TKC"][2]  # 53 / 17 = 3.12 against 90 / 14 = 6.43
    assert (tkc_pre.value[0].text(), tkc_post.value[0].text()) == ("3.12", "6.43")
    assert tkc_post.value[0].bold and not tkc_pre.value[0].bold
    # Every text has distinct words and no cross-reference: equal means, neither bold.
    for name in ("TTR", "Xref."):
        assert not any(part.bold for cell in rows[name][1:] for part in cell.value), name
    markdown, latex = table.to_markdown(), table.to_latex()
    assert "| FRE | **119.07** ± 0.34 | 115.71 ± 1.47 | **118.85** ± 0.59 | 118.51 ± 0.59 |" in markdown
    assert "FRE & \\textbf{119.07} $\\pm$ 0.34 & 115.71 $\\pm$ 1.47" in latex
    assert "Pre-LLM ($<$ 2024) & Post-LLM ($\\geq$ 2024)" in latex


def pooled(means, counts):
    """An era's mean per review from its years' means and review counts."""
    return sum(m * n for m, n in zip(means, counts)) / sum(counts)


def test_era_means_pool_the_years_reviews_and_so_reproduce_the_papers_table_5_from_tables_3_and_4(synthetic):
    path, _ = synthetic
    data = load_result(path).data
    for venue, detail in data["venues"].items():
        for metric in ("tkc", "fre", "fkg"):
            for era in ("pre", "post"):
                years = [str(y) for y in detail["eras"][era]["years"]]
                assert detail["eras"][era][metric]["mean"] == pytest.approx(
                    pooled([detail["years"][y][metric]["mean"] for y in years],
                           [detail["years"][y][metric]["n"] for y in years]))
    # The paper: Table 4's year means weighted by Table 3's review counts give Table 5's era means.
    iclr_reviews = [5250, 4763, 7766, 11492, 13123, 18532, 27857, 46737]  # <=2018 ... 2025; post from 2024
    neurips_reviews = [10736, 10330, 15171, 16644, 22373]  # 2021 ... 2025; post from 2023
    table_4 = {("ICLR", "FRE"): [43.56, 43.47, 43.28, 42.71, 41.73, 41.63, 38.36, 34.27],
               ("ICLR", "TKC"): [396.34, 469.64, 476.39, 563.96, 600.12, 562.36, 499.44, 524.41],
               ("ICLR", "F-KG"): [11.83, 11.68, 11.70, 11.71, 11.81, 11.65, 12.14, 12.83],
               ("ICLR", "Xref."): [1.87, 2.42, 2.45, 2.83, 2.93, 2.49, 2.35, 2.06],
               ("NeurIPS", "FRE"): [40.89, 41.01, 38.97, 36.25, 32.85],
               ("NeurIPS", "TKC"): [546.84, 506.99, 497.08, 473.47, 559.54],
               ("NeurIPS", "F-KG"): [12.08, 11.91, 12.03, 12.38, 12.93],
               ("NeurIPS", "Xref."): [2.12, 2.06, 1.92, 1.78, 1.77]}
    table_5 = {("ICLR", "FRE"): (42.38, 35.80), ("ICLR", "TKC"): (538.28, 515.09), ("ICLR", "F-KG"): (11.72, 12.57),
               ("ICLR", "Xref."): (2.58, 2.17), ("NeurIPS", "FRE"): (40.95, 35.61),
               ("NeurIPS", "TKC"): (527.30, 515.62), ("NeurIPS", "F-KG"): (12.00, 12.51),
               ("NeurIPS", "Xref."): (2.09, 1.82)}
    for (venue, metric), means in table_4.items():
        counts, first_post = (iclr_reviews, 6) if venue == "ICLR" else (neurips_reviews, 2)
        reproduced = (pooled(means[:first_post], counts[:first_post]), pooled(means[first_post:], counts[first_post:]))
        # Within the rounding of the printed inputs and outputs (0.005 each); an unweighted mean of the years would
        # miss by far more (ICLR FRE pre: 42.73 against 42.38).
        assert reproduced == pytest.approx(table_5[(venue, metric)], abs=0.01), (venue, metric)


def test_table_6_tests_against_scipy_and_the_papers_p_value_format(synthetic):
    path, tables = synthetic
    table = tables["praib-6"]
    assert table.header == ["Conference", "Metric", "Pre-Mean", "Post-Mean", "p-value", "Significant (0.05)"]
    assert [row[1].text() for row in table.rows] == ["TKC", "FRE", "F-K", "Xref."] * 2
    assert [row[0].text() for row in table.rows] == ["ICLR", "", "", "", "NeurIPS", "", "", ""]
    iclr, neurips = table.rows[:4], table.rows[4:]
    by_era = {venue: {era: [FRE[t] for y, texts in SYNTHETIC[venue].items() for t in texts
                            if (y < split) == (era == "pre")] for era in ("pre", "post")}
              for venue, split in (("ICLR", 2024), ("NeurIPS", 2023))}
    for venue, row in (("ICLR", iclr[1]), ("NeurIPS", neurips[1])):
        expected = mannwhitneyu(by_era[venue]["post"], by_era[venue]["pre"], alternative="two-sided").pvalue
        assert row[4].value == pytest.approx(expected)
        assert row[5].value == (expected < 0.05)
    assert (iclr[1][4].text(), iclr[1][5].text(), iclr[1][5].bold) == ("< 0.001", "Yes", True)
    assert (neurips[1][4].text(), neurips[1][5].text(), neurips[1][5].bold) == ("0.619", "No", False)
    # Table 6's means are Table 5's.
    table_5 = rows_by_label(tables["praib-5"])
    assert iclr[1][2].source == table_5["FRE"][1].value[0].source
    assert neurips[0][3].source == table_5["TKC"][4].value[0].source
    markdown = table.to_markdown()
    assert "| ICLR | TKC | 3.12 | 6.43 | < 0.001 | **Yes** |" in markdown
    assert "|  | Xref. | 0.00 | 0.00 | 1.000 | No |" in markdown
    assert "FRE & 119.07 & 115.71 & $<$ 0.001 & \\textbf{Yes} \\\\" in table.to_latex()


def test_one_era_only_leaves_the_other_missing_and_says_what_fills_it(demo):
    table_5, table_6 = demo["praib-5"], demo["praib-6"]
    assert all(row[1].text() == "—" and row[3].text() == "—" for row in table_5.rows)
    assert all(row[2].text() != "—" for row in table_5.rows)
    assert table_5.needs == ["ICLR's pre-LLM column: human reviews of ICLR before 2024",
                             "NeurIPS's pre-LLM column: human reviews of NeurIPS before 2023"]
    assert all(row[4].text() == "—" and row[5].text() == "—" for row in table_6.rows)
    assert table_6.needs == table_5.needs
    assert "Missing (—): ICLR's pre-LLM column" in table_6.to_markdown()
    assert demo["praib-4"].header == ["Metric", "2025", "2025"] and not demo["praib-4"].needs


def test_cells_print_p_values_verdicts_and_mean_sd_as_the_paper():
    assert PValue(0.0004, "x", digits=3).text() == "< 0.001"
    assert PValue(0.001, "x", digits=3).text() == "0.001"
    assert PValue(0.2234, "x", digits=3).text() == "0.223"
    assert PValue(None, "x", digits=3).text() == "—"
    assert (Verdict(True, "x").text(), Verdict(False, "x").text(), Verdict(None, "x").text()) == ("Yes", "No", "—")
    mean_sd = PlusMinus((Cell(538.284, "m", digits=2, bold=True), Cell(333.229, "s", digits=2)))
    assert mean_sd.text() == "538.28 ± 333.23"
    table = Table("t", "P", 5, "T", header=["Metric", "Pre"], rows=[[label("TKC"), mean_sd]])
    assert "| TKC | **538.28** ± 333.23 |" in table.to_markdown()
    assert "TKC & \\textbf{538.28} $\\pm$ 333.23 \\\\" in table.to_latex()
    assert PlusMinus((Cell(None, "m", digits=2), Cell(None, "s", digits=2))).text() == "—"
    assert SIGNIFICANCE == eras_module.SIGNIFICANCE


def test_cli_renders_the_eras_tables(synthetic, tmp_path):
    path, _ = synthetic
    runner = CliRunner()
    result = runner.invoke(main, ["tables", str(path), "-t", "praib-5", "-t", "praib-6", "-f", "latex"])
    assert result.exit_code == 0, result.output
    assert "\\label{tab:praib-5}" in result.output and "\\textbf{119.07}" in result.output
    assert "\\label{tab:praib-6}" in result.output and "\\label{tab:praib-4}" not in result.output
    listed = runner.invoke(main, ["tables", "--list"])
    assert "praib-6" in listed.output and "praib leaderboard eras HUMAN_REVIEWS" in listed.output
