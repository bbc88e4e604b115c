"""Readability of review texts: token count, type-token ratio, Flesch Reading Ease, Flesch-Kincaid grade."""

import datasets
import evaluate

from praib import PRAIB_CITATION
from praib.metrics.registry import module_description
from praib.metrics.text.textstats import readability_summary

_CITATION = PRAIB_CITATION + """\
@article{flesch1948,
  title   = {A new readability yardstick},
  author  = {Flesch, Rudolph},
  journal = {Journal of Applied Psychology},
  volume  = {32}, number = {3}, pages = {221}, year = {1948}
}
@techreport{kincaid1975,
  title       = {Derivation of New Readability Formulas for Navy Enlisted Personnel},
  author      = {Kincaid, J. Peter and Fishburne, Robert P. and Rogers, Richard L. and Chissom, Brad S.},
  institution = {Naval Technical Training Command}, year = {1975}
}
"""

_DESCRIPTION = module_description("readability")

_KWARGS_DESCRIPTION = """\
Args:
    predictions (`list` of `str`): review texts (None or empty texts are skipped).
    return_per_review (`bool`, default False): also return the per-review scores.
Returns:
    tkc, ttr, fre, fkg: each a dict with `mean`, `std` (ddof=1) and `n`.
    skipped (`int`): texts without any word.
Examples:
    >>> readability = evaluate.load("metrics/readability")
    >>> result = readability.compute(predictions=["The method is sound. The results are weak."])
    >>> result["tkc"]["mean"]
    8.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Readability(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string")}),
            reference_urls=["https://en.wikipedia.org/wiki/Flesch%E2%80%93Kincaid_readability_tests"],
        )

    def _compute(self, predictions, return_per_review=False):
        return readability_summary(predictions, return_per_review)
