"""Test doubles shared by the judged-metric tests."""


class RecordingBackend:
    """A backend that answers from a fixed list (cycling) and records every request it gets."""

    name, model, model_revision = "stub", "stub-judge", "rev1"

    def __init__(self, answers):
        self.answers, self.requests = answers, []

    def generate(self, requests, progress=False):
        self.requests.extend(requests)
        return [self.answers[i % len(self.answers)] for i in range(len(requests))]
