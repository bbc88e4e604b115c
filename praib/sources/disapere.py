"""DISAPERE as a gold set for validating a judge (``praib judge validate --gold disapere:PATH``).

DISAPERE (Kennard et al., NAACL 2022; CC BY-NC 4.0) labels every sentence of 506 ICLR 2019 and 2020
reviews with, among others, the aspect of the paper it is about and its polarity. praib never ships
it: the adapter reads a local copy, the release's ``disapere_review_rebuttal_pairs.jsonl`` (one review
and its rebuttal a line; each of its ``review_sentences`` has ``text``, ``aspect`` and ``polarity``),
given as the file or the folder holding it. Every split (train, dev, test) is read.

* ``polarity`` items: every review sentence with a polarity (evaluative sentences and requests):
  positive is a strength, negative a weakness.
* ``aspect`` items: the sentences with both an aspect and a polarity, the polarity choosing the
  template (``aspect_strength`` or ``aspect_weakness``) and :data:`ASPECT_TABLE` mapping the aspect
  onto praib's codebook (``praib.metrics.judged.target_aspect.ASPECTS``). An aspect without a
  counterpart, and an aspect without a polarity, are left out and counted.

DISAPERE has no targets, no maths verdicts, no atoms and no coverage pairs: the other tasks need a
gold file of one's own.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from praib.metrics.judged.validation import GoldItem, GoldSet
from praib.records.io import iter_jsonl
from praib.records.schema import RecordError

__all__ = ["ASPECT_TABLE", "POLARITY_KINDS", "FILENAME", "PREFIX", "read_disapere"]

PREFIX = "disapere:"
FILENAME = "disapere_review_rebuttal_pairs.jsonl"
TASKS = ("aspect", "polarity")

#: DISAPERE's aspect -> praib's aspect (None: no counterpart, left out), and why. praib's aspects are
#: Impact, Novelty, Clarity, Validity (soundness, completeness, rigour: weak evidence, missing baselines
#: or ablations, unsupported claims), Not-specific and Irrelevant; DISAPERE has none of the last two.
ASPECT_TABLE: dict[str, tuple[str | None, str]] = {
    "asp_clarity": ("Clarity", "how clear and well written the paper is"),
    "asp_originality": ("Novelty", "new ideas, methods or insights"),
    "asp_motivation-impact": ("Impact", "whether the problem matters and the work will have an effect"),
    "asp_soundness-correctness": ("Validity", "whether the approach is sound and the claims supported"),
    "asp_substance": ("Validity", "enough experiments and analysis: completeness of the evidence"),
    "asp_meaningful-comparison": ("Validity", "fair and sufficient comparison with prior work: missing baselines"),
    "asp_replicability": (None, "reproducibility sits between Clarity (details) and Validity (rigour)"),
    "arg_other": (None, "DISAPERE's 'other' aspect names no quality"),
}
NO_LABEL = "none"
POLARITY_KINDS = {"pol_positive": "strength", "pol_negative": "weakness"}


def _source_file(path: Path) -> Path:
    if path.is_dir():
        if not (path / FILENAME).is_file():
            raise RecordError(str(path), None, f"expected DISAPERE's {FILENAME} in this folder")
        return path / FILENAME
    return path


def _field(value: dict, name: str, kind: type, where: str, label: str) -> Any:
    found = value.get(name)
    if not isinstance(found, kind) or isinstance(found, bool):
        raise RecordError(where, label, f"expected {kind.__name__} (DISAPERE's review-rebuttal pairs), found "
                                        f"{type(found).__name__ if found is not None else 'nothing'}")
    return found


def read_disapere(path: str | Path, task: str) -> GoldSet:
    """The ``task`` items (``aspect`` or ``polarity``) of the DISAPERE release at ``path``.

    ``summary`` holds DISAPERE's own counts over all its review sentences (``sentences``, ``reviews``,
    ``aspects`` and ``polarities`` as DISAPERE names them) and ``yielded``, the items per praib label;
    ``left_out`` counts the labelled sentences the task cannot use, by reason. A line that is not a
    review of DISAPERE's release is a :class:`~praib.records.RecordError` naming the file and line.
    """
    if task not in TASKS:
        raise ValueError(f"DISAPERE labels aspect and polarity, not {task}: give --task aspect or --task polarity, "
                         "or a gold file of your own")
    source = _source_file(Path(path))
    items: list[GoldItem] = []
    aspects: Counter = Counter()
    polarities: Counter = Counter()
    left_out: Counter = Counter()
    reviews = sentences = 0
    for where, review in iter_jsonl(source):
        if not isinstance(review, dict):
            raise RecordError(where, None, f"expected a JSON object (a review of DISAPERE), got {type(review).__name__}")
        review_id = _field(review, "review_id", str, where, "review_id")
        reviews += 1
        for number, sentence in enumerate(_field(review, "review_sentences", list, where, "review_sentences")):
            label = f"review_sentences[{number}]"
            if not isinstance(sentence, dict):
                raise RecordError(where, label, f"expected a sentence object, got {type(sentence).__name__}")
            text = _field(sentence, "text", str, where, f"{label}.text").strip()
            aspect = _field(sentence, "aspect", str, where, f"{label}.aspect")
            polarity = _field(sentence, "polarity", str, where, f"{label}.polarity")
            if aspect != NO_LABEL and aspect not in ASPECT_TABLE:
                raise RecordError(where, f"{label}.aspect", f"unknown DISAPERE aspect {aspect!r}; known: "
                                                            f"{', '.join(ASPECT_TABLE)}, {NO_LABEL}")
            if polarity != NO_LABEL and polarity not in POLARITY_KINDS:
                raise RecordError(where, f"{label}.polarity", f"unknown DISAPERE polarity {polarity!r}; known: "
                                                              f"{', '.join(POLARITY_KINDS)}, {NO_LABEL}")
            sentences += 1
            aspects[aspect] += 1
            polarities[polarity] += 1
            item_id = f"{review_id}/{sentence.get('sentence_index', number)}"
            kind = POLARITY_KINDS.get(polarity)
            if task == "polarity":
                if kind is not None:
                    items.append(GoldItem(item_id, text, kind))
                continue
            if aspect == NO_LABEL:
                continue
            if ASPECT_TABLE[aspect][0] is None:
                left_out[f"{aspect} (no counterpart)"] += 1
            elif kind is None:
                left_out["aspect without a polarity"] += 1
            else:
                items.append(GoldItem(item_id, text, ASPECT_TABLE[aspect][0], kind=kind))
    if not items:
        raise RecordError(str(source), None, f"holds no DISAPERE sentence with {'an aspect and ' * (task == 'aspect')}"
                                             "a polarity")
    summary = {"reviews": reviews, "sentences": sentences, "aspects": dict(aspects.most_common()),
               "polarities": dict(polarities.most_common()),
               "yielded": dict(Counter(item.label for item in items).most_common())}
    return GoldSet("DISAPERE", f"{PREFIX}{path}", task, items, dict(left_out), summary)
