"""Prompts that fit the model's context: its length, and the tokens a prompt takes.

A backend that knows its context length says so in ``context_length`` (vLLM's ``max_model_len``,
a transformers model's ``max_position_embeddings``, an OpenAI-compatible server's
``--max-model-len`` or the ``max_model_len`` its ``/v1/models`` reports). A prompt fits when its
tokens plus the answer's ``max_new_tokens`` are at most that. Tokens are counted with the model's
own tokenizer and chat template when the backend has them (:func:`find_tokenizer`), so the count is
exact; without one a prompt is estimated at 1.3 tokens a word, which is good enough to size a
paper but not to refuse a prompt.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

__all__ = ["PromptMeter", "find_context_length", "find_tokenizer", "prompt_meter", "too_long"]

#: The estimate of a text's tokens without a tokenizer (BPE tokenizers on English prose).
WORDS_TO_TOKENS = 1.3
#: Tokens a chat template adds around each message (role markers), in the estimate.
_PER_MESSAGE = 8
_WORD = re.compile(r"\S+")


def _wrapped(backend: Any):
    """The backend and every backend it wraps (a call cache, a timer, ...), outermost first."""
    seen = set()
    while backend is not None and id(backend) not in seen:
        seen.add(id(backend))
        yield backend
        backend = (getattr(backend, "backend", None) or getattr(backend, "inner", None)
                   or getattr(backend, "_backend", None))


def find_tokenizer(backend: Any) -> Any | None:
    """The tokenizer a backend (or the backend it wraps) exposes, if any; never loads a model."""
    for layer in _wrapped(backend):
        tokenizer = getattr(layer, "tokenizer", None)
        if tokenizer is not None and callable(tokenizer):
            return tokenizer
        engine = getattr(layer, "llm", None)  # vLLM's offline engine, already loaded
        if engine is not None and callable(getattr(engine, "get_tokenizer", None)):
            try:
                return engine.get_tokenizer()
            except Exception:  # noqa: BLE001 - an engine without a tokenizer: fall back to the estimate
                return None
    return None


def find_context_length(backend: Any) -> int | None:
    """The context length (tokens) a backend or the backend it wraps knows, None when none knows it."""
    for layer in _wrapped(backend):
        length = getattr(layer, "context_length", None)
        if isinstance(length, int) and length > 0:
            return length
    return None


@dataclass(frozen=True)
class PromptMeter:
    """Counts a prompt's tokens (``count(messages)``, messages as (role, content) pairs) against a
    context of ``context`` tokens; ``exact`` when the model's tokenizer and chat template count."""

    context: int
    count: Callable[[Sequence[tuple[str, str]]], int]
    exact: bool

    def room(self, messages: Sequence[tuple[str, str]], max_new_tokens: int) -> int:
        """Tokens left for more text in the prompt once ``messages`` and the answer are in."""
        return self.context - self.count(messages) - max_new_tokens


def prompt_meter(backend: Any, tokenizer: Any | None = None) -> PromptMeter | None:
    """How to measure prompts for ``backend`` (``tokenizer`` when given, else its own), or None when
    its context length is unknown."""
    context = find_context_length(backend)
    if context is None:
        return None
    tokenizer = tokenizer if tokenizer is not None else find_tokenizer(backend)
    if tokenizer is not None and getattr(tokenizer, "chat_template", None):
        def count(messages: Sequence[tuple[str, str]]) -> int:
            ids = tokenizer.apply_chat_template([{"role": r, "content": c} for r, c in messages],
                                                add_generation_prompt=True, tokenize=True)
            return len(ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids)

        return PromptMeter(context, count, exact=True)
    return PromptMeter(context, _estimate, exact=False)


def _estimate(messages: Sequence[tuple[str, str]]) -> int:
    return sum(math.ceil(WORDS_TO_TOKENS * len(_WORD.findall(content))) + _PER_MESSAGE for _, content in messages)


def too_long(prompt_tokens: int, max_new_tokens: int, context: int, what: str = "the prompt") -> str:
    """The reason a prompt is refused, with its sizes."""
    return (f"{what} takes {prompt_tokens} tokens and the answer up to {max_new_tokens}: "
            f"{prompt_tokens + max_new_tokens} > the model's context of {context} tokens")
