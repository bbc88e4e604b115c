"""Rule-based review edits: the conclusion flip and false weakness claims.

``rating_flip`` turns an accept-leaning review into a strong reject on its venue-year scale: the
rating field, the recommendation and every score line of the text ("Rating: 8: accept, good paper")
change together. A rating is accept-leaning when it lies above the middle of its scale (ICLR 2025:
6, 8, 10; NeurIPS 2025: 4, 5, 6); other reviews are returned unchanged and say so.

``false_claims`` inserts three claims sampled from the paper's bucket of false weaknesses into the
review's Weaknesses section (field and text). Buckets come from a file (``load_claim_buckets``) or
from an LLM (``generate_claim_buckets``, template ``false_claims.jinja``).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from statistics import median

from praib.parsing import parse_review, section_end
from praib.records.atomic import write_text_atomically
from praib.records import iter_jsonl, read_json
from praib.scales import Scale, UnknownScaleError, generic_scales, venue_scales

from praib.perturb.validation import MAX_TRIES, EditTally

# Score-line labels that carry the overall rating, as praib.parsing reads them.
_RATING_LABELS = ("overall rating", "overall score", "final score", "final rating", "rating", "score",
                  "overall recommendation", "final recommendation", "recommendation", "final decision", "decision")
_SCORE_LINE = re.compile(
    r"^(?P<lead>[ \t>#*_\-]*(?:" + "|".join(map(re.escape, _RATING_LABELS)) + r")[ \t*_]*:[ \t*_]*)"
    r"(?P<value>\d{1,2})(?!\d)(?P<rest>[^\n]*)$", re.I | re.M)
_WEAKNESS_HEADING = re.compile(r"^[ \t#*_]*(?:<b>)?(?:main |key )?weakness(?:es)?\b[^\n]*$", re.I | re.M)
_NEXT_SECTION = re.compile(r"^(?:#{1,6} |\*\*[^*\n]+\*\*[ \t]*:?[ \t]*$|<b>|[A-Z][A-Za-z ]{2,40}:[ \t]*$)", re.M)
CLAIMS_PER_REVIEW = 3


def _scales(row: dict):
    try:
        return venue_scales(row.get("venue"), row.get("year")) if row.get("venue") else generic_scales()
    except UnknownScaleError:
        return generic_scales()


def accept_leaning(rating: int, scale: Scale) -> bool:
    return rating > median(scale.values)


def rating_flip(row: dict, rng: random.Random) -> tuple[dict, str]:
    """An accept-leaning review turned into a strong reject (the lowest value of its scale)."""
    scales = _scales(row)
    scale = scales.rating
    rating = row.get("rating")
    if rating is None and row.get("text"):
        rating = parse_review(row["text"], scales).rating
    where = f"{scales.venue} {scales.year_group}" if scales.venue != "generic" else "generic"
    if rating is None:
        return row, "unchanged: no rating found"
    if not accept_leaning(rating, scale):
        return row, f"unchanged: rating {rating} is not accept-leaning on the {where} scale"
    lowest = scale.values[0]
    text, lines = rewrite_score_lines(row.get("text") or "", rating, lowest, scale)
    flipped = {**row, "text": text if row.get("text") is not None else None}
    if row.get("rating") is not None:
        flipped["rating"] = lowest
    if row.get("recommendation") is not None:
        flipped["recommendation"] = "reject"
    rewritten = (f"{lines} score line{'s' if lines != 1 else ''} of the text rewritten" if lines
                 else "the text has no score line")
    return flipped, f"rating {rating} → {lowest} ({scale.labels[lowest].split(':')[0]}) on the {where} scale; {rewritten}"


def rewrite_score_lines(text: str, old: int, new: int, scale: Scale) -> tuple[str, int]:
    """``text`` with every score line that gives ``old`` giving ``new`` (value and label, as the
    line spells them), and how many lines changed."""
    old_label, new_label = scale.labels.get(old) or "", scale.labels[new]
    count = 0

    def rewrite(line: re.Match) -> str:
        nonlocal count
        if int(line.group("value")) != old:
            return line.group()
        count += 1
        rest = line.group("rest")
        # Replace the old label as the line spells it: whole, or its head before the colon ("Strong Accept").
        for old_text, new_text in ((old_label, new_label), (old_label.split(":")[0], new_label.split(":")[0])):
            found = re.search(re.escape(old_text.strip()), rest, re.I) if old_text.strip() else None
            if found:
                rest = rest[:found.start()] + new_text.strip() + rest[found.end():]
                break
        return line.group("lead") + str(new) + rest

    return _SCORE_LINE.sub(rewrite, text), count


def load_claim_buckets(path: str | Path) -> dict[str, list[str]]:
    """False-claim buckets from JSONL lines ``{"paper_id": ..., "claims": [...]}`` or a JSON object
    mapping paper ids to lists of claims."""
    path = Path(path)
    buckets: dict[str, list[str]] = {}
    if path.suffix == ".json":
        data = read_json(path, what="claims")
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected an object mapping paper ids to lists of claims")
        items = [(f"{path}: paper {key!r}", {"paper_id": key, "claims": value}) for key, value in data.items()]
    else:
        items = list(iter_jsonl(path))
    for where, item in items:
        claims = item.get("claims") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not item.get("paper_id"):
            raise ValueError(f"{where}: field 'paper_id': is required and missing")
        if not isinstance(claims, list) or not all(isinstance(c, str) and c.strip() for c in claims):
            raise ValueError(f"{where}: field 'claims': expected a list of non-empty strings")
        buckets.setdefault(str(item["paper_id"]), []).extend(c.strip() for c in claims)
    return buckets


def save_claim_buckets(buckets: dict[str, list[str]], path: str | Path) -> None:
    write_text_atomically(path, "".join(json.dumps({"paper_id": paper_id, "claims": claims}, ensure_ascii=False) + "\n"
                                        for paper_id, claims in buckets.items()))


_CLAIM = re.compile(r"False Claim\s*\d*\s*:\s*(.+?)\s*(?=Why the claim is false|False Claim|\Z)", re.I | re.S)


def parse_false_claims(output: str) -> list[str]:
    """The claims of an answer in the ``false_claims.jinja`` format (leading list markers dropped)."""
    return [re.sub(r"\s+", " ", c).strip(" *-") for c in _CLAIM.findall(output) if c.strip(" *-\n")]


def generate_claim_buckets(papers, judge, progress: bool = False, max_tries: int = MAX_TRIES,
                           tally: EditTally | None = None) -> dict[str, list[str]]:
    """One bucket of false weakness claims per paper (``papers``: a Dataset of paper records). An
    answer with no claim in the format is asked again (``max_tries`` answers in all), then recorded
    as rejected; a paper the judge gave no usable answer for has no bucket (the failure is in the
    judge's log). ``tally`` counts the buckets accepted and rejected."""
    from praib.perturb.rewrite import generate_checked

    rows = list(papers)

    def check(_, output: str) -> tuple[list[str] | None, str | None]:
        claims = parse_false_claims(output)
        return (claims, None) if claims else (None, "the answer holds no 'False Claim: ...' line")

    outcomes = generate_checked(judge, "false_claims", [{"title": r["title"] or "", "paper": r["text"] or ""}
                                                        for r in rows],
                                [f"{r['paper_id']}/false claims" for r in rows], check, progress=progress,
                                max_tries=max_tries)
    if tally is not None:
        tally.add("false-claims", "claim bucket", outcomes)
    return {row["paper_id"]: outcome.value for row, outcome in zip(rows, outcomes) if outcome.ok}


def false_claims(row: dict, rng: random.Random,
                 claims: dict[str, list[str]] | None = None) -> tuple[dict | None, str]:
    """Three claims from the paper's bucket appended, as list items, to the review's Weaknesses section
    (None, with the reason, when the paper has no bucket: the review is left out)."""
    if claims is None:
        raise ValueError("`false-claims` needs the false-claim buckets: claims={paper_id: [claim, ...]} "
                         "(on the command line --claims FILE, or --papers FILE with --judge to generate them)")
    bucket = claims.get(row["paper_id"])
    if not bucket:
        return None, f"left out: no false claims for paper {row['paper_id']} in the claims buckets"
    picked = rng.sample(bucket, min(CLAIMS_PER_REVIEW, len(bucket)))
    text = row.get("text") or ""
    weaknesses = row.get("weaknesses")
    place = _claims_place(text, weaknesses)
    if place is None:
        return row, "unchanged: the review has no Weaknesses section"
    at, section, html = place
    addition = ("<ul>" + "".join(f"<li>{claim}</li>" for claim in picked) + "</ul>" if html
                else "\n".join(f"- {claim}" for claim in picked))
    new_text = text[:at] + ("" if html else "\n") + addition + text[at:]
    edited = {**row, "text": new_text}
    if weaknesses:
        edited["weaknesses"] = weaknesses + "\n" + "\n".join(f"- {claim}" for claim in picked)
    return edited, f"{len(picked)} false claims added to {section}: " + " | ".join(picked)


# An HTML label or heading that opens a section ("<b>Weaknesses:</b>", "<h3>Rating</h3>"), and the block
# element that may wrap it.
_HTML_LABEL = re.compile(r"<(?:b|strong|h[1-6])\b[^>]*>\s*(?P<name>[^<:]{1,60})", re.I)
_HTML_BLOCK_START = re.compile(r"(?:<(?:p|div|li)\b[^>]*>\s*)+$", re.I)


def _claims_place(text: str, weaknesses: str | None) -> tuple[int, str, bool] | None:
    """Where false claims go in a review (offset, the section's name, whether to write HTML): after the
    Weaknesses section as the parser reads it (headings, bold or inline labels, HTML labels), or after a
    combined "Strengths and weaknesses" section."""
    if weaknesses and weaknesses in text:
        return text.index(weaknesses) + len(weaknesses), "Weaknesses", False
    for name, section in (("weaknesses", "Weaknesses"), ("combined", "Strengths and Weaknesses")):
        at = section_end(text, name)
        if at is not None:
            return at, section, False
    labels = list(_HTML_LABEL.finditer(text))
    for i, label in enumerate(labels):
        if re.match(r"(?:main |key )?weakness", label.group("name").strip(), re.I):
            if i + 1 == len(labels):
                return len(text.rstrip()), "Weaknesses", True
            following = labels[i + 1].start()
            wrapper = _HTML_BLOCK_START.search(text, 0, following)
            return (wrapper.start() if wrapper else following), "Weaknesses", True
    heading = _WEAKNESS_HEADING.search(text)
    if not heading:
        return None
    following = _NEXT_SECTION.search(text, heading.end() + 1)
    return len(text[:following.start() if following else len(text)].rstrip()), "Weaknesses", False
