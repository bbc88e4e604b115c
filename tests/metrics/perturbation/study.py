"""A simulated counterfactual study: an 'oracle' reviewer that reacts to broken research logic, a 'null'
reviewer that does not, and a stub judge that reads reviews sentence by sentence (the treatment, robustness
and leaderboard tests share them)."""

import json
import re

import numpy as np
import pandas as pd

from praib.records import coerce_record, records_to_dataset
from tests.doubles import StubBackend

CRITICAL_KINDS = ("finding", "conclusion", "result")
NEUTRAL_KINDS = ("active-passive", "american-british", "language-errors", "layout")
PRAISE = ["The writing is clear and easy to follow.", "The problem is important for the community.",
          "The results support the main claim.", "Related work is covered well.",
          "The method is simple and elegant.", "The ablations are thorough in the experiments."]
SURFACE = ["The paper is well organised.", "The figures are readable.", "The experiments are described in detail.",
           "It is not clear why the appendix is so long."]
FLAWS = ["However, the conclusions do not follow from the reported results.",
         "The claimed gains are not supported by the experiments."]


def reading_answer(request):
    """A judge that reads its prompt: each sentence of a review is an assertion, negative if it says
    'however' or 'not', about soundness if it names results, conclusions, claims or experiments; two
    assertions align when their texts are identical."""
    prompt = request.messages[0][1]
    if request.template == "judge:ate_assertions":
        review = prompt.split("<review>\n")[1].split("\n</review>")[0]
        assertions = [{"text": s, "sentiment": "negative" if re.search(r"\b(however|not)\b", s.lower())
                       else "positive",
                       "soundness": bool(re.search(r"result|conclusion|claim|experiment", s.lower()))}
                      for s in split_sentences(review)]
        return json.dumps({"assertions": assertions})
    a = re.findall(r"^A(\d+): (.*)$", prompt, re.M)
    b = re.findall(r"^B(\d+): (.*)$", prompt, re.M)
    return json.dumps({"pairs": [[int(i), int(j)] for i, x in a for j, y in b if x == y]})


def reading_judge(answer=reading_answer):
    return StubBackend(answer, model="reading-judge")


def split_sentences(text):
    return [s if s.endswith(".") else s + "." for s in text.rstrip(".").split(". ") if s]


def build_study(papers=16, seed=7):
    """Original reviews and reviews of 3 critical and 4 neutral versions per paper, for an
    'oracle' reviewer (critical versions: a flaw is named and the score drops by 1-3) and a
    'null' reviewer (every version: paraphrase noise and a score change of -1, 0 or +1)."""
    rng = np.random.default_rng(seed)
    original, variants, truth = [], [], []

    def paraphrase(sentences):
        out = list(sentences) + ([str(rng.choice(SURFACE))] if rng.random() < 0.5 else [])
        return [out[i] for i in rng.permutation(len(out))]

    for reviewer in ("oracle", "null"):
        for p in range(papers):
            sentences = [PRAISE[i] for i in rng.choice(len(PRAISE), 3, replace=False)]
            rating = int(rng.integers(4, 8))
            base = {"paper_id": f"paper-{p}", "source": reviewer, "prompt": "zero_generic"}
            original.append({**base, "text": " ".join(sentences), "rating": rating})
            for kind in CRITICAL_KINDS + NEUTRAL_KINDS:
                critical = kind in CRITICAL_KINDS
                text = paraphrase(sentences)
                if reviewer == "oracle" and critical:
                    text += FLAWS[: int(rng.integers(1, 3))]
                    new_rating = rating - int(rng.integers(1, 4))
                elif reviewer == "oracle":
                    new_rating = rating
                else:
                    new_rating = rating + int(rng.choice([-1, 0, 0, 1]))
                category = "soundness-critical" if critical else "soundness-neutral"
                variants.append({**base, "text": " ".join(text), "rating": new_rating,
                                 "perturbation": {"kind": kind, "category": category, "component": "paper"}})
                truth.append({"reviewer": reviewer, "paper": base["paper_id"], "critical": int(critical),
                              "score": new_rating - rating, "original": sentences, "variant": text})
    return original, variants, pd.DataFrame(truth)


def dataset(rows):
    return records_to_dataset([coerce_record(row, "review", f"row {i}") for i, row in enumerate(rows)])
