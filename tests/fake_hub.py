"""A loopback stand-in for the few Hugging Face Hub endpoints that praib's leaderboard stores call
(``HfApi.dataset_info``, ``hf_hub_download``, ``HfApi.create_commit``), keeping real dataset repositories in
memory: each commit is a new revision, a commit naming a stale ``parentCommit`` is refused with HTTP 412
as the Hub refuses it, and files are served as of the revision asked for."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote


class Repository:
    def __init__(self):
        self.revisions: dict[str, dict[str, bytes]] = {}
        self.head = self._add({".gitattributes": b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"})
        self.commits: list[dict] = []  # header of each commit received (summary, parentCommit)

    def _add(self, files: dict[str, bytes]) -> str:
        sha = hashlib.sha1(f"{len(self.revisions)}".encode() + json.dumps(sorted(files)).encode()).hexdigest()
        self.revisions[sha] = files
        return sha

    def files(self, revision: str) -> dict[str, bytes] | None:
        return self.revisions.get(self.head if revision == "main" else revision)


class FakeHub:
    """``with FakeHub() as hub:`` serves on ``hub.endpoint``; ``hub.create(repo_id)`` makes a dataset."""

    def __init__(self):
        self.repositories: dict[str, Repository] = {}
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []

    def create(self, repo_id: str) -> Repository:
        self.repositories[repo_id] = Repository()
        return self.repositories[repo_id]

    def __enter__(self) -> "FakeHub":
        hub = self

        class Handler(_Handler):
            pass

        Handler.hub = hub
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    hub: FakeHub

    def log_message(self, *args):
        pass

    def _reply(self, status: int, payload=None, headers: dict | None = None, body: bytes | None = None):
        if body is None:
            body = json.dumps(payload if payload is not None else {}).encode()
        self.send_response(status)
        for key, value in {"Content-Type": "application/json", "Content-Length": str(len(body)),
                           **(headers or {})}.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _repo(self, org: str, name: str) -> Repository | None:
        return self.hub.repositories.get(f"{org}/{name}")

    def _not_found(self, code: str):
        self._reply(404, {"error": code}, headers={"X-Error-Code": code})

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        self.hub.requests.append((self.command, self.path))
        parts = unquote(self.path.split("?")[0]).strip("/").split("/")
        with self.hub.lock:
            if parts[:2] == ["api", "datasets"] and len(parts) in (4, 6):
                repo = self._repo(parts[2], parts[3])
                files = repo and repo.files(parts[5] if len(parts) == 6 else "main")
                if files is None:
                    return self._not_found("RepoNotFound")
                sha = repo.head if len(parts) == 4 or parts[5] == "main" else parts[5]
                return self._reply(200, {"id": f"{parts[2]}/{parts[3]}", "sha": sha, "private": False,
                                         "siblings": [{"rfilename": p} for p in sorted(files)]})
            if parts[0] == "datasets" and len(parts) >= 6 and parts[3] == "resolve":
                repo = self._repo(parts[1], parts[2])
                files = repo and repo.files(parts[4])
                if files is None:
                    return self._not_found("RepoNotFound")
                data = files.get("/".join(parts[5:]))
                if data is None:
                    return self._not_found("EntryNotFound")
                sha = repo.head if parts[4] == "main" else parts[4]
                return self._reply(200, body=data, headers={
                    "Content-Type": "application/octet-stream", "X-Repo-Commit": sha,
                    "ETag": f'"{hashlib.sha256(data).hexdigest()}"'})
        self._reply(404, {"error": "not here"})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.hub.requests.append(("POST", self.path))
        parts = unquote(self.path.split("?")[0]).strip("/").split("/")
        if parts == ["api", "validate-yaml"]:
            return self._reply(200, {"errors": [], "warnings": []})
        if parts[:2] != ["api", "datasets"] or len(parts) != 6:
            return self._reply(404, {"error": "not here"})
        with self.hub.lock:
            repo = self._repo(parts[2], parts[3])
            if repo is None:
                return self._not_found("RepoNotFound")
            if parts[4] == "preupload":
                return self._reply(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                                   for f in json.loads(body)["files"]]})
            if parts[4] != "commit":
                return self._reply(404, {"error": "not here"})
            lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
            header = next(item["value"] for item in lines if item["key"] == "header")
            repo.commits.append(header)
            parent = header.get("parentCommit")
            if parent is not None and parent != repo.head:
                return self._reply(412, {"error": "A commit has happened since. Please refresh and try again."})
            files = dict(repo.files("main"))
            for item in lines:
                if item["key"] == "file":
                    files[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
                elif item["key"] == "deletedFile":
                    files.pop(item["value"]["path"], None)
            repo.head = repo._add(files)
            host = f"http://{self.headers['Host']}"
            return self._reply(200, {"commitUrl": f"{host}/datasets/{parts[2]}/{parts[3]}/commit/{repo.head}",
                                     "commitOid": repo.head})
