"""The Crossref, OpenAlex and DBLP clients against local HTTP servers that answer like the real APIs
(bodies in tests/fixtures/verification/, written from the APIs' documentation): request shape,
parsing, retries on timeouts, 429 with Retry-After and 500, malformed bodies, and the cache."""

import json
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from praib.metrics.text.citations import Citation, find_citations
from praib.sources.verification import Crossref, Dblp, OpenAlex, ResponseCache, Verifier, make_verifier, verification_rows
from tests.paths import FIXTURES as FIXTURES_ROOT

FIXTURES = FIXTURES_ROOT / "verification"

RESNET = find_citations("He, K., Zhang, X., Ren, S., & Sun, J. (2016). Deep residual learning for image "
                        "recognition. In CVPR.")[0]
BERT = find_citations('[4] J. Devlin, M.-W. Chang, K. Lee, and K. Toutanova, "BERT: Pre-training of deep '
                      'bidirectional transformers for language understanding," in Proc. NAACL, 2019.')[0]
TRANSFORMER = find_citations('Vaswani, Ashish, et al. "Attention Is All You Need." Advances in Neural '
                             'Information Processing Systems, vol. 30, 2017.')[0]
INVENTED = Citation("APA", ("Smith, J.",), "Hallucinated transformers for everything", 2023,
                    "Smith, J. (2023). Hallucinated transformers for everything.")


def body(name):
    return (FIXTURES / name).read_text()


class Script:
    """What the local server answers, one step per request (the last step repeats), and what it was asked."""

    def __init__(self, *steps):
        self.steps = list(steps)
        self.requests = []

    def next(self, handler):
        self.requests.append({"path": urlsplit(handler.path).path, "query": parse_qs(urlsplit(handler.path).query),
                              "user_agent": handler.headers.get("User-Agent")})
        return self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]


@pytest.fixture
def server():
    """A local HTTP server; assign ``.script`` to set its answers."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            step = httpd.script.next(self)
            if step.get("sleep"):
                time.sleep(step["sleep"])
            try:
                self.send_response(step.get("status", 200))
                self.send_header("Content-Type", "application/json")
                for name, value in step.get("headers", {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(step.get("body", "").encode("utf-8"))
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (a timeout test)
                pass

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def fast(service_class, server, tmp_path, **options):
    """A client of ``server`` without pacing or long waits, caching under ``tmp_path``."""
    settings = {"interval": 0.0, "backoff": 0.05, "timeout": 2.0, "max_tries": 3, **options}
    return service_class(base_url=server.url, contact_email="reviewer@example.org",
                         cache=ResponseCache(tmp_path / "citations.sqlite3"), **settings)


def test_crossref_request_and_answer(server, tmp_path):
    server.script = Script({"body": body("crossref_works.json")})
    result = Verifier([fast(Crossref, server, tmp_path)]).check(RESNET)

    request, = server.script.requests
    assert request["path"] == "/works"
    assert request["query"]["query.bibliographic"] == [
        "Deep residual learning for image recognition He Zhang Ren Sun 2016"]
    assert request["query"]["rows"] == ["5"] and request["query"]["mailto"] == ["reviewer@example.org"]
    assert "mailto:reviewer@example.org" in request["user_agent"]
    assert result.verified is True and result.service == "crossref"
    assert result.record.title == "Deep Residual Learning for Image Recognition"
    assert result.record.authors == ("Kaiming He", "Xiangyu Zhang", "Shaoqing Ren", "Jian Sun")
    assert (result.record.year, result.record.doi) == (2016, "10.1109/cvpr.2016.90")
    assert result.similarity == 1.0


def test_openalex_request_and_answer(server, tmp_path):
    server.script = Script({"body": body("openalex_works.json")})
    result = Verifier([fast(OpenAlex, server, tmp_path)]).check(BERT)

    request, = server.script.requests
    assert request["path"] == "/works"
    assert request["query"]["search"] == ["BERT: Pre-training of deep bidirectional transformers for language "
                                          "understanding"]
    assert request["query"]["per-page"] == ["5"] and request["query"]["mailto"] == ["reviewer@example.org"]
    assert result.verified is True and result.service == "openalex"
    assert result.record.doi == "10.18653/v1/n19-1423" and result.record.url == "https://openalex.org/W2963403868"
    assert result.record.authors[1] == "Ming-Wei Chang"


def test_dblp_request_answer_single_author_and_no_hits(server, tmp_path):
    server.script = Script({"body": body("dblp_search.json")}, {"body": body("dblp_no_hits.json")})
    dblp = fast(Dblp, server, tmp_path)
    found = Verifier([dblp]).check(TRANSFORMER)
    missing = Verifier([dblp]).check(INVENTED)

    assert server.script.requests[0]["path"] == "/search/publ/api"
    assert server.script.requests[0]["query"]["q"] == ["Attention Is All You Need"]
    assert server.script.requests[0]["query"]["format"] == ["json"]
    assert "mailto" not in server.script.requests[0]["query"]
    assert found.verified is True and found.record.title == "Attention is All you Need"
    assert found.record.url.startswith("https://proceedings.neurips.cc/")
    # The second hit has one author, given by DBLP as an object rather than a list.
    assert dblp.parse(json.loads(body("dblp_search.json")))[1].authors == ("Wei Wang",)
    assert missing.verified is False and missing.record is None and missing.unanswered == ()


def test_429_with_retry_after_is_waited_out(server, tmp_path):
    server.script = Script({"status": 429, "headers": {"Retry-After": "1"}, "body": "{}"},
                           {"body": body("crossref_works.json")})
    started = time.monotonic()
    result = Verifier([fast(Crossref, server, tmp_path)]).check(RESNET)
    assert time.monotonic() - started >= 1.0  # the server's Retry-After, longer than the 0.05 s backoff
    assert len(server.script.requests) == 2 and result.verified is True


def test_retry_after_longer_than_patience_leaves_the_reference_unchecked(server, tmp_path, caplog):
    server.script = Script({"status": 429, "headers": {"Retry-After": "3600"}, "body": ""})
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="praib.sources.verification"):
        result = Verifier([fast(Crossref, server, tmp_path, max_wait=5)]).check(RESNET)
    assert time.monotonic() - started < 2
    assert len(server.script.requests) == 1
    assert result.verified is None and result.unanswered == ("crossref",)
    assert "asked to wait 3600 s" in caplog.text


def test_500_then_success(server, tmp_path):
    server.script = Script({"status": 500, "body": "Internal Server Error"}, {"status": 503, "body": ""},
                           {"body": body("openalex_works.json")})
    result = Verifier([fast(OpenAlex, server, tmp_path)]).check(BERT)
    assert len(server.script.requests) == 3 and result.verified is True


def test_timeout_then_success(server, tmp_path):
    server.script = Script({"sleep": 1.5, "body": body("dblp_search.json")}, {"body": body("dblp_search.json")})
    result = Verifier([fast(Dblp, server, tmp_path, timeout=0.5)]).check(TRANSFORMER)
    assert len(server.script.requests) == 2 and result.verified is True


def test_timeouts_every_time_give_no_answer_and_a_warning(server, tmp_path, caplog):
    server.script = Script({"sleep": 1.0, "body": body("dblp_search.json")})
    with caplog.at_level(logging.WARNING, logger="praib.sources.verification"):
        result = Verifier([fast(Dblp, server, tmp_path, timeout=0.3, max_tries=2)]).check(TRANSFORMER)
    assert len(server.script.requests) == 2
    assert result.verified is None and result.unanswered == ("dblp",)
    assert "dblp: no answer after 2 tries" in caplog.text


def test_client_errors_are_not_retried(server, tmp_path):
    server.script = Script({"status": 404, "body": '{"error": "not found"}'})
    result = Verifier([fast(OpenAlex, server, tmp_path)]).check(BERT)
    assert len(server.script.requests) == 1 and result.verified is None


@pytest.mark.parametrize("bad_body", ["<html>Service Unavailable</html>", '{"message": {"items": "none"}}',
                                      '{"status": "ok"}', "[]"])
def test_malformed_answer_is_no_answer_and_is_not_cached(server, tmp_path, caplog, bad_body):
    server.script = Script({"body": bad_body}, {"body": body("crossref_works.json")})
    crossref = fast(Crossref, server, tmp_path)
    with caplog.at_level(logging.WARNING, logger="praib.sources.verification"):
        first = Verifier([crossref]).check(RESNET)
    assert first.verified is None and "crossref: malformed answer" in caplog.text
    # Nothing bad was kept: the next run asks again and gets the good answer.
    second = Verifier([crossref]).check(RESNET)
    assert second.verified is True and len(server.script.requests) == 2


def test_a_silent_service_falls_back_to_the_next(server, tmp_path):
    """Crossref keeps failing; OpenAlex (same local server, other answers) confirms the reference."""
    server.script = Script({"status": 500, "body": ""}, {"status": 500, "body": ""},
                           {"body": body("openalex_works.json")})
    verifier = Verifier([fast(Crossref, server, tmp_path, max_tries=2), fast(OpenAlex, server, tmp_path)])
    result = verifier.check(BERT)
    assert [r["path"] for r in server.script.requests] == ["/works"] * 3
    assert "query.bibliographic" in server.script.requests[0]["query"] and "search" in server.script.requests[2]["query"]
    assert result.verified is True and result.service == "openalex" and result.unanswered == ("crossref",)


def test_rerun_is_answered_from_the_cache_without_requests(server, tmp_path):
    answers = {"/works": body("crossref_works.json"), "/search/publ/api": body("dblp_search.json")}

    class ByPath(Script):
        def next(self, handler):
            super().next(handler)
            return {"body": answers[urlsplit(handler.path).path]}

    server.script = ByPath({})
    urls = {"crossref": server.url, "dblp": server.url}
    options = {"interval": 0.0, "backoff": 0.05, "timeout": 2.0}
    citations = [RESNET, TRANSFORMER, INVENTED]

    first = make_verifier("crossref,dblp", cache_dir=tmp_path, base_urls=urls, **options)
    first_results = [first.check(c) for c in citations]
    # RESNET is confirmed by Crossref alone; the other two go on to DBLP.
    assert len(server.script.requests) == 5
    assert [r.verified for r in first_results] == [True, True, False]
    assert [r.service for r in first_results] == ["crossref", "dblp", "crossref"]

    second = make_verifier(["crossref", "dblp"], cache_dir=tmp_path, base_urls=urls, **options)
    second_results = [second.check(c) for c in citations]
    assert len(server.script.requests) == 5
    assert sum(s.requests_sent for s in second.sources) == 0
    assert second_results == first_results


def test_every_reference_gets_a_row_answered_or_not(server, tmp_path):
    server.script = Script({"body": body("crossref_works.json")}, {"status": 500, "body": ""})
    verifier = Verifier([fast(Crossref, server, tmp_path, max_tries=1)])
    checks = [[verifier.check(RESNET)], [], [verifier.check(INVENTED)]]
    rows = verification_rows({"review_id": ["r1", "r2", "r3"], "paper_id": ["p1", "p1", "p2"],
                              "source": ["human", "human", "model"]}, checks).to_list()
    assert [(r["review_id"], r["verified"], r["service"]) for r in rows] == [
        ("r1", True, "crossref"), ("r3", None, None)]
    assert rows[0]["matched_doi"] == "10.1109/cvpr.2016.90" and rows[0]["matched_year"] == 2016
    assert rows[1]["unanswered"] == ["crossref"] and rows[1]["cited_title"] == INVENTED.title


def test_requests_to_one_service_are_paced(server, tmp_path):
    server.script = Script({"body": body("dblp_no_hits.json")})
    dblp = fast(Dblp, server, tmp_path, interval=0.4)
    started = time.monotonic()
    for title in ("First invented title", "Second invented title", "Third invented title"):
        assert Verifier([dblp]).check(Citation("APA", (), title, 2020, title)).verified is False
    # The first request goes at once, the next two each wait out the interval.
    assert len(server.script.requests) == 3 and time.monotonic() - started >= 0.8


# --- services out of reach: found once, before the run (issue 26, item 10) ------------------------

# A back-off none of these tests may wait: the first retry alone would take a minute.
PATIENT = {"interval": 0.0, "backoff": 60.0, "timeout": 2.0, "max_tries": 4}


@pytest.fixture
def out_of_reach(monkeypatch):
    """Base URLs of a service that no request reaches: a loopback port nothing listens on, and a host name
    that does not resolve; no proxy (a proxy would resolve names itself)."""
    for proxy in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(proxy, raising=False)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return {"crossref": f"http://127.0.0.1:{port}", "openalex": "http://no-such-host.invalid"}


def test_services_out_of_reach_stop_the_run_before_it_starts_with_one_line(out_of_reach, tmp_path):
    started = time.monotonic()
    with pytest.raises(ValueError) as stopped:
        make_verifier(["crossref", "openalex"], cache_dir=tmp_path, base_urls=out_of_reach, **PATIENT)
    assert time.monotonic() - started < PATIENT["backoff"]
    port = out_of_reach["crossref"].rsplit(":", 1)[1]
    message = str(stopped.value)
    assert "\n" not in message
    assert message.startswith(f"no citation service can be reached (crossref: nothing listens on 127.0.0.1:{port} "
                              "(connection refused); openalex: no-such-host.invalid does not resolve (")
    assert message.endswith(") and none has answers in the cache; check the network, or verify offline with "
                            "--bibliography FILE")


def test_with_a_bibliography_services_out_of_reach_leave_it_to_verify(out_of_reach, tmp_path, caplog):
    started = time.monotonic()
    verifier = make_verifier(["crossref", "openalex"], [FIXTURES / "references.bib"], cache_dir=tmp_path,
                             base_urls=out_of_reach, **PATIENT)
    results = [verifier.check(c) for c in (BERT, INVENTED)]
    assert time.monotonic() - started < PATIENT["backoff"]
    assert [r.verified for r in results] == [True, False]     # the bibliography answered both
    assert results[0].service == "bibliography" and results[1].unanswered == ("crossref", "openalex")
    assert sum(s.requests_sent for s in verifier.sources[1:]) == 0
    [warning] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warning.startswith("cannot reach crossref, openalex (crossref: nothing listens on 127.0.0.1:")
    assert warning.endswith("; verifying with bibliography and what crossref, openalex answered before (the cache)")


def test_a_service_out_of_reach_still_gives_its_cached_answers(server, out_of_reach, tmp_path, caplog):
    server.script = Script({"body": body("crossref_works.json")})
    online = make_verifier(["crossref"], cache_dir=tmp_path, base_urls={"crossref": server.url}, interval=0.0)
    assert online.check(RESNET).verified is True
    offline = make_verifier(["crossref"], cache_dir=tmp_path, base_urls=out_of_reach, **PATIENT)
    assert offline.check(RESNET).verified is True            # from the cache
    assert offline.check(INVENTED).verified is None           # never asked: unchecked, not sent
    assert offline.sources[0].requests_sent == 0 and len(server.script.requests) == 1
    [warning] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warning.endswith("only what they answered before (the cache) is used; the other references stay "
                            "unchecked")


def test_a_service_lost_during_the_run_is_said_once_and_not_asked_again(tmp_path, caplog):
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    port = listening.getsockname()[1]
    verifier = make_verifier(["dblp"], cache_dir=tmp_path, base_urls={"dblp": f"http://127.0.0.1:{port}"}, **PATIENT)
    listening.close()                                          # it goes away after the check
    started = time.monotonic()
    results = [verifier.check(c) for c in (RESNET, BERT, TRANSFORMER, INVENTED)]
    assert time.monotonic() - started < PATIENT["backoff"]
    assert [r.verified for r in results] == [None] * 4 and verifier.sources[0].requests_sent == 1
    [warning] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warning == (f"dblp cannot be reached any more (nothing listens on 127.0.0.1:{port} (connection refused)); "
                       "its cached answers are used, the references it never answered stay unchecked")
