"""Result files for the perturbation tables' tests: `praib robustness` and `praib counterfactual effects` results
from the demo data (made by the commands, as .ci/record-outputs makes them) and from synthetic runs whose
differences are known by hand; and the generic checks of tests/tables/test_tables.py, extended to verdict cells."""

from pathlib import Path

from click.testing import CliRunner

from praib.cli.main import main
from praib.llm.judge import Judge
from praib.metrics.perturbation.robustness import robustness_report
from praib.metrics.perturbation.treatment import counterfactual_effects
from praib.records import coerce_record, records_to_dataset
from praib.tables import load_result
from tests.metrics.perturbation.study import build_study, reading_judge
from tests.tables.results import DEMO, write

MODEL = "gpt-x"
PAPERS = [f"paper-{i}" for i in range(8)]
RATINGS = [6, 5, 8, 6, 3, 6, 8, 5]
DECISIONS = ["Accept as Poster", "Reject", "Accept as Spotlight", "Accept as Poster", "Reject", "Accept as Poster",
             "Accept as Oral", "Reject"]
KINDS = {"overclaim-novelty": ("paper", "contribution"), "remove-details": ("paper", "soundness"),
         "typos": ("paper", "presentation"), "rating-flip": ("review", "conclusion"),
         "rebuttal-completeness": ("rebuttal", "completeness"), "injection-white-text": ("paper", "injection")}


def _cli(*args) -> None:
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exit_code == 0, result.output


def robustness_demo(folder: Path) -> Path:
    """`praib robustness` of the demo reviews against their rating-flipped copies."""
    _cli("perturb", "rating-flip", DEMO / "reviews.jsonl", "--output", folder / "flipped.jsonl")
    _cli("robustness", DEMO / "reviews.jsonl", folder / "flipped.jsonl", "--output", folder / "robustness-flip.json")
    return folder / "robustness-flip.json"


def effects_demo(folder: Path) -> Path:
    """`praib counterfactual effects` of the oracle's reviews of the demo's critical and rule-based neutral variants."""
    _cli("counterfactual", "build", DEMO / "papers.jsonl", "--edits", "language-errors,whitespace",
         "--output", folder / "neutral.jsonl")
    variants = folder / "variants.jsonl"
    variants.write_text((DEMO / "critical_papers.jsonl").read_text(encoding="utf-8")
                        + (folder / "neutral.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    _cli("counterfactual", "oracle", DEMO / "reviews.jsonl", variants, "--output", folder / "oracle.jsonl")
    _cli("counterfactual", "effects", folder / "oracle.originals.jsonl", folder / "oracle.jsonl", "--no-progress",
         "--output", folder / "effects-oracle.json")
    return folder / "effects-oracle.json"


def _dataset(rows, kind):
    return records_to_dataset([coerce_record(row, kind, f"row {i}") for i, row in enumerate(rows)], kind)


def _edited(base: list[dict], kind: str, ratings=None, decisions=None, subscores=None) -> list[dict]:
    """``base`` with the perturbation ``kind``: ``ratings`` adds to each rating, ``decisions`` maps a paper's index
    to its new decision, ``subscores`` maps a sub-score to what it adds to each."""
    component, category = KINDS[kind]
    out = []
    for i, row in enumerate(base):
        new = {**row, "perturbation": {"kind": kind, "category": category, "component": component}}
        new["rating"] = row["rating"] + (ratings[i] if ratings else 0)
        if decisions and i in decisions:
            new["recommendation"] = decisions[i]
        if row.get("subscores"):
            new["subscores"] = {name: value + ((subscores or {}).get(name) or [0] * 8)[i]
                                for name, value in row["subscores"].items()}
        out.append(new)
    return out


def _meta_reviews(prompt: str, dimensions: bool) -> list[dict]:
    return [{"paper_id": paper, "source": MODEL, "model": MODEL, "prompt": prompt, "rating": rating,
             "recommendation": decision,
             **({"subscores": {"contribution": 3, "soundness": 3, "presentation": 3}} if dimensions else {})}
            for paper, rating, decision in zip(PAPERS, RATINGS, DECISIONS)]


def robustness_meta_synthetic(folder: Path) -> list[Path]:
    """Meta-reviews of 8 papers under the three CoT prompts, with differences known by hand: the Dimension and
    None settings in one report, Template in another (a report per setting, as a user may run them).

    Dimension: overclaim-novelty adds 1 to every overall score and to the contribution of papers 0 and 1, and
    turns papers 0 and 3 from poster to spotlight; rating-flip takes 2 from every overall score and rejects
    every paper; rebuttal-completeness changes nothing. None: overclaim-novelty adds 1 to papers 0-3;
    rating-flip takes 2 from every score; no rebuttal-completeness run. Template: overclaim-novelty adds
    +2, -2, +2, -2, +2, -2, 0, 0; rating-flip takes 1 from papers 0-5; rebuttal-completeness changes nothing;
    injection-white-text (no aspect of the paper's) adds 1 to every score."""
    rejected = {i: "Reject" for i in range(8)}
    dimension = _meta_reviews("meta_review_dimensions", True)
    none = _meta_reviews("meta_review_score", False)
    template = _meta_reviews("meta_review_template", False)
    first = (_edited(dimension, "overclaim-novelty", [1] * 8, {0: "Accept as Spotlight", 3: "Accept as Spotlight"},
                     {"contribution": [1, 1, 0, 0, 0, 0, 0, 0]})
             + _edited(dimension, "rating-flip", [-2] * 8, rejected) + _edited(dimension, "rebuttal-completeness")
             + _edited(none, "overclaim-novelty", [1, 1, 1, 1, 0, 0, 0, 0]) + _edited(none, "rating-flip", [-2] * 8))
    second = (_edited(template, "overclaim-novelty", [2, -2, 2, -2, 2, -2, 0, 0])
              + _edited(template, "rating-flip", [-1] * 6 + [0, 0]) + _edited(template, "rebuttal-completeness")
              + _edited(template, "injection-white-text", [1] * 8))
    return [write(folder, "meta-dimension-none.json",
                  robustness_report(_dataset(dimension + none, "meta_review"), _dataset(first, "meta_review"),
                                    kind="meta_review")),
            write(folder, "meta-template.json",
                  robustness_report(_dataset(template, "meta_review"), _dataset(second, "meta_review"),
                                    kind="meta_review"))]


def robustness_review_synthetic(folder: Path) -> Path:
    """Reviews of 8 papers by one reviewer under three paper perturbations, with differences known by hand:
    overclaim-novelty moves contribution by +1, -1, +1, -1, +1, -1, 0, 0 and nothing else; remove-details takes 1
    from every presentation score and from the rating of papers 0-3; typos changes nothing."""
    base = [{"paper_id": paper, "source": MODEL, "model": MODEL, "prompt": "zero_guide", "rating": rating,
             "subscores": {"contribution": 3, "soundness": 3, "presentation": 3}}
            for paper, rating in zip(PAPERS, RATINGS)]
    perturbed = (_edited(base, "overclaim-novelty", subscores={"contribution": [1, -1, 1, -1, 1, -1, 0, 0]})
                 + _edited(base, "remove-details", [-1, -1, -1, -1, 0, 0, 0, 0], subscores={"presentation": [-1] * 8})
                 + _edited(base, "typos"))
    return write(folder, "reviews-synthetic.json",
                 robustness_report(_dataset(base, "review"), _dataset(perturbed, "review")))


def shares_synthetic(folder: Path, changes: dict[str, int], n: int = 508) -> Path:
    """A meta-review report of ``n`` papers (the paper's 508) whose final decisions move so that each category
    gains ``changes[decision]`` papers (the gains sum to 0): the counts behind a row of the paper's Table 7."""
    losers = [decision for decision, change in changes.items() for _ in range(-change)]
    gainers = [decision for decision, change in changes.items() for _ in range(change)]
    assert len(losers) == len(gainers) <= n
    before = losers + ["Accept as Poster"] * (n - len(losers))
    after = gainers + ["Accept as Poster"] * (n - len(gainers))
    base = [{"paper_id": f"p{i}", "source": MODEL, "prompt": "meta_review_dimensions", "rating": 6,
             "recommendation": decision} for i, decision in enumerate(before)]
    perturbed = [{**row, "recommendation": decision,
                  "perturbation": {"kind": "overclaim-novelty", "category": "contribution", "component": "paper"}}
                 for row, decision in zip(base, after)]
    return write(folder, "meta-shares.json", robustness_report(_dataset(base, "meta_review"),
                                                               _dataset(perturbed, "meta_review"), kind="meta_review"))


def effects_synthetic(folder: Path) -> Path:
    """Score-only effects (no judge) with differences known by hand, for reviewer `hand`: 4 papers, each with one
    critical version (rating differences -2, -3, -2, -1: mean -2) and two neutral ones (0 and 1, -1 and 0, 0 and
    1, 0 and -1: mean 0, sample SD sqrt(4/7)); the reviews of the neutral versions repeat the original's text,
    except paper 3's second, which changes one word of four. Reviewer `null` reacts to nothing."""
    critical, neutral = [-2, -3, -2, -1], [(0, 1), (-1, 0), (0, 1), (0, -1)]
    original, variants = [], []
    for reviewer in ("hand", "null"):
        for p in range(4):
            base = {"paper_id": f"paper-{p}", "source": reviewer, "prompt": "zero_generic", "rating": 6,
                    "text": "the cat sat down"}
            original.append(base)
            moves = [(critical[p], "soundness-critical", "result-negated", base["text"])]
            moves += [(move, "soundness-neutral", kind, "the cat ran down" if (p, kind) == (3, "whitespace")
                       else base["text"]) for move, kind in zip(neutral[p], ("spelling", "whitespace"))]
            for move, category, kind, text in moves:
                variants.append({**base, "rating": 6 + (move if reviewer == "hand" else 0), "text": text,
                                 "perturbation": {"kind": kind, "category": category, "component": "paper"}})
    return write(folder, "effects-synthetic.json",
                 counterfactual_effects(_dataset(original, "review"), _dataset(variants, "review")))


def effects_judged(folder: Path) -> Path:
    """The simulated counterfactual study of the treatment tests, judged by its sentence-reading stub: every
    difference and the assertion Jaccard are measured."""
    original, variants, _ = build_study()
    return write(folder, "effects-judged.json",
                 counterfactual_effects(_dataset(original, "review"), _dataset(variants, "review"),
                                        Judge(reading_judge())))


def load(paths) -> list:
    return [load_result(path) for path in paths]
