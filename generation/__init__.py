"""Review and meta-review generation (``praib.generation``).

Prompt templates per strategy, venue and year, paper preparation (token budget, appendix removal) and the
run loop that sends every item through a :mod:`praib.llm` backend and the call cache. The records it
produces are :mod:`praib.records` Reviews and MetaReviews.
"""
