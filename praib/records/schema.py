"""Record schemas: papers, reviews, meta-reviews and rebuttals as explicit ``datasets.Features``.

Every record set is a :class:`datasets.Dataset` with one of the ``*_FEATURES`` schemas below;
:mod:`praib.records.io` reads and writes them.
"""

from __future__ import annotations

from datasets import Features, List, Value

REVIEW_SECTIONS = ("summary", "strengths", "weaknesses", "questions", "limitations", "additional_feedback")
HUMAN_SOURCE = "human"
# The perturbation categories whose average treatment effects PRAIB compares (paper 4).
CRITICAL, NEUTRAL = "soundness-critical", "soundness-neutral"

# parse_status values: fields came with the record / parsed with every field the
# format asks for / parsed but something is missing or rejected / nothing usable.
PARSE_GIVEN, PARSE_OK, PARSE_PARTIAL, PARSE_FAILED = "given", "ok", "partial", "failed"

_SUBSCORES = List({"name": Value("string"), "value": Value("int32")})

# How a model-written record was produced (None for human records): enough to rerun it.
GENERATION_FEATURES = {
    "backend": Value("string"),
    "model_revision": Value("string"),
    "template": Value("string"),
    "temperature": Value("float64"),
    "top_p": Value("float64"),
    "max_new_tokens": Value("int32"),
    "seed": Value("int64"),
    "knowledge_cutoff": Value("string"),
    "paper_tokens": Value("int32"),
    "paper_truncated": Value("bool"),
    "appendix_removed": Value("bool"),
}

# What was changed in a perturbed or counterfactual record (None for an original). A perturbed
# record keeps the paper_id of its original, so originals and variants pair by paper; a review
# written of a perturbed paper (or a meta-review given a perturbed input) carries the same value.
PERTURBATION_FEATURES = {
    "kind": Value("string"),         # the edit's name, as `praib perturb --list` gives it
    "category": Value("string"),     # e.g. soundness-critical, soundness-neutral, presentation, injection
    "component": Value("string"),    # the record kind that was edited: paper, review, rebuttal
    "description": Value("string"),  # what the edit did, in words
    "seed": Value("int64"),
}

# What reviews and meta-reviews share: the text, the scores read from it, how it was parsed, and how it
# was made or edited.
_WRITTEN_ASSESSMENT = {
    "text": Value("string"),
    "rating": Value("int32"),
    "confidence": Value("int32"),
    "subscores": _SUBSCORES,
    "recommendation": Value("string"),
    "parse_status": Value("string"),
    "parse_reason": Value("string"),
    "generation": GENERATION_FEATURES,
    "perturbation": PERTURBATION_FEATURES,
}

REVIEW_FEATURES = Features({
    "review_id": Value("string"),
    "paper_id": Value("string"),
    "venue": Value("string"),
    "year": Value("int32"),
    "decision": Value("string"),
    "source": Value("string"),
    "model": Value("string"),
    "prompt": Value("string"),
    "reviewer_id": Value("string"),
    **{name: Value("string") for name in REVIEW_SECTIONS},
    **_WRITTEN_ASSESSMENT,
})

PAPER_FEATURES = Features({
    "paper_id": Value("string"),
    "venue": Value("string"),
    "year": Value("int32"),
    "title": Value("string"),
    "abstract": Value("string"),
    "keywords": List(Value("string")),
    "decision": Value("string"),
    "text": Value("string"),
    # Set when the text was converted and cut to a token budget (`praib data pdf`): the tokens
    # kept and whether anything was cut, so a reader knows the paper is not whole.
    "text_tokens": Value("int32"),
    "text_truncated": Value("bool"),
    "perturbation": PERTURBATION_FEATURES,
})

META_REVIEW_FEATURES = Features({
    "meta_review_id": Value("string"),
    "paper_id": Value("string"),
    "venue": Value("string"),
    "year": Value("int32"),
    "source": Value("string"),
    "model": Value("string"),
    "prompt": Value("string"),
    **_WRITTEN_ASSESSMENT,
})

REBUTTAL_FEATURES = Features({
    "rebuttal_id": Value("string"),
    "paper_id": Value("string"),
    "review_id": Value("string"),
    "venue": Value("string"),
    "year": Value("int32"),
    "source": Value("string"),
    "text": Value("string"),
    "perturbation": PERTURBATION_FEATURES,
})

SCHEMAS: dict[str, tuple[Features, tuple[str, ...], str]] = {
    # kind: (features, required fields, id field)
    "review": (REVIEW_FEATURES, ("paper_id", "source"), "review_id"),
    "paper": (PAPER_FEATURES, ("paper_id",), "paper_id"),
    "meta_review": (META_REVIEW_FEATURES, ("paper_id", "source"), "meta_review_id"),
    "rebuttal": (REBUTTAL_FEATURES, ("paper_id",), "rebuttal_id"),
}


#: The fields that identify records or join and group them: their values are ids (see
#: :func:`praib.records.ids.canonical_id`).
IDENTITY_FIELDS = ("review_id", "paper_id", "meta_review_id", "rebuttal_id", "reviewer_id", "source", "model",
                   "prompt")


class RecordError(ValueError):
    """A record that does not fit its schema; the message says where and why."""

    def __init__(self, where: str, field: str | None, problem: str):
        self.where, self.field, self.problem = where, field, problem
        super().__init__(f"{where}: field '{field}': {problem}" if field else f"{where}: {problem}")

    def __reduce__(self):
        # Rebuilt from its three parts, so an error raised in a worker process reaches the parent whole.
        return type(self), (self.where, self.field, self.problem)


class OutputWriteError(OSError):
    """Writing an output failed (a full disk, a read-only file system, no permission). Made like an
    OSError, ``OutputWriteError(errno, strerror, path)``, with ``path`` the output the user named; the
    message is one line naming it."""

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror}"


def perturbation_kind(row: dict) -> str | None:
    """The kind of edit a record carries, None for an original."""
    return (row.get("perturbation") or {}).get("kind")
