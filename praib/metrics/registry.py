"""Every metric praib reports, described once: its name, how the papers print it, which way is
closer to the human reviewers, what it is computed over and where it comes from.

``evaluate``, the leaderboard, its report and the era tables read their metric lists, labels and
digits from :data:`METRICS`; adding a metric means adding its entry here and its computation.
"""

from __future__ import annotations

from dataclasses import dataclass

# How a metric's distance to the human reference is computed.
DIFFERENCE = "difference"  # |value - human value|
MAGNITUDE = "magnitude"  # |value|: the metric is already a difference from the human reviews (0 = human)
ITSELF = "itself"  # the value is a distance between the two distributions
PANEL_CHANGE = "panel change"  # |alpha_H+L - alpha_H|: how much the model's ratings move the panels' agreement
SHORTFALL = "shortfall"  # 1 - value: 1 means the human items are matched exactly

# What one value of the metric is computed over.
PER_REVIEW, PER_PAPER, PER_PANEL = "review", "paper", "panel"


@dataclass(frozen=True)
class Metric:
    """One reported metric. ``label`` and ``digits`` are those of the leaderboard report (as the
    papers print them); ``column``/``column_digits`` those of the ``praib evaluate`` table where it
    prints the metric differently; ``long_label`` that of the era tables where it differs."""

    name: str
    family: str  # the group of metrics it belongs to, as the papers group them
    label: str
    digits: int
    distance: str | None  # one of the distance kinds above; None: not compared with the human value
    over: str  # PER_REVIEW, PER_PAPER or PER_PANEL
    judged: bool  # needs an LLM judge
    unit: str
    source: str  # paper and table
    column: str | None = None
    column_digits: int | None = None
    long_label: str | None = None
    reported_with: str | None = None  # the metric whose result holds this one ...
    result_key: str | None = None  # ... under this key

    @property
    def table_column(self) -> str:
        return self.column or self.label

    @property
    def table_digits(self) -> int:
        return self.digits if self.column_digits is None else self.column_digits

    @property
    def era_label(self) -> str:
        return self.long_label or self.label


def _text(name, family, label, digits, unit, long_label=None) -> Metric:
    return Metric(name, family, label, digits, DIFFERENCE, PER_REVIEW, False, unit, "PRAIB Table 1",
                  long_label=long_label)


METRICS: tuple[Metric, ...] = (
    _text("tkc", "readability", "TKC", 0, "word tokens"),
    _text("ttr", "readability", "TTR", 3, "distinct / all word tokens"),
    _text("fre", "readability", "FRE", 1, "Flesch reading ease"),
    _text("fkg", "readability", "FKG", 1, "Flesch-Kincaid grade", long_label="F-K Grade"),
    _text("xref", "specificity", "Xref.", 2, "cross-references"),
    _text("citations", "specificity", "Cit.", 2, "formatted references"),
    Metric("rating", "score", "Rating", 2, DIFFERENCE, PER_REVIEW, False, "venue rating scale", "PRAIB Table 4"),
    Metric("confidence", "score", "Confidence", 2, DIFFERENCE, PER_REVIEW, False, "venue confidence scale",
           "PRAIB Table 4"),
    Metric("rating_gap", "score gap", "Rating gap", 3, MAGNITUDE, PER_REVIEW, False,
           "rating minus the paper's median human rating", "PRAIB Appendix F.1"),
    Metric("rating_tv", "score distribution", "Rating TV", 3, ITSELF, PER_REVIEW, False,
           "total variation per venue-year", "PRAIB Appendix G.2, Table 17"),
    Metric("confidence_tv", "score distribution", "Confidence TV", 3, ITSELF, PER_REVIEW, False,
           "total variation per venue-year", "PRAIB Appendix G.2, Table 17"),
    Metric("krippendorff_alpha", "agreement", "α", 2, PANEL_CHANGE, PER_PANEL, False, "ordinal alpha per venue",
           "PRAIB Table 1, Appendix D"),
    Metric("math_engagement", "math", "Math", 3, DIFFERENCE, PER_REVIEW, True, "share of reviews", "PRAIB Table 1",
           column_digits=2),
    Metric("math_p_pos_given_pos", "math", "P(+|+)", 2, None, PER_REVIEW, True, "share of reviews", "PRAIB Table 1",
           reported_with="math_engagement", result_key="p_pos_given_pos"),
    Metric("math_p_pos_given_neg", "math", "P(+|−)", 2, None, PER_REVIEW, True, "share of reviews", "PRAIB Table 1",
           column="P(+|-)", reported_with="math_engagement", result_key="p_pos_given_neg"),
    Metric("coverage_recall_strengths", "coverage", "coverage recall strengths", 3, SHORTFALL, PER_PAPER, True,
           "share of human atomic items", "PRAIB Table 2", column="Cov. S", column_digits=2),
    Metric("coverage_recall_weaknesses", "coverage", "coverage recall weaknesses", 3, SHORTFALL, PER_PAPER, True,
           "share of human atomic items", "PRAIB Table 2", column="Cov. W", column_digits=2),
    Metric("coverage_precision_strengths", "coverage", "coverage precision strengths", 3, SHORTFALL, PER_PAPER, True,
           "share of model atomic items", "PRAIB Table 2"),
    Metric("coverage_precision_weaknesses", "coverage", "coverage precision weaknesses", 3, SHORTFALL, PER_PAPER, True,
           "share of model atomic items", "PRAIB Table 2"),
    Metric("target_aspect_f1", "target/aspect", "target aspect f1", 3, SHORTFALL, PER_PAPER, True, "label-set F1",
           "PRAIB Table 3", column="T/A F1", column_digits=2),
    Metric("confidence_gap", "score gap", "Confidence gap", 3, MAGNITUDE, PER_REVIEW, False,
           "confidence minus the paper's median human confidence", "PRAIB Appendix F.1"),
)

BY_NAME: dict[str, Metric] = {m.name: m for m in METRICS}

#: PRAIB Table 1, in its column order (the ``praib evaluate`` table adds the coverage and
#: target/aspect columns of Tables 2 and 3 after it).
TABLE_1: tuple[str, ...] = ("tkc", "ttr", "fre", "fkg", "citations", "xref", "krippendorff_alpha",
                            "math_engagement", "math_p_pos_given_pos", "math_p_pos_given_neg")

#: The metric columns of the ``praib evaluate`` table: Table 1, then the coverage recall of the
#: human strengths and weaknesses (Table 2) and the target/aspect F1 (Table 3).
EVALUATE_TABLE: tuple[str, ...] = (*TABLE_1, "coverage_recall_strengths", "coverage_recall_weaknesses",
                                   "target_aspect_f1")


def names(*families: str) -> tuple[str, ...]:
    """The metrics of ``families``, in registry order."""
    return tuple(m.name for m in METRICS if m.family in families)


READABILITY: tuple[str, ...] = names("readability")
#: Per-review metrics of the review text (computed by :func:`praib.metrics.text.textstats.score_texts`).
TEXT: tuple[str, ...] = names("readability", "specificity")
#: Per-review scores parsed from the review.
SCORES: tuple[str, ...] = names("score")
#: Judged metrics with a result of their own (those ``reported_with`` another come with it).
JUDGED: tuple[str, ...] = tuple(m.name for m in METRICS if m.judged and m.reported_with is None)
