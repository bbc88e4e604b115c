"""The verbs of ``import praib``: the pipeline's library functions with paths accepted wherever records go.

Each verb loads a path (JSONL, JSON, Parquet, a saved dataset, a Hub id) with
:func:`praib.records.load_records` and otherwise passes its arguments on unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence, Union

if TYPE_CHECKING:
    from datasets import Dataset

    from praib.evaluation.results import EvaluationResult
    from praib.generation.prompts import Prompt
    from praib.metrics.perturbation.robustness import RobustnessReport

RecordsLike = Union[str, Path, "Dataset"]


def _records(source: RecordsLike, kind: str) -> "Dataset":
    from praib.records import load_records

    return load_records(source, kind) if isinstance(source, (str, Path)) else source


def load_papers(source: str | Path, *, venue: str | None = None, year: int | None = None, split: str = "train"
                ) -> "Dataset":
    """Papers from any input praib takes: what :func:`praib.generation.papers.load_papers` reads (a .md or .txt
    paper, a folder of them, paper records), and PDFs, a .pdf file or the .pdf files of a folder, converted
    from their text layer as `praib data pdf` converts them (use that command for OCR)."""
    from praib.generation.papers import load_papers as load_text_papers

    path = Path(source)
    pdfs = ([path] if path.is_file() and path.suffix.lower() == ".pdf"
            else sorted(p for p in path.glob("*") if p.suffix.lower() == ".pdf") if path.is_dir() else [])
    if not pdfs:
        return load_text_papers(source, venue=venue, year=year, split=split)
    from datasets import concatenate_datasets

    from praib.records import records_to_dataset
    from praib.sources.papertext import convert_pdfs

    papers = records_to_dataset([c.record for c in convert_pdfs(pdfs, venue=venue, year=year)], "paper")
    if path.is_dir() and any(p.suffix.lower() in (".md", ".txt") for p in path.iterdir()):
        papers = concatenate_datasets([load_text_papers(path, venue=venue, year=year), papers])
    return papers


def evaluate(reviews: RecordsLike, reference: RecordsLike | None = None, *,
             meta_reviews: RecordsLike | None = None, **options: Any) -> "EvaluationResult":
    """The behavioural profile of every group of ``reviews`` against the human ``reference``.

    ``reviews``, ``reference`` and ``meta_reviews`` are record files (or Hub ids) or Datasets;
    ``options`` are those of :func:`praib.evaluation.evaluate.evaluate_reviews` (``group_by``,
    ``scale``, ``judge``, ...), whose typed result this returns (``to_dict()`` gives the JSON of
    ``praib evaluate --output``).
    """
    from praib.evaluation.evaluate import evaluate_reviews

    return evaluate_reviews(_records(reviews, "review"),
                            None if reference is None else _records(reference, "review"),
                            meta_reviews=None if meta_reviews is None else _records(meta_reviews, "meta_review"),
                            **options)


def generate(papers: RecordsLike, backend: Any, prompt: "str | Path | Prompt", *, venue: str | None = None,
             year: int | None = None, output: str | Path | None = None, **options: Any) -> "Dataset":
    """Review every paper with ``backend`` (see :func:`praib.make_backend`) and ``prompt``; return Review records.

    ``papers`` is anything :func:`load_papers` reads (a paper or a folder of .md/.txt/.pdf papers, a papers
    file, a Hub id) or a Dataset; ``prompt`` a built-in prompt
    name, a template path or a loaded prompt. Without ``venue``/``year`` each paper's own are
    used; with ``output`` the records are also written there. ``options`` (``sampling``,
    ``token_budget``, ``batch_size``, ...) and the result are those of
    :func:`praib.generation.run.generate_reviews`; :func:`praib.generation.run.run_generation`
    also returns the run's summary.
    """
    from praib.generation.prompts import load_prompt
    from praib.generation.run import generate_reviews

    if isinstance(papers, (str, Path)):
        papers = load_papers(papers)
    if isinstance(prompt, (str, Path)):
        prompt = load_prompt(prompt)
    return generate_reviews(papers, backend, prompt, venue=venue, year=year, output=output, **options)


def perturb_records(records: RecordsLike, kind: str, *, seed: int = 0, judge: Any = None,
                    **options: Any) -> "Dataset":
    """``records`` with the perturbation ``kind`` applied to each (:func:`praib.perturb.registry.apply_perturbation`).

    Named ``perturb_records`` rather than ``perturb`` because ``praib.perturb`` is the package of
    perturbations itself: a function of that name would be replaced by the package as soon as
    anything imports one of its modules. ``records`` is a file of the records the kind edits
    (papers, reviews or rebuttals: see :func:`praib.perturb.registry.list_perturbations`) or a
    Dataset; LLM-driven kinds need a ``judge`` (:func:`praib.make_judge`).
    """
    from praib.perturb.registry import apply_perturbation, get_perturbation

    if isinstance(records, (str, Path)):
        records = _records(records, get_perturbation(kind).component)
    return apply_perturbation(kind, records, seed=seed, judge=judge, **options)


def robustness(original: RecordsLike, perturbed: RecordsLike | Sequence[RecordsLike], *, kind: str = "review",
               alpha: float = 0.05, margins: dict[str, float] | None = None) -> "RobustnessReport":
    """How every score moved from ``original`` to ``perturbed`` records (:func:`praib.metrics.perturbation.robustness.robustness_report`;
    ``to_dict()`` gives the JSON ``praib robustness`` writes).

    ``original`` and ``perturbed`` (one or several sets of variants) are record files or
    Datasets of ``kind`` ``"review"`` or ``"meta_review"``; reviews are first parsed as
    ``praib robustness`` parses them, so that scores written only in the text count.
    """
    from datasets import concatenate_datasets

    from praib.metrics.perturbation.robustness import robustness_report
    from praib.parsing import parse_reviews

    variants = perturbed if isinstance(perturbed, (list, tuple)) else [perturbed]
    before = _records(original, kind)
    after = concatenate_datasets([_records(source, kind) for source in variants])
    if kind == "review":
        before, after = parse_reviews(before), parse_reviews(after)
    return robustness_report(before, after, kind=kind, alpha=alpha, margins=margins)
