"""An OpenAI-compatible chat-completions server on 127.0.0.1, for the tests of the HTTP backends."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def completion(model, answer, fingerprint="fp_test123"):
    """The body of a chat-completions response whose answer is ``answer``."""
    return json.dumps({"id": "x", "object": "chat.completion", "model": model, "system_fingerprint": fingerprint,
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                                    "finish_reason": "stop"}]}).encode()


def echo(body):
    return "echo: " + body["messages"][-1]["content"]


REVIEW = """## Summary
The paper studies sparse adapters.

## Strengths
- The method is simple.

## Weaknesses
- Table 1 has no error bars.

## Rating
{rating}

## Confidence
4
"""


def pipeline_answer(body):
    """A well-formed answer to any request of praib's pipeline: a review, a label, a rewritten text, or the
    judge's JSON."""
    constraint = body.get("structured_outputs") or {}
    if "choice" in constraint:
        return constraint["choice"][0]
    properties = constraint.get("json", {}).get("properties", {})
    if "verdict" in properties:
        return json.dumps({"rationale": "Eq. (2) is checked.", "verdict": "yes"})
    if "strengths" in properties:
        return json.dumps({"strengths": ["simple method"], "weaknesses": ["no error bars"]})
    return REVIEW.format(rating=6)


#: Replies that break the HTTP exchange itself, given as the status of a (status, headers, body) reply:
#: the connection closed before any response, a body cut short of its Content-Length, a reply held
#: back for headers["seconds"] (longer than the client waits).
DROP, TRUNCATE, HANG = "drop", "truncate", "hang"


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that gave up (timed out, was killed) closes its end while a reply is written: expected here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ChatServer:
    """Answers POST /v1/chat/completions with ``answer(body)``: the assistant's message, or a
    (status, headers, raw body) triple. The replies in ``script`` are served first; ``delay`` (seconds, or
    a function of the request body) slows every reply. Records every request's body, headers and arrival time, and the most requests in flight at once."""

    def __init__(self, answer=echo, fingerprint="fp_test123"):
        self.answer, self.fingerprint = answer, fingerprint
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.times: list[float] = []
        self.script: list[tuple[int, dict, bytes]] = []  # (status, headers, body) served before normal replies
        self.active = 0
        self.max_active = 0
        self.delay = 0.0
        self.pages: dict[str, object] = {}  # GET path -> JSON answer (e.g. "/version", "/v1/models")
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802 - http.server's name
                found = outer.pages.get(self.path)
                if found is None:
                    self.send_error(404)
                    return
                raw = json.dumps(found).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self):  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.bodies.append(body)
                    outer.headers.append(dict(self.headers))
                    outer.times.append(time.monotonic())
                    # answered on arrival, so that an answer may count the requests before it
                    status, headers, raw = outer.script.pop(0) if outer.script else outer.reply(body)
                    outer.active += 1
                    outer.max_active = max(outer.max_active, outer.active)
                try:
                    time.sleep(outer.delay(body) if callable(outer.delay) else outer.delay)
                    if self.path != "/v1/chat/completions":
                        self.send_error(404)
                        return
                    if status == DROP:
                        self.close_connection = True
                        return
                    if status == HANG:
                        time.sleep(headers["seconds"])
                        status, headers = 200, {}
                    self.send_response(200 if status == TRUNCATE else status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw) + (100 if status == TRUNCATE else 0)))
                    self.end_headers()
                    self.wfile.write(raw)
                    if status == TRUNCATE:
                        self.close_connection = True
                finally:
                    with outer.lock:
                        outer.active -= 1

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def reply(self, body):
        answer = self.answer(body)
        if not isinstance(answer, str):
            return answer
        return 200, {}, completion(body["model"], answer, self.fingerprint)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
