"""Model-expert agreement on the (target, aspect) labels of strengths and weaknesses."""

import datasets
import evaluate

from praib import PRAIB_CITATION
from praib.metrics.judged.target_aspect import item_label_agreement
from praib.metrics.registry import module_description

_CITATION = PRAIB_CITATION + """\
@misc{target_aspect_agreement,
  title  = {Automatically Evaluating the Paper Reviewing Capability of Large Language Models},
  author = {Anonymous},
  note   = {Anonymous ACL submission}
}
"""

_DESCRIPTION = module_description("target_aspect")

_KWARGS_DESCRIPTION = """\
Args:
    paper_ids (`list` of `str`): the paper of each labelled item.
    kinds (`list` of `str`): "strength" or "weakness".
    sides (`list` of `str`): "model" or "expert".
    targets (`list` of `str`): the item's target (None: unlabelled, ignored).
    aspects (`list` of `str`): the item's aspect (None: unlabelled, ignored).
Returns:
    target_aspect_f1 (`float`): the overall F1 (2PR/(P+R) of the precision and recall summed over papers).
    overall, by_kind: {"precision", "recall", "f1", "n_papers", "per_paper_mean": {p|r|f1: {mean, std, n}}}.
    by_kind_target, by_kind_aspect: {"precision", "recall", "f1", "n_papers"} of the presence of each label.
    by_target, by_aspect: {"precision", "recall", "f1"}, the mean of the strength and weakness cells.
    distribution: {"model"|"expert": {"targets": shares, "aspects": shares, "n", "unlabelled"}}.
Examples:
    >>> ta = evaluate.load("metrics/target_aspect")
    >>> r = ta.compute(paper_ids=["p", "p", "p"], kinds=["weakness"] * 3, sides=["model", "model", "expert"],
    ...                targets=["Method", "Experiment", "Method"], aspects=["Validity", "Validity", "Validity"])
    >>> round(r["target_aspect_f1"], 4)
    0.6667
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TargetAspect(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "paper_ids": datasets.Value("string"),
                "kinds": datasets.Value("string"),
                "sides": datasets.Value("string"),
                "targets": datasets.Value("string"),
                "aspects": datasets.Value("string"),
            }),
        )

    def _compute(self, paper_ids, kinds, sides, targets, aspects):
        return item_label_agreement(paper_ids, kinds, sides, targets, aspects)
