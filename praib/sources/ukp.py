"""The UKP release of counter-review-logic (Dycke and Gurevych, 2025) as praib records, and back.

The release's data folder holds

* ``papers/<venue>/<paper id>/``: ``paper.md`` (ar5iv-derived markdown), ``index.json`` (its line
  index, :func:`praib.perturb.logic.release_index`) and ``meta.json`` (arXiv metadata); beside the
  venue folders ``papers/meta/<venue>.json`` (each venue's review form) and ``papers/split.json``;
* ``blueprints/<paper id>.json``: the research logic of a paper;
* ``cf_datasets/<type>/<paper id>.json``: one counterfactual of a paper (``o_paper``, ``cf_paper``
  with its markdown and line index, ``changes``, ``counterfactual_type``).

:func:`read_release` makes Paper records of the originals, Paper records of the counterfactuals
(``perturbation.kind`` is the release's type; the ``blueprint_*`` types are soundness-critical, the
others soundness-neutral), logic records of the blueprints (:func:`blueprint_to_logic`), and a list of
``files``: for every JSON file, how it was formatted and what of it the records do not hold (a paper's
``meta.json``, a counterfactual's ``changes`` and metadata, the venue forms, the split).
:func:`write_release` writes the folder back; for records praib made, which have no such entry, it
builds the files from the records.

Paragraph ids follow the release's line index (:func:`praib.perturb.logic.release_paragraphs`):
``p0`` is the abstract and ``pN`` the release's "paragraph N". A blueprint was extracted from the paper
without its appendix sections and numbers only their paragraphs (:func:`blueprint_numbering`).

A blueprint's fields in a logic record (:func:`praib.perturb.logic.logic_features`):

=================================================  ===============================================
blueprint                                          logic record
=================================================  ===============================================
``paper``                                          ``paper_id``
``research_goal.{research_goal, paper_genre,       ``goal.{summary, genre, secondary_genre,
secondary_genre, confidence, reasoning}``          confidence, reasoning}``
``all_contributions[]``                            ``contributions[]``: ``claim_summary`` →
                                                   ``summary``; ``evidence`` and ``location`` →
                                                   ``evidence``; ``speculative`` Yes/No → bool
``findings_contributions``                         ``findings[]`` in that order (``rank``), with the
                                                   contribution's summary and paragraphs
``conclusions{id: ...}``                           ``conclusions[]``: ``conclusion_summary`` →
                                                   ``summary``; ``relevance_to_claim`` →
                                                   ``relevance``; ``associated_contribution_claims``
                                                   → ``contributions``
``results{id: ...}``                               ``results[]``: ``result_summary`` → ``summary``;
                                                   ``relevance_to_conclusion`` → ``relevance``;
                                                   ``associated_conclusions`` → ``conclusions``
``method``                                         ``method``: ``pipeline_summary`` → ``summary``,
                                                   ``steps[].step_number`` → ``number``
``meta.architect``                                 ``model``
evidences, coreferences                            passages: ``location`` (text) or
                                                   ``location_number`` (a number), ``span``,
                                                   ``media_summary``, and the ``paragraphs`` the
                                                   location (else the span) resolves to
anything else                                      ``blueprint_extra``: JSON, by JSON pointer
=================================================  ===============================================

An item's ``paragraphs`` are those of its evidences and coreferences, and ``findings[].conclusions``
and ``conclusions[].results`` are the reverse of the blueprint's links.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from praib.perturb.logic import RELEASE_ABSTRACT, logic_row, release_index, release_paragraphs, split_paragraphs
from praib.records import CRITICAL, NEUTRAL, RecordError, parse_json, read_json, read_text

PAPERS, BLUEPRINTS, COUNTERFACTUALS = "papers", "blueprints", "cf_datasets"
#: The file of :func:`read_release`'s ``files`` in a folder of imported records.
RELEASE_FILES = "release.jsonl"
#: The file `praib data import-ukp` writes in every output folder, beside the records it has.
IMPORT_FILES = (RELEASE_FILES,)
VENUE_FORMS, SPLIT = "meta", "split.json"

# How the release's code writes each file (json.dump with an indent, ASCII escapes, no final newline);
# used for files praib made, and for any file whose bytes none of the styles reproduces.
_INDEX_STYLE = {"indent": 4, "ascii": True, "newline": False}
_META_STYLE = {"indent": 2, "ascii": True, "newline": False}


class ReleaseError(RecordError):
    """A file of the release, or a record to write into one, that does not fit the release's format."""


# --------------------------------------------------------------------------- venues and ids

_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")


def venue_and_year(venue_id: str) -> tuple[str | None, int | None]:
    """praib's venue and year of a release venue id: ``2023.acl`` is ACL 2023, ``ICLR.cc_2025`` ICLR 2025."""
    found = _YEAR.search(venue_id)
    name = re.sub(r"\.cc(?![A-Za-z])", "", _YEAR.sub("", venue_id)).strip("._- ")
    return (name.upper() if name.islower() else name) or None, int(found.group()) if found else None


def release_paper_id(paper: dict) -> str:
    """The release's id of a paper record: its own when it has the release's ``VENUE%ID`` form, else
    ``<venue>_<year>%<paper id>`` (the release's tools split ids at '%')."""
    if "%" in paper["paper_id"]:
        return paper["paper_id"]
    venue = "_".join(str(part) for part in (paper.get("venue"), paper.get("year")) if part) or "praib"
    return f"{venue}%{paper['paper_id']}"


def _file_name(name: str, what: str) -> str:
    """``name``, checked to name one file or folder inside the release's folder."""
    if name in ("", ".", "..") or "/" in name or "\\" in name:
        raise ReleaseError(what, None, f"{name!r} cannot name a file or folder of the release")
    return name


def release_category(kind: str) -> str:
    """The release's soundness-critical counterfactuals are those made from a blueprint (``blueprint_*``)."""
    return CRITICAL if kind.startswith("blueprint_") else NEUTRAL


# --------------------------------------------------------------------------- JSON files as written

def _dump(value: Any, style: dict) -> str:
    return json.dumps(value, indent=style["indent"], ensure_ascii=style["ascii"]) + ("\n" if style["newline"] else "")


def _style_of(raw: str, value: Any) -> dict | None:
    """The json.dumps settings that give back ``raw`` byte for byte, None when none does."""
    lines = raw.split("\n", 2)
    indent = len(lines[1]) - len(lines[1].lstrip(" ")) if len(lines) > 1 else 0
    for ascii_only in (True, False):
        style = {"indent": indent or None, "ascii": ascii_only, "newline": raw.endswith("\n")}
        if _dump(value, style) == raw:
            return style
    return None


def _read_json(path: Path) -> tuple[dict, str]:
    """(value, text) of a JSON file whose value must be an object."""
    raw = read_text(path, what="JSON")
    value = read_json(path)
    if not isinstance(value, dict):
        raise ReleaseError(str(path), None, f"expected a JSON object, found {type(value).__name__}")
    return value, raw


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")


def _write_json(path: Path, value: Any, style: dict | None, default: dict = _INDEX_STYLE) -> None:
    _write_text(path, _dump(value, style or default))


def _pointer(*parts: Any) -> str:
    """An RFC 6901 JSON pointer."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


# --------------------------------------------------------------------------- paragraph numbering

def blueprint_numbering(text: str) -> tuple[list[str | None], dict[str, str]]:
    """(ids, sections): ``ids[N]`` is the paragraph id of a blueprint's "paragraph N" (None where the
    paper has no abstract for paragraph 0), and ``sections`` names the section of each numbered
    paragraph. A blueprint numbers the paper without its appendix sections (those whose name says
    "appendix"), so an appendix paragraph has an id but no blueprint number. A text not in the
    release's markdown numbers its blank-line paragraphs ``pN`` as N."""
    if not RELEASE_ABSTRACT.search(text):
        return [None] + [p.id for p in split_paragraphs(text)], {}
    index = release_index(text)
    numbered = release_paragraphs(text, index)
    ids: list[str | None] = ["p0" if numbered and numbered[0].id == "p0" else None]
    sections = {}
    number = 0
    for section, paragraphs in index["paragraphs"].items():
        for _ in paragraphs:
            number += 1
            sections[f"p{number}"] = section
            if "appendix" not in section.lower():
                ids.append(f"p{number}")
    return ids, sections


_PARAGRAPH_MENTION = re.compile(r"paragraphs?\s*(?:no\.?\s*)?(\d+(?:\s*(?:-|\u2013|to|and|,|;|&)\s*\d+)*)",
                                re.IGNORECASE)


def _numbers(location: str) -> list[int]:
    """The paragraph numbers a textual location names: "Introduction, paragraph 3", "paragraphs 4-6",
    "paragraphs 2 and 5", a bare "7"; 0 for the abstract; none for a figure or table."""
    numbers: list[int] = []
    for mention in _PARAGRAPH_MENTION.finditer(location):
        tokens = re.findall(r"\d+|-|\u2013|to", mention.group(1))
        position = 0
        while position < len(tokens):
            first = int(tokens[position])
            if position + 2 < len(tokens) and tokens[position + 1] in ("-", "\u2013", "to"):
                numbers += range(first, int(tokens[position + 2]) + 1)
                position += 3
            else:
                numbers.append(first)
                position += 1
    if numbers:
        return numbers
    if "abstract" in location.lower():
        return [0]
    if re.fullmatch(r"\s*\d+\s*", location):
        return [int(location)]
    return []


def _normalised(text: str) -> str:
    return " ".join(text.split()).casefold()


class _Paper:
    """A paper's paragraphs as a blueprint numbers them, to resolve locations and spans to ids."""

    def __init__(self, text: str):
        self.ids, self.sections = blueprint_numbering(text)
        self.texts = {p.id: p.text_of(text) for p in split_paragraphs(text)}
        self.numbers = {pid: number for number, pid in enumerate(self.ids) if pid is not None}

    def resolve(self, location: Any, span: Any) -> list[str]:
        """The ids a location names; when it names none, the first paragraph holding the span."""
        numbers = [location] if isinstance(location, int) and not isinstance(location, bool) else (
            _numbers(location) if isinstance(location, str) else [])
        found = [self.ids[n] for n in numbers if 0 <= n < len(self.ids) and self.ids[n] is not None]
        if not found and isinstance(span, str) and span.strip():
            needle = _normalised(span).rstrip(".")
            found = [next((pid for pid, body in self.texts.items() if needle in _normalised(body)), None)]
        return list(dict.fromkeys(pid for pid in found if pid is not None))

    def location(self, pid: str) -> str:
        """The textual location of a paragraph as a blueprint writes it."""
        if pid in self.numbers:
            return f"paragraph {self.numbers[pid]}"
        return self.sections.get(pid, pid)


# --------------------------------------------------------------------------- blueprints

_TEXT, _INT, _YES_NO, _IDS, _OBJECTS, _BY_ID, _OBJECT = "text", "int", "yes/no", "ids", "objects", "by-id", "object"
_LOCATION = "location"  # text or a paragraph number: :meth:`_Reader.location` sorts it


def _fits(value: Any, kind: str) -> bool:
    if kind == _LOCATION:
        return True
    if kind == _TEXT:
        return isinstance(value, str)
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool) and -2**31 <= value < 2**31
    if kind == _YES_NO:
        return value in ("Yes", "No")
    if kind == _IDS:
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    if kind == _OBJECTS:
        return isinstance(value, list) and all(isinstance(item, dict) for item in value)
    if kind == _BY_ID:
        return isinstance(value, dict) and all(isinstance(item, dict) for item in value.values())
    return isinstance(value, dict)


class _Reader:
    """Reads a blueprint's objects into typed fields; a value of another kind than its field's, and every
    undocumented key, is kept in ``extra`` under its JSON pointer."""

    def __init__(self, paper: _Paper):
        self.paper = paper
        self.extra: dict[str, Any] = {}

    def fields(self, value: dict, pointer: str, kinds: dict[str, str]) -> dict[str, Any]:
        out = {}
        for key, kind in kinds.items():
            out[key] = value.get(key)
            if key in value and not _fits(value[key], kind):
                self.extra[pointer + _pointer(key)] = value[key]
                out[key] = None
        for key in value:
            if key not in kinds:
                self.extra[pointer + _pointer(key)] = value[key]
        return out

    def location(self, holder: dict, key: str, pointer: str) -> tuple[str | None, int | None]:
        """(text, number): the release writes a location as text, or as a paragraph number."""
        value = holder.get(key)
        if isinstance(value, str):
            return value, None
        if _fits(value, _INT):
            return None, value
        if key in holder:
            self.extra[pointer + _pointer(key)] = value
        return None, None

    def passage(self, holder: dict, pointer: str, span_key: str = "span") -> dict:
        """A verbatim passage: its location, its span, and the paragraph ids they resolve to."""
        text, number = self.location(holder, "location", pointer)
        span = holder.get(span_key) if isinstance(holder.get(span_key), str) else None
        media = holder.get("media_summary") if isinstance(holder.get("media_summary"), str) else None
        return {"location": text, "location_number": number, "span": span, "media_summary": media,
                "paragraphs": self.paper.resolve(holder.get("location"), span)}

    def passages(self, items: list[dict] | None, pointer: str) -> list[dict] | None:
        if items is None:
            return None
        found = []
        for number, item in enumerate(items):
            self.fields(item, f"{pointer}/{number}", {"location": _LOCATION, "span": _TEXT, "media_summary": _TEXT})
            found.append(self.passage(item, f"{pointer}/{number}"))
        return found


def _paragraphs_of(*passage_lists: list[dict] | None) -> list[str]:
    return list(dict.fromkeys(pid for passages in passage_lists for p in passages or [] for pid in p["paragraphs"]))


def blueprint_to_logic(blueprint: dict, text: str) -> dict:
    """The logic record of a release blueprint of the paper with markdown ``text``."""
    reader = _Reader(_Paper(text))
    top = reader.fields(blueprint, "", {"paper": _TEXT, "research_goal": _OBJECT, "all_contributions": _OBJECTS,
                                        "findings_contributions": _IDS, "conclusions": _BY_ID, "results": _BY_ID,
                                        "method": _OBJECT, "meta": _OBJECT})
    goal = reader.fields(top["research_goal"] or {}, "/research_goal", {
        "research_goal": _TEXT, "paper_genre": _TEXT, "secondary_genre": _TEXT, "confidence": _TEXT,
        "reasoning": _TEXT})

    contributions = None
    if top["all_contributions"] is not None:
        contributions = []
        for number, item in enumerate(top["all_contributions"]):
            pointer = f"/all_contributions/{number}"
            found = reader.fields(item, pointer, {
                "claim_summary": _TEXT, "type": _TEXT, "evidence": _TEXT, "location": _LOCATION, "score": _INT,
                "score_explanation": _TEXT, "speculative": _YES_NO, "id": _TEXT, "coreferences": _OBJECTS})
            contributions.append({
                "id": found["id"], "summary": found["claim_summary"], "type": found["type"],
                "evidence": ({**reader.passage(item, pointer, "evidence"), "media_summary": None}
                             if {"evidence", "location"} & set(item) else None),
                "score": found["score"], "score_explanation": found["score_explanation"],
                "speculative": None if found["speculative"] is None else found["speculative"] == "Yes",
                "coreferences": reader.passages(found["coreferences"], pointer + "/coreferences")})
    by_contribution = {c["id"]: c for c in contributions or [] if c["id"] is not None}

    conclusions = []
    for key, item in (top["conclusions"] or {}).items():
        pointer = _pointer("conclusions", key)
        found = reader.fields(item, pointer, {
            "conclusion_summary": _TEXT, "id": _TEXT, "evidences": _OBJECTS, "context": _TEXT,
            "associated_contribution_claims": _IDS, "relevance_to_claim": _TEXT, "coreferences": _OBJECTS})
        if found["id"] is not None and found["id"] != key:  # the id inside disagrees with its key: keep both
            reader.extra[pointer + "/id"] = found["id"]
        evidences = reader.passages(found["evidences"], pointer + "/evidences")
        coreferences = reader.passages(found["coreferences"], pointer + "/coreferences")
        conclusions.append({"id": key, "summary": found["conclusion_summary"],
                            "paragraphs": _paragraphs_of(evidences, coreferences), "results": [],
                            "context": found["context"], "relevance": found["relevance_to_claim"],
                            "contributions": found["associated_contribution_claims"], "evidences": evidences,
                            "coreferences": coreferences})

    results = []
    for key, item in (top["results"] or {}).items():
        pointer = _pointer("results", key)
        found = reader.fields(item, pointer, {
            "result_summary": _TEXT, "evidences": _OBJECTS, "id": _TEXT, "associated_conclusions": _IDS,
            "relevance_to_conclusion": _TEXT, "coreferences": _OBJECTS})
        if found["id"] is not None and found["id"] != key:
            reader.extra[pointer + "/id"] = found["id"]
        evidences = reader.passages(found["evidences"], pointer + "/evidences")
        coreferences = reader.passages(found["coreferences"], pointer + "/coreferences")
        results.append({"id": key, "summary": found["result_summary"],
                        "paragraphs": _paragraphs_of(evidences, coreferences),
                        "relevance": found["relevance_to_conclusion"], "conclusions": found["associated_conclusions"],
                        "evidences": evidences, "coreferences": coreferences})
    for conclusion in conclusions:
        conclusion["results"] = [r["id"] for r in results if conclusion["id"] in (r["conclusions"] or [])]

    findings = []
    for rank, finding_id in enumerate(top["findings_contributions"] or [], start=1):
        contribution = by_contribution.get(finding_id) or {}
        findings.append({"id": finding_id, "rank": rank, "summary": contribution.get("summary"),
                         "paragraphs": _paragraphs_of([contribution["evidence"]] if contribution.get("evidence")
                                                      else [], contribution.get("coreferences")),
                         "conclusions": [c["id"] for c in conclusions if finding_id in (c["contributions"] or [])]})

    method = None
    if top["method"] is not None:
        found = reader.fields(top["method"], "/method", {
            "pipeline_summary": _TEXT, "relevance": _TEXT, "relevance_to_result": _TEXT, "input_artifacts": _TEXT,
            "steps": _OBJECTS})
        steps = None
        if found["steps"] is not None:
            steps = []
            for number, item in enumerate(found["steps"]):
                pointer = f"/method/steps/{number}"
                step = reader.fields(item, pointer, {
                    "step_number": _INT, "description": _TEXT, "evidences": _OBJECTS, "output": _TEXT,
                    "criticality": _TEXT, "type": _TEXT, "results": _IDS, "coreferences": _OBJECTS})
                steps.append({"number": step["step_number"], "description": step["description"],
                              "evidences": reader.passages(step["evidences"], pointer + "/evidences"),
                              "output": step["output"], "criticality": step["criticality"], "type": step["type"],
                              "results": step["results"],
                              "coreferences": reader.passages(step["coreferences"], pointer + "/coreferences")})
        method = {"summary": found["pipeline_summary"], "relevance": found["relevance"],
                  "relevance_to_result": found["relevance_to_result"], "input_artifacts": found["input_artifacts"],
                  "steps": steps}

    meta = reader.fields(top["meta"], "/meta", {"architect": _TEXT}) if top["meta"] is not None else {}
    if top["meta"] == {}:  # an empty meta object has nothing to carry it back but this
        reader.extra["/meta"] = {}
    return logic_row({
        "paper_id": top["paper"],
        "goal": {"summary": goal["research_goal"], "paragraphs": [], "genre": goal["paper_genre"],
                 "secondary_genre": goal["secondary_genre"], "confidence": goal["confidence"],
                 "reasoning": goal["reasoning"]},
        "findings": findings, "conclusions": conclusions, "results": results,
        "model": meta.get("architect"), "attempts": None,
        "contributions": contributions, "method": method,
        "blueprint_extra": json.dumps(reader.extra, ensure_ascii=False) if reader.extra else None,
    })


def _set(document: dict, pointer: str, value: Any) -> None:
    """Put ``value`` at ``pointer`` in ``document``, making the objects on the way that are missing."""
    *parents, last = [_unescape(part) for part in pointer.split("/")[1:]]
    target: Any = document
    for part in parents:
        if isinstance(target, list):
            target = target[int(part)]
        else:
            target = target.setdefault(part, {})
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value


def _without_none(pairs: list[tuple[str, Any]]) -> dict:
    return {key: value for key, value in pairs if value is not None}


def _location_json(passage: dict) -> str | int | None:
    return passage.get("location") if passage.get("location") is not None else passage.get("location_number")


def _passages_json(passages: list[dict] | None) -> list[dict] | None:
    return None if passages is None else [_without_none([
        ("location", _location_json(p)), ("span", p["span"]), ("media_summary", p["media_summary"])]) for p in passages]


def logic_to_blueprint(logic: dict, text: str, paper_id: str | None = None) -> dict:
    """The release blueprint of a logic record of the paper with markdown ``text``. A record read from a
    blueprint gives that blueprint back (equal as JSON); one praib extracted cites whole paragraphs, so
    each cited paragraph becomes an evidence whose span is the paragraph's text (a finding's first one
    its evidence, the others its coreferences), and it has no method steps."""
    paper = _Paper(text)

    def cited(pids: list[str]) -> list[dict]:
        return [{"location": paper.location(pid), "span": paper.texts[pid]} for pid in pids if pid in paper.texts]

    goal = logic.get("goal") or {}
    contributions = logic.get("contributions")
    if contributions is not None:
        all_contributions = [_without_none([
            ("claim_summary", c["summary"]), ("type", c["type"]),
            ("evidence", (c["evidence"] or {}).get("span")), ("location", _location_json(c["evidence"] or {})),
            ("score", c["score"]), ("score_explanation", c["score_explanation"]),
            ("speculative", None if c["speculative"] is None else "Yes" if c["speculative"] else "No"),
            ("id", c["id"]), ("coreferences", _passages_json(c["coreferences"]))]) for c in contributions]
    else:
        all_contributions = []
        for finding in logic["findings"]:
            pids = [pid for pid in finding["paragraphs"] if pid in paper.texts]
            all_contributions.append(_without_none([
                ("claim_summary", finding["summary"]), ("type", "finding"),
                ("evidence", paper.texts[pids[0]] if pids else None),
                ("location", paper.location(pids[0]) if pids else None), ("speculative", "No"), ("id", finding["id"]),
                # The release writes a coreference's location as the paragraph's number.
                ("coreferences", [{"location": paper.numbers.get(pid, paper.location(pid)), "span": paper.texts[pid]}
                                  for pid in pids[1:]])]))
    supported = {c["id"]: [f["id"] for f in logic["findings"] if c["id"] in f["conclusions"]]
                 for c in logic["conclusions"]}
    derived = {r["id"]: [c["id"] for c in logic["conclusions"] if r["id"] in c["results"]] for r in logic["results"]}
    conclusions = {c["id"]: _without_none([
        ("conclusion_summary", c["summary"]), ("id", c["id"]),
        ("evidences", _passages_json(c.get("evidences")) if c.get("evidences") is not None else cited(c["paragraphs"])),
        ("context", c.get("context")),
        ("associated_contribution_claims", c.get("contributions") if c.get("contributions") is not None
         else supported[c["id"]]),
        ("relevance_to_claim", c.get("relevance")), ("coreferences", _passages_json(c.get("coreferences")))])
        for c in logic["conclusions"]}
    results = {r["id"]: _without_none([
        ("result_summary", r["summary"]),
        ("evidences", _passages_json(r.get("evidences")) if r.get("evidences") is not None else cited(r["paragraphs"])),
        ("id", r["id"]),
        ("associated_conclusions", r.get("conclusions") if r.get("conclusions") is not None else derived[r["id"]]),
        ("relevance_to_conclusion", r.get("relevance")), ("coreferences", _passages_json(r.get("coreferences")))])
        for r in logic["results"]}
    method = logic.get("method")
    if method is None:
        method_json: dict = {"steps": []}  # praib extracts no method; the release's tools expect its steps
    else:
        steps = None if method["steps"] is None else [_without_none([
            ("step_number", s["number"]), ("description", s["description"]),
            ("evidences", _passages_json(s["evidences"])), ("output", s["output"]), ("criticality", s["criticality"]),
            ("type", s["type"]), ("results", s["results"]), ("coreferences", _passages_json(s["coreferences"]))])
            for s in method["steps"]]
        # The order of the release's method prompt, which the model's answer follows.
        method_json = _without_none([
            ("pipeline_summary", method["summary"]), ("relevance_to_result", method["relevance_to_result"]),
            ("input_artifacts", method["input_artifacts"]), ("relevance", method["relevance"]), ("steps", steps)])
    blueprint = _without_none([
        ("paper", paper_id or logic["paper_id"]),
        ("research_goal", _without_none([
            ("research_goal", goal.get("summary")), ("paper_genre", goal.get("genre")),
            ("secondary_genre", goal.get("secondary_genre")), ("confidence", goal.get("confidence")),
            ("reasoning", goal.get("reasoning"))])),
        ("all_contributions", all_contributions), ("findings_contributions", [f["id"] for f in logic["findings"]]),
        ("conclusions", conclusions), ("results", results), ("method", method_json),
        ("meta", {"architect": logic["model"]} if logic.get("model") else None)])
    where = f"logic of {logic['paper_id']}"
    try:
        extra = json.loads(logic.get("blueprint_extra") or "{}")
    except json.JSONDecodeError as err:
        raise ReleaseError(where, "blueprint_extra", f"not JSON ({err.msg})") from None
    if not isinstance(extra, dict):
        raise ReleaseError(where, "blueprint_extra", f"expected a JSON object, found {type(extra).__name__}")
    for pointer, value in extra.items():
        try:
            _set(blueprint, pointer, value)
        except (IndexError, ValueError, TypeError, AttributeError):
            raise ReleaseError(where, "blueprint_extra", f"{pointer} is no place in the blueprint") from None
    return blueprint


# --------------------------------------------------------------------------- reading the release

@dataclass
class Release:
    """What :func:`read_release` read: records and the files' leftovers (see the module's docstring)."""

    papers: list[dict] = field(default_factory=list)
    counterfactuals: list[dict] = field(default_factory=list)
    logic: list[dict] = field(default_factory=list)
    files: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """What was read, in words."""
        venues = Counter(p["venue"] or "?" for p in self.papers)
        types = Counter(v["perturbation"]["kind"] for v in self.counterfactuals)
        critical = sum(v["perturbation"]["category"] == CRITICAL for v in self.counterfactuals)
        papers = ", ".join(f"{venue} {n}" for venue, n in sorted(venues.items()))
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(types.items()))
        return (f"{_count(len(self.papers), 'paper folder')}{f' ({papers})' if papers else ''}, "
                f"{_count(len(self.logic), 'blueprint')} and {_count(len(self.counterfactuals), 'counterfactual')}"
                + (f" ({kinds}; {critical} soundness-critical, {len(self.counterfactuals) - critical} "
                   f"soundness-neutral)" if kinds else ""))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def describe_counts(counts: dict[str, int]) -> str:
    """What :func:`write_release` wrote, in words."""
    return (f"{_count(counts['papers'], 'paper folder')}, {_count(counts['blueprints'], 'blueprint')} and "
            f"{_count(counts['counterfactuals'], 'counterfactual')}")


def _abstract(text: str) -> str | None:
    if not RELEASE_ABSTRACT.search(text):
        return None
    return next((p.text_of(text) for p in release_paragraphs(text) if p.id == "p0"), None)


def _paper_record(paper_id: str, venue_id: str, title: Any, text: str) -> dict:
    venue, year = venue_and_year(venue_id)
    return {"paper_id": paper_id, "venue": venue, "year": year, "title": title if isinstance(title, str) else None,
            "abstract": _abstract(text), "text": text}


def read_release(folder: str | Path) -> Release:
    """Paper, counterfactual and logic records of a release data folder, and its files' leftovers."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ReleaseError(str(folder), None, "is a file, expected the release's data folder" if folder.exists()
                           else "no such folder")
    parts = [name for name in (PAPERS, BLUEPRINTS, COUNTERFACTUALS) if (folder / name).is_dir()]
    if not parts:
        raise ReleaseError(str(folder), None, f"expected the release's data folder with {PAPERS}/, {BLUEPRINTS}/ "
                                              f"or {COUNTERFACTUALS}/ inside, found none of them")
    release = Release()
    texts: dict[str, str] = {}
    if PAPERS in parts:
        _read_papers(folder, release, texts)
    if BLUEPRINTS in parts:
        for path in sorted((folder / BLUEPRINTS).glob("*.json")):
            blueprint, raw = _read_json(path)
            paper_id = blueprint.get("paper")
            if paper_id not in texts:
                raise ReleaseError(str(path), "paper", f"the paper {paper_id!r} is not in {folder / PAPERS}: a "
                                                       "blueprint's paragraphs are read from its paper")
            release.logic.append(blueprint_to_logic(blueprint, texts[paper_id]))
            release.files.append(_file(folder, path, "blueprint", paper_id, style=_style_of(raw, blueprint)))
    if COUNTERFACTUALS in parts:
        _read_counterfactuals(folder, release)
    return release


def _file(folder: Path, path: Path, role: str, paper_id: str | None = None, **kept: Any) -> dict:
    """An entry of ``files``: a file the records do not hold is ``text`` (verbatim); one they hold in part has
    its json.dumps ``style`` and the ``data`` they lack."""
    return {"path": path.relative_to(folder).as_posix(), "role": role, "paper_id": paper_id, **kept}


def _read_papers(folder: Path, release: Release, texts: dict[str, str]) -> None:
    papers = folder / PAPERS
    for path in sorted((papers / VENUE_FORMS).glob("*.json")):
        release.files.append(_file(folder, path, "venue", text=_read_json(path)[1]))
    if (papers / SPLIT).is_file():
        release.files.append(_file(folder, papers / SPLIT, "split", text=_read_json(papers / SPLIT)[1]))
    for venue in sorted(p for p in papers.iterdir() if p.is_dir() and p.name != VENUE_FORMS):
        for paper in sorted(p for p in venue.iterdir() if p.is_dir()):
            paper_id = paper.name
            text = read_text(paper / "paper.md", what="paper text")
            meta, raw = _read_json(paper / "meta.json")
            release.files.append(_file(folder, paper / "meta.json", "meta", paper_id, text=raw))
            if (paper / "index.json").exists():
                index, raw = _read_json(paper / "index.json")
                differs = index != release_index(text)
                if differs:
                    release.notes.append(f"{paper / 'index.json'}: differs from the line index of paper.md; "
                                         "kept for export, but praib numbers the paragraphs by paper.md")
                release.files.append(_file(folder, paper / "index.json", "index", paper_id,
                                           style=_style_of(raw, index), data=index if differs else None))
            texts[paper_id] = text
            release.papers.append(_paper_record(paper_id, paper_id.split("%")[0] if "%" in paper_id else venue.name,
                                                meta.get("title"), text))


def _read_counterfactuals(folder: Path, release: Release) -> None:
    originals = {p["paper_id"]: p for p in release.papers}
    seen: dict[tuple[str, str], Path] = {}
    for path in sorted((folder / COUNTERFACTUALS).glob("*/*.json")):
        value, raw = _read_json(path)
        if path.name == "meta.json":  # the dataset's own record of its type and errors, not a counterfactual
            release.files.append(_file(folder, path, "other", text=raw))
            continue
        for key, kind in (("o_paper", str), ("counterfactual_type", str), ("cf_paper", dict)):
            if not isinstance(value.get(key), kind):
                raise ReleaseError(str(path), key, f"expected a {'string' if kind is str else 'JSON object'}, "
                                                   f"found {type(value.get(key)).__name__}")
        if not isinstance(value["cf_paper"].get("md"), str):
            raise ReleaseError(str(path), "cf_paper.md", "expected the counterfactual's markdown as a string")
        paper_id, kind, text = value["o_paper"], value["counterfactual_type"], value["cf_paper"]["md"]
        if (paper_id, kind) in seen:
            raise ReleaseError(str(path), None, f"a second {kind} counterfactual of {paper_id} "
                                                f"(the first is {seen[paper_id, kind]})")
        seen[paper_id, kind] = path
        meta = value["cf_paper"].get("meta") if isinstance(value["cf_paper"].get("meta"), dict) else {}
        record = originals.get(paper_id) or _paper_record(
            paper_id, meta.get("venue") if isinstance(meta.get("venue"), str) else paper_id.split("%")[0],
            meta.get("title"), text)
        data = {**value, "cf_paper": {**value["cf_paper"], "md": None}}
        if value["cf_paper"].get("structured_md") == release_index(text):
            data["cf_paper"]["structured_md"] = None
        release.counterfactuals.append({
            "paper_id": paper_id, "venue": record["venue"], "year": record["year"], "title": record["title"],
            "abstract": _abstract(text), "text": text,
            "perturbation": {"kind": kind, "category": release_category(kind), "component": "paper",
                             "description": _describe_changes(kind, value.get("changes")), "seed": None}})
        release.files.append(_file(folder, path, "counterfactual", paper_id, style=_style_of(raw, value), data=data))


def _describe_changes(kind: str, changes: Any) -> str:
    if isinstance(changes, list) and changes and all(isinstance(change, str) for change in changes):
        return "; ".join(changes)
    return f"the UKP release's {kind} counterfactual; its changes are kept in {RELEASE_FILES}"


# --------------------------------------------------------------------------- writing the release

_ROLES = ("meta", "index", "blueprint", "counterfactual", "venue", "split", "other")
_OF_A_PAPER = ("meta", "index", "blueprint", "counterfactual")
_VERBATIM = ("meta", "venue", "split", "other")


def read_release_files(path: str | Path) -> list[dict]:
    """The ``files`` of :func:`read_release` saved as JSON lines (``release.jsonl``), each checked."""
    from praib.records import iter_jsonl

    entries = []
    for where, entry in iter_jsonl(Path(path), empty_ok=True):
        if not isinstance(entry, dict):
            raise ReleaseError(where, None, f"expected a JSON object, found {type(entry).__name__}")
        relative = entry.get("path")
        parts = PurePosixPath(relative).parts if isinstance(relative, str) else ()
        if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
            raise ReleaseError(where, "path", f"expected a path inside the release folder, found {relative!r}")
        if entry.get("role") not in _ROLES:
            raise ReleaseError(where, "role", f"expected one of {', '.join(_ROLES)}, found {entry.get('role')!r}")
        if entry["role"] in _OF_A_PAPER and not isinstance(entry.get("paper_id"), str):
            raise ReleaseError(where, "paper_id", f"expected the paper's id, found {entry.get('paper_id')!r}")
        if entry["role"] in _VERBATIM:
            if not isinstance(entry.get("text"), str):
                raise ReleaseError(where, "text", f"expected the file's text, found {entry.get('text')!r:.60}")
            entries.append(entry)
            continue
        style = entry.get("style")
        if style is not None and not (isinstance(style, dict) and set(style) == {"indent", "ascii", "newline"}
                                      and (style["indent"] is None or _fits(style["indent"], _INT))
                                      and isinstance(style["ascii"], bool) and isinstance(style["newline"], bool)):
            raise ReleaseError(where, "style", f"expected null or {{indent, ascii, newline}}, found {style!r:.60}")
        data = entry.get("data")
        if entry["role"] == "counterfactual" and not (
                isinstance(data, dict) and isinstance(data.get("cf_paper"), dict)
                and isinstance(data.get("counterfactual_type"), str)):
            raise ReleaseError(where, "data", "expected the counterfactual's JSON object (cf_paper, "
                                              "counterfactual_type, ...)")
        entries.append(entry)
    return entries


def write_release(output: str | Path, papers: list[dict], counterfactuals: list[dict] = (),
                  logic: list[dict] = (), files: list[dict] = ()) -> dict[str, int]:
    """Write records into a release data folder at ``output``; ``files`` (from :func:`read_release`)
    give back the files the records came from. Returns how many paper folders, blueprints and
    counterfactuals were written."""
    output = Path(output)
    by_role: dict[tuple[str, str | None], dict] = {}
    for entry in files:
        if entry["role"] == "counterfactual":
            by_role["counterfactual", entry["paper_id"], entry["data"]["counterfactual_type"]] = entry
        elif entry["role"] in ("meta", "index", "blueprint"):
            by_role[entry["role"], entry["paper_id"]] = entry
        elif entry["role"] != "other":  # venue forms and the split: written as they were
            _write_text(output / entry["path"], entry["text"])
    originals = {}
    for paper in papers:
        if paper.get("perturbation") is not None:
            raise ReleaseError(f"paper {paper['paper_id']}", "perturbation",
                               "is a counterfactual: give it as a counterfactual, not as an original paper")
        if paper["paper_id"] in originals:
            raise ReleaseError(f"paper {paper['paper_id']}", None, "is given twice")
        originals[paper["paper_id"]] = _write_paper(output, paper, by_role)
    for row in logic:
        if row["paper_id"] not in originals:
            raise ReleaseError(f"logic of {row['paper_id']}", None, "its paper is not among the papers: a "
                                                                   "blueprint's evidence is quoted from the paper")
        release_id, _, text, _ = originals[row["paper_id"]]
        entry = by_role.get(("blueprint", row["paper_id"]))
        path = output / (entry["path"] if entry else f"{BLUEPRINTS}/{release_id}.json")
        _write_json(path, logic_to_blueprint(row, text, release_id), entry and entry["style"])
    written: set[tuple[str, str]] = set()
    for variant in counterfactuals:
        kind = (variant.get("perturbation") or {}).get("kind")
        if kind is None:
            raise ReleaseError(f"paper {variant['paper_id']}", "perturbation", "is not a counterfactual (no "
                                                                              "perturbation kind)")
        if (variant["paper_id"], kind) in written:
            raise ReleaseError(f"paper {variant['paper_id']}", "perturbation",
                               f"a second {kind} counterfactual: the release holds one per paper and type")
        written.add((variant["paper_id"], kind))
        _write_counterfactual(output, variant, kind, by_role.get(("counterfactual", variant["paper_id"], kind)),
                              originals.get(variant["paper_id"]))
    for entry in files:  # a counterfactual dataset's own meta.json, beside the counterfactuals written of it
        if entry["role"] == "other" and (output / entry["path"]).parent.is_dir():
            _write_text(output / entry["path"], entry["text"])
    return {"papers": len(originals), "blueprints": len(logic), "counterfactuals": len(written)}


def _write_paper(output: Path, paper: dict, by_role: dict) -> tuple[str, Path, str, dict]:
    """Write a paper folder; (release id, folder, text, meta.json) of the paper."""
    if not isinstance(paper.get("text"), str):
        raise ReleaseError(f"paper {paper['paper_id']}", "text", "has no text: paper.md is the paper's text")
    release_id = _file_name(release_paper_id(paper), f"paper {paper['paper_id']}")
    meta_entry, index_entry = by_role.get(("meta", paper["paper_id"])), by_role.get(("index", paper["paper_id"]))
    folder = output / (Path(meta_entry["path"]).parent if meta_entry
                       else Path(PAPERS) / _file_name(release_id.split("%")[0], f"paper {paper['paper_id']}")
                       / release_id)
    _write_text(folder / "paper.md", paper["text"])
    if meta_entry:
        _write_text(folder / "meta.json", meta_entry["text"])
        meta = parse_json(meta_entry["text"], folder / "meta.json")
        if not isinstance(meta, dict):
            raise ReleaseError(str(folder / "meta.json"), None, f"expected a JSON object, found {type(meta).__name__}")
    else:
        meta = _without_none([("title", paper.get("title")), ("summary", paper.get("abstract"))])
        _write_json(folder / "meta.json", meta, None, _META_STYLE)
    index = index_entry["data"] if index_entry and index_entry["data"] is not None else release_index(paper["text"])
    _write_json(folder / "index.json", index, index_entry and index_entry["style"])
    return release_id, folder, paper["text"], meta


def _write_counterfactual(output: Path, variant: dict, kind: str, entry: dict | None,
                          original: tuple[str, Path, str, dict] | None) -> None:
    text = variant.get("text")
    if not isinstance(text, str):
        raise ReleaseError(f"paper {variant['paper_id']}", "text", f"the {kind} counterfactual has no text")
    if entry is not None:
        document = json.loads(json.dumps(entry["data"]))
        document["cf_paper"]["md"] = text
        if document["cf_paper"].get("structured_md") is None:
            document["cf_paper"]["structured_md"] = release_index(text)
        _write_json(output / entry["path"], document, entry["style"])
        return
    where = f"the {kind} counterfactual of {variant['paper_id']}"
    release_id = original[0] if original else _file_name(release_paper_id(variant), where)
    venue_id = _file_name(release_id.split("%")[0], where)
    folder = original[1] if original else output / PAPERS / venue_id / release_id
    meta = {"venue": venue_id, **(original[3] if original else {"title": variant.get("title")})}
    form = output / PAPERS / VENUE_FORMS / f"{folder.parent.name}.json"
    if form.is_file():  # the release's counterfactuals carry their venue's review form
        meta["venue_config"] = parse_json(read_text(form), form)
    meta.update({"oid": release_id, "media": str((folder / "media").resolve())})
    description = (variant.get("perturbation") or {}).get("description")
    document = {"o_paper": release_id, "cf_paper": {"id": release_id, "meta": meta, "md": text,
                                                    "structured_md": release_index(text)},
                "changes": [description] if description else [], "counterfactual_type": kind}
    _write_json(output / COUNTERFACTUALS / _file_name(kind, where) / f"{release_id}.json", document, None)


__all__ = ["BLUEPRINTS", "COUNTERFACTUALS", "PAPERS", "RELEASE_FILES", "Release", "ReleaseError",
           "blueprint_numbering", "blueprint_to_logic", "describe_counts", "logic_to_blueprint", "read_release",
           "read_release_files", "release_category", "release_paper_id", "venue_and_year", "write_release"]
