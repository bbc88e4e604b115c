"""RevUtil's grounding specificity of reviews against their cross-reference count, from the comments' ratings."""

import datasets
import evaluate

from praib import PRAIB_CITATION
from praib.metrics.judged.grounding import grounding_from_scores
from praib.metrics.registry import module_description

_CITATION = PRAIB_CITATION + """\
@inproceedings{sadallah2025revutil,
  title     = {The Good, the Bad and the Constructive: Automatically Measuring Peer Review's Utility for Authors},
  author    = {Sadallah, Abdelrahman and Baumg{\\"a}rtner, Tim and Gurevych, Iryna and Briscoe, Ted},
  booktitle = {Proceedings of the 2025 Conference on Empirical Methods in Natural Language Processing},
  pages     = {28979--29009},
  year      = {2025}
}
"""

_DESCRIPTION = module_description("grounding_specificity")

_KWARGS_DESCRIPTION = """\
Args:
    scores (`list` of `list` of `int`): per review, the 1-5 ratings of its weakness comments (None for a
        comment the judge gave no rating).
    texts (`list` of `str`): per review, its text, whose cross-references are counted.
Returns:
    reviews, reviews_scored, comments, comments_scored, comments_failed: counts.
    score: the per-review mean rating, as {mean, std, n} over the reviews with a rated comment.
    spearman: {"xref", "xref_density"}: {rho, p_value, n}, Spearman's rho of the per-review mean rating with
        the cross-reference count and with its density (per 100 word tokens).
    bins: {"0", "1", "2-5", ">5"}: {mean, n, gain}, the mean rating of the reviews in each bin of the count
        and its gain over bin 0.
Examples:
    >>> grounding = evaluate.load("metrics/grounding_specificity")
    >>> result = grounding.compute(scores=[[1, 3], [4], [5, 5]],
    ...                            texts=["The method is unclear.", "Table 2 lacks error bars.",
    ...                                   "Figure 3 and Table 4 disagree; see Section 5 and Eq. (2)."])
    >>> {name: entry["mean"] for name, entry in result["bins"].items()}
    {'0': 2.0, '1': 4.0, '2-5': 5.0, '>5': None}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class GroundingSpecificity(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "scores": datasets.Sequence(datasets.Value("int8")),
                "texts": datasets.Value("string"),
            }),
        )

    def _compute(self, scores, texts):
        return grounding_from_scores(scores, texts)
