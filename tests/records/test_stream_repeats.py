"""StreamRepeats, which finds repeats in a stream batch by batch from hashes, finds what the in-memory policy
(`drop_duplicates`, which compares whole records) finds: the same rows kept, in order, the same error or warning;
and its content hash tells apart two records that differ in any one field."""

import logging
import random

import pytest

from praib.records import duplicates
from praib.records.duplicates import StreamRepeats, drop_duplicates
from praib.records.io import coerce_record
from praib.records.schema import SCHEMAS, RecordError

GENERATION = {"backend": "vllm", "model_revision": "abc123", "template": "guidelines", "temperature": 0.7,
              "top_p": 0.95, "max_new_tokens": 2048, "seed": 11, "knowledge_cutoff": "2023-04",
              "paper_tokens": 9000, "paper_truncated": False, "appendix_removed": True}
PERTURBATION = {"kind": "swap-results", "category": "soundness-critical", "component": "paper",
                "description": "Table 2's columns swapped", "seed": 3}
WRITTEN = {"text": "The method is sound.", "rating": 6, "confidence": 4,
           "subscores": [{"name": "soundness", "value": 3}, {"name": "clarity", "value": 2}],
           "recommendation": "accept", "parse_status": "ok", "parse_reason": "all fields",
           "generation": GENERATION, "perturbation": PERTURBATION}
# A record of each kind with every field of its schema given.
FULL = {
    "review": {"review_id": "r1", "paper_id": "p1", "venue": "ICLR", "year": 2024, "decision": "Accept",
               "source": "gpt", "model": "gpt-4o", "prompt": "guidelines", "reviewer_id": "R1",
               "summary": "A summary.", "strengths": "Clear.", "weaknesses": "Small data.", "questions": "Why?",
               "limitations": "None stated.", "additional_feedback": "Typos.", **WRITTEN},
    "meta_review": {"meta_review_id": "m1", "paper_id": "p1", "venue": "ICLR", "year": 2024, "source": "gpt",
                    "model": "gpt-4o", "prompt": "ac", **WRITTEN},
    "paper": {"paper_id": "p1", "venue": "ICLR", "year": 2024, "title": "A title", "abstract": "An abstract.",
              "keywords": ["graphs", "robustness"], "decision": "Accept", "text": "Body.", "text_tokens": 900,
              "text_truncated": True, "perturbation": PERTURBATION},
    "rebuttal": {"rebuttal_id": "b1", "paper_id": "p1", "review_id": "r1", "venue": "ICLR", "year": 2024,
                 "source": "authors", "text": "We added it.", "perturbation": PERTURBATION},
}


def changed(value):
    """Another value of the same type."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, list) and value and isinstance(value[0], dict):  # sub-scores
        return [{**value[0], "value": value[0]["value"] + 1}, *value[1:]]
    return [*value, "more"]


def variants(kind):
    """(field, record) for each field and sub-field of ``kind``'s schema: FULL[kind] with that one changed."""
    base = FULL[kind]
    assert set(base) == set(SCHEMAS[kind][0])
    for name, value in base.items():
        if isinstance(value, dict):
            for sub, sub_value in value.items():
                yield f"{name}.{sub}", {**base, name: {**value, sub: changed(sub_value)}}
            yield f"{name} none", {**base, name: None}
        else:
            yield name, {**base, name: changed(value)}
    if "subscores" in base:
        yield "subscores name", {**base, "subscores": [{"name": "rigour", "value": 3}, *base["subscores"][1:]]}
        yield "subscores order", {**base, "subscores": base["subscores"][::-1]}
        yield "subscores fewer", {**base, "subscores": base["subscores"][:1]}


@pytest.mark.parametrize("kind", list(FULL))
def test_two_records_that_differ_in_any_one_field_are_told_apart(kind):
    base = coerce_record(FULL[kind], kind, "base")
    id_field = SCHEMAS[kind][2]
    told = 0
    for field, variant in variants(kind):
        other = coerce_record(variant, kind, field)
        assert other != base, field
        repeats = StreamRepeats(kind)
        assert repeats.fresh([base]) + repeats.fresh([other]) == [base, other], field
        same_identity = field not in (id_field, "perturbation.kind", "perturbation.seed", "perturbation none")
        if same_identity:
            with pytest.raises(RecordError, match="1 id repeats with different content"):
                repeats.finish("input")
        else:
            repeats.finish("input")
        told += 1
    assert told >= len(SCHEMAS[kind][0])
    repeats = StreamRepeats(kind)
    assert repeats.fresh([base]) + repeats.fresh([dict(base)]) == [base]


def stream(seed, count):
    """Reviews with exact repeats near and far, conflicting repeats, and perturbed variants that share an id."""
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        roll = rng.random()
        if rows and roll < 0.03:
            rows.append(dict(rng.choice(rows)))  # an exact repeat, anywhere earlier
        elif rows and roll < 0.035:
            rows.append({**rng.choice(rows), "rating": rng.randint(11, 12)})  # the same identity, another content
        else:
            raw = {"review_id": f"r{i}", "paper_id": f"p{i // 4}", "source": "human", "rating": rng.randint(1, 10),
                   "summary": f"Summary {i}.", "soundness": rng.randint(1, 4)}
            if roll > 0.9:
                raw = {**raw, "review_id": f"r{rng.randrange(max(i, 1))}",
                       "perturbation": {"kind": rng.choice(["swap", "typo"]), "seed": rng.randint(0, 2)}}
            rows.append(coerce_record(raw, "review", f"line {i}"))
    return rows


def in_batches(rows, rng):
    start = 0
    while start < len(rows):
        size = rng.choice([1, 3, 64, 256, 700])
        yield rows[start:start + size]
        start += size


@pytest.mark.parametrize("seed", range(6))
def test_a_stream_gives_what_the_whole_input_gives(seed, monkeypatch, caplog):
    # A small filter, so that it fills and is made anew many times within the stream.
    monkeypatch.setattr(duplicates._SeenFilter, "FIRST_CAPACITY", 4)
    rows = stream(seed, 6000 if seed < 3 else 3000)
    if seed % 2:  # without conflicting repeats: the kept rows and the warning
        first = {}
        rows = [row for row in rows if first.setdefault(("id", row["review_id"], str(row["perturbation"])),
                                                        row) == row]
    repeats = StreamRepeats("review")
    kept = [row for batch in in_batches(rows, random.Random(seed)) for row in repeats.fresh(batch)]
    caplog.set_level(logging.WARNING)
    try:
        expected, error = drop_duplicates(rows, "review", "input"), None
    except RecordError as raised:
        expected, error = None, str(raised)
    expected_warnings = [record.getMessage() for record in caplog.records]
    caplog.clear()
    if error is None:
        repeats.finish("input")
        assert kept == expected
        assert [record.getMessage() for record in caplog.records] == expected_warnings
        assert expected_warnings  # the stream holds exact repeats
    else:
        with pytest.raises(RecordError) as raised:
            repeats.finish("input")
        assert str(raised.value) == error


def test_a_repeat_of_the_first_record_is_found_after_a_quarter_million_others():
    repeats = StreamRepeats("rebuttal")
    first = coerce_record({"rebuttal_id": "b0", "paper_id": "p0", "text": "We thank the reviewer."}, "rebuttal", "")
    assert repeats.fresh([first]) == [first]
    for start in range(1, 250_001, 4096):
        batch = [{**first, "rebuttal_id": f"b{i}"} for i in range(start, start + 4096)]
        assert len(repeats.fresh(batch)) == 4096
    assert repeats.fresh([dict(first), {**first, "text": "Other."}]) == [{**first, "text": "Other."}]
    with pytest.raises(RecordError, match="^input: field 'rebuttal_id': 1 id repeats with different content: b0$"):
        repeats.finish("input")
