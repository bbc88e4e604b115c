"""Counterfactual papers: soundness-critical edits of the research logic, and soundness-neutral variants.

Soundness-critical edits (counterfactual-review-logic, section 4.2) work on the extracted research
logic (:mod:`praib.perturb.logic`), on the building blocks of the most relevant finding first:

* ``finding``: the model classifies the finding as correlational, causal or conditional and
  restates it as causal (``finding-causal``), with the causal direction inverted
  (``finding-inverted``) or without its conditions (``finding-unconditional``); a finding of none
  of these types yields no counterfactual;
* ``conclusion``: the model invents a result in the paper's scope that the experiments do not
  support and adds it to a conclusion and its finding (``conclusion-extra-result``);
* ``result``: the model negates (``result-negated``) or weakens (``result-weakened``) a result
  behind a conclusion, numbers in tables included.

The edited logic is projected onto the paper as replacements of exact text spans inside the
paragraphs the edited items cite; every other byte of the paper stays as it was. A judge then checks
the desiderata (relevant, minimal, plausible). A failed attempt (no claim type, an edit that cannot
be projected, a judge rejection) moves on to the next-ranked finding, up to ``max_attempts``
findings; every attempt is recorded. Soundness-neutral variants come from
:func:`praib.perturb.registry.apply_perturbation`.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from praib.llm.failures import UNREADABLE_ANSWER, FailedItem
from praib.records import CRITICAL, NEUTRAL
from praib.perturb.logic import (TEMPLATES, extract_logic, logic_by_paper, logic_features, numbered_paragraphs,
                                split_paragraphs, table)
from praib.perturb.statistics import KindStatistics, family_statistics, kind_statistics, llm_edit_counts, stopwatch
from praib.perturb.validation import PROJECTION_BOUNDS, EditTally, check_edit

CRITICAL_FAMILIES = ("finding", "conclusion", "result")
NEUTRAL_KINDS = ("spelling", "voice", "language-errors", "layout")

_FINDING_KIND = {"correlational": "finding-causal", "causal": "finding-inverted",
                 "conditional": "finding-unconditional"}
_RESULT_KIND = {"negated": "result-negated", "weakened": "result-weakened"}

EDIT_SCHEMAS = {
    "finding": {"type": "object", "required": ["claim_type", "edited_finding"], "properties": {
        "claim_type": {"enum": ["correlational", "causal", "conditional", "none"]},
        "edited_finding": {"type": "string"}}},
    "conclusion": {"type": "object", "required": ["conclusion_id", "hypothetical_result", "edited_conclusion",
                                                  "edited_finding"], "properties": {
        "conclusion_id": {"type": "string"}, "hypothetical_result": {"type": "string"},
        "edited_conclusion": {"type": "string"}, "edited_finding": {"type": "string"}}},
    "result": {"type": "object", "required": ["result_id", "change", "edited_result"], "properties": {
        "result_id": {"type": "string"}, "change": {"enum": ["negated", "weakened"]},
        "edited_result": {"type": "string"}}},
}
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
PROJECTION_SCHEMA = {"type": "object", "required": ["reasoning", "edits"], "properties": {
    "reasoning": {"type": "string"},
    "edits": {"type": "array", "items": {"type": "object", "required": ["paragraph", "original", "replacement"],
                                         "properties": {"paragraph": {"type": "string"},
                                                        "original": {"type": "string"},
                                                        "replacement": {"type": "string"}}}}}}
VERDICT_SCHEMA = {"type": "object", "required": ["relevant", "minimal", "plausible", "explanation"], "properties": {
    "relevant": {"type": "boolean"}, "minimal": {"type": "boolean"}, "plausible": {"type": "boolean"},
    "explanation": {"type": "string"}}}


def attempt_features():
    """One row per attempt at a soundness-critical counterfactual (accepted or not)."""
    from datasets import Features, List, Value

    return Features({
        "paper_id": Value("string"),
        "family": Value("string"),       # finding | conclusion | result
        "attempt": Value("int32"),       # 1 = the most relevant finding
        "finding_id": Value("string"),
        "status": Value("string"),       # accepted | no-claim-type | invalid-edit | projection-failed | rejected
        "kind": Value("string"),         # e.g. finding-causal; None when the edit was not usable
        "problem": Value("string"),
        "edits": List({"paragraph": Value("string"), "original": Value("string"), "replacement": Value("string")}),
        "relevant": Value("bool"),
        "minimal": Value("bool"),
        "plausible": Value("bool"),
        "explanation": Value("string"),
    })


class ProjectionError(ValueError):
    """An edit that cannot be applied to the paper as an exact, local replacement."""


def apply_edits(text: str, edits: Sequence[dict], allowed: Sequence[str] | None = None) -> str:
    """``text`` with each edit's ``original`` span replaced inside its ``paragraph`` (an id of
    :func:`~praib.perturb.logic.split_paragraphs`). ``original`` must occur exactly once in the
    paragraph; with ``allowed``, only those paragraphs may change; a replacement may not split its
    paragraph, and each edited paragraph must keep the projection bounds
    (:data:`~praib.perturb.validation.PROJECTION_BOUNDS`) against the original. Everything else is
    kept byte for byte."""
    if not edits:
        raise ProjectionError("the projection proposed no edits")
    paragraphs = {p.id: p for p in split_paragraphs(text)}
    placed = []
    for edit in edits:
        pid, original, replacement = edit.get("paragraph"), edit.get("original") or "", edit.get("replacement")
        if pid not in paragraphs:
            raise ProjectionError(f"paragraph {pid} does not exist")
        if allowed is not None and pid not in allowed:
            raise ProjectionError(f"paragraph {pid} is not cited by the edited items ({', '.join(allowed)})")
        if not isinstance(replacement, str) or replacement == original:
            raise ProjectionError(f"the edit of {pid} changes nothing")
        if _BLANK_LINE.search(replacement):
            raise ProjectionError(f"the replacement in {pid} holds a blank line, which would split the paragraph")
        paragraph = paragraphs[pid]
        body = paragraph.text_of(text)
        count = body.count(original) if original else 0
        if count != 1:
            found = "is empty" if not original else f"occurs {count} times"
            raise ProjectionError(f"{pid}: the span to replace {found} (it must occur exactly once): {original[:80]!r}")
        start = paragraph.start + body.index(original)
        placed.append((start, start + len(original), replacement, pid))
    placed.sort()
    for (_, end, _, _), (start, _, _, _) in zip(placed, placed[1:]):
        if start < end:
            raise ProjectionError("two edits overlap")
    after: dict[str, str] = {}  # each edited paragraph's new text
    for start, end, replacement, pid in reversed(placed):
        paragraph = paragraphs[pid]
        body = after.get(pid, paragraph.text_of(text))
        after[pid] = body[:start - paragraph.start] + replacement + body[end - paragraph.start:]
    for pid, body in after.items():
        problem = check_edit(PROJECTION_BOUNDS, paragraphs[pid].text_of(text), body)
        if problem:
            raise ProjectionError(f"{pid} as edited: {problem}")
    for pid in sorted(after, key=lambda p: paragraphs[p].start, reverse=True):
        text = text[:paragraphs[pid].start] + after[pid] + text[paragraphs[pid].end:]
    return text


@dataclass
class CounterfactualResult:
    papers: Any      # PAPER_FEATURES Dataset: the variants (critical and neutral)
    logic: Any       # the research logic the critical edits started from
    attempts: Any    # attempt_features(): every attempt, with the judge's verdicts
    #: One per soundness-critical family and soundness-neutral kind: papers changed, edits, time.
    kinds: list[KindStatistics] = field(default_factory=list)
    #: Wall time in seconds of the parts that run several kinds at once (logic extraction, critical edits).
    stages: dict[str, float] = field(default_factory=dict)

    def save(self, output: str | Path) -> dict[str, Path]:
        """Variants to ``output``; logic and attempts beside it (``<stem>.logic.jsonl``, ``<stem>.attempts.jsonl``)."""
        from praib.records import save_records

        paths = {"papers": Path(output), "logic": logic_path(output), "attempts": attempts_path(output)}
        save_records(self.papers, paths["papers"])
        save_records(self.logic, paths["logic"])
        save_records(self.attempts, paths["attempts"])
        return paths


def logic_path(output: str | Path) -> Path:
    """Where :meth:`CounterfactualResult.save` writes the logic beside ``output``: ``<stem>.logic.jsonl``."""
    return Path(f"{_stem(output)}.logic.jsonl")


def attempts_path(output: str | Path) -> Path:
    """Where :meth:`CounterfactualResult.save` writes the attempts beside ``output``: ``<stem>.attempts.jsonl``."""
    return Path(f"{_stem(output)}.attempts.jsonl")


def _stem(output: str | Path) -> Path:
    output = Path(output)
    return output.with_suffix("") if output.suffix else output


@dataclass
class _Job:
    paper: dict
    logic: dict
    family: str
    paragraphs: list[dict]
    attempt: int = 0
    done: bool = False
    variant: dict | None = None
    log: list[dict] = field(default_factory=list)
    no_answer: Any = None  # the failed judge Answer of the latest attempt, when it got none it could read

    @property
    def name(self) -> str:
        return f"{self.paper['paper_id']}/{self.family}"

    @property
    def finding(self) -> dict:
        return self.logic["findings"][self.attempt - 1]


def _items_by_id(logic: dict, kind: str) -> dict[str, dict]:
    return {item["id"]: item for item in logic[kind]}


def _edit_context(job: _Job) -> dict:
    """What the edit prompt of one family sees: the finding, its conclusions and their results."""
    conclusions = _items_by_id(job.logic, "conclusions")
    results = _items_by_id(job.logic, "results")
    linked = [conclusions[c] for c in job.finding["conclusions"] if c in conclusions]
    linked_results = [results[r] for c in linked for r in c["results"] if r in results]
    cited = {p for item in [job.finding, *linked, *linked_results] for p in item["paragraphs"]}
    return {"goal": job.logic["goal"]["summary"], "finding": job.finding, "conclusions": linked,
            "results": list({r["id"]: r for r in linked_results}.values()),
            "paragraphs": [p for p in job.paragraphs if p["id"] in cited]}


def _changed(item: dict, edited: Any) -> dict:
    """{id, before, after} of a logic item the edit restates; it must restate it differently."""
    after = str(edited or "")
    if not after.strip():
        raise ProjectionError(f"the edit gives no new text for {item['id']}")
    if " ".join(after.split()) == " ".join(item["summary"].split()):
        raise ProjectionError(f"the edit restates {item['id']} unchanged")
    return {"id": item["id"], "before": item["summary"], "after": after}


def _interpret_edit(job: _Job, answer: Any) -> tuple[str | None, str, list[dict], list[str]]:
    """(kind, what changed in words, [{id, before, after}] of the logic, paragraphs the edit may touch)."""
    if not isinstance(answer, dict):
        raise ProjectionError("the edit answer is not a JSON object")
    finding = job.finding
    if job.family == "finding":
        kind = _FINDING_KIND.get(answer.get("claim_type"))
        if kind is None:
            return None, "the finding is neither correlational, causal nor conditional", [], []
        changed = [_changed(finding, answer.get("edited_finding"))]
        return kind, f"finding {finding['id']} ({answer['claim_type']}) restated", changed, finding["paragraphs"]
    if job.family == "conclusion":
        conclusion = _items_by_id(job.logic, "conclusions").get(answer.get("conclusion_id"))
        if conclusion is None or conclusion["id"] not in finding["conclusions"]:
            raise ProjectionError(f"conclusion {answer.get('conclusion_id')} does not support finding {finding['id']}")
        changed = [_changed(conclusion, answer.get("edited_conclusion")), _changed(finding, answer.get("edited_finding"))]
        return ("conclusion-extra-result",
                f"conclusion {conclusion['id']} and finding {finding['id']} now claim an unsupported result "
                f"({answer.get('hypothetical_result', '')})", changed,
                sorted(set(conclusion["paragraphs"]) | set(finding["paragraphs"]), key=lambda p: int(p[1:])))
    result = _items_by_id(job.logic, "results").get(answer.get("result_id"))
    supported = {r for c in _edit_context(job)["conclusions"] for r in c["results"]}
    if result is None or result["id"] not in supported:
        raise ProjectionError(f"result {answer.get('result_id')} does not support finding {finding['id']}")
    kind = _RESULT_KIND.get(answer.get("change"))
    if kind is None:
        raise ProjectionError(f"unknown result change {answer.get('change')!r}")
    changed = [_changed(result, answer.get("edited_result"))]
    return kind, f"result {result['id']} {answer['change']}", changed, result["paragraphs"]


def _describe(summary: str, edits: Sequence[dict]) -> str:
    spans = "; ".join(f"{e['paragraph']}: {e['original']!r} -> {e['replacement']!r}" for e in edits)
    return f"{summary}; edits: {spans}"


def _variant(paper: dict, text: str, kind: str, description: str, seed: int, edits: Sequence[dict]) -> dict:
    abstract = paper.get("abstract")
    for edit in edits:  # the abstract field repeats the abstract paragraph; keep them in step
        if abstract and edit["original"] in abstract:
            abstract = abstract.replace(edit["original"], edit["replacement"], 1)
    return {**paper, "text": text, "abstract": abstract,
            "perturbation": {"kind": kind, "category": CRITICAL, "component": "paper",
                             "description": description, "seed": seed}}


def critical_counterfactuals(papers: Any, logic: Any, judge: Any, *, families: Sequence[str] = CRITICAL_FAMILIES,
                             max_attempts: int = 3, seed: int = 0, templates: str | Path | None = None,
                             progress: bool = True) -> tuple[list[dict], list[dict]]:
    """(variant paper rows, attempt rows): at most one variant per paper and family.

    Attempts run in rounds: round k edits the k-th ranked finding of every paper and family still
    without an accepted variant, so each round's calls go to the backend as one batch."""
    unknown = [f for f in families if f not in CRITICAL_FAMILIES]
    if unknown:
        raise ValueError(f"unknown soundness-critical edit {', '.join(unknown)}; choose from "
                         f"{', '.join(CRITICAL_FAMILIES)}")
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    by_paper = logic_by_paper(logic)
    jobs = []
    for paper in papers.to_list():
        if paper["paper_id"] not in by_paper:
            raise ValueError(f"paper {paper['paper_id']}: no research logic was given for it")
        paragraphs = numbered_paragraphs(paper["text"] or "")
        jobs += [_Job(paper, by_paper[paper["paper_id"]], family, paragraphs) for family in families]
    for round_number in range(1, max_attempts + 1):
        active = [j for j in jobs if not j.done and round_number <= len(j.logic["findings"])]
        if not active:
            break
        if progress:
            print(f"counterfactual edits, attempt {round_number}: {len(active)} paper edit(s)", file=sys.stderr)
        for job in active:
            job.attempt = round_number
        _run_round(active, judge, seed, templates, progress)
    for job in jobs:
        # A job the judge could not answer is a failed item; one whose edits it rejected is an outcome.
        if job.no_answer is not None and not job.done:
            judge.failures.failed(FailedItem(job.name, "counterfactual:edit", job.no_answer.error,
                                             job.no_answer.reason, job.attempt, job.no_answer.raw))
        else:
            judge.failures.succeeded()
    return [j.variant for j in jobs if j.variant], [row for j in jobs for row in j.log]


def _run_round(jobs: list[_Job], judge: Any, seed: int, templates: str | Path | None, progress: bool) -> None:
    planned = []
    for family in CRITICAL_FAMILIES:
        group = [j for j in jobs if j.family == family]
        if not group:
            continue
        answers = judge.json(TEMPLATES.path(f"counterfactual_{family}", templates),
                             [_edit_context(j) for j in group], EDIT_SCHEMAS[family], progress=progress,
                             ids=[j.name for j in group], final=False)
        for job, answer in zip(group, answers):
            job.no_answer = None if answer.ok else answer
            if not answer.ok:
                _record(job, "no-answer", problem=answer.reason)
                continue
            try:
                kind, summary, changed, allowed = _interpret_edit(job, answer.value)
            except ProjectionError as err:
                _record(job, "invalid-edit", problem=str(err))
                continue
            if kind is None:
                _record(job, "no-claim-type", problem=summary)
                continue
            planned.append((job, kind, summary, changed, allowed))
    if not planned:
        return
    projections = judge.json(TEMPLATES.path("counterfactual_project", templates), [
        {"family": job.family, "changed": changed,
         "paragraphs": [p for p in job.paragraphs if p["id"] in allowed]}
        for job, _, _, changed, allowed in planned], PROJECTION_SCHEMA, progress=progress,
        ids=[job.name for job, *_ in planned], final=False)
    projected = []
    for (job, kind, summary, changed, allowed), answer in zip(planned, projections):
        if not answer.ok and answer.error != UNREADABLE_ANSWER:
            job.no_answer = answer
            _record(job, "no-answer", kind=kind, problem=answer.reason)
            continue
        found = answer.value if isinstance(answer.value, dict) else {}
        edits = [{"paragraph": str(e.get("paragraph")), "original": str(e.get("original") or ""),
                  "replacement": str(e.get("replacement") or "")}
                 for e in found.get("edits") or [] if isinstance(e, dict)]
        try:
            text = apply_edits(job.paper["text"], edits, allowed)
        except ProjectionError as err:
            _record(job, "projection-failed", kind=kind, problem=str(err), edits=edits)
            continue
        projected.append((job, kind, _describe(summary, edits), changed, edits, text))
    if not projected:
        return
    verdicts = judge.json(TEMPLATES.path("counterfactual_judge", templates), [
        {"family": job.family, "changed": changed, "description": description, "edits": edits,
         "goal": job.logic["goal"]["summary"]}
        for job, _, description, changed, edits, _ in projected], VERDICT_SCHEMA, progress=progress,
        ids=[job.name for job, *_ in projected], final=False)
    for (job, kind, description, _, edits, text), answer in zip(projected, verdicts):
        if not answer.ok and answer.error != UNREADABLE_ANSWER:
            job.no_answer = answer
            _record(job, "no-answer", kind=kind, problem=answer.reason, edits=edits)
            continue
        verdict = answer.value if isinstance(answer.value, dict) else {}
        flags = {name: verdict.get(name) is True for name in ("relevant", "minimal", "plausible")}
        explanation = str(verdict.get("explanation") or "") or None
        if all(flags.values()):
            job.variant = _variant(job.paper, text, kind, description, seed, edits)
            job.done = True
            _record(job, "accepted", kind=kind, edits=edits, explanation=explanation, **flags)
        else:
            failed = [name for name, ok in flags.items() if not ok]
            _record(job, "rejected", kind=kind, problem=f"the judge found the edit not {', '.join(failed)}",
                    edits=edits, explanation=explanation, **flags)


def _record(job: _Job, status: str, *, kind: str | None = None, problem: str | None = None,
            edits: Sequence[dict] = (), explanation: str | None = None, relevant: bool | None = None,
            minimal: bool | None = None, plausible: bool | None = None) -> None:
    job.log.append({"paper_id": job.paper["paper_id"], "family": job.family, "attempt": job.attempt,
                    "finding_id": job.finding["id"], "status": status, "kind": kind, "problem": problem,
                    "edits": list(edits), "relevant": relevant, "minimal": minimal, "plausible": plausible,
                    "explanation": explanation})


def neutral_counterfactuals(papers: Any, kinds: Sequence[str] = NEUTRAL_KINDS, *, seed: int = 0,
                            judge: Any = None, progress: bool = True, tally: EditTally | None = None,
                            statistics: list[KindStatistics] | None = None) -> list[dict]:
    """Soundness-neutral variant rows from the perturbation registry (kinds of category
    ``soundness-neutral`` only). A paper the edit left unchanged (nothing to respell, every LLM
    rewrite rejected, say) gives no variant; ``tally`` counts the LLM edits accepted and rejected;
    ``statistics``, when given, gets the :class:`~praib.perturb.statistics.KindStatistics` of each kind."""
    if not kinds:
        return []
    from praib.perturb.registry import apply_perturbation, get_perturbation

    wrong = [k for k in kinds if get_perturbation(k).category != NEUTRAL or get_perturbation(k).component != "paper"]
    if wrong:
        raise ValueError(f"{', '.join(wrong)}: not a soundness-neutral paper perturbation; see `praib perturb --list`")
    given = papers.to_list()
    originals = {row["paper_id"]: row["text"] for row in given}
    rows, unchanged = [], {}
    for kind in kinds:
        with stopwatch() as took:
            applied = apply_perturbation(kind, papers, seed=seed, judge=judge, progress=progress, tally=tally).to_list()
        if statistics is not None:
            statistics.append(kind_statistics(kind, "paper", NEUTRAL, given, applied,
                                              llm_edits=llm_edit_counts(tally, kind), seconds=took[0]))
        for row in applied:
            if row["text"] == originals[row["paper_id"]]:
                unchanged[kind] = unchanged.get(kind, 0) + 1
            else:
                rows.append(row)
    if unchanged:  # always said: a kind that changed nothing is otherwise missing without a trace
        print("soundness-neutral edits that changed nothing, left out: "
              + ", ".join(f"{kind} {n} of {len(originals)} papers" for kind, n in unchanged.items()), file=sys.stderr)
    return rows


def build_counterfactuals(papers: Any, judge: Any, *, logic: Any = None,
                          families: Sequence[str] = CRITICAL_FAMILIES, neutral_kinds: Sequence[str] = NEUTRAL_KINDS,
                          max_attempts: int = 3, seed: int = 0, templates: str | Path | None = None,
                          progress: bool = True, tally: EditTally | None = None) -> CounterfactualResult:
    """Soundness-critical and soundness-neutral variants of ``papers`` (a PAPER_FEATURES Dataset).

    ``logic`` (from :func:`~praib.perturb.logic.extract_logic`) is extracted with ``judge`` for the
    papers it lacks (all of them when not given). The variants keep their original's ``paper_id``;
    their ``perturbation`` says the category, the kind and, for critical edits, the edited paragraphs
    and spans. ``tally`` (an :class:`~praib.perturb.validation.EditTally`) counts the neutral kinds' LLM
    edits. The result's ``kinds`` and ``stages`` say what each family and kind changed and how long
    it took."""
    from datasets import concatenate_datasets

    from praib.records import records_to_dataset

    with_logic, stages = papers, {}
    if families:
        # Papers the given logic lacks (an earlier extraction failed on them) are extracted now.
        given = set(logic["paper_id"]) if logic is not None else set()
        missing = [i for i, paper_id in enumerate(papers["paper_id"]) if paper_id not in given]
        if missing:
            with stopwatch() as took:
                extracted = extract_logic(papers.select(missing), judge, templates=templates, progress=progress)
            stages["logic extraction"] = took[0]
            logic = extracted if logic is None else concatenate_datasets([logic, extracted])
        # Papers whose extraction failed are in the judge's failure log; the others go on.
        known = set(logic["paper_id"])
        with_logic = papers.select([i for i, paper_id in enumerate(papers["paper_id"]) if paper_id in known])
    variants, attempts, kinds = [], [], []
    if families:
        with stopwatch() as took:
            variants, attempts = critical_counterfactuals(with_logic, logic, judge, families=families,
                                                          max_attempts=max_attempts, seed=seed, templates=templates,
                                                          progress=progress)
        stages["soundness-critical edits"] = took[0]
        originals = papers.to_list()
        kinds += [family_statistics(family, originals, variants, attempts) for family in families]
    variants += neutral_counterfactuals(papers, neutral_kinds, seed=seed, judge=judge, progress=progress, tally=tally,
                                        statistics=kinds)
    if logic is None:
        logic = table([], logic_features())
    return CounterfactualResult(records_to_dataset(variants, "paper"), logic, table(attempts, attempt_features()),
                                kinds, stages)


def describe_attempts(attempts: Any) -> str:
    """One line per status: how the attempts went."""
    counts: dict[str, int] = {}
    for status in attempts["status"]:
        counts[status] = counts.get(status, 0) + 1
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no attempts"


__all__ = ["CounterfactualResult", "ProjectionError", "apply_edits", "attempt_features", "build_counterfactuals",
           "critical_counterfactuals", "neutral_counterfactuals", "describe_attempts"]
