"""`praib.generation.run` and `praib.generation.papers`: review generation end to end on CPU.

The stub backend of `tests/doubles.py` stands in where the model
does not matter; the tiny random-weight chat model of `tests/tiny_model.py` runs the real
transformers backend.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from praib.llm.backends import SamplingConfig, make_backend
from praib.llm.cache import CachedBackend, CallCache
from praib.llm.budget import find_tokenizer
from praib.generation.papers import (PaperError, PreparedPaper, approximate_tokens, find_appendix, load_papers,
                                     prepare_paper_text, prepare_papers, remove_appendix, tokenizer_counter)
from praib.generation.prompts import load_prompt
from praib.generation.run import generate_reviews, partial_path, run_generation
from praib.records import OutputWriteError, RecordError, coerce_record, load_records, records_to_dataset
from tests.doubles import StubBackend

ICLR25_REVIEW = """## Review Summary
The paper {pid} proposes an edge sampler based on effective resistance.

## Strengths
- Clear spectral motivation (Section 2).

## Weaknesses
- The bound in Eq. (3) assumes a linearised network.

## Questions for Authors
- How are resistances approximated at scale?

## Numerical assessment
### Soundness:
3: good
### Presentation:
3: good
### Contribution:
2: fair

## Final Recommendation
**Decision:** {rating}: marginally above the acceptance threshold
**Key Reason:** Sound but narrow.
**Confidence:** 4
"""
UNPARSABLE = "I am sorry, but I cannot help with reviewing this document."
PAPER_ID = re.compile(r"PAPER-ID (\S+)")


def paper_text(pid: str, words: int = 40) -> str:
    body = " ".join(f"word{i}" for i in range(words))
    return f"# Paper {pid}\n\nPAPER-ID {pid}\n\n## 1 Introduction\n{body}\n\n## 2 Method\nWe prove Theorem 1.\n"


def make_papers(ids=("p1", "p2", "p3", "p4"), **extra):
    rows = [{"paper_id": pid, "venue": "ICLR", "year": 2025, "decision": "Accept (poster)" if i % 2 else "Reject",
             "title": f"Paper {pid}", "text": extra.get("texts", {}).get(pid, paper_text(pid))}
            for i, pid in enumerate(ids)]
    return paper_set(rows)


def paper_set(rows):
    return records_to_dataset([coerce_record(r, "paper", "test") for r in rows], "paper")


def reviewer(answers=None, **options):
    """The stub model of these tests: answers[paper id] for the paper its prompt names, else a parsable review."""

    def answer(request):
        pid = PAPER_ID.search(request.messages[-1][1]).group(1)
        return (answers or {}).get(pid, ICLR25_REVIEW.format(pid=pid, rating=6))

    return StubBackend(answer, model="stub-lm", model_revision="stub-rev-1", **options)


def paper_ids(backend):
    return [PAPER_ID.search(r.messages[-1][1]).group(1) for r in backend.requests]


@pytest.fixture
def extended():
    return load_prompt("extended")


def run(papers, backend, prompt, output, **kwargs):
    kwargs.setdefault("venue", "ICLR")
    kwargs.setdefault("year", 2025)
    kwargs.setdefault("sampling", SamplingConfig(max_new_tokens=512, temperature=0.0, seed=7))
    kwargs.setdefault("progress", False)
    return run_generation(papers, backend, prompt, output=output, **kwargs)


# ------------------------------------------------------------------------------------------ records

def test_records_fields_generation_struct_and_unparsable_kept(tmp_path, extended):
    stub = reviewer(answers={"p3": UNPARSABLE})
    out = tmp_path / "reviews.parquet"
    result = run(make_papers(), stub, extended, out, knowledge_cutoff="2024-06")

    assert out.exists() and not partial_path(out).exists()
    records = load_records(out)
    assert records["paper_id"] == ["p1", "p2", "p3", "p4"]
    by_id = {r["paper_id"]: r for r in records}
    ok = by_id["p1"]
    assert (ok["source"], ok["model"], ok["prompt"], ok["venue"], ok["year"]) == (
        "stub-lm", "stub-lm", "extended", "ICLR", 2025)
    assert ok["decision"] == "Reject" and by_id["p2"]["decision"] == "Accept (poster)"
    assert ok["text"] == ICLR25_REVIEW.format(pid="p1", rating=6)  # raw output kept
    assert ok["summary"].startswith("The paper p1 proposes")
    assert ok["weaknesses"].startswith("- The bound in Eq. (3)")
    assert (ok["rating"], ok["confidence"], ok["parse_status"]) == (6, 4, "ok")
    assert {s["name"]: s["value"] for s in ok["subscores"]} == {"soundness": 3, "presentation": 3, "contribution": 2}
    gen = ok["generation"]
    assert gen["backend"] == "stub" and gen["model_revision"] == "stub-rev-1"
    assert gen["template"].startswith("extended@")
    assert (gen["temperature"], gen["top_p"], gen["max_new_tokens"], gen["seed"]) == (0.0, 1.0, 512, 7)
    assert gen["knowledge_cutoff"] == "2024-06"
    assert gen["paper_truncated"] is False and gen["appendix_removed"] is False
    assert gen["paper_tokens"] == approximate_tokens(paper_text("p1"))  # no tokenizer: the documented estimate

    bad = by_id["p3"]
    assert bad["text"] == UNPARSABLE and bad["parse_status"] == "failed" and bad["rating"] is None
    assert result.summary.n_unparsed == 1 and result.summary.unparsed_ids == ["p3"]
    assert result.summary.n_parsed == 3 and result.summary.n_generated == 4
    assert "1 unparsed" in str(result.summary)
    assert len({r["review_id"] for r in records}) == 4

    # the requests: one per paper, system prompt with the cut-off, sampling and template passed on
    assert paper_ids(stub) == ["p1", "p2", "p3", "p4"]
    request = stub.requests[0]
    assert request.messages[0][0] == "system" and "2024-06" in request.messages[0][1]
    assert request.sampling == SamplingConfig(max_new_tokens=512, temperature=0.0, seed=7)
    assert request.template == "extended"
    assert "8: accept, good paper" in request.messages[-1][1]  # ICLR 2025's own rating labels


def test_variants_of_one_paper_share_its_id_and_their_reviews_carry_the_edit(tmp_path, extended, caplog):
    edit = {"kind": "spelling", "category": "soundness-neutral", "component": "paper",
            "description": "American to British spelling", "seed": 0}
    original = {"paper_id": "p1", "venue": "ICLR", "year": 2025, "text": paper_text("p1")}
    papers = paper_set([original, {**original, "text": paper_text("p1") + "\ncolour", "perturbation": edit}])
    result = run(papers, reviewer(), extended, tmp_path / "reviews.jsonl")

    assert result.records["paper_id"] == ["p1", "p1"]
    assert result.records["perturbation"] == [None, edit]
    assert len(set(result.records["review_id"])) == 2
    repeated = tmp_path / "papers.jsonl"
    variant = {**original, "perturbation": edit}
    repeated.write_text("\n".join(json.dumps(row) for row in (original, variant, variant)))
    assert load_papers(str(repeated))["perturbation"] == [None, edit]
    assert f"{repeated}: dropped 1 exact duplicate record (same paper_id and content)" in caplog.text
    repeated.write_text("\n".join(json.dumps(row) for row in (original, variant, {**variant, "text": "other"})))
    with pytest.raises(RecordError, match=r"papers.jsonl: field 'paper_id': 1 id repeats with different content: "
                                          r"p1 \(perturbation spelling, seed 0\)"):
        load_papers(str(repeated))


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ""])
def test_output_formats_load_back(tmp_path, extended, suffix):
    out = tmp_path / f"reviews{suffix}"
    records = generate_reviews(make_papers(("a", "b")), reviewer(), extended, venue="ICLR", year=2025,
                               output=out, progress=False)
    assert load_records(out).to_list() == records.to_list()
    assert not partial_path(out).exists()


def test_source_override_and_generic_prompt_uses_generic_scale(tmp_path):
    answer = "**Summary:** S.\n**Strengths:** A.\n**Weaknesses:** B.\n**Rating:** 7\n**Confidence:** 3\n"
    stub = reviewer(answers={"p1": answer})
    result = run(make_papers(("p1",)), stub, load_prompt("guidelines"), None, source="my-lm/guidelines")
    row = result.records[0]
    # 7 is not on ICLR 2025's scale, but the guidelines prompt asks for the generic 1-10 rating
    assert (row["source"], row["rating"], row["confidence"], row["parse_status"]) == ("my-lm/guidelines", 7, 3, "ok")


def test_papers_own_venue_and_year_when_none_given(tmp_path, extended):
    rows = [{"paper_id": "i", "venue": "ICLR", "year": 2025, "text": paper_text("i")},
            {"paper_id": "n", "venue": "NeurIPS", "year": 2025, "text": paper_text("n")}]
    stub = reviewer(answers={"n": "## Summary\nS.\n## Strengths\nA.\n## Weaknesses\nB.\n"
                                     "**Overall:** 4: Borderline accept\n**Confidence:** 3\n"})
    result = run(paper_set(rows), stub, extended, None, venue=None, year=None)
    by_id = {r["paper_id"]: r for r in result.records}
    assert (by_id["i"]["venue"], by_id["n"]["venue"]) == ("ICLR", "NeurIPS")
    assert "8: accept, good paper" in stub.requests[0].messages[-1][1]
    assert "8: accept, good paper" not in stub.requests[1].messages[-1][1]  # NeurIPS 2025: 1-6 overall
    assert by_id["n"]["rating"] == 4


def test_prompt_needing_more_than_a_paper_is_refused(tmp_path):
    own = tmp_path / "meta.jinja"
    own.write_text("{#\nname: my_meta\nscale: generic\ninputs: [paper, reviews]\noutput: meta_review\n#}\n"
                   "{{ paper_text }} {{ reviews|join }}\n")
    with pytest.raises(ValueError, match="meta-reviews"):
        run(make_papers(("p1",)), reviewer(), load_prompt(own), None)


def test_venue_prompt_without_venue_is_a_clear_error(extended):
    papers = paper_set([{"paper_id": "x", "text": paper_text("x")}])
    with pytest.raises(ValueError, match="paper x: .*give a venue and year"):
        run(papers, reviewer(), extended, None, venue=None, year=None)


def test_user_template_file(tmp_path):
    own = tmp_path / "short.jinja"
    own.write_text("Review this for {{ venue }} {{ year }}:\n{{ paper_text }}\nEnd with Rating: and Confidence:.\n")
    stub = reviewer()
    result = run(make_papers(("p1",)), stub, load_prompt(own), None)
    assert result.records[0]["prompt"] == "short"
    assert stub.requests[0].messages == (("user", f"Review this for ICLR 2025:\n{paper_text('p1')}\n"
                                                  "End with Rating: and Confidence:.\n"),)


# ------------------------------------------------------------------------------------------ papers

def test_truncation_at_a_small_budget_is_recorded(tmp_path, extended):
    long_text = paper_text("p1", words=500) + "\nTHE-LAST-SENTENCE of the paper.\n"
    stub = reviewer()
    result = run(make_papers(("p1", "p2"), texts={"p1": long_text}), stub, extended, tmp_path / "r.jsonl",
                 token_budget=100)
    gen = {r["paper_id"]: r["generation"] for r in result.records}
    assert gen["p1"]["paper_truncated"] is True and gen["p1"]["paper_tokens"] <= 100
    assert gen["p2"]["paper_truncated"] is False
    sent = stub.requests[0].messages[-1][1]
    assert "PAPER-ID p1" in sent and "THE-LAST-SENTENCE" not in sent
    assert result.summary.n_truncated == 1


def test_truncation_with_the_model_tokenizer(tiny_model_dir):  # noqa: F811
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    count = tokenizer_counter(tokenizer)
    text = paper_text("p1", words=300)
    total = len(tokenizer(text, add_special_tokens=False)["input_ids"])
    prepared = prepare_paper_text(text, token_budget=50, count_tokens=count)
    assert prepared.truncated and prepared.tokens <= 50 and text.startswith(prepared.text)
    assert prepared.tokens >= 45  # cut at a token boundary, not far before it
    # the same cut as encoding the whole text (only a prefix of it is encoded)
    whole = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    assert prepared.text == text[:whole["offset_mapping"][49][1]]
    texts = [text, "short", paper_text("p2", words=1000), text[:300]]
    assert prepare_papers(texts, 50, count) == [prepare_paper_text(t, 50, count) for t in texts]
    assert prepare_papers(texts, 50, count, remove_appendix=True) == [
        prepare_paper_text(t, 50, count, remove_appendix=True) for t in texts]
    assert prepare_paper_text(text, token_budget=total, count_tokens=count) == PreparedPaper(text, total, False, False)
    # a plain counting function (no truncate method) is bisected on word boundaries
    plain = prepare_paper_text(text, token_budget=50, count_tokens=lambda t: count(t))
    assert plain.truncated and plain.tokens <= 50 and text.startswith(plain.text)


def test_approximation_is_words_times_1_3():
    assert approximate_tokens("one two  three\nfour") == 6  # ceil(4 * 1.3)
    prepared = prepare_paper_text(" ".join(["w"] * 100), token_budget=13)
    assert prepared.text == " ".join(["w"] * 10) and prepared.truncated and prepared.tokens == 13
    assert prepare_paper_text("short text", token_budget=None).truncated is False


PAPER_WITH_APPENDIX = """# A Paper

## 1 Introduction
We prove the bound in Appendix B and list all hyperparameters in the appendix.
Appendix A contains the proofs.

## 5 Conclusion
It works.

## References
[1] A. Author. Appendix-free learning. In ICLR, 2020.
[2] B. Author. Supplementary material considered harmful. 2021.

{heading}
### A.1 Proof of Theorem 1
SECRET-APPENDIX-TEXT
"""


@pytest.mark.parametrize("heading", ["# Appendix", "# A Appendix", "## A APPENDIX", "Appendix",
                                     "**Appendix A: Proofs**", "# Supplementary Material",
                                     "# A Proof of Theorem 1", "## Appendices", "A Appendix"])
def test_appendix_removed_from_its_heading_after_the_references(heading):
    text = PAPER_WITH_APPENDIX.format(heading=heading)
    cut, removed = remove_appendix(text)
    assert removed
    assert "SECRET-APPENDIX-TEXT" not in cut and f"\n{heading}\n" not in cut
    assert cut.rstrip().endswith("Supplementary material considered harmful. 2021.")


@pytest.mark.parametrize("text", [
    # mentions of the appendix in running text, before and after the references
    "# P\nSee Appendix A for proofs.\n\nAppendix B lists the hyperparameters.\n\n## References\n[1] X. Y.\n"
    "Appendix C contains more.\n",
    # an appendix heading *before* the references is part of the main text here; nothing after them
    "# P\n## 1 Intro\nText.\n## Appendix: notation\nSymbols.\n## References\n[1] Appendix of things. 2020.\n",
    # no references heading and the appendix mention is early in the text
    "# P\n## Appendix\nThis paper's appendix is its main part.\n" + "Words. " * 200,
])
def test_paper_that_only_mentions_the_appendix_is_kept(text):
    assert find_appendix(text) is None
    assert remove_appendix(text) == (text, False)


def test_appendix_heading_late_in_a_paper_without_references():
    text = "# P\n" + "Body text. " * 200 + "\n\n# Appendix\nExtra proofs.\n"
    cut, removed = remove_appendix(text)
    assert removed and "Extra proofs" not in cut


def test_appendix_removal_in_a_run_is_recorded(extended):
    text = "PAPER-ID p1\n\n" + PAPER_WITH_APPENDIX.format(heading="# A Appendix")
    stub = reviewer()
    result = run(make_papers(("p1", "p2"), texts={"p1": text}), stub, extended, None, remove_appendix=True)
    gen = {r["paper_id"]: r["generation"] for r in result.records}
    assert gen["p1"]["appendix_removed"] is True and gen["p2"]["appendix_removed"] is False
    assert "SECRET-APPENDIX-TEXT" not in stub.requests[0].messages[-1][1]
    assert "We prove the bound in Appendix B" in stub.requests[0].messages[-1][1]
    kept = run(make_papers(("p1",), texts={"p1": text}), reviewer(), extended, None)
    assert kept.records[0]["generation"]["appendix_removed"] is False


def test_load_papers_from_a_directory(tmp_path):
    (tmp_path / "2401.00001.md").write_text("# Graph Things\n\nBody.\n")
    (tmp_path / "paper-b.txt").write_text("Plain text paper.\n")
    (tmp_path / "notes.pdf").write_bytes(b"%PDF")
    papers = load_papers(tmp_path)
    assert papers["paper_id"] == ["2401.00001", "paper-b"]
    assert papers["title"] == ["Graph Things", None]
    assert papers["venue"] == [None, None] and papers["year"] == [None, None] and papers["decision"] == [None, None]
    given = load_papers(tmp_path, venue="ICLR", year=2025)
    assert given["venue"] == ["ICLR", "ICLR"] and given["year"] == [2025, 2025]


def test_load_papers_from_a_dataset_and_the_demo(tmp_path):
    from importlib import resources

    demo = load_papers(resources.files("praib") / "data/demo/papers.jsonl")
    assert len(demo) == 8 and all(demo["text"])
    path = tmp_path / "papers.jsonl"
    path.write_text(json.dumps({"paper_id": "x", "text": "T", "venue": None}) + "\n"
                    + json.dumps({"paper_id": "y", "text": "U", "venue": "NeurIPS", "year": 2024}) + "\n")
    filled = load_papers(path, venue="ICLR", year=2025)
    assert filled["venue"] == ["ICLR", "NeurIPS"] and filled["year"] == [2025, 2024]


@pytest.mark.parametrize("setup, message", [
    (lambda d: None, "no .md or .txt papers"),
    (lambda d: (d / "a.md").write_text("   \n"), "1 of 1 papers have no text"),
    (lambda d: (d / "p.jsonl").write_text('{"paper_id": "x", "title": "No text"}\n'), "have no text"),
])
def test_load_papers_errors(tmp_path, setup, message):
    setup(tmp_path)
    with pytest.raises(PaperError, match=message):
        load_papers(tmp_path)


@pytest.mark.parametrize("setup", [
    lambda d: (d / "p.jsonl").write_text('{"paper_id": "x", "text": "a"}\n{"paper_id": "x", "text": "b"}\n'),
    lambda d: [(d / "x.md").write_text("# X\n\nOne text."), (d / "x.txt").write_text("Another text.")],
])
def test_load_papers_refuses_one_id_with_two_texts(tmp_path, setup):
    setup(tmp_path)
    with pytest.raises(RecordError, match=r": field 'paper_id': 1 id repeats with different content: x$"):
        load_papers(tmp_path)


def test_load_papers_missing_source(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        load_papers(tmp_path / "nowhere.jsonl")


# ------------------------------------------------------------------------------------------ resume

@pytest.mark.parametrize("interrupt", [False, True], ids=["crash", "ctrl-c"])
def test_interrupted_run_resumes_from_the_cache(tmp_path, extended, interrupt):
    papers = make_papers(tuple(f"p{i}" for i in range(7)))
    cache = CallCache(tmp_path / "cache")
    out = tmp_path / "reviews.parquet"
    failing = reviewer(fail_after=3, failure=KeyboardInterrupt() if interrupt else RuntimeError("crashed"))
    with pytest.raises(KeyboardInterrupt if interrupt else RuntimeError):
        run(papers, CachedBackend(failing, cache), extended, out, batch_size=2)
    # every answer that arrived before the crash (p2's too, in the crashed batch) was written at once
    assert not out.exists()
    written = [json.loads(line) for line in partial_path(out).read_text().splitlines()]
    assert [r["paper_id"] for r in written] == ["p0", "p1", "p2"]
    assert paper_ids(failing) == ["p0", "p1", "p2"]
    assert len(cache) == 3

    resumed = reviewer()
    result = run(papers, CachedBackend(resumed, cache), extended, out, batch_size=2)
    assert not partial_path(out).exists()
    # no answered call is repeated: only what the cache lacks is sent
    assert paper_ids(resumed) == ["p3", "p4", "p5", "p6"]
    assert load_records(out)["paper_id"] == [f"p{i}" for i in range(7)]
    assert not partial_path(out).exists()
    assert result.summary.n_from_cache + result.summary.n_backend_calls == 7

    again = reviewer()
    repeat = run(papers, CachedBackend(again, cache), extended, tmp_path / "again.jsonl", batch_size=2)
    assert again.batches == [] and again.requests == []
    assert (repeat.summary.n_from_cache, repeat.summary.n_backend_calls) == (7, 0)
    assert repeat.records.to_list() == load_records(out).to_list()


@pytest.mark.parametrize("batch_size", [None, 2, 4])
def test_resume_granularity_is_the_answer_whatever_the_batch(tmp_path, extended, batch_size):
    """Every answer the inner backend gave is in the cache even when the run dies in the middle of a batch."""
    papers = make_papers(tuple(f"p{i}" for i in range(6)))
    cache = CallCache(tmp_path / "cache")
    with pytest.raises(RuntimeError):
        run(papers, CachedBackend(reviewer(fail_after=3), cache), extended, None, batch_size=batch_size)
    resumed = reviewer()
    run(papers, CachedBackend(resumed, cache), extended, None, batch_size=batch_size)
    assert paper_ids(resumed) == ["p3", "p4", "p5"]


needs_dev_full = pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full to fill a disk with")


@needs_dev_full
def test_a_full_disk_stops_after_the_batch_with_every_answer_cached_and_the_file_named(tmp_path, extended, caplog):
    papers = make_papers(tuple(f"p{i}" for i in range(5)))
    cache = CallCache(tmp_path / "cache")
    out = tmp_path / "reviews.jsonl"
    partial_path(out).symlink_to("/dev/full")  # every write there fails as on a full disk: ENOSPC
    first = reviewer()
    with pytest.raises(OutputWriteError) as stopped:
        run(papers, CachedBackend(first, cache), extended, out, batch_size=2)
    assert str(stopped.value) == f"cannot write {partial_path(out)}: No space left on device"
    # The batch in flight when the first write failed was answered and cached whole; no later one was sent.
    assert paper_ids(first) == ["p0", "p1"] and len(cache) == 2
    assert "every answer that arrived is in the call cache" in caplog.text

    partial_path(out).unlink()  # room again
    resumed = reviewer()
    result = run(papers, CachedBackend(resumed, cache), extended, out, batch_size=2)
    assert paper_ids(resumed) == ["p2", "p3", "p4"]
    assert (result.summary.n_from_cache, result.summary.n_backend_calls) == (2, 3)
    assert load_records(out)["paper_id"] == [f"p{i}" for i in range(5)]


@needs_dev_full
def test_without_a_cache_a_full_disk_stops_the_run_at_once(tmp_path, extended):
    out = tmp_path / "reviews.jsonl"
    partial_path(out).symlink_to("/dev/full")
    stub = reviewer()
    with pytest.raises(OutputWriteError, match="No space left on device"):
        run(make_papers(tuple(f"p{i}" for i in range(5))), stub, extended, out, batch_size=4)
    assert paper_ids(stub) == ["p0"]  # its answer has nowhere to go; nothing more is asked


def test_praib_generate_in_a_script_shows_plain_progress(tmp_path, capsys, monkeypatch):
    import praib

    monkeypatch.setenv("PRAIB_PROGRESS_INTERVAL", "0")
    records = praib.generate(make_papers(), CachedBackend(reviewer(), CallCache(tmp_path / "cache")), "extended",
                             venue="ICLR", year=2025, output=tmp_path / "reviews.jsonl", batch_size=2)
    assert len(records) == 4
    progress = capsys.readouterr().err.splitlines()
    assert progress[:2] == ["stub-lm / extended: 1/4 (25%) after 0:00", "stub-lm / extended: 2/4 (50%) after 0:00"]
    assert "stub-lm / extended: 4/4 in 0:00, cached=0" in progress, progress


def test_changed_sampling_or_prompt_is_not_served_from_the_cache(tmp_path, extended):
    papers = make_papers(("p1", "p2"))
    cache = CallCache(tmp_path / "cache")
    run(papers, CachedBackend(reviewer(), cache), extended, None)
    other = reviewer()
    run(papers, CachedBackend(other, cache), extended, None, sampling=SamplingConfig(max_new_tokens=512, seed=8))
    assert len(other.requests) == 2
    other = reviewer()
    run(papers, CachedBackend(other, cache), load_prompt("zero_generic"), None)
    assert len(other.requests) == 2


# ------------------------------------------------------------------------------------------ transformers

def test_transformers_backend_end_to_end(tmp_path, tiny_model_dir, extended):  # noqa: F811
    from transformers import AutoTokenizer

    papers = make_papers(("p1", "p2", "p3"))
    backend = make_backend("transformers", str(tiny_model_dir))
    cache = CallCache(tmp_path / "cache")
    out = tmp_path / "tiny.parquet"
    sampling = SamplingConfig(max_new_tokens=16, temperature=0.0, seed=0)
    records = generate_reviews(papers, CachedBackend(backend, cache), extended, venue="ICLR", year=2025,
                               output=out, sampling=sampling, token_budget=64, batch_size=2, progress=False)
    loaded = load_records(out)
    assert loaded.to_list() == records.to_list()
    assert loaded["paper_id"] == ["p1", "p2", "p3"]
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    for row in loaded:
        assert row["source"] == tiny_model_dir.name and row["prompt"] == "extended"
        assert isinstance(row["text"], str) and row["parse_status"] in ("failed", "partial", "ok")
        gen = row["generation"]
        assert gen["backend"] == "transformers" and gen["model_revision"].startswith("local-sha256:")
        assert gen["max_new_tokens"] == 16 and gen["paper_truncated"] is True
        # counted with the model's own tokenizer, exactly
        full = len(tokenizer(paper_text(row["paper_id"]), add_special_tokens=False)["input_ids"])
        assert full > 64 and 56 <= gen["paper_tokens"] <= 64
    # greedy decoding is deterministic and a repeat is served from the cache
    refuse = StubBackend(name=backend.name, model=backend.model, model_revision=backend.model_revision,
                         fail_after=0, failure=AssertionError("a repeated run must not reach the model"))
    refuse.tokenizer = backend.tokenizer
    again = generate_reviews(papers, CachedBackend(refuse, cache), extended, venue="ICLR", year=2025, output=None,
                             sampling=sampling, token_budget=64, progress=False)
    assert again["text"] == records["text"]


def test_partial_file_of_an_interrupted_run_is_appended_to_not_overwritten(tmp_path, extended):
    out = tmp_path / "reviews.jsonl"
    with pytest.raises(RuntimeError):  # no cache: the partial file is all that survives
        run(make_papers(("p1", "p2", "p3")), reviewer(fail_after=1), extended, out, batch_size=1)
    with pytest.raises(RuntimeError):
        run(make_papers(("p1", "p2", "p3")), reviewer(fail_after=2), extended, out, batch_size=1)
    kept = [json.loads(line)["paper_id"] for line in partial_path(out).read_text().splitlines()]
    assert kept == ["p1", "p1", "p2"]


def test_tokenizer_found_through_wrappers(tiny_model_dir, tmp_path):  # noqa: F811
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)

    class FakeEngine:  # vLLM's LLM: the tokenizer comes from get_tokenizer()
        def get_tokenizer(self):
            return tokenizer

    def fake_vllm():
        backend = reviewer(name="vllm")
        backend.llm = FakeEngine()
        return backend

    assert find_tokenizer(CachedBackend(fake_vllm(), CallCache(tmp_path / "c"))) is tokenizer
    assert find_tokenizer(CachedBackend(reviewer(), CallCache(tmp_path / "c"))) is None
    result = run(make_papers(("p1",)), CachedBackend(fake_vllm(), CallCache(tmp_path / "c")), load_prompt("extended"),
                 None, token_budget=30)
    assert result.summary.exact_tokens and result.records[0]["generation"]["paper_tokens"] <= 30
    assert result.records[0]["generation"]["paper_truncated"] is True


def test_a_paper_with_bytes_that_are_not_utf8_is_read_with_a_warning(tmp_path, caplog):
    # A Latin-1 "é" (0xe9) in a UTF-8 paper: the paper is still worth reviewing, the byte is named.
    (tmp_path / "p1.md").write_bytes(b"# Caches\n\nA caf\xe9 of caches.\n")
    with caplog.at_level("WARNING"):
        papers = load_papers(tmp_path)
    assert papers["text"] == ["# Caches\n\nA caf\ufffd of caches.\n"]
    assert f"{tmp_path / 'p1.md'}: line 3: byte 0xe9 at byte offset 15 is not UTF-8" in caplog.text
