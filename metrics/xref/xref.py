"""References in reviews to elements of the paper: figures, tables, sections, equations, theorems, ..."""

import datasets
import evaluate

from praib import PRAIB_CITATION
from praib.metrics.text.textstats import xref_summary

_CITATION = PRAIB_CITATION

_DESCRIPTION = """\
Cross-references (Xref., PRAIB section 4.2 and Appendix C.1): mentions of numbered paper
elements in a review, a proxy for how specifically it engages with the manuscript.
Element types: figure, table, section (incl. subsection, appendix), equation, theorem,
lemma, corollary, definition, page, line. A range or list ("Figures 2 and 3", "L180-L182")
is one mention. Reported per review: total, per type, and per 100 word tokens.
"""

_KWARGS_DESCRIPTION = """\
Args:
    predictions (`list` of `str`): review texts.
Returns:
    xref: dict with `mean`, `std`, `n` of mentions per review.
    per_100_tokens: dict with `mean`, `std`, `n`.
    per_type: mean mentions per review for each element type.
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
