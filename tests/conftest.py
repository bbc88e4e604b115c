"""Test-wide settings: no network, and a private Hugging Face cache per run."""

import os
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_EVALUATE_OFFLINE"] = "1"
os.environ.setdefault("HF_HOME", tempfile.mkdtemp(prefix="praib-hf-home-"))
os.environ.setdefault("TQDM_DISABLE", "1")

import importlib  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402


def _tree_of(module) -> Path:
    return Path(module.__file__).resolve().parent.parent


def pytest_sessionstart(session):
    """Stop before any test when praib's packages would come from different checkouts.

    praib.generation and praib.perturb are the folders generation/ and perturb/ of a source tree; in a
    second checkout sharing one environment, an editable install can map them to the first checkout's
    folders, and the suite would silently test mixed sources.
    """
    under_test = Path(__file__).resolve().parent.parent
    trees = {name: _tree_of(importlib.import_module(name)) for name in ("praib", "praib.generation", "praib.perturb")}
    if set(trees.values()) != {under_test}:
        loaded = "; ".join(f"{name} from {tree}" for name, tree in trees.items())
        pytest.exit(f"the tests in {under_test} would test other sources: {loaded}. Put this tree first on "
                    f"the path (PYTHONPATH={under_test}) or install it (pip install -e {under_test}).",
                    returncode=pytest.ExitCode.USAGE_ERROR)


# The tiny random-weight chat model (session-scoped fixture) for every test module that asks for it.
from tests.tiny_model import tiny_model_dir  # noqa: E402,F401
