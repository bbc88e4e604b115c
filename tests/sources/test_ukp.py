"""The UKP counter-review-logic release read into praib records and written back (issue 13, item 5).

tests/fixtures/ukp is a small release of the same shape: two papers (one with a table, a figure, a
subsection and an appendix section before the references), a blueprint with every documented field
and a few the documentation (docs/perturbations.md) does not name, a layout and a soundness-critical counterfactual. Its
index.json files and the layout counterfactual's structured_md were worked out by hand from the
markdown lines. The real paper and counterfactual of the release in ../shared/data are optional.
"""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.perturb.logic import load_logic, release_index, split_paragraphs
from praib.records import RecordError, load_records
from praib.records.atomic import RECORD
from praib.sources.ukp import (blueprint_numbering, blueprint_to_logic, logic_to_blueprint, read_release,
                               venue_and_year, write_release)
from tests.paths import FIXTURES, SHARED_DATA

RELEASE = FIXTURES / "ukp"
PAPER = "ICLR.cc_2025%sparse01"
PAPER_DIR = RELEASE / "papers" / "ICLR.cc_2025_Conference" / PAPER
BLUEPRINT = RELEASE / "blueprints" / f"{PAPER}.json"
SAMPLE = SHARED_DATA / "counter-review-logic"
SAMPLE_PAPER = "2023.acl%2023.acl-long.124"


def run(*args) -> "click.testing.Result":  # noqa: F821
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def files_of(folder: Path) -> list[str]:
    """The files in ``folder``, but for praib's record of those it wrote there."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != RECORD)


# --------------------------------------------------------------------------- paragraph ids

def test_the_line_index_is_the_one_worked_out_by_hand():
    assert release_index((PAPER_DIR / "paper.md").read_text()) == json.loads((PAPER_DIR / "index.json").read_text())
    layout = json.loads((RELEASE / "cf_datasets" / "paper_layout" / f"{PAPER}.json").read_text())["cf_paper"]
    assert release_index(layout["md"]) == layout["structured_md"]


def test_paragraph_ids_follow_the_release_numbering_and_blueprints_skip_the_appendix():
    text = (PAPER_DIR / "paper.md").read_text()
    paragraphs = {p.id: p.text_of(text) for p in split_paragraphs(text)}
    assert paragraphs == {
        "p0": "We study sparse adapters for low-resource translation.",
        "p1": "Low-resource translation lacks data.",
        "p2": "We show that sparse adapters help.",
        "p3": "Adapters are small modules\ninserted into each layer.",  # the table after it is no paragraph
        "p4": "Sparse adapters improve BLEU by 3.5 points on en-sw (Table 1).",
        "p5": "Adapter sparsity correlates with translation quality.",
        "p6": "The proof is in the appendix.",
        "p7": "Vaswani et al. 2017. Attention is all you need.",
    }
    ids, sections = blueprint_numbering(text)
    # A blueprint is made from the paper without its appendix: its paragraph 6 is the references' p7.
    assert ids == ["p0", "p1", "p2", "p3", "p4", "p5", "p7"]
    assert sections["p6"] == "Appendix A Proofs"


def test_a_rerun_replaces_its_own_files_and_refuses_foreign_ones(tmp_path):
    """Outputs are replaced, not merged (issue 14): a second import or export into the same folder leaves
    no file of the first behind, and a folder holding other files is refused unless --overwrite."""
    imported, back = tmp_path / "records", tmp_path / "back"
    run("data", "import-ukp", RELEASE, "--output", imported)
    run("data", "export-ukp", imported, "--output", back)
    (imported / "logic.jsonl").unlink()  # the second export has no blueprint to write
    stale = back / "blueprints" / f"{PAPER}.json"
    assert stale.exists()
    run("data", "export-ukp", imported, "--output", back)
    assert not stale.exists() and files_of(back) == [f for f in files_of(RELEASE) if not f.startswith("blueprints/")]
    run("data", "import-ukp", RELEASE, "--output", imported)
    assert (imported / "logic.jsonl").exists()
    (back / "notes.txt").write_text("mine")
    refused = CliRunner().invoke(main, ["data", "export-ukp", str(imported), "--output", str(back)])
    assert refused.exit_code == 1 and "holds files praib did not write there, or that changed since (notes.txt)" in \
        refused.output
    run("data", "export-ukp", imported, "--output", back, "--overwrite")
    assert (back / "notes.txt").read_text() == "mine" and stale.exists()


@pytest.mark.skipif(not SAMPLE.exists(), reason="shared real data not available")
def test_the_real_papers_index_and_its_counterfactuals_index_are_computed_exactly():
    folder = SAMPLE / "papers" / "2023.acl" / SAMPLE_PAPER
    text = (folder / "paper.md").read_text()
    assert release_index(text) == json.loads((folder / "index.json").read_text())
    layout = json.loads((SAMPLE / "cf_datasets" / "paper_layout" / f"{SAMPLE_PAPER}.json").read_text())["cf_paper"]
    assert release_index(layout["md"]) == layout["structured_md"]
    paragraphs = split_paragraphs(text)
    assert paragraphs[0].id == "p0" and paragraphs[0].text_of(text).startswith("Video multimodal fusion aims")
    # The first paragraph of the introduction is line 19 of the file, after the figure block of lines 10-17.
    assert paragraphs[1].text_of(text) == text.split("\n")[19]


# --------------------------------------------------------------------------- reading

def test_the_release_becomes_papers_counterfactuals_and_logic():
    release = read_release(RELEASE)
    assert release.describe() == ("2 paper folders (ACL 1, ICLR 1), 1 blueprint and 2 counterfactuals "
                                  "(blueprint_result_picf 1, paper_layout 1; 1 soundness-critical, "
                                  "1 soundness-neutral)")
    papers = {p["paper_id"]: p for p in release.papers}
    assert {pid: (p["venue"], p["year"], p["title"], p["abstract"]) for pid, p in papers.items()} == {
        PAPER: ("ICLR", 2025, "Sparse Adapters for Low-Resource Translation",
                "We study sparse adapters for low-resource translation."),
        "2023.acl%2023.acl-long.7": ("ACL", 2023, "Café Parsing", "We parse café menus.")}
    assert papers[PAPER]["text"] == (PAPER_DIR / "paper.md").read_text()
    variants = {v["perturbation"]["kind"]: v for v in release.counterfactuals}
    assert {kind: v["perturbation"]["category"] for kind, v in variants.items()} == {
        "paper_layout": "soundness-neutral", "blueprint_result_picf": "soundness-critical"}
    assert variants["paper_layout"]["perturbation"]["description"] == (
        "replaced \\n by random number of \\n; moved all figures and tables to the very back of the paper")
    assert "lower BLEU by 0.7 points" in variants["blueprint_result_picf"]["text"]
    assert all(v["paper_id"] == PAPER and v["venue"] == "ICLR" for v in release.counterfactuals)


def test_a_blueprint_keeps_every_field_and_links_findings_conclusions_and_results():
    text = (PAPER_DIR / "paper.md").read_text()
    logic = blueprint_to_logic(json.loads(BLUEPRINT.read_text()), text)
    assert logic["goal"] == {"summary": "Whether sparse adapters help low-resource translation.", "paragraphs": [],
                             "genre": "Method Paper", "secondary_genre": "null", "confidence": "High",
                             "reasoning": "It proposes adapters and tests them."}
    # "Introduction, paragraph 2" and the coreference at paragraph number 4.
    assert logic["findings"] == [{"id": "cc0", "rank": 1, "summary": "Sparse adapters help low-resource translation.",
                                  "paragraphs": ["p2", "p4"], "conclusions": ["conc0"]}]
    first = logic["contributions"][0]
    assert (first["score"], first["speculative"], first["evidence"]["span"], first["evidence"]["paragraphs"]) == (
        9, False, "We show that sparse adapters help.", ["p2"])
    assert first["coreferences"][0] == {"location": None, "location_number": 4, "span": "Sparse adapters improve BLEU",
                                        "media_summary": None, "paragraphs": ["p4"]}
    assert [c["speculative"] for c in logic["contributions"]] == [False, False, True]
    assert logic["contributions"][2]["evidence"]["paragraphs"] == ["p0"]  # "Abstract"
    [conclusion] = logic["conclusions"]
    assert (conclusion["paragraphs"], conclusion["results"], conclusion["contributions"], conclusion["context"]) == (
        ["p5"], ["res0"], ["cc0"], "Results section.")
    [result] = logic["results"]
    # "Table 1" names no paragraph and its span is inside the table block; blueprint paragraph 6 is p7.
    assert [e["paragraphs"] for e in result["evidences"]] == [[], ["p4"]]
    assert result["evidences"][0]["media_summary"] == "BLEU per pair"
    assert (result["paragraphs"], result["conclusions"]) == (["p4", "p7"], ["conc0"])
    assert logic["method"]["steps"][0]["number"] == 1 and logic["method"]["steps"][0]["results"] == ["res0"]
    assert logic["model"] == "gpt-4o-mini"
    # What no typed field holds: a score that is not an integer, an undocumented key, the rest of meta.
    assert json.loads(logic["blueprint_extra"]) == {
        "/all_contributions/2/score": 7.5, "/conclusions/conc0/reviewer_note":
        "kept although the release documents no such field", "/meta/feedback": True, "/meta/merge": False}
    assert logic["contributions"][2]["score"] is None


def test_every_resolved_paragraph_holds_its_quote():
    text = (PAPER_DIR / "paper.md").read_text()
    paragraphs = {p.id: p.text_of(text) for p in split_paragraphs(text)}
    logic = blueprint_to_logic(json.loads(BLUEPRINT.read_text()), text)
    passages = [p for c in logic["contributions"] for p in [c["evidence"], *(c["coreferences"] or [])]] + [
        p for item in logic["conclusions"] + logic["results"] + logic["method"]["steps"]
        for p in item["evidences"] + item["coreferences"]]
    resolved = [(p["span"], pid) for p in passages for pid in p["paragraphs"]]
    assert len(resolved) == 8
    assert all(span in paragraphs[pid] for span, pid in resolved)


def test_locations_in_the_forms_the_release_writes():
    text = (PAPER_DIR / "paper.md").read_text()

    def paragraphs_of(location, span=None):
        blueprint = {"paper": PAPER, "conclusions": {"c": {"evidences": [{"location": location, "span": span}]}}}
        return blueprint_to_logic(blueprint, text)["conclusions"][0]["paragraphs"]

    assert paragraphs_of("paragraphs 2-4") == ["p2", "p3", "p4"]
    assert paragraphs_of("Paragraphs 1 and 5") == ["p1", "p5"]
    assert paragraphs_of("paragraph no. 3") == ["p3"]
    assert paragraphs_of("5") == ["p5"] and paragraphs_of(6) == ["p7"]
    assert paragraphs_of("paragraph 99") == [] and paragraphs_of("Figure 1") == []
    # A location that names no paragraph falls back to the paragraph that holds the quote.
    assert paragraphs_of("Section 3", "sparsity  correlates with") == ["p5"]


# --------------------------------------------------------------------------- round trips

def test_import_then_export_gives_the_release_back(tmp_path):
    imported = tmp_path / "records"
    out = run("data", "import-ukp", RELEASE, "--output", imported).output
    assert out == ("read 2 paper folders (ACL 1, ICLR 1), 1 blueprint and 2 counterfactuals (blueprint_result_picf 1, "
                   "paper_layout 1; 1 soundness-critical, 1 soundness-neutral); wrote papers.jsonl, "
                   f"counterfactuals.jsonl, logic.jsonl, release.jsonl to {imported}\n")
    assert len(load_records(imported / "papers.jsonl", "paper")) == 2
    assert len(load_logic(imported / "logic.jsonl")) == 1
    back = tmp_path / "back"
    assert run("data", "export-ukp", imported, "--output", back).output == (
        f"wrote 2 paper folders, 1 blueprint and 2 counterfactuals in the UKP release's layout to {back}\n")
    assert files_of(back) == files_of(RELEASE)
    different = [name for name in files_of(RELEASE) if not filecmp.cmp(RELEASE / name, back / name, shallow=False)]
    # A blueprint's objects are the model's answers, in whatever key order it wrote them; the record keeps the
    # values, not that order. Everything else comes back byte for byte: the papers, the hand-made index files,
    # the stale structured_md of the critical counterfactual, a venue form json.dumps cannot write.
    assert different == [f"blueprints/{PAPER}.json"]
    assert json.loads((back / different[0]).read_text()) == json.loads(BLUEPRINT.read_text())


@pytest.mark.skipif(not SAMPLE.exists(), reason="shared real data not available")
def test_the_real_release_sample_comes_back_byte_for_byte(tmp_path):
    out = run("data", "import-ukp", SAMPLE, "--output", tmp_path / "records").output
    assert out.startswith("read 1 paper folder (ACL 1), 0 blueprints and 1 counterfactual (paper_layout 1; ")
    run("data", "export-ukp", tmp_path / "records", "--output", tmp_path / "back")
    for part in ("papers", "cf_datasets"):
        assert files_of(tmp_path / "back" / part) == files_of(SAMPLE / part)
        assert all(filecmp.cmp(SAMPLE / part / name, tmp_path / "back" / part / name, shallow=False)
                   for name in files_of(SAMPLE / part))


def test_logic_and_variants_praib_made_are_written_in_the_release_format_and_read_back(tmp_path):
    release = read_release(RELEASE)
    text = next(p["text"] for p in release.papers if p["paper_id"] == PAPER)
    logic = {"paper_id": PAPER, "goal": {"summary": "Do sparse adapters help?", "paragraphs": ["p0"]},
             "findings": [{"id": "F1", "rank": 1, "summary": "Sparse adapters help.", "paragraphs": ["p2", "p7"],
                           "conclusions": ["C1"]}],
             "conclusions": [{"id": "C1", "summary": "BLEU improves.", "paragraphs": ["p4"], "results": ["R1"]}],
             "results": [{"id": "R1", "summary": "+3.5 BLEU.", "paragraphs": ["p4", "p6"]}],
             "model": "Qwen/Qwen3-8B", "attempts": 1}
    variant = {**next(p for p in release.papers if p["paper_id"] == PAPER),
               "text": text.replace("improve BLEU by 3.5", "lower BLEU by 0.7"),
               "perturbation": {"kind": "result-negated", "category": "soundness-critical", "component": "paper",
                                "description": "result R1 negated", "seed": 0}}
    files = [f for f in release.files if f["role"] in ("meta", "index", "venue")]
    write_release(tmp_path, release.papers, [variant], [logic], files)

    blueprint = json.loads((tmp_path / "blueprints" / f"{PAPER}.json").read_text())
    paragraph = {p.id: p.text_of(text) for p in split_paragraphs(text)}
    assert blueprint["all_contributions"] == [{
        "claim_summary": "Sparse adapters help.", "type": "finding", "evidence": paragraph["p2"],
        "location": "paragraph 2", "speculative": "No", "id": "F1",
        "coreferences": [{"location": 6, "span": paragraph["p7"]}]}]  # p7 is the blueprint's paragraph 6
    assert blueprint["findings_contributions"] == ["F1"]
    assert blueprint["conclusions"]["C1"]["associated_contribution_claims"] == ["F1"]
    # The appendix paragraph has no blueprint number: its section names it.
    assert blueprint["results"]["R1"]["evidences"] == [
        {"location": "paragraph 4", "span": paragraph["p4"]},
        {"location": "Appendix A Proofs", "span": paragraph["p6"]}]
    assert blueprint["results"]["R1"]["associated_conclusions"] == ["C1"]
    assert blueprint["method"] == {"steps": []} and blueprint["meta"] == {"architect": "Qwen/Qwen3-8B"}

    counterfactual = json.loads((tmp_path / "cf_datasets" / "result-negated" / f"{PAPER}.json").read_text())
    assert list(counterfactual) == ["o_paper", "cf_paper", "changes", "counterfactual_type"]
    assert (counterfactual["o_paper"], counterfactual["changes"], counterfactual["counterfactual_type"]) == (
        PAPER, ["result R1 negated"], "result-negated")
    meta = counterfactual["cf_paper"]["meta"]
    assert (meta["venue"], meta["oid"], meta["title"], meta["venue_config"]["id"]) == (
        "ICLR.cc_2025", PAPER, "Sparse Adapters for Low-Resource Translation", "ICLR.cc_2025_Conference")
    assert counterfactual["cf_paper"]["md"] == variant["text"]

    again = read_release(tmp_path)
    [read_logic] = again.logic
    # Whole paragraphs are quoted, so each quote resolves to the paragraph it came from.
    assert [(f["id"], f["paragraphs"], f["conclusions"]) for f in read_logic["findings"]] == [
        ("F1", ["p2", "p7"], ["C1"])]
    assert [(r["id"], r["paragraphs"]) for r in read_logic["results"]] == [("R1", ["p4", "p6"])]
    [read_variant] = again.counterfactuals
    assert (read_variant["text"], read_variant["perturbation"]["kind"]) == (variant["text"], "result-negated")


def test_a_paper_praib_collected_gets_a_release_id_and_folder(tmp_path):
    paper = {"paper_id": "abc123", "venue": "ICLR", "year": 2024, "title": "A paper", "abstract": "We study.",
             "text": "# A paper\n\nWe study things.\n"}
    write_release(tmp_path, [paper])
    folder = tmp_path / "papers" / "ICLR_2024" / "ICLR_2024%abc123"
    assert (folder / "paper.md").read_text() == paper["text"]
    assert json.loads((folder / "meta.json").read_text()) == {"title": "A paper", "summary": "We study."}
    assert venue_and_year("ICLR_2024") == ("ICLR", 2024)


def test_blueprints_round_trip_through_logic_even_when_values_do_not_fit_their_fields():
    text = (PAPER_DIR / "paper.md").read_text()
    odd = json.loads(BLUEPRINT.read_text())
    odd["research_goal"] = "Unknown research goal. Please check the paper manually."  # the release's own fallback
    odd["results"]["res0"]["evidences"][1]["location"] = ["paragraph", 4]
    odd["method"]["steps"][0]["step_number"] = "1a"
    odd["conclusions"]["conc0"]["coreferences"] = None
    odd["meta"] = {}
    assert logic_to_blueprint(blueprint_to_logic(odd, text), text) == odd


# --------------------------------------------------------------------------- reviewers and statistics

REVIEWS = [{"review_id": f"r{n}", "paper_id": PAPER, "venue": "ICLR", "year": 2025, "source": "human",
            "reviewer_id": f"R{n}", "text": f"The adapters are sound.\n\nRating: {rating}", "rating": rating,
            "confidence": 3} for n, rating in ((1, 6), (2, 8))]


def test_the_oracle_and_robustness_run_on_imported_counterfactuals(tmp_path):
    run("data", "import-ukp", RELEASE, "--output", tmp_path)
    (tmp_path / "reviews.jsonl").write_text("".join(json.dumps(r) + "\n" for r in REVIEWS))
    run("counterfactual", "oracle", tmp_path / "reviews.jsonl", tmp_path / "counterfactuals.jsonl",
        "--output", tmp_path / "oracle.jsonl")
    oracle = load_records(tmp_path / "oracle.jsonl", "review").to_list()
    ratings = {(r["perturbation"]["kind"], r["reviewer_id"]): r["rating"] for r in oracle}
    # ICLR 2025's scale is 1, 3, 5, 6, 8, 10: the critical variant loses one or two steps, the neutral none.
    assert ratings[("paper_layout", "R1")] == 6 and ratings[("paper_layout", "R2")] == 8
    assert ratings[("blueprint_result_picf", "R1")] in (5, 3) and ratings[("blueprint_result_picf", "R2")] in (6, 5)
    out = run("robustness", tmp_path / "oracle.originals.jsonl", tmp_path / "oracle.jsonl",
              "--output", tmp_path / "robustness.json").output
    assert "blueprint_result_picf" in out and "paper_layout" in out
    report = json.loads((tmp_path / "robustness.json").read_text())
    assert report["treatment_effects"]["reviewers"]


# --------------------------------------------------------------------------- what the release must look like

def _copy(tmp_path: Path) -> Path:
    shutil.copytree(RELEASE, tmp_path / "release")
    return tmp_path / "release"


def test_a_blueprint_of_a_paper_not_in_the_release_is_named(tmp_path):
    release = _copy(tmp_path)
    shutil.rmtree(release / "papers" / "ICLR.cc_2025_Conference")
    with pytest.raises(RecordError, match=rf"blueprints/{PAPER}\.json: field 'paper': the paper '{PAPER}' is not in"):
        read_release(release)


def test_a_second_counterfactual_of_one_type_and_paper_is_named(tmp_path):
    release = _copy(tmp_path)
    second = release / "cf_datasets" / "paper_layout_again" / f"{PAPER}.json"
    second.parent.mkdir()
    shutil.copy(release / "cf_datasets" / "paper_layout" / f"{PAPER}.json", second)
    with pytest.raises(RecordError, match=r"paper_layout_again/.*: a second paper_layout counterfactual of "):
        read_release(release)


def test_a_folder_without_the_release_parts_is_refused(tmp_path):
    with pytest.raises(RecordError, match="found none of them"):
        read_release(tmp_path)


def test_release_files_that_would_write_outside_the_output_are_refused(tmp_path):
    records = tmp_path / "records"
    run("data", "import-ukp", RELEASE, "--output", records)
    lines = (records / "release.jsonl").read_text().splitlines()
    (records / "release.jsonl").write_text(lines[0].replace('"path": "', '"path": "../../') + "\n")
    result = CliRunner().invoke(main, ["data", "export-ukp", str(records), "--output", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {records / 'release.jsonl'}: line 1: field 'path': expected a path "
                                    "inside the release folder")
    assert not (tmp_path.parent / "papers").exists()


def test_logic_files_from_before_the_blueprint_fields_still_load(tmp_path):
    old = {"paper_id": "p1", "goal": {"summary": "g", "paragraphs": ["p1"]},
           "findings": [{"id": "F1", "rank": 1, "summary": "f", "paragraphs": ["p1"], "conclusions": []}],
           "conclusions": [], "results": [], "model": "m", "attempts": 1}
    (tmp_path / "logic.jsonl").write_text(json.dumps(old) + "\n")
    [row] = load_logic(tmp_path / "logic.jsonl").to_list()
    assert row["findings"] == old["findings"] and row["goal"]["summary"] == "g"
    assert row["contributions"] is row["method"] is row["blueprint_extra"] is row["goal"]["genre"] is None


def test_a_blueprint_extra_that_fits_no_place_is_named():
    text = (PAPER_DIR / "paper.md").read_text()
    logic = blueprint_to_logic(json.loads(BLUEPRINT.read_text()), text)
    with pytest.raises(RecordError, match=r"logic of .*: field 'blueprint_extra': /all_contributions/9/score is no "):
        logic_to_blueprint({**logic, "blueprint_extra": json.dumps({"/all_contributions/9/score": 1})}, text)
    with pytest.raises(RecordError, match=r"field 'blueprint_extra': not JSON"):
        logic_to_blueprint({**logic, "blueprint_extra": "{"}, text)
