"""On-disk cache of LLM calls, so that a killed run resumes and a repeated run costs nothing.

One SQLite database (``calls.sqlite3``, WAL mode) per cache directory, one row per call, committed
as soon as it is written. Keys are the SHA-256 of the canonical JSON of everything that determines
the output: backend name, model, prompt template name, messages, sampling settings, JSON schema and
choices (:meth:`CallCache.key`). The model revision is stored with each row as metadata but is not
part of the key.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Sequence

from praib.llm.backends import GenerationRequest, OnAnswer, generate_each
from praib.llm.failures import CallFailure

__all__ = ["CallCache", "CachedBackend"]

KEY_VERSION = 1


class CallCache:
    """A key -> output store in ``directory/calls.sqlite3``; safe to share between threads."""

    FILENAME = "calls.sqlite3"

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / self.FILENAME
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, output TEXT NOT NULL, "
            "metadata TEXT NOT NULL DEFAULT '{}', created REAL NOT NULL)")

    @staticmethod
    def key(backend: str, model: str, request: GenerationRequest) -> str:
        payload = {
            "v": KEY_VERSION,
            "backend": backend,
            "model": model,
            "template": request.template,
            "messages": [[role, content] for role, content in request.messages],
            "sampling": asdict(request.sampling),
            "json_schema": request.json_schema,
            "choices": list(request.choices) if request.choices is not None else None,
        }
        canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT output FROM calls WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """The cached outputs of those ``keys`` that are present."""
        found: dict[str, str] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for i in range(0, len(unique), 500):
                chunk = unique[i:i + 500]
                marks = ",".join("?" * len(chunk))
                found.update(self._conn.execute(f"SELECT key, output FROM calls WHERE key IN ({marks})", chunk))
        return found

    def put(self, key: str, output: str, **metadata: Any) -> None:
        """Store one output (replacing any previous one); committed before returning."""
        self.put_many([(key, output)], **metadata)

    def put_many(self, items: Sequence[tuple[str, str]], **metadata: Any) -> None:
        """Store several outputs in one transaction; committed before returning."""
        meta = json.dumps(metadata, sort_keys=True, default=str)
        now = time.time()
        with self._lock:
            with self._conn:  # BEGIN ... COMMIT
                self._conn.execute("BEGIN")
                self._conn.executemany(
                    "INSERT OR REPLACE INTO calls (key, output, metadata, created) VALUES (?, ?, ?, ?)",
                    [(k, o, meta, now) for k, o in items])

    def metadata(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute("SELECT metadata FROM calls WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "CallCache":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class CachedBackend:
    """Wraps a backend: answers from the cache, sends only the misses to the inner backend.

    Each answer is stored the moment it arrives (the inner backend reports it through
    ``on_answer``), so a run killed at any point repeats no answered call. A failed request
    (:class:`~praib.llm.failures.CallFailure`) is not stored: a rerun sends it again. The misses of
    one ``generate`` call go to the inner backend in a single call (so vLLM still batches them), or
    in calls of ``chunk_size`` requests when that is set. Identical requests within one call are
    sent once. ``hits`` / ``misses`` count requests answered from the cache / sent to the inner
    backend, over the object's life.
    """

    def __init__(self, inner: Any, cache: CallCache | str | Path, chunk_size: int | None = None) -> None:
        self.inner = inner
        self.cache = cache if isinstance(cache, CallCache) else CallCache(cache)
        self.chunk_size = chunk_size
        self.hits = 0
        self.misses = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def model_revision(self) -> str | None:
        return self.inner.model_revision

    def close(self) -> None:
        """Close the inner backend (a vLLM engine ends its processes); the cache stays open for others."""
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> "CachedBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def generate(self, requests: Sequence[GenerationRequest], progress: bool = False,
                 on_answer: OnAnswer | None = None) -> list[str | CallFailure]:
        keys = [CallCache.key(self.inner.name, self.inner.model, r) for r in requests]
        found = self.cache.get_many(keys)
        replies: list[Any] = [None] * len(requests)
        waiting: dict[str, list[int]] = {}  # key of each request to send -> the positions it answers
        for index, key in enumerate(keys):
            if key in found:
                self.hits += 1
                replies[index] = found[key]
                if on_answer is not None:
                    on_answer(index, found[key])
            elif key in waiting:
                self.hits += 1
                waiting[key].append(index)
            else:
                waiting[key] = [index]
        pending = list(waiting)
        step = self.chunk_size or max(1, len(pending))
        for start in range(0, len(pending), step):
            chunk = pending[start:start + step]
            self.misses += len(chunk)

            def arrived(position: int, reply: Any, chunk: list[str] = chunk) -> None:
                key = chunk[position]
                if isinstance(reply, str):
                    self.cache.put(key, reply, backend=self.inner.name, model=self.inner.model,
                                   model_revision=self.inner.model_revision)
                for index in waiting[key]:
                    replies[index] = reply
                    if on_answer is not None:
                        on_answer(index, reply)

            generate_each(self.inner, [requests[waiting[key][0]] for key in chunk], arrived, progress=progress)
        return replies
