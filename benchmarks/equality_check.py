"""The text kernel and the review parser give today's values, text by text and field by field, on the
parser-and-metrics corpus (``benchmarks/review_corpus.py``).

    python benchmarks/equality_check.py [--size 150000] [--seed 0] [--against DIR] [--workdir DIR]

Checks, on ``--size`` texts of the corpus:

1. ``score_texts`` (its default workers, the corpus in batches of 4,096 texts as ``praib evaluate``
   calls it) against the per-text functions it stands for (``readability``, ``xref_counts``,
   ``paper_xref_counts``, ``count_citations``): every column of every text exactly equal, NaN in the same places;
2. with ``--against DIR`` (another checkout of praib, e.g. ``git archive`` of the commit before a
   change), ``score_texts`` there and here, and the parser there and here, field by field: every
   section, rating, confidence, sub-score, recommendation, status and reason of ``parse_review``
   (on the row's venue-year scales, the generic ones without), the strength and weakness bullets of
   ``strength_weakness_bullets`` and the end of every section of ``section_end``. ``DIR``'s results
   come from a subprocess that imports praib from there.

Prints the counts checked, every mismatch (at most 10 a field) and exits with 1 if there was one.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

BATCH = 4096
SECTIONS = ("summary", "strengths", "weaknesses", "questions", "limitations", "additional_feedback")


def emit(corpus_path: Path, out_path: Path) -> None:
    """Scores and parses of the corpus with the praib this interpreter imports, pickled to ``out_path``."""
    import numpy as np

    from praib.metrics.text.textstats import TEXT_METRICS, score_texts
    from praib.parsing import parse_review, section_end, strength_weakness_bullets
    from praib.scales import UnknownScaleError, generic_scales, venue_scales

    rows = [json.loads(line) for line in corpus_path.open(encoding="utf-8")]
    texts = [row["text"] for row in rows]
    started = time.perf_counter()
    parts = [score_texts(texts[i:i + BATCH]) for i in range(0, len(texts), BATCH)]
    scores = {name: np.concatenate([part[name] for part in parts]) for name in TEXT_METRICS}
    kernel_seconds = time.perf_counter() - started
    scales = {}
    parsed = []
    started = time.perf_counter()
    for row in rows:
        key = (row["venue"], row["year"])
        if key not in scales:
            try:
                scales[key] = venue_scales(*key) if key[0] else generic_scales()
            except UnknownScaleError:
                scales[key] = generic_scales()
        review = parse_review(row["text"], scales[key])
        parsed.append((review.sections, review.rating, review.confidence, review.subscores, review.recommendation,
                       review.status, review.reason))
    parse_seconds = time.perf_counter() - started
    extras = [(strength_weakness_bullets(row["text"]), tuple(section_end(row["text"], name) for name in SECTIONS))
              for row in rows]
    with out_path.open("wb") as out:
        pickle.dump({"scores": scores, "parsed": parsed, "extras": extras, "kernel_seconds": kernel_seconds,
                     "parse_seconds": parse_seconds}, out)


def per_text_scores(texts: list) -> dict:
    """Every column of TEXT_METRICS from the per-text functions."""
    import numpy as np

    from praib.metrics.text.citations import count_citations
    from praib.metrics.text.readability import readability
    from praib.metrics.text.textstats import TEXT_METRICS
    from praib.metrics.text.xref import PAPER_DIFFERING_TYPES, XREF_TYPES, paper_xref_counts, xref_counts

    rows = []
    for text in texts:
        if text is None or not text.strip():
            rows.append([math.nan] * len(TEXT_METRICS))
            continue
        r = readability(text)
        counts = xref_counts(text)
        total = sum(counts.values())
        row = {"tkc": r.tkc, "ttr": r.ttr, "fre": r.fre, "fkg": r.fkg, "xref": total,
               "xref_per_100_tokens": 100 * total / r.tkc if r.tkc else None, "citations": count_citations(text)}
        row.update({f"xref_{t}": counts[t] for t in XREF_TYPES})
        paper = paper_xref_counts(text)
        row.update({"xref_paper": sum(paper.values()), **{f"xref_paper_{t}": paper[t] for t in PAPER_DIFFERING_TYPES}})
        rows.append([math.nan if row[name] is None else float(row[name]) for name in TEXT_METRICS])
    table = np.array(rows, dtype=np.float64).reshape(len(rows), len(TEXT_METRICS))
    return {name: table[:, j] for j, name in enumerate(TEXT_METRICS)}


def compare_columns(what: str, expected: dict, found: dict, texts: list) -> int:
    import numpy as np

    bad = 0
    for name, column in expected.items():
        same = (column == found[name]) | (np.isnan(column) & np.isnan(found[name]))
        wrong = np.flatnonzero(~same)
        bad += len(wrong)
        for i in wrong[:10].tolist():
            print(f"MISMATCH {what} {name} text {i}: expected {column[i]!r}, found {found[name][i]!r}: "
                  f"{texts[i]!r:.200}")
    return bad


def compare_lists(what: str, fields: tuple[str, ...], expected: list, found: list, texts: list) -> int:
    bad = 0
    for j, field in enumerate(fields):
        wrong = [i for i, (a, b) in enumerate(zip(expected, found)) if a[j] != b[j]]
        bad += len(wrong)
        for i in wrong[:10]:
            print(f"MISMATCH {what} {field} text {i}: expected {expected[i][j]!r:.300}, found {found[i][j]!r:.300}: "
                  f"{texts[i]!r:.200}")
    return bad


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=150_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--against", type=Path, help="another checkout of praib to compare with")
    parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "praib-bench")
    parser.add_argument("--emit", nargs=2, type=Path, metavar=("CORPUS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.emit:
        emit(*args.emit)
        return 0

    here = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(here))
    from review_corpus import corpus

    args.workdir.mkdir(parents=True, exist_ok=True)
    corpus_path = args.workdir / f"corpus-{args.size}-seed{args.seed}.jsonl"
    if not corpus_path.exists():
        partial = corpus_path.with_name(corpus_path.name + ".partial")
        with partial.open("w", encoding="utf-8") as out:
            for row in corpus(args.size, args.seed):
                out.write(json.dumps(row) + "\n")
        os.replace(partial, corpus_path)
    rows = [json.loads(line) for line in corpus_path.open(encoding="utf-8")]
    texts = [row["text"] for row in rows]
    kinds: dict[str, int] = {}
    for row in rows:
        kinds[row["kind"]] = kinds.get(row["kind"], 0) + 1
    characters = sum(len(text or "") for text in texts) / 1e6
    parts = ", ".join(f"{n:,} {kind}" for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    print(f"corpus: {len(rows):,} texts, {characters:.0f} M characters ({parts})")
    print(f"load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")

    results = {}
    for name, tree in (("here", here), ("against", args.against)):
        if tree is None:
            continue
        out = args.workdir / f"equality-{name}-{args.size}-seed{args.seed}.pickle"
        environment = dict(os.environ, PYTHONPATH=str(tree.resolve()))
        subprocess.run([sys.executable, __file__, "--emit", str(corpus_path), str(out)], env=environment, check=True)
        with out.open("rb") as handle:
            results[name] = pickle.load(handle)
        print(f"{name} ({tree}): score_texts {len(texts) / results[name]['kernel_seconds']:,.0f} texts/s, "
              f"parse_review {len(texts) / results[name]['parse_seconds']:,.0f} texts/s")

    started = time.perf_counter()
    bad = compare_columns("kernel vs per-text functions", per_text_scores(texts), results["here"]["scores"], texts)
    print(f"score_texts vs the per-text functions: {len(texts):,} texts x {len(results['here']['scores'])} columns, "
          f"{bad} mismatches ({time.perf_counter() - started:.0f} s)")
    if "against" in results:
        old, new = results["against"], results["here"]
        n = compare_columns("kernel vs --against", old["scores"], new["scores"], texts)
        print(f"score_texts here vs --against: {len(texts):,} texts x {len(old['scores'])} columns (those --against "
              f"has), {n} mismatches")
        bad += n
        fields = ("sections", "rating", "confidence", "subscores", "recommendation", "status", "reason")
        n = compare_lists("parse_review", fields, old["parsed"], new["parsed"], texts)
        m = compare_lists("bullets/section_end", ("bullets", "section_end"), old["extras"], new["extras"], texts)
        print(f"parser here vs --against: {len(texts):,} texts x {len(fields)} fields of parse_review "
              f"+ bullets + section ends, {n + m} mismatches")
        bad += n + m
    print("identical" if not bad else f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
