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
from typing import Any, Sequence

from praib.llm.backends import Backend, GenerationRequest, SamplingConfig, make_backend
from praib.llm.cache import CachedBackend, CallCache
from praib.templates import TemplateSet

JUDGE_TEMPLATES = TemplateSet("judge", Path(__file__).resolve().parent / "templates", keep_trailing_newline=True)


@dataclass
class Judge:
    """A backend used for judging, with temperature 0 by default."""

    backend: Backend
    sampling: SamplingConfig = field(default_factory=lambda: SamplingConfig(max_new_tokens=512, temperature=0.0))

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
        }

    def render(self, template: str | Path, **variables: Any) -> str:
        """The user message of judge template ``template`` (a built-in name or a .jinja path)."""
        return JUDGE_TEMPLATES.render(template, **variables)

    def _requests(self, template: str | Path, items: Sequence[dict], label: str | None = None,
                  **constraint: Any) -> list[GenerationRequest]:
        label = label or f"judge:{Path(str(template)).stem}"
        return [GenerationRequest(messages=(("user", self.render(template, **item)),), sampling=self.sampling,
                                  template=label, **constraint)
                for item in items]

    def text(self, template: str | Path, items: Sequence[dict], label: str | None = None,
             progress: bool = False) -> list[str]:
        """One free-text answer per item (an edit, a paraphrase). ``label`` is the template name the
        call cache keys the requests by (default ``judge:<template name>``); stages that kept their
        own name (``perturb:...``, ``oracle:...``) pass it so that their cached answers stay valid."""
        if not items:
            return []
        return list(self.backend.generate(self._requests(template, items, label), progress=progress))

    def choose(self, template: str | Path, items: Sequence[dict], choices: Sequence[str],
               progress: bool = False) -> list[str]:
        """One of ``choices`` per item (constrained decoding where the backend supports it;
        an answer outside the set is mapped to the choice it starts with, else the first choice
        that appears in it, else it is returned as it is so the caller can count it)."""
        outputs = self.backend.generate(self._requests(template, items, choices=tuple(choices)), progress=progress)
        return [_closest_choice(output, choices) for output in outputs]

    def json(self, template: str | Path, items: Sequence[dict], schema: dict,
             progress: bool = False) -> list[Any | None]:
        """One JSON value per item, constrained to ``schema``; None where the answer is not JSON."""
        canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"))
        outputs = self.backend.generate(self._requests(template, items, json_schema=canonical), progress=progress)
        return [_loads(output) for output in outputs]


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


def _loads(output: str) -> Any | None:
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


def make_judge(kind: str, model: str, base_url: str, max_new_tokens: int, cache_dir: Path | None) -> Judge:
    """A judge at temperature 0 behind the on-disk call cache."""
    options = {"base_url": base_url} if kind == "openai" else {}
    backend = CachedBackend(make_backend(kind, model, **options), CallCache(cache_dir or default_cache_dir()))
    return Judge(backend, SamplingConfig(max_new_tokens=max_new_tokens, temperature=0.0))
