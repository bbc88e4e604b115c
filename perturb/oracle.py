"""The oracle reviewer: the review an ideal reviewer would give each counterfactual paper.

It validates the counterfactual pipeline (counterfactual-review-logic, "Oracle Ablation"): the
oracle takes the reviews of the original papers and, for each variant of a paper,

* restates each review: a paraphrase through the LLM, or - without a judge - the original wording
  unchanged (the sections always keep the original wording);
* for a soundness-critical variant, adds a comment on the planted issue (``oracle_comment.jinja``,
  rendered from the variant's ``perturbation``) to the text and the weaknesses, and lowers the
  rating by one or two steps of the venue-year's rating scale (drawn from ``seed``, the paper, the
  review and the edit, so reruns agree; a rating at the bottom of the scale stays there);
* for a soundness-neutral variant, keeps the rating.

The oracle's review of an original paper is the original review itself, so that each variant's
oracle review pairs with an oracle review of its original (same ``paper_id``, source ``oracle`` and
``reviewer_id``: the original's reviewer id, else its review id).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from praib.perturb.logic import TEMPLATES
from praib.records import CRITICAL
from praib.records.ids import hash_id, reviewer_label

ORACLE_SOURCE = "oracle"
MAX_STEPS_DOWN = 2


def lower_rating(rating: int | None, scale_values: tuple[int, ...], steps: int) -> int | None:
    """``rating`` moved ``steps`` values down ``scale_values`` (the lowest value is a floor).
    A rating between two scale values moves from the highest value below it."""
    if rating is None:
        return None
    values = sorted(scale_values)
    below = [i for i, v in enumerate(values) if v <= rating]
    if not below:
        return rating
    return values[max(below[-1] - steps, 0)]


def steps_down(seed: int, paper_id: str, review_id: str, kind: str, max_steps: int = MAX_STEPS_DOWN) -> int:
    """How many scale steps the oracle lowers one review: 1..max_steps, fixed by its inputs."""
    digest = hashlib.sha256(f"{seed}\x1f{paper_id}\x1f{review_id}\x1f{kind}".encode()).digest()
    return 1 + int.from_bytes(digest[:8], "big") % max_steps


def _review_id(original_id: str, perturbation: dict | None) -> str:
    key = f"{original_id}\x1f{(perturbation or {}).get('kind')}\x1f{(perturbation or {}).get('description')}"
    return hash_id(key)


def _oracle_reviewer(review: dict) -> str | None:
    # Every oracle review has source and model "oracle", so the reviewer id is what keeps the restatements
    # of different reviews of one paper apart (model reviews carry no reviewer_id: use the review's id).
    return review.get("reviewer_id") or review.get("review_id") or reviewer_label(review)


def oracle_reviews(reviews: Any, variants: Any, *, judge: Any = None, seed: int = 0,
                   max_steps: int = MAX_STEPS_DOWN, templates: str | Path | None = None,
                   progress: bool = True) -> Any:
    """Oracle Review records (REVIEW_FEATURES, source ``oracle``) for the originals and every variant.

    ``reviews``: reviews of the original papers (records with a ``perturbation`` are ignored);
    ``variants``: counterfactual papers (PAPER_FEATURES with ``perturbation``). A variant whose paper
    has no review is skipped with a note on stderr.
    """
    from praib.parsing import parse_reviews
    from praib.records import coerce_record, records_to_dataset
    from praib.scales import venue_scales

    from praib.perturb.reviews import rewrite_score_lines

    # Parsed first: a model review's rating is in its text, and the oracle changes the fields.
    originals = [r for r in parse_reviews(reviews).to_list() if r.get("perturbation") is None]
    by_paper: dict[str, list[dict]] = {}
    for review in originals:
        by_paper.setdefault(review["paper_id"], []).append(review)
    variant_rows = [v for v in variants.to_list() if v.get("perturbation") is not None]
    if not variant_rows:
        raise ValueError(f"none of the {len(variants)} variant papers carries a perturbation: give the variants "
                         "`praib counterfactual build` wrote")
    missing = sorted({v["paper_id"] for v in variant_rows} - set(by_paper))
    if len(missing) == len({v["paper_id"] for v in variant_rows}):
        raise ValueError(f"no review is of a variant's paper (variant papers: {', '.join(missing[:5])}"
                         f"{', ...' if len(missing) > 5 else ''})")
    if missing:
        print(f"oracle: no reviews of {len(missing)} variant paper(s), skipped: {', '.join(missing[:5])}",
              file=sys.stderr)
    reviewed = [r for r in originals if any(v["paper_id"] == r["paper_id"] for v in variant_rows)]

    paraphrases: dict[str, str] = {}
    if judge is not None and reviewed:
        answers = judge.text(TEMPLATES.path("oracle_paraphrase", templates),
                             [{"review": r["text"] or ""} for r in reviewed], label="oracle:paraphrase",
                             progress=progress, ids=[str(r["review_id"]) for r in reviewed])
        paraphrases = {r["review_id"]: answer.value.strip() for r, answer in zip(reviewed, answers) if answer.ok}
        # A review the judge could not paraphrase (recorded in its failure log) gets no oracle reviews:
        # its variants would otherwise mix paraphrased and verbatim text.
        reviewed = [r for r in reviewed if r["review_id"] in paraphrases]
        kept = {r["review_id"] for r in reviewed}
        by_paper = {paper: [r for r in rows if r["review_id"] in kept] for paper, rows in by_paper.items()}

    comment_template = TEMPLATES.path("oracle_comment", templates)
    rows = []
    for review in reviewed:
        rows.append({**review, "source": ORACLE_SOURCE, "model": ORACLE_SOURCE, "prompt": None,
                     "reviewer_id": _oracle_reviewer(review),
                     "review_id": _review_id(review["review_id"], None), "generation": None})
    scales_of: dict[tuple, Any] = {}
    for variant in variant_rows:
        perturbation = variant["perturbation"]
        for review in by_paper.get(variant["paper_id"], []):
            text = paraphrases.get(review["review_id"], review["text"])
            rating, weaknesses = review["rating"], review["weaknesses"]
            if perturbation["category"] == CRITICAL:
                comment = TEMPLATES.render(comment_template, perturbation=perturbation).strip()
                text = f"{text.rstrip()}\n\n{comment}" if text and text.strip() else comment
                weaknesses = f"{weaknesses.rstrip()}\n- {comment}" if weaknesses else f"- {comment}"
                if rating is not None:
                    context = (review["venue"], review["year"])
                    if context not in scales_of:
                        try:
                            scales_of[context] = venue_scales(*context).rating
                        except (LookupError, ValueError) as err:
                            raise ValueError(f"review {review['review_id']} of paper {review['paper_id']}: "
                                             f"cannot lower its rating: {err}") from None
                    lowered = lower_rating(rating, scales_of[context].values, steps_down(
                        seed, review["paper_id"], review["review_id"], perturbation["kind"], max_steps))
                    text, _ = rewrite_score_lines(text, rating, lowered, scales_of[context])
                    rating = lowered
            rows.append({**review, "source": ORACLE_SOURCE, "model": ORACLE_SOURCE, "prompt": None,
                         "reviewer_id": _oracle_reviewer(review),
                         "review_id": _review_id(review["review_id"], perturbation), "text": text,
                         "weaknesses": weaknesses, "rating": rating, "generation": None,
                         "perturbation": perturbation})
    return records_to_dataset([coerce_record(r, "review", f"oracle review {r['review_id']}") for r in rows],
                              "review")
