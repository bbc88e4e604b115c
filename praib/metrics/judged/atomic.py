"""Atomic strengths and weaknesses: extraction by a judge, extraction fidelity, counts and overlap.

PRAIB (section 8, Appendix I) splits the strengths and weaknesses of every review into
*atomic* comments: one or more sentences copied from the review that carry one
self-contained piece of information. A judge model does the splitting, with its
answer constrained to the JSON schema ``{"strengths": [str], "weaknesses": [str]}``.
There are two extraction regimes, each with its own judge template:

* ``"generated"`` (``atomic_generated.jinja``): model reviews with explicit Strengths /
  Weaknesses sections and bullet points; units are copied verbatim, one logical argument
  per entry.
* ``"human"`` (``atomic_human.jinja``): free-form human reviews, where strengths and
  weaknesses interleave, even inside one sentence; a claim stays with its reasoning,
  contrastive sentences are split and each clause goes to its own list, ambiguous
  polarity goes to the weaknesses, and only filler openers may be trimmed.

Definitions used here (all tokens are those of the ``rouge-score`` tokenizer: lower-cased
runs of ``[a-z0-9]``, no stemming):

* **Extraction fidelity** of a unit: ROUGE-L *precision* of the unit (as the prediction)
  against the whole source review (as the reference), i.e. the share of the unit's tokens
  that lie on a longest common subsequence with the source. A verbatim unit scores 1.0.
  Precision, not F-measure: a unit is a small part of its review, so recall and F against
  the whole review measure the unit's length, not whether it was copied literally (the
  seed's 0.96-1.00 are only reachable with precision).
* **Intra-review overlap** of one review's items (strengths and weaknesses separately;
  reviews with fewer than two items have none):
  ``rouge_l``: mean over unordered item pairs of the ROUGE-L F-measure (symmetric);
  ``jaccard``: mean over unordered item pairs of ``|A & B| / |A | B|`` of the token sets;
  ``containment``: the fraction of items ``i`` for which some other item ``j`` of the same
  review has ``|T_i & T_j| / |T_i| >= threshold`` (token sets; default threshold 1.0: every
  token of ``i`` appears in ``j``).
* **Weakness-to-strength ratio**: weaknesses / strengths per review, over the reviews with
  at least one strength (as in the seed's Table 27).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from praib.metrics.scores.distributions import decision_class
from praib.metrics.summary import describe, summarise

__all__ = [
    "ATOMIC_SCHEMA", "AtomicItems", "extract_atomic", "parse_atomic", "extraction_fidelity",
    "atomic_statistics", "intra_review_overlap", "overlap_summary", "paired_with_human", "tokens",
]

#: The JSON schema the extraction judge's answer is constrained to.
#: Items and their length are bounded so that a grammar-constrained answer always closes.
ATOMIC_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "strengths": {"type": "array", "items": {"type": "string", "maxLength": 400}, "maxItems": 25},
        "weaknesses": {"type": "array", "items": {"type": "string", "maxLength": 400}, "maxItems": 25},
    },
    "required": ["strengths", "weaknesses"],
    "additionalProperties": False,
}

TEMPLATES = {"generated": "atomic_generated", "human": "atomic_human"}


@dataclass
class AtomicItems:
    """The atomic strengths and weaknesses of one review; ``valid`` is False when the judge's
    answer could not be read (both lists are then empty and the review is left out of the
    statistics)."""

    strengths: list[str] = field(default_factory=list)
    weaknesses: list[str] = field(default_factory=list)
    valid: bool = True
    error: str | None = None  # why the answer could not be read
    raw: str | None = None    # what the judge said then

    def side(self, kind: str) -> list[str]:
        """``"strengths"`` or ``"weaknesses"``."""
        if kind not in ("strengths", "weaknesses"):
            raise ValueError(f"kind must be 'strengths' or 'weaknesses', not {kind!r}")
        return self.strengths if kind == "strengths" else self.weaknesses


def parse_atomic(answer: Any) -> AtomicItems:
    """An :class:`AtomicItems` from a decoded judge answer: a dict with list-of-string
    ``strengths`` and ``weaknesses`` (blank entries are dropped); anything else is invalid."""
    try:
        return _read_atomic(answer)
    except ValueError as err:
        return AtomicItems(valid=False, error=str(err))


def _read_atomic(answer: Any) -> AtomicItems:
    if not isinstance(answer, dict):
        raise ValueError(f"expected a JSON object with strengths and weaknesses, got {type(answer).__name__}")
    sides = []
    for key in ("strengths", "weaknesses"):
        value = answer.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{key!r} is {type(value).__name__ if value is not None else 'missing'}, "
                             "not a list of strings")
        sides.append([v.strip() for v in value if v.strip()])
    return AtomicItems(strengths=sides[0], weaknesses=sides[1], valid=True)


def extract_atomic(texts: Sequence[str], judge, regime: str, template: str | Path | None = None,
                   progress: bool = False, ids: Sequence[str] | None = None) -> list[AtomicItems]:
    """Atomic strengths and weaknesses of each review text, one judge call per text.

    ``regime`` is ``"generated"`` or ``"human"`` (which built-in template to use; ``template``
    overrides it with a ``.jinja`` path taking the variable ``review``). A failed call or an answer
    that is not JSON of the right shape gives ``AtomicItems(valid=False)`` with the reason in
    ``error`` (and a failure record named by ``ids``); count them with ``sum(not i.valid for i in items)``.
    """
    if regime not in TEMPLATES:
        raise ValueError(f"regime must be one of {sorted(TEMPLATES)}, not {regime!r}")
    answers = judge.json(template or TEMPLATES[regime], [{"review": text or ""} for text in texts],
                         ATOMIC_SCHEMA, progress=progress, parse=_read_atomic,
                         ids=[f"{i}/atomic" for i in ids] if ids is not None else None)
    return [answer.value if answer.ok else AtomicItems(valid=False, error=answer.reason, raw=answer.raw)
            for answer in answers]


# --- lexical helpers -------------------------------------------------------------------------

_SCORER = None


def _scorer():
    global _SCORER
    if _SCORER is None:
        from rouge_score import rouge_scorer

        _SCORER = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    return _SCORER


def tokens(text: str) -> list[str]:
    """The rouge-score tokens of ``text`` (lower-cased alphanumeric runs)."""
    from rouge_score import tokenize

    return tokenize.tokenize(text or "", None)


def extraction_fidelity(items: AtomicItems | Sequence[str], source_text: str) -> list[float]:
    """ROUGE-L precision of each unit against ``source_text`` (1.0 for a verbatim copy).

    ``items`` is an :class:`AtomicItems` (strengths then weaknesses) or a list of units.
    Units without any token are skipped.
    """
    units = items.strengths + items.weaknesses if isinstance(items, AtomicItems) else list(items)
    scorer = _scorer()
    return [scorer.score(source_text or "", unit)["rougeL"].precision for unit in units if tokens(unit)]


def intra_review_overlap(items: Sequence[str], containment_threshold: float = 1.0) -> dict[str, float | None]:
    """Mean pairwise ROUGE-L F, containment and mean pairwise Jaccard of one review's items
    (see the module docstring); all None when there are fewer than two items with tokens."""
    units = [u for u in items if tokens(u)]
    if len(units) < 2:
        return {"rouge_l": None, "containment": None, "jaccard": None}
    scorer = _scorer()
    sets = [set(tokens(u)) for u in units]
    rouge, jaccard = [], []
    for i, j in itertools.combinations(range(len(units)), 2):
        rouge.append(scorer.score(units[i], units[j])["rougeL"].fmeasure)
        jaccard.append(len(sets[i] & sets[j]) / len(sets[i] | sets[j]))
    contained = [
        any(len(sets[i] & sets[j]) / len(sets[i]) >= containment_threshold for j in range(len(units)) if j != i)
        for i in range(len(units))
    ]
    return {"rouge_l": float(np.mean(rouge)), "containment": float(np.mean(contained)),
            "jaccard": float(np.mean(jaccard))}


def overlap_summary(reviews: Sequence[AtomicItems], containment_threshold: float = 1.0) -> dict:
    """:func:`intra_review_overlap` per review, summarised (mean, std, n) for strengths and
    weaknesses separately over the valid reviews that have at least two items."""
    out = {}
    for kind in ("strengths", "weaknesses"):
        per_review = [intra_review_overlap(r.side(kind), containment_threshold) for r in reviews if r.valid]
        out[kind] = {key: summarise(o[key] for o in per_review) for key in ("rouge_l", "containment", "jaccard")}
    return out


# --- counts and lengths ----------------------------------------------------------------------

def _stats(reviews: Sequence[AtomicItems]) -> dict:
    s_count = [len(r.strengths) for r in reviews]
    w_count = [len(r.weaknesses) for r in reviews]
    s_chars = [sum(len(u) for u in r.strengths) for r in reviews]
    w_chars = [sum(len(u) for u in r.weaknesses) for r in reviews]
    return {
        "n_reviews": len(reviews),
        "strength_count": describe(s_count),
        "weakness_count": describe(w_count),
        "total_count": describe(s + w for s, w in zip(s_count, w_count)),
        "strength_chars": describe(s_chars),
        "weakness_chars": describe(w_chars),
        "total_chars": describe(s + w for s, w in zip(s_chars, w_chars)),
        "ws_ratio": describe(w / s for w, s in zip(w_count, s_count) if s > 0),
    }


def atomic_statistics(reviews: Sequence[AtomicItems], decisions: Sequence[str | None] | None = None,
                      venues: Sequence[str | None] | None = None) -> dict:
    """Counts and character lengths of atomic items per review, overall, by decision and by venue.

    Per review: number of strengths, weaknesses and both; total characters of the strength
    items, of the weakness items and of both; each described as mean, std (ddof=1), n, minimum,
    quartiles and maximum (:func:`praib.metrics.summary.describe`, PRAIB Table 21).
    ``ws_ratio`` is weaknesses / strengths over reviews with at least one strength (Table 27).
    ``decisions`` (the paper decision of each review, free text) adds
    ``"accept"`` and ``"reject"`` blocks via :func:`praib.metrics.scores.distributions.decision_class`;
    ``venues`` adds a ``"by_venue"`` block (Table 22). Invalid extractions are left out and counted in
    ``invalid``.
    """
    for name, given in (("decisions", decisions), ("venues", venues)):
        if given is not None and len(given) != len(reviews):
            raise ValueError(f"{name} must be parallel to reviews")
    valid = [r for r in reviews if r.valid]
    result = {"all": _stats(valid), "invalid": len(reviews) - len(valid)}
    if decisions is not None:
        for label in ("accept", "reject"):
            result[label] = _stats([r for r, d in zip(reviews, decisions) if r.valid and decision_class(d) == label])
    if venues is not None:
        result["by_venue"] = {venue: _stats([r for r, v in zip(reviews, venues) if r.valid and v == venue])
                              for venue in sorted({v for v in venues if v is not None})}
    return result


def paired_with_human(model: dict[Any, Sequence[AtomicItems]], human: dict[Any, Sequence[AtomicItems]]) -> dict:
    """Atomic counts of model reviews against human reviews of the same paper (PRAIB Tables 25, 26).

    Every pair of a model review and a human review of the same paper (both read) is one matched pair;
    with one model review per paper each human review is paired once, as in the paper's matched
    samples. Per side (``weaknesses``, ``strengths``, ``total``): ``ratio`` = model count / human count
    over the pairs whose human count is above zero (described: mean, std, median, ...), and
    ``difference`` = model count − human count over every pair.
    """
    pairs = [(m, h) for paper, reviews in model.items() for m in reviews if m.valid
             for h in human.get(paper, ()) if h.valid]

    def count(items: AtomicItems, side: str) -> int:
        return len(items.strengths) + len(items.weaknesses) if side == "total" else len(items.side(side))

    out: dict[str, Any] = {"n_pairs": len(pairs), "n_papers": len({p for p, r in model.items()
                                                                  if any(m.valid for m in r) and any(
                                                                      h.valid for h in human.get(p, ()))})}
    for side in ("weaknesses", "strengths", "total"):
        counts = [(count(m, side), count(h, side)) for m, h in pairs]
        out[side] = {"ratio": describe(m / h for m, h in counts if h > 0),
                     "difference": describe(m - h for m, h in counts)}
    return out
