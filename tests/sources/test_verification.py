"""The matching rule on hand-made near misses, the offline bibliography (DBLP XML, OpenAlex JSONL,
BibTeX), and verified-citation shares in `praib evaluate`, `praib data verify-citations` and the
citations metric module, with golden values counted by hand."""

import json
import math
import shutil

import evaluate
import pytest
from click.testing import CliRunner

import praib.sources.verification as verification
from praib.cli.main import main
from praib.metrics.text.citations import Citation, find_citations
from praib.sources.verification import (BibRecord, Bibliography, BibliographyError, Verifier, make_verifier, match,
                                title_similarity, verification_summary)
from tests.paths import FIXTURES as FIXTURES_ROOT, METRICS

FIXTURES = FIXTURES_ROOT / "verification"
BIBLIOGRAPHY = [FIXTURES / "dblp.xml", FIXTURES / "openalex_works.jsonl", FIXTURES / "references.bib"]

RESNET = BibRecord("Deep Residual Learning for Image Recognition", ("Kaiming He", "Xiangyu Zhang", "Shaoqing Ren",
                                                                   "Jian Sun"), 2016, "10.1109/CVPR.2016.90")
TRANSFORMER = BibRecord("Attention is All you Need", ("Ashish Vaswani", "Noam Shazeer", "Niki Parmar"), 2017)


def cite(title, year, authors=("He, K.", "Zhang, X.")):
    return Citation("APA", tuple(authors), title, year, f"{', '.join(authors)} ({year}). {title}.")


# --- matching rule ----------------------------------------------------------------------------

def test_identical_title_up_to_case_punctuation_and_stop_words():
    assert match(cite("Deep residual learning for image recognition", 2016), RESNET) == (True, 1.0)
    assert title_similarity("BERT: Pre-training of deep bidirectional transformers",
                            "Bert: pretraining of Deep Bidirectional Transformers.") == 1.0
    assert title_similarity("Réseaux résiduels profonds", "Reseaux residuels profonds") == 1.0


def test_typo_in_title_still_matches():
    assert match(cite("Deep residual lerning for image recogniton", 2016), RESNET) == (True, 1.0)


def test_year_within_one_matches_two_off_does_not():
    assert match(cite("Deep residual learning for image recognition", 2015), RESNET)[0]
    assert match(cite("Deep residual learning for image recognition", 2017), RESNET)[0]
    assert match(cite("Deep residual learning for image recognition", 2018), RESNET) == (False, 1.0)
    undated = BibRecord(RESNET.title, RESNET.authors, None)
    assert match(cite("Deep residual learning for image recognition", 2016), undated) == (False, 1.0)


def test_different_paper_with_similar_title_does_not_match():
    # Words after stop-words: [attention, not, all, you, need] vs [attention, all, you, need]: 2*4/9.
    passes, similarity = match(cite("Attention is not all you need", 2017, ["Vaswani, A."]), TRANSFORMER)
    assert not passes and similarity == pytest.approx(8 / 9)
    # [deep, residual, learning, image, super, resolution] (hyphen joined: superresolution) vs 5 words.
    passes, similarity = match(cite("Deep residual learning for image super-resolution", 2016), RESNET)
    assert not passes and similarity == pytest.approx(2 * 4 / 10)


def test_dropped_subtitle_is_not_enough():
    # [deep, bidirectional, transformers, language, understanding] against the full 7-word title: 2*5/12.
    record = BibRecord("BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
                       ("Jacob Devlin",), 2019)
    passes, similarity = match(cite("Deep bidirectional transformers for language understanding", 2019,
                                    ["Devlin, J."]), record)
    assert not passes and similarity == pytest.approx(10 / 12)


def test_author_surname_must_appear_when_authors_were_extracted():
    title = "Deep residual learning for image recognition"
    assert not match(cite(title, 2016, ["Smith, J.", "Doe, A."]), RESNET)[0]
    assert match(cite(title, 2016, ["Smith, J.", "Sun, J."]), RESNET)[0]
    assert match(cite(title, 2016, []), RESNET)[0]
    muller = BibRecord("When does label smoothing help?", ("Rafael Müller", "Simon Kornblith"), 2019)
    assert match(cite("When does label smoothing help?", 2019, ["Muller, R."]), muller)[0]
    maaten = BibRecord("Visualizing Data using t-SNE", ("Laurens van der Maaten",), 2008)
    citation, = find_citations("van der Maaten, L., & Hinton, G. (2008). Visualizing data using t-SNE. JMLR.")
    assert match(citation, maaten)[0]


class Listed:
    """A source answering from a fixed list (None = no answer)."""

    def __init__(self, name, records):
        self.name, self.records = name, records

    def candidates(self, citation):
        return self.records


def test_verifier_outcomes_and_the_citations_seam():
    title = "Deep residual learning for image recognition"
    silent, empty = Listed("silent", None), Listed("empty", [])
    near = Listed("near", [TRANSFORMER, BibRecord(RESNET.title, RESNET.authors, 2010)])
    good = Listed("good", [RESNET])

    verified = Verifier([silent, near, good]).check(cite(title, 2016))
    assert (verified.verified, verified.service, verified.record, verified.unanswered) == (
        True, "good", RESNET, ("silent",))
    missed = Verifier([near, empty]).check(cite(title, 2016))
    assert (missed.verified, missed.service, missed.record.year, missed.similarity) == (False, "near", 2010, 1.0)
    assert Verifier([silent]).check(cite(title, 2016)).verified is None
    # The share leaves unanswered references out: 1 verified of 2 checked, the unanswered third not counted.
    checks = [Verifier([Listed("x", [RESNET])]).check(cite(title, 2016)),
              Verifier([Listed("x", [RESNET])]).check(cite("Unrelated work", 2016)),
              Verifier([silent]).check(cite(title, 2016))]
    assert [c.verified for c in checks] == [True, False, None]
    assert verification_summary([checks])["share"]["mean"] == 0.5
    assert verification_summary([checks[2:]])["share"]["n"] == 0


def test_summary_counts_by_hand():
    ok, no, unknown = (verification.Verification(cite("t", 2000), v, None, None, None) for v in (True, False, None))
    summary = verification_summary([[ok, no], [unknown], [], None, [ok, ok, no, unknown]])
    # Shares over reviews with a checked reference: 1/2 and 2/3; the unanswered-only review is left out.
    assert summary["share"]["mean"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert summary["share"]["n"] == 2
    # Counts over the four reviews with text: verified 1, 0, 0, 2; references 2, 1, 0, 4.
    assert summary["verified"] == {"mean": 0.75, "std": pytest.approx(math.sqrt(2.75 / 3)), "n": 4}
    assert summary["citations"]["mean"] == 7 / 4
    assert (summary["n_citations"], summary["n_verified"], summary["n_not_verified"], summary["n_unchecked"]) == (
        7, 3, 2, 2)


# --- offline bibliography -----------------------------------------------------------------------

@pytest.fixture
def bibliography(tmp_path):
    bib = Bibliography(tmp_path / "bibliography.sqlite3")
    for path in BIBLIOGRAPHY:
        bib.load(path)
    return bib


def test_each_format_is_read(bibliography):
    assert len(bibliography) == 4 + 3 + 3  # DBLP without its <www> person page; JSONL without its blank line
    rows = {(r[0], r[1]): r for r in bibliography._conn.execute("SELECT url, title, authors, year, doi FROM works")}
    maaten = rows[("https://dblp.org/rec/journals/jmlr/MaatenH08", "Visualizing Data using t-SNE")]
    assert json.loads(maaten[2]) == ["Laurens van der Maaten", "Geoffrey E. Hinton"] and maaten[3] == 2008
    resnet = rows[("https://dblp.org/rec/conf/cvpr/HeZRS16", "Deep Residual Learning for Image Recognition")]
    assert json.loads(resnet[2])[0] == "Kaiming He" and resnet[4] == "10.1109/CVPR.2016.90"
    bert = rows[("https://openalex.org/W2963403868",
                 "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding")]
    assert bert[3] == 2019 and bert[4] == "10.18653/v1/n19-1423"
    muller = rows[("https://proceedings.neurips.cc/paper/2019/hash/f1748d6b0fd9d439f71450117eba2725-Abstract.html",
                   "When does label smoothing help?")]
    assert json.loads(muller[2])[0] == "Müller, Rafael"  # {\"u} decoded
    bert_bib = [r for r in rows.values() if r[4] == "10.48550/arXiv.1810.04805"][0]
    assert bert_bib[1].startswith("BERT: Pre-training") and bert_bib[3] == 2018
    dblp_muller = rows[("https://dblp.org/rec/conf/nips/MullerKH19", "When does label smoothing help?")]
    assert json.loads(dblp_muller[2])[0] == "Rafael Müller"  # &uuml; decoded


def test_offline_verification(bibliography):
    verifier = Verifier([bibliography])
    text = ("- He, K., & Sun, J. (2016). Deep residual learning for image recognition. In CVPR.\n"
            '- I. Goodfellow and Y. Bengio, "Generative adversarial nets," in Proc. NIPS, 2014.\n'
            "- Kingma, D. P., & Ba, J. (2015). Adam: A method for stochastic optimization. In ICLR.\n"
            "- Smith, J. (2021). Transformers are universal peer reviewers. In ICML.\n")
    results = [verifier.check(c) for c in find_citations(text)]
    assert [r.verified for r in results] == [True, True, True, False]
    assert results[1].record.authors[0] == "Goodfellow, Ian"
    assert results[2].record.url == "https://openalex.org/W1522301498"
    assert all(r.service == "bibliography" for r in results[:3])


def test_a_file_is_loaded_once_and_reloaded_when_it_changes(tmp_path, monkeypatch):
    copy = tmp_path / "refs.bib"
    shutil.copy(FIXTURES / "references.bib", copy)
    assert Bibliography(tmp_path / "db.sqlite3").load(copy) == 3

    def must_not_read(path):
        raise AssertionError("an unchanged file was read again")

    monkeypatch.setitem(verification._READERS, "bibtex", must_not_read)
    again = Bibliography(tmp_path / "db.sqlite3")
    assert again.load(copy) == 3 and len(again) == 3
    monkeypatch.undo()

    copy.write_text(copy.read_text().split("@article")[0])  # BERT entry removed
    assert again.load(copy) == 2 and len(again) == 2
    assert not again.candidates(cite("BERT: Pre-training of deep bidirectional transformers", 2018))


def test_only_the_files_named_this_run_give_candidates(tmp_path):
    """The database keeps every file ever loaded; a later run must not verify against the ones it
    was not given."""
    first = Bibliography(tmp_path / "db.sqlite3")
    first.load(FIXTURES / "references.bib")
    resnet = cite("Deep residual learning for image recognition", 2016)
    other = tmp_path / "other.bib"
    other.write_text("@article{x, title={Something Unrelated}, author={Doe, Jane}, year={2001}}\n")
    later = Bibliography(tmp_path / "db.sqlite3")
    later.load(other)
    assert len(later) == 1 and later.candidates(resnet) == []
    assert later.candidates(cite("Something unrelated", 2001))[0].title == "Something Unrelated"
    later.load(FIXTURES / "dblp.xml")
    assert [r.url for r in later.candidates(resnet)] == ["https://dblp.org/rec/conf/cvpr/HeZRS16"]


def test_a_file_without_records_is_an_error_not_an_empty_source(tmp_path):
    bib = Bibliography(tmp_path / "db.sqlite3")
    for name, text, kind in (("refs.bib", "not bibtex at all {{{\n", "BibTeX"), ("works.jsonl", "\n", "OpenAlex"),
                             ("dblp.xml", "<dblp></dblp>\n", "DBLP XML")):
        (tmp_path / name).write_text(text)
        with pytest.raises(BibliographyError, match=rf"{name}: no records read from it \(read as {kind}"):
            bib.load(tmp_path / name)
    assert bib.files == [] and len(bib) == 0


def test_bad_bibliography_files_name_the_file_and_line(tmp_path):
    bib = Bibliography(tmp_path / "db.sqlite3")
    broken_xml = tmp_path / "dblp.xml"
    broken_xml.write_text("<dblp>\n<article key='a'>\n<title>Open</article>\n</dblp>\n")
    with pytest.raises(BibliographyError, match=r"dblp\.xml: line 3"):
        bib.load(broken_xml)
    broken_jsonl = tmp_path / "works.jsonl"
    broken_jsonl.write_text('{"title": "Fine", "publication_year": 2020}\n{"title": broken\n')
    with pytest.raises(BibliographyError, match=r"works\.jsonl: line 2"):
        bib.load(broken_jsonl)
    with pytest.raises(BibliographyError, match="unknown bibliography format"):
        bib.load(FIXTURES / "crossref_works.json")
    assert len(bib) == 0


# --- praib evaluate, praib data verify-citations, the metric module -------------------------------

# tests/fixtures/verification/reviews.jsonl, counted by hand against the three bibliography files:
#   h1 (human): ResNet ✓, t-SNE ✓                                   -> 2/2 = 1
#   h2 (human): label smoothing ✓, invented title ✗, Transformer dated 2012 ✗ -> 1/3
#   h3 (human): no formatted reference (only "Smith et al. (2020)")   -> left out of the share
#   m1 (demo-llm): "Generative adversarial networks for peer review" ✗ -> 0/1 = 0
#   m2 (demo-llm): Adam (IEEE, "optimisation", 2015) ✓, invented BERT title ✗ -> 1/2
HUMAN = {"share": 2 / 3, "share_n": 2, "verified": [2, 1, 0], "citations": [2, 3, 0]}
MODEL = {"share": 0.25, "share_n": 2, "verified": [0, 1], "citations": [1, 2]}


def test_evaluate_with_offline_verification_gives_the_hand_counted_shares(tmp_path):
    output = tmp_path / "results.json"
    args = ["evaluate", str(FIXTURES / "reviews.jsonl"), "--cache-dir", str(tmp_path / "cache"),
            "--output", str(output), "--workers", "1", "--no-progress"]
    for path in BIBLIOGRAPHY:
        args += ["--bibliography", str(path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    groups = {g["label"]: g for g in json.loads(output.read_text())["groups"]}
    for label, expected in (("human", HUMAN), ("demo-llm/extended", MODEL)):
        summary = groups[label]["verified_citations"]
        assert summary["share"]["mean"] == pytest.approx(expected["share"])
        assert summary["share"]["n"] == expected["share_n"]
        assert summary["verified"]["mean"] == pytest.approx(sum(expected["verified"]) / len(expected["verified"]))
        assert summary["citations"]["mean"] == pytest.approx(sum(expected["citations"]) / len(expected["citations"]))
        assert summary["n_unchecked"] == 0
    assert groups["human"]["verified_citations"]["share"]["std"] == pytest.approx((1 - 1 / 3) / math.sqrt(2))
    assert "human: share 0.67 ± 0.47 (n=2), 1.000/1.667; 3 of 5 verified, 0 unchecked" in result.output


def test_evaluate_rejects_an_unknown_service(tmp_path):
    result = CliRunner().invoke(main, ["evaluate", str(FIXTURES / "reviews.jsonl"), "--verify-citations",
                                       "crossref,scholar", "--cache-dir", str(tmp_path), "--no-progress"])
    assert result.exit_code != 0 and "unknown citation service(s) scholar" in result.output


def test_data_verify_citations_writes_one_row_per_reference(tmp_path):
    output = tmp_path / "checks.jsonl"
    args = ["data", "verify-citations", str(FIXTURES / "reviews.jsonl"), "--output", str(output),
            "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    for path in BIBLIOGRAPHY:
        args += ["--bibliography", str(path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "8 references in 5 reviews: 4 verified, 4 not verified, 0 unchecked" in result.output
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert [(r["review_id"], r["verified"]) for r in rows] == [
        ("h1", True), ("h1", True), ("h2", True), ("h2", False), ("h2", False), ("m1", False), ("m2", True),
        ("m2", False)]
    adam = rows[6]
    assert (adam["style"], adam["cited_year"], adam["matched_title"], adam["matched_year"], adam["service"]) == (
        "IEEE", 2015, "Adam: A Method for Stochastic Optimization", 2014, "bibliography")
    assert adam["matched_authors"] == ["Diederik P. Kingma", "Jimmy Ba"] and adam["similarity"] == 1.0
    wrong_year = rows[4]
    assert wrong_year["matched_title"] == "Attention is All you Need" and wrong_year["matched_year"] == 2017


def test_data_verify_citations_needs_a_source(tmp_path):
    result = CliRunner().invoke(main, ["data", "verify-citations", str(FIXTURES / "reviews.jsonl"), "-o",
                                       str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "--services and/or --bibliography" in result.output


def test_citations_metric_module_verifies_offline(tmp_path):
    module = evaluate.load(str(METRICS / "citations"))
    texts = [json.loads(line)["text"] for line in (FIXTURES / "reviews.jsonl").read_text().splitlines()]
    result = module.compute(predictions=texts[3:], bibliography=[str(p) for p in BIBLIOGRAPHY],
                            cache_dir=str(tmp_path), return_citations=True)
    assert result["verified_citations"]["share"]["mean"] == pytest.approx(MODEL["share"])
    assert result["verified_citations"]["n_verified"] == 1
    assert [e["verified"] for e in result["extracted"][1]] == [True, False]
    assert result["extracted"][1][0]["matched_title"] == "Adam: A Method for Stochastic Optimization"
    assert "verified_citations" not in module.compute(predictions=texts[3:])


def test_make_verifier_puts_the_bibliography_before_the_services(tmp_path):
    verifier = make_verifier(["dblp", "crossref"], [FIXTURES / "references.bib"], cache_dir=tmp_path)
    assert [s.name for s in verifier.sources] == ["bibliography", "dblp", "crossref"]
    assert (tmp_path / "citations.sqlite3").exists() and (tmp_path / "bibliography.sqlite3").exists()
    with pytest.raises(ValueError, match="at least one source"):
        make_verifier(cache_dir=tmp_path)


def test_gzipped_exports_are_read(tmp_path):
    import gzip

    bib = Bibliography(tmp_path / "db.sqlite3")
    for source in (FIXTURES / "dblp.xml", FIXTURES / "openalex_works.jsonl"):
        packed = tmp_path / (source.name + ".gz")
        packed.write_bytes(gzip.compress(source.read_bytes()))
        bib.load(packed)
    assert len(bib) == 4 + 3
    found = bib.candidates(cite("Adam: A method for stochastic optimization", 2015))
    assert found[0].title == "Adam: A Method for Stochastic Optimization"
