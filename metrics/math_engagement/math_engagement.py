"""Mathematical engagement of reviews: share of engaging reviews per source and the conditional rates P(+|+), P(+|-)."""

import datasets
import evaluate

from praib import PRAIB_CITATION
from praib.metrics.judged.math_engagement import rule_based_engagement
from praib.metrics.registry import module_description

_CITATION = PRAIB_CITATION

_DESCRIPTION = module_description("math_engagement")

_KWARGS_DESCRIPTION = """\
Args:
    predictions (`list` of `str`): review texts (None or blank texts are skipped and counted).
    paper_ids (`list` of `str`): the paper each review belongs to.
    sources (`list` of `str`): who wrote each review ("human" or a model name).
    human_source (`str`, default "human"): the source value of human reviews.
    paper_rule (`str`, default "any"): a paper is human-positive when "any" of its human
        reviews engages, or when a "majority" (more than half) does.
    return_per_review (`bool`, default False): also return each review's label and the rules that matched.
Returns:
    method (`str`): "rules".
    share: per source, `mean` (share of engaging reviews), `std` (ddof=1) and `n`.
    conditional: per non-human source, `p_pos_given_pos`, `p_pos_given_neg` and the review
        and paper counts behind them.
    papers: counts of human-positive, human-negative and human-less papers.
    skipped, skipped_by_source: reviews without a label.
Examples:
    >>> math = evaluate.load("metrics/math_engagement")
    >>> result = math.compute(predictions=["In Eq. (7) the sign is wrong.", "Clear paper.", "Theorem 2 is loose."],
    ...                       paper_ids=["p1", "p1", "p1"], sources=["human", "human", "gpt"])
    >>> result["share"]["human"]["mean"], result["conditional"]["gpt"]["p_pos_given_pos"]
    (0.5, 1.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MathEngagement(evaluate.Metric):
    def _info(self):
        if self.config_name not in ("default", "rules"):
            raise ValueError(
                f"metrics/math_engagement has only the offline 'rules' configuration, not {self.config_name!r}; "
                "for the judged version call praib.metrics.judged.math_engagement.judge_math_engagement and "
                "math_engagement_summary")
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "predictions": datasets.Value("string"),
                "paper_ids": datasets.Value("string"),
                "sources": datasets.Value("string"),
            }),
        )

    def _compute(self, predictions, paper_ids, sources, human_source="human", paper_rule="any",
                 return_per_review=False):
        return rule_based_engagement(predictions, paper_ids, sources, human_source, paper_rule, return_per_review)
