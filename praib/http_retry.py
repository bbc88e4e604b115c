"""One retry loop for every HTTP client in praib (the OpenAI-compatible backend, OpenReview,
the bibliographic services).

Each client sends its own request (they use different HTTP libraries and treat other answers
differently) and raises :class:`Retryable` for a failure that a later attempt can cure: 429,
5xx, a timeout, a dropped connection. :func:`call_with_retries` waits and tries again as its
:class:`RetryPolicy` says, and raises :class:`GaveUp` when the tries are spent or the server
asks for a longer wait than the caller will take.

A host name that does not resolve, and a server on this machine that refuses the connection (nothing
listens on its port), are no such failure: :func:`unreachable_reason` tells them from the others, and
:func:`check_reachable` looks for them before a library that retries on its own is let loose.

A URL may carry credentials (``http://user:password@host/v1``). :func:`redact_credentials` hides them
in any text that names such a URL (messages, logs, records), and :func:`split_credentials` takes them
out of a URL for a client that must send them as a header (urllib would take them for part of the host).

Written here rather than with ``urllib3.util.Retry``: that works only inside a ``requests``
adapter (the backend uses ``urllib``), cannot retry a malformed body, cannot give up on a long
``Retry-After`` and sleeps through ``time.sleep`` where tests inject their own clock.
"""

from __future__ import annotations

import base64
import email.utils
import ipaddress
import math
import re
import socket
import time
import urllib.request
from dataclasses import dataclass
from typing import Callable, Iterator, Literal, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

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


# A URL's scheme and its userinfo, up to the last "@" before the path, query or fragment.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^\s/?#]*)@")


def redact_credentials(text: str) -> str:
    """``text`` with the password of every URL in it shown as ``***`` (``http://user:***@host/v1``); the
    userinfo of a URL without a password (a token where the user name goes) is hidden whole."""
    def hide(match: re.Match) -> str:
        user, colon, _ = match.group("userinfo").partition(":")
        return f"{match.group('scheme')}{user + ':***' if colon else '***'}@"

    return _USERINFO.sub(hide, text)


def split_credentials(url: str) -> tuple[str, str | None]:
    """``url`` without its userinfo, and the ``Authorization`` header value (HTTP Basic) that sends it,
    or None when the URL has none."""
    parts = urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        return url, None
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode("utf-8")).decode("ascii")
    return urlunsplit(parts._replace(netloc=host)), f"Basic {token}"


class Unreachable(Exception):
    """No attempt can reach the server (see :func:`unreachable_reason`); the message says why."""


def unreachable_reason(url: str, error: BaseException) -> str | None:
    """Why ``error``, met on the way to ``url``, means that no later attempt gets there either: the host
    name does not resolve, or the host is this machine and refuses the connection (nothing listens on
    the port). None for a failure that another attempt may cure: a timeout, a dropped connection, a
    remote server refusing while it restarts."""
    parts = urlsplit(url)
    for cause in exception_chain(error):
        if isinstance(cause, socket.gaierror):
            return f"{parts.hostname} does not resolve ({cause.strerror or cause})"
        if isinstance(cause, ConnectionRefusedError) and _is_loopback(parts.hostname):
            return f"nothing listens on {parts.hostname}:{_port(parts)} (connection refused)"
    return None


def check_reachable(url: str, timeout: float = 2.0) -> None:
    """Raise :class:`Unreachable` at once when ``url`` cannot be reached (:func:`unreachable_reason`): its
    host name is looked up and, for a host on this machine, its port tried. Nothing is checked when a
    proxy carries the request (the proxy resolves the name); any other failure is left to the request."""
    parts = urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not parts.hostname or (proxy and not urllib.request.proxy_bypass(parts.hostname)):
        return
    port = _port(parts)
    try:
        socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
        if _is_loopback(parts.hostname):
            socket.create_connection((parts.hostname, port), timeout=timeout).close()
    except OSError as err:
        reason = unreachable_reason(url, err)
        if reason is not None:
            raise Unreachable(reason) from None


def exception_chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and what it wraps: its cause and context, urllib's ``reason``, and exceptions among its
    arguments (requests and urllib3 nest them so)."""
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        wrapped = [current.__cause__, current.__context__, getattr(current, "reason", None), *current.args]
        pending.extend(e for e in wrapped if isinstance(e, BaseException))


def _is_loopback(host: str | None) -> bool:
    if host is None:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _port(parts) -> int:
    return parts.port or (443 if parts.scheme == "https" else 80)
