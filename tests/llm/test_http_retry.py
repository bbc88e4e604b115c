"""The shared retry loop: waits worked out by hand from each policy's rule."""

import email.utils
import socket
import time
import urllib.error

import pytest
import requests

from praib.http_retry import (GaveUp, Retryable, RetryPolicy, Unreachable, call_with_retries, check_reachable,
                              redact_credentials, retry_after_seconds, split_credentials, unreachable_reason)


def failing(*failures, result="ok"):
    queue = list(failures)

    def attempt():
        if queue:
            raise queue.pop(0)
        return result
    return attempt


def test_backoff_doubles_up_to_its_cap_and_retry_after_replaces_it():
    sleeps, retries = [], []
    policy = RetryPolicy(tries=5, backoff=1.0, max_backoff=3.0)
    attempt = failing(Retryable("a"), Retryable("b"), Retryable("c", retry_after=10.0), Retryable("d"))
    result = call_with_retries(attempt, policy, sleep=sleeps.append,
                               on_retry=lambda failure, n, wait: retries.append((failure.reason, n, wait)))
    assert result == "ok"
    # 1, 2, then the server's 10 instead of min(4, 3), then min(8, 3).
    assert sleeps == [1.0, 2.0, 10.0, 3.0]
    assert retries == [("a", 1, 1.0), ("b", 2, 2.0), ("c", 3, 10.0), ("d", 4, 3.0)]


def test_at_least_takes_the_longer_wait_and_cap_cuts_it():
    sleeps = []
    policy = RetryPolicy(tries=3, backoff=2.0, retry_after="at_least", max_wait=5.0)
    call_with_retries(failing(Retryable("a", retry_after=1.0), Retryable("b", retry_after=30.0)), policy,
                      sleep=sleeps.append)
    assert sleeps == [2.0, 5.0]  # max(2, 1); max(4, 30) cut to 5


def test_gives_up_after_its_tries_with_the_last_reason():
    sleeps = []
    with pytest.raises(GaveUp, match=r"^second \(gave up after 2 tries\)$") as info:
        call_with_retries(failing(Retryable("first"), Retryable("second")), RetryPolicy(tries=2, backoff=0.5),
                          sleep=sleeps.append)
    assert sleeps == [0.5]
    assert (info.value.tries, info.value.wait, info.value.last.reason) == (2, None, "second")


def test_gives_up_rather_than_wait_longer_than_max_wait():
    sleeps = []
    policy = RetryPolicy(tries=4, backoff=1.0, max_wait=60.0, over_max_wait="give_up")
    with pytest.raises(GaveUp) as info:
        call_with_retries(failing(Retryable("slow down", retry_after=3600.0)), policy, sleep=sleeps.append)
    assert sleeps == []
    assert (info.value.tries, info.value.wait) == (1, 3600.0)


def test_other_exceptions_pass_through_at_once():
    with pytest.raises(KeyError):
        call_with_retries(failing(KeyError("x")), RetryPolicy(tries=3, backoff=1.0), sleep=pytest.fail)


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after_seconds("120") == 120.0
    assert retry_after_seconds("0.5") == 0.5
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("soon") is None
    in_a_minute = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 <= retry_after_seconds(in_a_minute) <= 60
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past


def wrapped(cause: BaseException) -> BaseException:
    """``cause`` as requests reports it: a ConnectionError raised from urllib3's error, raised from the socket's."""
    try:
        try:
            raise cause
        except OSError as err:
            raise requests.exceptions.ConnectionError("Max retries exceeded") from err
    except requests.exceptions.ConnectionError as err:
        return err


@pytest.mark.parametrize("url, error, reason", [
    ("http://no-such-host.invalid/v1", socket.gaierror(-2, "Name or service not known"),
     "no-such-host.invalid does not resolve (Name or service not known)"),
    ("https://api2.openreview.net/notes", wrapped(socket.gaierror(-3, "Temporary failure in name resolution")),
     "api2.openreview.net does not resolve (Temporary failure in name resolution)"),
    ("http://127.0.0.1:8000/v1", urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")),
     "nothing listens on 127.0.0.1:8000 (connection refused)"),
    ("http://localhost/v1", wrapped(ConnectionRefusedError(111, "Connection refused")),
     "nothing listens on localhost:80 (connection refused)"),
    # What another attempt may cure: a remote server refusing while it restarts, a timeout, a reset.
    ("http://gpu-box:8000/v1", urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")), None),
    ("http://127.0.0.1:8000/v1", urllib.error.URLError(TimeoutError("timed out")), None),
    ("http://127.0.0.1:8000/v1", wrapped(ConnectionResetError(104, "Connection reset by peer")), None),
])
def test_only_a_name_that_does_not_resolve_and_a_refusing_loopback_port_are_out_of_reach(url, error, reason):
    assert unreachable_reason(url, error) == reason


def test_check_reachable_looks_the_name_up_and_tries_a_loopback_port(monkeypatch):
    for proxy in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(proxy, raising=False)
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        check_reachable(f"http://127.0.0.1:{listening.getsockname()[1]}/v1")
        port = listening.getsockname()[1]
    with pytest.raises(Unreachable, match=rf"^nothing listens on 127\.0\.0\.1:{port} \(connection refused\)$"):
        check_reachable(f"http://127.0.0.1:{port}/v1")
    with pytest.raises(Unreachable, match=r"^no-such-host\.invalid does not resolve \("):
        check_reachable("http://no-such-host.invalid/v1")
    monkeypatch.setenv("http_proxy", "http://proxy.example:3128")  # the proxy resolves the name: not checked
    check_reachable("http://no-such-host.invalid/v1")


@pytest.mark.parametrize("text, shown", [
    ("http://user:SECRET@127.0.0.1:8000/v1", "http://user:***@127.0.0.1:8000/v1"),
    ("HTTP 500 from https://me:p%40ss@gpu.example/v1/chat/completions: busy",
     "HTTP 500 from https://me:***@gpu.example/v1/chat/completions: busy"),
    ("http://me:p@ss@host/v1", "http://me:***@host/v1"),                    # an "@" left in the password
    ("http://sk-TOKEN@host/v1", "http://***@host/v1"),                      # a token where the user name goes
    ("a http://u:one@a/x and b https://v:two@b/y?q=c@d", "a http://u:***@a/x and b https://v:***@b/y?q=c@d"),
    ("http://host/v1?to=me@example.org", "http://host/v1?to=me@example.org"),  # no userinfo: unchanged
    ("mail me@example.org", "mail me@example.org"),
])
def test_redact_credentials_hides_the_password_of_every_url_in_a_text(text, shown):
    assert redact_credentials(text) == shown


def test_split_credentials_takes_them_out_of_the_url_as_basic_authentication():
    # base64("user:SECRET") and base64("me:p@ss") by hand: dXNlcjpTRUNSRVQ= and bWU6cEBzcw==
    assert split_credentials("http://user:SECRET@127.0.0.1:8000/v1") == ("http://127.0.0.1:8000/v1",
                                                                         "Basic dXNlcjpTRUNSRVQ=")
    assert split_credentials("https://me:p%40ss@gpu.example/v1") == ("https://gpu.example/v1", "Basic bWU6cEBzcw==")
    assert split_credentials("http://127.0.0.1:8000/v1") == ("http://127.0.0.1:8000/v1", None)


def test_a_url_with_credentials_is_checked_at_its_host(monkeypatch):
    """urllib reads ``user:SECRET@127.0.0.1`` as a host name that does not resolve; the check looks at 127.0.0.1."""
    for proxy in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(proxy, raising=False)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(Unreachable, match=rf"^nothing listens on 127\.0\.0\.1:{port} \(connection refused\)$"):
        check_reachable(f"http://user:SECRET@127.0.0.1:{port}/v1")
