"""Mathematical engagement of reviews (PRAIB sections 4.2, 4.3, 7 and Appendix K).

A review *engages with the mathematical content* of a paper when it refers to the
paper's formal elements (equations, theorems, lemmas, notation, proofs) and
analyses, criticises or corrects them. Two ways to decide it:

* :func:`judge_math_engagement`: the method of the paper. A judge model reads the
  criterion (built-in judge template ``math_engagement``) and answers with JSON
  ``{"rationale": ..., "verdict": "yes"|"no"}`` at temperature 0. An answer that
  is not such JSON is *invalid*: its ``engages`` is None, it is counted and never
  guessed.
* :func:`detect_math_rule_based`: a cheap offline proxy built from regular
  expressions (numbered equation/theorem/lemma/... references, LaTeX math,
  Greek-letter commands, inline formulas). It cannot tell a vague mention from an
  analysis and misses equations discussed without notation, so its results are
  always labelled ``method="rules"``; :func:`method_agreement` reports how well it
  matches the judge when both ran.

:func:`math_engagement_summary` turns per-review labels into the reported numbers:
the share of engaging reviews per source, and for each non-human source the
conditional rates P(+|+) and P(+|-) of its reviews engaging on papers whose human
reviews did or did not engage.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from praib.metrics.item import Score
from praib.metrics.summary import summarise
from praib.llm.judge import Judge, json_answer
from praib.metrics.judged.judge_quality import two_judge_agreement
from praib.records import HUMAN_SOURCE

TEMPLATE = "math_engagement"
METHODS = ("judge", "rules")
PAPER_RULES = ("any", "majority")

#: The JSON the judge must answer with; the rationale comes first so it is written before the verdict.
#: Its length is bounded so that a grammar-constrained answer always closes within the token limit.
ANSWER_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "rationale": {"type": "string", "maxLength": 600},
        "verdict": {"type": "string", "enum": ["yes", "no"]},
    },
    "required": ["rationale", "verdict"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class MathJudgement:
    """Whether one review engages with the mathematics (None: no valid answer), why, and how it was
    decided; ``error`` says why a judge gave no valid answer."""

    engages: bool | None
    rationale: str | None
    method: str  # "judge" or "rules"
    error: str | None = None
    raw: str | None = None  # what the judge said, when it gave no valid answer

    def to_dict(self) -> dict:
        return asdict(self)

    def score(self) -> Score:
        """This judgement as the review's :class:`~praib.metrics.item.Score`: 1 engages, 0 does not, None
        without a valid answer; the answer is the judge's verdict (its raw text where it gave no valid one),
        the explanation its rationale, or why it has no verdict."""
        verdict = None if self.engages is None else ("yes" if self.engages else "no")
        metadata = {"method": self.method, **({"error": self.error} if self.error else {})}
        return Score(None if self.engages is None else float(self.engages), self.raw if self.raw is not None
                     else verdict, self.rationale or self.error, metadata)


# ---------------------------------------------------------------------------------------------
# the judge
# ---------------------------------------------------------------------------------------------


def _rationale(answer: Any) -> str | None:
    rationale = answer.get("rationale") if isinstance(answer, dict) else None
    return rationale.strip() if isinstance(rationale, str) else None


def _parse_answer(answer: Any) -> MathJudgement:
    if not isinstance(answer, dict):
        raise ValueError(f"expected a JSON object with a verdict, got {type(answer).__name__}")
    verdict = answer.get("verdict")
    if isinstance(verdict, str) and verdict.strip().lower() in ("yes", "no"):
        return MathJudgement(verdict.strip().lower() == "yes", _rationale(answer), "judge")
    raise ValueError(f"the verdict is {verdict!r}, not 'yes' or 'no'")


def judge_math_engagement(texts: Sequence[str | None], judge: Judge, template: str | Path = TEMPLATE,
                          progress: bool = False, ids: Sequence[str] | None = None) -> list[MathJudgement]:
    """One :class:`MathJudgement` per review text, decided by ``judge``.

    The review is rendered into ``template`` (the built-in ``math_engagement``
    judge template, or a ``.jinja`` path of your own with a ``{{ review }}``
    variable) and the judge answers JSON constrained to :data:`ANSWER_SCHEMA`.
    A failed call, or an answer that is not a JSON object with a ``verdict`` of
    "yes" or "no", gives ``engages=None`` with the reason in ``error`` (and a
    failure record named by ``ids``, one per text). Missing or blank texts are
    not sent and also give None.
    """
    results: list[MathJudgement | None] = [None] * len(texts)
    positions = [i for i, text in enumerate(texts) if isinstance(text, str) and text.strip()]
    answers = judge.json(template, [{"review": texts[i]} for i in positions], ANSWER_SCHEMA, progress=progress,
                         ids=[f"{ids[i]}/math" for i in positions] if ids is not None else None,
                         parse=_parse_answer) if positions else []
    for i, answer in zip(positions, answers):
        # A rationale the judge wrote beside an unusable verdict is kept: it may say why.
        results[i] = answer.value if answer.ok else MathJudgement(
            None, _rationale(json_answer(answer.raw)) if answer.raw else None, "judge", answer.reason, answer.raw)
    return [r if r is not None else MathJudgement(None, None, "judge") for r in results]


# ---------------------------------------------------------------------------------------------
# the rule-based proxy
# ---------------------------------------------------------------------------------------------

_FORMAL_WORDS = (
    r"eqs?|eqns?|equations?|theorems?|thms?|lemmas?|lemmata|propositions?|props?|corollar(?:y|ies)|"
    r"assumptions?|definitions?|defs?|conjectures?|axioms?"
)
# "Eq. (7)", "Eqs. 3-4", "Theorem 3.1", "Lemma A.2", "Assumption 2", "Definition~1"
_NUMBERED_FORMAL = re.compile(
    rf"\b(?:{_FORMAL_WORDS})\b\.?[\s~]*\(?\s*(?:[A-Z]\.?)?\d+", re.IGNORECASE)
# "eq:loss"-style labels and \eqref
_EQREF = re.compile(r"\\eqref\{|\\ref\{(?:eq|thm|lem|prop)", re.IGNORECASE)
# inline $...$ (no blank just inside the dollars, so "$5 and $10" is not maths), $$...$$, \( \), \[ \]
_LATEX_MATH = re.compile(
    r"\$\$.+?\$\$|(?<![\\$\w])\$(?=[^\s$\d])(?:[^$\n]*[^\s$])?\$(?!\d)|\\\(.+?\\\)|\\\[.+?\\\]", re.DOTALL)
_GREEK = (
    "alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|iota|kappa|lambda|mu|nu|xi|"
    "pi|varpi|rho|varrho|sigma|varsigma|tau|upsilon|phi|varphi|chi|psi|omega|"
    "Gamma|Delta|Theta|Lambda|Xi|Pi|Sigma|Upsilon|Phi|Psi|Omega"
)
_LATEX_COMMAND = re.compile(
    rf"\\(?:{_GREEK}|frac|dfrac|sum|prod|int|oint|sqrt|partial|nabla|infty|mathbb|mathcal|mathbf|"
    r"mathrm|boldsymbol|operatorname|hat|tilde|bar|vec|leq?|geq?|neq|approx|sim|propto|cdot|times|"
    r"otimes|odot|in|subseteq?|forall|exists|mid|lVert|rVert|langle|rangle|top|log|exp|arg(?:min|max)"
    r")(?![A-Za-z])")
# Unicode maths: Greek letters and operators as pasted from a PDF or typed by a reviewer
_UNICODE_MATH = re.compile(r"[\u0391-\u03A9\u03B1-\u03C9\u03D5\u03F5∑∏∫∂∇≤≥≠≈≡∈∉⊂⊆⊗⊙∀∃‖⟨⟩↦]")
# symbol = expression: "h_t = W h_{t-1} + b", "L = \sum x_i", "p(y|x) = ...", "x' = f(x)"
_SYMBOL = r"(?<![\w\\])[A-Za-z](?:_\{?[\w,+\-]+\}?|\^\{?[\w+\-]+\}?|'|\([\w|,\s]{1,12}\))*"
_INLINE_FORMULA = re.compile(
    rf"{_SYMBOL}\s*(?:=|:=|≤|≥|<=|>=)\s*"
    # the right-hand side: a command, a symbol (not an English word), a function call or a bracket
    r"(?:\\[A-Za-z]+|[A-Za-z](?:_|\^|\(|\s*[+\-*/^]|'|\d|\b(?!\s*[a-z]{2}))|[A-Za-z]{2,}\(|\()")
# subscripted or superscripted single-letter symbols: "x_i", "W^T", "\theta_t" handled above
_SUBSCRIPT = re.compile(
    r"(?<![\w\\])[A-Za-z](?:_\{[^}\s]+\}|_[A-Za-z0-9](?![A-Za-z]{2})|\^\{[^}\s]+\}|\^[A-Za-z0-9T]\b)")

RULES: dict[str, re.Pattern] = {
    "numbered_formal_reference": _NUMBERED_FORMAL,
    "equation_label": _EQREF,
    "latex_math": _LATEX_MATH,
    "latex_command": _LATEX_COMMAND,
    "unicode_math": _UNICODE_MATH,
    "inline_formula": _INLINE_FORMULA,
    "sub_superscript": _SUBSCRIPT,
}


def rule_score(text: str | None) -> Score:
    """The rule-based proxy's :class:`~praib.metrics.item.Score` of one review: 1 when a rule fires, 0 when
    none does (None without text), the rules that fired as its explanation and their matches as metadata."""
    if not isinstance(text, str) or not text.strip():
        return Score(None, metadata={"method": "rules"})
    hits = math_rule_hits(text)
    return Score(float(bool(hits)), None, ", ".join(hits) or None, {"method": "rules", "hits": hits})


def math_rule_hits(text: str | None) -> dict[str, list[str]]:
    """The matches of each rule of :func:`detect_math_rule_based` in ``text`` (rules without matches left out)."""
    if not isinstance(text, str):
        return {}
    hits = {name: [m.group(0) for m in pattern.finditer(text)] for name, pattern in RULES.items()}
    return {name: found for name, found in hits.items() if found}


def detect_math_rule_based(text: str | None) -> bool:
    """True when ``text`` contains a surface sign of mathematical engagement.

    A *proxy* for the judge, always reported with ``method="rules"``. It fires on
    numbered references to equations and formal results (Eq. (7), Theorem 3.1,
    Lemma A.2, Assumption 2, Definition 1, Proposition/Corollary/Claim n),
    ``\\eqref``, LaTeX math (``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``),
    LaTeX commands such as ``\\frac``, ``\\sum`` and Greek letters, Unicode maths
    symbols, subscripted symbols (``x_i``, ``W^T``) and inline formulas with
    ``=`` between symbols (``h_t = W h_{t-1} + b``).

    It does not fire on broad mentions ("the theoretical analysis is weak", "the
    proofs are not rigorous"), named concepts in plain words ("KL divergence",
    "gradient descent") or empirical numbers ("accuracy improves by 10%", "a 5x5
    matrix"), as the criterion asks. Its known limits: an equation discussed
    without a number or notation is missed, and a numbered reference without any
    analysis ("see Theorem 1") is counted, where the judge would look closer.
    """
    if not isinstance(text, str) or not text.strip():
        return False
    return any(pattern.search(text) for pattern in RULES.values())


def rule_based_judgements(texts: Sequence[str | None]) -> list[MathJudgement]:
    """:func:`detect_math_rule_based` per text as :class:`MathJudgement` (``method="rules"``; the
    rationale lists what matched). Missing texts give ``engages=None``."""
    results = []
    for text in texts:
        if not isinstance(text, str) or not text.strip():
            results.append(MathJudgement(None, None, "rules"))
            continue
        hits = math_rule_hits(text)
        rationale = "; ".join(f"{name}: {', '.join(repr(h) for h in found[:3])}" for name, found in hits.items())
        results.append(MathJudgement(bool(hits), rationale or "no formal reference matched", "rules"))
    return results


# ---------------------------------------------------------------------------------------------
# aggregation
# ---------------------------------------------------------------------------------------------


def _human_engaged(labels: list[bool], paper_rule: str) -> bool:
    positives = sum(labels)
    if paper_rule == "any":
        return positives >= 1
    return positives > len(labels) / 2


def _share(values: list[bool]) -> dict:
    return summarise(float(v) for v in values)


def math_engagement_summary(paper_ids: Sequence[Any], sources: Sequence[Any], engages: Sequence[bool | None],
                            human_source: str = HUMAN_SOURCE, paper_rule: str = "any") -> dict:
    """Share of engaging reviews per source and the conditional rates P(+|+), P(+|-).

    ``paper_ids``, ``sources`` and ``engages`` are parallel, one entry per review.
    Reviews with ``engages`` None (invalid judge answers, missing texts) are left
    out everywhere and counted under ``skipped``.

    A paper is *human-positive* when its human reviews engaged: with
    ``paper_rule="any"`` at least one of them, with ``"majority"`` more than half;
    otherwise *human-negative*. Papers with no labelled human review are in
    neither condition. For every other source, P(+|+) is the share of its reviews
    that engage among its reviews of human-positive papers, and P(+|-) the same
    among its reviews of human-negative papers (pooled over reviews; None where the
    source has no review in that condition).

    Returns::

        {"method_note": ..., "paper_rule": ..., "human_source": ..., "skipped": int,
         "papers": {"human_positive": int, "human_negative": int, "without_human": int},
         "share": {source: {"mean", "std", "n"}},       # mean = share of engaging reviews
         "skipped_by_source": {source: int},
         "conditional": {source: {"p_pos_given_pos", "p_pos_given_neg",
                                  "n_reviews_pos", "n_reviews_neg",
                                  "n_papers_pos", "n_papers_neg"}}}
    """
    if paper_rule not in PAPER_RULES:
        raise ValueError(f"paper_rule must be one of {PAPER_RULES}, not {paper_rule!r}")
    if not len(paper_ids) == len(sources) == len(engages):
        raise ValueError(f"columns differ in length: {len(paper_ids)}, {len(sources)}, {len(engages)}")

    by_source: dict[Any, list[bool]] = defaultdict(list)
    skipped_by_source: dict[Any, int] = defaultdict(int)
    human_by_paper: dict[Any, list[bool]] = defaultdict(list)
    all_papers = set(paper_ids)
    for paper, source, label in zip(paper_ids, sources, engages):
        if label is None:
            skipped_by_source[source] += 1
            continue
        by_source[source].append(bool(label))
        if source == human_source:
            human_by_paper[paper].append(bool(label))

    condition = {paper: _human_engaged(labels, paper_rule) for paper, labels in human_by_paper.items() if labels}

    conditional = {}
    for source in sorted(set(sources) - {human_source}, key=str):
        pos: list[bool] = []
        neg: list[bool] = []
        papers_pos, papers_neg = set(), set()
        for paper, src, label in zip(paper_ids, sources, engages):
            if src != source or label is None or paper not in condition:
                continue
            if condition[paper]:
                pos.append(bool(label))
                papers_pos.add(paper)
            else:
                neg.append(bool(label))
                papers_neg.add(paper)
        conditional[source] = {
            "p_pos_given_pos": sum(pos) / len(pos) if pos else None,
            "p_pos_given_neg": sum(neg) / len(neg) if neg else None,
            "n_reviews_pos": len(pos),
            "n_reviews_neg": len(neg),
            "n_papers_pos": len(papers_pos),
            "n_papers_neg": len(papers_neg),
        }

    return {
        "paper_rule": paper_rule,
        "human_source": human_source,
        "skipped": sum(skipped_by_source.values()),
        "papers": {
            "human_positive": sum(condition.values()),
            "human_negative": len(condition) - sum(condition.values()),
            "without_human": len(all_papers) - len(condition),
        },
        "share": {source: _share(by_source.get(source, [])) for source in sorted(set(sources), key=str)},
        "skipped_by_source": {source: skipped_by_source.get(source, 0) for source in sorted(set(sources), key=str)},
        "conditional": conditional,
    }


def method_agreement(judge_labels: Sequence[bool | None], rule_labels: Sequence[bool | None]) -> dict:
    """How well the rule-based proxy matches the judge on the same reviews.

    Returns :func:`praib.metrics.judged.judge_quality.two_judge_agreement` (``cohen_kappa``,
    ``krippendorff_alpha``, ``agreement``, ``n``, ``skipped``) plus the positive
    rate of each method over the compared reviews (``judge_positive_rate``,
    ``rules_positive_rate``).
    """
    result = two_judge_agreement(judge_labels, rule_labels)
    pairs = [(j, r) for j, r in zip(judge_labels, rule_labels) if j is not None and r is not None]
    result["judge_positive_rate"] = sum(bool(j) for j, _ in pairs) / len(pairs) if pairs else None
    result["rules_positive_rate"] = sum(bool(r) for _, r in pairs) / len(pairs) if pairs else None
    return result


def rule_based_engagement(texts: Sequence[str | None], paper_ids: Sequence[Any], sources: Sequence[Any],
                          human_source: str = "human", paper_rule: str = "any",
                          return_per_review: bool = False) -> dict:
    """:func:`math_engagement_summary` of the :func:`rule_based_judgements` of ``texts``, marked
    ``method: "rules"``; with ``return_per_review`` also each review's judgement."""
    judgements = rule_based_judgements(texts)
    result = {"method": "rules", **math_engagement_summary(
        paper_ids, sources, [j.engages for j in judgements], human_source=human_source, paper_rule=paper_rule)}
    if return_per_review:
        result["per_review"] = [j.to_dict() for j in judgements]
    return result
