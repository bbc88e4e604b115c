"""Bad record files shared by the commands' bad-input matrix (tests/cli/test_bad_inputs.py) and the columnar
check's (tests/records/test_columns_matrix.py): the same inputs must give the same error lines on both paths."""

from __future__ import annotations

import json

REVIEW = {"review_id": "r1", "paper_id": "p1", "venue": "ICLR", "year": 2024, "source": "human", "reviewer_id": "R1",
          "text": "The method is sound.\n\nRating: 6", "rating": 6, "confidence": 3}
PAPER = {"paper_id": "p1", "venue": "ICLR", "year": 2024, "title": "A paper", "decision": "Accept",
         "text": "# A paper\n\nWe study things. They work.\n\n## References\n\nNone."}
META_REVIEW = {"meta_review_id": "m1", "paper_id": "p1", "venue": "ICLR", "year": 2024, "source": "human",
               "text": "Accept."}
REBUTTAL = {"rebuttal_id": "b1", "paper_id": "p1", "review_id": "r1", "venue": "ICLR", "year": 2024,
            "source": "human", "text": "We thank the reviewer."}
GOOD = {"review": REVIEW, "paper": PAPER, "meta_review": META_REVIEW, "rebuttal": REBUTTAL}
ID_FIELD = {"review": "review_id", "paper": "paper_id", "meta_review": "meta_review_id", "rebuttal": "rebuttal_id"}
# A field of each kind whose JSON type is wrong: a string where a list or a struct is expected.
WRONG_TYPE = {"review": {"subscores": "high"}, "paper": {"keywords": "a; b"},
              "meta_review": {"perturbation": "spelling"}, "rebuttal": {"perturbation": "spelling"}}


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


# Python's json parser recurses per bracket: this value is deeper than its recursion limit.
DEEP = b'{"paper_id": "p1", "venue": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
NAN = b'{"nan": NaN, '


# A case is the content of the bad file: bytes, None for no file, "dir" for a directory, or
# (suffix, bytes) for a file of another type than the slot's.

def record_cases(kind: str) -> dict:
    good = json.dumps(GOOD[kind]).encode() + b"\n"
    return {
        "missing file": None,
        "directory for a file": "dir",
        "empty file": b"",
        "whitespace-only file": b" \n\n\t\n",
        "non-UTF-8 bytes": good + good.replace(b'"p1"', b'"p\xff1"'),
        "truncated last line": good + good[: len(good) // 2],
        "int32 overflow": _jsonl([{**GOOD[kind], "year": 99999999999}]),
        "NaN (not JSON)": good.replace(b'"year": 2024', b'"year": NaN'),
        "nested too deeply": good + DEEP + b"\n",
        "int64 overflow": _jsonl([{**GOOD[kind], "perturbation": {"kind": "spelling", "seed": 2**70}}]),
        "list for an object": good + b'["p2", "human"]\n',
        "wrong JSON type": _jsonl([{**GOOD[kind], **WRONG_TYPE[kind]}]),
        "not Parquet": ("parquet", b"paper_id,text\np1,hello\n"),
        "JSON that holds no records": ("json", b'{"paper_id": "p1"}'),
        # Ids that look like good ones (issue 26, item 7), and a score out of another total (item 8).
        "an id with a zero-width space": _jsonl([GOOD[kind], {**GOOD[kind], ID_FIELD[kind]: "x1\u200b"}]),
        "a paper id with a bidi control": _jsonl([{**GOOD[kind], "paper_id": "p\u202e1"}]),
        **({"a rating out of another total": _jsonl([{**GOOD[kind], "rating": "7/10"}])}
           if kind in ("review", "meta_review") else {}),
    }


CSV_HEADER = b"paper_id,title,review_id,summary_of_the_paper,recommendation\n"
CSV_ROW = b"p1,A paper,r1,Fine.,6\n"
CSV_CASES = {
    "empty file": b"", "whitespace-only file": b"\n\n", "header only, no paper_id": b"title,rating\nA,6\n",
    "non-UTF-8 bytes": CSV_HEADER + CSV_ROW.replace(b"Fine", b"F\xffine"),
    "field over the csv limit (50 MB)": CSV_HEADER + b'p1,A paper,r1,"' + b"x" * 50_000_000 + b'",6\n',
    "unclosed quote": CSV_HEADER + CSV_ROW + b'p2,"B paper,r2,Fine.,6\n',
    "semicolon delimiter": CSV_HEADER.replace(b",", b";") + CSV_ROW.replace(b",", b";"),
    "more fields than the header": CSV_HEADER + b"p1,A paper,r1,Fine, really.,6\n",
    "fewer fields than the header": CSV_HEADER + b"p1,A paper,r1\n",
    "int32 overflow": CSV_HEADER + CSV_ROW.replace(b",6", b",99999999999"),
    "a column named twice": CSV_HEADER.replace(b"title", b"paper_id") + CSV_ROW.replace(b"A paper", b"p2"),
    "NUL byte in a field": CSV_HEADER + CSV_ROW.replace(b"Fine", b"Fi\x00ne"),
}
# The CSV records evaluate reads: the cases above but the 50 MB field, and those of a review's own fields.
EVALUATE_CSV_CASES = {**{k: v for k, v in CSV_CASES.items() if "50 MB" not in k},
                      "a review without its source": b"paper_id,text\np1,Fine.\n",
                      "a rating that is no number": b"paper_id,source,rating\np1,human,high\n",
                      "a rating out of another total": b"paper_id,source,rating\np1,human,7/10\n",
                      "an id with a zero-width space": "paper_id,source\np\u200b1,human\n".encode()}
