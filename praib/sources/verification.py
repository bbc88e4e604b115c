"""Verification of formatted references against Crossref, OpenAlex, DBLP or an offline bibliography.

PRAIB (section 4.2, Table 1's "Cit." column) checks every MLA/APA/IEEE reference a review gives
(:func:`praib.metrics.text.citations.find_citations`) against bibliographic databases, so that invented
references show up. A reference is *verified* when one of the sources returns a record that
passes the matching rule below; *not verified* when the sources answered and none of their
records passed; *unchecked* (``None``) when no source answered at all (network failure, rate
limit beyond patience, malformed body). Unchecked references are reported, never counted as
hallucinated.

Matching rule (:func:`match`), all three parts must hold:

1. **Title similarity** at least :data:`TITLE_THRESHOLD` (0.9). Both titles are normalised:
   diacritics removed (NFKD), case folded, hyphens joined ("Pre-training" = "pretraining"),
   other punctuation dropped, and the stop-words of :data:`STOP_WORDS` removed. The similarity is
   :class:`difflib.SequenceMatcher`'s ratio over the two *word* sequences (2 x matched words /
   total words), where a word of the record within one or two letters of a word of the reference
   (character ratio >= 0.8, words of four letters or more) counts as that word, so a typo costs
   nothing while an added or missing word does. difflib is in the standard library and is
   deterministic; a word-level ratio (unlike a character ratio) separates "Attention is all you
   need" from "Attention is *not* all you need" (0.89), and negations are deliberately not
   stop-words.
2. **Year** within one year (preprint versus proceedings). A record without a year fails.
3. **Authors**: when the reference names authors, at least one of their surnames appears among
   the words of a record author's name (diacritics and case ignored). References without
   extracted authors skip this part.

Sources are tried in the order given; the first one whose candidates pass the rule verifies the
reference and the rest are not asked.

HTTP sources (:class:`Crossref`, :class:`OpenAlex`, :class:`Dblp`) pace their requests per service,
time out, retry 429 and 5xx answers and network errors with exponential backoff (honouring
``Retry-After``), treat malformed bodies as no answer (logged), and keep every well-formed answer
in a shared sqlite :class:`ResponseCache` keyed by service and query, so a rerun sends no request
for what it already has. :class:`Bibliography` is the offline source: DBLP XML, OpenAlex works
JSONL and BibTeX files loaded once into an sqlite database with an FTS5 index for candidates.

A service that no request can reach (its host name does not resolve, or nothing listens on this
machine's port: :func:`praib.http_retry.unreachable_reason`) is found once, before the run
(:func:`make_verifier`) or at its first such failure, and said in one line; from then on it answers
from the cache only and sends nothing. When no source is left that could answer (every service out
of reach, none with a cached answer, and no bibliography), :func:`make_verifier` stops with one line.
"""

from __future__ import annotations

import gzip
import hashlib
import html.entities
import json
import logging
import re
import sqlite3
import time
import unicodedata
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Iterator, Optional, Protocol, Sequence
from urllib.parse import urlencode

import requests
from datasets import Dataset, Features, List, Value

from praib._version import __version__
from praib.http_retry import (GaveUp, Retryable, RetryPolicy, Unreachable, call_with_retries, check_reachable,
                               is_retryable_status, redact_credentials, retry_after_seconds, unreachable_reason)
from praib.metrics.text.citations import Citation, find_citations
from praib.metrics.summary import summarise
from praib.records import RecordError, parse_json

logger = logging.getLogger(__name__)

__all__ = [
    "BibRecord", "Verification", "Verifier", "CandidateSource", "ResponseCache", "Crossref", "OpenAlex", "Dblp",
    "Bibliography", "BibliographyError", "SERVICES", "TITLE_THRESHOLD", "YEAR_TOLERANCE", "STOP_WORDS",
    "title_similarity", "match", "make_verifier", "check_texts", "verification_summary", "verification_rows",
    "VERIFICATION_FEATURES", "parse_services",
]

TITLE_THRESHOLD = 0.9
YEAR_TOLERANCE = 1
STOP_WORDS = frozenset("a an the of for in on to and with by via at from as into is are its or".split())
_TYPO_RATIO = 0.8
_TYPO_MIN_LENGTH = 4


# --- matching rule -----------------------------------------------------------------------

@dataclass(frozen=True)
class BibRecord:
    """A bibliographic record as a source returned it."""

    title: str
    authors: tuple[str, ...]
    year: Optional[int]
    doi: Optional[str] = None
    url: Optional[str] = None


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", re.sub(r"(?<=\w)[-‐‑–](?=\w)", "", _fold(text)))


def title_words(title: str) -> list[str]:
    """The normalised words of a title that the matching rule compares."""
    return [w for w in _words(title) if w not in STOP_WORDS]


def _same_word(word: str, vocabulary: Sequence[str]) -> str:
    """``word``, or the word of ``vocabulary`` it is a typo of."""
    if word in vocabulary or len(word) < _TYPO_MIN_LENGTH:
        return word
    best, best_ratio = word, _TYPO_RATIO
    for candidate in vocabulary:
        if len(candidate) >= _TYPO_MIN_LENGTH:
            ratio = SequenceMatcher(None, word, candidate, autojunk=False).ratio()
            if ratio >= best_ratio:
                best, best_ratio = candidate, ratio
    return best


def title_similarity(cited: str, found: str) -> float:
    """Word-level difflib ratio of the two normalised titles (see the module docstring)."""
    cited_words, found_words = title_words(cited), title_words(found)
    if not cited_words or not found_words:
        return 0.0
    found_words = [_same_word(w, cited_words) for w in found_words]
    return SequenceMatcher(None, cited_words, found_words, autojunk=False).ratio()


def _author_matches(surnames: Sequence[str], authors: Sequence[str]) -> bool:
    names = [set(_words(a)) for a in authors]
    for surname in surnames:
        words = _words(surname)
        if words and any(words[-1] in name for name in names):
            return True
    return False


def match(citation: Citation, record: BibRecord) -> tuple[bool, float]:
    """Whether ``record`` is the work ``citation`` refers to, and their title similarity."""
    similarity = title_similarity(citation.title, record.title)
    passes = (similarity >= TITLE_THRESHOLD
              and record.year is not None and abs(record.year - citation.year) <= YEAR_TOLERANCE
              and (not citation.authors or _author_matches(citation.surnames, record.authors)))
    return passes, similarity


# --- verification ------------------------------------------------------------------------

class CandidateSource(Protocol):
    """Where candidate records come from: an HTTP service or the offline bibliography."""

    name: str

    def candidates(self, citation: Citation) -> Optional[list[BibRecord]]:
        """Records that may be the cited work; ``None`` when the source gave no answer."""


@dataclass(frozen=True)
class Verification:
    """The outcome for one reference.

    ``verified`` is True/False, or None when no source answered (``unanswered`` names the
    sources that did not). ``record`` is the matched record when verified, else the candidate
    with the highest title similarity (if any); ``service`` is where ``record`` came from.
    """

    citation: Citation
    verified: Optional[bool]
    service: Optional[str]
    record: Optional[BibRecord]
    similarity: Optional[float]
    unanswered: tuple[str, ...] = ()


class Verifier:
    """Checks references against ``sources`` in order."""

    def __init__(self, sources: Sequence[CandidateSource]) -> None:
        if not sources:
            raise ValueError("citation verification needs at least one source (a service or a bibliography)")
        self.sources = list(sources)

    def check(self, citation: Citation) -> Verification:
        unanswered: list[str] = []
        closest: Optional[tuple[float, BibRecord, str]] = None
        for source in self.sources:
            candidates = source.candidates(citation)
            if candidates is None:
                unanswered.append(source.name)
                continue
            for record in candidates:
                passes, similarity = match(citation, record)
                if passes:
                    return Verification(citation, True, source.name, record, similarity, tuple(unanswered))
                if closest is None or similarity > closest[0]:
                    closest = (similarity, record, source.name)
        verified = None if len(unanswered) == len(self.sources) else False
        if closest is None:
            return Verification(citation, verified, None, None, None, tuple(unanswered))
        similarity, record, service = closest
        return Verification(citation, verified, service, record, similarity, tuple(unanswered))


def check_texts(texts: Sequence[Optional[str]], verifier: Verifier, progress: bool = False) -> list[list[Verification]]:
    """The verification of every formatted reference of every text, text by text."""
    from praib.records.progress import progress_bar

    return [[verifier.check(c) for c in find_citations(text)]
            for text in progress_bar(texts, desc="verifying citations", unit="review", enabled=progress)]


def verification_summary(per_review: Sequence[Optional[list[Verification]]]) -> dict:
    """Table 1's "Cit." over a group of reviews (``None`` marks a review without text).

    ``share``: per review, verified / checked references (unchecked ones left out), summarised
    over the reviews with at least one checked reference. ``verified`` and ``citations``: counts
    per review (mean, std, n) over the reviews with text, the numerator and denominator that
    PRAIB prints as "verified/total". Totals of references, verified, not verified, unchecked.
    """
    with_text = [checks for checks in per_review if checks is not None]
    shares = []
    for checks in with_text:
        checked = [v for v in checks if v.verified is not None]
        if checked:
            shares.append(sum(v.verified for v in checked) / len(checked))
    everything = [v for checks in with_text for v in checks]
    return {
        "share": summarise(shares),
        "verified": summarise(sum(v.verified is True for v in checks) for checks in with_text),
        "citations": summarise(len(checks) for checks in with_text),
        "n_citations": len(everything),
        "n_verified": sum(v.verified is True for v in everything),
        "n_not_verified": sum(v.verified is False for v in everything),
        "n_unchecked": sum(v.verified is None for v in everything),
    }


# --- HTTP services -----------------------------------------------------------------------

class ResponseCache:
    """Well-formed service answers in an sqlite file, keyed by service and query."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS responses (service TEXT NOT NULL, query TEXT NOT NULL, "
                           "body TEXT NOT NULL, fetched REAL NOT NULL, PRIMARY KEY (service, query))")

    def get(self, service: str, query: str) -> Optional[str]:
        row = self._conn.execute("SELECT body FROM responses WHERE service = ? AND query = ?",
                                 (service, query)).fetchone()
        return row[0] if row else None

    def put(self, service: str, query: str, body: str) -> None:
        self._conn.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)", (service, query, body, time.time()))

    def holds_answers_of(self, service: str) -> bool:
        return self._conn.execute("SELECT 1 FROM responses WHERE service = ? LIMIT 1", (service,)).fetchone() is not None


class MalformedAnswer(ValueError):
    """A body that is not JSON of the service's documented shape."""


class HttpService:
    """A bibliographic search API: polite pacing, timeouts, retries, cache.

    ``interval`` is the least time between two requests to this service; ``max_tries``
    attempts are made on timeouts, connection errors, 429 and 5xx, waiting
    ``backoff * 2**(attempt - 1)`` seconds or the server's ``Retry-After`` if longer. A wait
    longer than ``max_wait`` is not taken: the reference stays unchecked and a rerun asks again.
    ``unreachable`` says why no request can reach the service (None while one may): then it answers
    from the cache only.
    """

    name = ""
    default_base_url = ""
    default_interval = 1.0

    def __init__(self, base_url: Optional[str] = None, contact_email: Optional[str] = None,
                 cache: Optional[ResponseCache] = None, timeout: float = 20.0, max_tries: int = 4,
                 backoff: float = 1.0, interval: Optional[float] = None, max_wait: float = 120.0,
                 rows: int = 5) -> None:
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.contact_email = contact_email
        self.cache = cache
        self.timeout = timeout
        self.max_tries = max_tries
        self.backoff = backoff
        self.interval = self.default_interval if interval is None else interval
        self.max_wait = max_wait
        self.rows = rows
        self.requests_sent = 0
        self.unreachable: Optional[str] = None
        self._last_request = float("-inf")
        self._session = requests.Session()
        contact = f" (mailto:{contact_email})" if contact_email else ""
        self._session.headers["User-Agent"] = f"praib/{__version__}{contact}"

    def query(self, citation: Citation) -> tuple[str, dict]:
        """The path and parameters (without the contact address) that search for ``citation``."""
        raise NotImplementedError

    def parse(self, body: dict) -> list[BibRecord]:
        """The records of a well-formed answer; raises KeyError/TypeError/ValueError otherwise."""
        raise NotImplementedError

    def polite_params(self) -> dict:
        return {"mailto": self.contact_email} if self.contact_email else {}

    def candidates(self, citation: Citation) -> Optional[list[BibRecord]]:
        path, params = self.query(citation)
        key = f"{path}?{urlencode(sorted(params.items()))}"
        body = self.cache.get(self.name, key) if self.cache else None
        fresh = body is None
        if fresh:
            if self.unreachable is not None:
                return None
            body = self._fetch(path, {**params, **self.polite_params()})
            if body is None:
                return None
        try:
            records = self.parse(json.loads(body))
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as err:
            logger.warning("%s: malformed answer to %s (%s: %s); the reference stays unchecked",
                           self.name, key, type(err).__name__, err)
            return None
        if fresh and self.cache:
            self.cache.put(self.name, key, body)
        return records

    def _pace(self) -> None:
        wait = self._last_request + self.interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last_request = time.monotonic()

    def _fetch(self, path: str, params: dict) -> Optional[str]:
        url = self.base_url + path

        def attempt() -> Optional[str]:
            self._pace()
            self.requests_sent += 1
            try:
                response = self._session.get(url, params=params, timeout=self.timeout)
            except requests.RequestException as err:
                reason = unreachable_reason(url, err)
                if reason is not None:
                    raise Unreachable(reason) from None
                raise Retryable(redact_credentials(" ".join(f"{type(err).__name__}: {err}".split()))) from err
            if response.status_code == 200:
                return response.text
            if not is_retryable_status(response.status_code):
                logger.warning("%s: HTTP %d for %s; no answer", self.name, response.status_code,
                               redact_credentials(response.url))
                return None
            raise Retryable(f"HTTP {response.status_code}", retry_after_seconds(response.headers.get("Retry-After")))

        def log_retry(failure: Retryable, retry: int, wait: float) -> None:
            logger.info("%s: %s; retrying in %.1f s", self.name, failure.reason, wait)

        policy = RetryPolicy(tries=self.max_tries, backoff=self.backoff, retry_after="at_least",
                             max_wait=self.max_wait, over_max_wait="give_up")
        try:
            return call_with_retries(attempt, policy, on_retry=log_retry)
        except Unreachable as err:
            self.unreachable = str(err)
            logger.warning("%s cannot be reached any more (%s); its cached answers are used, the references it "
                           "never answered stay unchecked", self.name, err)
            return None
        except GaveUp as gave_up:
            if gave_up.wait is None:
                logger.warning("%s: no answer after %d tries (%s)", self.name, gave_up.tries, gave_up.last.reason)
            else:
                logger.warning("%s: asked to wait %.0f s (%s), more than %.0f s; no answer this run",
                               self.name, gave_up.wait, gave_up.last.reason, self.max_wait)
            return None


def _doi(value: Optional[str]) -> Optional[str]:
    if not value:
        return None
    return re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)", "", value.strip(), flags=re.IGNORECASE) or None


def _year(value) -> Optional[int]:
    if value is None:
        return None
    found = re.search(r"(?<!\d)(1[5-9]|20)\d{2}(?!\d)", str(value))
    return int(found.group()) if found else None


def _search_text(citation: Citation) -> str:
    return " ".join([citation.title, *citation.surnames, str(citation.year)])


class Crossref(HttpService):
    """``GET /works?query.bibliographic=...`` of the Crossref REST API."""

    name = "crossref"
    default_base_url = "https://api.crossref.org"
    default_interval = 0.2

    def query(self, citation: Citation) -> tuple[str, dict]:
        return "/works", {"query.bibliographic": _search_text(citation), "rows": self.rows,
                          "select": "DOI,title,author,issued,published,URL"}

    def parse(self, body: dict) -> list[BibRecord]:
        items = body["message"]["items"]
        if not isinstance(items, list):
            raise MalformedAnswer("message.items is not a list")
        records = []
        for item in items:
            authors = tuple(" ".join(p for p in (a.get("given"), a.get("family")) if p) or a.get("name", "")
                            for a in item.get("author") or [])
            year = None
            for field in ("issued", "published"):
                parts = (item.get(field) or {}).get("date-parts") or [[None]]
                year = year or _year(parts[0][0] if parts[0] else None)
            records.append(BibRecord(" ".join(item.get("title") or []), authors, year,
                                     _doi(item.get("DOI")), item.get("URL")))
        return records


class OpenAlex(HttpService):
    """``GET /works?search=...`` of the OpenAlex API."""

    name = "openalex"
    default_base_url = "https://api.openalex.org"
    default_interval = 0.1

    def query(self, citation: Citation) -> tuple[str, dict]:
        return "/works", {"search": citation.title, "per-page": self.rows,
                          "select": "id,doi,title,display_name,publication_year,authorships"}

    def parse(self, body: dict) -> list[BibRecord]:
        results = body["results"]
        if not isinstance(results, list):
            raise MalformedAnswer("results is not a list")
        return [_openalex_record(work) for work in results]


def _openalex_record(work: dict) -> BibRecord:
    authors = tuple(a["author"]["display_name"] for a in work.get("authorships") or []
                    if (a.get("author") or {}).get("display_name"))
    return BibRecord(work.get("title") or work.get("display_name") or "", authors,
                     _year(work.get("publication_year")), _doi(work.get("doi")), work.get("id"))


class Dblp(HttpService):
    """``GET /search/publ/api?q=...&format=json`` of the DBLP search API."""

    name = "dblp"
    default_base_url = "https://dblp.org"
    default_interval = 1.0

    def query(self, citation: Citation) -> tuple[str, dict]:
        return "/search/publ/api", {"q": citation.title, "format": "json", "h": self.rows}

    def polite_params(self) -> dict:
        return {}  # DBLP takes no contact parameter; the User-Agent carries it

    def parse(self, body: dict) -> list[BibRecord]:
        hits = body["result"]["hits"]
        found = hits.get("hit", [])  # DBLP leaves "hit" out when nothing matched
        if not isinstance(found, list):
            raise MalformedAnswer("result.hits.hit is not a list")
        records = []
        for hit in found:
            info = hit["info"]
            people = (info.get("authors") or {}).get("author", [])
            if isinstance(people, (dict, str)):  # a single author is not wrapped in a list
                people = [people]
            authors = tuple(_dblp_name(p["text"] if isinstance(p, dict) else p) for p in people)
            records.append(BibRecord(_strip_final_dot(info.get("title", "")), authors, _year(info.get("year")),
                                     _doi(info.get("doi")), info.get("ee") or info.get("url")))
        return records


def _dblp_name(name: str) -> str:
    return re.sub(r"\s+\d{4}$", "", name.strip())  # homonym number, e.g. "Wei Wang 0001"


def _strip_final_dot(title: str) -> str:
    title = " ".join(title.split())
    return title[:-1] if title.endswith(".") else title


SERVICES = {service.name: service for service in (Crossref, OpenAlex, Dblp)}


# --- offline bibliography ----------------------------------------------------------------

class BibliographyError(ValueError):
    """A bibliography file that cannot be read (the message names the file and line)."""


_DBLP_KINDS = frozenset({"article", "inproceedings", "proceedings", "book", "incollection", "phdthesis",
                         "mastersthesis"})


def _text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(number, text) of every line of a UTF-8 file, gunzipped when it ends in .gz; bytes that are not
    UTF-8 and a damaged gzip stream are a :class:`BibliographyError` naming the file and line."""
    opener = gzip.open if path.suffix == ".gz" else open
    number = 0
    try:
        with opener(path, "rb") as stream:
            for number, raw in enumerate(stream, 1):
                try:
                    yield number, raw.decode("utf-8")
                except UnicodeDecodeError as err:
                    raise BibliographyError(f"{path}: line {number}: not UTF-8 (byte 0x{raw[err.start]:02x} at "
                                            f"column {err.start + 1})") from None
    except (OSError, EOFError) as err:  # gzip.BadGzipFile is an OSError; a cut-off gzip stream ends in EOFError
        raise BibliographyError(f"{path}: line {number + 1}: cannot read it ({err})") from None


def _dblp_records(path: Path) -> Iterator[BibRecord]:
    parser = ET.XMLParser()
    # dblp.xml spells accented letters as HTML entities declared in its external DTD.
    parser.entity.update({name: chr(point) for name, point in html.entities.name2codepoint.items()})
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as stream:
        try:
            events = ET.iterparse(stream, events=("start", "end"), parser=parser)
            _, root = next(events)
            for event, element in events:
                if event != "end" or element.tag not in _DBLP_KINDS:
                    continue
                people = element.findall("author") or element.findall("editor")
                title = element.find("title")
                ee = element.findtext("ee")
                key = element.get("key")
                yield BibRecord(
                    _strip_final_dot("".join(title.itertext()) if title is not None else ""),
                    tuple(_dblp_name("".join(p.itertext())) for p in people), _year(element.findtext("year")),
                    _doi(ee) if ee and "doi.org/" in ee else None,
                    f"https://dblp.org/rec/{key}" if key else ee)
                root.clear()  # the full dblp.xml has millions of records: keep none in memory
        except ET.ParseError as err:
            line, column = err.position
            raise BibliographyError(f"{path}: line {line}, column {column}: not well-formed DBLP XML ({err})") from None


def _openalex_jsonl_records(path: Path) -> Iterator[BibRecord]:
    for number, line in _text_lines(path):
        if not line.strip():
            continue
        try:
            work = parse_json(line, path, number)
            yield _openalex_record(work)
        except RecordError as err:
            raise BibliographyError(str(err)) from None
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise BibliographyError(f"{path}: line {number}: not an OpenAlex work ({err})") from None


def _bibtex_records(path: Path) -> Iterator[BibRecord]:
    import bibtexparser
    from bibtexparser.bparser import BibTexParser
    from bibtexparser.customization import convert_to_unicode

    parser = BibTexParser(common_strings=True, ignore_nonstandard_types=False)
    parser.customization = convert_to_unicode
    text = "".join(line for _, line in _text_lines(path))
    try:
        entries = bibtexparser.loads(text, parser=parser).entries
    except Exception as err:  # bibtexparser raises pyparsing's and its own exception types
        raise BibliographyError(f"{path}: not readable BibTeX ({err})") from None
    for entry in entries:
        authors = re.split(r"\s+and\s+", _unbrace(entry.get("author") or entry.get("editor") or ""))
        yield BibRecord(_unbrace(entry.get("title", "")), tuple(a for a in authors if a and a != "others"),
                        _year(entry.get("year")), _doi(entry.get("doi")), entry.get("url"))


def _unbrace(value: str) -> str:
    return " ".join(value.replace("{", "").replace("}", "").split())


def _bibliography_format(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    last = suffixes[-1] if suffixes else ""
    formats = {".xml": "dblp", ".jsonl": "openalex", ".bib": "bibtex"}
    if last not in formats:
        raise BibliographyError(f"{path}: unknown bibliography format; use a DBLP .xml, an OpenAlex works "
                                ".jsonl or a BibTeX .bib file (each optionally .gz)")
    return formats[last]


_FORMAT_NAMES = {"dblp": "DBLP XML", "openalex": "OpenAlex works (JSONL)", "bibtex": "BibTeX"}
_READERS = {"dblp": _dblp_records, "openalex": _openalex_jsonl_records, "bibtex": _bibtex_records}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Bibliography:
    """Offline candidates: records of local files in an sqlite database with an FTS5 title index.

    A file is loaded once: :meth:`load` skips a file whose content (SHA-256) is already in the
    database and replaces the records of one that changed. Candidates come only from the files
    loaded through this object, not from others an earlier run left in the database.
    """

    name = "bibliography"

    def __init__(self, db_path: str | Path, limit: int = 20) -> None:
        self.db_path = Path(db_path)
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        self.limit = limit
        self.files: list[str] = []
        self._conn = sqlite3.connect(self.db_path, timeout=30)
        with self._conn:
            self._conn.executescript(
                "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, format TEXT NOT NULL,"
                " records INTEGER NOT NULL);"
                "CREATE TABLE IF NOT EXISTS works (id INTEGER PRIMARY KEY, file TEXT NOT NULL, title TEXT NOT NULL,"
                " authors TEXT NOT NULL, year INTEGER, doi TEXT, url TEXT);"
                "CREATE INDEX IF NOT EXISTS works_file ON works (file);"
                # The index holds the normalised title words, so a search uses the same words as the rule.
                "CREATE VIRTUAL TABLE IF NOT EXISTS works_index USING fts5(words);")

    def load(self, path: str | Path) -> int:
        """Add the records of a bibliography file; returns how many it holds."""
        path = Path(path).resolve()
        if not path.is_file():
            raise BibliographyError(f"{path}: no such bibliography file")
        kind = _bibliography_format(path)
        digest = _sha256(path)
        known = self._conn.execute("SELECT sha256, records FROM files WHERE path = ?", (str(path),)).fetchone()
        if known and known[0] == digest and known[1]:
            self._use(path)
            return known[1]
        count = 0
        with self._conn:  # one transaction: a file that fails half-way leaves the database as it was
            old = [row[0] for row in self._conn.execute("SELECT id FROM works WHERE file = ?", (str(path),))]
            self._conn.executemany("DELETE FROM works_index WHERE rowid = ?", [(i,) for i in old])
            self._conn.execute("DELETE FROM works WHERE file = ?", (str(path),))
            for record in _READERS[kind](path):
                count += 1
                cursor = self._conn.execute(
                    "INSERT INTO works (file, title, authors, year, doi, url) VALUES (?, ?, ?, ?, ?, ?)",
                    (str(path), record.title, json.dumps(record.authors, ensure_ascii=False), record.year,
                     record.doi, record.url))
                self._conn.execute("INSERT INTO works_index (rowid, words) VALUES (?, ?)",
                                   (cursor.lastrowid, " ".join(title_words(record.title))))
            if not count:  # raising inside the transaction leaves the database as it was
                raise BibliographyError(f"{path}: no records read from it (read as {_FORMAT_NAMES[kind]})")
            self._conn.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", (str(path), digest, kind, count))
        logger.info("loaded %d records from %s (%s)", count, path, kind)
        self._use(path)
        return count

    def _use(self, path: Path) -> None:
        if str(path) not in self.files:
            self.files.append(str(path))

    def __len__(self) -> int:
        """Records of the files loaded through this object."""
        marks = ", ".join("?" * len(self.files))
        return self._conn.execute(f"SELECT COUNT(*) FROM works WHERE file IN ({marks})", self.files).fetchone()[0]

    def candidates(self, citation: Citation) -> list[BibRecord]:
        words = list(dict.fromkeys(title_words(citation.title)))
        if not words or not self.files:
            return []
        marks = ", ".join("?" * len(self.files))
        rows = self._conn.execute(
            "SELECT works.title, works.authors, works.year, works.doi, works.url FROM works_index "
            f"JOIN works ON works.id = works_index.rowid WHERE works_index MATCH ? AND works.file IN ({marks}) "
            "ORDER BY bm25(works_index), works.id LIMIT ?",
            (" OR ".join(f'"{w}"' for w in words), *self.files, self.limit)).fetchall()
        return [BibRecord(title, tuple(json.loads(authors)), year, doi, url)
                for title, authors, year, doi, url in rows]


# --- building a verifier, and one record per reference -----------------------------------

def parse_services(services: str | Sequence[str]) -> tuple[str, ...]:
    """Service names from a comma-separated string or a sequence, checked against :data:`SERVICES`."""
    names = services.split(",") if isinstance(services, str) else services
    names = tuple(n.strip().lower() for n in names if n.strip())
    unknown = [n for n in names if n not in SERVICES]
    if unknown:
        raise ValueError(f"unknown citation service(s) {', '.join(unknown)}; choose from {', '.join(SERVICES)}")
    return names


def make_verifier(services: str | Sequence[str] = (), bibliographies: Sequence[str | Path] = (),
                  contact_email: Optional[str] = None, cache_dir: Optional[str | Path] = None,
                  base_urls: Optional[dict[str, str]] = None, **service_options) -> Verifier:
    """A verifier over the offline ``bibliographies`` (first, as they cost nothing) and the named
    ``services`` in order. Answers are cached in ``cache_dir/citations.sqlite3`` and the
    bibliography database is ``cache_dir/bibliography.sqlite3`` (default: praib's cache directory).
    ``base_urls`` maps a service name to another address; ``service_options`` go to every service
    (timeout, max_tries, backoff, interval, max_wait, rows)."""
    from praib.llm.judge import default_cache_dir

    services = parse_services(services)
    directory = Path(cache_dir) if cache_dir else default_cache_dir()
    sources: list[CandidateSource] = []
    if bibliographies:
        bibliography = Bibliography(directory / "bibliography.sqlite3")
        for path in bibliographies:
            bibliography.load(path)
        sources.append(bibliography)
    if services:
        cache = ResponseCache(directory / "citations.sqlite3")
        for name in services:
            sources.append(SERVICES[name](base_url=(base_urls or {}).get(name), contact_email=contact_email,
                                          cache=cache, **service_options))
        _check_services(sources, cache)
    return Verifier(sources)


def _check_services(sources: Sequence[CandidateSource], cache: ResponseCache) -> None:
    """Look for the services no request can reach, once, before the run: they answer from ``cache`` only
    (said in one line), and a verifier with no source left that could answer is refused (one line)."""
    out_of_reach = []
    for service in sources:
        if isinstance(service, HttpService):
            try:
                check_reachable(service.base_url)
            except Unreachable as err:
                service.unreachable = str(err)
                out_of_reach.append(service)
    if not out_of_reach:
        return
    reasons = "; ".join(f"{s.name}: {s.unreachable}" for s in out_of_reach)
    answering = [s for s in sources if getattr(s, "unreachable", None) is None or cache.holds_answers_of(s.name)]
    if not answering:
        raise ValueError(f"no citation service can be reached ({reasons}) and none has answers in the cache; check "
                         "the network, or verify offline with --bibliography FILE")
    names = ", ".join(s.name for s in out_of_reach)
    others = ", ".join(s.name for s in sources if s not in out_of_reach)
    logger.warning("cannot reach %s (%s); %s", names, reasons,
                   f"verifying with {others} and what {names} answered before (the cache)" if others else
                   "only what they answered before (the cache) is used; the other references stay unchecked")


VERIFICATION_FEATURES = Features({
    "review_id": Value("string"), "paper_id": Value("string"), "source": Value("string"),
    "style": Value("string"), "citation": Value("string"), "cited_title": Value("string"),
    "cited_authors": List(Value("string")), "cited_year": Value("int32"), "verified": Value("bool"),
    "service": Value("string"), "matched_title": Value("string"), "matched_authors": List(Value("string")),
    "matched_year": Value("int32"), "matched_doi": Value("string"), "matched_url": Value("string"),
    "similarity": Value("float64"), "unanswered": List(Value("string")),
})


def verification_rows(reviews: dict, per_review: Sequence[list[Verification]]):
    """One row per reference: the review it came from, what was cited and what was found.

    ``reviews`` holds the columns review_id, paper_id and source of the reviews, in the order of
    ``per_review``. Returns a ``datasets.Dataset`` with :data:`VERIFICATION_FEATURES`."""
    rows = []
    for i, checks in enumerate(per_review):
        for v in checks:
            record = v.record
            rows.append({
                "review_id": reviews["review_id"][i], "paper_id": reviews["paper_id"][i],
                "source": reviews["source"][i], "style": v.citation.style, "citation": v.citation.text,
                "cited_title": v.citation.title, "cited_authors": list(v.citation.authors),
                "cited_year": v.citation.year, "verified": v.verified, "service": v.service,
                "matched_title": record.title if record else None,
                "matched_authors": list(record.authors) if record else None,
                "matched_year": record.year if record else None, "matched_doi": record.doi if record else None,
                "matched_url": record.url if record else None, "similarity": v.similarity,
                "unanswered": list(v.unanswered),
            })
    if not rows:
        return Dataset.from_dict({name: [] for name in VERIFICATION_FEATURES}, features=VERIFICATION_FEATURES)
    return Dataset.from_list(rows, features=VERIFICATION_FEATURES)


def citation_report(texts: Sequence[Optional[str]], return_citations: bool = False,
                    verify_services: str | Sequence[str] | None = None,
                    bibliography: str | Path | Sequence[str | Path] | None = None,
                    contact_email: Optional[str] = None, cache_dir: Optional[str | Path] = None) -> dict:
    """The formatted references of ``texts``: per review count (mean / std / n) and the count per style.

    With ``verify_services`` and/or a ``bibliography`` (see :func:`make_verifier`), every reference is
    checked and ``verified_citations`` (:func:`verification_summary`) is added. With
    ``return_citations``, ``extracted`` lists each review's references (style, authors, title, year,
    text, and the verification when there was one).
    """
    found = [find_citations(text) if text else [] for text in texts]
    styles: dict[str, int] = {}
    for citations in found:
        for citation in citations:
            styles[citation.style] = styles.get(citation.style, 0) + 1
    result = {"citations": summarise(len(c) for c in found), "styles": styles}
    checks = None
    if verify_services or bibliography:
        bibliographies = [bibliography] if isinstance(bibliography, (str, Path)) else list(bibliography or [])
        verifier = make_verifier(verify_services or (), bibliographies, contact_email, cache_dir)
        checks = check_texts(texts, verifier)
        result["verified_citations"] = verification_summary(
            [c if text and not text.isspace() else None for c, text in zip(checks, texts)])
    if return_citations:
        result["extracted"] = [[{"style": c.style, "authors": list(c.authors), "title": c.title,
                                 "year": c.year, "text": c.text} for c in citations] for citations in found]
        if checks is not None:
            for entries, review_checks in zip(result["extracted"], checks):
                for entry, check in zip(entries, review_checks):
                    entry.update(verified=check.verified, service=check.service,
                                 matched_title=check.record.title if check.record else None,
                                 similarity=check.similarity)
    return result
