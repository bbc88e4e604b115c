"""The one test double of an LLM backend (praib.llm.backends.Backend)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence


class StubBackend:
    """Records every request and answers it through ``answers``:

    - a list: the i-th request of each ``generate`` call gets ``answers[i % len(answers)]``;
    - a mapping from the request's template to an answer (a string or a function of the request);
    - a function of the request.

    An answer may be a :class:`praib.llm.failures.CallFailure`: that request fails on its own.
    ``fail_after=n`` raises ``failure`` when a request arrives after n were answered (the run is killed
    mid-way); ``lose_output`` returns one output fewer than requests; ``delay`` sleeps that many seconds
    per ``generate`` call. Each answer is reported through ``on_answer`` as it is made.
    """

    def __init__(self, answers: Sequence[str] | Mapping[str, object] | Callable = ("",), *, name="stub",
                 model="stub-judge", model_revision="rev1", fail_after=None,
                 failure: BaseException = RuntimeError("the stub model crashed"), lose_output=False, delay=0.0):
        self.answers = answers
        self.name, self.model, self.model_revision = name, model, model_revision
        self.fail_after, self.failure, self.lose_output, self.delay = fail_after, failure, lose_output, delay
        self.requests = []  # every request answered, in order
        self.batches = []   # the requests of each generate() call

    def generate(self, requests, progress=False, on_answer=None):
        requests = list(requests)
        self.batches.append(requests)
        if self.delay:
            time.sleep(self.delay)
        outputs = []
        for position, request in enumerate(requests):
            if self.fail_after is not None and len(self.requests) >= self.fail_after:
                raise self.failure
            self.requests.append(request)
            outputs.append(self._answer(position, request))
            if on_answer is not None and not self.lose_output:
                on_answer(position, outputs[-1])
        return outputs[:-1] if self.lose_output else outputs

    def _answer(self, position, request):
        if callable(self.answers):
            return self.answers(request)
        if isinstance(self.answers, Mapping):
            answer = self.answers[request.template]
            return answer(request) if callable(answer) else answer
        return self.answers[position % len(self.answers)]

    @property
    def prompts(self):
        """The last message of every request."""
        return [request.messages[-1][1] for request in self.requests]

    @property
    def templates(self):
        return [request.template for request in self.requests]
