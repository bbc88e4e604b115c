"""OpenReview collection against a local server that replays notes shaped like API v1 and v2 answers."""

import json
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.sources.openreview import CollectionError, NoteFetcher, collect, load_edition, normalise_forum
from praib.records import load_records
from tests.paths import FIXTURES as FIXTURES_ROOT
from tests.sources.records_check import assert_records

FIXTURES = FIXTURES_ROOT / "openreview"
EXPECTED = json.loads((FIXTURES / "expected_records.json").read_text())
FIXTURE_FILES = {"ICLR 2019": "iclr2019_v1.json", "ICLR 2023": "iclr2023_v1.json",
                 "ICLR 2025": "iclr2025_v2.json", "NeurIPS 2023": "neurips2023_v2.json"}
TOKEN = "test-session-token"


def fixture_notes() -> dict[str, list[dict]]:
    notes = {}
    for name in FIXTURE_FILES.values():
        notes.update(json.loads((FIXTURES / name).read_text()))
    return notes


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, status, body: bytes, headers=()):
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (the timeout fault)
            pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(("POST", self.path, body, dict(self.headers)))
        if self.path == "/login" and body.get("id") == "reviewer@example.org" and body.get("password") == "secret":
            return self._send(200, json.dumps({"token": TOKEN, "user": {"id": "~Test_User1",
                                                                        "profile": {"id": "~Test_User1"}}}).encode())
        self._send(403, b'{"name": "ForbiddenError", "message": "Invalid username or password"}')

    def do_GET(self):
        url = urlsplit(self.path)
        params = {key: values[0] for key, values in parse_qs(url.query).items()}
        self.server.requests.append(("GET", url.path, params, dict(self.headers)))
        fault = self.server.faults.pop(0) if self.server.faults else None
        if fault == "429":
            return self._send(429, b'{"name": "RateLimitError"}', [("Retry-After", "2")])
        if fault == "500":
            return self._send(500, b'{"name": "Error", "message": "internal"}')
        if fault == "403":
            return self._send(403, b'{"name": "ForbiddenError", "message": "no access"}')
        if fault == "timeout":
            time.sleep(1.0)  # past the client's timeout; an empty page here would lose notes if it were used
            return self._send(200, b'{"notes": []}')
        if fault == "malformed":
            return self._send(200, b'{"notes": [{"id": "trunc')
        notes = self.server.notes.get(params["invitation"], [])
        offset, limit = int(params.get("offset", 0)), int(params.get("limit", 1000))
        self._send(200, json.dumps({"notes": notes[offset:offset + limit], "count": len(notes)}).encode())


class FakeOpenReview(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.notes = fixture_notes()
        self.requests: list[tuple] = []
        self.faults: list[str | None] = []  # one per GET, in order; None answers normally

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}"

    def gets(self) -> list[dict]:
        return [params for method, _, params, _ in self.requests if method == "GET"]


@contextmanager
def serving():
    server = FakeOpenReview()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def server():
    with serving() as running:
        yield running


def fetcher_for(server_url, cache_dir, **options):
    options = {"pace": 0, "page_size": 2, "sleep": lambda seconds: None, **options}
    return NoteFetcher(cache_dir, baseurl=server_url, **options)


@pytest.mark.parametrize("key", list(FIXTURE_FILES))
def test_collected_records_match_hand_written_ones(server, tmp_path, key):
    venue, year = key.split()
    records = collect(venue, [int(year)], fetcher_for(server.url, tmp_path), progress=False)
    for kind, expected in EXPECTED[key].items():
        assert_records(records[kind].to_list(), expected)
    edition = load_edition(venue, int(year))
    assert {p["invitation"] for p in server.gets()} == {invitation for invitation, _ in edition.submissions}
    assert all(p["details"] == "replies" and p["limit"] == "2" for p in server.gets())


def test_pages_through_an_invitation(server, tmp_path):
    collect("ICLR", [2019], fetcher_for(server.url, tmp_path), progress=False)
    blind = [int(p["offset"]) for p in server.gets() if p["invitation"].endswith("Blind_Submission")]
    assert blind == [0, 2]  # three submissions at two per page
    cached = sorted(p.name for p in (tmp_path / "ICLR" / "2019").rglob("*.json"))
    assert cached == ["offset-0000000-limit-2.json", "offset-0000000-limit-2.json", "offset-0000002-limit-2.json"]


def test_faults_are_retried_and_nothing_is_lost(server, tmp_path):
    server.faults = ["429", "500", "timeout", "malformed"]
    sleeps = []
    fetcher = fetcher_for(server.url, tmp_path, timeout=0.3, backoff=0.5, sleep=sleeps.append)
    records = collect("ICLR", [2019], fetcher, progress=False)
    for kind, expected in EXPECTED["ICLR 2019"].items():
        assert_records(records[kind].to_list(), expected)
    # Retry-After for the 429, then the back-off doubling from 0.5 s for the others.
    assert sleeps == [2.0, 1.0, 2.0, 4.0]
    assert fetcher.requests_made == len(server.gets()) == 4 + 3


def test_gives_up_with_a_clear_error_and_resumes_from_the_cache(server, tmp_path):
    server.faults = [None, None, "500", "500", "500"]  # the withdrawn listing and the first page pass
    with pytest.raises(CollectionError, match=r"offset 2\): gave up after 3 attempts, last: 500"):
        collect("ICLR", [2019], fetcher_for(server.url, tmp_path, retries=2), progress=False)
    resumed = fetcher_for(server.url, tmp_path)
    records = collect("ICLR", [2019], resumed, progress=False)
    assert resumed.requests_made == 1 and resumed.pages_from_cache == 2
    assert len(records["paper"]) == 4


def test_a_refusal_is_not_retried(server, tmp_path):
    server.faults = ["403"]
    with pytest.raises(CollectionError, match="403 Forbidden.*no access"):
        collect("ICLR", [2019], fetcher_for(server.url, tmp_path), progress=False)
    assert len(server.gets()) == 1


def test_a_rerun_uses_the_cache_and_offline_needs_no_server(tmp_path):
    with serving() as server:
        first = collect("ICLR", [2025], fetcher_for(server.url, tmp_path), progress=False)
        again = fetcher_for(server.url, tmp_path)
        second = collect("ICLR", [2025], again, progress=False)
        requests_seen = len(server.requests)
    assert again.requests_made == 0 and requests_seen == 2  # two submissions fill a page: the next one is empty
    offline = collect("ICLR", [2025], fetcher_for("http://127.0.0.1:9", tmp_path, offline=True), progress=False)
    for kind in first:
        assert first[kind].to_list() == second[kind].to_list() == offline[kind].to_list()
    with pytest.raises(CollectionError, match="not in the cache.*without --offline"):
        collect("ICLR", [2024], fetcher_for("http://127.0.0.1:9", tmp_path, offline=True), progress=False)


def test_label_only_scores_are_read_on_the_venue_scale():
    edition = load_edition("NeurIPS", 2024)
    note = {"id": "P1", "forum": "P1", "number": 7, "content": {"title": {"value": "T"}},
            "details": {"replies": [{"id": "R1", "forum": "P1", "replyto": "P1",
                                     "invitations": ["NeurIPS.cc/2024/Conference/Submission7/-/Official_Review"],
                                     "content": {"soundness": {"value": "excellent"}, "rating": {"value": 5}}}]}}
    review = normalise_forum(note, edition)["review"][0]
    assert review["subscores"] == [{"name": "soundness", "value": 4}] and review["rating"] == 5
    note["details"]["replies"][0]["content"]["soundness"] = {"value": "superb"}
    with pytest.raises(ValueError, match="field 'soundness'.*'superb' is no label"):
        normalise_forum(note, edition)


def test_every_layout_year_is_known():
    for venue, years in (("ICLR", range(2017, 2026)), ("NeurIPS", range(2021, 2026))):
        for year in years:
            edition = load_edition(venue, year)
            assert edition.api == (2 if year >= {"ICLR": 2024, "NeurIPS": 2023}[venue] else 1)
            assert edition.review and "rating" in edition.review_form.values()
    with pytest.raises(ValueError, match="no OpenReview layout for ICLR 2013"):
        load_edition("ICLR", 2013)


def test_cli_collect_logs_in_then_rebuilds_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENREVIEW_USERNAME", "reviewer@example.org")
    monkeypatch.setenv("OPENREVIEW_PASSWORD", "secret")
    out, cache = tmp_path / "out", tmp_path / "cache"
    args = ["data", "collect", "ICLR", "2019", "2025", "--output", str(out),
            "--cache-dir", str(cache), "--pace", "0", "--no-progress"]
    with serving() as server:
        result = CliRunner().invoke(main, args + ["--base-url", server.url])
        gets = [headers for method, _, _, headers in server.requests if method == "GET"]
    assert result.exit_code == 0, result.output
    assert server.requests[0][:2] == ("POST", "/login")
    assert gets and all(h["Authorization"] == f"Bearer {TOKEN}" for h in gets)
    assert "ICLR 2019, 2025: 6 papers (2 withdrawn or desk-rejected), 7 reviews, 3 meta-reviews, 3 rebuttals; " \
           "3 requests, 0 pages from the cache" in result.output
    first = {name: (out / name).read_text() for name in ("papers.jsonl", "reviews.jsonl", "meta_reviews.jsonl",
                                                          "rebuttals.jsonl")}
    assert [r["review_id"] for r in load_records(out / "reviews.jsonl", "review")] == \
        [r["review_id"] for key in ("ICLR 2019", "ICLR 2025") for r in EXPECTED[key]["review"]]

    monkeypatch.delenv("OPENREVIEW_PASSWORD")
    offline = CliRunner().invoke(main, args + ["--offline", "--base-url", "http://127.0.0.1:9"])
    assert offline.exit_code == 0, offline.output
    assert "0 requests, 3 pages from the cache" in offline.output
    assert {name: (out / name).read_text() for name in first} == first


def test_cli_collect_reports_a_failed_login(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENREVIEW_USERNAME", "reviewer@example.org")
    monkeypatch.setenv("OPENREVIEW_PASSWORD", "wrong")
    with serving() as server:
        result = CliRunner().invoke(main, ["data", "collect", "ICLR", "2025", "--output",
                                           str(tmp_path / "out"), "--base-url", server.url, "--no-progress"])
    assert result.exit_code != 0
    assert "OpenReview login failed" in result.output and "Invalid username or password" in result.output


def test_cli_collect_rejects_an_unknown_year(tmp_path):
    result = CliRunner().invoke(main, ["data", "collect", "ICLR", "2012", "--output",
                                       str(tmp_path / "out"), "--offline"])
    assert result.exit_code == 2 and "no OpenReview layout for ICLR 2012" in result.output
