"""A small parser-and-metrics corpus for the suite: praib's demo reviews as texts, and seeded variants of them
that move edges and markup where a batch engine or a faster parser could slip (the large corpus is
``benchmarks/review_corpus.py``'s). Uses the standard library only, so that the parser's expected results
could be recorded with an older praib (tests/parsing/golden_parses.json)."""

import hashlib
import json
import random
import re

from tests.paths import ROOT

DEMO_REVIEWS = ROOT / "praib" / "data" / "demo" / "reviews.jsonl"
SECTION_FIELDS = ("summary", "strengths", "weaknesses", "questions", "limitations", "additional_feedback")
SCALES = (("ICLR", 2019), ("ICLR", 2020), ("ICLR", 2022), ("ICLR", 2024), ("ICLR", 2025), ("NeurIPS", 2022),
          ("NeurIPS", 2024), (None, None))

# What the variants insert: characters and snippets the tokeniser, the sentence rule, the cross-reference
# and citation expressions and the parser treat specially.
SPECIAL = ["’", "‘", "“", "”", "§", "§§ ", "\u0130", "\u0131", "\u017f", "\u212a", "\u00a0", "\u2028", "\u3000",
           "\x0b", "\x1c", "\x85", "٣", "٢٠١٩", "🙂", "\ud800", "\x00", "é", "naïve", "—", "–", "…", "•", "\t",
           "\r\n", "\r", "\n\n", "\n- ", "\n1. ", "\n## ", "\n#######  ", "\n1234. ", "(2019). ", '"', "e.g.",
           "i.e.", "et al.", "w.r.t.", "Fig.", "FIG.", "approx.", "?!", "...", ".)", '."', "Table IV", "L120-L125",
           "p. 5", "2017, pp. 3-4", "Eq. (3)", "Appendix B", "**Rating:** 6", "Confidence: 4", "### Soundness: 3",
           "<b>Summary:</b>", "<p>", "</p>", "<br>", "&amp;", "<li>", "</li>", "Rating = 8", "Score：7",
           "\n__Weaknesses__\n", "\n<b>Strengths</b>\n", "\n<strong>Questions</strong> ", "\n**Summary**\n"]


def demo_texts() -> list[tuple[str, str | None, int | None]]:
    """(text, venue, year) of each demo review: a model's text as written; a person's sections joined as
    ``praib evaluate`` joins them, and labelled with the scores after them as a model writes them."""
    rows = []
    for line in DEMO_REVIEWS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        venue, year = record.get("venue"), record.get("year")
        if record.get("text"):
            rows.append((record["text"], venue, year))
            continue
        fields = [f for f in SECTION_FIELDS if record.get(f)]
        rows.append(("\n\n".join(record[f] for f in fields), venue, year))
        # and as a model would write it, labelled and scored
        labelled = [f"**{f.replace('_', ' ').title()}:**\n{record[f]}" for f in fields]
        scores = [f"**{name.title()}:** {record[name]}" for name in ("rating", "confidence") if record.get(name)]
        rows.append(("\n\n".join(labelled + scores), venue, year))
    return rows


def restyled(text: str, rng: random.Random) -> str:
    """The review with its labels written another way (bold, headers, HTML, plain, numbered)."""
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


def variant(texts: list[str], rng: random.Random) -> str:
    """One of ``texts`` cut, spliced, re-cased, with other line ends, restyled or with SPECIAL inserted."""
    text = rng.choice(texts)
    how = rng.randrange(8)
    if how == 0 and len(text) > 2:  # a window, from anywhere to anywhere
        start = rng.randrange(len(text))
        return text[start:start + rng.randint(1, 3000)]
    if how == 1:  # two texts spliced at random places
        other = rng.choice(texts)
        return text[:rng.randint(0, len(text))] + rng.choice(["", " ", "\n", "\n\n"]) + other[rng.randint(0, len(other)):]
    if how == 2:
        return rng.choice([str.upper, str.lower, str.swapcase, str.title])(text)
    if how == 3:
        return text.replace("\n", rng.choice(["\r\n", "\r", "\n\n", "  \n", "\n \t\n", "\u2028"]))
    if how == 4:
        return restyled(text, rng)
    pieces = list(text)
    for _ in range(rng.randint(1, 12)):
        pieces.insert(rng.randint(0, len(pieces)), rng.choice(SPECIAL))
    return "".join(pieces)


def corpus(n_variants: int = 800, seed: int = 32) -> list[tuple[str, str | None, int | None]]:
    """The demo reviews, then ``n_variants`` variants, each with the venue-year whose scales parse it."""
    rng = random.Random(seed)
    rows = demo_texts()
    texts = [text for text, _, _ in rows]
    for _ in range(n_variants):
        venue, year = rng.choice(SCALES)
        rows.append((variant(texts, rng), venue, year))
    return rows


def digest(value) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=True, sort_keys=True).encode()).hexdigest()[:16]


def parsed_fields(text: str, venue: str | None, year: int | None) -> dict:
    """What the parser gives for one text, long texts as digests: every field of ``parse_review`` (on the
    venue-year's scales, the generic ones without), the bullets of ``strength_weakness_bullets`` and every
    section's ``section_end``."""
    from praib.parsing import parse_review, section_end, strength_weakness_bullets
    from praib.scales import UnknownScaleError, generic_scales, venue_scales

    try:
        scales = venue_scales(venue, year) if venue else generic_scales()
    except UnknownScaleError:
        scales = generic_scales()
    review = parse_review(text, scales)
    return {"sections": digest(review.sections), "rating": review.rating, "confidence": review.confidence,
            "subscores": review.subscores, "recommendation": review.recommendation, "status": review.status,
            "reason": review.reason, "bullets": digest(strength_weakness_bullets(text)),
            "section_end": [section_end(text, name) for name in SECTION_FIELDS]}


if __name__ == "__main__":  # python -m tests.review_variants FILE: record the parser's results on the corpus
    import sys

    with open(sys.argv[1], "w", encoding="utf-8") as out:  # one text's results a line
        out.write("[\n" + ",\n".join(json.dumps(parsed_fields(*row)) for row in corpus()) + "\n]\n")
