"""Every metric praib reports, described once: its name, how the papers print it, which way is
closer to the human reviewers, what it is computed over, how one review's value is computed and
kept, which judge validation it rests on, where it comes from and which ``evaluate`` module
serves it.

``evaluate`` and its streamed partials, the per-review Parquet, the leaderboard, its report and
comparisons, the era tables, ``praib tables``, the judge-validity lines and the ``evaluate``
modules read their metric lists, labels and digits from here. A per-review text metric is its
function and its entry (:func:`register`, or an entry in :data:`METRICS`): every consumer then
computes, keeps, summarises, ranks and prints it.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, Union

from praib.metrics.summary import Summary, mean_summary, xref_summary
from praib.metrics.text.xref import PAPER_DIFFERING_TYPES, XREF_TYPES

# How a metric's distance to the human reference is computed.
DIFFERENCE = "difference"  # |value - human value|
MAGNITUDE = "magnitude"  # |value|: the metric is already a difference from the human reviews (0 = human)
ITSELF = "itself"  # the value is a distance between the two distributions
PANEL_CHANGE = "panel change"  # |alpha_H+L - alpha_H|: how much the model's ratings move the panels' agreement
SHORTFALL = "shortfall"  # 1 - value: 1 means the human items are matched exactly

# What one value of the metric is computed over.
PER_REVIEW, PER_PAPER, PER_PANEL, PER_PAIR = "review", "paper", "panel", "pair"

#: Decimals of a result no entry describes (one written by another praib version, say).
UNREGISTERED_DIGITS = 3


# ----------------------------------------------------------------------------- how a value is computed


@dataclass(frozen=True)
class Column:
    """A per-review column the evaluation keeps (in its streamed partials and the per-review Parquet);
    ``count``: whole numbers, kept as integers (NaN where the review has no text)."""

    name: str
    count: bool = False


@dataclass(frozen=True)
class KernelColumns:
    """The value is a column of the batch text kernel, :func:`praib.metrics.text.textstats.score_texts`:
    ``columns[0]`` is the metric's own, the others are details kept with it."""

    columns: tuple[Column, ...]


@dataclass(frozen=True)
class TextFunction:
    """The value is computed by a function of the review text: ``function(text) -> float`` one text at a
    time, or with ``batch`` ``function(texts) -> one float per text``; None or NaN where the metric is
    undefined. A review without text (None, empty or only white space) is never passed: its value is NaN.
    ``count``: the values are whole numbers (kept as integers)."""

    function: Callable
    batch: bool = False
    count: bool = False


@dataclass(frozen=True)
class ParsedScore:
    """The value is a score parsed from the review (its ``field``, e.g. the rating)."""

    field: str


Compute = Union[KernelColumns, TextFunction, ParsedScore]


# ----------------------------------------------------------------------------- families and modules


@dataclass(frozen=True)
class Family:
    """A group of metrics as the papers group them. ``title`` names the group in printed lines. A family
    of judged results has ``validation``: the tasks of ``praib judge validate`` whose judge decisions they
    rest on (empty where they need no judge), ``validity_label``, how the judge-validity lines name its
    results, and ``second_judge``, the entries of the two-judge agreement that re-judge them
    (:func:`praib.evaluation.judged.second_judge_agreement`). ``command`` names the command that computes a
    family of judged results where judged ``praib evaluate`` and ``praib leaderboard run`` do not (RevUtil's
    grounding specificity: ``praib grounding``): those runs neither list its metrics nor look up its validation."""

    name: str
    title: str
    validation: tuple[str, ...] | None = None
    validity_label: str = ""
    second_judge: tuple[str, ...] = ()
    command: str | None = None


FAMILIES: tuple[Family, ...] = (
    Family("readability", "readability"),
    Family("specificity", "specificity"),
    Family("score", "scores"),
    Family("score gap", "score gaps"),
    Family("score distribution", "score distributions"),
    Family("agreement", "agreement"),
    Family("math", "math engagement", ("math",), "Math, P(+|+), P(+|-) (math_engagement)", ("math_engagement",)),
    Family("coverage", "coverage", ("coverage",), "Cov. S/W (coverage_*)", ("coverage_pairs",)),
    Family("target/aspect", "target/aspect", ("target", "aspect"), "T/A F1 (target_aspect_*)",
           ("target_strength", "target_weakness", "aspect_strength", "aspect_weakness")),
    Family("atomic", "atomic statistics", ("atomic",), "atomic item statistics (atomic)"),
    Family("grounding", "grounding specificity", ("grounding",), "Grounding specificity (grounding_specificity)",
           command="praib grounding"),
    Family("rejection rate", "rejection rate", (), "rejection_rate"),
    Family("robustness", "robustness"),
    Family("treatment", "treatment effects"),
)
FAMILY: dict[str, Family] = {family.name: family for family in FAMILIES}


@dataclass(frozen=True)
class Module:
    """An ``evaluate`` module (``metrics/<name>``): its card's title, one-line description and tags (the
    card's header, :func:`card_header`), and what it computes, which opens its ``_DESCRIPTION``
    (:func:`module_description` adds the registered metrics it serves, with their units and sources)."""

    name: str
    title: str
    summary: str
    tags: tuple[str, ...]
    about: str


_TAGS = ("evaluate", "metric", "peer-review")
MODULES: dict[str, Module] = {module.name: module for module in (
    Module("readability", "Readability",
           "Token count, type-token ratio, Flesch Reading Ease and Flesch-Kincaid grade of review texts.",
           (*_TAGS, "praib"),
           "Textual complexity of reviews as in PRAIB (section 4.1, Table 10): TKC (word tokens), TTR "
           "(distinct lower-cased words / words), FRE = 206.835 - 1.015 W/S - 84.6 Sy/W and FKG = 0.39 "
           "W/S + 11.8 Sy/W - 15.59, with syllables from the CMU Pronouncing Dictionary (Pyphen "
           "hyphenation for words it lacks). Returns the mean, sample standard deviation and count of "
           "each score over the texts that have words."),
    Module("xref", "Xref",
           "Mentions of numbered paper elements (figures, tables, sections, equations, theorems, ...) in "
           "review texts.",
           (*_TAGS, "praib"),
           "Cross-references (Xref., PRAIB section 4.2 and Appendix C.1): mentions of numbered paper "
           "elements in a review, a proxy for how specifically it engages with the manuscript. Element "
           "types: figure, table, section (incl. subsection, appendix), equation, theorem, lemma, "
           'corollary, definition, page, line. A range or list ("Figures 2 and 3", "L180-L182") is one '
           "mention. Reported per review: total, per type, and per 100 word tokens."),
    Module("citations", "Citations",
           "Formatted bibliographic references (MLA, APA, IEEE) in review texts, with authors, title and "
           "year.",
           (*_TAGS, "praib"),
           "Citations (Cit., PRAIB section 4.2 and Appendix C.2): references in a review written in MLA, "
           "APA or IEEE style, with authors, title and year extracted so that they can be checked against "
           'bibliographic databases. A bare "Smith et al. (2020)" has no title and is not counted.'),
    Module("krippendorff_alpha", "Krippendorff Alpha",
           "Krippendorff's ordinal alpha of review ratings per venue-year, human panels with and without "
           "a model.",
           (*_TAGS, "agreement", "praib"),
           "Agreement of reviewers' ratings as Krippendorff's alpha with the ordinal distance (PRAIB "
           "Appendix D): alpha = 1 - D_o / D_e over papers with a variable number of ratings. With "
           "sources, venues and year groups, it reports per venue the human-only alpha_H, the alpha_H+L "
           "of the human panel with one non-human source's ratings added, and their difference, each "
           "computed per venue-year and averaged per venue."),
    Module("score_distribution", "Score distribution",
           "Rating/confidence distributions of review sources against the human distribution, and gaps to "
           "the human median per paper.",
           (*_TAGS, "calibration", "praib"),
           "Score distributions (PRAIB Appendix F and G): for each non-human source, the normalised "
           "distribution of its scores over the scale, the percentage-point difference from the human "
           "distribution per scale value, their sum of absolute differences (the paper's \"total "
           'variation" column, in pp) and the standard total variation distance 0.5 * sum |p - q|; and '
           "the mean gap between the source's score and the median human score of the same paper (the "
           "paper's confidence calibration, Table 14). Give scores of one kind (ratings or confidences) "
           "of one scale per call."),
    Module("math_engagement", "Math engagement",
           "Share of reviews that engage with a paper's mathematics, and how often a model engages given "
           "that the human reviewers did (P(+|+)) or did not (P(+|-)).",
           (*_TAGS, "praib"),
           "Mathematical engagement as in PRAIB (sections 4.2, 4.3 and 7, Appendix K). A review engages "
           "with the mathematical content of a paper when it explicitly refers to the paper's formal "
           "elements (equations, theorems, lemmas, notation, proofs) and analyses, criticises or corrects "
           "them. Reported per source as the share of engaging reviews, and for every non-human source as "
           "P(+|+) (share of its reviews that engage, over papers whose human reviews engaged) and P(+|-) "
           "(the same over papers whose human reviews did not).\n\n"
           "This module's only configuration, \"rules\" (the default), labels reviews offline with the "
           "rule-based proxy `praib.metrics.judged.math_engagement.detect_math_rule_based` (numbered "
           "equation/theorem/lemma/... references, LaTeX math, Greek-letter commands, inline formulas). "
           "Its results are a proxy and carry `method: \"rules\"`. The paper's method is an LLM judge, "
           "which needs a model and so is not an `evaluate` configuration: call "
           "`praib.metrics.judged.math_engagement.judge_math_engagement(texts, judge)` and pass the "
           "labels to `praib.metrics.judged.math_engagement.math_engagement_summary` (and "
           "`method_agreement` to compare it with the rules), or run `praib evaluate --judge MODEL`."),
    Module("coverage", "Coverage",
           "Atomic recall, generation precision, mapping density and compaction ratio of generated review "
           "items against human ones, from yes/no judgement matrices.",
           (*_TAGS, "praib"),
           "Information coverage as in PRAIB (section 8, Appendix J). For one review pair and one side "
           '(strengths or weaknesses), M is the H x G yes/no matrix of judgements "does generated item j '
           'contain substantive information from human item i", and E = sum(M): recall = human items with '
           "a yes / H, precision = generated items with a yes / G, density = E / H, compaction = E / G "
           "(density and compaction over all items; the conditional versions E / covered human items and "
           "E / matched generated items are returned as density_covered and compaction_matched). Each is "
           "summarised over review pairs as mean, sample standard deviation and count (undefined values, "
           "e.g. recall when H = 0, are skipped). This module does not call a judge: produce the matrices "
           "with praib.metrics.judged.coverage.judge_pairs."),
    Module("target_aspect", "Target / aspect agreement",
           "Precision, recall and F1 of the (target, aspect) label sets of a model's and the experts' "
           "strengths and weaknesses per paper.",
           (*_TAGS, "praib"),
           "Agreement between a model's and the experts' review points, compared by their labels: each "
           "strength or weakness carries one target (Problem, Prior Research, Method, Theory, Experiment, "
           "Conclusion, Paper, Review process) and one aspect (Impact, Novelty, Clarity, Validity, "
           "Not-specific, Irrelevant). With M and E a paper's sets of distinct (target, aspect) pairs on "
           "the model's and the experts' side: precision = sum |M & E| / sum |M|, recall = sum |M & E| / "
           "sum |E| over papers, and F1 = 2PR / (P + R) of those, overall (pairs tagged with "
           "strength/weakness) and per kind, as the target-aspect study's Table 3; per target and per "
           "aspect the presence of the label per kind (its Tables 8, 9, 11, 12) and the mean of the two "
           "kinds (Tables 7, 10); label shares per side. Labels are given, not judged: use "
           "praib.metrics.judged.target_aspect.label_items to produce them."),
    Module("grounding_specificity", "Grounding specificity",
           "RevUtil's grounding specificity of review comments against the reviews' cross-reference count: "
           "Spearman's rho and the mean rating by bin of the count.",
           (*_TAGS, "praib"),
           "RevUtil's grounding specificity (Sadallah et al., EMNLP 2025) as PRAIB relates it to the "
           "cross-reference count (Appendix H.1, Tables 18-20). Each weakness comment of a review is rated 1-5 "
           "(1 Not Grounded, 2 Weakly Grounded and Not Specific, 3 Weakly Grounded and Specific, 4 Fully "
           "Grounded and Under-Specific, 5 Fully Grounded and Specific) and the ratings are averaged per review. "
           "Over the reviews with a rated comment it reports the mean rating, Spearman's rho of a review's mean "
           "with its cross-reference count (praib's Xref.) and with their density per 100 word tokens, and the "
           "mean by bin of the count (0, 1, 2-5, more than 5) with each bin's gain over bin 0.\n\n"
           "This module does not call a judge: it takes the ratings. `praib grounding REVIEWS --judge MODEL` "
           "rates the comments (a RevUtil checkpoint can be the judge), or call "
           "`praib.metrics.judged.grounding.judge_grounding(comments, judge)` on the comments "
           "`praib.metrics.judged.grounding.weakness_comments(weaknesses)` splits off."),
    Module("perturbation_tests", "Perturbation tests",
           "Directional (Wilcoxon signed-rank) and invariance (TOST) tests of a review score before and "
           "after an input perturbation.",
           (*_TAGS, "robustness", "perturbation", "praib"),
           "What a perturbation of the input did to one score of a model's reviews, from the paired "
           "scores of the same papers before and after it (aspect-guided perturbation seed, App. B.6). "
           'With d = perturbed - original: "increase" or "decrease" when a one-sided Wilcoxon signed-rank '
           'test on d (zeros discarded) is significant; otherwise "equivalent" when two one-sided paired '
           't-tests (TOST) place mean(d) inside (-margin, +margin); otherwise "inconclusive".'),
    Module("ate", "ATE",
           "Average treatment effect of soundness-critical versus soundness-neutral paper edits on a "
           "reviewer's reviews, from a linear mixed-effects model, with the ranking score.",
           (*_TAGS, "counterfactual", "treatment-effect", "praib"),
           "The counterfactual review-logic framework's statistical analysis for one reviewer and one "
           "review difference (counterfactual review minus original review): a linear mixed-effects model "
           "difference ~ critical + (1 | paper) estimates the average treatment effect (ATE) of "
           "soundness-critical and soundness-neutral edits and tests whether they differ; the ranking "
           "score expresses the gap in standard deviations of the neutral differences."),
)}


# ----------------------------------------------------------------------------- metrics


@dataclass(frozen=True)
class Metric:
    """One reported metric. ``label`` and ``digits`` are those of the leaderboard report (as the
    papers print them); ``column``/``column_digits`` those of the ``praib evaluate`` table where it
    prints the metric differently; ``long_label`` that of the era tables where it differs.

    ``compute`` says how one review's value is computed (None: the metric is computed over a group of
    reviews by its own code); ``summary`` how a per-review text metric is summarised over a group
    (default: mean, standard deviation and count). ``compared``: PRAIB compares it between prompts and
    with the human baseline (Tables 12, 13). ``scalar``: one number per group (False for a judged result
    that holds details only). A ``name`` with ``{parts}`` (``robustness_{score}_{edit}``) stands for every
    name it gives (:func:`lookup`); such a metric's label is the name it is given, spaced."""

    name: str
    family: str  # the name of its Family
    label: str
    digits: int
    distance: str | None  # one of the distance kinds above; None: not compared with the human value
    over: str  # PER_REVIEW, PER_PAPER, PER_PANEL or PER_PAIR
    judged: bool  # needs an LLM judge
    unit: str
    source: str  # paper and table
    compute: Compute | None = None
    summary: Callable[[Mapping], Summary] | None = None
    module: str | None = None  # its evaluate module (metrics/<module>)
    compared: bool = False
    scalar: bool = True
    column: str | None = None
    column_digits: int | None = None
    long_label: str | None = None
    reported_with: str | None = None  # the metric whose result holds this one ...
    result_key: str | None = None  # ... under this key
    _pattern: re.Pattern | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if "{" in self.name:
            parts = re.split(r"\{\w+\}", self.name)
            object.__setattr__(self, "_pattern", re.compile("(.+)".join(map(re.escape, parts))))

    @property
    def table_column(self) -> str:
        return self.column or self.label

    @property
    def table_digits(self) -> int:
        return self.digits if self.column_digits is None else self.column_digits

    @property
    def era_label(self) -> str:
        return self.long_label or self.label

    @property
    def validation(self) -> tuple[str, ...] | None:
        """The validation tasks of the judge decisions it rests on (:class:`Family`); None: no judged result."""
        return FAMILY[self.family].validation

    @property
    def command(self) -> str | None:
        """The command that computes it where judged ``evaluate`` and leaderboard runs do not (:class:`Family`)."""
        return FAMILY[self.family].command

    @property
    def columns(self) -> tuple[Column, ...]:
        """The per-review columns the evaluation keeps for it: none but for a per-review text metric."""
        if isinstance(self.compute, KernelColumns):
            return self.compute.columns
        if isinstance(self.compute, TextFunction):
            return (Column(self.name, self.compute.count),)
        return ()

    def matches(self, name: str) -> bool:
        return name == self.name if self._pattern is None else self._pattern.fullmatch(name) is not None

    def named(self, **parts: str) -> str:
        """The name of one case of a metric with ``{parts}``."""
        return self.name.format(**parts)

    def label_of(self, name: str) -> str:
        """How a result row of this metric named ``name`` is labelled."""
        return self.label if self._pattern is None else name.replace("_", " ")


def _text(name, family, label, digits, unit, columns, module, compared=False, long_label=None,
          summary=None) -> Metric:
    return Metric(name, family, label, digits, DIFFERENCE, PER_REVIEW, False, unit, "PRAIB Table 1",
                  compute=KernelColumns(columns), summary=summary, module=module, compared=compared,
                  long_label=long_label)


def _score(name, label, unit) -> Metric:
    return Metric(name, "score", label, 2, DIFFERENCE, PER_REVIEW, False, unit, "PRAIB Table 4",
                  compute=ParsedScore(name))


_READ = "readability"
METRICS: list[Metric] = [
    _text("tkc", _READ, "TKC", 0, "word tokens", (Column("tkc", count=True),), _READ, compared=True),
    _text("ttr", _READ, "TTR", 3, "distinct / all word tokens", (Column("ttr"),), _READ, compared=True),
    _text("fre", _READ, "FRE", 1, "Flesch reading ease", (Column("fre"),), _READ, compared=True),
    _text("fkg", _READ, "FKG", 1, "Flesch-Kincaid grade", (Column("fkg"),), _READ, long_label="F-K Grade"),
    _text("xref", "specificity", "Xref.", 2, "cross-references",
          (Column("xref", count=True), Column("xref_per_100_tokens"),
           *(Column(f"xref_{t}", count=True) for t in XREF_TYPES),
           # The count in PRAIB's own categories, a detail of this one (its ``paper``), not a metric of its own: the
           # leaderboard neither ranks nor compares a near copy of Xref.
           Column("xref_paper", count=True), *(Column(f"xref_paper_{t}", count=True) for t in PAPER_DIFFERING_TYPES)),
          "xref", compared=True, summary=xref_summary),
    _text("citations", "specificity", "Cit.", 2, "formatted references", (Column("citations", count=True),),
          "citations"),
    _score("rating", "Rating", "venue rating scale"),
    _score("confidence", "Confidence", "venue confidence scale"),
    Metric("rating_gap", "score gap", "Rating gap", 3, MAGNITUDE, PER_REVIEW, False,
           "rating minus the paper's median human rating", "PRAIB Appendix F.1", module="score_distribution"),
    Metric("rating_tv", "score distribution", "Rating TV", 3, ITSELF, PER_REVIEW, False,
           "total variation per venue-year", "PRAIB Appendix G.2, Table 17", module="score_distribution"),
    Metric("confidence_tv", "score distribution", "Confidence TV", 3, ITSELF, PER_REVIEW, False,
           "total variation per venue-year", "PRAIB Appendix G.2, Table 17", module="score_distribution"),
    Metric("krippendorff_alpha", "agreement", "α", 2, PANEL_CHANGE, PER_PANEL, False, "ordinal alpha per venue",
           "PRAIB Table 1, Appendix D", module="krippendorff_alpha"),
    Metric("math_engagement", "math", "Math", 3, DIFFERENCE, PER_REVIEW, True, "share of reviews", "PRAIB Table 1",
           module="math_engagement", compared=True, column_digits=2),
    Metric("math_p_pos_given_pos", "math", "P(+|+)", 2, None, PER_REVIEW, True, "share of reviews", "PRAIB Table 1",
           module="math_engagement", reported_with="math_engagement", result_key="p_pos_given_pos"),
    Metric("math_p_pos_given_neg", "math", "P(+|−)", 2, None, PER_REVIEW, True, "share of reviews", "PRAIB Table 1",
           module="math_engagement", column="P(+|-)", reported_with="math_engagement",
           result_key="p_pos_given_neg"),
    Metric("coverage_recall_strengths", "coverage", "coverage recall strengths", 3, SHORTFALL, PER_PAPER, True,
           "share of human atomic items", "PRAIB Table 2", module="coverage", column="Cov. S", column_digits=2),
    Metric("coverage_recall_weaknesses", "coverage", "coverage recall weaknesses", 3, SHORTFALL, PER_PAPER, True,
           "share of human atomic items", "PRAIB Table 2", module="coverage", column="Cov. W", column_digits=2),
    Metric("coverage_precision_strengths", "coverage", "coverage precision strengths", 3, SHORTFALL, PER_PAPER, True,
           "share of model atomic items", "PRAIB Table 2", module="coverage"),
    Metric("coverage_precision_weaknesses", "coverage", "coverage precision weaknesses", 3, SHORTFALL, PER_PAPER, True,
           "share of model atomic items", "PRAIB Table 2", module="coverage"),
    Metric("target_aspect_f1", "target/aspect", "target aspect f1", 3, SHORTFALL, PER_PAPER, True, "label-set F1",
           "PRAIB Table 3", module="target_aspect", column="T/A F1", column_digits=2),
    Metric("confidence_gap", "score gap", "Confidence gap", 3, MAGNITUDE, PER_REVIEW, False,
           "confidence minus the paper's median human confidence", "PRAIB Appendix F.1", module="score_distribution"),
    # Computed by `praib grounding` (its family's command), not by judged evaluate and leaderboard runs.
    Metric("grounding_specificity", "grounding", "Grounding specificity", 3, None, PER_REVIEW, True,
           "RevUtil rating 1-5 of a review's weakness comments, averaged per review",
           "PRAIB Appendix H.1, Tables 18-20", module="grounding_specificity"),
    # Judged results that hold details, not one number: they appear beside the judged metrics.
    Metric("math_methods_agreement", "math", "math methods agreement", 3, None, PER_REVIEW, True,
           "agreement of the judge and the rule-based detector", "PRAIB Appendix K", module="math_engagement",
           scalar=False),
    Metric("target_aspect_distribution", "target/aspect", "target aspect distribution", 3, None, PER_REVIEW, True,
           "share of items per label", "Target-aspect Tables 7-12", module="target_aspect", scalar=False),
    Metric("atomic", "atomic", "atomic items", 2, None, PER_REVIEW, True,
           "counts, lengths and overlap of atomic items", "PRAIB Tables 21-28", scalar=False),
    Metric("rejection_rate", "rejection rate", "Rejection", 3, None, PER_REVIEW, False,
           "share of reject recommendations on rejected papers", "Target-aspect Table 5", module="target_aspect",
           scalar=False),
    # Of a submission's perturbed records (praib leaderboard run): one result per case. The treatment effects'
    # aspect and sentiment differences need a judge, the score difference not.
    Metric("robustness_{score}_{edit}", "robustness", "robustness", 3, None, PER_PAIR, False,
           "mean change of the score, perturbed minus original", "Aspect-guided perturbation Tables 1, 3",
           module="perturbation_tests"),
    Metric("ate_{difference}_critical", "treatment", "ATE critical", 3, None, PER_PAIR, False,
           "average effect of soundness-critical edits", "Counterfactual review logic Table 5", module="ate"),
    Metric("ate_{difference}_neutral", "treatment", "ATE neutral", 3, None, PER_PAIR, False,
           "average effect of soundness-neutral edits", "Counterfactual review logic Table 5", module="ate"),
    Metric("ate_ranking_score", "treatment", "ate ranking score", 3, None, PER_PAIR, False,
           "critical minus neutral ATE in neutral standard deviations", "Counterfactual review logic Table 4",
           module="ate"),
]

BY_NAME: dict[str, Metric] = {m.name: m for m in METRICS}

#: PRAIB Table 1, in its column order (the ``praib evaluate`` table adds the other per-review text
#: metrics and the coverage and target/aspect columns of Tables 2 and 3 after it).
TABLE_1: tuple[str, ...] = ("tkc", "ttr", "fre", "fkg", "citations", "xref", "krippendorff_alpha",
                            "math_engagement", "math_p_pos_given_pos", "math_p_pos_given_neg")
#: The metrics ``praib leaderboard run`` prints when it is done (every one is in its results and report).
RUN_SUMMARY: tuple[str, ...] = ("tkc", "fre", "krippendorff_alpha", "rating_tv")
#: The judged columns the ``praib evaluate`` table adds after Table 1's: the coverage recall of the human
#: strengths and weaknesses (Table 2) and the target/aspect F1 (Table 3).
TABLES_2_AND_3: tuple[str, ...] = ("coverage_recall_strengths", "coverage_recall_weaknesses", "target_aspect_f1")
#: The judged per-group results whose spread over the model groups of a prompt ``evaluate`` reports
#: (``across_models``; PRAIB Tables 2, 29, 30): their name there and their path in a group's judged metrics (a
#: summary with mean and std). Coverage density and compaction and the atomic counts are parts of the coverage
#: and atomic results, not metrics of their own.
SPREAD_OVER_MODELS: dict[str, tuple[str, ...]] = {
    **{f"coverage_{stat}_{side}": (f"coverage_{stat}_{side}",) for side in ("strengths", "weaknesses")
       for stat in ("recall", "precision", "density", "compaction")},
    **{f"atomic_{kind}_count": ("atomic", "statistics", "all", f"{kind}_count") for kind in ("strength", "weakness")},
}


def names(*families: str) -> tuple[str, ...]:
    """The metrics of ``families``, in registry order."""
    return tuple(m.name for m in METRICS if m.family in families)


#: The readability columns of the batch text kernel (:mod:`praib.metrics.text.textstats`).
READABILITY: tuple[str, ...] = names("readability")


def lookup(name: str) -> Metric | None:
    """The metric a result row or key ``name`` is of (a case of a metric with ``{parts}`` too); None for a
    name no entry describes."""
    found = BY_NAME.get(name)
    return found if found is not None else next((m for m in METRICS if m._pattern is not None and m.matches(name)),
                                                None)


def label_of(name: str) -> str:
    """How tables and reports label the result ``name``: its metric's label, else the name spaced."""
    metric = lookup(name)
    return name.replace("_", " ") if metric is None else metric.label_of(name)


def digits_of(name: str) -> int:
    """Decimals of the result ``name``: its metric's, else :data:`UNREGISTERED_DIGITS`."""
    metric = lookup(name)
    return UNREGISTERED_DIGITS if metric is None else metric.digits


def difference_digits(name: str) -> int:
    """Decimals of a difference of two values of the result ``name`` (paired comparisons): differences are
    small, so one more than its own."""
    return digits_of(name) + 1


def text_metrics() -> tuple[str, ...]:
    """Per-review metrics of the review text (the kernel's columns and those of a function), in registry order."""
    return tuple(m.name for m in METRICS if isinstance(m.compute, (KernelColumns, TextFunction)))


def score_metrics() -> tuple[str, ...]:
    """Per-review scores parsed from the review."""
    return tuple(m.name for m in METRICS if isinstance(m.compute, ParsedScore))


def per_review_metrics() -> tuple[str, ...]:
    """Every metric with a value per review that needs no judge: the text metrics, then the parsed scores
    (what the leaderboard bootstraps as means and the era tables compare)."""
    return (*text_metrics(), *score_metrics())


def judged_metrics() -> tuple[str, ...]:
    """Judged metrics with a one-number result of their own (those ``reported_with`` another come with it) that
    judged ``evaluate`` and leaderboard runs compute (not those of a family with a command of its own)."""
    return tuple(m.name for m in METRICS if m.judged and m.scalar and m.reported_with is None and m._pattern is None
                 and m.command is None)


def compared_metrics() -> tuple[str, ...]:
    """The metrics PRAIB compares between prompts (Table 12) and with the human baseline (Table 13)."""
    return tuple(m.name for m in METRICS if m.compared)


def evaluate_table() -> tuple[str, ...]:
    """The metric columns of the ``praib evaluate`` table: Table 1, the other text metrics, then the
    coverage and target/aspect columns of Tables 2 and 3."""
    return (*TABLE_1, *(m for m in text_metrics() if m not in TABLE_1), *TABLES_2_AND_3)


def kept_columns() -> tuple[Column, ...]:
    """Every per-review column an evaluation keeps, in registry order."""
    return tuple(column for m in METRICS for column in m.columns)


def of_module(module: str) -> tuple[Metric, ...]:
    """The registered metrics an ``evaluate`` module serves."""
    return tuple(m for m in METRICS if m.module == module)


def module_description(module: str) -> str:
    """The ``_DESCRIPTION`` of an ``evaluate`` module: what it computes, then the registered metrics it
    serves, each with its unit and source."""
    served = [f"- {m.label_of(m.name)} (`{m.name}`): {m.unit}; {m.source}" for m in of_module(module) if m.scalar]
    return MODULES[module].about + "\n\nMetrics:\n" + "\n".join(served) + "\n"


def card_header(module: str) -> dict:
    """The YAML header of an ``evaluate`` module's card (``metrics/<module>/README.md``)."""
    entry = MODULES[module]
    return {"title": entry.title, "tags": list(entry.tags), "description": entry.summary}


def summarise_text_metric(name: str, columns: Mapping) -> Summary:
    """A per-review text metric over a group: ``columns`` holds its kept columns (:func:`kept_columns`)."""
    metric = BY_NAME[name]
    return (metric.summary or (lambda found: mean_summary(found[name])))(columns)


def register(metric: Metric) -> None:
    """Add ``metric`` to the registry: every consumer computes and reports it from then on."""
    if metric.name in BY_NAME:
        raise ValueError(f"a metric named {metric.name!r} is registered already")
    if metric.family not in FAMILY:
        raise ValueError(f"metric {metric.name!r}: no family {metric.family!r}; families: "
                         f"{', '.join(FAMILY)} (add a Family to FAMILIES for a new one)")
    METRICS.append(metric)
    BY_NAME[metric.name] = metric


@contextmanager
def registered(*metrics: Metric) -> Iterator[None]:
    """The registry with ``metrics`` added while the block runs, as it was afterwards (for tests and
    one-off studies)."""
    before = list(METRICS)
    try:
        for metric in metrics:
            register(metric)
        yield
    finally:
        METRICS[:] = before
        BY_NAME.clear()
        BY_NAME.update({m.name: m for m in METRICS})
