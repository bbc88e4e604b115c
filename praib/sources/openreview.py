"""Collect papers, reviews, meta-reviews and rebuttals from OpenReview (API v1 and v2),
or import them from a dump researchers already share, as praib records.

Where a venue keeps its notes is data: ``praib/data/openreview/*.yaml`` gives, per
venue-year, the API version, the submission invitations, the invitations of the
replies in each paper's forum, and how the review forms' fields map to record
fields. Collection pages through each submission invitation with the forum's
replies attached (``details=replies``), so one request fetches up to ``page_size``
papers with their whole discussion. Every response is stored on disk, one file per
request (``CACHE/VENUE/YEAR/INVITATION/offset-N-limit-M.json``), before it is used: an
interrupted run resumes, and a re-run (or ``offline=True``) rebuilds the records
from the cache without the network.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import yaml
from datasets import Dataset

from praib.http_retry import (GaveUp, Retryable, RetryPolicy, call_with_retries, is_retryable_status,
                               redact_credentials, retry_after_seconds, unreachable_reason)
from praib.records import (HUMAN_SOURCE, PARSE_GIVEN, REVIEW_SECTIONS, RecordError, coerce_record, iter_jsonl,
                           read_csv_rows, read_json, read_json_list, records_to_dataset, save_records)
from praib.records.atomic import replace_folder, write_text_atomically
from praib.records.io import RECORD_FILES
from praib.records.peer import flat_content, form_fields, invitations, signer, text_of
from praib.records.duplicates import drop_duplicates, find_repeats
from praib.scales import UnknownScaleError, VenueScales, venue_scales

logger = logging.getLogger(__name__)

EDITIONS_DIR = Path(__file__).resolve().parents[1] / "data" / "openreview"
API_BASEURLS = {1: "https://api.openreview.net", 2: "https://api2.openreview.net"}
#: The file every records folder holds (:func:`write_records`), beside those of the other kinds it has.
RECORD_FOLDER_FILES = (RECORD_FILES["paper"],)

_FORM_TARGETS = {*REVIEW_SECTIONS, "body", "rating", "confidence", "recommendation"}


class CollectionError(RuntimeError):
    """A request that kept failing, or a page that --offline needs and the cache lacks."""


@dataclass(frozen=True)
class Edition:
    """Where one venue-year keeps its notes on OpenReview (see the YAML files)."""

    venue: str
    year: int
    api: int
    venue_id: str
    submissions: tuple[tuple[str, str | None], ...]  # (invitation, status of its papers)
    venueid_status: dict[str, str]
    review: tuple[str, ...]
    review_form: dict[str, str]
    decision_invitation: str | None
    decision_field: str | None
    meta_review: tuple[str, ...]
    meta_review_form: dict[str, str]
    rebuttal: tuple[str, ...]
    author_signature: str | None


def _check_form(form: dict, where: str) -> dict[str, str]:
    for field, target in form.items():
        if target not in _FORM_TARGETS and not str(target).startswith("subscores."):
            raise ValueError(f"{where}: form field {field!r} maps to unknown target {target!r}")
    return {str(k): str(v) for k, v in form.items()}


@lru_cache(maxsize=None)
def _editions() -> dict[tuple[str, int], Edition]:
    editions = {}
    for path in sorted(EDITIONS_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        venue = data["venue"]
        for raw in data["editions"]:
            for year in raw["years"]:
                def fill(text, year=year):
                    return text.replace("{year}", str(year)) if isinstance(text, str) else text
                where = f"{path} ({venue} {year})"
                decision = raw.get("decision") or {}
                editions[(venue.lower(), year)] = Edition(
                    venue=venue, year=year, api=int(raw["api"]), venue_id=fill(raw["venue_id"]),
                    submissions=tuple((fill(s["invitation"]), s.get("status")) for s in raw["submissions"]),
                    venueid_status={fill(k): v for k, v in (raw.get("venueid_status") or {}).items()},
                    review=tuple(fill(i) for i in raw.get("review") or ()),
                    review_form=_check_form(raw.get("review_form") or {}, where),
                    decision_invitation=fill(decision.get("invitation")),
                    decision_field=decision.get("field"),
                    meta_review=tuple(fill(i) for i in raw.get("meta_review") or ()),
                    meta_review_form=_check_form(raw.get("meta_review_form") or {}, where),
                    rebuttal=tuple(fill(i) for i in raw.get("rebuttal") or ()),
                    author_signature=fill(raw.get("author_signature")),
                )
    return editions


def load_edition(venue: str, year: int) -> Edition:
    """The OpenReview layout of ``venue`` in ``year`` (case-insensitive venue name)."""
    edition = _editions().get((venue.lower(), int(year)))
    if edition is None:
        known = sorted({f"{e.venue} {e.year}" for e in _editions().values()})
        raise ValueError(f"no OpenReview layout for {venue} {year}; known: {', '.join(known)}")
    return edition


# --------------------------------------------------------------------------- fetching


class NoteFetcher:
    """Pages through ``GET /notes`` with pacing, retries and an on-disk response cache.

    Failures that a later attempt can cure are retried: 429 (waiting the Retry-After
    the server asks for), 5xx, timeouts, dropped connections and bodies that are not
    the JSON the API sends. Other 4xx answers fail at once with the server's message, and so
    do a host name that does not resolve and a server on this machine that refuses the connection.
    """

    def __init__(self, cache_dir: str | Path, *, baseurl: str | None = None, offline: bool = False,
                 token: str | None = None, page_size: int = 1000, pace: float = 1.0, retries: int = 6,
                 backoff: float = 2.0, timeout: float = 60.0, sleep: Callable[[float], None] = time.sleep):
        self.cache_dir = Path(cache_dir)
        self.baseurl = baseurl.rstrip("/") if baseurl else None
        self.offline = offline
        self.token = token
        self.page_size = page_size
        self.pace, self.retries, self.backoff, self.timeout = pace, retries, backoff, timeout
        self.sleep = sleep
        self.requests_made = 0
        self.pages_from_cache = 0
        self._session = None
        self._last_request = 0.0

    def cache_path(self, edition: Edition, invitation: str, offset: int) -> Path:
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", invitation)
        # The page size is part of the key: pages of another size start at other offsets.
        return (self.cache_dir / edition.venue / str(edition.year) / slug
                / f"offset-{offset:07d}-limit-{self.page_size}.json")

    def notes(self, edition: Edition, invitation: str) -> Iterator[dict]:
        """Every note of ``invitation``, each with its forum's replies in ``details``."""
        offset = 0
        while True:
            page = self._page(edition, invitation, offset)
            yield from page
            if len(page) < self.page_size:
                return
            offset += self.page_size

    def _page(self, edition: Edition, invitation: str, offset: int) -> list[dict]:
        path = self.cache_path(edition, invitation, offset)
        if path.exists():
            self.pages_from_cache += 1
            return _cached_notes(path)
        if self.offline:
            raise CollectionError(f"{edition.venue} {edition.year}: {invitation} offset {offset} is not in the cache "
                                  f"({path}); run without --offline to fetch it")
        url = f"{self.baseurl or API_BASEURLS[edition.api]}/notes"
        params = {"invitation": invitation, "details": "replies", "offset": offset, "limit": self.page_size,
                  "sort": "number:asc"}
        body = self._get(url, params)
        write_text_atomically(path, json.dumps(body, ensure_ascii=False))  # a page is either wholly cached or absent
        return body["notes"]

    def _get(self, url: str, params: dict) -> dict:
        import requests

        if self._session is None:
            self._session = requests.Session()
        headers = {"Accept": "application/json", **({"Authorization": f"Bearer {self.token}"} if self.token else {})}
        shown = redact_credentials(url)   # requests sends a --base-url's credentials; messages never show them

        def attempt() -> dict:
            since_last = time.monotonic() - self._last_request
            if since_last < self.pace:
                self.sleep(self.pace - since_last)
            self._last_request = time.monotonic()
            self.requests_made += 1
            try:
                response = self._session.get(url, params=params, headers=headers, timeout=self.timeout)
            except (requests.Timeout, requests.ConnectionError) as err:
                unreachable = unreachable_reason(url, err)
                if unreachable is not None:
                    raise CollectionError(f"{shown}: cannot reach OpenReview: {unreachable}; check the network and "
                                          "--base-url, or rebuild the records from the cache with --offline") from None
                raise Retryable(type(err).__name__) from err
            if is_retryable_status(response.status_code):
                problem = ("429 Too Many Requests" if response.status_code == 429
                           else f"{response.status_code} {response.reason}")
                raise Retryable(problem, retry_after_seconds(response.headers.get("Retry-After")))
            if response.status_code >= 400:
                raise CollectionError(f"{shown} ({params.get('invitation')}): {response.status_code} "
                                      f"{response.reason}: {response.text[:300]}")
            try:
                body = response.json()
            except ValueError:
                body = None
            if isinstance(body, dict) and isinstance(body.get("notes"), list):
                return body
            raise Retryable(f"malformed body ({response.text[:80]!r})")

        def log_retry(failure: Retryable, retry: int, wait: float) -> None:
            logger.warning("OpenReview %s %s: %s; retry %d of %d in %.1f s", shown, params.get("invitation"),
                           failure.reason, retry, self.retries, wait)

        policy = RetryPolicy(tries=self.retries + 1, backoff=self.backoff, max_backoff=120.0)
        try:
            return call_with_retries(attempt, policy, on_retry=log_retry, sleep=self.sleep)
        except GaveUp as gave_up:
            raise CollectionError(f"{shown} ({params.get('invitation')} offset {params.get('offset')}): gave up after "
                                  f"{gave_up.tries} attempts, last: {gave_up.last.reason}. Pages fetched so far are "
                                  f"cached; run again to resume.") from None


def login_token(baseurl: str | None, username: str, password: str) -> str:
    """Log in with openreview-py and return the session token. OpenReview issues one token
    for both APIs (openreview-py's v1 client logs in through API v2 as well)."""
    import openreview

    return openreview.api.OpenReviewClient(baseurl=baseurl or API_BASEURLS[2], username=username,
                                           password=password).token


def _cached_notes(path: Path) -> list[dict]:
    """The notes of a cached page; a damaged page is a :class:`CollectionError` that names it."""
    remedy = "delete the file to fetch the page again"
    try:
        page = read_json(path, what="notes")
        if not isinstance(page, dict) or not isinstance(page.get("notes"), list):
            raise RecordError(str(path), None, "expected an object with a list of 'notes'")
        return _check_notes(page["notes"], str(path))
    except RecordError as err:
        raise CollectionError(f"{err}; {remedy}") from None


def _check_notes(notes: list, label: str) -> list[dict]:
    """``notes`` when each is a submission note with an id, a content object and replies that are notes
    with ids; else a :class:`RecordError` naming the note (``label``: the file they came from)."""
    for index, note in enumerate(notes):
        where = f"{label}: submission {index}"
        if not isinstance(note, dict) or "id" not in note or not isinstance(note.get("content"), dict):
            raise RecordError(where, None, "a submission note needs 'id' and 'content'")
        details = note.get("details") or {}
        if not isinstance(details, dict):
            raise RecordError(where, "details", f"expected an object, found {details!r:.60}")
        replies = details.get("replies") or details.get("directReplies") or note.get("replies") or []
        if not isinstance(replies, list):
            raise RecordError(where, "replies", f"expected a list of notes, found {replies!r:.60}")
        for number, reply in enumerate(replies):
            if not isinstance(reply, dict) or not isinstance(reply.get("id"), str):
                raise RecordError(f"{where}: reply {number}", "id", f"a reply needs an 'id', found {reply!r:.60}")
            if not isinstance(reply.get("content") or {}, dict):
                raise RecordError(f"{where}: reply {number}", "content",
                                  f"expected an object, found {reply['content']!r:.60}")
    return notes


# --------------------------------------------------------------------------- normalisation


def _replies(note: dict) -> list[dict]:
    details = note.get("details") or {}
    return list(details.get("replies") or details.get("directReplies") or note.get("replies") or [])


def _scales(edition: Edition) -> VenueScales | None:
    try:
        return venue_scales(edition.venue, edition.year)
    except UnknownScaleError:
        return None


@lru_cache(maxsize=None)
def _pattern(templates: tuple[str, ...]) -> re.Pattern:
    """One regular expression for invitation or group templates; {number} is any paper number.
    Matching by pattern, not by the submission's own number, also serves dumps that omit it."""
    escaped = (re.escape(t).replace(re.escape("{number}"), r"\d+") for t in templates)
    return re.compile("|".join(f"(?:{e})" for e in escaped) or r"(?!)")


def _matches(names: Iterable[str], templates: tuple[str, ...]) -> bool:
    pattern = _pattern(templates)
    return any(pattern.fullmatch(name) for name in names)


def normalise_forum(submission: dict, edition: Edition, status: str | None = None) -> dict[str, list[dict]]:
    """The paper, review, meta-review and rebuttal records of one submission note and its
    forum's replies (v1 or v2 shape). ``status`` ('Withdrawn', 'Desk rejected') comes from
    the invitation the submission was listed under; it overrides any decision note."""
    scales = _scales(edition)
    paper_id = submission.get("forum") or submission["id"]
    content = flat_content(submission.get("content"))
    base = {"paper_id": paper_id, "venue": edition.venue, "year": edition.year}
    replies = [r for r in _replies(submission) if r.get("id") != submission.get("id") and not r.get("ddate")]

    # A withdrawn paper is flagged by the invitation it is listed under (v1) or by its venue id (v2).
    listed_as = dict(edition.submissions)
    status = status or next((listed_as[i] for i in invitations(submission) if listed_as.get(i)), None)
    decision = status or edition.venueid_status.get(content.get("venueid") or "")
    if decision is None and edition.decision_invitation:
        for reply in replies:
            if _matches(invitations(reply), (edition.decision_invitation,)):
                decision = text_of(flat_content(reply.get("content")).get(edition.decision_field))
    keywords = content.get("keywords") or []
    if isinstance(keywords, str):
        keywords = [k.strip() for k in re.split(r"[,;]", keywords) if k.strip()]
    out: dict[str, list[dict]] = {kind: [] for kind in RECORD_FILES}
    out["paper"].append(coerce_record({**base, "title": text_of(content.get("title")),
                                       "abstract": text_of(content.get("abstract")), "keywords": keywords,
                                       "decision": decision}, "paper", f"{edition.venue} {edition.year} {paper_id}"))

    review_ids = {r["id"] for r in replies if _matches(invitations(r), edition.review)}
    authors = (edition.author_signature,) if edition.author_signature else ()
    for reply in sorted(replies, key=lambda r: (r.get("cdate") or r.get("tcdate") or 0, r.get("id") or "")):
        where = f"{edition.venue} {edition.year} forum {paper_id} note {reply.get('id')}"
        reply_content = flat_content(reply.get("content"))
        if reply["id"] in review_ids:
            fields = form_fields(reply_content, edition.review_form, scales, where)
            out["review"].append(coerce_record({**base, **fields, "review_id": reply["id"], "decision": decision,
                                                "source": HUMAN_SOURCE, "reviewer_id": signer(reply),
                                                "parse_status": PARSE_GIVEN}, "review", where))
        if _matches(invitations(reply), edition.meta_review):
            fields = form_fields(reply_content, edition.meta_review_form, scales, where)
            if fields["text"]:
                out["meta_review"].append(coerce_record({**base, **fields, "meta_review_id": reply["id"],
                                                         "source": HUMAN_SOURCE, "parse_status": PARSE_GIVEN},
                                                        "meta_review", where))
        if _matches(invitations(reply), edition.rebuttal) and _matches(reply.get("signatures") or [], authors):
            text = text_of(reply_content.get("rebuttal") or reply_content.get("comment"))
            if text:
                # An author reply to a review answers that review; one to the paper answers them all.
                answered = reply.get("replyto") if reply.get("replyto") in review_ids else None
                out["rebuttal"].append(coerce_record({**base, "rebuttal_id": reply["id"], "review_id": answered,
                                                      "source": HUMAN_SOURCE, "text": text}, "rebuttal", where))
    return out


def records_from_submissions(submissions: Iterable[tuple[dict, str | None]], edition: Edition,
                             ) -> dict[str, Dataset]:
    """Datasets of papers, reviews, meta-reviews and rebuttals from (submission note, status)
    pairs, normalised one forum at a time. A paper listed twice is kept as first listed."""
    seen: set[str] = set()
    rows: dict[str, list[dict]] = {kind: [] for kind in RECORD_FILES}
    for note, status in submissions:
        key = note.get("forum") or note["id"]
        if key in seen:
            continue
        seen.add(key)
        for kind, records in normalise_forum(note, edition, status).items():
            rows[kind].extend(records)
    return {kind: records_to_dataset(items, kind) for kind, items in rows.items()}


def _listed_notes(edition: Edition, fetcher: NoteFetcher, progress: bool) -> Iterator[tuple[dict, str | None]]:
    from praib.records.progress import progress_bar

    # Listings that flag their papers (withdrawn, desk-rejected) come first, so that a paper
    # also listed as a plain submission keeps its flag.
    for invitation, status in sorted(edition.submissions, key=lambda listing: listing[1] is None):
        label = f"{edition.venue} {edition.year} {invitation.rsplit('/', 1)[-1]}"
        for note in progress_bar(fetcher.notes(edition, invitation), desc=label, unit=" papers", enabled=progress):
            yield note, status


def collect(venue: str, years: Iterable[int], fetcher: NoteFetcher, progress: bool = True) -> dict[str, Dataset]:
    """Fetch (or read from the cache) every listed submission of ``venue`` in ``years``
    with its forum, and return the records of all years together."""
    from datasets import concatenate_datasets

    parts: dict[str, list[Dataset]] = {kind: [] for kind in RECORD_FILES}
    for year in years:
        edition = load_edition(venue, year)
        for kind, table in records_from_submissions(_listed_notes(edition, fetcher, progress), edition).items():
            parts[kind].append(table)
    return {kind: concatenate_datasets(tables) if len(tables) > 1 else tables[0] for kind, tables in parts.items()}


def write_records(records: dict[str, Dataset], output: str | Path) -> dict[str, int]:
    """Write each kind to its JSONL file in the folder ``output``, in place of the record files an earlier
    run wrote there (:func:`praib.records.atomic.replace_folder`, which keeps every other file); returns
    the counts."""
    with replace_folder(output) as folder:
        for kind, table in records.items():
            save_records(table, folder / RECORD_FILES[kind])
    return {kind: len(table) for kind, table in records.items()}


# --------------------------------------------------------------------------- dumps


def _dump_notes(path: Path) -> list[dict]:
    if path.suffix.lower() == ".jsonl":
        data = [note for _, note in iter_jsonl(path)]
    else:
        data = read_json_list(path, ("notes", "submissions"), "expected a list of submission notes")
    return _check_notes(data, str(path))


_CSV_COLUMNS = {"paper_id", "forum", "title", "abstract", "keywords", "decision", "review_id", "reviewer"}


_CSV_COLUMNS = {"paper_id", "forum", "title", "abstract", "keywords", "decision", "review_id", "reviewer"}


def _csv_forums(path: Path, edition: Edition) -> list[tuple[dict, str | None]]:
    """Group a one-review-per-row CSV into submission notes with their review replies; columns that are
    no field of the review form are ignored with a warning."""
    header, rows = read_csv_rows(path)
    if not {"paper_id", "forum"} & set(header):
        separator = next((sep for sep in (";", "\t", "|") if len(header) == 1 and sep in header[0]), None)
        hint = f" (is it separated by {separator!r}? praib reads comma-separated files)" if separator else ""
        raise RecordError(str(path), "paper_id", f"the CSV needs a 'paper_id' (or 'forum') column{hint}")
    unknown = [column for column in header if column not in _CSV_COLUMNS and column not in edition.review_form]
    if unknown:
        logger.warning("%s: columns that are no field of the %s %s review form, ignored: %s", path,
                       edition.venue, edition.year, ", ".join(unknown))
    forums: dict[str, dict] = {}
    number_of = {}
    for line, (first_line, row) in enumerate(rows, start=2):
        paper_id = (row.get("paper_id") or row.get("forum") or "").strip()
        if not paper_id:
            raise RecordError(f"{path}: line {first_line}", "paper_id", "is required and missing")
        number = number_of.setdefault(paper_id, len(number_of) + 1)
        note = forums.setdefault(paper_id, {
            "id": paper_id, "forum": paper_id, "number": number,
            "content": {k: row.get(k) or None for k in ("title", "abstract", "keywords")},
            "details": {"replies": []}, "decision": (row.get("decision") or "").strip() or None,
        })
        review = {field: row[field] for field in edition.review_form if (row.get(field) or "").strip()}
        if review:
            note["details"]["replies"].append({
                "id": (row.get("review_id") or "").strip() or f"{paper_id}-review-{line}",
                "forum": paper_id, "replyto": paper_id,
                "invitations": [edition.review[0].replace("{number}", str(number))],
                "signatures": [row["reviewer"]] if row.get("reviewer") else [], "content": review})
    return [(note, note.pop("decision")) for note in forums.values()]


def import_dump(path: str | Path, fmt: str, venue: str, year: int) -> dict[str, Dataset]:
    """Records from a dump of one venue-year that researchers share.

    ``json``: a list (a .json file, or .jsonl with one note a line) of submission notes as openreview-py
    writes them (``note.to_json()``, v1 or v2), each with its forum's notes in
    ``details.replies`` or ``details.directReplies`` (as fetched with ``details='replies'``).
    ``csv``: one review a row, with a ``paper_id`` (or ``forum``) column, optional
    ``title``, ``abstract``, ``keywords`` (separated by ``;`` or ``,``), ``decision``,
    ``review_id`` and ``reviewer`` columns, and the venue-year's review form fields as
    columns (``rating``, ``confidence``, ``summary``, ...). A row with no form field is a
    paper without reviews.
    ``peersum``: PeerSum's raw ``peersum_all.json`` (one paper a line, with its meta-review,
    decision and every note of its discussion); the papers of ``venue`` in ``year`` are taken.
    """
    path = Path(path)
    edition = load_edition(venue, year)
    if not path.is_file():
        raise RecordError(str(path), None, "no such file")
    if fmt == "json":
        dumped = _dump_notes(path)
        listed = {i for note in dumped for i in invitations(note)}
        notes = _forums(dumped, path)
        if listed and not any(i.startswith(edition.venue_id + "/") for i in listed):
            raise RecordError(str(path), None, f"its notes are not of {edition.venue} {edition.year} (none is under "
                                               f"{edition.venue_id}; e.g. {sorted(listed)[0]}); check --venue/--year")
        without = sum(not _replies(note) for note in notes)
        if without:
            logger.warning("%s: %d of %d submission notes have no replies (no 'details.replies' or "
                           "'details.directReplies'; was the dump fetched with details='replies'?): their papers "
                           "are imported without reviews", path, without, len(notes))
        forums = [(note, None) for note in notes]
    elif fmt == "csv":
        forums = _csv_forums(path, edition)
    elif fmt != "peersum":
        raise ValueError(f"unknown dump format {fmt!r}; use json, csv or peersum")
    if fmt == "peersum":
        records = _peersum_records(path, edition)
    else:
        try:
            records = records_from_submissions(forums, edition)
        except RecordError as err:  # it names the forum and note; say which file they are in
            raise RecordError(f"{path}: {err.where}", err.field, err.problem) from None
    if not len(records["paper"]):
        raise RecordError(str(path), None, f"no paper of {edition.venue} {edition.year} in this {fmt} dump")
    return {kind: records_to_dataset(drop_duplicates(table.to_list(), kind, str(path)), kind)
            for kind, table in records.items()}


def _forums(notes: list[dict], path: Path) -> list[dict]:
    """The submission notes of a dump (:func:`_unique_notes`), each with its forum's replies. A dump may list
    replies themselves (the review notes the API returns for an invitation or a forum: ``forum`` names their
    paper, ``replyto`` the note they answer) beside or instead of their submissions: each goes under its
    forum's submission note, made with the forum's id and no content where the dump holds none."""
    replies = [note for note in notes if note.get("forum") not in (None, note["id"])]
    submissions = _unique_notes([note for note in notes if note.get("forum") in (None, note["id"])], path)
    forums = {note["id"]: note for note in submissions}
    for reply in replies:
        forum = forums.get(reply["forum"])
        if forum is None:
            forum = forums[reply["forum"]] = {"id": reply["forum"], "forum": reply["forum"], "content": {}}
            submissions.append(forum)
        forum["details"] = {**(forum.get("details") or {}), "replies": [*_replies(forum), reply]}
    return submissions


def _unique_notes(notes: list[dict], path: Path) -> list[dict]:
    """The submission notes, one per forum: a note repeated exactly is dropped with a warning, two
    different notes of one forum are an error (which one is the paper?)."""
    repeats = find_repeats(notes, lambda note: note.get("forum") or note["id"])
    if repeats.conflicting:
        raise RecordError(str(path), "id", repeats.conflict("note id"))
    if not repeats.exact:
        return notes
    logger.warning("%s: %s", path, repeats.dropped("note id"))
    return repeats.without_exact(notes)


def _peersum_id(paper_id: Any) -> tuple[str | None, int | None, str | None]:
    """Venue (by the scale files' names and aliases: PeerSum writes 'nips'), year and forum id."""
    match = re.fullmatch(r"([A-Za-z]+)_(\d{4})_(.+)", str(paper_id))
    if not match:
        return None, None, None
    try:
        venue = venue_scales(match[1], int(match[2])).venue
    except UnknownScaleError:
        venue = None
    return venue, int(match[2]), match[3]


def _peersum_records(path: Path, edition: Edition) -> dict[str, Dataset]:
    """Records of the edition's venue-year from PeerSum's raw dump, whose samples are JSON
    lines with ``paper_id`` ``{venue}_{year}_{forum}`` and every note of the discussion in
    ``reviews`` (``review_id``, ``writer``, ``comment``, ``rating``, ``confidence``, ``reply_to``)."""
    rows: dict[str, list[dict]] = {kind: [] for kind in RECORD_FILES}
    others: set[str] = set()
    missing: Counter = Counter()
    fields: set[str] = set()
    for where, sample in iter_jsonl(path):
        if not isinstance(sample, dict):
            raise RecordError(where, None, "expected a JSON object (one PeerSum sample)")
        venue, year, forum = _peersum_id(sample.get("paper_id"))
        if (venue, year) != (edition.venue, edition.year):
            others.add(f"{venue} {year}" if venue else str(sample.get("paper_id")).rsplit("_", 1)[0])
            continue
        missing.update(key for key in _PEERSUM_FIELDS if key not in sample)
        fields.update(sample)
        base = {"paper_id": forum, "venue": edition.venue, "year": edition.year}
        decision = text_of(sample.get("paper_acceptance"))
        rows["paper"].append(coerce_record({**base, "title": sample.get("paper_title"),
                                            "abstract": sample.get("paper_abstract"), "decision": decision},
                                           "paper", where))
        if text_of(sample.get("meta_review")):
            rows["meta_review"].append(coerce_record({**base, "meta_review_id": f"{forum}-meta", "source": HUMAN_SOURCE,
                                                      "text": text_of(sample["meta_review"]),
                                                      "parse_status": PARSE_GIVEN}, "meta_review", where))
        notes = sample.get("reviews") or []
        if not isinstance(notes, list):
            raise RecordError(where, "reviews", f"expected a list of notes, found {notes!r:.60}")
        for index, note in enumerate(notes):
            if not isinstance(note, dict) or not note.get("review_id"):
                raise RecordError(f"{where}: reviews[{index}]", "review_id", "is required and missing")
            for key in ("rating", "confidence"):
                if note.get(key) is not None and not isinstance(note[key], (int, float)):
                    raise RecordError(f"{where}: reviews[{index}]", key, f"expected a number, got {note[key]!r}")
        # A review is an official reviewer's note on the paper itself; their later notes are discussion.
        review_ids = {n["review_id"] for n in notes
                      if n.get("writer") == "official_reviewer" and n.get("reply_to") == forum}
        for note in notes:
            text = text_of(note.get("comment"))
            if note["review_id"] in review_ids:
                # PeerSum writes -1 where a note has no score.
                scores = {k: note[k] if (note.get(k) or 0) > 0 else None for k in ("rating", "confidence")}
                rows["review"].append(coerce_record({**base, **scores, "review_id": note["review_id"],
                                                     "decision": decision, "source": HUMAN_SOURCE, "text": text,
                                                     "parse_status": PARSE_GIVEN}, "review", where))
            elif note.get("writer") == "author" and text:
                answered = note.get("reply_to") if note.get("reply_to") in review_ids else None
                rows["rebuttal"].append(coerce_record({**base, "rebuttal_id": note["review_id"],
                                                       "review_id": answered, "source": HUMAN_SOURCE, "text": text},
                                                      "rebuttal", where))
    if not rows["paper"]:
        raise RecordError(str(path), None, f"no paper of {edition.venue} {edition.year} in this PeerSum dump; "
                                           f"it holds {', '.join(sorted(others)) or 'no samples'}")
    if missing:
        _warn_missing_peersum_fields(path, edition, len(rows["paper"]), missing, fields)
    elif not rows["review"]:
        logger.warning("%s: 0 reviews: no note of the %d %s %d samples is an official review (writer "
                       "'official_reviewer', reply_to the paper)", path, len(rows["paper"]), edition.venue,
                       edition.year)
    return {kind: records_to_dataset(items, kind) for kind, items in rows.items()}


# The fields of a sample of PeerSum's raw dump that records are made of, and what is lost without them.
_PEERSUM_FIELDS = {"reviews": "reviews or rebuttals", "meta_review": "meta-review", "paper_title": "title",
                   "paper_abstract": "abstract"}


def _warn_missing_peersum_fields(path: Path, edition: Edition, n_samples: int, missing: Counter,
                                 fields: set[str]) -> None:
    # PeerSum's annotated samples (and its Hugging Face release) are not the raw dump: they keep the
    # discussion as unattributed 'source_documents' and the meta-review as 'summary'.
    lacking = ", ".join(f"{n} lack '{key}' (no {_PEERSUM_FIELDS[key]})" for key, n in missing.items())
    logger.warning("%s: of %d %s %d samples, %s; their fields are %s. --format peersum reads PeerSum's raw dump, "
                   "peersum_all.json", path, n_samples, edition.venue, edition.year, lacking,
                   ", ".join(sorted(fields)))
