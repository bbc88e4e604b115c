"""Directional (Wilcoxon signed-rank) and invariance (TOST) tests of paired scores before and after a perturbation."""

import datasets
import evaluate

from praib.metrics.perturbation.stats import perturbation_verdict
from praib.metrics.registry import module_description

_CITATION = """\
@article{li2025aspectguided,
  title   = {Aspect-Guided Multi-Level Perturbation Analysis of Large Language Models in Automated Peer Review},
  author  = {Li, Jiatao and Li, Yanheng and Hu, Xinyu and Gao, Mingqi and Wan, Xiaojun},
  journal = {arXiv preprint arXiv:2502.12510},
  year    = {2025}
}
@article{wilcoxon1945,
  title   = {Individual Comparisons by Ranking Methods},
  author  = {Wilcoxon, Frank},
  journal = {Biometrics Bulletin},
  volume  = {1},
  number  = {6},
  pages   = {80--83},
  year    = {1945}
}
@article{lakens2017,
  title   = {Equivalence Tests: A Practical Primer for t Tests, Correlations, and Meta-Analyses},
  author  = {Lakens, Dani{\\"e}l},
  journal = {Social Psychological and Personality Science},
  volume  = {8},
  year    = {2017}
}
"""

_DESCRIPTION = module_description("perturbation_tests")

_KWARGS_DESCRIPTION = """\
Args:
    original (`list` of `float`): the score of each paper's output before the perturbation.
    perturbed (`list` of `float`): the score after it, in the same order. None is missing.
    margin (`float`, optional): the equivalence margin. Default: from `scale`, else 0.5 for scores
        spanning less than 5 points and 1.0 otherwise, judged from the observed values.
    scale (`list` of `float`, optional): the score's possible values, to choose the margin.
    alpha (`float`, default 0.05): the significance level of every test.
Returns:
    verdict, n, n_missing, mean_original, mean_perturbed, mean_difference, p_increase, p_decrease,
    p_equivalence, n_nonzero, margin, alpha.
Examples:
    >>> tests = evaluate.load("metrics/perturbation_tests")
    >>> tests.compute(original=[4, 4, 3, 4, 3, 4, 4, 3], perturbed=[2, 2, 1, 2, 1, 1, 2, 1], margin=0.5)["verdict"]
    'decrease'
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class PerturbationTests(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"original": datasets.Value("float64"),
                                        "perturbed": datasets.Value("float64")}),
        )

    def _compute(self, original, perturbed, margin=None, scale=None, alpha=0.05):
        return perturbation_verdict(original, perturbed, margin, scale, alpha)
