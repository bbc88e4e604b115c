"""Items that got no usable answer: recorded with their reason, counted, and never fatal on their own.

A long LLM stage (generating reviews, judging them, rewriting papers) sends every item on its own.
An item whose request still fails after its retries, whose answer cannot be read, or whose prompt
cannot fit the model becomes a :class:`FailedItem` in the run's :class:`FailureLog` and the run goes
on. At the end the log is written beside the output (``<output>.failures.jsonl``, see
:func:`failures_path`), its count is printed, and the command exits with :data:`EXIT_FAILED_ITEMS`.
A rerun of the same command sends only the failed and missing items: answered calls come from the
call cache.

The log also decides when to give up: ``max_failures`` (a count, or a share of the items tried so
far) and, always, a server that answered none of the first :data:`DOWN_AFTER` items is taken for
down (:class:`TooManyFailures`).
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from praib.http_retry import redact_credentials
from praib.records.atomic import write_text_atomically

__all__ = [
    "CallFailure", "FailedItem", "FailureLog", "TooManyFailures", "EXIT_FAILED_ITEMS", "DOWN_AFTER",
    "failures_path", "parse_max_failures",
]

#: Exit status of a command that finished but recorded failed items (0: all succeeded, 1: error).
EXIT_FAILED_ITEMS = 3
#: A server that answered none of this many items in a row from the start is down, not flaky.
DOWN_AFTER = 20
#: ``max_failures`` given as a share is judged once this many items were tried.
SHARE_AFTER = 20

# Error classes of a failure record (``FailedItem.error``).
SERVER_ERROR = "ServerError"            # HTTP 429 or 5xx after every try
CONNECTION_FAILED = "ConnectionFailed"  # refused, reset, name not resolved
TIMEOUT = "Timeout"
TRUNCATED_RESPONSE = "TruncatedResponse"
MALFORMED_RESPONSE = "MalformedResponse"  # a body that is not UTF-8 JSON, or JSON without an answer
REQUEST_REJECTED = "RequestRejected"      # HTTP 4xx for this request only
UNREADABLE_ANSWER = "UnreadableAnswer"    # the model answered, but not in the required form
PROMPT_TOO_LONG = "PromptTooLong"
BACKEND_EXCEPTION = "BackendException"    # an in-process engine (transformers, vLLM) raised on this item

#: Errors that mean the model gave no answer at all (as opposed to an answer that cannot be read).
NO_ANSWER = frozenset({SERVER_ERROR, CONNECTION_FAILED, TIMEOUT, TRUNCATED_RESPONSE, MALFORMED_RESPONSE,
                       BACKEND_EXCEPTION})


@dataclass(frozen=True)
class CallFailure:
    """A request that got no answer: ``error`` is its class (e.g. ``ServerError``), ``message`` says
    what came back, ``tries`` how many attempts were made. Backends return it in place of the text."""

    error: str
    message: str
    tries: int = 1

    @property
    def answered(self) -> bool:
        """Whether the model itself was reached and failed (as opposed to no answer arriving)."""
        return self.error not in NO_ANSWER


@dataclass(frozen=True)
class FailedItem:
    """One line of ``<output>.failures.jsonl``: which item of which stage failed, and why.

    ``item_id`` names the item (a paper id, a review id, a review id plus the part judged);
    ``stage`` the step that asked (the prompt template); ``raw`` the model's answer when one arrived
    but could not be read."""

    item_id: str
    stage: str
    error: str
    message: str
    tries: int
    raw: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def id_and_reason(self) -> str:
        return f"{self.item_id}: {self.error}: {self.message}"


class TooManyFailures(RuntimeError):
    """The run stopped early: the server looks down, or more items failed than ``max_failures`` allows."""


def parse_max_failures(value: str | int | float | None) -> int | float | None:
    """``--max-failures``: a whole number of items (``20``), or a share of the items tried (``0.1``)."""
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"--max-failures: expected a number of items (20) or a share (0.1), got {value!r}") from None
    if number >= 1 and number.is_integer():
        return int(number)
    if 0 < number < 1:
        return number
    raise ValueError(f"--max-failures: expected a whole number >= 1 or a share between 0 and 1, got {value!r}")


def failures_path(output: str | Path) -> Path:
    """Where the failure records of a run writing ``output`` go: ``<output>.failures.jsonl``."""
    output = Path(output)
    return output.with_name(output.name + ".failures.jsonl")


class FailureLog:
    """The failed items of one run, and the rule that stops a run that cannot succeed.

    Every item's outcome is reported once, as :meth:`succeeded` or :meth:`failed`; ``failed`` raises
    :class:`TooManyFailures` when the run should stop. Safe to share between threads and stages (a
    command that generates and judges keeps one log)."""

    def __init__(self, max_failures: int | float | None = None) -> None:
        self.max_failures = max_failures
        self.items: list[FailedItem] = []
        self.tried = 0
        self._no_answer_streak = 0  # items in a row that got no answer, from the start of the run
        self._any_answer = False
        self._lock = threading.Lock()

    def succeeded(self) -> None:
        with self._lock:
            self.tried += 1
            self._any_answer = True

    def attempted(self, answered: bool) -> None:
        """An intermediate step of an item (a draft, a retry) that the caller will settle later:
        counted only to tell whether the server answers at all."""
        with self._lock:
            if answered:
                self._any_answer = True
            elif not self._any_answer:
                self._no_answer_streak += 1
            reason = self._reason_to_stop()
        if reason:
            raise TooManyFailures(f"{reason}; answers that arrived are in the call cache: fix the cause and rerun "
                                  "the same command to resume")

    def failed(self, item: FailedItem) -> None:
        item = replace(item, message=redact_credentials(item.message))   # a server's URL, without its password
        with self._lock:
            self.tried += 1
            self.items.append(item)
            if item.error in NO_ANSWER:
                if not self._any_answer:
                    self._no_answer_streak += 1
            elif item.error != PROMPT_TOO_LONG:  # the server answered, if not as asked
                self._any_answer = True
            reason = self._reason_to_stop()
        if reason:
            raise TooManyFailures(f"{reason} (last: {item.item_id}: {item.message}); answers that arrived are in "
                                  "the call cache: fix the cause and rerun the same command to resume")

    def stop_if_none_answered(self) -> None:
        """At the end of a run (or a stage): raise :class:`TooManyFailures` when items were tried and
        not one request got an answer, however few there were; a run like that learnt nothing."""
        if self._no_answer_streak and not self._any_answer:
            first = next(item for item in self.items if item.error in NO_ANSWER)
            raise TooManyFailures(f"stopped: none of the {self._no_answer_streak} requests got an answer; is the "
                                  f"server up? (first: {first.id_and_reason()})")

    def _reason_to_stop(self) -> str | None:
        failed = len(self.items)
        if not self._any_answer and self._no_answer_streak >= DOWN_AFTER:
            return f"stopped: none of the first {self._no_answer_streak} requests got an answer; is the server up?"
        limit = self.max_failures
        if isinstance(limit, int) and failed >= limit:
            return f"stopped: {_items(failed)} failed (--max-failures {limit})"
        if isinstance(limit, float) and self.tried >= SHARE_AFTER and failed > limit * self.tried:
            return f"stopped: {failed} of {self.tried} items failed (--max-failures {limit:g})"
        return None

    def by_error(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for item in self.items:
            counts[item.error] = counts.get(item.error, 0) + 1
        return counts

    def describe(self) -> str:
        """One line: how many items failed, of which kinds, and the first one's reason."""
        if not self.items:
            return "no failed items"
        kinds = ", ".join(f"{n} {error}" for error, n in sorted(self.by_error().items()))
        return f"{len(self.items)} failed {'item' if len(self.items) == 1 else 'items'} ({kinds}); first: " \
               f"{self.items[0].id_and_reason()}"

    def write(self, output: str | Path) -> Path | None:
        """Write the records to ``<output>.failures.jsonl`` (removing a stale one when there are none)."""
        path = failures_path(output)
        if not self.items:
            path.unlink(missing_ok=True)
            return None
        write_text_atomically(path, "".join(json.dumps(item.to_dict(), ensure_ascii=False) + "\n"
                                            for item in self.items))
        return path


def read_failures(path: str | Path) -> list[FailedItem]:
    """The failure records of a ``.failures.jsonl`` file."""
    with Path(path).open(encoding="utf-8") as handle:
        return [FailedItem(**json.loads(line)) for line in handle if line.strip()]


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"
