"""Average treatment effect of soundness-critical versus soundness-neutral paper edits on a review difference."""

import datasets
import evaluate

from praib.metrics.perturbation.treatment import treatment_effect
from praib.metrics.registry import module_description

_CITATION = """\
@article{counterfactualreviewlogic2026,
  title   = {Automatic Reviewers Fail to Detect Faulty Reasoning in Research Papers:
             A New Counterfactual Evaluation Framework},
  journal = {Transactions of the Association for Computational Linguistics},
  year    = {2026},
  note    = {Code and data: https://github.com/UKPLab/tacl2026-counter-review-logic}
}
@article{lindstrom1988,
  title   = {Newton-Raphson and {EM} Algorithms for Linear Mixed-Effects Models for Repeated-Measures Data},
  author  = {Lindstrom, Mary J. and Bates, Douglas M.},
  journal = {Journal of the American Statistical Association},
  volume  = {83},
  number  = {404},
  pages   = {1014--1022},
  year    = {1988}
}
"""

_DESCRIPTION = module_description("ate")

_KWARGS_DESCRIPTION = """\
Args:
    differences (`list` of `float`): one review difference per counterfactual; None is missing.
    paper_ids (`list` of `str`): the original paper of each counterfactual (the random effect).
    conditions (`list` of `str`): "soundness-critical" or "soundness-neutral" ("critical"/"neutral" also work).
    expected_direction (`int`, default 1): +1 when a reviewer that notices the flaw raises the difference
        (soundness aspects), -1 when it lowers it (sentiment, score); signs the ranking score.
Returns:
    ate_critical, ate_neutral, effect (critical - neutral), p_value (H0: equal ATEs), mean_critical,
    mean_neutral, std_neutral, n_critical, n_neutral, n_papers, n_missing, converged, ranking_score.
Examples:
    >>> ate = evaluate.load("metrics/ate")
    >>> result = ate.compute(differences=[-2, -3, 0, 1, -2, -1, 0, -1], paper_ids=["a"] * 4 + ["b"] * 4,
    ...                      conditions=["critical", "critical", "neutral", "neutral"] * 2, expected_direction=-1)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Ate(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"differences": datasets.Value("float64"),
                                        "paper_ids": datasets.Value("string"),
                                        "conditions": datasets.Value("string")}),
        )

    def _compute(self, differences, paper_ids, conditions, expected_direction=1):
        return treatment_effect(differences, paper_ids, conditions, expected_direction)
