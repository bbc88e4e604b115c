"""Test-wide settings: no network, and a private Hugging Face cache per run."""

import os
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_EVALUATE_OFFLINE"] = "1"
os.environ.setdefault("HF_HOME", tempfile.mkdtemp(prefix="praib-hf-home-"))
os.environ.setdefault("TQDM_DISABLE", "1")

# The tiny random-weight chat model (session-scoped fixture) for every test module that asks for it.
from tests.tiny_model import tiny_model_dir  # noqa: E402,F401
