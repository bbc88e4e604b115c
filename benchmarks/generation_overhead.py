"""praib's own overhead in a generation run, against the backend's generation time.

    python benchmarks/generation_overhead.py                      # tiny transformers model on CPU
    python benchmarks/generation_overhead.py --backend stub --seconds-per-review 0.5

One run of :func:`praib.generation.run.run_generation` reviews N synthetic papers of
``--words`` words each with a fresh call cache and writes Parquet. The backend is wrapped in a
timer, so the run's wall time splits into

* generation: time spent inside the backend's ``generate`` (the model itself), and
* overhead: everything else praib does - loading the papers' token counts and truncation with the
  model's tokenizer, rendering the prompt, cache lookups and writes, parsing, the incremental
  JSONL and the final Parquet file.

It prints both, the ratio overhead / generation (target: under 5%), and the time of an
identical second run, which the cache answers completely (so it is overhead only).

Backends: ``transformers`` runs the tiny random-weight chat model of ``examples/build_tiny_model.py``
(built in a temporary directory; its generation is far faster than any real model's, so the
ratio is a pessimistic bound); ``stub`` sleeps ``--seconds-per-review`` per request like a model
and returns a well-formed ICLR 2025 review, so that parsing does real work.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))  # for build_tiny_model

from praib.llm.backends import SamplingConfig, make_backend  # noqa: E402
from praib.llm.cache import CachedBackend, CallCache  # noqa: E402
from praib.generation.prompts import load_prompt  # noqa: E402
from praib.generation.run import run_generation  # noqa: E402
from praib.records import coerce_record, records_to_dataset  # noqa: E402
from build_tiny_model import build_tiny_chat_model  # noqa: E402

STUB_REVIEW = """## Review Summary
The paper proposes an edge sampler based on effective resistance for message passing.

## Strengths
- Clear spectral motivation (Section 2) and a simple algorithm.
- Table 1 shows a small accuracy loss at 20% of the edges.

## Weaknesses
- The bound in Eq. (3) assumes a linearised network.
- Figure 4 lacks error bars; the speed-ups are measured on one GPU only.

## Questions for Authors
- How are resistances approximated on graphs with 10^8 edges?

## Numerical assessment
### Soundness:
3: good
### Presentation:
3: good
### Contribution:
2: fair

## Final Recommendation
**Decision:** 6: marginally above the acceptance threshold
**Key Reason:** Sound and useful, but narrow.
**Confidence:** 4
"""

WORDS = ("graph message passing sparsification spectral resistance edge sampling Laplacian bound theorem "
         "experiment accuracy baseline table figure equation lemma proof dataset training").split()


class StubModel:
    name, model, model_revision = "stub", "stub-sleeping-model", "stub-1"

    def __init__(self, seconds: float):
        self.seconds = seconds

    def generate(self, requests, progress=False):
        time.sleep(self.seconds * len(requests))
        return [STUB_REVIEW for _ in requests]


class Timed:
    """Forwards to a backend and adds up the seconds spent in its ``generate``."""

    def __init__(self, inner):
        self.inner, self.seconds, self.calls = inner, 0.0, 0
        self.name, self.model, self.model_revision = inner.name, inner.model, inner.model_revision
        self.tokenizer = getattr(inner, "tokenizer", None)

    def generate(self, requests, progress=False, on_answer=None):
        start = time.perf_counter()
        try:
            return self.inner.generate(requests, progress=progress, on_answer=on_answer)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += len(requests)


def synthetic_papers(n: int, words: int):
    rows = []
    for i in range(n):
        body = " ".join(WORDS[(i * 7 + j * 13) % len(WORDS)] for j in range(words))
        text = (f"# Paper {i}\n\n## 1 Introduction\n{body}\n\n## References\n[1] A. Author. A title. 2020.\n\n"
                f"# A Appendix\nProofs.\n")
        rows.append(coerce_record({"paper_id": f"paper-{i:04d}", "venue": "ICLR", "year": 2025, "text": text},
                                  "paper", "benchmark"))
    return records_to_dataset(rows, "paper")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["transformers", "stub"], default="transformers")
    parser.add_argument("--papers", type=int, default=32)
    parser.add_argument("--words", type=int, default=6000, help="words per synthetic paper")
    parser.add_argument("--prompt", default="extended")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--token-budget", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seconds-per-review", type=float, default=0.5, help="stub backend only")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="praib-overhead-") as tmp:
        tmp = Path(tmp)
        if args.backend == "transformers":
            inner = make_backend("transformers", str(build_tiny_chat_model(tmp / "tiny")))
        else:
            inner = StubModel(args.seconds_per_review)
        papers = synthetic_papers(args.papers, args.words)
        prompt = load_prompt(args.prompt)
        sampling = SamplingConfig(max_new_tokens=args.max_new_tokens, temperature=0.0, seed=0)

        def one_run(name: str):
            timed = Timed(inner)
            backend = CachedBackend(timed, CallCache(tmp / "cache"))
            start = time.perf_counter()
            result = run_generation(papers, backend, prompt, venue="ICLR", year=2025, output=tmp / f"{name}.parquet",
                                    sampling=sampling, token_budget=args.token_budget, remove_appendix=True,
                                    batch_size=args.batch_size, progress=False)
            return time.perf_counter() - start, timed, result

        total, timed, result = one_run("first")
        cached_total, cached_timed, cached = one_run("second")

    overhead = total - timed.seconds
    n = len(papers)
    print(f"backend: {args.backend} ({inner.model if args.backend == 'stub' else 'tiny random Llama, CPU'}), "
          f"prompt: {args.prompt}, {n} papers of {args.words} words, token budget {args.token_budget}, "
          f"max_new_tokens {args.max_new_tokens}, batch size {args.batch_size}")
    print(f"papers truncated: {result.summary.n_truncated}, appendix removed: {result.summary.n_appendix_removed}, "
          f"parsed ok: {result.summary.n_parsed}, unparsed: {result.summary.n_unparsed}")
    print(f"run wall time:         {total:8.3f} s")
    print(f"backend generation:    {timed.seconds:8.3f} s  ({timed.calls} requests, {timed.seconds / n * 1000:.1f} ms/review)")
    print(f"praib overhead:        {overhead:8.3f} s  ({overhead / n * 1000:.1f} ms/review)")
    print(f"overhead / generation: {overhead / timed.seconds:8.2%}  (target < 5%)")
    print(f"identical rerun, all from cache: {cached_total:.3f} s ({cached_timed.calls} backend requests, "
          f"{cached.summary.n_from_cache} from cache) = {cached_total / timed.seconds:.2%} of generation")
    if overhead / timed.seconds >= 0.05:
        sys.exit("overhead is above 5% of generation time")


if __name__ == "__main__":
    main()
