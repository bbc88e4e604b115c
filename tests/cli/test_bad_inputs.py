"""Every bad input of every command is one error line that names the file (issue 18, item 4).

Each command that reads a file is run on a matrix of malformed inputs built here: a missing file, a
directory for a file and a file for a directory, an empty or blank file, bytes that are not UTF-8, a
cut-off last line, integers beyond their column's range, JSON values of the wrong type, a "Parquet"
file that is not one, a CSV field over the csv module's limit, a CSV with another delimiter, ... The
command must fail (rc != 0) with no traceback, through its own error (not the top-level net, which
says "--debug"), and name the bad file. Commands that take a model must reject the input before
loading the model: loading one here fails the test. Templates (--prompt FILE, --template,
--template-dir, --card-template) are left to the template work of the same issue (item 8), except those
over the time and size limits (issue 26), at the end with a server's URL that carries a password.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import praib.llm.backends
from praib.cli.main import main
from tests.bad_records import CSV_CASES, DEEP, EVALUATE_CSV_CASES, GOOD, NAN, PAPER, REVIEW, _jsonl, record_cases
from tests.paths import DEMO

MODEL = "a-model-that-must-not-load"

MANIFEST = {"model": "demo-model", "revision": None, "backend": "vllm", "prompts": ["extended"],
            "sampling": {"temperature": 0.0}, "date": "2025-06-01", "knowledge_cutoff": None}


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _good(tmp_path: Path, kind: str, **changes) -> Path:
    return _write(tmp_path / f"good-{kind}.jsonl", _jsonl([{**GOOD[kind], **changes}]))


# --------------------------------------------------------------------------- bad files






def _make(tmp_path: Path, name: str, suffix: str, content) -> Path:
    if isinstance(content, tuple):
        suffix, content = content
    path = tmp_path / "inputs" / f"bad-{name}.{suffix}"
    if content == "dir":
        path.mkdir(parents=True)
    elif content is not None:
        _write(path, content)
    return path


def json_object_cases(good: dict) -> dict:
    """A JSON file that must hold one object (a manifest, a results side file, a cached page)."""
    text = json.dumps(good).encode()
    return {"empty file": b"", "whitespace-only file": b"\n \n", "non-UTF-8 bytes": text.replace(b"{", b"{\xff", 1),
            "truncated": text[: len(text) // 2], "list for an object": json.dumps([good]).encode(),
            "NaN (not JSON)": text.replace(b"{", NAN, 1), "nested too deeply": DEEP}


CLAIMS = {"paper_id": "p1", "claims": ["The method is exact."]}
LOGIC = {"paper_id": "p1", "goal": "g"}
NOTE = {"id": "p1", "forum": "p1", "invitation": "ICLR.cc/2023/Conference/-/Blind_Submission",
        "content": {"title": "A paper"},
        "details": {"replies": [{"id": "r1", "forum": "p1", "replyto": "p1",
                                 "invitation": "ICLR.cc/2023/Conference/Paper1/-/Official_Review",
                                 "signatures": ["ICLR.cc/2023/Conference/Paper1/Reviewer_A"],
                                 "content": {"summary_of_the_paper": "Fine.",
                                             "recommendation": "6: marginally above"}}]}}
PEERSUM = {"paper_id": "iclr_2023_p1", "paper_title": "A paper", "paper_acceptance": "Accept",
           "reviews": [{"review_id": "r1", "writer": "official_reviewer", "comment": "Fine.", "rating": 6,
                        "confidence": 3, "reply_to": "p1"}]}
RESULT_ROW = {"submission": "m", "model": "m", "metric": "tkc", "venue": "all", "value": 1.0}


def _line(value) -> bytes:
    return json.dumps(value).encode() + b"\n"


def _with(base: dict, **changes) -> bytes:
    return _line({**base, **changes})


NOTE_CASES = {
    "missing file": None, "directory for a file": "dir", "empty file": b"", "whitespace-only file": b" \n",
    "non-UTF-8 bytes": json.dumps([NOTE]).encode().replace(b"A paper", b"A \xffpaper"),
    "truncated": json.dumps([NOTE]).encode()[:-40],
    "list for an object": b'[["p1"]]',
    "string for a list": json.dumps([{**NOTE, "details": {"replies": "r1"}}]).encode(),
    "reply without an id": json.dumps([{**NOTE, "details": {"replies": [{"content": {}}]}}]).encode(),
    "reply that is a list": json.dumps([{**NOTE, "details": {"replies": [["r1"]]}}]).encode(),
    "int32 overflow": json.dumps([NOTE]).encode().replace(b"6: marginally above", b"99999999999"),
    "JSON that holds no notes": b'{"id": "p1"}',
    "NaN (not JSON)": json.dumps([NOTE]).encode().replace(b"{", NAN, 1), "nested too deeply": b"[" + DEEP + b"]",
}
NOTE_LINE_CASES = {
    "empty file": b"", "non-UTF-8 bytes": _line(NOTE).replace(b"A paper", b"A \xffpaper"),
    "truncated last line": _line(NOTE) + _line(NOTE)[:50], "list for an object": _line(NOTE) + b'["p1"]\n',
    "NaN (not JSON)": _line(NOTE).replace(b"{", NAN, 1), "nested too deeply": _line(NOTE) + DEEP,
}
PEERSUM_CASES = {
    "empty file": b"", "non-UTF-8 bytes": _line(PEERSUM).replace(b"A paper", b"A \xffpaper"),
    "truncated last line": _line(PEERSUM) + _line(PEERSUM)[:60], "list for an object": b'["iclr_2023_p1"]\n',
    "string for a list": _with(PEERSUM, reviews="Fine."),
    "int32 overflow": _line(PEERSUM).replace(b'"rating": 6', b'"rating": 99999999999'),
    "NaN (not JSON)": _line(PEERSUM).replace(b'"rating": 6', b'"rating": NaN'), "nested too deeply": DEEP,
}
CLAIM_CASES = {
    "missing file": None, "directory for a file": "dir", "empty file": b"", "whitespace-only file": b"\n\n",
    "non-UTF-8 bytes": _line(CLAIMS).replace(b"exact", b"ex\xffact"), "truncated last line": _line(CLAIMS)[:-12],
    "list for an object": b'["p1"]\n', "string for a list": _with(CLAIMS, claims="The method is exact."),
    "JSON list for an object": ("json", json.dumps([CLAIMS]).encode()),
    "NaN (not JSON)": _line(CLAIMS).replace(b"{", NAN, 1), "nested too deeply": DEEP,
    "JSON object nested too deeply": ("json", DEEP),
}
LOGIC_CASES = {
    "directory for a file": "dir", "empty file": b"", "whitespace-only file": b"\n",
    "non-UTF-8 bytes": _line(LOGIC).replace(b'"g"', b'"\xff"'), "truncated last line": _line(LOGIC)[:-6],
    "list for an object": b'["p1"]\n', "missing fields": _line(LOGIC), "not Parquet": ("parquet", b"not parquet"),
    "unknown file type": ("txt", _line(LOGIC)),
    "NaN (not JSON)": _with(LOGIC, goal={"summary": "g", "paragraphs": []}, findings=[], conclusions=[], results=[],
                            model="m", attempts=-1).replace(b"-1", b"NaN"),
    "nested too deeply": DEEP,
}
BIB_ENTRY = b"@article{a, title={Attention Is All You Need}, author={Vaswani, Ashish}, year={2017}}\n"
OPENALEX = {"id": "W1", "title": "Attention Is All You Need", "publication_year": 2017, "authorships": []}
BIBLIOGRAPHY_CASES = {
    "empty file": ("bib", b""), "non-UTF-8 BibTeX": ("bib", BIB_ENTRY.replace(b"Ashish", b"Ash\xffish")),
    "non-UTF-8 OpenAlex": ("jsonl", _line(OPENALEX).replace(b"Need", b"N\xffeed")),
    "truncated OpenAlex": ("jsonl", _line(OPENALEX) + _line(OPENALEX)[:30]),
    "list for an object": ("jsonl", b'["W1"]\n'), "not XML": ("xml", b"<dblp><article>"),
    "not gzip": ("bib.gz", BIB_ENTRY), "unknown file type": ("txt", BIB_ENTRY),
    "NaN in OpenAlex": ("jsonl", _line(OPENALEX).replace(b"2017", b"NaN")),
    "OpenAlex nested too deeply": ("jsonl", _line(OPENALEX) + DEEP),
}
RESULT_CASES = {
    "directory for a file": "dir", "empty file": b"", "whitespace-only file": b"\n",
    "non-UTF-8 bytes": _line(RESULT_ROW).replace(b"tkc", b"t\xffkc"), "truncated last line": _line(RESULT_ROW)[:-9],
    "list for an object": _line(RESULT_ROW) + b'["m", "tkc"]\n', "wrong JSON type": _with(RESULT_ROW, value="high"),
    "integer beyond float": _with(RESULT_ROW, value=10**400), "missing column": _line({"submission": "m"}),
    "NaN (not JSON)": _line(RESULT_ROW).replace(b"1.0", b"NaN"), "nested too deeply": DEEP,
}
GOLD_ROW = {"id": "p1", "task": "polarity", "text": "The method is sound.", "label": "strength"}
GOLD_CASES = {
    "missing file": None, "directory for a file": "dir", "empty file": b"", "whitespace-only file": b"\n \n",
    "non-UTF-8 bytes": _line(GOLD_ROW).replace(b"sound", b"so\xffund"), "truncated last line": _line(GOLD_ROW)[:-15],
    "list for an object": _line(GOLD_ROW) + b'["p2", "polarity"]\n', "wrong JSON type": _with(GOLD_ROW, text=["a"]),
    "a label outside the task's": _with(GOLD_ROW, label="praise"), "missing text": _line({**GOLD_ROW, "text": None}),
    "no item of the task": _with(GOLD_ROW, task="math", label="yes"), "an item twice": _line(GOLD_ROW) * 2,
    "NaN (not JSON)": _line(GOLD_ROW).replace(b"{", NAN, 1), "nested too deeply": _line(GOLD_ROW) + DEEP,
}
DISAPERE_REVIEW = {"review_id": "r1", "review_sentences": [
    {"review_id": "r1", "sentence_index": 0, "text": "Clear.", "aspect": "asp_clarity", "polarity": "pol_positive"}]}
DISAPERE_CASES = {
    "missing file": None, "folder without the release": "dir", "empty file": b"",
    "non-UTF-8 bytes": _line(DISAPERE_REVIEW).replace(b"Clear", b"Cl\xffear"),
    "truncated last line": _line(DISAPERE_REVIEW)[:-20], "list for an object": b'["r1"]\n',
    "string for a list": _with(DISAPERE_REVIEW, review_sentences="Clear."),
    "unknown aspect": _line(DISAPERE_REVIEW).replace(b"asp_clarity", b"asp_tone"),
    "no labelled sentence": _line(DISAPERE_REVIEW).replace(b"pol_positive", b"none"),
    "NaN (not JSON)": _line(DISAPERE_REVIEW).replace(b"{", NAN, 1), "nested too deeply": DEEP,
}
ARG_FILE_CASES = {"missing file": None, "directory for a file": "dir", "empty file": b"",
                  "non-UTF-8 bytes": b"Be \xffkind.\n"}
FILE_FOR_DIRECTORY = {"file for a directory": b"results\n"}
PDF_CASES = {"missing file": None, "directory without PDFs": "dir", "empty file": b"",
             "not a PDF": b"%PDF-1.7 but not really\n", "text file": ("txt", b"hello")}


def _into(directory: Path, name: str, bad: Path, files: dict[str, str] | None = None):
    """Put the bad file at ``directory/name`` (beside ``files``): (the directory, the file to name)."""
    for file, content in (files or {}).items():
        _write(directory / file, content)
    target = directory / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if bad.exists():
        bad.rename(target)
    return directory, target


def _results_dir(tmp_path: Path, name: str, bad: Path):
    good = {"results.jsonl": json.dumps(RESULT_ROW) + "\n", "run.json": "{}"}
    good.pop(name, None)
    directory, target = _into(tmp_path / "results", name, bad, good)
    return ["leaderboard", "report", directory, "-o", tmp_path / "report.html"], target


TABLES_WRONG_TYPE = b'{"groups": 3, "group_by": []}'


def _tables_of_results_dir(tmp_path: Path, name: str, bad: Path):
    args, target = _results_dir(tmp_path, name, bad)
    return ["tables", args[2]], target


def _cached_page(tmp_path: Path, bad: Path):
    page = "ICLR/2023/ICLR.cc_2023_Conference_-_Withdrawn_Submission/offset-0000000-limit-1000.json"  # read first
    directory, target = _into(tmp_path / "cache", page, bad)
    return ["data", "collect", "ICLR", "2023", "--offline", "--cache-dir", directory, "-o", tmp_path / "out"], target


def _submission_manifest(tmp_path: Path, bad: Path, command: list[str]):
    folder = _submission(tmp_path)
    (folder / "manifest.json").unlink()
    _, target = _into(folder, "manifest.json", bad)
    return [*command[:2], folder, *command[2:]], target


def _pushed_results(tmp_path: Path, bad: Path):
    directory, target = _into(tmp_path / "results", "results.parquet", bad)
    return ["leaderboard", "push", directory, "org/name"], target


def _dataset_repo(tmp_path: Path, bad: Path):
    folder, target = _into(tmp_path / "repo", "README.md", bad)
    return ["data", "push", folder, "org/name"], target


def _import(fmt: str):
    return lambda t, bad: ["data", "import-dump", bad, "ICLR", "2023", "--format", fmt, "-o", t / "out"]


# A UKP release folder of one paper, its blueprint and a counterfactual; each slot puts the bad file in one place.
UKP_ID = "ICLR.cc_2025%p1"
UKP_PAPER_DIR = f"papers/ICLR.cc_2025_Conference/{UKP_ID}"
UKP_MD = "\n# A paper\n\n###### Abstract\n\nWe study things.\n\n## 1 Introduction\n\nThey work.\n"
UKP_META = {"title": "A paper", "summary": "We study things."}
UKP_BLUEPRINT = {"paper": UKP_ID, "research_goal": {"research_goal": "g"}, "all_contributions": [],
                 "findings_contributions": [], "conclusions": {}, "results": {}, "method": {"steps": []}}
UKP_COUNTERFACTUAL = {"o_paper": UKP_ID, "cf_paper": {"id": UKP_ID, "meta": UKP_META, "md": UKP_MD + "\n"},
                      "changes": ["whitespace"], "counterfactual_type": "paper_layout"}
UKP_FILES = {f"{UKP_PAPER_DIR}/paper.md": UKP_MD, f"{UKP_PAPER_DIR}/meta.json": json.dumps(UKP_META),
             f"{UKP_PAPER_DIR}/index.json": json.dumps({"title": [1, 1]}),
             f"blueprints/{UKP_ID}.json": json.dumps(UKP_BLUEPRINT),
             f"cf_datasets/paper_layout/{UKP_ID}.json": json.dumps(UKP_COUNTERFACTUAL)}
UKP_COUNTERFACTUAL_CASES = {
    **json_object_cases(UKP_COUNTERFACTUAL),
    "string for an object": json.dumps({**UKP_COUNTERFACTUAL, "cf_paper": "the paper"}).encode(),
    "no markdown": json.dumps({**UKP_COUNTERFACTUAL, "cf_paper": {"id": UKP_ID}}).encode(),
    "no type": json.dumps({key: v for key, v in UKP_COUNTERFACTUAL.items() if key != "counterfactual_type"}).encode(),
}
UKP_TEXT_CASES = {"missing file": None, "directory for a file": "dir", "empty file": b"",
                  "non-UTF-8 bytes": b"# A \xffpaper\n"}
RELEASE_FILE = {"path": "papers/split.json", "role": "split", "paper_id": None, "text": "{}"}
RELEASE_FILE_CASES = {
    "non-UTF-8 bytes": _line(RELEASE_FILE).replace(b"split.json", b"split\xff.json"),
    "truncated last line": _line(RELEASE_FILE)[:-9], "list for an object": b'["papers/split.json"]\n',
    "a path outside the folder": _with(RELEASE_FILE, path="../split.json"),
    "an absolute path": _with(RELEASE_FILE, path="/tmp/split.json"),
    "an unknown role": _with(RELEASE_FILE, role="readme"),
    "no text of a verbatim file": _with(RELEASE_FILE, text=None),
    "a counterfactual without its data": _with(RELEASE_FILE, role="counterfactual", paper_id="p1", data=None),
    "a style of the wrong shape": _with(RELEASE_FILE, role="index", paper_id="p1", style={"indent": "4"}),
    "NaN (not JSON)": _line(RELEASE_FILE).replace(b'"text"', b'"nan": NaN, "text"'), "nested too deeply": DEEP,
}


def _ukp_release(name: str):
    def build(tmp_path: Path, bad: Path):
        files = {path: text for path, text in UKP_FILES.items() if path != name}
        return ["data", "import-ukp", tmp_path / "release", "-o", tmp_path / "out"], _into(
            tmp_path / "release", name, bad, files)[1]
    return build


def _ukp_records(tmp_path: Path, bad: Path):
    folder, target = _into(tmp_path / "records", "release.jsonl", bad, {"papers.jsonl": json.dumps(PAPER) + "\n"})
    return ["data", "export-ukp", folder, "-o", tmp_path / "out"], target


# --------------------------------------------------------------------------- commands x slots
# A slot: (command id, cases, suffix, argv builder). The builder gets tmp_path and the bad file, and
# returns the command line, or (command line, the bad file's new place) when it moves the file to
# where the command looks for it (inside a results directory, a cache, a submission).

def _records_slot(command: str, kind: str, argv):
    return command, record_cases(kind), "jsonl", argv


def _optional_records_slot(command: str, kind: str, argv):
    """An input a collection may lack (rebuttals, meta-reviews): a blank file of it is read as none,
    with a warning (see test_a_blank_optional_input_is_read_as_none_with_a_warning)."""
    cases = {name: case for name, case in record_cases(kind).items() if name not in BLANK_CASES}
    return command, cases, "jsonl", argv


BLANK_CASES = ("empty file", "whitespace-only file")


def _beside(path: Path, name: str, content: str) -> Path:
    """``path``, with a file written where a reader looks for it: in ``path`` if a folder, else next to it."""
    _write((path if path.is_dir() else path.parent) / name, content)
    return path


def _submission(tmp_path: Path) -> Path:
    folder = tmp_path / "submission"
    _write(folder / "reviews.jsonl", _jsonl([{**REVIEW, "source": "demo-model", "model": "demo-model",
                                               "prompt": "extended"}]))
    _write(folder / "manifest.json", json.dumps(MANIFEST))
    return folder


SLOTS = [
    _records_slot("evaluate INPUT", "review", lambda t, bad: ["evaluate", bad]),
    _records_slot("evaluate --reference", "review",
                  lambda t, bad: ["evaluate", _good(t, "review"), "--reference", bad]),
    _records_slot("evaluate --meta-reviews", "meta_review",
                  lambda t, bad: ["evaluate", _good(t, "review"), "--judge", MODEL, "--meta-reviews", bad]),
    _records_slot("generate PAPERS", "paper", lambda t, bad: ["generate", MODEL, bad]),
    _records_slot("score INPUT", "review", lambda t, bad: ["score", bad, "--judge", MODEL]),
    _records_slot("perturb INPUT (papers)", "paper", lambda t, bad: ["perturb", "spelling", bad]),
    _records_slot("perturb INPUT (reviews)", "review", lambda t, bad: ["perturb", "rating-flip", bad]),
    _records_slot("perturb INPUT (rebuttals)", "rebuttal",
                  lambda t, bad: ["perturb", "rebuttal-tone", bad, "--judge", MODEL]),
    _records_slot("perturb --papers", "paper",
                  lambda t, bad: ["perturb", "false-claims", _good(t, "review"), "--papers", bad, "--judge", MODEL]),
    _records_slot("counterfactual extract PAPERS", "paper",
                  lambda t, bad: ["counterfactual", "extract", bad, "--judge", MODEL]),
    _records_slot("counterfactual build PAPERS", "paper",
                  lambda t, bad: ["counterfactual", "build", bad, "--judge", MODEL]),
    _records_slot("counterfactual oracle REVIEWS", "review",
                  lambda t, bad: ["counterfactual", "oracle", bad, _good(t, "paper"), "--judge", MODEL]),
    _records_slot("counterfactual oracle VARIANTS", "paper",
                  lambda t, bad: ["counterfactual", "oracle", _good(t, "review"), bad, "--judge", MODEL]),
    _records_slot("counterfactual effects ORIGINAL", "review",
                  lambda t, bad: ["counterfactual", "effects", bad, _good(t, "review"), "--judge", MODEL]),
    _records_slot("counterfactual effects VARIANTS", "review",
                  lambda t, bad: ["counterfactual", "effects", _good(t, "review"), bad, "--judge", MODEL]),
    _records_slot("meta-review PAPERS", "paper",
                  lambda t, bad: ["meta-review", MODEL, bad, _good(t, "review"), "--judge", MODEL]),
    _records_slot("meta-review REVIEWS", "review",
                  lambda t, bad: ["meta-review", MODEL, _good(t, "paper"), bad, "--judge", MODEL]),
    _optional_records_slot("meta-review --rebuttals", "rebuttal",
                  lambda t, bad: ["meta-review", MODEL, _good(t, "paper"), _good(t, "review"), "--rebuttals", bad]),
    _records_slot("robustness ORIGINAL", "review", lambda t, bad: ["robustness", bad, _good(t, "review")]),
    _records_slot("robustness PERTURBED", "review", lambda t, bad: ["robustness", _good(t, "review"), bad]),
    _records_slot("robustness --record-kind meta_review", "meta_review",
                  lambda t, bad: ["robustness", bad, _good(t, "meta_review"), "--record-kind", "meta_review"]),
    _records_slot("leaderboard validate SUBMISSION", "review",
                  lambda t, bad: ["leaderboard", "validate", bad,
                                  "--manifest", _write(t / "m.json", json.dumps(MANIFEST))]),
    _records_slot("leaderboard validate --benchmark-papers", "paper",
                  lambda t, bad: ["leaderboard", "validate", _submission(t), "--benchmark-papers", bad]),
    _records_slot("leaderboard run SUBMISSION", "review",
                  lambda t, bad: ["leaderboard", "run", _beside(bad, "manifest.json", json.dumps(MANIFEST)),
                                  "--reference", _good(t, "review")]),
    _records_slot("leaderboard run --reference", "review",
                  lambda t, bad: ["leaderboard", "run", _submission(t), "--reference", bad, "--judge", MODEL]),
    _records_slot("leaderboard run --benchmark-papers", "paper",
                  lambda t, bad: ["leaderboard", "run", _submission(t), "--demo", "--benchmark-papers", bad]),
    _records_slot("leaderboard eras", "review", lambda t, bad: ["leaderboard", "eras", bad]),
    _records_slot("data sample PAPERS", "paper", lambda t, bad: ["data", "sample", bad, "-o", t / "out"]),
    _optional_records_slot("data sample --reviews", "review",
                  lambda t, bad: ["data", "sample", _good(t, "paper"), "--reviews", bad, "-o", t / "out"]),
    _optional_records_slot("data sample --meta-reviews", "meta_review",
                  lambda t, bad: ["data", "sample", _good(t, "paper"), "--meta-reviews", bad, "-o", t / "out"]),
    _optional_records_slot("data sample --rebuttals", "rebuttal",
                  lambda t, bad: ["data", "sample", _good(t, "paper"), "--rebuttals", bad, "-o", t / "out"]),
    _records_slot("data verify-citations REVIEWS", "review",
                  lambda t, bad: ["data", "verify-citations", bad, "--bibliography",
                                  _write(t / "refs.bib", "@article{a, title={A}, year={2020}}\n")]),
    _records_slot("data build --reviews", "review", lambda t, bad: ["data", "build", "--reviews", bad, "-o", t / "ds"]),
    _records_slot("data build --papers", "paper", lambda t, bad: ["data", "build", "--papers", bad, "-o", t / "ds"]),
    _records_slot("data build --meta-reviews", "meta_review",
                  lambda t, bad: ["data", "build", "--meta-reviews", bad, "-o", t / "ds"]),
    _records_slot("data build --rebuttals", "rebuttal",
                  lambda t, bad: ["data", "build", "--rebuttals", bad, "-o", t / "ds"]),
    ("perturb --claims", CLAIM_CASES, "jsonl",
     lambda t, bad: ["perturb", "false-claims", _good(t, "review"), "--claims", bad]),
    ("counterfactual build --logic", LOGIC_CASES, "jsonl",
     lambda t, bad: ["counterfactual", "build", _good(t, "paper"), "--edits", "spelling", "--logic", bad]),
    ("leaderboard validate --manifest", json_object_cases(MANIFEST), "json",
     lambda t, bad: ["leaderboard", "validate", _submission(t), "--manifest", bad]),
    ("leaderboard validate (manifest.json)", json_object_cases(MANIFEST), "json",
     lambda t, bad: _submission_manifest(t, bad, ["leaderboard", "validate"])),
    ("leaderboard run (manifest.json)", json_object_cases(MANIFEST), "json",
     lambda t, bad: _submission_manifest(t, bad, ["leaderboard", "run", "--demo"])),
    ("evaluate --bibliography", BIBLIOGRAPHY_CASES, "bib",
     lambda t, bad: ["evaluate", _good(t, "review"), "--bibliography", bad]),
    ("data verify-citations --bibliography", BIBLIOGRAPHY_CASES, "bib",
     lambda t, bad: ["data", "verify-citations", _good(t, "review"), "--bibliography", bad]),
    ("data import-dump (json)", NOTE_CASES, "json", _import("json")),
    ("data import-dump (jsonl)", NOTE_LINE_CASES, "jsonl", _import("json")),
    ("data import-dump (csv)", CSV_CASES, "csv", _import("csv")),
    ("data import-dump (peersum)", PEERSUM_CASES, "jsonl", _import("peersum")),
    ("data collect (cached page)", json_object_cases({"notes": []}), "json", _cached_page),
    ("data import-ukp DIR", FILE_FOR_DIRECTORY, "txt", lambda t, bad: ["data", "import-ukp", bad, "-o", t / "out"]),
    ("data import-ukp (paper.md)", UKP_TEXT_CASES, "md", _ukp_release(f"{UKP_PAPER_DIR}/paper.md")),
    ("data import-ukp (meta.json)", {"missing file": None, **json_object_cases(UKP_META)}, "json",
     _ukp_release(f"{UKP_PAPER_DIR}/meta.json")),
    ("data import-ukp (index.json)", json_object_cases({"title": [1, 1]}), "json",
     _ukp_release(f"{UKP_PAPER_DIR}/index.json")),
    ("data import-ukp (blueprint)", {**json_object_cases(UKP_BLUEPRINT), "a paper not in the release":
                                     json.dumps({**UKP_BLUEPRINT, "paper": "ICLR.cc_2025%p2"}).encode()},
     "json", _ukp_release(f"blueprints/{UKP_ID}.json")),
    ("data import-ukp (counterfactual)", UKP_COUNTERFACTUAL_CASES, "json",
     _ukp_release(f"cf_datasets/paper_layout/{UKP_ID}.json")),
    _records_slot("data export-ukp RECORDS", "paper", lambda t, bad: ["data", "export-ukp", bad, "-o", t / "out"]),
    _records_slot("data export-ukp --counterfactuals", "paper",
                  lambda t, bad: ["data", "export-ukp", _good(t, "paper"), "--counterfactuals", bad, "-o", t / "out"]),
    ("data export-ukp --logic", LOGIC_CASES, "jsonl",
     lambda t, bad: ["data", "export-ukp", _good(t, "paper"), "--logic", bad, "-o", t / "out"]),
    ("data export-ukp (release.jsonl)", RELEASE_FILE_CASES, "jsonl", _ukp_records),
    ("data push DIR (README.md)", {"empty file": b"", "non-UTF-8 bytes": b"---\nlicense: \xff\n---\n",
                                   "no configs": b"---\nlicense: mit\n---\n# Data\n"}, "md", _dataset_repo),
    ("data pdf", PDF_CASES, "pdf", lambda t, bad: ["data", "pdf", bad, "-o", t / "papers.jsonl"]),
    ("judge validate --gold", GOLD_CASES, "jsonl",
     lambda t, bad: ["judge", "validate", "--task", "polarity", "--gold", bad, "--judge", MODEL]),
    ("judge validate --gold disapere:PATH", DISAPERE_CASES, "jsonl",
     lambda t, bad: ["judge", "validate", "--task", "aspect", "--gold", f"disapere:{bad}", "--judge", MODEL]),
    ("generate --prompt-arg @FILE", ARG_FILE_CASES, "txt",
     lambda t, bad: ["generate", MODEL, _good(t, "paper"), "--prompt-arg", f"guidelines=@{bad}"]),
    ("prompts show --prompt-arg @FILE", ARG_FILE_CASES, "txt",
     lambda t, bad: ["prompts", "show", "extended", "--render", "--prompt-arg", f"guidelines=@{bad}"]),
    ("leaderboard report (results.jsonl)", RESULT_CASES, "jsonl", lambda t, bad: _results_dir(t, "results.jsonl", bad)),
    ("leaderboard report (results.parquet)", {"empty file": b"", "not Parquet": b"not parquet"}, "parquet",
     lambda t, bad: _results_dir(t, "results.parquet", bad)),
    ("leaderboard report (details)", json_object_cases({"label": "m"}), "json",
     lambda t, bad: _results_dir(t, "details/m.json", bad)),
    ("leaderboard report (manifests)", json_object_cases(MANIFEST), "json",
     lambda t, bad: _results_dir(t, "manifests/m.json", bad)),
    ("leaderboard report (eras.json)", json_object_cases({"venues": {}}), "json",
     lambda t, bad: _results_dir(t, "eras.json", bad)),
    ("leaderboard report (run.json)", json_object_cases({"seed": 0}), "json",
     lambda t, bad: _results_dir(t, "run.json", bad)),
    ("leaderboard push (results.parquet)", {"empty file": b"", "not Parquet": b"not parquet"}, "parquet",
     _pushed_results),
    ("evaluate (CSV records)", EVALUATE_CSV_CASES, "csv", lambda t, bad: ["evaluate", bad]),
    # A .txt file is a paper here, not a bad input.
    ("perturb PAPERS (.pdf)", {k: v for k, v in PDF_CASES.items() if k != "text file"}, "pdf",
     lambda t, bad: ["perturb", "typos", bad, "-o", t / "out.jsonl"]),
    ("tables RESULTS", {"missing file": None, "directory for a file": "dir",
                        **json_object_cases({"groups": [], "group_by": []}),
                        "not a result praib writes": b'{"a": 1}', "a field of the wrong type": TABLES_WRONG_TYPE},
     "json", lambda t, bad: ["tables", bad]),
    ("tables RESULTS_DIR (results.jsonl)", RESULT_CASES, "jsonl",
     lambda t, bad: _tables_of_results_dir(t, "results.jsonl", bad)),
    ("tables RESULTS_DIR (run.json)", json_object_cases({"seed": 0}), "json",
     lambda t, bad: _tables_of_results_dir(t, "run.json", bad)),
    ("leaderboard report DIRECTORY", FILE_FOR_DIRECTORY, "txt",
     lambda t, bad: ["leaderboard", "report", bad, "-o", t / "report.html"]),
    ("leaderboard push DIRECTORY", FILE_FOR_DIRECTORY, "txt", lambda t, bad: ["leaderboard", "push", bad, "org/name"]),
    ("data push DIR", FILE_FOR_DIRECTORY, "txt", lambda t, bad: ["data", "push", bad, "org/name"]),
    ("data collect --cache-dir", FILE_FOR_DIRECTORY, "txt",
     lambda t, bad: ["data", "collect", "ICLR", "2023", "--offline", "--cache-dir", bad, "-o", t / "out"]),
]


MATRIX = [pytest.param(command, suffix, content, argv, id=f"{command} | {case}")
          for command, cases, suffix, argv in SLOTS for case, content in cases.items()]


@pytest.fixture
def no_model(monkeypatch, tmp_path):
    """Loading a model fails the test; default outputs land in tmp_path."""
    def refuse(model, **options):
        raise AssertionError(f"the model {model} was loaded before the input was checked")

    monkeypatch.setattr(praib.llm.backends, "TransformersBackend", refuse)
    monkeypatch.chdir(tmp_path)


def run_cli(argv) -> "click.testing.Result":  # noqa: F821
    return CliRunner().invoke(main, [str(a) for a in argv], catch_exceptions=True)


@pytest.mark.parametrize("command,suffix,content,argv", MATRIX)
def test_a_bad_input_is_one_error_line_naming_the_file(tmp_path, no_model, command, suffix, content, argv):
    bad = _make(tmp_path, "input", suffix, content)
    args = argv(tmp_path, bad)
    if isinstance(args, tuple):  # the bad file was moved to where the command looks for it
        args, bad = args
    result = run_cli(args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith(("Error:", "  problem:"))]
    assert errors, result.output
    assert "--debug" not in result.output, result.output
    assert any(str(bad) in line or str(bad.resolve()) in line for line in errors), result.output


@pytest.mark.parametrize("case", BLANK_CASES)
@pytest.mark.parametrize("option, kind", [("--reviews", "review"), ("--meta-reviews", "meta-review"),
                                          ("--rebuttals", "rebuttal")])
def test_a_blank_optional_input_is_read_as_none_with_a_warning(tmp_path, caplog, option, kind, case):
    blank = _write(tmp_path / "blank.jsonl", record_cases("review")[case])
    result = run_cli(["data", "sample", _good(tmp_path, "paper"), option, blank, "--per-venue-year", "2",
                      "-o", tmp_path / "out"])
    assert "Traceback" not in result.output
    assert f"{blank}: holds no {kind} records" in caplog.text


# A venue or year no scale file knows is no error but one warning that names them and the scale used instead
# (issue 26, item 8): said once by the commands that compute scores' metrics, also when worker processes
# parse the reviews.
def _unscaled_reviews(folder: Path) -> Path:
    rows = []
    for venue, year in (("FOOCONF", 1999), ("ICLR", 2031)):
        for paper in ("p1", "p2"):
            base = {"paper_id": f"{venue}-{paper}", "venue": venue, "year": year}
            rows += [{**base, "review_id": f"{venue}-{paper}-h{i}", "source": "human", "text": "Sound.", "rating": r,
                      "confidence": 3} for i, r in enumerate((4, 7))]
            rows.append({**base, "review_id": f"{venue}-{paper}-m", "source": "demo-model", "model": "demo-model",
                         "prompt": "extended", "text": "Summary: S.\nStrengths: A.\nWeaknesses: B.\nRating: 7\n"})
    return _write(folder / "reviews.jsonl", _jsonl(rows))


def _unscaled_submission(folder: Path) -> list[str]:
    reviews = [json.loads(line) for line in _unscaled_reviews(folder / "all").read_text().splitlines()]
    _write(folder / "sub" / "reviews.jsonl", _jsonl([r for r in reviews if r["source"] != "human"]))
    _write(folder / "sub" / "manifest.json", json.dumps(MANIFEST))
    human = _write(folder / "human.jsonl", _jsonl([r for r in reviews if r["source"] == "human"]))
    return ["leaderboard", "run", folder / "sub", "--reference", human, "--n-bootstrap", "2", "-o", folder / "out"]


@pytest.mark.parametrize("argv", [
    lambda t: ["evaluate", _unscaled_reviews(t), "--workers", "2", "--batch-rows", "3"],
    lambda t: ["leaderboard", "eras", _unscaled_reviews(t)],
    _unscaled_submission,
], ids=["evaluate --workers 2", "leaderboard eras", "leaderboard run"])
def test_a_venue_or_year_without_a_scale_is_one_warning_naming_them_and_the_scale_used(tmp_path, argv):
    result = subprocess.run([sys.executable, "-m", "praib.cli.main", *map(str, argv(tmp_path))], capture_output=True,
                            text=True, timeout=300, env={**os.environ, "TQDM_DISABLE": "1"})
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stderr.splitlines() if "scale" in line] == [
        "praib: no scale file knows FOOCONF 1999, ICLR 2031: their ratings and confidences are read and checked on "
        "the generic scale (rating 1-10, confidence 1-5); add a scale file to a folder in PRAIB_SCALES_PATH to use "
        "the venue's own"]



# --------------------------------------------------------------------------- templates over the limits (issue 26)

ENDLESS = b"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n"
HUGE = b'{{ "x" * 3000000000 }}\n'
TEMPLATE_CASES = {"a loop without end (time limit)": ENDLESS, "a text of 3 GB (size limit)": HUGE}
# A model on a server nobody answers (a port on this machine that is closed): a template renders before
# the first request, while an in-process model would load first.
NO_SERVER = "http://127.0.0.1:9/v1"
TEMPLATE_SLOTS = [
    ("generate --prompt FILE", lambda t, bad: ["generate", MODEL, _good(t, "paper"), "--prompt", bad, "--backend",
                                               "openai", "--base-url", NO_SERVER, "-o", t / "out.jsonl"]),
    ("prompts show FILE --render", lambda t, bad: ["prompts", "show", bad, "--venue", "ICLR", "--year", "2024"]),
    ("perturb --template", lambda t, bad: ["perturb", "injection-comment", _good(t, "paper"), "--template", bad,
                                           "-o", t / "out.jsonl"]),
    ("data build --card-template", lambda t, bad: ["data", "build", "--reviews", _good(t, "review"),
                                                   "--card-template", bad, "-o", t / "ds"]),
    ("score --judge-template", lambda t, bad: ["score", _good(t, "review"), "--judge", MODEL, "--judge-backend",
                                               "openai", "--judge-base-url", NO_SERVER, "--judge-template",
                                               f"math_engagement={bad}", "-o", t / "s.jsonl"]),
]


@pytest.mark.parametrize("case", TEMPLATE_CASES)
@pytest.mark.parametrize("command, argv", TEMPLATE_SLOTS, ids=[slot[0] for slot in TEMPLATE_SLOTS])
def test_a_template_over_the_limits_is_one_error_line_naming_it(tmp_path, no_model, monkeypatch, command, argv,
                                                                 case):
    """Unchecked, the first runs until killed and the second builds 3 GB before a MemoryError."""
    monkeypatch.setenv("PRAIB_TEMPLATE_TIMEOUT", "0.5")
    bad = _write(tmp_path / "mine.jinja", TEMPLATE_CASES[case])
    result = run_cli(argv(tmp_path, bad))
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and f"{bad}: line 1: " in errors[0], result.output
    assert ("PRAIB_TEMPLATE_TIMEOUT" if "time" in case else "PRAIB_TEMPLATE_MAX_CHARS") in errors[0]


# --------------------------------------------------------------------------- a server's URL with a password

def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again: nothing listens there


def _judged(argv):
    return lambda t, url: [*argv(t), "--judge", "m", "--judge-backend", "openai", "--judge-base-url", url]


URL_SLOTS = [
    ("generate --base-url", lambda t, url: ["generate", "m", _good(t, "paper"), "--backend", "openai", "--base-url",
                                            url, "-o", t / "out.jsonl"]),
    ("meta-review --base-url", lambda t, url: ["meta-review", "m", _good(t, "paper"), _good(t, "review"), "--backend",
                                               "openai", "--base-url", url, "-o", t / "out.jsonl"]),
    ("score --judge-base-url", _judged(lambda t: ["score", _good(t, "review"), "-o", t / "out.jsonl"])),
    ("evaluate --judge-base-url", _judged(lambda t: ["evaluate", _good(t, "review"), "-o", t / "out.json"])),
    ("perturb --judge-base-url", _judged(lambda t: ["perturb", "tone-dismissive", _good(t, "review"),
                                                    "-o", t / "out.jsonl"])),
    ("judge validate --judge-base-url", _judged(lambda t: ["judge", "validate", "--task", "polarity", "--gold",
                                                           _write(t / "gold.jsonl", _jsonl([GOLD_ROW]))])),
    ("counterfactual extract --judge-base-url", _judged(lambda t: ["counterfactual", "extract", _good(t, "paper"),
                                                                   "-o", t / "out.jsonl"])),
    ("data collect --base-url", lambda t, url: ["data", "collect", "ICLR", "2024", "--base-url", url.removesuffix("/v1"),
                                                "--cache-dir", t / "cache", "-o", t / "out"]),
]


@pytest.mark.parametrize("command, argv", URL_SLOTS, ids=[slot[0] for slot in URL_SLOTS])
def test_a_url_with_a_password_is_shown_without_it_and_its_refused_port_named(tmp_path, no_model, command, argv):
    """The line used to show the password and to blame the name: "127.0.0.1 does not resolve"."""
    port = _closed_port()
    result = run_cli(argv(tmp_path, f"http://user:SECRET@127.0.0.1:{port}/v1"))
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "SECRET" not in result.output
    [error] = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert f"http://user:***@127.0.0.1:{port}/" in error and f"nothing listens on 127.0.0.1:{port} (connection " \
        "refused)" in error, error
    for path in tmp_path.rglob("*"):
        assert path.is_dir() or b"SECRET" not in path.read_bytes(), path


def test_doctor_shows_a_servers_url_without_its_password(tmp_path):
    port = _closed_port()
    result = run_cli(["doctor", "--base-url", f"http://user:SECRET@127.0.0.1:{port}/v1"])
    assert "SECRET" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("server ")]
    assert [line.split(None, 3)[3] for line in lines] == [
        f"http://user:***@127.0.0.1:{port}/version: [Errno 111] Connection refused",
        f"http://user:***@127.0.0.1:{port}/v1/models: [Errno 111] Connection refused"]


# --------------------------------------------------------------------------- an output that is an input
# Issue 26, items 4 and 5: an output that is an input (or, through a symbolic link, resolves to one), a file of an
# input folder, or a folder holding an input it would replace, is one error line, before any model loads, and
# the input is left as it was. A case builds the inputs in tmp_path and returns the command line and the input
# that the output overlaps; ``out`` gives the output's spelling of a path (the path itself, or a link to it).

def _records_folder(t: Path) -> Path:
    """A folder `praib data sample` wrote: its papers.jsonl is praib's."""
    folder = t / "sample"
    assert run_cli(["data", "sample", DEMO / "papers.jsonl", "--per-venue-year", "2", "-o", folder]).exit_code == 0
    return folder


def _saved_dataset(t: Path) -> Path:
    from praib.records import coerce_record, records_to_dataset, save_records

    return save_records(records_to_dataset([coerce_record(REVIEW, "review", "r1")], "review"), t / "saved")


def _results_folder(t: Path) -> Path:
    folder = t / "results"
    for name, text in {"results.jsonl": json.dumps(RESULT_ROW) + "\n", "run.json": "{}",
                       "results.parquet": "old results"}.items():
        _write(folder / name, text)
    return folder


def _case(argv, source):
    def build(t: Path, out):
        made = source(t)
        return argv(t, out, made), made
    return build


OUTPUT_CASES = {
    "evaluate INPUT": _case(lambda t, out, i: ["evaluate", i, "-o", out(i)], lambda t: _good(t, "review")),
    "evaluate --reference": _case(lambda t, out, i: ["evaluate", _good(t, "paper"), "--reference", i, "-o", out(i)],
                                  lambda t: _good(t, "review")),
    "evaluate merge PARTS": _case(lambda t, out, i: ["evaluate", "merge", i, "-o", out(i)],
                                  lambda t: _write(t / "part.npz", b"part")),
    "generate PAPERS": _case(lambda t, out, i: ["generate", MODEL, i, "-o", out(i)], lambda t: _good(t, "paper")),
    "generate PAPERS (a new file in the folder)": _case(
        lambda t, out, i: ["generate", MODEL, i, "-o", out(i) / "reviews.jsonl"],
        lambda t: _write(t / "papers" / "a.md", "# A paper\n\nIts text.\n").parent),
    "score INPUT": _case(lambda t, out, i: ["score", i, "--judge", MODEL, "-o", out(i)], lambda t: _good(t, "review")),
    "perturb INPUT": _case(lambda t, out, i: ["perturb", "rating-flip", i, "-o", out(i)],
                           lambda t: _good(t, "review")),
    "perturb --claims": _case(lambda t, out, i: ["perturb", "false-claims", _good(t, "review"), "--claims", i,
                                                 "-o", out(i)], lambda t: _write(t / "claims.jsonl", _line(CLAIMS))),
    "counterfactual extract PAPERS": _case(lambda t, out, i: ["counterfactual", "extract", i, "--judge", MODEL,
                                                              "-o", out(i)], lambda t: _good(t, "paper")),
    "counterfactual build --logic": _case(lambda t, out, i: ["counterfactual", "build", _good(t, "paper"), "--edits",
                                                             "spelling", "--logic", i, "-o", out(i)],
                                          lambda t: _write(t / "logic.jsonl", _line(LOGIC))),
    "counterfactual oracle VARIANTS": _case(lambda t, out, i: ["counterfactual", "oracle", _good(t, "review"), i,
                                                               "--judge", MODEL, "-o", out(i)],
                                            lambda t: _good(t, "paper")),
    "counterfactual effects ORIGINAL": _case(lambda t, out, i: ["counterfactual", "effects", i, _good(t, "paper"),
                                                                "-o", out(i)], lambda t: _good(t, "review")),
    "meta-review REVIEWS": _case(lambda t, out, i: ["meta-review", MODEL, _good(t, "paper"), i, "-o", out(i)],
                                 lambda t: _good(t, "review")),
    "robustness PERTURBED": _case(lambda t, out, i: ["robustness", _good(t, "paper"), i, "-o", out(i)],
                                  lambda t: _good(t, "review")),
    "leaderboard eras": _case(lambda t, out, i: ["leaderboard", "eras", i, "-o", out(i)], lambda t: _good(t, "review")),
    "leaderboard report (a file of DIR)": _case(
        lambda t, out, i: ["leaderboard", "report", i.parent, "-o", out(i.parent) / i.name],
        lambda t: _results_folder(t) / "results.parquet"),
    "leaderboard report --markdown (a file of DIR)": _case(
        lambda t, out, i: ["leaderboard", "report", i.parent, "-o", t / "r.html", "--markdown", out(i.parent) / i.name],
        lambda t: _results_folder(t) / "results.jsonl"),
    "leaderboard run SUBMISSION": _case(lambda t, out, i: ["leaderboard", "run", i, "--demo", "-o", out(i)],
                                        lambda t: _submission(t)),
    "data sample PAPERS (a folder holding it)": _case(
        lambda t, out, i: ["data", "sample", i, "-o", out(i.parent)], lambda t: _records_folder(t) / "papers.jsonl"),
    "data build --reviews": _case(lambda t, out, i: ["data", "build", "--reviews", i, "-o", out(i)],
                                  lambda t: _saved_dataset(t)),
    "data verify-citations REVIEWS": _case(lambda t, out, i: ["data", "verify-citations", i, "-o", out(i)],
                                           lambda t: _good(t, "review")),
    "data pdf": _case(lambda t, out, i: ["data", "pdf", i, "-o", out(i)], lambda t: _write(t / "a.pdf", b"%PDF-1.7")),
    "data import-ukp DIR": _case(lambda t, out, i: ["data", "import-ukp", i, "-o", out(i)],
                                 lambda t: _write(t / "release" / "papers" / "x.md", "x").parent.parent),
    "data export-ukp RECORDS": _case(lambda t, out, i: ["data", "export-ukp", i, "-o", out(i)],
                                     lambda t: _write(t / "records" / "papers.jsonl", _line(PAPER)).parent),
    "tables RESULTS": _case(lambda t, out, i: ["tables", i, "-o", out(i)],
                            lambda t: _write(t / "result.json", b'{"groups": [], "group_by": []}')),
    "judge validate --gold disapere:PATH": _case(
        lambda t, out, i: ["judge", "validate", "--task", "aspect", "--gold", f"disapere:{i}", "--judge", MODEL,
                           "-o", out(i)], lambda t: _write(t / "disapere.jsonl", _line(DISAPERE_REVIEW))),
}


def _linked(tmp_path: Path):
    def out(path: Path) -> Path:
        link = tmp_path / f"link-to-{path.name}"
        if not link.is_symlink():
            link.symlink_to(path.resolve())
        return link
    return out


@pytest.mark.parametrize("spelling", ["the same path", "a symbolic link to it"])
@pytest.mark.parametrize("case", OUTPUT_CASES)
def test_an_output_that_would_overwrite_an_input_is_one_error_line_and_the_input_is_kept(tmp_path, no_model, case,
                                                                                       spelling):
    args, source = OUTPUT_CASES[case](tmp_path, (lambda path: path) if spelling == "the same path"
                                      else _linked(tmp_path))
    kept = {p: p.read_bytes() for p in ([source] if source.is_file() else source.rglob("*")) if p.is_file()}
    result = run_cli(args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and (str(source) in errors[0] or str(source.parent) in errors[0]), result.output
    assert "choose another" in errors[0], result.output
    assert {p: p.read_bytes() for p in kept} == kept


# --------------------------------------------------------------------------- the net under every command

# `praib` itself (its console-script function), with `prompts list` made to raise what $RAISE names.
ENTRY_POINT = """
import os, sys
import praib.generation.prompts

def fail():
    raise {"runtime": RuntimeError("the disk caught fire\\nwhile listing"), "interrupt": KeyboardInterrupt()}[
        os.environ["RAISE"]]

praib.generation.prompts.list_prompts = fail
from praib.cli.main import main
sys.argv = ["praib", *sys.argv[1:]]
main()
"""


def run_praib(*args, raise_: str = "runtime", **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", ENTRY_POINT, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "RAISE": raise_, **env})


def test_an_unexpected_error_is_one_line_with_exit_1():
    result = run_praib("prompts", "list")
    assert result.returncode == 1
    assert result.stderr == "Error: RuntimeError: the disk caught fire (run with --debug for the traceback)\n"


@pytest.mark.parametrize("flag,env", [(["--debug"], {}), ([], {"PRAIB_DEBUG": "1"})], ids=["--debug", "PRAIB_DEBUG=1"])
def test_debug_shows_the_traceback(flag, env):
    result = run_praib(*flag, "prompts", "list", **env)
    assert result.returncode == 1
    assert result.stderr.startswith("Traceback (most recent call last):")
    assert result.stderr.rstrip().endswith("RuntimeError: the disk caught fire\nwhile listing")


def test_an_interruption_is_one_line_with_exit_130():
    result = run_praib("prompts", "list", raise_="interrupt")
    assert (result.returncode, result.stderr) == (130, "Interrupted.\n")


def test_a_reader_that_goes_away_ends_the_command_quietly():
    """`praib ... | head`: the pipe is closed before the command writes; no error, no traceback."""
    command = subprocess.Popen([sys.executable, "-m", "praib.cli.main", "prompts", "show", "extended"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    command.stdout.close()
    stderr = command.stderr.read().decode()
    assert command.wait(timeout=60) == 141
    assert "Error" not in stderr and "Traceback" not in stderr and "Exception ignored" not in stderr


def test_usage_errors_keep_exit_2_and_errors_of_commands_exit_1(tmp_path):
    assert run_cli(["evaluate", "--no-such-option"]).exit_code == 2
    missing = tmp_path / "missing.jsonl"
    result = run_cli(["evaluate", missing])
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {missing}: no such file or directory, and not a Hub dataset id; "
        "give a .jsonl, .json, .parquet or .csv file, a folder of .parquet or .jsonl files, a saved dataset, "
        "a dataset folder (DIR or DIR:config, as `praib data build` writes) or a Hub dataset id (org/name)\n")
