"""An LLM used as a judge: the seam every judged metric goes through.

A :class:`Judge` wraps a generation backend (vLLM, OpenAI-compatible server or
transformers, usually behind :class:`praib.llm.cache.CachedBackend` so a
judged run resumes and a re-run is free) with deterministic sampling, renders
judge prompts from template files, and asks for constrained answers: one of a
set of choices, or JSON that fits a schema.

Judge templates are Jinja files rendered as the user message. The built-in ones
live in ``praib/llm/templates/``; pass a path to a ``.jinja`` file of
your own to override one (same variables).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from praib.llm.backends import Backend, GenerationRequest, SamplingConfig, generate_each, make_backend
from praib.llm.cache import CachedBackend, CallCache
from praib.llm.budget import prompt_meter, too_long
from praib.llm.failures import PROMPT_TOO_LONG, UNREADABLE_ANSWER, CallFailure, FailedItem, FailureLog
from praib.templates import TemplateSet

JUDGE_TEMPLATES = TemplateSet("judge", Path(__file__).resolve().parent / "templates", keep_trailing_newline=True)


@dataclass(frozen=True)
class Answer:
    """The judge's answer to one item: ``value`` (the text, the chosen label, the JSON value) when it
    is usable, else None with ``error`` (a :mod:`praib.llm.failures` error class) and ``reason``;
    ``raw`` is what the model said, when it said anything."""

    value: Any = None
    raw: str | None = None
    error: str | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class Judge:
    """A backend used for judging, with temperature 0 by default.

    Each item is asked on its own: an item whose call fails or whose answer cannot be read gives an
    :class:`Answer` without a value, is recorded in ``failures`` (shared with the rest of the run,
    which stops when the log says so), and the other items go on."""

    backend: Backend
    sampling: SamplingConfig = field(default_factory=lambda: SamplingConfig(max_new_tokens=512, temperature=0.0))
    failures: FailureLog = field(default_factory=FailureLog)
    #: The template used in place of a built-in one, by the built-in's name (e.g. ``{"coverage":
    #: "coverage_strict"}``, or a .jinja path): how a user changes what the judge is asked.
    templates: Mapping[str, str | Path] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_judge_templates(self.templates)

    def describe(self) -> dict[str, Any]:
        """What produced the judgements, for the results file."""
        return {
            "backend": self.backend.name,
            "model": self.backend.model,
            "model_revision": self.backend.model_revision,
            "temperature": self.sampling.temperature,
            "top_p": self.sampling.top_p,
            "max_new_tokens": self.sampling.max_new_tokens,
            "seed": self.sampling.seed,
            **({"templates": {role: str(t) for role, t in self.templates.items()}} if self.templates else {}),
        }

    def render(self, template: str | Path, **variables: Any) -> str:
        """The user message of judge template ``template`` (a built-in name or a .jinja path)."""
        return JUDGE_TEMPLATES.render(self.templates.get(str(template), template), **variables)

    def _ask(self, template: str | Path, items: Sequence[dict], ids: Sequence[str] | None, label: str | None,
             read: Callable[[str], tuple[Any, str | None]], progress: bool, final: bool,
             **constraint: Any) -> list[Answer]:
        """Ask about every item; ``read(raw)`` gives (value, None) or (None, why it cannot be read).
        With ``final`` False the answers are steps the caller settles itself (a draft it will retry):
        they are not recorded as failed items."""
        if not items:
            return []
        if ids is not None and len(ids) != len(items):
            raise ValueError(f"{len(ids)} ids for {len(items)} items")
        stage = label or f"judge:{Path(str(template)).stem}"
        requests = [GenerationRequest(messages=(("user", self.render(template, **item)),), sampling=self.sampling,
                                      template=stage, **constraint)
                    for item in items]
        answers: list[Answer | None] = [None] * len(requests)
        sent = list(range(len(requests)))
        meter = prompt_meter(self.backend)
        if meter is not None and meter.exact:
            # A prompt the model's context cannot hold is a failed item, never sent.
            sent = []
            for index, request in enumerate(requests):
                tokens = meter.count(request.messages)
                if tokens + self.sampling.max_new_tokens <= meter.context:
                    sent.append(index)
                    continue
                answers[index] = Answer(error=PROMPT_TOO_LONG,
                                        reason=too_long(tokens, self.sampling.max_new_tokens, meter.context))
                self._settle(answers[index], final, ids[index] if ids is not None else f"item {index + 1}", stage, 0)

        def arrived(position: int, reply: str | CallFailure) -> None:
            index = sent[position]
            if isinstance(reply, CallFailure):
                answer, tries = Answer(error=reply.error, reason=reply.message), reply.tries
            else:
                value, problem = read(reply)
                answer = Answer(value, reply) if problem is None else Answer(None, reply, UNREADABLE_ANSWER, problem)
                tries = 1
            answers[index] = answer
            self._settle(answer, final, ids[index] if ids is not None else f"item {index + 1}", stage, tries)

        if sent:
            generate_each(self.backend, [requests[i] for i in sent], arrived, progress=progress)
        return answers

    def _settle(self, answer: Answer, final: bool, item_id: str, stage: str, tries: int) -> None:
        """Report one item's answer to the run's failure log."""
        if not final:
            if answer.error != PROMPT_TOO_LONG:  # never sent: it says nothing of the server
                self.failures.attempted(answered=answer.raw is not None)
        elif answer.ok:
            self.failures.succeeded()
        else:
            self.failures.failed(FailedItem(item_id, stage, answer.error, answer.reason, tries, answer.raw))

    def text(self, template: str | Path, items: Sequence[dict], label: str | None = None,
             progress: bool = False, ids: Sequence[str] | None = None, final: bool = True) -> list[Answer]:
        """One free-text answer per item (an edit, a paraphrase). ``label`` is the template name the
        call cache keys the requests by (default ``judge:<template name>``); stages that kept their
        own name (``perturb:...``, ``oracle:...``) pass it so that their cached answers stay valid.
        ``ids`` name the items in failure records; ``final`` False leaves recording them to the caller."""
        return self._ask(template, items, ids, label, lambda raw: (raw, None), progress, final)

    def choose(self, template: str | Path, items: Sequence[dict], choices: Sequence[str],
               progress: bool = False, ids: Sequence[str] | None = None, final: bool = True) -> list[Answer]:
        """One of ``choices`` per item (constrained decoding where the backend supports it; an answer
        outside the set is mapped to the choice it starts with, else the first choice that appears
        in it, else it cannot be read)."""
        def read(raw: str) -> tuple[Any, str | None]:
            chosen = _closest_choice(raw, choices)
            if chosen in choices:
                return chosen, None
            return None, f"the answer {raw.strip()[:80]!r} is none of: {', '.join(choices)}"

        return self._ask(template, items, ids, None, read, progress, final, choices=tuple(choices))

    def json(self, template: str | Path, items: Sequence[dict], schema: dict, progress: bool = False,
             ids: Sequence[str] | None = None, parse: Callable[[Any], Any] | None = None,
             final: bool = True) -> list[Answer]:
        """One JSON value per item, constrained to ``schema``. ``parse`` turns the decoded value into
        what the caller needs (the Answer's value) and raises ValueError, saying why, when it cannot;
        an answer that holds no JSON value, or that ``parse`` refuses, cannot be read."""
        canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"))

        def read(raw: str) -> tuple[Any, str | None]:
            value = json_answer(raw)
            if value is None:
                return None, f"the answer is not JSON: {raw.strip()[:80]!r}"
            if parse is None:
                return value, None
            try:
                return parse(value), None
            except ValueError as err:
                return None, str(err)

        return self._ask(template, items, ids, None, read, progress, final, json_schema=canonical)


def _closest_choice(output: str, choices: Sequence[str]) -> str:
    text = output.strip()
    if text in choices:
        return text
    lowered = text.lower()
    for choice in choices:
        if lowered.startswith(choice.lower()):
            return choice
    positions = [(lowered.find(c.lower()), c) for c in choices if c.lower() in lowered]
    return min(positions)[1] if positions else text


def json_answer(output: str) -> Any | None:
    """The JSON value an answer holds (bare, fenced, or after some words), None when it holds none."""
    text = output.strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text[text.find("\n") + 1:] if "\n" in text else text
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError:
        return None
    return value


def default_cache_dir() -> Path:
    """Where LLM answers are cached unless a command says otherwise: $PRAIB_CACHE or ~/.cache/praib/calls."""
    return Path(os.environ.get("PRAIB_CACHE") or Path.home() / ".cache" / "praib" / "calls")


def check_judge_templates(templates: Mapping[str, str | Path]) -> None:
    """A ValueError naming what is wrong when ``templates`` replaces no built-in judge template or names
    a template that does not exist."""
    known = JUDGE_TEMPLATES.names()
    for role, template in templates.items():
        if role not in known:
            raise ValueError(f"no judge template {role!r} to replace; the judge's templates are {', '.join(known)}")
        JUDGE_TEMPLATES.path(template)


def make_judge(kind: str, model: str, *, max_new_tokens: int = 1024, cache_dir: Path | None = None,
               failures: FailureLog | None = None, templates: Mapping[str, str | Path] | None = None,
               **backend_options: Any) -> Judge:
    """A judge at temperature 0 behind the on-disk call cache. ``backend_options`` go to
    :func:`praib.llm.backends.make_backend` (``base_url=``, ``timeout=``, ``max_model_len=`` for a
    server, engine arguments for vLLM); ``failures`` is the run's failure log. Close it
    (``judge.backend.close()``) when done: a vLLM engine ends its processes then. ``templates``: see
    :attr:`Judge.templates`."""
    check_judge_templates(templates or {})  # before a model loads
    backend = CachedBackend(make_backend(kind, model, **backend_options), CallCache(cache_dir or default_cache_dir()))
    return Judge(backend, SamplingConfig(max_new_tokens=max_new_tokens, temperature=0.0),
                 failures if failures is not None else FailureLog(), dict(templates or {}))
