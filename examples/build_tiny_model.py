"""Build the tiny random-weight chat model the tests use, to try `praib generate` on a CPU.

    python examples/build_tiny_model.py /tmp/praib-tiny

It writes a 2-layer Llama with random weights and a locally trained tokenizer (nothing is
downloaded). Its reviews are gibberish and will not parse: it exercises the pipeline
(templating, token budget, cache, parsing, output), not review quality.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for tests.tiny_model

from tests.tiny_model import build_tiny_chat_model  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: python {sys.argv[0]} DIRECTORY")
    print(build_tiny_chat_model(Path(sys.argv[1])))
