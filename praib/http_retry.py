"""One retry loop for every HTTP client in praib (the OpenAI-compatible backend, OpenReview,
the bibliographic services).

Each client sends its own request (they use different HTTP libraries and treat other answers
differently) and raises :class:`Retryable` for a failure that a later attempt can cure: 429,
5xx, a timeout, a dropped connection. :func:`call_with_retries` waits and tries again as its
:class:`RetryPolicy` says, and raises :class:`GaveUp` when the tries are spent or the server
asks for a longer wait than the caller will take.

Written here rather than with ``urllib3.util.Retry``: that works only inside a ``requests``
adapter (the backend uses ``urllib``), cannot retry a malformed body, cannot give up on a long
``Retry-After`` and sleeps through ``time.sleep`` where tests inject their own clock.
"""

from __future__ import annotations

import email.utils
import math
import time
from dataclasses import dataclass
from typing import Callable, Literal, TypeVar

T = TypeVar("T")


class Retryable(Exception):
    """A failure that a later attempt may cure; ``retry_after`` is the server's wait in seconds."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class GaveUp(Exception):
    """No more attempts: ``tries`` were made, or the next wait (``wait``) was longer than the policy's
    ``max_wait``. ``last`` is the failure of the last attempt."""

    def __init__(self, last: Retryable, tries: int, wait: float | None = None) -> None:
        super().__init__(f"{last.reason} (gave up after {tries} tries)")
        self.last = last
        self.tries = tries
        self.wait = wait


def is_retryable_status(status: int) -> bool:
    """Whether an HTTP status is worth another attempt: 429 Too Many Requests and 5xx."""
    return status == 429 or status >= 500


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (it is either seconds or an HTTP date); None when
    absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True)
class RetryPolicy:
    """How often to try and how long to wait between tries.

    The n-th retry (n = 0, 1, ...) waits ``backoff * 2**n`` seconds, at most ``max_backoff``.
    A server's ``Retry-After`` replaces that wait (``retry_after="instead"``) or lengthens it
    (``"at_least"``: the longer of the two). A wait longer than ``max_wait`` is cut to it
    (``over_max_wait="cap"``) or not taken at all (``"give_up"``).
    """

    tries: int
    backoff: float
    max_backoff: float = math.inf
    retry_after: Literal["instead", "at_least"] = "instead"
    max_wait: float = math.inf
    over_max_wait: Literal["cap", "give_up"] = "cap"

    def wait(self, retry: int, retry_after: float | None) -> float:
        wait = min(self.backoff * 2 ** retry, self.max_backoff)
        if retry_after is not None:
            wait = retry_after if self.retry_after == "instead" else max(wait, retry_after)
        return wait


def call_with_retries(attempt: Callable[[], T], policy: RetryPolicy, *,
                      on_retry: Callable[[Retryable, int, float], None] | None = None,
                      sleep: Callable[[float], None] = time.sleep) -> T:
    """``attempt()``'s result, calling it again after each :class:`Retryable` as ``policy`` says.

    ``on_retry(failure, retry_number, wait)`` is called before each wait (retry_number counts
    from 1), e.g. to log it. Raises :class:`GaveUp` when no attempt succeeds; any other exception
    of ``attempt`` passes through at once.
    """
    tries = max(1, policy.tries)
    retry = 0
    while True:
        try:
            return attempt()
        except Retryable as failure:
            if retry + 1 >= tries:
                raise GaveUp(failure, tries) from failure
            wait = policy.wait(retry, failure.retry_after)
            if wait > policy.max_wait:
                if policy.over_max_wait == "give_up":
                    raise GaveUp(failure, retry + 1, wait) from failure
                wait = policy.max_wait
            retry += 1
            if on_retry is not None:
                on_retry(failure, retry, wait)
            sleep(wait)
