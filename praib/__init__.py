"""praib: measure how large language models behave as scientific peer reviewers."""

__version__ = "0.1.0"

#: BibTeX of the PRAIB benchmark paper whose metrics praib implements.
PRAIB_CITATION = """\
@misc{praib,
  title  = {PRAIB: Peer Review AI Benchmark of Behaviour of LLM-Assisted Reviewing},
  author = {{\\.Z}urawicki, Krzysztof and Farganus, Julia and Gawel, Arkadiusz and Bystro{\\'n}ski, Mateusz and Kajdanowicz, Tomasz Jan},
  year   = {2026}
}
"""
