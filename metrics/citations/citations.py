"""Formatted bibliographic references (MLA, APA, IEEE) in review texts."""

import datasets
import evaluate

from praib import PRAIB_CITATION
from praib.metrics.registry import module_description
from praib.sources.verification import citation_report

_CITATION = PRAIB_CITATION

_DESCRIPTION = module_description("citations")

_KWARGS_DESCRIPTION = """\
Args:
    predictions (`list` of `str`): review texts.
    return_citations (`bool`, default False): also return the extracted references per review.
    verify_services (`str` or `list` of `str`, optional): verify every reference with these
        services, in order ("crossref", "openalex", "dblp").
    bibliography (`str` or `list` of `str`, optional): verify offline against these files
        (DBLP .xml, OpenAlex works .jsonl, BibTeX .bib), before any service.
    contact_email (`str`, optional): contact address sent to the services.
    cache_dir (`str`, optional): directory of the answer cache and the bibliography database.
Returns:
    citations: dict with `mean`, `std`, `n` of formatted references per review.
    styles: number of references found in each style.
    extracted (only with return_citations): per review, a list of
        {style, authors, title, year, text}, plus {verified, service, matched_title, similarity}
        when references are verified.
    verified_citations (only when verifying): `share` of checked references verified per review
        (mean, std, n over reviews with a checked reference), `verified` and `citations` counts
        per review, and totals `n_citations`, `n_verified`, `n_not_verified`, `n_unchecked`.
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

    def _compute(self, predictions, return_citations=False, verify_services=None, bibliography=None,
                 contact_email=None, cache_dir=None):
        return citation_report(predictions, return_citations, verify_services, bibliography, contact_email, cache_dir)
