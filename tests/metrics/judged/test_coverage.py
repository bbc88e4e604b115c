import re

import numpy as np
import pytest

from praib.metrics.judged.atomic import AtomicItems
from praib.metrics.judged.coverage import (
    CoverageMatrix, EmbeddingPrefilter, coverage_for_papers, coverage_metrics, judge_pairs,
)
from praib.llm.judge import Judge
from tests.doubles import StubBackend
from tests.paths import METRICS

_PAIR = re.compile(r"Base text: '(.*)'\nTarget text: '(.*)'\n")


def pair_judge(yes=(), weird=()):
    """A stub judge: "yes" for the (base, target) pairs in ``yes``, "maybe" for ``weird`` pairs, else "no"."""
    yes, weird = set(yes), set(weird)

    def answer(request):
        pair = _PAIR.search(request.messages[0][1]).groups()
        return "yes" if pair in yes else "maybe" if pair in weird else "no"

    return StubBackend(answer)


# Written-out matrix: 3 human items (rows) x 4 generated items (columns).
MATRIX = [[1, 1, 0, 0],
          [0, 0, 0, 0],
          [1, 0, 1, 0]]
# E = 4 yes pairs. Covered human items: rows 0 and 2 -> recall 2/3.
# Matched generated items: columns 0, 1, 2 -> precision 3/4.
# density = E / H = 4/3; compaction = E / G = 4/4 = 1.
# density_covered = 4 / 2 = 2; compaction_matched = 4 / 3.


def test_metrics_of_a_written_out_matrix_by_hand():
    m = coverage_metrics(MATRIX)
    assert m["recall"] == pytest.approx(2 / 3) and m["precision"] == pytest.approx(3 / 4)
    assert m["density"] == pytest.approx(4 / 3) and m["compaction"] == pytest.approx(1.0)
    assert m["density_covered"] == pytest.approx(2.0) and m["compaction_matched"] == pytest.approx(4 / 3)
    assert (m["n_human"], m["n_generated"], m["n_yes"]) == (3, 4, 4)
    empty_h = coverage_metrics(np.zeros((0, 2)))
    assert empty_h["recall"] is None and empty_h["density"] is None and empty_h["precision"] == 0.0
    nothing = coverage_metrics(np.zeros((2, 0)))
    assert nothing["recall"] == 0.0 and nothing["precision"] is None and nothing["compaction"] is None


def test_judge_pairs_asks_every_pair_with_human_as_base_and_counts_invalid_answers():
    human = ["h0", "h1", "h2"]
    generated = ["g0", "g1", "g2", "g3"]
    yes = {(human[i], generated[j]) for i in range(3) for j in range(4) if MATRIX[i][j]}
    backend = pair_judge(yes, weird={("h1", "g3")})
    matrix = judge_pairs(human, generated, Judge(backend))
    assert isinstance(matrix, CoverageMatrix)
    assert matrix.yes.astype(int).tolist() == MATRIX and matrix.judged.all() and matrix.invalid == 1
    assert len(backend.requests) == 12
    request = backend.requests[0]
    assert request.choices == ("yes", "no") and request.sampling.temperature == 0.0
    assert request.template == "judge:coverage"
    assert matrix.metrics()["recall"] == pytest.approx(2 / 3)


def _items(prefix, n_s, n_w):
    return AtomicItems([f"{prefix}s{i}" for i in range(n_s)], [f"{prefix}w{i}" for i in range(n_w)])


def test_coverage_for_papers_per_review_pair_and_pooled_by_hand():
    human = {"p1": [_items("A", 2, 2), _items("B", 1, 0), AtomicItems(valid=False)],
             "p2": [_items("C", 1, 1)],
             "p3": [_items("D", 1, 1)]}              # no generated review: left out
    generated = {"p1": [_items("X", 2, 1)], "p2": [_items("Y", 1, 2)], "p4": [_items("Z", 1, 1)]}
    yes = {("As0", "Xs0"), ("As0", "Xs1"), ("Aw1", "Xw0"), ("Bs0", "Xs1"), ("Cw0", "Yw1")}
    backend = pair_judge(yes)
    result = coverage_for_papers(human, generated, Judge(backend))
    # Review pairs: (A, X), (B, X), (C, Y).
    # strengths: A-X 2x2, yes (0,0),(0,1): recall 1/2, precision 1, density 1, compaction 1
    #            B-X 1x2, yes (0,1):       recall 1,   precision 1/2, density 1, compaction 1/2
    #            C-Y 1x1, no yes:          recall 0,   precision 0, density 0, compaction 0
    # weaknesses: A-X 2x1, yes (1,0): recall 1/2, precision 1, density 1/2, compaction 1
    #             B-X 0x1:            recall None, precision 0, density None, compaction 0
    #             C-Y 1x2, yes (0,1): recall 1, precision 1/2, density 1, compaction 1/2
    assert result["n_review_pairs"] == 3 and result["judge_calls"] == 4 + 2 + 1 + 2 + 0 + 2
    assert len(backend.requests) == 11 and result["invalid_answers"] == 0
    rs = result["coverage_recall_strengths"]
    assert rs["mean"] == pytest.approx(0.5) and rs["n"] == 3 and rs["std"] == pytest.approx(0.5)
    assert result["coverage_precision_strengths"]["mean"] == pytest.approx(0.5)
    assert result["coverage_density_strengths"]["mean"] == pytest.approx(2 / 3)
    assert result["coverage_compaction_strengths"]["mean"] == pytest.approx(0.5)
    rw = result["coverage_recall_weaknesses"]
    assert rw["mean"] == pytest.approx(0.75) and rw["n"] == 2
    assert result["coverage_precision_weaknesses"]["mean"] == pytest.approx(0.5)
    assert result["coverage_density_weaknesses"]["mean"] == pytest.approx(0.75)
    assert result["coverage_compaction_weaknesses"]["mean"] == pytest.approx(0.5)
    assert result["coverage_by_side"]["strengths"]["density_covered"]["mean"] == pytest.approx(1.5)

    pooled = coverage_for_papers(human, generated, Judge(pair_judge(yes)), pool_human=True)
    # p1 strengths: human [As0, As1, Bs0] x [Xs0, Xs1]: yes (0,0),(0,1),(2,1): recall 2/3, precision 1
    # p2 strengths: recall 0, precision 0 -> means 1/3 and 1/2
    assert pooled["n_review_pairs"] == 2
    assert pooled["coverage_recall_strengths"]["mean"] == pytest.approx(1 / 3)
    assert pooled["coverage_precision_strengths"]["mean"] == pytest.approx(0.5)
    assert pooled["coverage_density_strengths"]["mean"] == pytest.approx(0.5)  # (3/3 + 0) / 2


H = ["The ablation study is missing.", "The paper is very well written and easy to follow.",
     "Theorem 2 relies on an unstated convexity assumption."]
G = ["No ablation study is provided for the loss terms.", "The writing is clear and easy to read.",
     "The recipe calls for boiling the pasta in salted water.",
     "The convexity assumption behind Theorem 2 is never stated."]


@pytest.fixture(scope="module")
def prefilter_model():
    prefilter = EmbeddingPrefilter(threshold=0.3)
    prefilter.embed(H + G)  # load the real model once
    return prefilter


def test_prefilter_skips_unrelated_pairs_and_counts_calls_exactly(prefilter_model):
    sim = prefilter_model.similarity(H, G)
    # the three paraphrase pairs are similar, everything else (pasta included) clearly is not
    related = {(0, 0), (1, 1), (2, 3)}
    assert all(sim[i, j] > 0.45 for i, j in related)
    assert all(sim[i, j] < 0.2 for i in range(3) for j in range(4) if (i, j) not in related)

    prefilter = EmbeddingPrefilter(threshold=0.3)
    prefilter._model = prefilter_model._model
    # the judge would also say "yes" to one skipped pair (a disagreement the audit must find)
    backend = pair_judge(yes={(H[0], G[0]), (H[1], G[1]), (H[2], G[3]), (H[0], G[1])})
    judge = Judge(backend)
    matrix = judge_pairs(H, G, judge, prefilter=prefilter)
    assert len(backend.requests) == 3
    assert prefilter.stats() == {"threshold": 0.3, "pairs_total": 12, "judge_calls": 3, "calls_saved": 9,
                                 "saved_fraction": 0.75}
    assert {(int(i), int(j)) for i, j in zip(*np.nonzero(matrix.judged))} == related
    assert matrix.yes.sum() == 3 and matrix.metrics()["recall"] == 1.0

    audit = prefilter.audit(sample_size=100, seed=0)  # all 9 skipped pairs
    assert (audit["sampled"], audit["changed"], audit["skipped_total"]) == (9, 1, 9)
    assert audit["change_rate"] == pytest.approx(1 / 9) and audit["changed_pairs"][0][:2] == (H[0], G[1])
    assert len(backend.requests) == 3 + 9
    small = prefilter.audit(sample_size=4, seed=1, judge=judge)
    assert small["sampled"] == 4 and small["changed"] in (0, 1)
    assert small == prefilter.audit(sample_size=4, seed=1)  # the sample depends only on the seed

    result = coverage_for_papers({"p": [AtomicItems([], H)]}, {"p": [AtomicItems([], G)]}, judge, prefilter=prefilter)
    assert result["judge_calls"] == 3 and result["prefilter"]["pairs_total"] == 24
    assert result["coverage_recall_weaknesses"]["mean"] == 1.0


def test_evaluate_module_loads_offline_and_matches():
    import evaluate

    module = evaluate.load(str(METRICS / "coverage"))
    matrices = [np.array(MATRIX), np.array([[0, 1]]), np.zeros((0, 3), dtype=int)]
    result = module.compute(human_items=[m.shape[0] for m in matrices], generated_items=[m.shape[1] for m in matrices],
                            judgements=[m.ravel().tolist() for m in matrices], return_per_pair=True)
    assert result["per_pair"] == [coverage_metrics(m) for m in matrices]
    assert result["recall"]["mean"] == pytest.approx((2 / 3 + 1) / 2) and result["recall"]["n"] == 2
    assert result["precision"]["mean"] == pytest.approx((3 / 4 + 1 / 2 + 0) / 3)
    assert result["density"]["mean"] == pytest.approx((4 / 3 + 1) / 2)
    assert result["compaction"]["mean"] == pytest.approx((1 + 1 / 2 + 0) / 3)
    with pytest.raises(ValueError, match="needs 6 judgements"):
        module.compute(human_items=[2], generated_items=[3], judgements=[[1, 0]])


def test_pipeline_runs_through_the_tiny_transformers_model(tiny_model_dir):
    from praib.llm.backends import TransformersBackend

    judge = Judge(TransformersBackend(str(tiny_model_dir)))
    matrix = judge_pairs(["The ablation is missing."], ["No ablation is given.", "Well written."], judge)
    assert matrix.yes.shape == (1, 2) and matrix.invalid == 0  # choices are a real constraint there
    assert set(coverage_metrics(matrix.yes)) >= {"recall", "precision", "density", "compaction"}


def test_a_rerun_through_the_call_cache_makes_no_judge_calls(tmp_path):
    from praib.llm.cache import CachedBackend

    inner = pair_judge(yes={("h0", "g1")})
    first = judge_pairs(["h0", "h1"], ["g0", "g1"], Judge(CachedBackend(inner, tmp_path)))
    again = judge_pairs(["h0", "h1"], ["g0", "g1"], Judge(CachedBackend(inner, tmp_path)))
    assert len(inner.requests) == 4 and (first.yes == again.yes).all() and again.yes.sum() == 1
