"""Papers as generation input: loading, token counting, truncation, appendix removal.

:func:`load_papers` reads the papers to review, either from a directory of
``.md``/``.txt`` files (the file name without its suffix is the paper id) or
from any papers dataset :func:`praib.records.load_records` accepts.

:func:`prepare_paper_text` fits a paper's text to the model's effective
context: it optionally removes the appendix (as the counterfactual-review
study does for every reviewer it tests) and then truncates the text at the end
to a token budget (the PRAIB benchmark uses 50,000 tokens). Both steps are
reported on the returned :class:`PreparedPaper`, and :mod:`praib.generation.run`
copies them into each review's ``generation`` record.

Token counts
------------
With a tokenizer (:func:`tokenizer_counter`, used whenever the backend exposes
one, e.g. the transformers and vLLM backends, or when ``--tokenizer`` is given)
counts and cuts are exact: the text is encoded once and cut at the character
offset of the first token past the budget. Without one,
:func:`approximate_tokens` estimates ``ceil(1.3 * whitespace-separated words)``
(about right for English prose with BPE tokenizers; LaTeX and tables run
higher) and truncation keeps the first ``floor(budget / 1.3)`` words.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from datasets import Dataset

from praib.llm.budget import PromptMeter, too_long
from praib.records import coerce_record, load_records, records_to_dataset
from praib.records.duplicates import drop_duplicates

logger = logging.getLogger(__name__)

PAPER_SUFFIXES = (".md", ".txt")
DEFAULT_TOKEN_BUDGET = 50_000
WORDS_TO_TOKENS = 1.3


class PaperError(ValueError):
    """Papers that cannot be used as generation input; the message says which and why."""


# --------------------------------------------------------------------------- loading

def _title_of(text: str) -> str | None:
    for line in text.splitlines()[:50]:
        match = re.match(r"^#\s+(.+?)\s*#*\s*$", line)
        if match:
            return match.group(1).strip()
    return None


def _read_paper(path: Path) -> str:
    """A paper file's text. Bytes that are not UTF-8 (a stray letter of another encoding) read as U+FFFD,
    with a warning that names the first: the rest of the paper is still worth reviewing."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        logger.warning("%s: line %d: byte 0x%02x at byte offset %d is not UTF-8; it (and any other such byte) is "
                       "read as U+FFFD", path, data.count(b"\n", 0, err.start) + 1, data[err.start], err.start)
        return data.decode("utf-8", errors="replace")


def _is_dataset_dir(path: Path) -> bool:
    return ((path / "dataset_info.json").exists() or (path / "state.json").exists()
            or any(path.rglob("*.parquet")) or any(path.rglob("*.jsonl")))


def load_papers(source: str | Path, *, venue: str | None = None, year: int | None = None,
                decision: str | None = None, split: str = "train") -> Dataset:
    """Papers to review, as a Dataset with ``PAPER_FEATURES``.

    ``source`` is a directory of ``.md``/``.txt`` files (paper id = file stem,
    title = the first ``# `` heading; ``venue``/``year``/``decision`` are None
    unless given here), or anything :func:`load_records` reads as papers (JSONL,
    JSON, Parquet, a saved dataset, a Hub id). For datasets, ``venue``, ``year``
    and ``decision`` only fill records that lack them. Raises :class:`PaperError`
    when there are no papers or a paper has no text, and :class:`praib.records.RecordError` when
    one paper id (and perturbation) is used by papers with different content (see
    :mod:`praib.records.duplicates`; exact repeats are dropped with a warning).
    """
    path = Path(source)
    if path.is_dir() and not _is_dataset_dir(path):
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in PAPER_SUFFIXES)
        if not files:
            raise PaperError(f"{path}: no .md or .txt papers and no paper records in this folder (PDFs: the "
                             "commands convert them, as `praib data pdf` does)")
        rows = []
        for file in files:
            text = _read_paper(file)
            rows.append(coerce_record({"paper_id": file.stem, "venue": venue, "year": year, "decision": decision,
                                       "title": _title_of(text), "text": text}, "paper", str(file)))
        # paper.md and paper.txt are one paper id
        papers = records_to_dataset(drop_duplicates(rows, "paper", str(path)), "paper")
    elif path.is_file() and path.suffix.lower() in PAPER_SUFFIXES:
        text = _read_paper(path)
        papers = records_to_dataset([coerce_record({"paper_id": path.stem, "venue": venue, "year": year,
                                                    "decision": decision, "title": _title_of(text), "text": text},
                                                   "paper", str(path))], "paper")
    else:
        papers = load_records(source, "paper", split=split)
        if venue is not None or year is not None or decision is not None:
            fill = {"venue": venue, "year": year, "decision": decision}

            def _fill(row: dict[str, Any]) -> dict[str, Any]:
                return {k: row[k] if row[k] is not None or v is None else v for k, v in fill.items()}

            papers = papers.map(_fill, features=papers.features)
    empty = [pid for pid, text in zip(papers["paper_id"], papers["text"]) if not text or not text.strip()]
    if empty:
        raise PaperError(f"{source}: {len(empty)} of {len(papers)} papers have no text "
                         f"({', '.join(empty[:5])}{', ...' if len(empty) > 5 else ''}); "
                         "generation needs each paper's full text in the 'text' field")
    return papers


# --------------------------------------------------------------------------- token counting

class TokenCounter(Protocol):
    """Counts tokens; an optional ``truncate(text, budget) -> (text, tokens)`` makes cuts exact and fast."""

    def __call__(self, text: str) -> int: ...


_WORD = re.compile(r"\S+")


def approximate_tokens(text: str) -> int:
    """``ceil(1.3 * number of whitespace-separated words)``: the tokenizer-free estimate."""
    return math.ceil(WORDS_TO_TOKENS * sum(1 for _ in _WORD.finditer(text)))


def _approximate_truncate(text: str, budget: int) -> tuple[str, int]:
    keep = int(budget / WORDS_TO_TOKENS)
    end = 0
    for count, match in enumerate(_WORD.finditer(text), start=1):
        if count > keep:
            return text[:end], approximate_tokens(text[:end])
        end = match.end()
    return text, approximate_tokens(text)


approximate_tokens.truncate = _approximate_truncate  # type: ignore[attr-defined]


class tokenizer_counter:  # noqa: N801 - used like a function
    """Exact token counts and cuts with a Hugging Face (fast or slow) tokenizer.

    Special tokens are not counted: the budget is for the paper's own text. A cut
    keeps the text up to the end of the ``budget``-th token. To find it in a long
    paper only a prefix is encoded (``budget * 8`` characters, doubled until it
    holds 64 tokens more than the budget): BPE and SentencePiece merges do not
    reach across that margin, so the first ``budget`` tokens are those of the
    whole text. :meth:`truncate_many` encodes many papers in one batched call,
    which fast tokenizers run in parallel.
    """

    CHARS_PER_TOKEN = 8
    MARGIN = 64

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer

    def _encode(self, texts: list[str], offsets: bool) -> dict:
        kwargs: dict[str, Any] = {"add_special_tokens": False, "verbose": False}
        if offsets:
            kwargs["return_offsets_mapping"] = True
        try:
            return self.tokenizer(texts, **kwargs)
        except TypeError:  # a tokenizer-like callable without ``verbose``
            kwargs.pop("verbose")
            return self.tokenizer(texts, **kwargs)

    def __call__(self, text: str) -> int:
        return len(self._encode([text], False)["input_ids"][0])

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self._encode(list(texts), False)["input_ids"]] if texts else []

    def truncate(self, text: str, budget: int) -> tuple[str, int]:
        return self.truncate_many([text], budget)[0]

    def truncate_many(self, texts: Sequence[str], budget: int) -> list[tuple[str, int]]:
        """``(text cut to at most budget tokens, its token count)`` for each text."""
        results: list[tuple[str, int] | None] = [None] * len(texts)
        cuts: dict[int, str] = {}
        todo = list(range(len(texts)))
        length = budget * self.CHARS_PER_TOKEN
        while todo:
            prefixes = [texts[i][:length] for i in todo]
            try:
                encoded = self._encode(prefixes, True)
                all_offsets = encoded["offset_mapping"]
            except (NotImplementedError, KeyError, TypeError, ValueError):  # slow tokenizers have no offsets
                return [self._truncate_by_decoding(t, budget) for t in texts]
            retry = []
            for i, prefix, ids, offsets in zip(todo, prefixes, encoded["input_ids"], all_offsets):
                whole = len(prefix) == len(texts[i])
                if whole and len(ids) <= budget:
                    results[i] = (texts[i], len(ids))
                elif whole or len(ids) >= budget + self.MARGIN:
                    cuts[i] = texts[i][:offsets[budget - 1][1]]
                else:
                    retry.append(i)
            todo, length = retry, length * 2
        if cuts:
            order = list(cuts)
            for i, count in zip(order, self.count_many([cuts[i] for i in order])):
                results[i] = (cuts[i], count)
        return results  # type: ignore[return-value]

    def _truncate_by_decoding(self, text: str, budget: int) -> tuple[str, int]:
        ids = self._encode([text], False)["input_ids"][0]
        if len(ids) <= budget:
            return text, len(ids)
        cut = self.tokenizer.decode(ids[:budget], skip_special_tokens=True)
        return cut, self(cut)


# --------------------------------------------------------------------------- appendix removal

_NUMBER = r"(?:[A-Z](?:\.\d+)*\.?|\d+(?:\.\d+)*\.?|[IVX]+\.)"
_DECOR = r"[#*_\s]*"
_REFERENCES_HEADING = re.compile(
    rf"^{_DECOR}(?:{_NUMBER}\s+)?(?:references|bibliography|works\s+cited|literature\s+cited|reference\s+list)"
    rf"[\s*_:]*$", re.IGNORECASE | re.MULTILINE)
_APPENDIX_WORDS = (r"(?:appendix|appendices|supplementary(?:\s+materials?|\s+information)?|"
                   r"supplemental\s+materials?|technical\s+appendix)")
# A heading that starts the appendix: "# Appendix", "A Appendix", "Appendix A: Proofs",
# "**Supplementary Material**", "APPENDICES". Short, and no sentence after the words.
_APPENDIX_HEADING = re.compile(
    rf"^{_DECOR}(?:{_NUMBER}\s+)?{_APPENDIX_WORDS}\b(?:\s+{_NUMBER})?(?:\s*[:.\-\u2013\u2014]\s*[^\n.]{{0,80}})?"
    rf"[\s*_]*$", re.IGNORECASE | re.MULTILINE)
# After the references, a markdown heading numbered with a letter ("# A Proof of Theorem 1",
# "## B. Additional experiments") also starts the appendix.
_LETTERED_HEADING = re.compile(r"^#{1,6}\s*\**\s*[A-Z](?:\.\d+)*\.?\s+\S[^\n]{0,120}$", re.MULTILINE)


def find_appendix(text: str) -> int | None:
    """Character offset where the appendix starts, or None.

    The appendix starts at the first heading after the references heading that
    names an appendix or supplementary material ("Appendix", "A Appendix",
    "Appendix A: Proofs", "Supplementary Material") or is a markdown heading
    numbered with a letter ("# A Proofs"). A paper without a references
    heading loses nothing unless a markdown ``#`` heading named "Appendix" (or
    "Supplementary Material") stands in the second half of the text. Mentions
    of the appendix in running text ("see Appendix B") never count.
    """
    references = list(_REFERENCES_HEADING.finditer(text))
    if references:
        after = references[-1].end()
        candidates = [m.start() for m in _APPENDIX_HEADING.finditer(text, after)]
        candidates += [m.start() for m in _LETTERED_HEADING.finditer(text, after)]
        return min(candidates) if candidates else None
    for match in _APPENDIX_HEADING.finditer(text):
        if match.group(0).lstrip().startswith("#") and match.start() >= len(text) / 2:
            return match.start()
    return None


def remove_appendix(text: str) -> tuple[str, bool]:
    """``(text without its appendix, whether one was found)``; see :func:`find_appendix`."""
    start = find_appendix(text)
    if start is None:
        return text, False
    return text[:start].rstrip() + "\n", True


_remove_appendix = remove_appendix  # prepare_paper_text's flag shadows the name


# --------------------------------------------------------------------------- preparing

@dataclass(frozen=True)
class PreparedPaper:
    text: str             # what the prompt receives
    tokens: int           # tokens of ``text`` (after appendix removal and truncation)
    truncated: bool       # cut at the end to fit the token budget
    appendix_removed: bool


def prepare_paper_text(text: str, token_budget: int | None = DEFAULT_TOKEN_BUDGET,
                       count_tokens: Callable[[str], int] | None = None,
                       remove_appendix: bool = False) -> PreparedPaper:
    """Remove the appendix (optional), then truncate at the end to ``token_budget`` tokens.

    ``count_tokens`` counts tokens (a :func:`tokenizer_counter`, or any callable;
    one with a ``truncate(text, budget)`` method cuts exactly in one pass,
    others are cut by bisection over word boundaries). Without it the
    approximation :func:`approximate_tokens` is used. ``token_budget=None``
    never truncates.
    """
    if token_budget is not None and token_budget < 1:
        raise ValueError(f"token_budget must be positive, got {token_budget}")
    counter = count_tokens or approximate_tokens
    appendix_removed = False
    if remove_appendix:
        text, appendix_removed = _remove_appendix(text)
    if token_budget is None:
        return PreparedPaper(text, counter(text), False, appendix_removed)
    truncate = getattr(counter, "truncate", None)
    if truncate is not None:
        cut, tokens = truncate(text, token_budget)
        return PreparedPaper(cut, tokens, len(cut) < len(text), appendix_removed)
    tokens = counter(text)
    if tokens <= token_budget:
        return PreparedPaper(text, tokens, False, appendix_removed)
    ends = [m.end() for m in _WORD.finditer(text)]
    low, high = 0, len(ends)  # the longest word prefix that fits: ends[low - 1]
    while low < high:
        mid = (low + high + 1) // 2
        if counter(text[:ends[mid - 1]]) <= token_budget:
            low = mid
        else:
            high = mid - 1
    cut = text[:ends[low - 1]] if low else ""
    return PreparedPaper(cut, counter(cut), True, appendix_removed)


def prepare_papers(texts: Sequence[str], token_budget: int | None = DEFAULT_TOKEN_BUDGET,
                   count_tokens: Callable[[str], int] | None = None,
                   remove_appendix: bool = False) -> list[PreparedPaper]:
    """:func:`prepare_paper_text` for many papers; with a :class:`tokenizer_counter` the papers are
    encoded in batches (in parallel for fast tokenizers) rather than one by one."""
    counter = count_tokens or approximate_tokens
    many = getattr(counter, "truncate_many", None)
    if many is None or token_budget is None:
        return [prepare_paper_text(t, token_budget, counter, remove_appendix) for t in texts]
    if token_budget < 1:
        raise ValueError(f"token_budget must be positive, got {token_budget}")
    removed = [_remove_appendix(t) if remove_appendix else (t, False) for t in texts]
    out = []
    for start in range(0, len(removed), 256):  # bounded memory for the offsets of long papers
        chunk = removed[start:start + 256]
        for (text, appendix_removed), (cut, tokens) in zip(chunk, many([t for t, _ in chunk], token_budget)):
            out.append(PreparedPaper(cut, tokens, len(cut) < len(text), appendix_removed))
    return out


# --------------------------------------------------------------------------- fitting the context

#: Rendered in the paper's place to measure the rest of a prompt (a prompt refuses an empty paper).
PAPERLESS = "."
#: Tokens the seam between a paper and the rest of its prompt may add (merges across it differ from
#: the paper counted alone): a prompt within this of the context is counted whole.
SEAM_TOKENS = 16


def fit_papers(texts: Sequence[str], render: Callable[[int, str], Sequence[tuple[str, str]]],
               meter: PromptMeter | None, max_new_tokens: int, token_budget: int | None = DEFAULT_TOKEN_BUDGET,
               count_tokens: Callable[[str], int] | None = None,
               remove_appendix: bool = False) -> tuple[list[PreparedPaper | None], dict[int, str]]:
    """:func:`prepare_papers`, each paper cut to what its prompt leaves of the model's context.

    ``render(i, paper_text)`` is the prompt (messages) of paper ``i``. With a ``meter`` (the model's
    context and its prompt counter) paper ``i`` gets at most ``min(token_budget, context - tokens of
    its prompt without the paper - max_new_tokens)`` tokens; when the meter counts exactly, a prompt
    that comes within :data:`SEAM_TOKENS` of the context is counted whole and its paper cut further
    if the two parts together came out longer. Returns the prepared papers (None for one that cannot
    fit) and, per such paper, why.
    """
    if meter is None:
        return list(prepare_papers(texts, token_budget, count_tokens, remove_appendix)), {}
    problems: dict[int, str] = {}
    budgets: dict[int, int] = {}
    bare_tokens: dict[int, int] = {}
    counted: dict[tuple, int] = {}  # papers of one venue-year share the rest of their prompt: count it once
    for i in range(len(texts)):
        bare = tuple(render(i, PAPERLESS))
        if bare not in counted:
            counted[bare] = meter.count(bare)
        bare_tokens[i] = counted[bare]
        room = meter.context - counted[bare] - max_new_tokens
        if room < 1:
            problems[i] = too_long(counted[bare], max_new_tokens, meter.context, "the prompt without the paper")
        else:
            budgets[i] = room if token_budget is None else min(token_budget, room)
    prepared: list[PreparedPaper | None] = [None] * len(texts)
    by_budget: dict[int, list[int]] = {}
    for i, budget in budgets.items():
        by_budget.setdefault(budget, []).append(i)
    for budget, group in by_budget.items():
        for i, paper in zip(group, prepare_papers([texts[i] for i in group], budget, count_tokens, remove_appendix)):
            prepared[i] = paper
    if meter.exact:
        for i in budgets:
            if bare_tokens[i] + prepared[i].tokens + max_new_tokens <= meter.context - SEAM_TOKENS:
                continue  # far enough from the limit for what the seam can add
            over = meter.count(render(i, prepared[i].text)) + max_new_tokens - meter.context
            if over <= 0:
                continue
            smaller = prepared[i].tokens - over - SEAM_TOKENS
            refit = prepare_paper_text(texts[i], smaller, count_tokens, remove_appendix) if smaller > 0 else None
            total = meter.count(render(i, refit.text)) if refit is not None else None
            if total is None or total + max_new_tokens > meter.context:
                problems[i] = too_long(total or bare_tokens[i], max_new_tokens, meter.context,
                                       "the prompt, with the paper cut to the smallest size tried,")
                prepared[i] = None
            else:
                prepared[i] = PreparedPaper(refit.text, refit.tokens, True, refit.appendix_removed)
    return prepared, problems
