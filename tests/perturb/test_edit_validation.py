"""Every LLM edit is checked before it is accepted: garbage, an unchanged answer and a runaway answer are
asked again, then rejected and recorded; a good rewrite is applied. Stub models per kind, and the tiny
random-weight model of tests/tiny_model.py for what a real garbage answer looks like."""

import json
import re
from fnmatch import fnmatch

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.llm.backends import SamplingConfig, make_backend
from praib.llm.cache import CachedBackend, CallCache
from praib.llm.judge import Judge
from praib.perturb.counterfactual import ProjectionError, apply_edits, build_counterfactuals, critical_counterfactuals
from praib.perturb.logic import logic_features, table
from praib.perturb.registry import apply_perturbation, list_perturbations
from praib.perturb.reviews import generate_claim_buckets
from praib.perturb.validation import EDIT_BOUNDS, EditTally, check_edit, word_overlap
from praib.records import coerce_record, records_to_dataset
from tests.doubles import StubBackend
from tests.paths import DEMO, ROOT

PAPER_UNIT = ("We train a 5-layer CNN as in Lee et al. (2020) with batch size 64 and seed 3, "
              "and we report the mean over five runs.")
REVIEW_UNIT = "The evaluation seems limited to two datasets, and the baselines are from 2019."
REBUTTAL_UNIT = "We added Table 3 with five seeds and a paired t-test, as the reviewer asked."

# kind: (the unit's text, the heading of its section (paper span kinds), a good edit, the documented
# highest length ratio, the template stem the failure records name)
KINDS = {
    "voice": (PAPER_UNIT, None, "A 5-layer CNN is trained by us as in Lee et al. (2020) with batch size 64 and "
              "seed 3, and the mean over five runs is reported.", "1.6", "paper_voice"),
    "presentation": (PAPER_UNIT, "2 Method", "We trian a 5-layer CNN as in Lee et al. (2020) with batch size 64 "
                     "and seed 3, and we reports the mean over five run.", "2", "paper_presentation"),
    "contribution": (PAPER_UNIT, "1 Introduction", "We are the first to train a 5-layer CNN with batch size 64 and "
                     "seed 3, and we report the mean over five runs.", "3", "paper_contribution"),
    "overclaim-novelty": (PAPER_UNIT, "1 Introduction", "We are the first to train a 5-layer CNN with batch size 64 "
                          "and seed 3, and we report the mean over five runs.", "3", "paper_overclaim_novelty"),
    "drop-citations": (PAPER_UNIT, "1 Introduction", "We train a 5-layer CNN with batch size 64 and seed 3, and we "
                       "report the mean over five runs.", "1.2", "paper_drop_citations"),
    "remove-details": (PAPER_UNIT, "2 Method", "We train a CNN, and we report the mean over several runs.", "1.2",
                       "paper_remove_details"),
    "review-tone": (REVIEW_UNIT, None, "The fatally flawed evaluation is, admirably, limited to two toy datasets, "
                    "and the baselines are embarrassingly outdated.", "3", "review_tone"),
    "tone-dismissive": (REVIEW_UNIT, None, "The evaluation is fatally limited to two toy datasets, and the "
                        "baselines are embarrassingly outdated.", "3", "review_tone_dismissive"),
    "tone-sarcastic": (REVIEW_UNIT, None, "The evaluation is, admirably, limited to two datasets, and the "
                       "baselines are vintage classics from 2019.", "3", "review_tone_sarcastic"),
    "rebuttal-tone": (REBUTTAL_UNIT, None, "We added Table 3 with five seeds and a paired t-test, as the reviewer "
                      "would know had they read the paper.", "3", "rebuttal_tone"),
    "rebuttal-presentation": (REBUTTAL_UNIT, None, "We addded Table 3 with five seed and a paired t-test, as the "
                              "reviewer asked us.", "2", "rebuttal_presentation"),
    "rebuttal-completeness": (REBUTTAL_UNIT, None, "We will consider this suggestion in future work.", "2",
                              "rebuttal_completeness"),
}
GARBAGE = "zq xv kk pq ww " * 8
SPAN_FORMAT = "the answer names no span in the format asked for (Start Words, Ending Words, Edited Text Span)"
RETRY_NOTE = "rejected by an automatic check:\n- "


def span_answer(start, end, edited):
    return f"1. Text Span to Edit\n- Start Words: {start}\n- Ending Words: {end}\n2. Edited Text Span\n{edited}\n"


def paper_text(kind):
    unit, heading = KINDS[kind][:2]
    return f"# Fast Graphs\n\n## {heading}\n{unit}\n" if heading else f"# Fast Graphs\n\n{unit}\n"


def records(kind, text=None):
    component = next(p.component for p in list_perturbations() if p.name == kind)
    unit = text or KINDS[kind][0]
    if component == "paper":
        row = {"paper_id": "p1", "venue": "ICLR", "year": 2025, "title": "Fast Graphs", "text": text or paper_text(kind)}
    elif component == "review":
        row = {"paper_id": "p1", "review_id": "r1", "source": "human", "text": unit}
    else:
        row = {"rebuttal_id": "b1", "paper_id": "p1", "review_id": "r1", "source": "authors", "text": unit}
    return records_to_dataset([coerce_record(row, component, "test")], component)


def answer(kind, edited):
    """What the model says to rewrite the kind's unit as ``edited``: the paragraph itself for voice, else
    a span edit from the unit's first three words to its last two."""
    if kind == "voice":
        return edited
    words = KINDS[kind][0].split()
    return span_answer(" ".join(words[:3]), " ".join(words[-2:]), edited)


def apply(kind, backend, **options):
    judge = Judge(backend)
    extra = {"fraction": 1.0} if kind == "voice" else {}
    out = apply_perturbation(kind, records(kind), judge=judge, **extra, **options)
    return out[0], judge.failures


def unit_name(kind):
    heading = KINDS[kind][1]
    if kind == "voice":
        return f"p1/paragraph at {len('# Fast Graphs' + chr(10) * 2)}"
    return f"p1/section {heading}" if heading else ("b1" if kind.startswith("rebuttal") else "r1")


def rejected_description(kind, reason):
    if kind == "voice":
        return f"0 of 1 paragraphs rewritten between active and passive voice; 1 paragraph rejected: {reason}"
    if KINDS[kind][1]:
        return f"unchanged: 1 section rejected: {reason}"
    return f"unchanged: the edit was rejected: {reason}"


def accepted_description(kind):
    if kind == "voice":
        return "1 of 1 paragraphs rewritten between active and passive voice"
    if KINDS[kind][1]:
        return f"1 span rewritten in 1 of 1 targeted sections ({KINDS[kind][1]})"
    return "1 span rewritten in the text"


def test_every_llm_kind_has_documented_bounds():
    llm_kinds = {p.name for p in list_perturbations() if p.needs_llm}
    assert llm_kinds == set(KINDS) and llm_kinds <= set(EDIT_BOUNDS)
    assert {kind: f"{EDIT_BOUNDS[kind].length_ratio[1]:g}" for kind in KINDS} == {k: v[3] for k, v in KINDS.items()}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_garbage_answer_is_asked_again_then_rejected_and_recorded(kind):
    backend = StubBackend([GARBAGE])
    row, failures = apply(kind, backend)
    # garbage shares no word with the paragraph; for span edits it is not even in the answer format
    reason = "word overlap 0.00 below 0.5" if kind == "voice" else SPAN_FORMAT
    assert row["text"] == records(kind)[0]["text"]
    assert row["perturbation"]["description"] == rejected_description(kind, reason)
    assert len(backend.prompts) == 2 and RETRY_NOTE + reason in backend.prompts[1]
    assert RETRY_NOTE not in backend.prompts[0]
    [failed] = failures.items
    assert (failed.item_id, failed.stage, failed.error, failed.tries, failed.raw) == (
        unit_name(kind), f"perturb:{KINDS[kind][4]}", "RejectedEdit", 2, GARBAGE)
    assert failed.message == f"edit rejected after 2 answer(s): {reason}"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_answer_that_repeats_the_original_is_rejected(kind):
    backend = StubBackend([answer(kind, KINDS[kind][0])])
    row, failures = apply(kind, backend)
    reason = ("the answer repeats the original unchanged" if kind == "voice"
              else "the answer changes none of the spans it names")
    assert row["text"] == records(kind)[0]["text"]
    assert row["perturbation"]["description"] == rejected_description(kind, reason)
    assert [f.error for f in failures.items] == ["RejectedEdit"] and len(backend.prompts) == 2


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_runaway_answer_is_rejected_for_its_length(kind):
    unit = KINDS[kind][0]
    long = " ".join([unit] * 4)
    backend = StubBackend([answer(kind, long)])
    row, failures = apply(kind, backend)
    reason = f"length ratio {(4 * len(unit) + 3) / len(unit):.2f} above {KINDS[kind][3]}"
    if kind != "voice":
        words = unit.split()
        reason = f"span {' '.join(words[:3])!r}...{' '.join(words[-2:])!r}: {reason}"
    assert row["text"] == records(kind)[0]["text"]
    assert row["perturbation"]["description"] == rejected_description(kind, reason)
    assert [f.message for f in failures.items] == [f"edit rejected after 2 answer(s): {reason}"]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_good_rewrite_is_accepted_at_once(kind):
    unit, good = KINDS[kind][0], KINDS[kind][2]
    backend = StubBackend([answer(kind, good)])
    row, failures = apply(kind, backend)
    assert row["text"] == records(kind)[0]["text"].replace(unit, good)
    assert row["perturbation"]["description"] == accepted_description(kind)
    assert len(backend.prompts) == 1 and failures.items == [] and failures.tried == 1


@pytest.mark.parametrize("kind", sorted(k for k in KINDS if k != "voice" and EDIT_BOUNDS[k].min_overlap is not None))
def test_noise_in_the_span_format_is_rejected_for_its_word_overlap(kind):
    row, failures = apply(kind, StubBackend([answer(kind, GARBAGE.strip()[:len(KINDS[kind][0])])]))
    assert row["text"] == records(kind)[0]["text"]
    assert failures.items[0].message.endswith(f"word overlap 0.00 below {EDIT_BOUNDS[kind].min_overlap:g}")


def test_a_rejected_edit_is_retried_with_its_reason_and_the_retry_is_cached(tmp_path):
    kind, good = "voice", KINDS["voice"][2]
    inner = StubBackend(lambda request: good if RETRY_NOTE in request.messages[-1][1] else GARBAGE)
    results = []
    for _ in range(2):
        judge = Judge(CachedBackend(inner, CallCache(tmp_path)))
        results.append(apply_perturbation(kind, records(kind), judge=judge, fraction=1.0).to_list())
        assert judge.failures.items == []
    assert len(inner.prompts) == 2  # the first answer and the retry; the rerun is served from the cache
    assert RETRY_NOTE + "word overlap 0.00 below 0.5" in inner.prompts[1]
    assert results[0] == results[1]
    assert results[0][0]["text"] == paper_text(kind).replace(PAPER_UNIT, good)
    assert results[0][0]["perturbation"]["description"] == accepted_description(kind)


def test_max_tries_bounds_the_answers_asked():
    backend = StubBackend([GARBAGE])
    row, failures = apply("tone-dismissive", backend, max_tries=3)
    assert len(backend.prompts) == 3 and failures.items[0].tries == 3
    assert backend.prompts[2].count("\n- " + SPAN_FORMAT) == 2  # every earlier reason is shown
    backend = StubBackend([GARBAGE])
    apply("tone-dismissive", backend, max_tries=1)
    assert len(backend.prompts) == 1
    with pytest.raises(ValueError, match="max_tries must be at least 1, got 0"):
        apply("tone-dismissive", StubBackend([GARBAGE]), max_tries=0)


def test_a_span_edit_may_not_cover_a_table():
    text = ("# Fast Graphs\n\n## 2 Method\nWe train a CNN.\n\n| Model | Acc |\n|---|---|\n| CNN | 91.2 |\n\n"
            "The CNN wins.\n")
    backend = StubBackend([span_answer("We train", "CNN wins.", "We train a CNN, which wins.")])
    out = apply_perturbation("presentation", records("presentation", text), judge=Judge(backend))[0]
    assert out["text"] == text
    assert out["perturbation"]["description"] == (
        "unchanged: 1 section rejected: span 'We train'...'CNN wins.' covers a table, which the edit may not touch")


def test_one_out_of_bounds_span_rejects_the_whole_answer_and_missing_spans_are_skipped():
    good, runaway = span_answer("The evaluation", "datasets,", "The evaluation is fatally narrow,"), span_answer(
        "the baselines", "2019.", "the baselines " + "are old " * 20)
    backend = StubBackend([good + runaway])
    row, failures = apply("tone-dismissive", backend)
    assert row["text"] == REVIEW_UNIT and failures.items[0].error == "RejectedEdit"
    backend = StubBackend([good + span_answer("Not in", "the review", "x")])
    row, failures = apply("tone-dismissive", backend)
    assert row["text"] == "The evaluation is fatally narrow, and the baselines are from 2019."
    assert row["perturbation"]["description"] == "1 span rewritten in the text; 1 span named by the model not found"
    assert failures.items == []


def test_voice_keeps_maths_and_one_paragraph():
    text = "# T\n\nWe bound the loss by $x^2$ and we prove the claim in Section 3.\n"
    for said, reason in (("The loss is bounded by us by x squared and the claim is proved in Section 3.",
                          "the protected span '$x^2$' (maths, code, URL, tag or citation key) is changed or missing"),
                         ("The loss is bounded by $x^2$.\n\nThe claim is proved by us in Section 3.",
                          "the answer is more than one paragraph")):
        out = apply_perturbation("voice", records("voice", text), judge=Judge(StubBackend([said])), fraction=1.0)[0]
        assert out["text"] == text and out["perturbation"]["description"].endswith(f"1 paragraph rejected: {reason}")


def test_a_paper_keeps_its_accepted_paragraphs_and_says_which_were_rejected():
    first, second = "We trained the model.", "The data was cleaned by us."
    text = f"# T\n\n{first}\n\n{second}\n"
    backend = StubBackend(lambda request: "The model was trained by us." if first in request.messages[-1][1] else GARBAGE)
    tally = EditTally()
    out = apply_perturbation("voice", records("voice", text), judge=Judge(backend), fraction=1.0, tally=tally)[0]
    assert out["text"] == f"# T\n\nThe model was trained by us.\n\n{second}\n"
    assert out["perturbation"]["description"] == ("1 of 2 paragraphs rewritten between active and passive voice; "
                                                  "1 paragraph rejected: length ratio 4.41 above 1.6")  # 119 / 27
    assert tally.describe() == "voice: 1 of 2 paragraphs accepted, 1 rejected"


def test_word_overlap_is_the_rouge1_f_measure_and_checks_run_in_order():
    # "we trained the model" against "the model was trained by us": 3 shared words, P = 3/6, R = 3/4
    assert word_overlap("We trained the model.", "The model was trained by us.") == pytest.approx(0.6)
    assert word_overlap("$$", "anything") is None
    bounds = EDIT_BOUNDS["voice"]
    assert check_edit(bounds, "We trained the model.", "  ") == "the answer is empty"
    assert check_edit(bounds, "We trained the model.", " We  trained the\nmodel. ") == (
        "the answer repeats the original unchanged")
    assert check_edit(bounds, "We trained the model.", "Trained.") == "length ratio 0.38 below 0.6"  # 8 / 21
    assert check_edit(bounds, "We trained the model.", "The model was trained by us.") is None


def test_a_projection_that_rewrites_its_paragraph_is_refused():
    text = "# T\n\nAccuracy rises with depth in every run.\n\nThe end.\n"
    edit = {"paragraph": "p2", "original": "rises with depth", "replacement": "falls"}
    assert apply_edits(text, [edit]) == text.replace("rises with depth", "falls")
    with pytest.raises(ProjectionError, match=r"^p2 as edited: word overlap 0\.00 below 0\.3$"):
        apply_edits(text, [{**edit, "original": "Accuracy rises with depth in every run.",
                            "replacement": "Nothing here is related."}])
    # 39 characters become 39 - 16 + 8 * 17 = 159
    with pytest.raises(ProjectionError, match=r"^p2 as edited: length ratio 4\.08 above 2$"):
        apply_edits(text, [{**edit, "replacement": "rises with depth " * 8}])
    with pytest.raises(ProjectionError, match="holds a blank line, which would split the paragraph"):
        apply_edits(text, [{**edit, "replacement": "falls.\n\nBut"}])


def test_false_claim_buckets_without_claims_are_rejected_and_recorded():
    papers = records("voice")
    judge = Judge(StubBackend([GARBAGE]))
    tally = EditTally()
    assert generate_claim_buckets(papers, judge, tally=tally) == {}
    [failed] = judge.failures.items
    assert (failed.item_id, failed.error, failed.message) == (
        "p1/false claims", "RejectedEdit", "edit rejected after 2 answer(s): the answer holds no 'False Claim: ...' line")
    assert tally.describe() == "false-claims: 0 of 1 claim buckets accepted, 1 rejected"


def test_perturb_command_counts_accepted_and_rejected_edits(tmp_path, monkeypatch):
    papers = tmp_path / "papers.jsonl"
    papers.write_text(json.dumps(records("voice", f"# T\n\n{PAPER_UNIT}\n\nWe trained the model.\n")[0]) + "\n")
    backend = StubBackend(lambda request: "The model was trained by us."
                          if "We trained the model." in request.messages[-1][1] else GARBAGE)
    monkeypatch.setattr("praib.llm.judge.make_judge", lambda *args, failures, **options: Judge(backend, failures=failures))
    output = tmp_path / "out.jsonl"
    result = CliRunner().invoke(main, ["perturb", "voice", str(papers), "--output", str(output), "--judge", "stub",
                                       "--perturbation-arg", "fraction=1.0", "--no-progress"])
    assert result.exit_code == 3, result.output
    assert re.search(r"voice: 1 of 1 paper records changed; LLM edits: voice: 1 of 2 paragraphs accepted, 1 rejected; "
                     rf"2 edits in 1 paper \(2 a paper\); [0-9.]+ s; wrote {re.escape(str(output))} and "
                     r"out.jsonl.stats.json", result.output), result.output
    stats = json.loads((tmp_path / "out.jsonl.stats.json").read_text())["kinds"]["voice"]
    assert stats["llm_edits"] == {"unit": "paragraph", "accepted": 1, "rejected": 1, "unanswered": 0}
    # "We trained the model." -> "The model was trained by us.": "trained" stays, the words around it are two edits.
    assert stats["llm_accepted_share"] == 0.5 and stats["edits_per_paper"] == {"p1": 2}
    [failed] = [json.loads(line) for line in (tmp_path / "out.jsonl.failures.jsonl").read_text().splitlines()]
    assert (failed["item_id"], failed["error"]) == ("p1/paragraph at 5", "RejectedEdit")


def test_garbage_from_a_random_model_is_rejected_and_recorded(tiny_model_dir):
    """The issue's case: a random-weight model's voice 'rewrites' must not become a soundness-neutral variant."""
    paragraphs = [f"We train model {i} on the data and the results are reported in Table {i}." for i in range(1, 5)]
    text = "# Fast Graphs\n\n" + "\n\n".join(paragraphs) + "\n"
    papers = records("voice", text)
    backend = make_backend("transformers", str(tiny_model_dir))
    judge = Judge(backend, SamplingConfig(max_new_tokens=24, temperature=0.0))
    tally = EditTally()
    result = build_counterfactuals(papers, judge, families=[], neutral_kinds=["voice"], progress=False, tally=tally)
    assert len(result.papers) == 0  # no variant: the paper is unchanged
    assert tally.describe() == "voice: 0 of 2 paragraphs accepted, 2 rejected"  # 40% of 4 paragraphs
    assert [f.error for f in judge.failures.items] == ["RejectedEdit"] * 2
    assert all(f.tries == 2 and f.raw for f in judge.failures.items)
    out = apply_perturbation("voice", papers, judge=Judge(backend, SamplingConfig(max_new_tokens=24, temperature=0.0)))
    assert out[0]["text"] == text
    assert out[0]["perturbation"]["description"].startswith(
        "0 of 4 paragraphs rewritten between active and passive voice; 2 paragraphs rejected: ")


def test_the_documented_table_gives_every_kind_its_bounds():
    readme = (ROOT / "docs" / "perturbations.md").read_text(encoding="utf-8")
    table = readme.split("| kind | one edit | length ratio |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table]
    for kind, bounds in EDIT_BOUNDS.items():
        [row] = [r for r in rows if any(fnmatch(kind, name) for name in r[0].split("`")[1::2])]
        assert bounds.unit in row[1]
        assert row[2] == "{:g}–{:g}".format(*bounds.length_ratio)
        assert row[3].split(" ")[0] == (f"{bounds.min_overlap:g}" if bounds.min_overlap is not None else "none")
        assert row[4] == ("yes" if bounds.keep_protected else "no")


def test_counterfactual_build_makes_no_neutral_variant_of_rejected_rewrites(tmp_path, monkeypatch):
    stub = StubBackend([GARBAGE])
    monkeypatch.setattr("praib.llm.judge.make_backend", lambda kind, name, **options: stub)
    output = tmp_path / "variants.jsonl"
    result = CliRunner().invoke(main, ["counterfactual", "build", str(DEMO / "papers.jsonl"), "-o", str(output),
                                       "--edits", "voice", "--judge", "stub", "--cache-dir", str(tmp_path / "cache"),
                                       "--no-progress"])
    # Nothing made is an error (issue 13, item 3): exit 1, one line, the failure records written all the same.
    assert result.exit_code == 1, result.output
    assert "changed nothing, left out: voice 8 of 8 papers" in result.output
    assert "Error: no variant written: every item failed (" in result.output and "RejectedEdit" in result.output
    assert not output.exists()
    failed = [json.loads(line) for line in (tmp_path / "variants.jsonl.failures.jsonl").read_text().splitlines()]
    assert failed and {f["error"] for f in failed} == {"RejectedEdit"}
    assert len(stub.prompts) == 2 * len(failed)


def test_a_logic_edit_that_restates_the_finding_unchanged_is_an_invalid_edit():
    finding = "Adapter sparsity correlates with translation quality."
    paper = records("voice", f"# Sparse Adapters\n\n{finding}\n")
    logic = table([{"paper_id": "p1", "goal": {"summary": "g", "paragraphs": ["p2"]},
                    "findings": [{"id": "F1", "rank": 1, "summary": finding, "paragraphs": ["p2"],
                                  "conclusions": []}],
                   "conclusions": [], "results": [], "model": "m", "attempts": 1, "contributions": None,
                   "method": None, "blueprint_extra": None}], logic_features())
    backend = StubBackend([json.dumps({"claim_type": "correlational", "edited_finding": f" {finding}"})])
    variants, attempts = critical_counterfactuals(paper, logic, Judge(backend), families=["finding"], progress=False)
    assert variants == [] and len(backend.prompts) == 1  # nothing to project
    assert [(a["status"], a["problem"]) for a in attempts] == [("invalid-edit", "the edit restates F1 unchanged")]
