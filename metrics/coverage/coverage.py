"""Coverage of human atomic comments by generated ones, from yes/no judgement matrices."""

import datasets
import evaluate

from praib import PRAIB_CITATION
from praib.metrics.judged.coverage import coverage_from_judgements
from praib.metrics.registry import module_description

_CITATION = PRAIB_CITATION

_DESCRIPTION = module_description("coverage")

_KWARGS_DESCRIPTION = """\
Args:
    human_items (`list` of `int`): H, the number of human items of each review pair.
    generated_items (`list` of `int`): G, the number of generated items of each review pair.
    judgements (`list` of `list` of `int`): the H x G matrix of each review pair flattened row
        by row (human item i, generated item j at position i * G + j), 1 = yes, 0 = no.
    return_per_pair (`bool`, default False): also return the metrics of each review pair.
Returns:
    recall, precision, density, compaction, density_covered, compaction_matched: each a dict
    with `mean`, `std` (ddof=1) and `n`.
Examples:
    >>> coverage = evaluate.load("metrics/coverage")
    >>> result = coverage.compute(human_items=[2], generated_items=[3], judgements=[[1, 1, 0, 0, 0, 0]])
    >>> result["recall"]["mean"], result["precision"]["mean"], result["density"]["mean"]
    (0.5, 0.6666666666666666, 1.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Coverage(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "human_items": datasets.Value("int32"),
                "generated_items": datasets.Value("int32"),
                "judgements": datasets.Sequence(datasets.Value("int8")),
            }),
        )

    def _compute(self, human_items, generated_items, judgements, return_per_pair=False):
        return coverage_from_judgements(human_items, generated_items, judgements, return_per_pair)
