"""The tiny chat model of ``examples/build_tiny_model.py`` as a session-scoped pytest fixture.

Use it from other test files through ``tests/conftest.py``::

    def test_something(tiny_model_dir):
        ...
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "build_tiny_model.py"
_spec = importlib.util.spec_from_file_location("build_tiny_model", _EXAMPLE)
_builder = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_builder)
build_tiny_chat_model = _builder.build_tiny_chat_model


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """Directory of the tiny chat model, built once per test session."""
    return build_tiny_chat_model(tmp_path_factory.mktemp("tiny-chat-model"))
