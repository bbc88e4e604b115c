"""Offline is recognised at once: HF_HUB_OFFLINE=1, a host name that does not resolve and a loopback port
nothing listens on fail at once (no retry back-off) with one line saying what to do, where the clients used to
retry for half a minute; library log lines are printed once."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time

import datasets
import huggingface_hub.constants
import pytest
from click.testing import CliRunner

from praib.cli.main import main
from tests.paths import DEMO, FIXTURES as FIXTURES_ROOT

HUB_ID = "praib-org/no-such-reviews"
#: "At once": no retry back-off. These commands fail in about 1-1.9 s here, module loading included, where the
#: retries used to take 24 s (a Hub id) to over a minute (OpenReview); the bound leaves a loaded CI machine room,
#: as a timing target of its own belongs in a benchmark, not in a test.
AT_ONCE = 10


def closed_loopback_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again: nothing listens there


def timed(*args) -> tuple[list[str], int, float]:
    """The output lines and exit status of ``praib ARGS`` and the seconds it took (the modules loaded)."""
    start = time.monotonic()
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.output.splitlines(), result.exit_code, time.monotonic() - start


@pytest.fixture
def online(monkeypatch):
    """The Hub clients as they are without HF_HUB_OFFLINE (the tests' conftest sets it), and no proxy."""
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    for proxy in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(proxy, raising=False)

    def hub_at(endpoint: str) -> None:
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", endpoint)
        monkeypatch.setattr(datasets.config, "HF_ENDPOINT", endpoint)
    return hub_at


def test_a_hub_id_with_hf_hub_offline_fails_at_once_saying_what_to_do():
    assert datasets.config.HF_HUB_OFFLINE  # conftest's HF_HUB_OFFLINE=1 and HF_DATASETS_OFFLINE=1
    lines, status, seconds = timed("evaluate", HUB_ID)
    assert status == 1 and seconds < AT_ONCE
    assert lines == [f"Error: {HUB_ID}: could not load the dataset: not a local file or folder, and not in the Hugging "
                     "Face cache (HF_HUB_OFFLINE and HF_DATASETS_OFFLINE set, so nothing is downloaded); give a local "
                     "path, or unset HF_HUB_OFFLINE and HF_DATASETS_OFFLINE"]


def test_a_hub_submission_with_hf_hub_offline_fails_at_once_saying_what_to_do(tmp_path):
    lines, status, seconds = timed("leaderboard", "run", HUB_ID, "--demo", "-o", tmp_path / "results")
    assert status == 1 and seconds < AT_ONCE
    assert lines == [f"Error: {HUB_ID}: could not download manifest.json: not a local file or folder, and not in the "
                     "Hugging Face cache (HF_HUB_OFFLINE and HF_DATASETS_OFFLINE set, so nothing is downloaded); give "
                     "a local path, or unset HF_HUB_OFFLINE and HF_DATASETS_OFFLINE"]


@pytest.mark.parametrize("endpoint, reason", [
    ("https://no-such-host.invalid", "no-such-host.invalid does not resolve ("),
    ("http://127.0.0.1:{port}", "nothing listens on 127.0.0.1:{port} (connection refused)"),
], ids=["unresolvable", "loopback-refused"])
def test_a_hub_id_with_the_hub_out_of_reach_fails_at_once_saying_what_to_do(online, endpoint, reason):
    port = closed_loopback_port()
    online(endpoint.format(port=port))
    lines, status, seconds = timed("evaluate", HUB_ID)
    assert status == 1 and seconds < AT_ONCE
    assert len(lines) == 1
    assert lines[0].startswith(f"Error: {HUB_ID}: could not load the dataset: not a local file or folder, and the "
                               f"Hub cannot be reached: {reason.format(port=port)}")
    assert lines[0].endswith("; give a local path, or set HF_HUB_OFFLINE=1 to read a copy in the Hugging Face cache")


@pytest.mark.parametrize("base_url, reason", [
    ("http://no-such-host.invalid", "no-such-host.invalid does not resolve ("),
    ("http://127.0.0.1:{port}", "nothing listens on 127.0.0.1:{port} (connection refused)"),
], ids=["unresolvable", "loopback-refused"])
@pytest.mark.parametrize("credentials", ["", "user:SECRET@"], ids=["plain", "with credentials"])
def test_data_collect_out_of_reach_fails_at_once_saying_what_to_do(tmp_path, base_url, reason, credentials):
    port = closed_loopback_port()
    url = base_url.format(port=port).replace("://", f"://{credentials}")
    lines, status, seconds = timed("data", "collect", "ICLR", 2024, "-o", tmp_path / "records", "--cache-dir",
                                   tmp_path / "cache", "--base-url", url, "--no-progress")
    assert status == 1 and seconds < AT_ONCE
    assert len(lines) == 1
    shown = url.replace("SECRET", "***")
    assert lines[0].startswith(f"Error: {shown}/notes: cannot reach OpenReview: {reason.format(port=port)}")
    assert lines[0].endswith("; check the network and --base-url, or rebuild the records from the cache with --offline")
    assert not (tmp_path / "records").exists()


@pytest.mark.parametrize("credentials", ["", "user:SECRET@"], ids=["plain", "with credentials"])
def test_a_judge_with_no_server_fails_at_once_saying_what_to_do(tmp_path, credentials):
    """With credentials in the URL, the line said "127.0.0.1 does not resolve" and showed the password."""
    port = closed_loopback_port()
    lines, status, seconds = timed("score", DEMO / "reviews.jsonl", "--judge", "judge-model", "--judge-backend",
                                   "openai", "--judge-base-url", f"http://{credentials}127.0.0.1:{port}/v1",
                                   "--no-progress", "-o", tmp_path / "judgements.jsonl")
    assert status == 1 and seconds < AT_ONCE
    shown = credentials.replace("SECRET", "***")
    assert lines == [f"Error: cannot reach http://{shown}127.0.0.1:{port}/v1/chat/completions: nothing listens on "
                     f"127.0.0.1:{port} (connection refused); start the server, or give the address of a running one"]
    assert not (tmp_path / "judgements.jsonl").exists()



@pytest.fixture
def services_out_of_reach(monkeypatch):
    """Crossref, OpenAlex and DBLP where no request reaches them, whatever this machine's network: a loopback
    port nothing listens on, and names that do not resolve; no proxy."""
    from praib.sources.verification import SERVICES

    for proxy in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(proxy, raising=False)
    port = closed_loopback_port()
    addresses = {"crossref": f"http://127.0.0.1:{port}", "openalex": "http://no-such-host.invalid",
                 "dblp": "https://dblp.no-such-host.invalid"}
    for name, address in addresses.items():
        monkeypatch.setattr(SERVICES[name], "default_base_url", address)
    return port


CITED = FIXTURES_ROOT / "verification"


@pytest.mark.parametrize("command", [["evaluate", CITED / "reviews.jsonl", "--verify-citations"],
                                     ["evaluate", CITED / "reviews.jsonl", "--judge", "no-such-org/judge",
                                      "--verify-citations"],
                                     ["data", "verify-citations", CITED / "reviews.jsonl", "--services"]],
                         ids=["evaluate", "evaluate --judge (before the judge loads)", "data verify-citations"])
def test_citation_services_out_of_reach_stop_at_once_saying_what_to_do(tmp_path, services_out_of_reach, command):
    """Offline, the 8 references of the fixture each waited out 4 tries at every service: minutes, and a
    warning of several lines per reference and service, then exit 0."""
    port = services_out_of_reach
    lines, status, seconds = timed(*command, "crossref,openalex,dblp", "--cache-dir", tmp_path / "cache",
                                   "-o", tmp_path / "out.json", "--no-progress")
    assert status == 1 and seconds < AT_ONCE
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"Error: no citation service can be reached (crossref: nothing listens on "
                               f"127.0.0.1:{port} (connection refused); openalex: no-such-host.invalid does not "
                               "resolve (")
    assert lines[0].endswith("; check the network, or verify offline with --bibliography FILE")
    assert not (tmp_path / "out.json").exists()


def test_citation_services_out_of_reach_leave_a_bibliography_to_verify(tmp_path, services_out_of_reach, caplog):
    lines, status, seconds = timed("data", "verify-citations", CITED / "reviews.jsonl", "--services",
                                   "crossref,openalex,dblp", "--bibliography", CITED / "references.bib",
                                   "--cache-dir", tmp_path / "cache", "-o", tmp_path / "checks.jsonl",
                                   "--no-progress")
    assert status == 0 and seconds < AT_ONCE
    [warning] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warning.startswith("cannot reach crossref, openalex, dblp (crossref: nothing listens on ")
    # By hand: of the 8 references, only h2's "When does label smoothing help?" (Müller et al., 2019) is in
    # references.bib; the bibliography answered every one, so none is unchecked.
    assert lines == [f"8 references in 5 reviews: 1 verified, 7 not verified, 0 unchecked; wrote "
                     f"{tmp_path / 'checks.jsonl'}"]

# A command of the real command line that logs through both libraries' loggers, run in its own process so
# that the command line's logging set-up, not pytest's, decides what reaches stderr.
LOGGING_COMMAND = """
import logging, sys, click
from praib.cli.main import main

@main.command("log-twice")
def log_twice():
    "Log a warning through each library's logger."
    logging.getLogger("datasets.load").warning("a warning of datasets")
    logging.getLogger("huggingface_hub.utils._http").warning("a warning of huggingface_hub")

sys.exit(main(["log-twice"]))
"""


def test_a_library_warning_is_printed_once_under_the_praib_prefix():
    done = subprocess.run([sys.executable, "-c", LOGGING_COMMAND], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ["praib: a warning of datasets", "praib: a warning of huggingface_hub"]
