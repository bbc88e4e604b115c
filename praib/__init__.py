"""praib: measure how large language models behave as scientific peer reviewers."""

from pathlib import Path as _Path
from typing import TYPE_CHECKING

from praib._version import __version__

# In a source tree, praib.generation and praib.perturb are the folders generation/ and perturb/ beside
# this package (setup.py maps them for wheels). Looking them up here, rather than through the editable
# install's mapping, makes them load from the same tree as praib itself, even when two checkouts share
# one environment.
_source_root = _Path(__file__).resolve().parent.parent
if (_source_root / "setup.cfg").is_file() and (_source_root / "generation" / "__init__.py").is_file():
    __path__.append(str(_source_root))

#: BibTeX of the PRAIB benchmark paper whose metrics praib implements.
PRAIB_CITATION = """\
@misc{praib,
  title  = {PRAIB: Peer Review AI Benchmark of Behaviour of LLM-Assisted Reviewing},
  author = {{\\.Z}urawicki, Krzysztof and Farganus, Julia and Gawel, Arkadiusz and Bystro{\\'n}ski, Mateusz and Kajdanowicz, Tomasz Jan},
  year   = {2026}
}
"""

# The verbs a researcher calls, each loaded on first use: `import praib` stays light (no datasets, torch
# or evaluate until a verb needs them), so a command that scores ten reviews starts fast.
_API = {
    "load_records": "praib.records",
    "save_records": "praib.records",
    "load_papers": "praib.api",
    "load_prompt": "praib.generation.prompts",
    "venue_scales": "praib.scales",
    "SamplingConfig": "praib.llm.backends",
    "make_backend": "praib.llm.backends",
    "CachedBackend": "praib.llm.cache",
    "CallCache": "praib.llm.cache",
    "Judge": "praib.llm.judge",
    "make_judge": "praib.llm.judge",
    "generate": "praib.api",
    "perturb_records": "praib.api",
    "evaluate": "praib.api",
    "robustness": "praib.api",
}

__all__ = ["PRAIB_CITATION", "__version__", *_API]

if TYPE_CHECKING:
    from praib.api import evaluate, generate, load_papers, perturb_records, robustness
    from praib.generation.prompts import load_prompt
    from praib.llm.backends import SamplingConfig, make_backend
    from praib.llm.cache import CachedBackend, CallCache
    from praib.llm.judge import Judge, make_judge
    from praib.records import load_records, save_records
    from praib.scales import venue_scales


def __getattr__(name):
    if name not in _API:
        raise AttributeError(f"module 'praib' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_API[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_API})
