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
from praib.metrics.text.xref import XREF_TYPES

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


# ----------------------------------------------------------------------------- families


@dataclass(frozen=True)
class Family:
    """A group of metrics as the papers group them. ``title`` names the group in printed lines. A family
    of judged results has ``validation``: the tasks of ``praib judge validate`` whose judge decisions they
    rest on (empty where they need no judge), ``validity_label``, how the judge-validity lines name its
    results, and ``second_judge``, the entries of the two-judge agreement that re-judge them
    (:func:`praib.evaluation.judged.second_judge_agreement`)."""

    name: str
    title: str
    validation: tuple[str, ...] | None = None
    validity_label: str = ""
    second_judge: tuple[str, ...] = ()


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
    Family("rejection rate", "rejection rate", (), "rejection_rate"),
    Family("robustness", "robustness"),
    Family("treatment", "treatment effects"),
)
FAMILY: dict[str, Family] = {family.name: family for family in FAMILIES}


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
           *(Column(f"xref_{t}", count=True) for t in XREF_TYPES)), "xref", compared=True, summary=xref_summary),
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
#: The judged columns the ``praib evaluate`` table adds after Table 1's: the coverage recall of the human
#: strengths and weaknesses (Table 2) and the target/aspect F1 (Table 3).
TABLES_2_AND_3: tuple[str, ...] = ("coverage_recall_strengths", "coverage_recall_weaknesses", "target_aspect_f1")


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
    """Judged metrics with a one-number result of their own (those ``reported_with`` another come with it)."""
    return tuple(m.name for m in METRICS if m.judged and m.scalar and m.reported_with is None and m._pattern is None)


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
