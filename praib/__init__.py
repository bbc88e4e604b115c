"""praib: measure how large language models behave as scientific peer reviewers."""

from pathlib import Path as _Path

__version__ = "0.1.0"

# In a source tree, praib.generation and praib.perturb are the folders generation/ and perturb/ beside
# this package (setup.cfg maps them for wheels). Looking them up here, rather than through the editable
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
