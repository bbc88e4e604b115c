"""Review generation with LLM backends (``praib.generation``).

Prompt templates per strategy, venue and year, the vLLM / OpenAI-compatible /
transformers backends and the on-disk call cache live here; see the project
issues for the plan. The records they produce are ``praib.records`` Reviews.
"""
