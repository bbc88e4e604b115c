"""`praib leaderboard eras` results for the table tests, from the demo reviews and from synthetic human reviews whose
numbers are known by hand; and the generic checks every table of praib tables passes (those of test_tables.py)."""

import json
from pathlib import Path

from praib.leaderboard.eras import era_analysis
from praib.leaderboard.run import select_rows
from praib.records import coerce_record, load_records, records_to_dataset
from praib.tables import TABLES, load_result, make_tables
from tests.paths import DEMO
from tests.tables.checks import assert_cells_are_their_results

# One-syllable words only, so W, S and Sy are counted by eye: FRE = 206.835 - 1.015 W/S - 84.6 Sy/W.
CAT = "The cat sat."  # one sentence, W = Sy = 3: FRE 119.19, TKC 3
DOG = "The dog ran far."  # W = Sy = 4: FRE 118.175, TKC 4
MAT = "A big cat sat on the mat."  # W = Sy = 7: FRE 115.13, TKC 7
#: Reviews per venue and year: ICLR's LLM era starts in 2024, NeurIPS's in 2023.
SYNTHETIC = {
    "ICLR": {2022: [CAT] * 10, 2023: [CAT] * 5 + [DOG] * 2, 2024: [MAT] * 8, 2025: [MAT] * 4 + [CAT] * 2},
    "NeurIPS": {2022: [CAT, CAT, DOG], 2023: [DOG, DOG, CAT]},
}


def write(folder: Path, name: str, data) -> Path:
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def human_reviews(texts_by_venue: dict):
    rows = [coerce_record({"paper_id": f"{venue}-{year}-{i}", "source": "human", "venue": venue, "year": year,
                           "text": text}, "review", f"{venue} {year} #{i}")
            for venue, by_year in texts_by_venue.items() for year, texts in by_year.items()
            for i, text in enumerate(texts)]
    return records_to_dataset(rows)


def eras_demo(folder: Path) -> Path:
    """`praib leaderboard eras` of the demo reviews: all from 2025, so every pre-LLM number is missing."""
    reviews = select_rows(load_records(DEMO / "reviews.jsonl", "review"), lambda row: row["source"] == "human")
    return write(folder, "eras-demo.json", era_analysis(reviews, workers=1))


def eras_synthetic(folder: Path) -> Path:
    return write(folder, "eras-synthetic.json", era_analysis(human_reviews(SYNTHETIC), workers=1))


def check_tables(tables, kind: str, at_least: int) -> None:
    """Every registered table of ``kind`` is built, with rows, and passes the shared check on at least
    ``at_least`` cells."""
    assert [table.key for table in tables] == [key for key, spec in TABLES.items() if spec.kind == kind]
    assert all(table.rows for table in tables), [table.key for table in tables if not table.rows]
    assert assert_cells_are_their_results(tables) >= at_least


def tables_of(path: Path, kind: str):
    result = load_result(path)
    assert result.kind == kind
    return make_tables([result])
