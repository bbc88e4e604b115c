"""PDF to markdown on PDFs written by the test with known text, paragraph ids, and the OCR request."""

import base64
import json

import pytest
from click.testing import CliRunner

from praib.llm.backends import SamplingConfig
from praib.sources.papertext import (OCR_PROMPT, PaperTextError, VisionOpenAIBackend, convert_pdf, ocr_pdf,
                             paragraph_index, pdf_to_markdown, split_sections)
from praib.cli.data import data
from praib.records import PAPER_FEATURES, load_records
from tests.chat_server import ChatServer
from tests.doubles import StubBackend
from tests.sources.pdfs import EXPECTED, GAP, HEADER, LINE, PAGES, write_pdf

@pytest.fixture
def paper_pdf(tmp_path):
    return write_pdf(tmp_path / "paper-17.pdf", PAGES)


def test_pdf_to_markdown_matches_hand_written_markdown(paper_pdf):
    assert pdf_to_markdown(paper_pdf) == EXPECTED


def test_single_page_keeps_its_first_line_and_number_since_nothing_repeats(tmp_path):
    pdf = write_pdf(tmp_path / "one.pdf", [[("1 Introduction", 0), ("Short text here.", GAP)]], title=None)
    assert pdf_to_markdown(pdf) == f"# {HEADER}\n\n## 1 Introduction\n\nShort text here.\n\n1\n"


def test_sentence_starting_with_a_letter_is_not_a_heading_before_the_references(tmp_path):
    pdf = write_pdf(tmp_path / "p.pdf", [[("A Simple Baseline", 0), ("is what we use.", LINE), ("Next.", GAP)]],
                    header=None, page_numbers=False)
    assert pdf_to_markdown(pdf) == "# Reviewing Reviewers\n\nA Simple Baseline is what we use.\n\nNext.\n"


def test_not_a_pdf_names_the_file(tmp_path):
    bad = tmp_path / "bad.pdf"
    bad.write_text("hello")
    with pytest.raises(PaperTextError, match="bad.pdf: not a readable PDF"):
        pdf_to_markdown(bad)


def test_paragraph_ids():
    sections = split_sections(EXPECTED)
    assert [(s.id, s.heading, s.level) for s in sections] == [
        ("s1", "Reviewing Reviewers", 1), ("s2", "Abstract", 2), ("s3", "1 Introduction", 2), ("s4", "2 Method", 2),
        ("s5", "2.1 Data", 3), ("s6", "References", 2), ("s7", "A Proofs", 2)]
    assert paragraph_index(EXPECTED) == {
        "s2.p1": "We measure how language models review papers of many kinds.",
        "s3.p1": "Peer review is slow and costly. Models might help the reviewers.",
        "s5.p1": "We collect reviews from OpenReview for two venues and years.",
        "s5.p2": "A second paragraph follows here.",
        "s6.p1": "Smith, J. A study of reviews. 2020.",
        "s7.p1": "The proof is short.",
    }


def test_paragraph_ids_are_stable_under_edits_elsewhere_and_text_before_headings_is_s0():
    text = "Preamble line.\n\n## 1 Intro\n\nFirst.\n\nSecond.\n\n## 2 Method\n\nThird.\n"
    edited = text.replace("First.", "First, rewritten and much longer.")
    assert paragraph_index(text) == {"s0.p1": "Preamble line.", "s1.p1": "First.", "s1.p2": "Second.",
                                     "s2.p1": "Third."}
    assert paragraph_index(edited)["s2.p1"] == "Third." and paragraph_index(edited)["s1.p2"] == "Second."


def test_convert_pdf_makes_a_paper_record_and_truncates_to_the_budget(paper_pdf):
    full = convert_pdf(paper_pdf, venue="ICLR", year=2025)
    assert full.record["paper_id"] == "paper-17" and full.record["title"] == "Reviewing Reviewers"
    assert full.record["abstract"] == "We measure how language models review papers of many kinds."
    assert (full.record["venue"], full.record["year"], full.record["perturbation"]) == ("ICLR", 2025, None)
    assert full.record["text"] == EXPECTED and not full.prepared.truncated
    # 10 tokens at 1.3 tokens per word keep floor(10 / 1.3) = 7 words ("#" and "##" count as words).
    cut = convert_pdf(paper_pdf, token_budget=10)
    assert cut.record["text"] == "# Reviewing Reviewers\n\n## Abstract\n\nWe measure"
    assert cut.prepared.truncated and cut.prepared.tokens == 10  # ceil(1.3 * 7)
    assert (cut.record["text_tokens"], cut.record["text_truncated"]) == (10, True)
    assert cut.record["abstract"] == full.record["abstract"]  # read before the cut
    assert full.record["text_truncated"] is False


def test_ocr_sends_each_page_image_with_the_instruction(paper_pdf):
    backend = StubBackend(["# Page one\n", "Page two text.", "  "])
    text = ocr_pdf(paper_pdf, backend, scale=0.5, sampling=SamplingConfig(max_new_tokens=100))
    assert text == "# Page one\n\nPage two text.\n"
    assert len(backend.requests) == 3
    first = backend.requests[0]
    assert first.template == "pdf_page_ocr" and first.sampling.max_new_tokens == 100
    (role, uri), (role2, prompt) = first.messages
    assert (role, role2, prompt) == ("user", "user", OCR_PROMPT)
    png = base64.b64decode(uri.removeprefix("data:image/png;base64,"))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # scale 0.5 of a 612 x 792 pt page: 306 x 396 pixels (PNG IHDR width and height)
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (306, 396)


def test_vision_backend_sends_openai_image_parts(paper_pdf):
    backend = StubBackend(["x"])
    ocr_pdf(paper_pdf, backend, scale=0.25)
    request = backend.requests[1]
    body = VisionOpenAIBackend("deepseek-ai/DeepSeek-OCR", base_url="http://127.0.0.1:9/v1").request_body(request)
    uri = request.messages[0][1]
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": uri}}, {"type": "text", "text": OCR_PROMPT}]}]
    assert body["model"] == "deepseek-ai/DeepSeek-OCR" and body["max_tokens"] == 8192
    json.dumps(body)  # serialisable as sent


def test_convert_pdf_with_ocr_uses_the_model_text(paper_pdf):
    converted = convert_pdf(paper_pdf, ocr_backend=StubBackend(["# Title From OCR\n\n$x^2$"]))
    assert converted.record["title"] == "Title From OCR"
    assert converted.record["text"] == "# Title From OCR\n\n$x^2$\n\n# Title From OCR\n\n$x^2$\n\n" \
                                       "# Title From OCR\n\n$x^2$\n"


def test_plain_hyphen_is_kept_and_paragraphs_go_on_across_page_breaks():
    from praib.sources.papertext import TextLine, markdown_from_pages

    pages = [[TextLine("We use a state-of-", 690), TextLine("the-art model and com\x02", 678)],
             [TextLine("putation on", 690)], [TextLine("two GPUs.", 690)], [TextLine("Next one.", 690)]]
    assert markdown_from_pages(pages, title="T") == (
        "# T\n\nWe use a state-of-the-art model and computation on two GPUs.\n\nNext one.\n")


@pytest.fixture
def ocr_server():
    server = ChatServer(lambda body: f"Page text {len(server.bodies)}.")
    yield server.url, server.bodies
    server.close()


def test_cli_converts_a_directory_and_reports_truncation(tmp_path):
    folder = tmp_path / "pdfs"
    folder.mkdir()
    write_pdf(folder / "p1.pdf", PAGES)
    write_pdf(folder / "p2.pdf", [[("1 Introduction", 0), ("Short.", GAP)]], title="Second", header=None,
              page_numbers=False)
    out = tmp_path / "papers.jsonl"
    result = CliRunner().invoke(data, ["pdf", str(folder), "--output", str(out), "--venue", "ICLR", "--year", "2025",
                                       "--token-budget", "20", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert result.output == f"2 papers written to {out}; 1 truncated at 20 tokens: p1\n"
    papers = load_records(out, "paper")
    assert papers.features == PAPER_FEATURES
    assert papers["paper_id"] == ["p1", "p2"] and papers["year"] == [2025, 2025]
    assert papers["text"][1] == "# Second\n\n## 1 Introduction\n\nShort.\n"
    assert papers["text_truncated"] == [True, False]


def test_cli_errors_name_the_input(tmp_path):
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(data, ["pdf", str(tmp_path / "empty"), "--output", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 1 and f"{tmp_path / 'empty'}: no .pdf files in this directory" in result.output


def test_cli_ocr_sends_pages_to_the_server_and_caches_them(tmp_path, paper_pdf, ocr_server):
    url, bodies = ocr_server
    args = ["pdf", str(paper_pdf), "--output", str(tmp_path / "papers.jsonl"), "--ocr-model", "ocr-model",
            "--ocr-base-url", url, "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    result = CliRunner().invoke(data, args)
    assert result.exit_code == 0, result.output
    assert len(bodies) == 3 and {b["model"] for b in bodies} == {"ocr-model"}
    parts = bodies[0]["messages"][0]["content"]
    assert parts[0]["image_url"]["url"].startswith("data:image/png;base64,") and parts[1] == {
        "type": "text", "text": OCR_PROMPT}
    # The server numbers answers by arrival, and the pages are sent concurrently.
    texts = sorted(load_records(tmp_path / "papers.jsonl", "paper")["text"][0].strip().split("\n\n"))
    assert texts == ["Page text 1.", "Page text 2.", "Page text 3."]
    assert CliRunner().invoke(data, args).exit_code == 0 and len(bodies) == 3  # the rerun is served by the cache
