"""A synthetic `praib grounding` run whose numbers are known by hand: reviews whose weakness comments carry the
rating the stub judge gives them (``[gs=N]``) and a known number of cross-references.

Per review (human h1-h5, model a "model-a" a1-a3, model b "model-b" b1-b3; comment ratings; cross-references):

====  ===========  =====  ====
h1    1, 2         1.5    0
h2    3            3      1
h3    4, 4         4      3
h4    5, 5, 4      14/3   7
h5    2            2      0
a1    3            3      0
a2    2            2      1
a3    4            4      2
b1    2            2      0
b2    5            5      6
b3    (unreadable) —      0
====  ===========  =====  ====

h1 also has a comment shorter than 50 characters, which is left out. So the human bins 0 / 1 / 2-5 / >5 hold
1.75 (h1, h5) / 3 / 4 / 14/3, gains 0 / 1.25 / 2.25 / 14/3 - 1.75; model a's 3 / 2 / 4 / none; model b's 2 / none /
none / 5 (b3 is not rated); all models' 2.5 / 2 / 4 / 5. Spearman's ρ of the rating with the count: human
9.5 / sqrt(95) (ranks [1, 3, 4, 5, 2] and [1.5, 3, 4, 5, 1.5]), model a 0.5 (ranks [2, 1, 3] and [1, 2, 3]), all
models 7.25 / 9.5 (ranks [3, 1.5, 4, 1.5, 5] and [1.5, 3, 4, 1.5, 5]).
"""

import json
import re
from pathlib import Path

from click.testing import CliRunner

from praib.cli.main import main
from tests.doubles import StubBackend

FILLER = "which the authors should address before the paper can be accepted"

# (review id, source, comments as (rating, cross-references written into it))
REVIEWS = [
    ("h1", "human", [(1, ""), (2, ""), (None, "short")]),
    ("h2", "human", [(3, "Table 1")]),
    ("h3", "human", [(4, "Figure 2 and Section 3"), (4, "Table 4")]),
    ("h4", "human", [(5, "Table 1, Table 2 and Figure 3"), (5, "Figure 4 and Section 5"), (4, "Eq. (6), Theorem 7")]),
    ("h5", "human", [(2, "")]),
    ("a1", "model-a", [(3, "")]),
    ("a2", "model-a", [(2, "Table 1")]),
    ("a3", "model-a", [(4, "Table 1 and Figure 2")]),
    ("b1", "model-b", [(2, "")]),
    ("b2", "model-b", [(5, "Table 1, Table 2, Table 3, Figure 4, Figure 5 and Section 6")]),
    ("b3", "model-b", [("?", "")]),
]


def _comment(rating, where: str) -> str:
    if rating is None:
        return "Minor: a typo."
    return f"The analysis [gs={rating}] {'in ' + where + ' ' if where else ''}is incomplete, {FILLER}."


def review_rows() -> list[dict]:
    rows = []
    for review_id, source, comments in REVIEWS:
        weaknesses = "\n".join(f"- {_comment(rating, where)}" for rating, where in comments)
        human = source == "human"
        rows.append({"review_id": review_id, "paper_id": f"p{review_id[1]}", "source": source,
                     "model": None if human else f"org/{source}", "prompt": None if human else "extended",
                     "venue": "ICLR", "year": 2025, "text": f"Weaknesses:\n{weaknesses}", "weaknesses": weaknesses,
                     "rating": 6})
    return rows


def stub_judge(monkeypatch) -> StubBackend:
    def answer(request):
        rating = re.search(r"\[gs=(.)\]", request.messages[-1][1]).group(1)
        return "I cannot rate this." if rating == "?" else json.dumps({"grounding_specificity_label": rating})

    stub = StubBackend(answer, model="stub-revutil", model_revision="r1")
    monkeypatch.setattr("praib.llm.judge.make_backend", lambda kind, model, **options: stub)
    return stub


def grounding_run(folder: Path, monkeypatch, rows: list[dict] | None = None) -> tuple[Path, object]:
    """Runs `praib grounding` on ``rows`` (default :func:`review_rows`) with the stub judge; the result's path and the
    CLI result."""
    reviews = folder / "grounding-reviews.jsonl"
    reviews.write_text("".join(json.dumps(row) + "\n" for row in (review_rows() if rows is None else rows)),
                       encoding="utf-8")
    stub_judge(monkeypatch)
    output = folder / "grounding.json"
    result = CliRunner().invoke(main, ["grounding", str(reviews), "--judge", "stub-revutil", "--cache-dir",
                                       str(folder / "cache"), "-o", str(output), "--no-progress"])
    return output, result
