"""The LLM layer: backends (vLLM, OpenAI-compatible servers, transformers), the on-disk call cache, and the Judge."""
