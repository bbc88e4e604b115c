"""Research-logic extraction: a paper's goal, findings, conclusions and results, with support links.

The paper is split into numbered paragraphs (:func:`split_paragraphs`); the LLM reads them and
answers in JSON (``logic_extract.jinja``), then checks and corrects its own answer once
(``logic_refine.jinja``, the self-refinement step). The answer is validated (every paragraph id
exists, every link points to an existing item, ids are unique); an invalid answer is sent back
with the list of problems (``max_retries`` times). A paper whose answer is still invalid is left
out and recorded as a failed item in the judge's failure log, naming the paper and the problems;
the other papers go on. Every call goes through a :class:`praib.llm.judge.Judge` (its backend is usually behind
the call cache, so a rerun is free).

A paper in the UKP counter-review-logic release's markdown (:data:`RELEASE_ABSTRACT`) is numbered as
the release numbers it (:func:`release_index`): ``p0`` is the abstract, ``p1``, ``p2``, ... the
paragraphs of its line index, so that ids and the release's "paragraph N" agree. A logic record can
carry every field of the release's blueprints (:func:`logic_features`; :mod:`praib.sources.ukp`
reads and writes them).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from praib.llm.failures import UNREADABLE_ANSWER, FailedItem
from praib.records import iter_jsonl, read_parquet_rows
from praib.records.markdown import paragraph_spans
from praib.templates import TemplateSet

#: The perturbation prompts; a user folder of overrides or a user's own file stands in for a built-in name.
TEMPLATES = TemplateSet("perturbation", Path(__file__).resolve().parent / "templates", keep_trailing_newline=True)

_BLOCK = {"summary": {"type": "string"}, "paragraphs": {"type": "array", "items": {"type": "string"}}}

#: The JSON the extraction and refinement prompts must answer with.
LOGIC_JSON_SCHEMA = {
    "type": "object",
    "required": ["goal", "findings", "conclusions", "results"],
    "properties": {
        "goal": {"type": "object", "required": ["summary", "paragraphs"], "properties": _BLOCK},
        "findings": {"type": "array", "items": {
            "type": "object", "required": ["id", "summary", "paragraphs", "conclusions"],
            "properties": {"id": {"type": "string"}, **_BLOCK,
                           "conclusions": {"type": "array", "items": {"type": "string"}}}}},
        "conclusions": {"type": "array", "items": {
            "type": "object", "required": ["id", "summary", "paragraphs", "results"],
            "properties": {"id": {"type": "string"}, **_BLOCK,
                           "results": {"type": "array", "items": {"type": "string"}}}}},
        "results": {"type": "array", "items": {
            "type": "object", "required": ["id", "summary", "paragraphs"],
            "properties": {"id": {"type": "string"}, **_BLOCK}}},
    },
}


def logic_features():
    """The schema of extracted research logic as saved records (one row per paper).

    Findings are stored in rank order (most relevant to the goal first, ``rank`` 1);
    ``findings[].conclusions`` and ``conclusions[].results`` are the support links.

    The fields after the first ones hold what a UKP release blueprint says beyond them (None in logic
    praib extracted): the paper genre, every contribution claim with its score and speculative flag,
    the verbatim evidence and coreference passages of each item, the reverse links
    (``conclusions[].contributions``, ``results[].conclusions``), the method and its steps, and in
    ``blueprint_extra`` (JSON, by JSON pointer) any value the blueprint holds that these fields do not.
    """
    from datasets import Features, List, Value

    spans = List(Value("string"))
    text = Value("string")
    # A verbatim passage of the paper: where the release says it is (as text, or as a paragraph number),
    # the quote, and the paragraph ids that location resolves to.
    passage = {"location": text, "location_number": Value("int64"), "span": text, "media_summary": text,
               "paragraphs": spans}
    passages = List(passage)
    return Features({
        "paper_id": Value("string"),
        "goal": {"summary": Value("string"), "paragraphs": spans,
                 "genre": text, "secondary_genre": text, "confidence": text, "reasoning": text},
        "findings": List({"id": Value("string"), "rank": Value("int32"), "summary": Value("string"),
                          "paragraphs": spans, "conclusions": List(Value("string"))}),
        "conclusions": List({"id": Value("string"), "summary": Value("string"), "paragraphs": spans,
                             "results": List(Value("string")),
                             "context": text, "relevance": text, "contributions": spans, "evidences": passages,
                             "coreferences": passages}),
        "results": List({"id": Value("string"), "summary": Value("string"), "paragraphs": spans,
                         "relevance": text, "conclusions": spans, "evidences": passages, "coreferences": passages}),
        "model": Value("string"),
        "attempts": Value("int32"),
        "contributions": List({"id": text, "summary": text, "type": text, "evidence": passage,
                               "score": Value("int32"), "score_explanation": text, "speculative": Value("bool"),
                               "coreferences": passages}),
        "method": {"summary": text, "relevance": text, "relevance_to_result": text, "input_artifacts": text,
                   "steps": List({"number": Value("int32"), "description": text, "evidences": passages,
                                  "output": text, "criticality": text, "type": text, "results": spans,
                                  "coreferences": passages})},
        "blueprint_extra": text,
    })


#: The fields every logic record has; the others (the blueprint's) may be missing from older files.
CORE_LOGIC_FIELDS = ("paper_id", "goal", "findings", "conclusions", "results", "model", "attempts")


def logic_row(row: dict) -> dict:
    """``row`` with the optional blueprint fields it lacks set to None."""
    return {**{name: None for name in logic_features()}, **row}


class LogicError(ValueError):
    """Extracted logic that does not fit the paper (unknown paragraph ids, dangling links, ...)."""


@dataclass(frozen=True)
class Paragraph:
    id: str      # "p1", "p2", ... in reading order
    start: int   # character offsets of the paragraph in the paper text
    end: int

    def text_of(self, paper_text: str) -> str:
        return paper_text[self.start:self.end]


def split_paragraphs(text: str) -> list[Paragraph]:
    """Paragraphs are the runs of text between blank lines, numbered p1, p2, ... in order.

    A text in the UKP release's markdown (it has the release's ``###### Abstract`` line) is numbered
    as the release numbers it instead (:func:`release_paragraphs`). Offsets point into ``text``
    itself, so an edit of one paragraph leaves every other byte as it was.
    """
    if RELEASE_ABSTRACT.search(text):
        return release_paragraphs(text)
    return [Paragraph(f"p{number}", start, end) for number, (start, end) in enumerate(paragraph_spans(text), start=1)]


# --------------------------------------------------------------------------- the UKP release's line index

#: The abstract heading of the release's ar5iv-derived markdown: it marks a text in the release's format.
RELEASE_ABSTRACT = re.compile(r"^###### Abstract$", re.MULTILINE)
_SECTION, _DEEPER_SECTION = r"^## (.+)$", r"^### (.+)$"
_BLOCKS = {"figures": "FIGURE", "tables": "TABLE", "algorithms": "ALGORITHM"}
_BLOCK_START = re.compile(r"^\[(FIGURE|TABLE|ALGORITHM) .*\]$")
_HEADING_LINE = re.compile(r"^#+ .+$")


def _passages(lines: list[str], numbers: range, start: str, stop: str, closed: bool = False) -> dict[str, list[int]]:
    """``{name: [first line, last line]}`` of the passages in ``lines[numbers]`` that begin at a line
    matching ``start`` (named by it, without its '#' marks) and end before the next line matching
    ``stop``. A name seen again starts over in its first place. ``closed`` passages reach one line
    further: the marker that closes them."""
    found: dict[str, list[int]] = {}
    name = None
    for number in numbers:
        line = lines[number]
        if re.match(stop, line):
            name = None
        opening = re.match(start, line)
        if opening:
            name = re.sub(r"^#+ ", "", opening.group(0)).strip()
            found[name] = [number, number]
        elif name is not None:
            found[name][1] = number
    return {name: [first, last + 1 if closed else last] for name, (first, last) in found.items()}


def release_index(text: str) -> dict:
    """The line index the UKP release keeps beside each paper (``index.json``, and ``structured_md``
    of a counterfactual), computed from the markdown as the release computes it.

    Lines are the text split at every newline, numbered from 0, and ranges are ``[first, last]``.
    Sections start at ``## `` headings (at ``### `` ones when that gives at least three and ``## ``
    does not); subsections at deeper headings; figures, tables and algorithms are the ``[FIGURE name]`` ...
    ``[/FIGURE]`` blocks of a section (the closing marker included). A paragraph is a run of lines of a
    section outside those blocks that follows a blank line, a heading or a block's opening marker and
    ends at the next one; the release's paragraph 0 is the abstract (``###### Abstract`` up to the
    first section).
    """
    lines = text.split("\n")
    every = range(len(lines))
    title = next((number for number, line in enumerate(lines) if re.match(r"^# (.+)", line)), None)
    abstract = _passages(lines, every, RELEASE_ABSTRACT.pattern, _SECTION).get("Abstract")
    sections = _passages(lines, every, _SECTION, _SECTION)
    if len(sections) < 3:
        deeper = _passages(lines, every, _DEEPER_SECTION, _DEEPER_SECTION)
        sections = deeper if len(deeper) >= 3 else sections

    def per_section(start: str, stop: str, closed: bool = False) -> dict:
        return {name: _passages(lines, range(first, last + 1), start, stop, closed)
                for name, (first, last) in sections.items()}

    blocks = {kind: per_section(rf"^\[{marker} .*\]$", rf"\[/{marker}\]", closed=True)
              for kind, marker in _BLOCKS.items()}
    paragraphs = {}
    for name, (first, last) in sections.items():
        inside_blocks = {number for kind in _BLOCKS for block_first, block_last in blocks[kind][name].values()
                         for number in range(block_first, block_last + 1)}
        found, current = [], None  # current: the lines of the open paragraph; None until one may open
        for number in range(first + 1, last + 1):
            line = lines[number]
            boundary = line == "" or bool(_BLOCK_START.match(line)) or bool(_HEADING_LINE.match(line))
            if number in inside_blocks:
                if current:
                    found.append(current)
                current = None
            if boundary:
                if current:
                    found.append(current)
                current = []
            elif current is not None and number not in inside_blocks:
                current.append(number)
        # A paragraph still open at the section's end is not one: the release closes none there.
        paragraphs[name] = [[run[0], run[-1]] for run in found]
    return {"title": [title, title] if title is not None else None, "abstract": abstract, "sections": sections,
            "subsections": per_section(r"^###+ (.+)$", r"^##+ (.+)$"), "paragraphs": paragraphs, **blocks}


def release_paragraphs(text: str, index: dict | None = None) -> list[Paragraph]:
    """The paragraphs of a text in the UKP release's markdown, by its line ``index`` (computed when not
    given): ``p0`` the abstract (without its heading and blank lines), then ``p1``, ``p2``, ... as the
    release numbers them (in section order)."""
    index = release_index(text) if index is None else index
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def span(first: int, last: int) -> tuple[int, int]:
        return starts[first], starts[last] + len(lines[last])

    found = []
    if index.get("abstract"):
        first, last = index["abstract"]
        body = [number for number in range(first + 1, last + 1) if lines[number].strip()]
        if body:
            found.append(Paragraph("p0", *span(body[0], body[-1])))
    numbered = (lines_range for section in index["paragraphs"].values() for lines_range in section)
    found += [Paragraph(f"p{number}", *span(*lines_range)) for number, lines_range in enumerate(numbered, start=1)]
    return found


def numbered_paragraphs(text: str) -> list[dict[str, str]]:
    """``[{"id": "p1", "text": ...}, ...]``: what the prompts show the model."""
    return [{"id": p.id, "text": p.text_of(text)} for p in split_paragraphs(text)]


def validate_logic(logic: Any, paragraph_ids: Sequence[str]) -> list[str]:
    """The problems of one extracted logic (empty when it is usable)."""
    if not isinstance(logic, dict):
        return ["the answer is not a JSON object"]
    problems: list[str] = []
    known_paragraphs = set(paragraph_ids)
    ids: dict[str, set[str]] = {}
    for kind in ("findings", "conclusions", "results"):
        items = logic.get(kind)
        if not isinstance(items, list):
            problems.append(f"'{kind}' must be a list")
            ids[kind] = set()
            continue
        seen: set[str] = set()
        for index, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                problems.append(f"{kind}[{index}] needs a string 'id'")
                continue
            if item["id"] in seen:
                problems.append(f"{kind}: id {item['id']} is used twice")
            seen.add(item["id"])
        ids[kind] = seen
    if not ids["findings"] and "'findings' must be a list" not in problems:
        problems.append("no findings were extracted")
    goal = logic.get("goal")
    if not isinstance(goal, dict) or not isinstance(goal.get("summary"), str):
        problems.append("'goal' needs a 'summary'")
    links = {"findings": ("conclusions", "conclusions"), "conclusions": ("results", "results")}
    for kind, items in [("goal", [goal] if isinstance(goal, dict) else []),
                        *((k, logic.get(k) if isinstance(logic.get(k), list) else [])
                          for k in ("findings", "conclusions", "results"))]:
        for item in items:
            if not isinstance(item, dict):
                continue
            label = kind if kind == "goal" else f"{kind[:-1]} {item.get('id')}"
            spans = item.get("paragraphs")
            if not isinstance(spans, list) or not spans:
                problems.append(f"{label} cites no paragraphs")
            else:
                unknown = [p for p in spans if p not in known_paragraphs]
                if unknown:
                    problems.append(f"{label} cites paragraphs that do not exist: {', '.join(map(str, unknown))}")
            if kind in links:
                field, target = links[kind]
                linked = item.get(field)
                if not isinstance(linked, list):
                    problems.append(f"{label} needs a list '{field}'")
                    continue
                dangling = [x for x in linked if x not in ids[target]]
                if dangling:
                    problems.append(f"{label} links to {target} that do not exist: {', '.join(map(str, dangling))}")
    return problems


def _as_record(paper_id: str, logic: dict, model: str, attempts: int) -> dict:
    def spans(item: dict) -> list[str]:
        return [str(p) for p in item.get("paragraphs") or []]

    return logic_row({
        "paper_id": paper_id,
        "goal": {"summary": logic["goal"]["summary"], "paragraphs": spans(logic["goal"])},
        # The model lists findings most relevant first; the rank makes that order explicit.
        "findings": [{"id": f["id"], "rank": rank, "summary": f.get("summary") or "", "paragraphs": spans(f),
                      "conclusions": list(f["conclusions"])}
                     for rank, f in enumerate(logic["findings"], start=1)],
        "conclusions": [{"id": c["id"], "summary": c.get("summary") or "", "paragraphs": spans(c),
                         "results": list(c["results"])} for c in logic["conclusions"]],
        "results": [{"id": r["id"], "summary": r.get("summary") or "", "paragraphs": spans(r)}
                    for r in logic["results"]],
        "model": model,
        "attempts": attempts,
    })


def extract_logic(papers: Any, judge: Any, *, max_retries: int = 1, templates: str | Path | None = None,
                  progress: bool = True) -> Any:
    """Research logic of every paper (a PAPER_FEATURES Dataset) as a Dataset of :func:`logic_features`.

    One extraction call and one self-refinement call per paper; an answer that fails
    :func:`validate_logic` is sent back with its problems up to ``max_retries`` times. A paper
    whose logic is still invalid (or whose calls failed) is left out and recorded in
    ``judge.failures`` with the problems. A paper without text is a :class:`LogicError`.
    """
    rows = papers.to_list()
    paragraphs = [numbered_paragraphs(row["text"] or "") for row in rows]
    for row, paras in zip(rows, paragraphs):
        if not paras:
            raise LogicError(f"paper {row['paper_id']}: has no text to extract research logic from")
    ids = [str(row["paper_id"]) for row in rows]
    items = [{"title": row.get("title") or "", "paragraphs": paras} for row, paras in zip(rows, paragraphs)]
    drafts = _ask(judge, TEMPLATES.path("logic_extract", templates), items, ids, progress, "extracting research logic")
    refine = TEMPLATES.path("logic_refine", templates)
    answers = _ask(judge, refine, [{**item, "draft": _dump(draft.value), "problems": []}
                                   for item, draft in zip(items, drafts)], ids, progress, "refining research logic")
    attempts = [1] * len(rows)
    problems = [_problems(a, paras) for a, paras in zip(answers, paragraphs)]
    for _ in range(max_retries):
        failing = [i for i, found in enumerate(problems) if found]
        if not failing:
            break
        retried = _ask(judge, refine, [{**items[i], "draft": _dump(answers[i].value), "problems": problems[i]}
                                       for i in failing], [ids[i] for i in failing], progress,
                       "correcting research logic")
        for i, answer in zip(failing, retried):
            answers[i], attempts[i] = answer, attempts[i] + 1
            problems[i] = _problems(answer, paragraphs[i])
    records = []
    for row, answer, found, n in zip(rows, answers, problems, attempts):
        if found:
            what = "invalid" if answer.ok or answer.error == UNREADABLE_ANSWER else "missing"
            judge.failures.failed(FailedItem(
                str(row["paper_id"]), "counterfactual:logic", answer.error or UNREADABLE_ANSWER,
                f"the research logic is {what} after {n} attempt(s): {'; '.join(found)}", n, answer.raw))
        else:
            judge.failures.succeeded()
            records.append(_as_record(row["paper_id"], answer.value, judge.backend.model, n))
    return table(records, logic_features())


def _problems(answer: Any, paragraphs: Sequence[dict]) -> list[str]:
    if not answer.ok and answer.error != UNREADABLE_ANSWER:
        return [answer.reason]  # no answer arrived: nothing to validate
    return validate_logic(answer.value, [p["id"] for p in paragraphs])


def table(rows: list[dict], features: Any) -> Any:
    """A Dataset of ``rows`` with ``features``, empty or not."""
    from datasets import Dataset

    if not rows:
        return Dataset.from_dict({name: [] for name in features}, features=features)
    return Dataset.from_list(rows, features=features)


def _dump(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False) if value is not None else "(no JSON answer)"


def _ask(judge: Any, template: Path, items: list[dict], ids: list[str], progress: bool, what: str) -> list[Any]:
    """Answers that :func:`extract_logic` validates and settles itself (so not recorded as final)."""
    if progress and items:
        print(f"{what}: {len(items)} paper(s)", file=sys.stderr)
    return judge.json(template, items, LOGIC_JSON_SCHEMA, progress=progress, ids=ids, final=False) if items else []


def logic_by_paper(logic: Any) -> dict[str, dict]:
    """Logic records keyed by paper id."""
    return {row["paper_id"]: row for row in logic.to_list()}


def load_logic(source: str | Path) -> Any:
    """Logic records saved by :func:`extract_logic` or :mod:`praib.sources.ukp` (.jsonl, .parquet or a saved
    dataset directory); files written before the blueprint fields existed load with them empty."""
    path = Path(source)
    if path.suffix == ".jsonl":
        rows = list(iter_jsonl(path))
    elif path.suffix == ".parquet":
        rows = [(f"{path}: row {index}", row) for index, row in enumerate(read_parquet_rows(path))]
    elif path.is_dir():
        import datasets
        try:
            rows = [(f"{path}: record {index}", row) for index, row in enumerate(datasets.load_from_disk(str(path)))]
        except Exception as err:  # datasets raises OS, JSON, Arrow and its own errors for a folder it cannot read
            first_line = (str(err).strip().splitlines() or [""])[0]
            raise LogicError(f"{path}: not a saved dataset ({type(err).__name__}: {first_line})") from None
    else:
        raise LogicError(f"{path}: not a .jsonl or .parquet file or a saved dataset directory")
    features = logic_features()
    for where, row in rows:
        if not isinstance(row, dict):
            raise LogicError(f"{where}: expected a JSON object, found {type(row).__name__}")
        missing = [name for name in CORE_LOGIC_FIELDS if name not in row]
        if missing:
            raise LogicError(f"{where}: missing field(s) {', '.join(missing)}")
    return table([logic_row(row) for _, row in rows], features)
