"""Importing shared OpenReview dumps (JSON notes, CSV reviews) into praib records."""

import csv
import json

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.sources.openreview import import_dump
from praib.records import RecordError, load_records
from tests.paths import FIXTURES as FIXTURES_ROOT, SHARED_DATA
from tests.sources.records_check import assert_records

FIXTURES = FIXTURES_ROOT / "openreview"
EXPECTED = json.loads((FIXTURES / "expected_records.json").read_text())


def dump_of(fixture: str) -> list[dict]:
    """The submission notes of a fixture as a researcher's dump holds them: one list."""
    return [note for notes in json.loads((FIXTURES / fixture).read_text()).values() for note in notes]


@pytest.mark.parametrize("key,fixture", [("ICLR 2019", "iclr2019_v1.json"), ("ICLR 2025", "iclr2025_v2.json")])
def test_json_dump_of_notes_gives_the_collected_records(tmp_path, key, fixture):
    notes = dump_of(fixture)
    for note in notes:
        del note["number"]  # some dumps drop it; replies are matched by invitation pattern
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(notes))
    venue, year = key.split()
    records = import_dump(path, "json", venue, int(year))
    # v1 withdrawn papers are recognised by the invitation they are listed under, v2 ones by their venue id.
    for kind, expected in EXPECTED[key].items():
        assert_records(records[kind].to_list(), expected)


def test_jsonl_dump_with_direct_replies(tmp_path):
    notes = dump_of("neurips2023_v2.json")
    for note in notes:
        note["details"] = {"directReplies": note["details"]["replies"]}
    path = tmp_path / "dump.jsonl"
    path.write_text("".join(json.dumps(note) + "\n" for note in notes))
    records = import_dump(path, "json", "NeurIPS", 2023)
    for kind, expected in EXPECTED["NeurIPS 2023"].items():
        assert_records(records[kind].to_list(), expected)


def test_csv_dump_of_reviews():
    records = import_dump(FIXTURES / "iclr2023_reviews.csv", "csv", "ICLR", 2023)
    assert_records(records["paper"].to_list(), [
        {"paper_id": "kJ9-Xz0Yq7B", "venue": "ICLR", "year": 2023, "title": "Contrastive Tabular Pretraining",
         "abstract": "We pretrain tabular encoders with a contrastive objective.",
         "keywords": ["tabular data", "self-supervised learning"], "decision": "Accept: poster"},
        {"paper_id": "Ny7Tq1oWx2", "venue": "ICLR", "year": 2023, "title": "Sparse Probing of Vision Transformers",
         "abstract": "We probe ViTs sparsely.", "keywords": ["interpretability"], "decision": "Reject"},
    ])
    assert_records(records["review"].to_list(), [
        {"review_id": "Uq3c8yRk1a", "paper_id": "kJ9-Xz0Yq7B", "venue": "ICLR", "year": 2023,
         "decision": "Accept: poster", "source": "human", "reviewer_id": "Reviewer_pX4q",
         "summary": "The authors pretrain a tabular encoder contrastively.",
         "text": "The authors pretrain a tabular encoder contrastively.\n\nStrength: simple objective.\n"
                 "Weakness: only six datasets.\n\nA useful but incremental paper.",
         "rating": 6, "confidence": 4,
         "subscores": [{"name": "correctness", "value": 3}, {"name": "technical_novelty_and_significance", "value": 2},
                       {"name": "empirical_novelty_and_significance", "value": 3}],
         "parse_status": "given"},
        {"review_id": "Vb2d9zSl0b", "paper_id": "kJ9-Xz0Yq7B", "venue": "ICLR", "year": 2023,
         "decision": "Accept: poster", "source": "human", "reviewer_id": "Reviewer_Qm7t",
         "summary": "Pretraining for tables.", "text": "Pretraining for tables.\n\nWeak baselines.\n\nReject.",
         "rating": 3, "confidence": 5,
         "subscores": [{"name": "correctness", "value": 2}, {"name": "technical_novelty_and_significance", "value": 1},
                       {"name": "empirical_novelty_and_significance", "value": 2}],
         "parse_status": "given"},
    ])
    assert len(records["meta_review"]) == 0 and len(records["rebuttal"]) == 0


def test_peersum_raw_dump_keeps_its_venue_year():
    records = import_dump(FIXTURES / "peersum_raw.jsonl", "peersum", "NeurIPS", 2022)
    base = {"paper_id": "Xc3LmQ9pT1", "venue": "NeurIPS", "year": 2022}
    assert_records(records["paper"].to_list(), [
        {**base, "title": "Kernel Two-Sample Tests on Graphs", "abstract": "We test whether two graph samples differ.",
         "decision": "Accept"}])
    review = {**base, "decision": "Accept", "source": "human", "parse_status": "given"}
    assert_records(records["review"].to_list(), [
        {**review, "review_id": "Rv1aa", "text": "Theorem 1 gives a consistent test.", "rating": 7, "confidence": 4},
        {**review, "review_id": "Rv2bb", "text": "Only synthetic graphs (Figure 2).", "rating": 4, "confidence": 3}])
    assert_records(records["meta_review"].to_list(), [
        {**base, "meta_review_id": "Xc3LmQ9pT1-meta", "source": "human",
         "text": "The reviewers agree the test is sound.", "parse_status": "given"}])
    # The reviewer's follow-up and the public comment are discussion; the author's answer to the
    # public comment answers no review.
    assert_records(records["rebuttal"].to_list(), [
        {**base, "rebuttal_id": "Au1cc", "review_id": "Rv2bb", "source": "human",
         "text": "We added two real graph benchmarks."},
        {**base, "rebuttal_id": "Au2ff", "source": "human", "text": "Yes, in the supplement."}])


def test_peersum_dump_without_the_venue_year_or_with_bad_notes_says_so(tmp_path):
    with pytest.raises(RecordError, match="no paper of ICLR 2019 in this PeerSum dump; it holds ICLR 2022, "
                                          "NeurIPS 2021, NeurIPS 2022"):
        import_dump(FIXTURES / "peersum_raw.jsonl", "peersum", "ICLR", 2019)
    samples = [json.loads(line) for line in (FIXTURES / "peersum_raw.jsonl").read_text().splitlines() if line.strip()]
    target = next(i for i, s in enumerate(samples) if s["paper_id"].startswith("nips_2022_"))
    path = tmp_path / "peersum.jsonl"
    samples[target]["reviews"][0]["rating"] = "7: good"
    path.write_text("\n".join(json.dumps(s) for s in samples))
    with pytest.raises(RecordError, match=rf"line {target + 1}: reviews\[0\]: field 'rating': expected a number"):
        import_dump(path, "peersum", "NeurIPS", 2022)
    samples[target]["reviews"][0]["rating"] = 7
    del samples[target]["reviews"][1]["review_id"]
    path.write_text("\n".join(json.dumps(s) for s in samples))
    with pytest.raises(RecordError, match=rf"line {target + 1}: reviews\[1\]: field 'review_id': is required"):
        import_dump(path, "peersum", "NeurIPS", 2022)


@pytest.mark.parametrize("name,content,dump_format,year,message", [
    ("reviews.csv", "paper_id,title,rating\nA1,One,6\n,Two,3\n", "csv", 2021,
     r"reviews.csv: line 3: field 'paper_id': is required"),
    ("reviews.csv", "title,rating\nOne,6\n", "csv", 2021, "needs a 'paper_id'"),
    ("dump.jsonl", '{"id": "A", "content": {}}\n{"id": "B", "content": \n', "json", 2024,
     r"dump.jsonl: line 2: not valid JSON"),
    ("dump.json", json.dumps([{"id": "A", "content": {}}, {"title": "no id"}]), "json", 2024,
     r"dump.json: submission 1: a submission note needs 'id' and 'content'"),
], ids=["csv-without-paper-id", "csv-without-paper-id-column", "json-lines-not-json", "json-note-without-id"])
def test_dump_errors_name_the_place(tmp_path, name, content, dump_format, year, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(RecordError, match=message):
        import_dump(path, dump_format, "ICLR", year)


def test_csv_header_naming_a_column_twice_is_an_error(tmp_path):
    # csv.DictReader keeps the last of two same-named columns: the first paper_id would vanish unseen.
    lines = (FIXTURES / "iclr2023_reviews.csv").read_text().split("\n", 1)
    path = tmp_path / "reviews.csv"
    path.write_text(lines[0].replace(",title,", ",paper_id,").replace(",reviewer,", ",title,") + "\n" + lines[1])
    with pytest.raises(RecordError) as err:
        import_dump(path, "csv", "ICLR", 2023)
    assert str(err.value) == (f"{path}: line 1: the header names column(s) 'paper_id' more than once "
                              "(which one holds the data?)")


def test_csv_with_a_nul_byte_is_an_error_naming_its_line(tmp_path):
    text = (FIXTURES / "iclr2023_reviews.csv").read_text()
    lines = text.split("\n")
    path = tmp_path / "reviews.csv"
    assert "\0" not in text and "Weak baselines" in lines[3]  # line 4 (the record of lines 2-3 spans two)
    path.write_text("\n".join([*lines[:3], lines[3].replace("Weak baselines", "Weak\0 baselines"), *lines[4:]]))
    with pytest.raises(RecordError) as err:
        import_dump(path, "csv", "ICLR", 2023)
    assert str(err.value) == (f"{path}: line 4: a NUL byte (0x00), which CSV text does not hold "
                              "(a binary or damaged file?)")


def test_json_notes_without_replies_are_counted_in_a_warning(tmp_path, caplog):
    notes = dump_of("iclr2019_v1.json")  # the last of its 4 notes has an empty list of replies
    for note in notes[1:3]:
        assert note["details"]["replies"]
        note["details"] = None
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(notes))
    with caplog.at_level("WARNING"):
        import_dump(path, "json", "ICLR", 2019)
    assert (f"{path}: 3 of 4 submission notes have no replies (no 'details.replies' or 'details.directReplies'; "
            "was the dump fetched with details='replies'?): their papers are imported without reviews") in caplog.text


def test_cli_import_dump(tmp_path):
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(dump_of("iclr2025_v2.json")))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["data", "import-dump", str(path), "ICLR", "2025",
                                       "--format", "json", "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert "ICLR 2025 from" in result.output
    assert "2 papers (1 withdrawn or desk-rejected), 3 reviews, 1 meta-reviews, 2 rebuttals" in result.output
    assert [r["rebuttal_id"] for r in load_records(out / "rebuttals.jsonl", "rebuttal")] == ["Ab3Cd4Ef5G", "Gh6Ij7Kl8M"]
    bad = CliRunner().invoke(main, ["data", "import-dump", str(path), "ICLR", "2012",
                                    "--format", "json", "--output", str(out)])
    assert bad.exit_code == 1 and "no OpenReview layout for ICLR 2012" in bad.output
    wrong_year = CliRunner().invoke(main, ["data", "import-dump", str(path), "ICLR", "2024",
                                           "--format", "json", "--output", str(out)])
    assert wrong_year.exit_code == 1 and "not of ICLR 2024 (none is under ICLR.cc/2024/Conference" in wrong_year.output


def test_a_repeated_note_is_dropped_and_one_id_with_two_contents_refused(tmp_path, caplog):
    notes = dump_of("iclr2025_v2.json")
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(notes + [notes[0]]))
    records = import_dump(path, "json", "ICLR", 2025)
    for kind, expected in EXPECTED["ICLR 2025"].items():
        assert_records(records[kind].to_list(), expected)
    assert f"{path}: dropped 1 exact duplicate record (same note id and content)" in caplog.text

    edited = {**notes[0], "content": {**notes[0]["content"], "title": {"value": "Another title"}}}
    path.write_text(json.dumps(notes + [edited]))
    with pytest.raises(RecordError, match=rf"dump.json: field 'id': 1 note id repeats with different content: "
                                          rf"{notes[0]['id']}$"):
        import_dump(path, "json", "ICLR", 2025)


def test_a_repeated_review_note_is_dropped_and_one_review_id_with_two_texts_refused(tmp_path, caplog):
    notes = dump_of("iclr2025_v2.json")
    forum = next(n for n in notes if any("Official_Review" in i for r in n["details"]["replies"]
                                         for i in r.get("invitations", [])))
    review = next(r for r in forum["details"]["replies"] if any("Official_Review" in i for i in r["invitations"]))
    forum["details"]["replies"].append(json.loads(json.dumps(review)))
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(notes))
    records = import_dump(path, "json", "ICLR", 2025)
    assert_records(records["review"].to_list(), EXPECTED["ICLR 2025"]["review"])
    assert f"{path}: dropped 1 exact duplicate record (same review_id and content)" in caplog.text

    forum["details"]["replies"][-1]["content"] = {**review["content"], "rating": {"value": 1}}
    path.write_text(json.dumps(notes))
    with pytest.raises(RecordError, match=rf"dump.json: field 'review_id': 1 id repeats with different content: "
                                          rf"{review['id']}$"):
        import_dump(path, "json", "ICLR", 2025)


def test_csv_rows_of_one_review_id_with_two_ratings_are_refused(tmp_path):
    with (FIXTURES / "iclr2023_reviews.csv").open(newline="") as handle:
        reader = csv.DictReader(handle)
        fields, rows = reader.fieldnames, list(reader)
    rows.append({**rows[0], "recommendation": "1: strong reject"})
    path = tmp_path / "reviews.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fields)
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(RecordError, match=rf"reviews.csv: field 'review_id': 1 id repeats with different content: "
                                          rf"{rows[0]['review_id']}$"):
        import_dump(path, "csv", "ICLR", 2023)


@pytest.mark.parametrize("name,content,dump_format", [
    ("dump.json", "[]", "json"),
    ("reviews.csv", "paper_id,title,rating\n", "csv"),
])
def test_a_dump_that_yields_no_paper_is_an_error(tmp_path, name, content, dump_format):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(RecordError, match=rf"^{path}: no paper of ICLR 2023 in this {dump_format} dump$"):
        import_dump(path, dump_format, "ICLR", 2023)


def annotated_sample(sample: dict) -> dict:
    """A raw PeerSum sample as PeerSum's annotated samples hold it: the discussion as unattributed
    source documents, the meta-review as the summary, no title or abstract."""
    return {"paper_id": sample["paper_id"], "paper_acceptance": sample["paper_acceptance"], "label": sample["label"],
            "summary": sample["meta_review"], "review_score_variance": 2.25,
            "source_documents": [sample["paper_abstract"]] + [note["comment"] for note in sample["reviews"]]}


def test_peersum_samples_without_their_discussion_say_why_no_review_came_out(tmp_path, caplog):
    samples = [json.loads(line) for line in (FIXTURES / "peersum_raw.jsonl").read_text().splitlines() if line.strip()]
    path = tmp_path / "annotated.jsonl"
    path.write_text("".join(json.dumps(annotated_sample(s)) + "\n" for s in samples))
    records = import_dump(path, "peersum", "NeurIPS", 2022)
    assert [len(records[kind]) for kind in ("paper", "review", "meta_review", "rebuttal")] == [1, 0, 0, 0]
    assert (f"{path}: of 1 NeurIPS 2022 samples, 1 lack 'reviews' (no reviews or rebuttals), 1 lack 'meta_review' "
            "(no meta-review), 1 lack 'paper_title' (no title), 1 lack 'paper_abstract' (no abstract); their fields "
            "are label, paper_acceptance, paper_id, review_score_variance, source_documents, summary. "
            "--format peersum reads PeerSum's raw dump, peersum_all.json") in caplog.text

    caplog.clear()
    records = import_dump(FIXTURES / "peersum_raw.jsonl", "peersum", "ICLR", 2022)  # a sample with no notes
    assert len(records["paper"]) == 1 and len(records["review"]) == 0
    assert ("peersum_raw.jsonl: 0 reviews: no note of the 1 ICLR 2022 samples is an official review "
            "(writer 'official_reviewer', reply_to the paper)") in caplog.text


PEERSUM_SAMPLES = SHARED_DATA / "peersum" / "peersum_annotated_samples.jsonl"


@pytest.mark.skipif(not PEERSUM_SAMPLES.is_file(), reason="real PeerSum samples not present")
def test_real_peersum_annotated_samples_import_with_a_warning(tmp_path, caplog):
    expected = sum(json.loads(line)["paper_id"].startswith("iclr_2020_")
                   for line in PEERSUM_SAMPLES.read_text().splitlines() if line.strip())
    result = CliRunner().invoke(main, ["data", "import-dump", str(PEERSUM_SAMPLES), "ICLR", "2020",
                                       "--format", "peersum", "--output", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert f"{expected} papers (0 withdrawn or desk-rejected), 0 reviews, 0 meta-reviews, 0 rebuttals" in result.output
    assert f"of {expected} ICLR 2020 samples, {expected} lack 'reviews' (no reviews or rebuttals)" in caplog.text
    assert "source_documents" in caplog.text


def test_csv_columns_outside_the_review_form_are_named_in_a_warning(tmp_path, caplog):
    # "Recommendation" is not the form's "recommendation": its ratings would be lost without a word.
    text = (FIXTURES / "iclr2023_reviews.csv").read_text().replace(",recommendation,", ",Recommendation,", 1)
    path = tmp_path / "reviews.csv"
    path.write_text(text)
    with caplog.at_level("WARNING"):
        records = import_dump(path, "csv", "ICLR", 2023)
    assert f"{path}: columns that are no field of the ICLR 2023 review form, ignored: Recommendation" in caplog.text
    assert records["review"]["rating"] == [None, None]


@pytest.mark.parametrize("row, message", [
    ("kJ9-Xz0Yq7B,Title,Abstract,kw,Accept,r9,R,A summary, with a comma,,,,3,,6: ok,4\n",
     "line 6: 16 fields, the header has 15"),
    ('kJ9-Xz0Yq7B,"Title,Abstract\n', r"line 6: not valid CSV \(unexpected end of data\)"),
], ids=["unquoted comma", "unclosed quote"])
def test_csv_rows_that_do_not_fit_the_header_are_errors(tmp_path, row, message):
    path = tmp_path / "reviews.csv"
    path.write_text((FIXTURES / "iclr2023_reviews.csv").read_text() + row)
    with pytest.raises(RecordError, match=rf"reviews.csv: {message}"):
        import_dump(path, "csv", "ICLR", 2023)


# The review notes of one ICLR 2024 forum as the API v2 returns them for the review invitation, written by hand:
# no submission note, two reviews of one forum.
FLAT_REVIEWS = [
    {"id": f"rev{n}", "forum": "forumA1", "replyto": "forumA1", "number": n,
     "invitations": ["ICLR.cc/2024/Conference/Submission3/-/Official_Review"], "domain": "ICLR.cc/2024/Conference",
     "signatures": [f"ICLR.cc/2024/Conference/Submission3/Reviewer_{name}"],
     "content": {"summary": {"value": summary}, "rating": {"value": rating}, "confidence": {"value": 4},
                 "soundness": {"value": 3}, "presentation": {"value": 3}, "contribution": {"value": 2},
                 "strengths": {"value": "Clear figures."}, "weaknesses": {"value": "Small data."},
                 "questions": {"value": "Why this baseline?"}}}
    for n, name, summary, rating in ((1, "ab", "A study of adapters.", 6), (2, "cd", "Adapters, again.", 3))]


def test_a_dump_of_review_notes_without_their_submission_imports_and_evaluates(tmp_path):
    """The notes of one forum name the forum as theirs; the import read that as a repeated note id."""
    dump = tmp_path / "notes.json"
    dump.write_text(json.dumps(FLAT_REVIEWS))
    records = import_dump(dump, "json", "ICLR", 2024)
    assert [(p["paper_id"], p["title"]) for p in records["paper"].to_list()] == [("forumA1", None)]
    assert [(r["review_id"], r["paper_id"], r["reviewer_id"], r["rating"], r["source"])
            for r in records["review"].to_list()] == [("rev1", "forumA1", "Reviewer_ab", 6, "human"),
                                                      ("rev2", "forumA1", "Reviewer_cd", 3, "human")]
    out = tmp_path / "records"
    assert CliRunner().invoke(main, ["data", "import-dump", str(dump), "ICLR", "2024", "-o", str(out)]).exit_code == 0
    evaluated = CliRunner().invoke(main, ["evaluate", str(out), "-o", str(tmp_path / "results.json")])
    assert evaluated.exit_code == 0, evaluated.output
    [human] = json.loads((tmp_path / "results.json").read_text())["groups"]
    assert (human["label"], human["n_reviews"]) == ("human", 2)
    # The two ratings on ICLR 2024's scale (1, 3, 5, 6, 8, 10): one 6 and one 3.
    assert human["rating_distribution"]["ICLR 2024"]["distribution"] == {
        "1": 0.0, "3": 0.5, "5": 0.0, "6": 0.5, "8": 0.0, "10": 0.0}


def test_a_records_folder_without_the_kind_asked_for_says_so(tmp_path):
    (tmp_path / "papers.jsonl").write_text('{"paper_id": "p1"}\n')
    with pytest.raises(RecordError, match=r"the records folder holds no reviews.jsonl"):
        load_records(tmp_path, "review")
    assert [p["paper_id"] for p in load_records(tmp_path, "paper")] == ["p1"]


def test_every_edition_maps_its_review_form_as_the_generic_note_reader_does():
    """Notes read outside `data import-dump` (praib.records.peer) map a form field as every edition does."""
    import yaml

    from praib.records.peer import OPENREVIEW_REVIEW_FORM
    from praib.sources.openreview import EDITIONS_DIR

    mapped = {}
    for path in sorted(EDITIONS_DIR.glob("*.yaml")):
        for edition in yaml.safe_load(path.read_text())["editions"]:
            mapped.update(edition.get("review_form") or {})
            assert {k: v for k, v in (edition.get("review_form") or {}).items()
                    if OPENREVIEW_REVIEW_FORM.get(k) != v} == {}, (path.name, edition["years"])
    assert set(mapped) == set(OPENREVIEW_REVIEW_FORM)
