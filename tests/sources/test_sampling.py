"""Balanced, seeded, order-independent sampling of papers per venue-year."""

import hashlib
import json

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.records import coerce_record, load_records, records_to_dataset
from praib.sources.sampling import SamplingError, is_withdrawn, sample_paper_ids, sample_records


def paper(paper_id, venue, year, decision, **extra):
    return coerce_record({"paper_id": paper_id, "venue": venue, "year": year, "decision": decision, **extra},
                         "paper", paper_id)


def pool():
    """ICLR 2024: 6 accepted, 5 rejected, 2 withdrawn, 1 desk-rejected, 1 undecided;
    NeurIPS 2023: 4 accepted, 3 rejected."""
    rows = [paper(f"i-acc-{i}", "ICLR", 2024, "Accept (poster)" if i % 2 else "Accept (spotlight)") for i in range(6)]
    rows += [paper(f"i-rej-{i}", "ICLR", 2024, "Reject") for i in range(5)]
    rows += [paper(f"i-wd-{i}", "ICLR", 2024, "Withdrawn") for i in range(2)]
    rows += [paper("i-desk-0", "ICLR", 2024, "Desk rejected"), paper("i-none-0", "ICLR", 2024, None)]
    rows += [paper(f"n-acc-{i}", "NeurIPS", 2023, "Accept (poster)") for i in range(4)]
    rows += [paper(f"n-rej-{i}", "NeurIPS", 2023, "Reject") for i in range(3)]
    return records_to_dataset(rows, "paper")


def expected_ids(ids, seed, venue, year, n):
    """The documented rule, computed here directly: lowest SHA-256 of 'seed/venue/year/id'."""
    return sorted(ids, key=lambda i: hashlib.sha256(f"{seed}/{venue}/{year}/{i}".encode()).hexdigest())[:n]


def test_sample_is_balanced_and_follows_the_documented_rank():
    chosen = sample_paper_ids(pool(), per_venue_year=6, seed=3)
    assert chosen == (expected_ids([f"i-acc-{i}" for i in range(6)], 3, "ICLR", 2024, 3)
                      + expected_ids([f"i-rej-{i}" for i in range(5)], 3, "ICLR", 2024, 3)
                      + expected_ids([f"n-acc-{i}" for i in range(4)], 3, "NeurIPS", 2023, 3)
                      + expected_ids([f"n-rej-{i}" for i in range(3)], 3, "NeurIPS", 2023, 3))


def test_same_seed_same_ids_whatever_the_order():
    papers = pool()
    first = sample_paper_ids(papers, per_venue_year=4, seed=7)
    for shuffle_seed in (1, 2, 3):
        assert sample_paper_ids(papers.shuffle(seed=shuffle_seed), per_venue_year=4, seed=7) == first
    large = records_to_dataset([paper(f"p{i}", "ICLR", 2022, "Reject" if i % 3 else "Accept") for i in range(300)],
                               "paper")
    assert sample_paper_ids(large, 100, seed=0) == sample_paper_ids(large, 100, seed=0)
    assert sample_paper_ids(large, 100, seed=0) != sample_paper_ids(large, 100, seed=1)


def test_withdrawn_and_undecided_papers_are_left_out_unless_asked():
    chosen = set(sample_paper_ids(pool(), per_venue_year=6, seed=0))
    assert not chosen & {"i-wd-0", "i-wd-1", "i-desk-0", "i-none-0"}
    with pytest.raises(SamplingError, match="ICLR 2024: 5 rejected paper"):
        sample_paper_ids(pool(), per_venue_year=12, seed=0)
    papers = pool().filter(lambda row: row["venue"] == "ICLR")
    with_withdrawn = sample_paper_ids(papers, per_venue_year=12, seed=0, include_withdrawn=True)
    rejected_side = set(with_withdrawn) - {f"i-acc-{i}" for i in range(6)}
    # Six of the eight rejected-or-withdrawn papers: at least one of the three withdrawn ones.
    assert len(rejected_side) == 6 and rejected_side & {"i-wd-0", "i-wd-1", "i-desk-0"}
    assert "i-none-0" not in with_withdrawn
    assert is_withdrawn("ICLR 2025 Conference Withdrawn Submission") and not is_withdrawn("Reject")


def test_too_few_papers_names_every_short_venue_year_and_class():
    with pytest.raises(SamplingError) as error:
        sample_paper_ids(pool(), per_venue_year=100, seed=0)
    assert str(error.value) == ("too few papers to sample 100 per venue-year: "
                                "ICLR 2024: 6 accepted paper(s), 50 needed; ICLR 2024: 5 rejected paper(s), 50 needed; "
                                "NeurIPS 2023: 4 accepted paper(s), 50 needed; "
                                "NeurIPS 2023: 3 rejected paper(s), 50 needed")
    with pytest.raises(ValueError, match="at least 2"):
        sample_paper_ids(pool(), per_venue_year=1)


def test_related_records_are_filtered_to_the_sampled_papers():
    papers = pool()
    all_ids = papers["paper_id"]
    reviews = records_to_dataset([coerce_record({"paper_id": p, "source": "human", "text": f"review of {p}",
                                                 "reviewer_id": r}, "review", p)
                                  for p in all_ids for r in ("R1", "R2")], "review")
    metas = records_to_dataset([coerce_record({"paper_id": p, "source": "human", "text": "meta"}, "meta_review", p)
                                for p in all_ids], "meta_review")
    # A perturbed variant keeps its original's paper_id: it is not drawn itself, but follows its original.
    variant = paper("i-acc-0", "ICLR", 2024, "Accept (poster)",
                    perturbation={"kind": "typos", "component": "paper"})
    papers_with_variant = records_to_dataset(papers.to_list() + [variant], "paper")
    sampled = sample_records(papers_with_variant, reviews, metas, None, per_venue_year=4, seed=11)
    chosen = sample_paper_ids(papers, per_venue_year=4, seed=11)
    assert sampled["paper"]["paper_id"] == chosen
    assert sorted(sampled["review"]["paper_id"]) == sorted(chosen * 2)
    assert sorted(sampled["meta_review"]["paper_id"]) == sorted(chosen)
    assert "rebuttal" not in sampled


def test_cli_sample(tmp_path):
    papers_path, reviews_path, out = tmp_path / "papers.jsonl", tmp_path / "reviews.jsonl", tmp_path / "out"
    papers_path.write_text("".join(json.dumps(row) + "\n" for row in pool().to_list()))
    reviews_path.write_text("".join(json.dumps({"paper_id": p, "source": "human", "text": "ok"}) + "\n"
                                    for p in pool()["paper_id"]))
    args = ["data", "sample", str(papers_path), "--reviews", str(reviews_path), "--per-venue-year", "4",
            "--seed", "5", "--output", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == (f"sampled 8 papers (ICLR 2024: 4, NeurIPS 2023: 4) with seed 5; "
                                     f"kept 8 reviews; wrote {out}")
    chosen = sample_paper_ids(pool(), per_venue_year=4, seed=5)
    assert [r["paper_id"] for r in load_records(out / "papers.jsonl", "paper")] == chosen
    assert sorted(r["paper_id"] for r in load_records(out / "reviews.jsonl", "review")) == sorted(chosen)
    short = CliRunner().invoke(main, args[:-2] + ["--per-venue-year", "10", "--output", str(out)])
    assert short.exit_code == 1 and "NeurIPS 2023: 3 rejected paper(s), 5 needed" in short.output
    # Every venue in PAPERS is sampled in every --year: NeurIPS has no 2024 papers.
    one_year = CliRunner().invoke(main, args[:-2] + ["--year", "2024", "--output", str(out)])
    assert one_year.exit_code == 1 and "NeurIPS 2024: 0 accepted paper(s), 2 needed" in one_year.output
    # A collection without rebuttals (a blank rebuttals file) is sampled; one without papers is not.
    blank = tmp_path / "rebuttals.jsonl"
    blank.write_text("\n")
    no_rebuttals = CliRunner().invoke(main, args + ["--rebuttals", str(blank)])
    assert no_rebuttals.exit_code == 0 and "kept 8 reviews, 0 rebuttals" in no_rebuttals.output
    no_papers = CliRunner().invoke(main, ["data", "sample", str(blank), "--output", str(out)])
    assert no_papers.exit_code == 1 and no_papers.output.strip() == f"Error: {blank}: empty: no records"


def test_years_restrict_the_draw_and_a_missing_year_is_a_shortage():
    papers = records_to_dataset([paper(f"{venue}-{year}-{d}{i}", venue, year, "Accept" if d == "a" else "Reject")
                                 for venue in ("ICLR", "NeurIPS") for year in (2020, 2021, 2022)
                                 for d in "ar" for i in range(3)], "paper")
    chosen = sample_paper_ids(papers, per_venue_year=2, seed=5, years=[2022, 2021])
    expected = []
    for venue in ("ICLR", "NeurIPS"):
        for year in (2021, 2022):
            for d in "ar":
                expected += expected_ids([f"{venue}-{year}-{d}{i}" for i in range(3)], 5, venue, year, 1)
    assert chosen == expected
    with pytest.raises(SamplingError, match="ICLR 2023: 0 accepted paper.*NeurIPS 2023: 0 rejected paper"):
        sample_paper_ids(papers, per_venue_year=2, years=[2022, 2023])
    with pytest.raises(SamplingError, match="no original paper in 2019"):
        sample_paper_ids(papers, per_venue_year=2, years=[2019])


def test_a_paper_id_listed_twice_is_refused():
    """Review records read as papers repeat their paper_id; sampling them would duplicate papers."""
    twice = records_to_dataset([paper("p1", "ICLR", 2024, "Accept"), paper("p2", "ICLR", 2024, "Reject"),
                                paper("p1", "ICLR", 2024, "Accept")], "paper")
    with pytest.raises(SamplingError, match="1 paper id.*listed more than once.*p1"):
        sample_paper_ids(twice, per_venue_year=2)


def test_a_share_of_the_rejected_papers_as_the_target_aspect_study_draws():
    rejected = [("ICLR", 2024, f"i-rej-{i}") for i in range(5)] + [("NeurIPS", 2023, f"n-rej-{i}") for i in range(3)]
    ranked = sorted(rejected, key=lambda v: hashlib.sha256(f"7/{v[0]}/{v[1]}/{v[2]}".encode()).hexdigest())
    # 8 rejected papers (withdrawn and desk-rejected ones left out): half of them is 4, the 4 lowest ranks
    chosen = sample_paper_ids(pool(), seed=7, rejected_share=0.5)
    assert sorted(chosen) == sorted(paper_id for _, _, paper_id in ranked[:4])
    assert [paper_id.split("-")[0] for paper_id in chosen] == sorted(p.split("-")[0] for p in chosen)  # ICLR first
    assert len(sample_paper_ids(pool(), seed=7, rejected_share=0.01)) == 1  # never an empty sample
    with pytest.raises(ValueError, match="rejected_share must be in"):
        sample_paper_ids(pool(), rejected_share=0)
