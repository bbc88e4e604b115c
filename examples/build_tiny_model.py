"""Build the tiny random-weight chat model the tests use, to try praib on a CPU.

    python examples/build_tiny_model.py /tmp/praib-tiny [--context 8192]

It writes a 2-layer Llama with random weights and a locally trained byte-level BPE tokenizer with a
chat template (nothing is downloaded; it needs torch, transformers and tokenizers). Its reviews are
gibberish and will not parse: it exercises the pipeline (templating, context budget, cache, parsing,
output), not review quality. Its tokenizer spends about five tokens a word, so its prompts are long:
the judge's and the longer review prompts need more than 2,048 positions, hence the default 8,192.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

CHAT_TEMPLATE = (
    "{% for m in messages %}"
    "<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL_TOKENS = ["<|pad|>", "<|bos|>", "<|im_start|>", "<|im_end|>", "<|unk|>"]
VOCAB_SIZE = 400
SEED = 1234

_SUBJECTS = [
    "The paper", "This submission", "The manuscript", "The proposed method", "The authors",
    "The evaluation", "The related work section", "The ablation study", "The theoretical analysis",
    "The experimental setup",
]
_VERBS = [
    "presents", "introduces", "lacks", "clearly motivates", "does not justify", "improves on",
    "compares against", "overstates", "carefully analyses", "fails to discuss",
]
_OBJECTS = [
    "a novel attention mechanism", "strong baselines on ImageNet", "the limitations of the approach",
    "a sign error in Eq. (3)", "results in Table 2", "the choice of hyperparameters",
    "statistical significance", "prior work on graph neural networks", "the main contribution",
    "reproducibility details", "a convincing ablation", "the computational cost",
]
_CLOSINGS = [
    "Overall, I recommend acceptance.", "I lean towards rejection.", "Rating: 6", "Confidence: 4",
    "Decision: Accept (poster)", "Decision: Reject", "Soundness: 3 (good)", "Presentation: 2 (fair)",
    '{"rating": 8, "confidence": 3}', "## Summary", "## Strengths", "## Weaknesses", "## Questions",
]


def review_corpus() -> list[str]:
    """A few hundred lines of review-like text, generated deterministically (no randomness)."""
    lines = []
    for i in range(len(_SUBJECTS) * len(_VERBS) * 3):
        s = _SUBJECTS[i % len(_SUBJECTS)]
        v = _VERBS[(i // len(_SUBJECTS)) % len(_VERBS)]
        o = _OBJECTS[(i * 7) % len(_OBJECTS)]
        lines.append(f"{s} {v} {o}.")
        if i % 5 == 0:
            lines.append(_CLOSINGS[i % len(_CLOSINGS)])
    lines.extend(["Accept", "Reject", "yes", "no", "system", "user", "assistant"] * 5)
    return lines


def build_tiny_chat_model(directory: Path, context: int = 8192) -> Path:
    """Write a tiny random Llama chat model (model + tokenizer + chat template) to ``directory``, with
    ``context`` positions."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)

    tok = Tokenizer(models.BPE(unk_token="<|unk|>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE, special_tokens=SPECIAL_TOKENS, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(review_corpus(), trainer=trainer)

    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|bos|>", eos_token="<|im_end|>", pad_token="<|pad|>",
        unk_token="<|unk|>", additional_special_tokens=["<|im_start|>"],
    )
    hf_tok.chat_template = CHAT_TEMPLATE
    hf_tok.model_max_length = context
    hf_tok.save_pretrained(directory)

    config = LlamaConfig(
        vocab_size=len(hf_tok), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, head_dim=64, max_position_embeddings=context,
        bos_token_id=hf_tok.bos_token_id, eos_token_id=hf_tok.eos_token_id,
        pad_token_id=hf_tok.pad_token_id, tie_word_embeddings=False,
    )
    with torch.random.fork_rng():
        torch.manual_seed(SEED)
        model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = hf_tok.pad_token_id
    model.generation_config.eos_token_id = hf_tok.eos_token_id
    model.save_pretrained(directory)
    # vLLM / older transformers read the template from tokenizer_config.json; make sure it is there.
    cfg_path = directory / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    if "chat_template" not in cfg and not (directory / "chat_template.jinja").exists():
        cfg["chat_template"] = CHAT_TEMPLATE
        cfg_path.write_text(json.dumps(cfg, indent=2))
    return directory



if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Write the tiny random-weight chat model to DIRECTORY.")
    parser.add_argument("directory", type=Path)
    parser.add_argument("--context", type=int, default=8192, help="positions (max_position_embeddings)")
    arguments = parser.parse_args()
    print(build_tiny_chat_model(arguments.directory, arguments.context))
