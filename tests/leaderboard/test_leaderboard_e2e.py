"""End to end: two submissions built from the demo set are validated, scored by
`praib leaderboard run` and reported by `praib report`; the report's numbers are checked
against the metric functions called directly on the same rows."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import mannwhitneyu

from praib.metrics.text.citations import find_citations
from praib.cli.main import main
from praib.metrics.scores.distributions import distribution_difference
from praib.parsing import parse_reviews
from praib.metrics.text.readability import readability
from praib.records import load_records
from praib.scales import venue_scales
from praib.metrics.text.xref import find_xrefs
from tests.leaderboard.report_page import cell, decode_png, parse, table

DEMO = Path(str(resources.files("praib") / "data" / "demo"))
MANIFEST = {"revision": None, "backend": "transformers", "prompts": ["extended"],
            "sampling": {"temperature": 0.0, "max_new_tokens": 2048}, "date": "2026-01-05",
            "knowledge_cutoff": "2024-06"}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Build the reference and the two submissions, validate them, run the leaderboard and the report."""
    root = tmp_path_factory.mktemp("e2e")
    demo = [json.loads(line) for line in (DEMO / "reviews.jsonl").read_text().splitlines() if line.strip()]
    human = [r for r in demo if r["source"] == "human"]
    # Pre-LLM copies of the ICLR panels (ICLR's post-LLM era starts in 2024), shorter by their weaknesses,
    # so the reference spans both eras.
    pre = [{**r, "year": 2023, "paper_id": "pre-" + r["paper_id"], "review_id": "pre-" + r["review_id"],
            "weaknesses": None} for r in human if r["venue"] == "ICLR"]
    write_jsonl(root / "reference.jsonl", human + pre)

    clean = [r for r in demo if r["source"] == "demo-model-a" and r["prompt"] == "extended"]
    write_jsonl(root / "clean" / "reviews.jsonl", clean)
    (root / "clean" / "manifest.json").write_text(json.dumps({"model": "demo-model-a", **MANIFEST}))

    planted = [dict(r) for r in demo if r["source"] == "demo-model-b" and r["prompt"] == "extended"]
    planted = [r for r in planted if r["paper_id"] != "demo-neurips25-04"]               # a missing paper
    planted.append({**planted[0], "review_id": planted[0]["review_id"] + "-copy"})         # a duplicate
    planted[1]["rating"] = 7                                                              # not on ICLR's scale
    planted[5]["text"] = "Interesting work. I enjoyed reading it and have no further comments."  # unparsed
    write_jsonl(root / "planted" / "reviews.jsonl", planted)
    (root / "planted" / "manifest.json").write_text(json.dumps(
        {"model": "demo-model-b", **MANIFEST, "date": "last Tuesday"}))                   # a bad manifest field

    runner = CliRunner()
    papers = str(DEMO / "papers.jsonl")
    validated = {name: runner.invoke(main, ["leaderboard", "validate", str(root / name), "--benchmark-papers", papers])
                 for name in ("clean", "planted")}
    # The submitter fixes the manifest; the data problems stay and are scored as they are.
    (root / "planted" / "manifest.json").write_text(json.dumps({"model": "demo-model-b", **MANIFEST}))
    leaderboard = runner.invoke(main, ["leaderboard", "run", str(root / "clean"), str(root / "planted"),
                                       "--reference", str(root / "reference.jsonl"), "--n-bootstrap", "200",
                                       "--seed", "0", "--output", str(root / "out"), "--no-progress"])
    assert leaderboard.exit_code == 0, leaderboard.output
    report = runner.invoke(main, ["leaderboard", "report", str(root / "out"), "--output", str(root / "report.html"),
                                  "--markdown", str(root / "report.md")])
    assert report.exit_code == 0, report.output
    return {"root": root, "validated": validated, "report_output": report.output,
            "html": (root / "report.html").read_text(), "markdown": (root / "report.md").read_text()}


def parsed_rows(path: Path) -> list[dict]:
    return parse_reviews(load_records(str(path), "review")).to_list()


def direct_text_metrics(rows: list[dict]) -> dict[str, float]:
    """Mean per review of each Table 1 text metric, from the per-text metric functions."""
    texts = [r["text"] for r in rows if r["text"] and not r["text"].isspace()]
    scores = [readability(t) for t in texts]
    return {"tkc": np.mean([s.tkc for s in scores]), "ttr": np.mean([s.ttr for s in scores]),
            "fre": np.mean([s.fre for s in scores]), "fkg": np.mean([s.fkg for s in scores]),
            "citations": np.mean([len(find_citations(t)) for t in texts]),
            "xref": np.mean([len(find_xrefs(t)) for t in texts])}


def ordinal_alpha(panels: list[list[float]]) -> float:
    """Krippendorff's ordinal alpha with one row of the reliability matrix per rating slot."""
    width = max(len(p) for p in panels)
    matrix = np.full((width, len(panels)), np.nan)
    for j, ratings in enumerate(panels):
        matrix[:len(ratings), j] = ratings
    return krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")


def panels(human: list[dict], venue: str, year: int, model: list[dict] | None = None) -> list[list[float]]:
    """Rating panels (papers with at least two human ratings) of a venue-year, plus the model's ratings."""
    by_paper: dict[str, list[float]] = {}
    for r in human:
        if r["venue"] == venue and r["year"] == year and r["rating"] is not None:
            by_paper.setdefault(r["paper_id"], []).append(r["rating"])
    by_paper = {p: v for p, v in by_paper.items() if len(v) >= 2}
    for r in model or []:
        if r["paper_id"] in by_paper and r["rating"] is not None:
            by_paper[r["paper_id"]].append(r["rating"])
    return list(by_paper.values())


def test_validation_reports_each_planted_problem_on_its_own_line(run):
    clean, planted = run["validated"]["clean"], run["validated"]["planted"]
    assert clean.exit_code == 0 and "valid (8 reviews)" in clean.output
    assert planted.exit_code == 1
    problems = [line for line in planted.output.splitlines() if line.strip().startswith("problem:")]
    expected = ["manifest", "coverage", "demo-neurips25-04", "parse rate", "duplicates", "7 not in"]
    for word in expected:
        assert sum(word in line for line in problems) == 1, (word, problems)
    assert len(problems) == 5


def test_table_1_equals_the_metric_functions_on_the_same_rows(run):
    root = run["root"]
    tables = parse(run["html"])
    pooled = table(tables, "Behaviour: all venues pooled")
    sides = {"human (reference)": [r for r in parsed_rows(root / "reference.jsonl")],
             "clean": parsed_rows(root / "clean" / "reviews.jsonl"),
             "planted": parsed_rows(root / "planted" / "reviews.jsonl")}
    digits = {"tkc": 0, "ttr": 3, "fre": 1, "fkg": 1, "citations": 2, "xref": 2}
    labels = {"tkc": "TKC", "ttr": "TTR", "fre": "FRE", "fkg": "FKG", "citations": "Cit.", "xref": "Xref."}
    direct = {name: direct_text_metrics(rows) for name, rows in sides.items()}
    for name, values in direct.items():
        for metric, value in values.items():
            shown = cell(pooled, name, labels[metric]).split()[0]
            assert shown == f"{value:.{digits[metric]}f}", (name, metric, shown, value)
    # The closest-to-human mark on TKC, decided from the direct values.
    human_tkc = direct["human (reference)"]["tkc"]
    closest = min(("clean", "planted"), key=lambda n: abs(direct[n]["tkc"] - human_tkc))
    other = "planted" if closest == "clean" else "clean"
    assert "★" in cell(pooled, closest, "TKC") and "★" not in cell(pooled, other, "TKC")
    assert cell(pooled, closest, "Δ TKC") == f"{abs(direct[closest]['tkc'] - human_tkc):.0f} ★"
    markdown_row = next(line for line in run["markdown"].splitlines() if line.startswith(f"| {closest} | **"))
    assert f"**{direct[closest]['tkc']:.0f} \\[" in markdown_row


def test_agreement_and_rating_distance_equal_krippendorff_and_praib_distributions(run):
    root = run["root"]
    human = parsed_rows(root / "reference.jsonl")
    clean = parsed_rows(root / "clean" / "reviews.jsonl")
    tables = parse(run["html"])
    alpha_human = {"ICLR": np.mean([ordinal_alpha(panels(human, "ICLR", y)) for y in (2023, 2025)]),
                   "NeurIPS": ordinal_alpha(panels(human, "NeurIPS", 2025))}
    alpha_clean = {v: ordinal_alpha(panels(human, v, 2025, clean)) for v in ("ICLR", "NeurIPS")}
    for venue in ("ICLR", "NeurIPS"):
        t = table(tables, f"Behaviour: {venue}")
        assert cell(t, "human (reference)", "α").split()[0] == f"{alpha_human[venue]:.2f}"
        assert cell(t, "clean", "α").split()[0] == f"{alpha_clean[venue]:.2f}"
    pooled = table(tables, "Behaviour: all venues pooled")
    assert cell(pooled, "clean", "α").split()[0] == f"{np.mean(list(alpha_clean.values())):.2f}"

    total_variation = []
    for venue in ("ICLR", "NeurIPS"):
        values = venue_scales(venue, 2025).rating.values
        difference = distribution_difference([r["rating"] for r in clean if r["venue"] == venue],
                                             [r["rating"] for r in human if r["venue"] == venue and r["year"] == 2025],
                                             values)
        total_variation.append(difference["total_variation"])
    distributions = table(tables, "Rating and confidence distributions: all venues pooled")
    assert cell(distributions, "clean", "Rating TV").split()[0] == f"{np.mean(total_variation):.3f}"


def test_era_comparison_equals_scipy_mann_whitney(run):
    human = parsed_rows(run["root"] / "reference.jsonl")
    tkc = {year: [readability(r["text"]).tkc for r in human if r["venue"] == "ICLR" and r["year"] == year and r["text"]]
           for year in (2023, 2025)}
    test = mannwhitneyu(tkc[2025], tkc[2023], alternative="two-sided")
    tables = parse(run["html"])
    comparison = table(tables, "ICLR: pre- vs post-LLM era (Mann-Whitney U)")
    row = next(r for r in comparison["rows"] if r[0] == "TKC")
    assert row[2] == str(len(tkc[2023])) and row[4] == str(len(tkc[2025]))
    assert row[1].split()[0] == f"{np.mean(tkc[2023]):.0f}" and row[3].split()[0] == f"{np.mean(tkc[2025]):.0f}"
    assert row[5] == f"{test.statistic:.1f}"
    assert row[6] == ("< 0.001" if test.pvalue < 0.001 else f"{test.pvalue:.3f}")
    assert row[7] == f"{2 * test.statistic / (len(tkc[2023]) * len(tkc[2025])) - 1:.3f}"
    per_year = table(tables, "ICLR: human review metrics per year (mean per review)")
    assert per_year["rows"][0] == ["Metric", "2023", "2025"]
    # NeurIPS has 2025 reviews only: its years are shown, and no comparison is made.
    assert "NeurIPS: pre- vs post-LLM era (Mann-Whitney U)" not in [t["caption"] for t in tables.tables]
    assert "No pre-LLM reviews of NeurIPS (the post-LLM era starts in 2023): no era comparison." in run["html"]


def test_report_has_every_plot_and_says_what_it_left_out(run):
    images = parse(run["html"]).images
    assert [i["alt"] for i in images] == ["Metric values per source", "clean: rating and confidence distributions",
                                          "planted: rating and confidence distributions",
                                          "Human review metrics per year"]
    for image in images:
        assert decode_png(image["src"])[..., :3].std() > 0.05
    assert "left out (no data): Coverage of the human strengths and weaknesses, Target/aspect agreement, " \
           "Robustness to perturbations, Average treatment effects of research-logic edits" in run["report_output"]
