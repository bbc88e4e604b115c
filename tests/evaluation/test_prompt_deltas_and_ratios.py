"""PRAIB Tables 12 and 13 (prompt deltas, ratios to the human baseline) from group means: fed the means the paper
prints in its Table 11, praib's functions give the cells the paper prints in Tables 12 and 13."""

import pytest

from praib.evaluation.evaluate import across_models, prompt_deltas, ratios_to_human
from praib.evaluation.results import GroupResult, Skipped, Summary, XrefSummary

# PRAIB Table 11 (mean TKC, TTR, FRE, Xref, Math) of the human baseline and each model under both prompts.
TABLE_11 = {
    ("OpenReview", None): (531.57, 0.460, 39.14, 2.26, 0.43),
    ("DeepSeek", "extended"): (637.05, 0.413, 13.74, 0.84, 0.29),
    ("DeepSeek", "guidelines"): (469.56, 0.465, 10.95, 0.15, 0.20),
    ("Gemma", "extended"): (897.50, 0.387, 14.97, 0.74, 0.33),
    ("Gemma", "guidelines"): (678.58, 0.410, 11.67, 0.25, 0.17),
    ("GPT-5", "extended"): (1449.23, 0.388, 21.28, 2.47, 0.76),
    ("GPT-5", "guidelines"): (1035.88, 0.434, 18.48, 1.59, 0.70),
    ("OpenReviewer", "extended"): (677.94, 0.433, 38.33, 2.77, 0.40),
    ("OpenReviewer", "guidelines"): (625.09, 0.440, 37.00, 2.35, 0.38),
    ("Qwen", "extended"): (1120.34, 0.388, 20.13, 4.96, 0.69),
    ("Qwen", "guidelines"): (867.27, 0.424, 15.58, 2.57, 0.67),
}


def group(model, prompt, means):
    tkc, ttr, fre, xref, math = (Summary(value, None, 1) for value in means)
    is_reference = prompt is None
    key = {"source": "human" if is_reference else model, "model": None if is_reference else model, "prompt": prompt}
    return GroupResult(
        group=key, label="human" if is_reference else f"{model}/{prompt}", is_reference=is_reference, n_reviews=1,
        n_unparsed=0, n_partially_parsed=0, n_out_of_scale={"rating": 0, "confidence": 0},
        text_metrics={"tkc": tkc, "ttr": ttr, "fre": fre, "fkg": Summary(None, None, 0),
                      "xref": XrefSummary(xref.mean, None, 1, Summary(None, None, 0), {}),
                      "citations": Summary(None, None, 0)},
        krippendorff_alpha={}, krippendorff={}, rating_distribution={}, confidence_distribution={},
        pooled_distributions={}, confidence_gap=None, skipped=Skipped(0, 0, 0),
        judged={"math_engagement": {"mean": math.mean}})


@pytest.fixture
def groups():
    return [group(model, prompt, means) for (model, prompt), means in TABLE_11.items()]


def test_prompt_deltas_give_table_12(groups):
    deltas = {d.reviewer: d for d in prompt_deltas(groups)}
    assert all(d.prompts == ["extended", "guidelines"] for d in deltas.values())
    # Table 12 (extended − guidelines): DeepSeek +167.4 (the paper rounds the unrounded means), −0.052, +2.8,
    # +0.69, +0.09; GPT-5 +413.3, +2.8, +0.88; Qwen Xref +2.39.
    deepseek = deltas["DeepSeek"].delta
    assert deepseek["tkc"] == pytest.approx(167.49) and round(deepseek["ttr"], 3) == -0.052
    assert round(deepseek["fre"], 1) == 2.8 and round(deepseek["xref"], 2) == 0.69
    assert round(deepseek["math_engagement"], 2) == 0.09
    gpt = deltas["GPT-5"].delta
    assert round(gpt["tkc"], 1) == 413.3 and round(gpt["xref"], 2) == 0.88 and round(gpt["fre"], 1) == 2.8
    assert round(deltas["Qwen"].delta["xref"], 2) == 2.39


def test_ratios_to_human_give_table_13(groups):
    ratios = ratios_to_human(groups)
    # Table 13: DeepSeek 1.20 0.90 0.35 0.37 0.67; GPT-5 2.73 0.84 0.54 1.09 1.77.
    assert [round(ratios.by_group["DeepSeek/extended"][m], 2) for m in ("tkc", "ttr", "fre", "xref",
                                                                        "math_engagement")] == [
        1.20, 0.90, 0.35, 0.37, 0.67]
    assert [round(ratios.by_group["GPT-5/extended"][m], 2) for m in ("tkc", "ttr", "fre", "xref")] == [
        2.73, 0.84, 0.54, 1.09]
    # The "Mean ± Std" row over the five models (extended prompt): tokens 1.80 ± 0.63, FRE 0.55 ± 0.25.
    extended = ratios.by_prompt["extended"]
    assert (round(extended["tkc"].mean, 2), round(extended["tkc"].std, 2)) == (1.80, 0.63)
    assert (round(extended["fre"].mean, 2), round(extended["fre"].std, 2)) == (0.55, 0.25)
    assert (round(extended["xref"].mean, 2), round(extended["xref"].std, 2)) == (1.04, 0.76)
    assert extended["tkc"].n == 5


def test_no_reference_no_ratios_and_no_prompts_no_deltas(groups):
    models = [g for g in groups if not g.is_reference]
    assert ratios_to_human(models) is None
    assert prompt_deltas([g for g in models if g.group["prompt"] == "extended"]) == []


# PRAIB Table 29 (weaknesses): each model's mean and SD of recall, precision, density and compaction.
TABLE_29 = {"DeepSeek": ((0.70, 0.30), (0.70, 0.30), (1.70, 1.46), (0.90, 0.74)),
            "Gemma": ((0.77, 0.29), (0.68, 0.30), (1.73, 1.56), (0.65, 0.59)),
            "GPT-5": ((0.93, 0.20), (0.76, 0.24), (2.35, 2.12), (0.56, 0.48)),
            "OpenReviewer": ((0.73, 0.33), (0.68, 0.33), (2.00, 2.04), (1.01, 1.17)),
            "Qwen": ((0.84, 0.26), (0.73, 0.28), (2.18, 2.02), (0.82, 0.77))}


def test_across_models_gives_table_29s_mean_and_std_rows():
    models = []
    for model, cells in TABLE_29.items():
        made = group(model, "extended", TABLE_11[(model, "extended")])
        judged = {f"coverage_{stat}_weaknesses": {"mean": mean, "std": std, "n": 100}
                  for stat, (mean, std) in zip(("recall", "precision", "density", "compaction"), cells)}
        models.append(GroupResult(**{**made.__dict__, "judged": {**made.judged, **judged}}))
    spread = across_models([group("OpenReview", None, TABLE_11[("OpenReview", None)]), *models])
    rows = spread.by_prompt["extended"]
    # The paper's Mean row: 0.79 0.28 | 0.71 0.29 | 1.99 1.84 | 0.79 0.75; its Std row: 0.09 0.05 | 0.03 0.03 |
    # 0.28 0.31 | 0.18 0.26.
    printed = {"recall": (0.79, 0.28, 0.09, 0.05), "precision": (0.71, 0.29, 0.03, 0.03),
               "density": (1.99, 1.84, 0.28, 0.31), "compaction": (0.79, 0.75, 0.18, 0.26)}
    for stat, (mean_mu, mean_sigma, std_mu, std_sigma) in printed.items():
        cell = rows[f"coverage_{stat}_weaknesses"]
        assert (round(cell["mean"].mean, 2), round(cell["std"].mean, 2)) == (mean_mu, mean_sigma), stat
        assert (round(cell["mean"].std, 2), round(cell["std"].std, 2)) == (std_mu, std_sigma), stat
        assert cell["mean"].n == 5
    assert rows["coverage_recall_strengths"]["mean"].n == 0  # the strengths were not given
    assert across_models([group(m, "extended", TABLE_11[(m, "extended")]) for m in TABLE_29]) is None  # no judge
