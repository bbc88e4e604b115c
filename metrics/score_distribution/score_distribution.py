"""Rating or confidence distributions of each review source against the human distribution."""

import datasets
import evaluate

from praib import PRAIB_CITATION
from praib.metrics.registry import module_description
from praib.metrics.scores.distributions import distributions_by_source

_CITATION = PRAIB_CITATION

_DESCRIPTION = module_description("score_distribution")

_KWARGS_DESCRIPTION = """\
Args:
    scores (`list` of `int`): one score per review; None is missing.
    sources (`list` of `str`): "human" or the model that wrote the review.
    paper_ids (`list` of `str`): the paper each review is about.
    scale_values (`list` of `int`, optional): the scale's values (default: the observed values).
    human_source (`str`, default "human").
Returns:
    {"human": {"distribution": {...}}, "<source>": {"model", "human", "diff_pp", "sum_abs_diff_pp",
     "total_variation", "gap_to_human_median": {"mean", "std", "n", ...}}}
Examples:
    >>> dist = evaluate.load("metrics/score_distribution")
    >>> out = dist.compute(scores=[4, 3, 5, 5], sources=["human", "human", "m", "m"], paper_ids=["a", "a", "a", "a"])
    >>> out["m"]["gap_to_human_median"]["mean"]
    1.5
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ScoreDistribution(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "scores": datasets.Value("int32"),
                "sources": datasets.Value("string"),
                "paper_ids": datasets.Value("string"),
            }),
        )

    def _compute(self, scores, sources, paper_ids, scale_values=None, human_source="human"):
        return distributions_by_source(scores, sources, paper_ids, scale_values, human_source)
