"""Formatted bibliographic references (MLA, APA, IEEE) in review texts."""

import datasets
import evaluate

from praib import PRAIB_CITATION
from praib.citations import find_citations
from praib.stats import summarise

_CITATION = PRAIB_CITATION

_DESCRIPTION = """\
Citations (Cit., PRAIB section 4.2 and Appendix C.2): references in a review written in
MLA, APA or IEEE style, with authors, title and year extracted so that they can be checked
against bibliographic databases. A bare "Smith et al. (2020)" has no title and is not counted.
"""

_KWARGS_DESCRIPTION = """\
Args:
    predictions (`list` of `str`): review texts.
    return_citations (`bool`, default False): also return the extracted references per review.
Returns:
    citations: dict with `mean`, `std`, `n` of formatted references per review.
    styles: number of references found in each style.
    extracted (only with return_citations): per review, a list of
        {style, authors, title, year, text}.
Examples:
    >>> citations = evaluate.load("metrics/citations")
    >>> text = 'See Vaswani, A., & Shazeer, N. (2017). Attention is all you need. NeurIPS.'
    >>> citations.compute(predictions=[text])["citations"]["mean"]
    1.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Citations(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string")}),
        )

    def _compute(self, predictions, return_citations=False):
        found = [find_citations(text) if text else [] for text in predictions]
        styles = {}
        for citations in found:
            for citation in citations:
                styles[citation.style] = styles.get(citation.style, 0) + 1
        result = {"citations": summarise(len(c) for c in found), "styles": styles}
        if return_citations:
            result["extracted"] = [[{"style": c.style, "authors": list(c.authors), "title": c.title,
                                     "year": c.year, "text": c.text} for c in citations] for citations in found]
        return result
