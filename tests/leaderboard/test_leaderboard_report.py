"""The leaderboard report (`praib report`) on small hand-made results directories."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from praib.leaderboard.report import (ReportError, build_sections, load_results, render_html, render_markdown,
                                     review_spreads, write_report)
from tests.leaderboard.report_page import CHROMIUM, cell, chromium, decode_png, parse, table
from tests.paths import ROOT

EVIL = '$5 $x$ <script>alert("x")</script> *bold* | [link](http://example.com)'


def result_row(submission, metric, value, venue="all", ci=None, human=None, distance=None, closest=False,
               n_papers=4, n_reviews=8):
    return {"submission": submission, "model": submission, "metric": metric, "venue": venue, "value": value,
            "ci_low": None if ci is None else ci[0], "ci_high": None if ci is None else ci[1],
            "n_papers": n_papers, "n_reviews": n_reviews, "human_value": human, "distance_to_human": distance,
            "closest_to_human": closest}


# Hand-made rows. Closest to human, by hand:
#   tkc: human 532.4; model-a 637.0 (|Δ| 104.6), model-b 898.2 (365.8), EVIL 1449.0 (916.6)  -> model-a
#   fre: human 39.1;  model-a 13.7 (25.4),  model-b 38.3 (0.8), EVIL 21.3 (17.8)            -> model-b
#   alpha ICLR: human 0.34; model-a 0.14 (0.20), model-b 0.32 (0.02), EVIL 0.35 (0.01)       -> EVIL
ROWS = [
    result_row("human", "tkc", 532.4, ci=(498.12, 560.71), n_reviews=26),
    result_row("model-a", "tkc", 637.0, ci=(601.5, 672.49), human=532.4, distance=104.6, closest=True),
    result_row("model-b", "tkc", 898.2, ci=(850.0, 950.0), human=532.4, distance=365.8),
    result_row(EVIL, "tkc", 1449.0, ci=(1400.0, 1500.0), human=532.4, distance=916.6),
    result_row("human", "fre", 39.14, ci=(37.02, 41.26)),
    result_row("model-a", "fre", 13.66, ci=(12.0, 15.3), human=39.14, distance=25.48),
    result_row("model-b", "fre", 38.31, ci=(36.9, 39.95), human=39.14, distance=0.83, closest=True),
    result_row(EVIL, "fre", 21.3, ci=(20.0, 22.6), human=39.14, distance=17.84),
    result_row("human", "krippendorff_alpha", 0.34, venue="ICLR", ci=(0.2, 0.45)),
    result_row("model-a", "krippendorff_alpha", 0.14, venue="ICLR", ci=(0.05, 0.2), human=0.34, distance=0.2),
    result_row("model-b", "krippendorff_alpha", 0.32, venue="ICLR", ci=(0.2, 0.4), human=0.34, distance=0.02),
    result_row(EVIL, "krippendorff_alpha", 0.35, venue="ICLR", ci=(0.3, 0.42), human=0.34, distance=0.01,
               closest=True),
    result_row("model-a", "rating_tv", 0.5385, venue="all", ci=None, distance=0.5385, closest=True),
    result_row("model-b", "rating_tv", 0.75, venue="all", ci=None, distance=0.75),
]

GROUP = {
    "label": "model-a", "is_reference": False, "tkc": {"mean": 637.0, "std": 54.3, "n": 8},
    "fre": {"mean": 13.66, "std": None, "n": 1},
    "rating_distribution": {"ICLR 2025": {
        "model": {"1": 0.0, "3": 0.0, "5": 0.0, "6": 0.25, "8": 0.75, "10": 0.0},
        "human": {"1": 0.0769, "3": 0.2308, "5": 0.2308, "6": 0.2308, "8": 0.2308, "10": 0.0},
        "n_model": 4, "n_human": 13}},
    "confidence_distribution": {"ICLR 2025": {
        "model": {"1": 0.0, "2": 0.0, "3": 0.5, "4": 0.5, "5": 0.0},
        "human": {"1": 0.0, "2": 0.1, "3": 0.4, "4": 0.4, "5": 0.1},
        "n_model": 4, "n_human": 13}},
}


def write_results(directory: Path, rows=ROWS, details=True, eras=None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), directory / "results.parquet")
    (directory / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (directory / "manifests").mkdir(exist_ok=True)
    (directory / "manifests" / "model-a.json").write_text(json.dumps(
        {"model": "org/model-a", "revision": "abc123", "backend": "vllm", "prompts": ["extended"],
         "sampling": {"temperature": 0.0, "max_new_tokens": 4096}, "date": "2026-01-05",
         "knowledge_cutoff": "2024-06"}))
    (directory / "run.json").write_text(json.dumps({"reference": "human.jsonl", "n_bootstrap": 1000, "seed": 0}))
    if details:
        (directory / "details").mkdir(exist_ok=True)
        (directory / "details" / "model-a.json").write_text(json.dumps(
            {"groups": [{"label": "human", "is_reference": True, "tkc": {"mean": 532.4, "std": 82.0, "n": 26}},
                        GROUP]}))
    if eras is not None:
        (directory / "eras.json").write_text(json.dumps(eras))
    return directory


@pytest.fixture
def report(tmp_path):
    directory = write_results(tmp_path / "results")
    write_report(directory, tmp_path / "report.html", tmp_path / "report.md")
    return (tmp_path / "report.html").read_text(), (tmp_path / "report.md").read_text()


def test_table_1_cells_are_the_results_rows_formatted(report):
    t = table(parse(report[0]), "Behaviour: all venues pooled")
    assert t["rows"][0] == ["Submission", "TKC", "Δ TKC", "FRE", "Δ FRE", "α ICLR", "Δ α ICLR"]
    assert [r[0] for r in t["rows"][1:]] == ["human (reference)", "model-a", "model-b", EVIL]
    assert cell(t, "human (reference)", "TKC") == "532 [498, 561]"
    assert cell(t, "human (reference)", "Δ TKC") == "–"
    assert cell(t, "model-a", "TKC") == "637 ★ [602, 672]"
    assert cell(t, "model-a", "Δ TKC") == "105 ★"
    assert cell(t, "model-b", "FRE") == "38.3 ★ [36.9, 40.0]"
    assert cell(t, "model-a", "FRE") == "13.7 [12.0, 15.3]"
    assert cell(t, "model-b", "Δ FRE") == "0.8 ★"
    assert cell(t, "human (reference)", "α ICLR") == "0.34 [0.20, 0.45]"
    assert cell(t, EVIL, "α ICLR") == "0.35 ★ [0.30, 0.42]"
    assert cell(t, "model-b", "Δ α ICLR") == "0.02"


def test_closest_to_human_is_marked_on_the_hand_computed_rows_only(report):
    t = table(parse(report[0]), "Behaviour: all venues pooled")
    header, rows = t["rows"][0], t["rows"]
    marked = sorted((rows[r][0], header[c]) for r, c in t["closest"])
    assert marked == sorted([("model-a", "TKC"), ("model-a", "Δ TKC"), ("model-b", "FRE"), ("model-b", "Δ FRE"),
                             (EVIL, "α ICLR"), (EVIL, "Δ α ICLR")])


def test_markdown_has_the_same_numbers_and_marks(report):
    markdown = report[1]
    lines = [line for line in markdown.splitlines() if line.startswith("| model-a |")]
    assert lines[0] == ("| model-a | org/model-a | abc123 | vllm | extended | temperature=0, max\\_new\\_tokens=4096 "
                        "| 2026-01-05 | 2024-06 | 4 | 8 |")
    assert lines[1] == "| model-a | **637 \\[602, 672\\] ★** | **105 ★** | 13.7 \\[12.0, 15.3\\] | 25.5 | " \
                       "0.14 \\[0.05, 0.20\\] | 0.20 |"
    assert "| human (reference) | 532 \\[498, 561\\] | – | 39.1 \\[37.0, 41.3\\] | – |" in markdown


def test_submission_names_are_escaped(report):
    html, markdown = report
    assert "<script>" not in html and "[link](" not in markdown and "<script>" not in markdown
    assert "$5 $x$ &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; *bold* | [link](http://example.com)" in html
    assert ("\\$5 \\$x\\$ \\<script\\>alert(\"x\")\\</script\\> \\*bold\\* \\| \\[link\\](http://example.com)"
            in markdown)
    # The escaped name stays one cell: the Markdown tables keep their column counts (10 and 7).
    evil_rows = [line for line in markdown.splitlines() if line.startswith("| \\$5")]
    assert [len(re.findall(r"(?<!\\)\|", row)) for row in evil_rows[:2]] == [11, 8]


def test_every_parquet_value_appears_in_its_cell(tmp_path):
    directory = write_results(tmp_path / "results")
    html = write_and_read(directory, tmp_path)
    parsed = parse(html)
    rows = pq.read_table(directory / "results.parquet").to_pylist()
    digits = {"tkc": 0, "fre": 1, "krippendorff_alpha": 2, "rating_tv": 3}
    labels = {"tkc": "TKC", "fre": "FRE", "krippendorff_alpha": "α", "rating_tv": "Rating TV"}
    for row in rows:
        captions = {"all": ["Behaviour: all venues pooled", "Rating and confidence distributions: all venues pooled"],
                    "ICLR": ["Behaviour: all venues pooled", "Behaviour: ICLR"]}[row["venue"]]
        name = row["submission"] + (" (reference)" if row["submission"] == "human" else "")
        found = []
        for caption in captions:
            t = table(parsed, caption)
            # The pooled table names the venue of a per-venue column; a one-venue table does not.
            column = labels[row["metric"]] + (f" {row['venue']}" if row["venue"] != "all" and "pooled" in caption
                                              else "")
            if column in t["rows"][0]:
                found.append(cell(t, name, column))
        assert found, (row, captions)
        assert {f.split()[0] for f in found} == {f"{row['value']:.{digits[row['metric']]}f}"}


def write_and_read(directory, tmp_path) -> str:
    write_report(directory, tmp_path / "page.html")
    return (tmp_path / "page.html").read_text()


def test_plots_are_inline_pngs_with_content(report):
    parsed = parse(report[0])
    alts = [image["alt"] for image in parsed.images]
    assert alts == ["Metric values per source", "model-a: rating and confidence distributions"]
    for image in parsed.images:
        pixels = decode_png(image["src"])
        assert pixels.shape[0] > 100 and pixels.shape[1] > 100
        assert pixels[..., :3].std() > 0.05  # drawn on, not a blank canvas
    assert "http://" not in report[0].replace("http://example.com", "")
    assert "https://" not in report[0]


def test_sections_without_data_are_left_out_with_a_note(tmp_path):
    rows = [result_row("human", "tkc", 500.0), result_row("m", "tkc", 600.0, human=500.0, distance=100.0,
                                                          closest=True)]
    directory = write_results(tmp_path / "results", rows=rows, details=False)
    sections = {s.anchor: s for s in build_sections(load_results(directory))}
    for anchor in ("coverage", "target-aspect", "robustness", "treatment", "eras", "other"):
        assert sections[anchor].note and not sections[anchor].tables and not sections[anchor].plots, anchor
    assert sections["coverage"].note.startswith("No coverage metrics in this run")
    # Not rendered as empty sections: named once at the end with what would produce them.
    markdown = render_markdown(list(sections.values()), "t")
    assert "## Coverage" not in markdown and "## Not in this report" in markdown
    assert f"- {sections['eras'].title}: No era analysis" in markdown
    html = render_html(list(sections.values()), "t")
    assert '<section id="coverage">' not in html and '<section id="not-in-this-report">' in html
    assert f"<li>{sections['coverage'].title}: No coverage metrics in this run" in html


def test_family_tables_robustness_verdicts_and_other_metrics(tmp_path):
    rows = ROWS[:2] + [
        result_row("model-a", "coverage_recall_strengths", 0.92, ci=(0.85, 0.97)),
        result_row("model-a", "target_aspect_f1", 0.351, ci=(0.3, 0.4)),
        result_row("model-a", "robustness_rating_soundness", -0.07),
        result_row("model-a", "ate_score_critical", -0.5, ci=(-0.9, -0.1)),
        result_row("model-a", "mystery_metric", 1.25),
    ]
    directory = write_results(tmp_path / "results", rows=rows)
    verdict = {"verdict": "decrease", "mean_difference": -0.5, "p_increase": 0.99, "p_decrease": 0.004,
               "p_equivalence": 0.4}
    details = json.loads((directory / "details" / "model-a.json").read_text())
    details["robustness"] = {"reviewers": {"model-a": {"perturbations": {
        "soundness": {"scores": {"rating": verdict, "confidence": {**verdict, "verdict": "equivalent",
                                                                    "mean_difference": 0.0, "p_equivalence": 0.01}}},
    }}}}
    (directory / "details" / "model-a.json").write_text(json.dumps(details))
    parsed = parse(write_and_read(directory, tmp_path))
    captions = [t["caption"] for t in parsed.tables]
    assert "Coverage of the human strengths and weaknesses: all venues pooled" in captions
    assert cell(table(parsed, "Target/aspect agreement: all venues pooled"), "model-a", "target aspect f1") \
        == "0.351 [0.300, 0.400]"
    assert cell(table(parsed, "Robustness to perturbations: all venues pooled"), "model-a", "robustness rating soundness") \
        == "-0.070"
    verdicts = table(parsed, "model-a: directional and invariance tests")
    assert verdicts["rows"][0] == ["Perturbation", "rating", "confidence"]
    assert cell(verdicts, "model-a / soundness", "rating") == "↓ decrease Δ -0.50, p 0.004"
    assert cell(verdicts, "model-a / soundness", "confidence") == "≈ equivalent Δ 0.00, p 0.010"
    assert cell(table(parsed, "Average treatment effects of research-logic edits: all venues pooled"),
                "model-a", "ate score critical") == "-0.500 [-0.900, -0.100]"
    assert cell(table(parsed, "Other metrics: all venues pooled"), "model-a", "mystery metric") == "1.250"


def test_bad_results_directories_are_named_in_the_error(tmp_path):
    with pytest.raises(ReportError, match="no results.parquet or results.jsonl"):
        load_results(tmp_path)
    (tmp_path / "results.jsonl").write_text(json.dumps(ROWS[0]) + "\n" + json.dumps({"submission": "x"}) + "\n")
    with pytest.raises(ReportError, match=r"results.jsonl: line 2: missing column\(s\) metric, venue, value"):
        load_results(tmp_path)
    (tmp_path / "results.jsonl").write_text(json.dumps(ROWS[0]) + "\n")
    (tmp_path / "eras.json").write_text("{not json")
    with pytest.raises(ReportError, match=r"eras.json: line 1: not valid JSON \(Expecting property name"):
        load_results(tmp_path)


def test_a_repeated_result_row_is_refused_and_an_exact_copy_dropped(tmp_path, caplog):
    from praib.cli.main import main

    injected = {**ROWS[5], "value": 99.0, "closest_to_human": True}   # model-a's fre again, another value
    directory = write_results(tmp_path / "conflict", rows=ROWS + [injected, ROWS[1]])
    result = CliRunner().invoke(main, ["leaderboard", "report", str(directory), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 1
    assert result.output.strip() == (f"Error: {directory / 'results.parquet'}: 1 submission/metric/venue key "
                                     "repeats with different content: model-a/fre/all")
    (directory / "results.parquet").unlink()
    with pytest.raises(ReportError, match=r"results.jsonl: 1 submission/metric/venue key repeats .*model-a/fre/all$"):
        load_results(directory)

    copied = write_results(tmp_path / "copied", rows=ROWS + [ROWS[1], ROWS[1], ROWS[6]])
    assert load_results(copied).rows == load_results(write_results(tmp_path / "clean")).rows
    assert (f"{copied / 'results.parquet'}: dropped 3 exact duplicate records "
            "(same submission/metric/venue key and content)") in caplog.text


def test_report_command(tmp_path):
    from praib.cli.main import main

    directory = write_results(tmp_path / "results")
    html, markdown = tmp_path / "new" / "r.html", tmp_path / "md" / "r.md"  # folders made as needed
    result = CliRunner().invoke(main, ["leaderboard", "report", str(directory), "--output", str(html), "--markdown", str(markdown)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == f"wrote {html} (4 tables, 2 plots) and {markdown}"
    assert html.stat().st_size > 0 and markdown.stat().st_size > 0
    # The folder predates comparisons (no comparisons.parquet): that section is left out too, first.
    assert ("left out (no data): Which submission is closer to human, Coverage of the human strengths and "
            "weaknesses") in result.output
    missing = CliRunner().invoke(main, ["leaderboard", "report", str(tmp_path), "--output", str(tmp_path / "x.html")])
    assert missing.exit_code == 1 and "no results.parquet or results.jsonl" in missing.output


CHECK_SCRIPT = """<script>
window.addEventListener("load", () => {
  const widths = Array.from(document.images, (image) => image.complete ? image.naturalWidth : 0);
  const out = document.createElement("pre");
  out.id = "image-check";
  out.textContent = JSON.stringify(widths);
  document.body.appendChild(out);
});
</script>"""


@pytest.mark.skipif(not CHROMIUM.exists(), reason="headless check needs Chromium at /usr/bin/chromium")
def test_page_renders_in_headless_chromium(tmp_path, report):
    html = report[0]
    n_images = len(parse(html).images)
    assert n_images == 2
    checked = tmp_path / "checked.html"
    checked.write_text(html.replace("</body>", CHECK_SCRIPT + "\n</body>"))
    dom = chromium("--virtual-time-budget=5000", "--dump-dom", checked.as_uri(), user_data_dir=tmp_path / "profile")
    found = re.search(r'<pre id="image-check">(.*?)</pre>', dom.stdout)
    assert found, dom.stderr[-2000:]
    widths = json.loads(found.group(1))
    assert len(widths) == n_images and all(w > 0 for w in widths), widths

    page = tmp_path / "page.html"
    page.write_text(html)
    screenshot = tmp_path / "shot.png"
    chromium(f"--screenshot={screenshot}", "--window-size=1280,4000", "--hide-scrollbars", page.as_uri(),
             user_data_dir=tmp_path / "profile2")
    assert screenshot.exists(), "Chromium wrote no screenshot"
    from matplotlib.image import imread

    pixels = imread(screenshot)[..., :3]
    assert pixels.shape[:2] == (4000, 1280)
    assert pixels.std() > 0.02  # text, tables and plots, not a blank page
    # The plots' blue bars and points are on the page (the palette's #1f77b4 is nowhere else).
    blue = np.all(np.abs(pixels - np.array([0x1f, 0x77, 0xb4]) / 255) < 0.02, axis=-1)
    assert blue.sum() > 200



def era_summary(mean, std, n):
    return {"mean": mean, "std": std, "n": n}


# Shaped like praib.leaderboard.eras.era_analysis: one venue, two years per era, two metrics.
ERAS = {
    "metrics": ["fre", "xref"], "split_years": {"ICLR": 2024}, "n_skipped": 0,
    "venues": {"ICLR": {
        "split_year": 2024,
        "years": {"2022": {"n_reviews": 3, "fre": era_summary(42.71, 9.0, 3), "xref": era_summary(2.83, 1.0, 3)},
                  "2023": {"n_reviews": 3, "fre": era_summary(41.63, 9.1, 3), "xref": era_summary(2.49, 1.1, 3)},
                  "2024": {"n_reviews": 2, "fre": era_summary(38.36, 9.2, 2), "xref": era_summary(2.35, 1.2, 2)},
                  "2025": {"n_reviews": 2, "fre": era_summary(34.27, 9.3, 2), "xref": era_summary(None, None, 0)}},
        "eras": {"pre": {"years": [2022, 2023], "n_reviews": 6, "fre": era_summary(42.38, 9.12, 6),
                         "xref": era_summary(2.58, 3.74, 6)},
                 "post": {"years": [2024, 2025], "n_reviews": 4, "fre": era_summary(35.8, 12.14, 4),
                          "xref": era_summary(2.17, 3.09, 2)}},
        "tests": {"fre": {"u": 2.0, "p": 0.0381, "effect_size": -0.8333, "direction": "lower after",
                          "significant": True, "n_pre": 6, "n_post": 4},
                  "xref": {"u": 5.0, "p": 0.6171, "effect_size": -0.1667, "direction": "lower after",
                           "significant": False, "n_pre": 6, "n_post": 2}},
    }},
}


def test_era_tables_and_trend_plot(tmp_path):
    directory = write_results(tmp_path / "results", eras=ERAS)
    html = write_and_read(directory, tmp_path)
    parsed = parse(html)
    per_year = table(parsed, "ICLR: human review metrics per year (mean per review)")
    assert per_year["rows"] == [["Metric", "2022", "2023", "2024", "2025"], ["Reviews", "3", "3", "2", "2"],
                                ["FRE", "42.7", "41.6", "38.4", "34.3"], ["Xref.", "2.83", "2.49", "2.35", "–"]]
    comparison = table(parsed, "ICLR: pre- vs post-LLM era (Mann-Whitney U)")
    assert comparison["rows"][1:] == [
        ["FRE", "42.4 ± 9.1", "6", "35.8 ± 12.1", "4", "2.0", "0.038", "-0.833", "lower after", "yes"],
        ["Xref.", "2.58 ± 3.74", "6", "2.17 ± 3.09", "2", "5.0", "0.617", "-0.167", "lower after", "no"],
    ]
    assert "post-LLM era starts with the first review cycle after ChatGPT's release: ICLR 2024." in unescape(html)
    trend = next(image for image in parsed.images if image["alt"] == "Human review metrics per year")
    assert decode_png(trend["src"])[..., :3].std() > 0.05


def test_robustness_verdicts_of_praib_robustness_are_tabled(tmp_path):
    from praib.records import coerce_record, records_to_dataset
    from praib.metrics.perturbation.robustness import robustness_report

    # Twelve papers rated 5, 6, 8 (x4); the soundness edit lowers each to 3, 5, 6: mean change -5/3,
    # all twelve changes negative (one-sided Wilcoxon p = 2^-12); confidences unchanged (equivalent).
    perturbation = {"kind": "soundness", "category": "paper", "component": "method", "description": "d", "seed": 0}
    before = [5, 6, 8] * 4
    after = {5: 3, 6: 5, 8: 6}
    base = [{"paper_id": f"p{i}", "source": "model-a", "model": "model-a", "prompt": "extended", "venue": "ICLR",
             "year": 2025, "rating": rating, "confidence": 4} for i, rating in enumerate(before)]
    originals = records_to_dataset([coerce_record(r, "review", "test") for r in base], "review")
    perturbed = records_to_dataset([coerce_record({**r, "rating": after[r["rating"]], "perturbation": perturbation},
                                                  "review", "test") for r in base], "review")
    directory = write_results(tmp_path / "results", rows=ROWS[:2] + [
        result_row("model-a", "robustness_rating_soundness", -5 / 3)])
    details = json.loads((directory / "details" / "model-a.json").read_text())
    details["robustness"] = robustness_report(originals, perturbed).to_dict()
    (directory / "details" / "model-a.json").write_text(json.dumps(details))
    parsed = parse(write_and_read(directory, tmp_path))
    verdicts = table(parsed, "model-a: directional and invariance tests")
    assert verdicts["rows"] == [["Perturbation", "confidence", "rating"],
                                ["model-a/extended / soundness", "≈ equivalent Δ 0.00, p < 0.001",
                                 "↓ decrease Δ -1.67, p < 0.001"]]
    assert cell(table(parsed, "Robustness to perturbations: all venues pooled"), "model-a",
                "robustness rating soundness") == "-1.667"


def effects_entry(n_critical, n_neutral, z, p_score, significant, rouge=None):
    difference = {"ate_critical": -1.5, "ate_neutral": 0.25, "p_value": p_score / 2, "p_corrected": p_score,
                  "significant": significant, "z": z}
    entry = {"n_pairs": n_critical + n_neutral, "n_critical": n_critical, "n_neutral": n_neutral,
             "differences": {"score": difference}, "ranking_score": z}
    if rouge is not None:
        entry["sensitivity"] = {"rouge2": {"mean": rouge, "std": 0.1, "n": 3},
                                "assertion_jaccard": {"mean": None, "std": None, "n": 0}}
    return entry


def test_treatment_effects_are_ranked_by_ranking_score(tmp_path):
    directory = write_results(tmp_path / "results", rows=ROWS[:2])
    for name, reviewers in (("model-a", {"model-a/zero_generic": effects_entry(5, 5, -0.4, 0.5, False)}),
                            ("model-b", {"model-b/extended": effects_entry(6, 4, 2.25, 0.0004, True, 0.61)})):
        (directory / "details" / f"{name}.json").write_text(json.dumps(
            {"groups": [], "treatment_effects": {"alpha": 0.05, "reviewers": reviewers}}))
    t = table(parse(write_and_read(directory, tmp_path)), "Reviewers ranked by the effect of research-logic edits")
    assert t["rows"] == [
        ["Reviewer", "n critical", "n neutral", "z", "ATE score critical", "ATE score neutral", "p score (BH)",
         "ROUGE-2", "Assertion Jaccard"],
        ["model-b / model-b/extended", "6", "4", "2.25", "-1.500", "0.250", "< 0.001*", "0.610", "–"],
        ["model-a / model-a/zero_generic", "5", "5", "-0.40", "-1.500", "0.250", "0.500", "–", "–"],
    ]


def test_review_spreads_come_from_the_details_summaries(tmp_path):
    results = load_results(write_results(tmp_path / "results"))
    # FRE has no standard deviation (one review): no spread to draw.
    assert review_spreads(results) == {("human", "tkc"): (532.4, 82.0), ("model-a", "tkc"): (637.0, 54.3)}


def test_a_value_outside_its_percentile_interval_is_plotted(tmp_path):
    # A percentile interval need not contain the point value (e.g. a total variation on few reviews,
    # whose resamples are biased upwards); the plot must still be drawn.
    rows = [result_row("human", "tkc", 500.0, ci=(480.0, 520.0)),
            result_row("m", "tkc", 600.0, ci=(610.0, 700.0), human=500.0, distance=100.0, closest=True)]
    html = write_and_read(write_results(tmp_path / "results", rows=rows, details=False), tmp_path)
    assert [i["alt"] for i in parse(html).images] == ["Metric values per source"]


def test_table_1_has_math_engagement_and_its_conditional_rates(tmp_path):
    rows = [result_row("human", "math_engagement", 0.427),
            result_row("m", "math_engagement", 0.758, human=0.427, distance=0.331, closest=True),
            result_row("m", "math_p_pos_given_pos", 0.905), result_row("m", "math_p_pos_given_neg", 0.675)]
    pooled = table(parse(write_and_read(write_results(tmp_path / "results", rows=rows, details=False), tmp_path)),
                   "Behaviour: all venues pooled")
    assert [cell(pooled, "m", c) for c in ("Math", "Δ Math", "P(+|+)", "Δ P(+|+)", "P(+|−)")] == \
        ["0.758 ★", "0.331 ★", "0.91", "–", "0.68"]
    assert cell(pooled, "human (reference)", "Math") == "0.427"


FIT_SCRIPT = """<script>
window.addEventListener("load", () => {
  const boxes = Array.from(document.querySelectorAll(".scroll"), (box) => {
    const first = box.querySelector("tbody td");
    return {wide: box.scrollWidth > box.clientWidth, sticky: first ? getComputedStyle(first).position : null};
  });
  const out = document.createElement("pre");
  out.id = "fit-check";
  out.textContent = JSON.stringify({page: document.documentElement.scrollWidth, window: window.innerWidth, boxes});
  document.body.appendChild(out);
});
</script>"""


@pytest.mark.skipif(not CHROMIUM.exists(), reason="headless check needs Chromium at /usr/bin/chromium")
def test_the_demo_report_fits_a_1280_pixel_window(tmp_path):
    """The pooled and per-venue behaviour tables were wider than the page (a page scrollbar, alpha columns cut
    off): now the page is as wide as the window and a wide table scrolls in its own box, its first column fixed."""
    from praib.cli.main import main

    demo = ROOT / "praib" / "data" / "demo"
    runner = CliRunner()
    for model in ("a", "b"):
        folder = tmp_path / f"model-{model}"
        folder.mkdir()
        rows = [line for line in (demo / "reviews.jsonl").read_text().splitlines()
                if f'"model": "demo-model-{model}"' in line and '"prompt": "extended"' in line]
        (folder / "reviews.jsonl").write_text("\n".join(rows) + "\n")
        (folder / "manifest.json").write_text(json.dumps({"model": f"demo-model-{model}", "backend": "hand-written",
                                                          "prompts": ["extended"], "sampling": {"temperature": 0.0},
                                                          "date": "2026-01-05"}))
    ran = runner.invoke(main, ["leaderboard", "run", str(tmp_path / "model-a"), str(tmp_path / "model-b"), "--demo",
                               "--n-bootstrap", "50", "--output", str(tmp_path / "results"), "--no-progress"])
    assert ran.exit_code == 0, ran.output
    page = tmp_path / "report.html"
    assert runner.invoke(main, ["leaderboard", "report", str(tmp_path / "results"), "--output",
                                str(page)]).exit_code == 0
    checked = tmp_path / "checked.html"
    checked.write_text(page.read_text().replace("</body>", FIT_SCRIPT + "\n</body>"))
    dom = chromium("--window-size=1280,900", "--virtual-time-budget=5000", "--dump-dom", checked.as_uri(),
                   user_data_dir=tmp_path / "profile")
    found = re.search(r'<pre id="fit-check">(.*?)</pre>', dom.stdout)
    assert found, dom.stderr[-2000:]
    fit = json.loads(unescape(found.group(1)))
    assert fit["page"] <= fit["window"] == 1280, fit
    assert any(box["wide"] for box in fit["boxes"]), "the demo has a table wider than the page"
    assert all(box["sticky"] == "sticky" for box in fit["boxes"] if box["wide"]), fit["boxes"]
