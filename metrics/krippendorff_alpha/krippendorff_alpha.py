"""Krippendorff's ordinal alpha of review ratings, per venue-year and averaged per venue."""

import datasets
import evaluate

from praib import PRAIB_CITATION
from praib.metrics.registry import module_description
from praib.metrics.scores.agreement import agreement_by_source, ordinal_alpha

_CITATION = PRAIB_CITATION + """\
@misc{krippendorff2011,
  title  = {Computing Krippendorff's Alpha-Reliability},
  author = {Krippendorff, Klaus},
  year   = {2011}
}
"""

_DESCRIPTION = module_description("krippendorff_alpha")

_KWARGS_DESCRIPTION = """\
Two configurations:
    evaluate.load("metrics/krippendorff_alpha")          paper_ids, ratings -> {"alpha": float or None}
    evaluate.load("metrics/krippendorff_alpha", "panel") paper_ids, ratings, sources, venues, year_groups ->
        {"human": {venue: {"alpha", "per_year", ...}},
         "<source>": {venue: {"alpha_human", "alpha_with_model", "delta", "per_year", ...}}}
Args:
    paper_ids (`list` of `str`): the paper each rating is about (the unit).
    ratings (`list` of `float`): the ratings; None is missing.
    sources (`list` of `str`, panel): who gave the rating ("human" or a model name).
    venues (`list` of `str`, panel): venue of each paper.
    year_groups (`list` of `str`, panel): year (or year group such as "<=2018").
    human_source (`str`, default "human", panel): the source of the human panel.
Examples:
    >>> kripp = evaluate.load("metrics/krippendorff_alpha")
    >>> kripp.compute(paper_ids=["a", "a", "b", "b"], ratings=[1, 1, 3, 3])["alpha"]
    1.0
"""


_SIMPLE_FEATURES = {"paper_ids": datasets.Value("string"), "ratings": datasets.Value("float64")}
_PANEL_FEATURES = {
    **_SIMPLE_FEATURES,
    "sources": datasets.Value("string"),
    "venues": datasets.Value("string"),
    "year_groups": datasets.Value("string"),
}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class KrippendorffAlpha(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(_PANEL_FEATURES if self.config_name == "panel" else _SIMPLE_FEATURES),
        )

    def _compute(self, paper_ids, ratings, sources=None, venues=None, year_groups=None, human_source="human"):
        if self.config_name == "panel":
            return agreement_by_source(paper_ids, ratings, sources, venues, year_groups, human_source)
        return {"alpha": ordinal_alpha(paper_ids, ratings)}
