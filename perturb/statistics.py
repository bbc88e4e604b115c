"""What a perturbation run changed, how often its edits were accepted and how long it took.

These are the numbers the aspect-guided perturbation study prints of its edits (Table 5: the edits made to each
paper and its reviews or rebuttal, as sum, mean, minimum and maximum over the papers; Table 6: how often an edit
came out as intended) and the counterfactual study prints of its variants (Table 3: edits and changed text per
counterfactual). ``praib perturb`` and ``praib counterfactual build`` write them beside their output
(``OUTPUT.stats.json``, :class:`PerturbationStatistics`), where ``praib tables`` reads them.

An *edit* is one changed place of a record's text: a run of consecutive words replaced, inserted or removed,
found by matching the original and perturbed word sequences (:mod:`difflib`, line by line first so that a long
paper is compared quickly); a whole line inserted or removed (a false claim added as a bullet point) is an edit
of its own, so that adjacent inserted lines are not one edit. A record whose text is unchanged but whose fields
changed counts one edit per changed field. The *words changed* of an edit are the larger of the words it
removes and the words it adds.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any, Iterable, Iterator, Sequence

from praib._version import __version__

#: The ``statistics_of`` of the file each command writes: ``praib tables`` recognises the files by it.
PERTURB = "praib perturb"
COUNTERFACTUAL_BUILD = "praib counterfactual build"
COUNTERFACTUAL_STATS = "praib counterfactual stats"
_IGNORED_FIELDS = ("perturbation",)


@dataclass(frozen=True)
class EditCount:
    """The edits between two texts (or records) and the words they change."""

    edits: int = 0
    words: int = 0

    def __add__(self, other: "EditCount") -> "EditCount":
        return EditCount(self.edits + other.edits, self.words + other.words)

    def __bool__(self) -> bool:
        return bool(self.edits)


def _word_edits(old: Sequence[str], new: Sequence[str]) -> EditCount:
    opcodes = SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    changed = [(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]
    return EditCount(len(changed), sum(max(removed, added) for removed, added in changed))


def count_edits(original: str | None, edited: str | None) -> EditCount:
    """The edits that turn ``original`` into ``edited`` (see the module's docstring)."""
    old_lines, new_lines = (original or "").splitlines(), (edited or "").splitlines()
    total = EditCount()
    # Lines are nearly all distinct in a paper, so junk detection would only hide matches.
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        removed, added = old_lines[i1:i2], new_lines[j1:j2]
        if tag == "replace":
            # Lines that differ in their spacing or breaks only (a layout edit) are one edit of no words.
            total += _word_edits(" ".join(removed).split(), " ".join(added).split()) or EditCount(1, 0)
        else:  # whole lines in or out: one edit a line that holds words
            lines = [line.split() for line in removed + added if line.strip()]
            total += EditCount(len(lines), sum(map(len, lines)))
    return total


def record_edits(original: dict, perturbed: dict) -> EditCount:
    """The edits of one perturbed record against its original: those of its ``text``, or, where the text is the
    same, one per changed field (a flipped score in a record without text)."""
    text = count_edits(original.get("text"), perturbed.get("text"))
    if text.edits:
        return text
    changed = [name for name in original if name not in _IGNORED_FIELDS and name != "text"
               and original.get(name) != perturbed.get(name)]
    return EditCount(len(changed), 0)


@dataclass(frozen=True)
class Spread:
    """Sum, mean, minimum and maximum of per-paper counts, over ``papers`` papers (None where there are none)."""

    total: int
    mean: float | None
    min: int | None
    max: int | None
    papers: int

    @classmethod
    def of(cls, counts: Iterable[int]) -> "Spread":
        values = list(counts)
        if not values:
            return cls(0, None, None, None, 0)
        return cls(sum(values), sum(values) / len(values), min(values), max(values), len(values))

    def to_dict(self) -> dict:
        return {"sum": self.total, "mean": self.mean, "min": self.min, "max": self.max, "papers": self.papers}

    def describe(self) -> str:
        if not self.papers:
            return "no paper"
        if self.min == self.max:
            return f"{self.min} a paper"
        return f"mean {self.mean:.1f} a paper, {self.min}-{self.max}"


@dataclass
class KindStatistics:
    """One perturbation kind of a run.

    ``records``: the records given; ``changed``/``unchanged``: of those written, how many the edit changed;
    ``left_out``: given but not written (no usable LLM answer); ``edits``/``words``: per paper (its records'
    edits together, 0 for a paper none of whose records changed); ``llm_edits``: the LLM's answers checked
    (:class:`~praib.perturb.validation.EditTally`: the unit one answer edits and how many were accepted,
    rejected or unanswered), None for a rule-based kind; ``seconds``: the run's wall time for this kind, None
    where the kind was not timed alone."""

    kind: str
    component: str
    category: str
    records: int
    changed: int
    unchanged: int
    left_out: int
    edits: dict[str, int] = field(default_factory=dict)
    words: dict[str, int] = field(default_factory=dict)
    llm_edits: dict[str, Any] | None = None
    seconds: float | None = None

    @property
    def edit_spread(self) -> Spread:
        return Spread.of(self.edits.values())

    @property
    def accepted_share(self) -> float | None:
        """The share of the LLM's checked answers that were accepted; None for a rule-based kind."""
        if not self.llm_edits:
            return None
        total = sum(self.llm_edits[key] for key in ("accepted", "rejected", "unanswered"))
        return self.llm_edits["accepted"] / total if total else None

    def to_dict(self) -> dict:
        written = self.changed + self.unchanged
        return {
            "kind": self.kind, "component": self.component, "category": self.category, "records": self.records,
            "changed": self.changed, "unchanged": self.unchanged, "left_out": self.left_out,
            "changed_share": self.changed / self.records if self.records else None,
            "written_share": written / self.records if self.records else None,
            "seconds": self.seconds, "edits": self.edit_spread.to_dict(),
            "words": Spread.of(self.words.values()).to_dict(), "llm_edits": self.llm_edits,
            "llm_accepted_share": self.accepted_share,
            "edits_per_paper": dict(sorted(self.edits.items())),
        }

    def describe(self) -> str:
        """``45 edits in 8 papers (mean 5.6 a paper, 2-9)``, with the time when there is one."""
        spread = self.edit_spread
        if not spread.papers:
            return f"no paper edited{f'; {seconds(self.seconds)}' if self.seconds is not None else ''}"
        text = f"{spread.total} edit{'s' if spread.total != 1 else ''} in {spread.papers} paper" \
               f"{'s' if spread.papers != 1 else ''} ({spread.describe()})"
        return text + (f"; {seconds(self.seconds)}" if self.seconds is not None else "")


def kind_statistics(kind: str, component: str, category: str, originals: Sequence[dict],
                    perturbed: Sequence[dict], *, llm_edits: dict | None = None,
                    seconds: float | None = None) -> KindStatistics:
    """The statistics of one kind from its input records and the records it wrote (in input order, less those
    left out, as :func:`~praib.perturb.registry.apply_perturbation` returns them)."""
    kept = list(_kept_pairs(originals, perturbed))
    edits: dict[str, int] = {}
    words: dict[str, int] = {}
    changed = 0
    for original, row in kept:
        count = record_edits(original, row)
        paper = str(original["paper_id"])
        edits[paper] = edits.get(paper, 0) + count.edits
        words[paper] = words.get(paper, 0) + count.words
        changed += bool(count.edits)
    return KindStatistics(kind, component, category, len(originals), changed, len(kept) - changed,
                          len(originals) - len(kept), edits, words, llm_edits, seconds)


_IDS = ("paper_id", "review_id", "rebuttal_id")


def _kept_pairs(originals: Sequence[dict], perturbed: Sequence[dict]) -> Iterator[tuple[dict, dict]]:
    """(original, perturbed) of every record written: the perturbed records are the originals in order, less
    those left out."""
    remaining = iter(originals)
    for row in perturbed:
        yield next(o for o in remaining if all(o.get(k) == row.get(k) for k in _IDS if k in o)), row


def llm_edit_counts(tally: Any, kind: str) -> dict[str, Any] | None:
    """The :class:`~praib.perturb.validation.EditTally` counts of ``kind`` with their unit, None when the tally has
    none (a rule-based kind)."""
    if tally is None or kind not in tally.counts:
        return None
    return {"unit": tally.units[kind], **tally.counts[kind]}


def seconds(value: float) -> str:
    """``0.42 s``, ``12 s``: a duration as a summary line prints it."""
    return f"{value:.2f} s" if value < 10 else f"{value:.0f} s"


#: How the attempts at a soundness-critical edit ended, as the LLM-edit outcomes they are.
_ATTEMPT_OUTCOMES = {"accepted": "accepted", "no-answer": "unanswered"}


def family_statistics(family: str, papers: Sequence[dict], variants: Sequence[dict],
                      attempts: Sequence[dict]) -> KindStatistics:
    """One soundness-critical family (finding, conclusion, result) of ``praib counterfactual build``: the papers
    it was tried on (those with research logic), those it made a variant of, those every attempt of which went
    unanswered (left out); the variants' edits against their originals; every attempt as an LLM edit
    (``unit`` "attempt": accepted, rejected by a check or the judge, or unanswered)."""
    mine = [row for row in attempts if row["family"] == family]
    tried = {str(row["paper_id"]) for row in mine}
    originals = {str(row["paper_id"]): row for row in papers}
    made = [row for row in variants if str(row["perturbation"]["kind"]).split("-")[0] == family]
    edits: dict[str, int] = {paper: 0 for paper in tried}
    words: dict[str, int] = {paper: 0 for paper in tried}
    for row in made:
        count = count_edits(originals[str(row["paper_id"])].get("text"), row.get("text"))
        edits[str(row["paper_id"])] += count.edits
        words[str(row["paper_id"])] += count.words
    unanswered = {paper for paper in tried if all(row["status"] == "no-answer" for row in mine
                                                  if str(row["paper_id"]) == paper)}
    outcomes = {"unit": "attempt", "accepted": 0, "rejected": 0, "unanswered": 0}
    for row in mine:
        outcomes[_ATTEMPT_OUTCOMES.get(row["status"], "rejected")] += 1
    return KindStatistics(family, "paper", "soundness-critical", len(tried), len(made),
                          len(tried) - len(made) - len(unanswered), len(unanswered), edits, words, outcomes)


@contextmanager
def stopwatch() -> Iterator[list[float]]:
    """``with stopwatch() as took:`` leaves the block's wall time in seconds in ``took[0]``."""
    took = [0.0]
    start = time.perf_counter()
    try:
        yield took
    finally:
        took[0] = time.perf_counter() - start


@dataclass
class PerturbationStatistics:
    """The statistics file of one run: what made it (``statistics_of``: :data:`PERTURB` or
    :data:`COUNTERFACTUAL_BUILD`), its input and output, and one :class:`KindStatistics` per kind; ``stages``
    times the parts of a run that do several kinds at once (seconds by name); ``extra`` holds what a command
    adds of its own (the counterfactual statistics)."""

    statistics_of: str
    input: str
    output: str
    seed: int | None
    kinds: list[KindStatistics]
    stages: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"statistics_of": self.statistics_of, "praib_version": __version__, "input": self.input,
                "output": self.output, "seed": self.seed, "stages": self.stages,
                "kinds": {stats.kind: stats.to_dict() for stats in self.kinds}, **self.extra}


def statistics_path(output) -> Any:
    """Where a run's statistics go: ``OUTPUT.stats.json`` beside its output."""
    return output.with_name(output.name + ".stats.json")





# ---------------------------------------------------------------------------------------------------------------
# counterfactual datasets: the counterfactual study's Tables 2 and 3
# ---------------------------------------------------------------------------------------------------------------

#: The categories of the counterfactual study's Table 3, by ``perturbation.category``: CFCR and CFNE.
CATEGORIES = {"soundness-critical": "CFCR", "soundness-neutral": "CFNE"}


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _std(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    return (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5


def _spread(values: Sequence[float]) -> dict[str, Any]:
    return {"mean": _mean(values), "std": _std(values), "n": len(values)}


def counterfactual_statistics(papers: Sequence[dict], variants: Sequence[dict],
                              logic: Sequence[dict] | None = None) -> dict[str, Any]:
    """The counterfactual study's dataset statistics of ``variants`` (paper rows with a ``perturbation``) of
    ``papers`` (their originals), with the research ``logic`` records where given.

    ``papers``: how many originals were given and how many have a variant (the study's dataset: papers without
    one are left out of it), those by venue and their mean and SD per venue, and from the logic the paper types
    (``goal.genre``, which the UKP release's blueprints give and praib's own extraction does not), papers per type
    and findings per paper. ``counterfactuals``:
    per category (soundness-critical, soundness-neutral) and in total, the variants, variants per paper with a
    variant, and per variant the mean and sample SD of its edits and words changed against its original
    (:func:`count_edits`)."""
    originals = {str(row["paper_id"]): row for row in papers}
    unknown = sorted({str(v["paper_id"]) for v in variants} - set(originals))
    if unknown:
        raise ValueError(f"variants of papers not given: {', '.join(unknown[:5])}{', ...' if len(unknown) > 5 else ''}")
    with_variant = sorted({str(v["paper_id"]) for v in variants})
    by_venue: dict[str, int] = {}
    for paper_id in with_variant:
        venue = str(originals[paper_id].get("venue") or "unknown")
        by_venue[venue] = by_venue.get(venue, 0) + 1
    counts = {name: [] for name in (*CATEGORIES, "total")}
    for variant in variants:
        category = (variant.get("perturbation") or {}).get("category")
        edit = count_edits(originals[str(variant["paper_id"])].get("text"), variant.get("text"))
        for name in (category, "total"):
            if name in counts:
                counts[name].append(edit)
    chosen = [row for row in (logic or []) if str(row["paper_id"]) in set(with_variant)]
    genres: dict[str, int] = {}
    for row in chosen:
        genre = (row.get("goal") or {}).get("genre")
        if genre:
            genres[genre] = genres.get(genre, 0) + 1
    findings = [len(row.get("findings") or []) for row in chosen]
    return {
        "papers": {"given": len(originals), "with_variants": len(with_variant),
                   "by_venue": dict(sorted(by_venue.items())), "per_venue": _spread(list(by_venue.values())),
                   "with_logic": len(chosen), "paper_types": len(genres) if genres else None,
                   "by_paper_type": dict(sorted(genres.items())) or None,
                   "per_paper_type": _spread(list(genres.values())) if genres else None,
                   "findings_per_paper": _spread(findings)},
        "counterfactuals": {name: {
            "variants": len(edits),
            "per_paper": len(edits) / len(with_variant) if with_variant else None,
            "edits": {"mean": _mean([e.edits for e in edits]), "std": _std([e.edits for e in edits])},
            "words": {"mean": _mean([e.words for e in edits]), "std": _std([e.words for e in edits])},
        } for name, edits in counts.items()},
    }


__all__ = ["CATEGORIES", "COUNTERFACTUAL_BUILD", "COUNTERFACTUAL_STATS", "PERTURB", "EditCount", "KindStatistics",
           "PerturbationStatistics", "Spread", "count_edits", "counterfactual_statistics", "family_statistics", "kind_statistics",
           "llm_edit_counts", "record_edits", "seconds", "statistics_path", "stopwatch"]
