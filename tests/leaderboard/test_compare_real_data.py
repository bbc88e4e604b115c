"""Optional: six real-sized submissions compared pair by pair, built from the real ICLR 2019/2020 reviews of
DISAPERE in the shared data folder (skipped where it is absent): each paper's first, second and third human review
relabelled as three submissions, a copy of the first, a lenient one (the second review's text rated with the
paper's highest rating) and one that reviewed only half of the papers; the reference is every human review."""

import json
from collections import defaultdict

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.leaderboard.compare import NO_DIFFERENCE, load_comparison
from tests.paths import SHARED_DATA

DISAPERE = SHARED_DATA / "disapere" / "disapere_review_rebuttal_pairs.jsonl"
MANIFEST = {"backend": "relabelled human reviews", "prompts": ["none"], "sampling": {}, "date": "2026-11-27"}


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.mark.skipif(not DISAPERE.exists(), reason="shared real data not available")
def test_six_real_sized_submissions_are_compared_pair_by_pair(tmp_path):
    by_paper = defaultdict(list)
    for line in DISAPERE.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        by_paper[raw["forum_id"]].append(raw)
    human = [{"paper_id": paper, "review_id": raw["review_id"], "source": "human", "venue": "ICLR",
              "year": int(raw["conference"][-4:]), "text": raw["review_text"], "rating": raw["rating"]}
             for paper, reviews in by_paper.items() for raw in reviews]
    write_jsonl(tmp_path / "human.jsonl", human)
    panels = {paper: sorted(reviews, key=lambda r: r["review_id"]) for paper, reviews in sorted(by_paper.items())
              if len(reviews) >= 3}

    def submission(name, pick, papers=panels):
        rows = []
        for paper, reviews in papers.items():
            text, rating = pick(reviews)
            rows.append({"paper_id": paper, "review_id": f"{paper}-{name}", "source": name, "model": name,
                         "prompt": "none", "venue": "ICLR", "year": int(reviews[0]["conference"][-4:]),
                         "text": f"{text}\n\n**Rating:** {rating}"})
        folder = tmp_path / name
        folder.mkdir()
        write_jsonl(folder / "reviews.jsonl", rows)
        (folder / "manifest.json").write_text(json.dumps({"model": name, **MANIFEST}), encoding="utf-8")
        return folder

    half = dict(list(panels.items())[:len(panels) // 2])
    folders = [submission("first", lambda r: (r[0]["review_text"], r[0]["rating"])),
               submission("first-copy", lambda r: (r[0]["review_text"], r[0]["rating"])),
               submission("second", lambda r: (r[1]["review_text"], r[1]["rating"])),
               submission("third", lambda r: (r[2]["review_text"], r[2]["rating"])),
               submission("lenient", lambda r: (r[1]["review_text"], max(x["rating"] for x in r))),
               submission("third-half", lambda r: (r[2]["review_text"], r[2]["rating"]), half)]
    out = tmp_path / "results"
    ran = CliRunner().invoke(main, ["leaderboard", "run", *map(str, folders), "--reference",
                                    str(tmp_path / "human.jsonl"), "--n-bootstrap", "300", "--no-progress",
                                    "-o", str(out)])
    assert ran.exit_code == 0, ran.output
    printed = CliRunner().invoke(main, ["leaderboard", "compare", str(out)])
    assert printed.exit_code == 0, printed.output
    comparison = load_comparison(out)
    # 15 pairs x 12 metrics x (pooled, ICLR), every one printed.
    assert len(comparison.pairs) == 360
    names = [folder.name for folder in folders]
    printed_pairs = {tuple(line.split()[2:4]) for line in printed.output.splitlines()
                     if line.split()[:2] in ([m, v] for m in comparison.metrics() for v in ("all", "ICLR"))
                     and len(line.split()) > 10}
    assert printed_pairs == {tuple(sorted((a, b))) for i, a in enumerate(names) for b in names[i + 1:]}
    for pair in comparison.pairs:
        shares = {pair.submission_a, pair.submission_b}
        assert pair.n_papers == (len(half) if "third-half" in shares else len(panels)), pair
        if shares == {"first", "first-copy"}:
            # Zero wherever defined (DISAPERE has no confidences: those metrics are undefined for every reviewer).
            assert pair.difference in (0.0, None) and pair.verdict == NO_DIFFERENCE, pair
    copies = [p for p in comparison.pairs if {p.submission_a, p.submission_b} == {"first", "first-copy"}]
    assert sum(pair.difference == 0.0 for pair in copies) >= 18
    # The lenient submission rates every paper with its highest human rating: farther from the panel's ratings
    # than the second reviewer whose texts it shares, and detectably so.
    rating = comparison.between("lenient", "second", "rating")
    assert rating.difference > 0 and rating.closer() == "second"
