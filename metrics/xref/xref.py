"""References in reviews to elements of the paper: figures, tables, sections, equations, theorems, ..."""

import datasets
import evaluate

from praib import PRAIB_CITATION
from praib.metrics.registry import module_description
from praib.metrics.text.textstats import xref_summary

_CITATION = PRAIB_CITATION

_DESCRIPTION = module_description("xref")

_KWARGS_DESCRIPTION = """\
Args:
    predictions (`list` of `str`): review texts.
Returns:
    xref: dict with `mean`, `std`, `n` of mentions per review.
    per_100_tokens: dict with `mean`, `std`, `n`.
    per_type: mean mentions per review for each element type.
    paper: mentions per review in PRAIB's categories (datasets and databases; no lines, § or appendices):
        `mean`, `std`, `n`, and `per_type`, the means of the categories that differ (section, dataset, database).
Examples:
    >>> xref = evaluate.load("metrics/xref")
    >>> xref.compute(predictions=["Figure 2 contradicts Eq. (3) and Table 1."])["xref"]["mean"]
    3.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Xref(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string")}),
        )

    def _compute(self, predictions):
        return xref_summary(predictions)
