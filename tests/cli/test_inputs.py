"""Every command takes the inputs people have (issue 14): records as JSONL, JSON, Parquet or CSV, a folder
`praib data build` wrote, and papers as one .md file or as PDFs; an input it cannot read says what it can."""

import json

from click.testing import CliRunner

from praib.cli.main import main
from tests.paths import ROOT
from tests.sources.pdfs import PAGES, write_pdf

DEMO = ROOT / "praib" / "data" / "demo"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def demo_rows():
    return [json.loads(line) for line in (DEMO / "reviews.jsonl").read_text().splitlines()]


def test_evaluate_reads_reviews_from_csv_as_from_jsonl(tmp_path):
    import csv

    columns = ["review_id", "paper_id", "venue", "year", "decision", "source", "model", "prompt", "text", "rating",
               "confidence"]
    rows = demo_rows()
    with open(tmp_path / "reviews.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows({k: ("" if r.get(k) is None else r[k]) for k in columns} for r in rows)
    (tmp_path / "reviews.jsonl").write_text("".join(json.dumps({k: r.get(k) for k in columns}) + "\n" for r in rows))
    from_csv, from_jsonl = tmp_path / "csv.json", tmp_path / "jsonl.json"
    assert invoke("evaluate", tmp_path / "reviews.csv", "-o", from_csv, "--no-progress").exit_code == 0
    assert invoke("evaluate", tmp_path / "reviews.jsonl", "-o", from_jsonl, "--no-progress").exit_code == 0
    strip = lambda data: {k: v for k, v in data.items() if k != "input"}  # noqa: E731
    assert strip(json.loads(from_csv.read_text())) == strip(json.loads(from_jsonl.read_text()))


def test_a_built_folder_is_evaluated_model_reviews_against_its_human_reviews(tmp_path):
    rows = demo_rows()
    (tmp_path / "human.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows if r["source"] == "human"))
    (tmp_path / "gen.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows if r["source"] != "human"))
    built = tmp_path / "praib"
    assert invoke("data", "build", "--reviews", tmp_path / "human.jsonl", "--generated-reviews",
                  tmp_path / "gen.jsonl", "--output", built).exit_code == 0
    result = invoke("evaluate", built, "-o", tmp_path / "built.json", "--no-progress")
    assert result.exit_code == 0, result.output
    assert f"Evaluating {built}:generated_reviews against {built}:reviews" in result.output
    labels = [g["label"] for g in json.loads((tmp_path / "built.json").read_text())["groups"]]
    assert labels == ["human", "demo-model-a/extended", "demo-model-a/guidelines", "demo-model-b/extended",
                      "demo-model-b/guidelines"]


def test_perturb_takes_one_markdown_paper_and_a_folder_of_pdfs(tmp_path):
    paper = tmp_path / "paper-7.md"
    paper.write_text("# A Title\n\n## 1 Introduction\n\nWe study the color of graphs in this analysis.\n")
    result = invoke("perturb", "spelling", paper, "--perturbation-arg", "fraction=1.0", "-o", tmp_path / "a.jsonl")
    assert result.exit_code == 0, result.output
    [row] = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert row["paper_id"] == "paper-7" and "colour" in row["text"] and "analyse" not in row["title"]
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    write_pdf(pdfs / "p1.pdf", PAGES)
    result = invoke("perturb", "whitespace", pdfs, "-o", tmp_path / "b.jsonl")
    assert result.exit_code == 0, result.output
    [row] = [json.loads(line) for line in (tmp_path / "b.jsonl").read_text().splitlines()]
    assert row["paper_id"] == "p1" and row["title"] == "Reviewing Reviewers"
    assert "Peer review is slow and costly." in " ".join(row["text"].split())  # the PDF's text, spaces widened


def test_an_input_no_command_reads_names_what_is_accepted(tmp_path):
    odd = tmp_path / "reviews.tsv"
    odd.write_text("a\tb\n")
    result = invoke("evaluate", odd)
    assert result.exit_code == 1
    assert ("unsupported file type; give a .jsonl, .json, .parquet or .csv file, a folder of .parquet or .jsonl "
            "files, a saved dataset, a dataset folder (DIR or DIR:config") in result.output
