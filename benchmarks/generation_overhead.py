"""praib's own overhead in a generation run, against the backend's generation time.

    python benchmarks/generation_overhead.py                      # tiny transformers model on CPU
    python benchmarks/generation_overhead.py --backend stub --seconds-per-review 0.5
    python benchmarks/generation_overhead.py --backend vllm       # vLLM itself (GPU, or the CPU build)

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
and returns a well-formed ICLR 2025 review, so that parsing does real work; ``vllm`` runs the tiny
model (or ``--model``) in vLLM's offline engine and, in the same run and on the same warm engine,
sends the very prompts praib sent straight to ``LLM.chat``: praib's overhead is its run's wall
time over that raw call's (target: under 2%; prefix caching is off so neither run profits from
the other). Every run prints the machine's load average: compare ratios of runs at similar load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))  # for build_tiny_model

from praib.llm.backends import SamplingConfig, build_vllm_requests, make_backend  # noqa: E402
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

    def generate(self, requests, progress=False, on_answer=None):
        time.sleep(self.seconds * len(requests))
        for index in range(len(requests)):
            if on_answer is not None:
                on_answer(index, STUB_REVIEW)
        return [STUB_REVIEW for _ in requests]


class Timed:
    """Forwards to a backend, adds up the seconds spent in its ``generate`` and keeps the requests."""

    def __init__(self, inner):
        self.inner, self.seconds, self.calls, self.requests = inner, 0.0, 0, []
        self.name, self.model, self.model_revision = inner.name, inner.model, inner.model_revision

    def generate(self, requests, progress=False, on_answer=None):
        start = time.perf_counter()
        self.requests.extend(requests)
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
    parser.add_argument("--backend", choices=["transformers", "stub", "vllm"], default="transformers")
    parser.add_argument("--model", help="vllm: a model to run instead of the tiny random one")
    parser.add_argument("--engine-arg", action="append", default=[], metavar="KEY=VALUE",
                        help="vllm: an LLM(...) argument (JSON values), e.g. dtype=float32")
    parser.add_argument("--papers", type=int, default=32)
    parser.add_argument("--words", type=int, default=6000, help="words per synthetic paper")
    parser.add_argument("--prompt", default="extended")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--token-budget", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=16, help="transformers and stub; vllm gets every request at once")
    parser.add_argument("--seconds-per-review", type=float, default=0.5, help="stub backend only")
    parser.add_argument("--rounds", type=int, default=3, help="vllm: praib runs and raw calls, alternated (medians)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="praib-overhead-") as tmp:
        tmp = Path(tmp)
        if args.backend == "stub":
            inner = StubModel(args.seconds_per_review)
        elif args.backend == "transformers":
            inner = make_backend("transformers", str(build_tiny_chat_model(tmp / "tiny")))
        else:
            engine = {"dtype": "float32", "enforce_eager": True, "max_model_len": 8192, "enable_prefix_caching": False}
            for pair in args.engine_arg:
                key, _, value = pair.partition("=")
                try:
                    engine[key] = json.loads(value)
                except ValueError:
                    engine[key] = value
            inner = make_backend("vllm", args.model or str(build_tiny_chat_model(tmp / "tiny")), **engine)
        papers = synthetic_papers(args.papers, args.words)
        prompt = load_prompt(args.prompt)
        sampling = SamplingConfig(max_new_tokens=args.max_new_tokens, temperature=0.0, seed=0)
        batch_size = None if args.backend == "vllm" else args.batch_size

        def one_run(name: str, cache: str = "cache"):
            timed = Timed(inner)
            backend = CachedBackend(timed, CallCache(tmp / cache))
            start = time.perf_counter()
            result = run_generation(papers, backend, prompt, venue="ICLR", year=2025, output=tmp / f"{name}.parquet",
                                    sampling=sampling, token_budget=args.token_budget, remove_appendix=True,
                                    batch_size=batch_size, progress=False)
            return time.perf_counter() - start, timed, result

        total, timed, result = one_run("first")
        cached_total, cached_timed, cached = one_run("second")
        raw = None
        if args.backend == "vllm":
            # Rounds alternate praib (each with a fresh cache) and the raw call on the same prompts; the
            # medians damp the noise of a shared machine.
            conversations, params = build_vllm_requests(timed.requests, inner._vllm)
            totals, raws = [total], []
            for round_number in range(args.rounds):
                start = time.perf_counter()
                inner.llm.chat(conversations, sampling_params=params, use_tqdm=False)
                raws.append(time.perf_counter() - start)
                if round_number + 1 < args.rounds:
                    totals.append(one_run(f"round{round_number}", f"cache{round_number}")[0])
            total, raw = statistics.median(totals), statistics.median(raws)
            inner.close()

    n = len(papers)
    generation = raw if raw is not None else timed.seconds
    overhead = total - generation
    target = 0.02 if raw is not None else 0.05
    what = {"stub": inner.model, "transformers": "tiny random Llama, CPU", "vllm": args.model or "tiny random Llama"}
    print(f"backend: {args.backend} ({what[args.backend]}), prompt: {args.prompt}, {n} papers of {args.words} words, "
          f"token budget {args.token_budget}, max_new_tokens {args.max_new_tokens}, "
          f"batch size {batch_size or 'all'}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"papers truncated: {result.summary.n_truncated}, appendix removed: {result.summary.n_appendix_removed}, "
          f"parsed ok: {result.summary.n_parsed}, unparsed: {result.summary.n_unparsed}")
    print(f"run wall time:         {total:8.3f} s")
    if raw is not None:
        print(f"raw LLM.chat, same prompts, same engine: {raw:8.3f} s  ({raw / n * 1000:.1f} ms/review); "
              f"medians of {args.rounds} rounds")
    else:
        print(f"backend generation:    {timed.seconds:8.3f} s  ({timed.calls} requests, "
              f"{timed.seconds / n * 1000:.1f} ms/review)")
    print(f"praib overhead:        {overhead:8.3f} s  ({overhead / n * 1000:.1f} ms/review)")
    print(f"overhead / generation: {overhead / generation:8.2%}  (target < {target:.0%})")
    print(f"identical rerun, all from cache: {cached_total:.3f} s ({cached_timed.calls} backend requests, "
          f"{cached.summary.n_from_cache} from cache) = {cached_total / generation:.2%} of generation")
    if overhead / generation >= target:
        sys.exit(f"overhead is above {target:.0%} of generation time")


if __name__ == "__main__":
    main()
