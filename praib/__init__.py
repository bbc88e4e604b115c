"""praib: measure how large language models behave as scientific peer reviewers."""

__version__ = "0.1.0"
