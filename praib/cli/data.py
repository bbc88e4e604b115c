"""``praib data``: collect, convert, verify and publish the benchmark's records."""

from __future__ import annotations

import click

from praib.cli.common import (DEFAULT_BASE_URL, cache_dir_option, failure_log, max_failures_option, no_progress_option,
                              output_option, seed_option, SOURCE, source_option, split_option)


@click.group()
def data() -> None:
    """Build the benchmark's datasets: OpenReview collection, paper text, citations, Hub publishing."""


@data.command("verify-citations")
@click.argument("reviews_path", metavar="REVIEWS", type=SOURCE)
@source_option
@output_option("One row per reference: .jsonl, .parquet, or a directory (saved dataset).",
               default="citations.jsonl")
@click.option("--services", "citation_services", metavar="SERVICES", default="",
              help="Verify with these services, in order (comma-separated: crossref,openalex,dblp).")
@click.option("--bibliography", "bibliographies", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Verify offline against this file (DBLP .xml, OpenAlex works .jsonl, BibTeX .bib; .gz allowed; "
                   "repeatable); tried before any service.")
@click.option("--contact-email", envvar="PRAIB_CONTACT_EMAIL", metavar="EMAIL",
              help="Contact address sent to the services (mailto, User-Agent). [default: $PRAIB_CONTACT_EMAIL]")
@cache_dir_option("Directory of the answer cache and bibliography database; a rerun asks only what is missing. "
                  "[default: $PRAIB_CACHE or ~/.cache/praib/calls]")
@split_option
@no_progress_option
def verify_citations(reviews_path, source_name, output, citation_services, bibliographies, contact_email, cache_dir, split,
                     no_progress):
    """Check every formatted (MLA/APA/IEEE) reference of the REVIEWS records against bibliographic
    services or local bibliography files, and write what was cited, whether it was verified, and
    the matched record."""
    from praib.records import RecordError, load_records, save_records
    from praib.sources.verification import check_texts, make_verifier, verification_rows

    if not (citation_services or bibliographies):
        raise click.UsageError("give --services and/or --bibliography")
    try:
        reviews = load_records(reviews_path, "review", split=split, source_name=source_name)
        verifier = make_verifier(citation_services, bibliographies, contact_email, cache_dir)
        columns = reviews.select_columns(["review_id", "paper_id", "source", "text"]).to_dict()
        checks = check_texts(columns["text"], verifier, progress=not no_progress)
    except (RecordError, ValueError) as err:
        raise click.ClickException(str(err)) from None
    rows = verification_rows(columns, checks)
    save_records(rows, output)
    verified = sum(v is True for v in rows["verified"])
    unchecked = sum(v is None for v in rows["verified"])
    click.echo(f"{len(rows)} references in {len(reviews)} reviews: {verified} verified, "
               f"{len(rows) - verified - unchecked} not verified, {unchecked} unchecked; wrote {output}")


@data.command("pdf")
@click.argument("inputs", nargs=-1, required=True, metavar="DIR_OR_PDF...", type=SOURCE)
@output_option("Paper records: .jsonl, .parquet, or a directory (saved dataset).", default="papers.jsonl")
@click.option("--venue", help="Venue of every paper.")
@click.option("--year", type=int, help="Year of every paper.")
@click.option("--decision", help="Decision of every paper.")
@click.option("--token-budget", type=click.IntRange(min=0), default=50_000, show_default=True,
              help="Truncate each paper's markdown at the end to this many tokens; 0 keeps it whole.")
@click.option("--tokenizer", help="Tokenizer (local dir or Hub id) to count tokens with; default: 1.3 x words.")
@click.option("--ocr-model", help="Transcribe page images with this vision-language model instead of the PDF's "
                                  "text layer (e.g. deepseek-ai/DeepSeek-OCR served by vLLM).")
@click.option("--ocr-backend", type=click.Choice(["openai"]), default="openai", show_default=True,
              help="How to reach the OCR model: an OpenAI-compatible server.")
@click.option("--ocr-base-url", default=DEFAULT_BASE_URL, show_default=True,
              help="OpenAI-compatible server of the OCR model.")
@click.option("--ocr-prompt", default=None, help="Instruction sent with each page image. "
                                                  "[default: 'Convert the document to markdown.']")
@cache_dir_option("OCR call cache; a rerun sends only pages not yet transcribed. "
                  "[default: $PRAIB_CACHE or ~/.cache/praib/calls]")
@max_failures_option
@no_progress_option
def pdf_command(inputs, output, venue, year, decision, token_budget, tokenizer, ocr_model, ocr_backend, ocr_base_url,
        ocr_prompt, cache_dir, max_failures, no_progress):
    """Convert PDFs (files, or every .pdf directly inside a directory) to markdown Paper records;
    the file name without .pdf is the paper id. A PDF that cannot be converted (unreadable, or a page
    the OCR model gave no answer for) is recorded in OUTPUT.failures.jsonl and the others go on
    (exit status 3)."""
    from praib.llm.judge import default_cache_dir
    from praib.llm.backends import BackendError
    from praib.generation.papers import tokenizer_counter
    from praib.sources.papertext import OCR_PROMPT, PaperTextError, VisionOpenAIBackend, convert_pdfs
    from praib.records import records_to_dataset, save_records

    count_tokens = None
    if tokenizer:
        from transformers import AutoTokenizer

        try:
            count_tokens = tokenizer_counter(AutoTokenizer.from_pretrained(tokenizer))
        except (OSError, ValueError) as err:
            raise click.ClickException(f"could not load tokenizer {tokenizer!r}: {err}") from None
    ocr = None
    if ocr_model:
        from praib.llm.cache import CachedBackend, CallCache

        ocr = CachedBackend(VisionOpenAIBackend(ocr_model, base_url=ocr_base_url),
                            CallCache(cache_dir or default_cache_dir()))
    with failure_log(max_failures, output) as failures:
        try:
            converted = convert_pdfs(inputs, progress=not no_progress, failures=failures, venue=venue, year=year,
                                     decision=decision, token_budget=token_budget or None, count_tokens=count_tokens,
                                     ocr_backend=ocr, ocr_prompt=ocr_prompt or OCR_PROMPT)
        except (PaperTextError, BackendError) as err:
            raise click.ClickException(str(err)) from None
        save_records(records_to_dataset([c.record for c in converted], "paper"), output)
        truncated = [c.record["paper_id"] for c in converted if c.prepared.truncated]
        click.echo(f"{len(converted)} papers written to {output}"
                   + (f"; {len(truncated)} truncated at {token_budget} tokens: {', '.join(truncated[:10])}"
                      + (", ..." if len(truncated) > 10 else "") if truncated else "; none truncated"))


@data.command("build")
@click.option("--reviews", type=click.Path(exists=True), help="Human review records.")
@click.option("--papers", type=click.Path(exists=True), help="Paper records.")
@click.option("--meta-reviews", type=click.Path(exists=True), help="Meta-review records.")
@click.option("--rebuttals", type=click.Path(exists=True), help="Rebuttal records.")
@click.option("--generated-reviews", type=click.Path(exists=True), help="Model-written review records.")
@click.option("--counterfactuals", type=click.Path(exists=True), help="Counterfactual paper records.")
@click.option("--perturbations", type=click.Path(exists=True), help="Perturbed paper records.")
@output_option("Directory of the dataset repository (README.md card and data/<config>/*.parquet).",
               default="dataset", file_okay=False, writes="praib.sources.publish:REPOSITORY_FILES")
@click.option("--card-template", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Jinja template of the card. [default: praib/data/cards/praib.md.jinja]")
@click.option("--default-config", default=None, help="Config loaded when none is named. [default: reviews]")
def build_command(output, card_template, default_config, **sources):
    """Write a Hub dataset repository (Parquet per config, split 'train', and its card) that
    `datasets.load_dataset(DIR, CONFIG)` reads back with the records' schemas, and statistics.json:
    papers by decision, human reviews and model reviews per model and prompt, per venue and year
    (PRAIB's Tables 3, 7 and 8: `praib tables`)."""

    from praib.sources.dataset_statistics import describe_statistics
    from praib.sources.publish import DEFAULT_CARD_TEMPLATE, PublishError, build_dataset_repo, data_file
    from praib.records import RecordError

    given = {name: path for name, path in sources.items() if path}
    if not given:
        raise click.UsageError("give at least one of --reviews, --papers, --meta-reviews, --rebuttals, "
                               "--generated-reviews, --counterfactuals, --perturbations")
    try:
        build_dataset_repo(given, output, card_template=card_template or DEFAULT_CARD_TEMPLATE,
                           default=default_config)
    except (PublishError, RecordError) as err:
        raise click.ClickException(str(err)) from None
    built = [name for name in given if (output / data_file(name)).is_file()]  # empty configs are skipped
    click.echo(f"wrote {output}: configs {', '.join(built)}; {describe_statistics(output)}")


@data.command("push")
@click.argument("folder", type=click.Path(exists=True, file_okay=False), metavar="DIR")
@click.argument("repo_id", metavar="REPO_ID")
@click.option("--private", is_flag=True, help="Create the repository as private.")
@click.option("--token", default=None, help="Hub token. [default: $HF_TOKEN or the one saved by `hf auth login`]")
def push_command(folder, repo_id, private, token):
    """Upload DIR, written by `praib data build`, to the Hub dataset repository REPO_ID (ORG/NAME) in
    one commit ($HF_ENDPOINT is honoured)."""
    from praib.sources.publish import PublishError, push_dataset_repo

    try:
        url = push_dataset_repo(folder, repo_id, private=private, token=token)
    except PublishError as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"pushed {folder} to {repo_id}: {url}")


def _record_counts(counts: dict[str, int], papers) -> str:
    from praib.sources.sampling import is_withdrawn

    withdrawn = sum(is_withdrawn(d) for d in papers["decision"])
    return (f"{counts['paper']} papers ({withdrawn} withdrawn or desk-rejected), {counts['review']} reviews, "
            f"{counts['meta_review']} meta-reviews, {counts['rebuttal']} rebuttals")


@data.command("collect")
@click.argument("venue", metavar="VENUE")
@click.argument("years", metavar="YEAR...", type=int, nargs=-1, required=True)
@output_option("Directory for papers.jsonl, reviews.jsonl, meta_reviews.jsonl and rebuttals.jsonl.",
               default="records", file_okay=False, writes="praib.sources.openreview:RECORD_FOLDER_FILES")
@cache_dir_option("Raw API responses, one file per request; a rerun resumes from them. "
                  "[default: $PRAIB_CACHE/openreview or ~/.cache/praib/calls/openreview]")
@click.option("--offline", is_flag=True, help="Rebuild the records from the cache alone; make no request.")
@click.option("--base-url", default=None, help="API address for every year. [default: https://api.openreview.net "
                                              "for API v1 years, https://api2.openreview.net for v2]")
@click.option("--pace", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Seconds between two requests.")
@click.option("--page-size", type=click.IntRange(1, 1000), default=1000, show_default=True,
              help="Submissions per request (each with its whole forum).")
@no_progress_option
def collect_command(venue, years, output, cache_dir, offline, base_url, pace, page_size, no_progress):
    """Collect the papers, reviews, meta-reviews and rebuttals of VENUE (one with a layout in
    praib/data/openreview/: ICLR, NeurIPS) in each YEAR from OpenReview
    (API v1 or v2, as the venue-year needs). Public data needs no account; to log in, set
    $OPENREVIEW_USERNAME and $OPENREVIEW_PASSWORD."""
    import os

    from praib.llm.judge import default_cache_dir
    from praib.sources.openreview import CollectionError, NoteFetcher, collect, load_edition, login_token, write_records
    from praib.records import RecordError

    try:
        editions = [load_edition(venue, year) for year in years]
    except ValueError as err:
        raise click.UsageError(str(err)) from None
    username, password = os.environ.get("OPENREVIEW_USERNAME"), os.environ.get("OPENREVIEW_PASSWORD")
    token = None
    if username and password and not offline:
        import openreview
        import requests

        try:
            token = login_token(base_url, username, password)
        except (openreview.OpenReviewException, requests.RequestException) as err:
            raise click.ClickException(f"OpenReview login failed: {err}") from None
    fetcher = NoteFetcher(cache_dir if cache_dir else default_cache_dir() / "openreview", baseurl=base_url,
                          offline=offline, token=token, page_size=page_size, pace=pace)
    try:
        records = collect(venue, years, fetcher, progress=not no_progress)
    except (CollectionError, RecordError) as err:
        raise click.ClickException(str(err)) from None
    counts = write_records(records, output)
    click.echo(f"{editions[0].venue} {', '.join(map(str, years))}: {_record_counts(counts, records['paper'])}; "
               f"{fetcher.requests_made} requests, {fetcher.pages_from_cache} pages from the cache; wrote {output}")


@data.command("import-dump")
@click.argument("dump", type=click.Path(exists=True, dir_okay=False), metavar="FILE")
@click.argument("venue", metavar="VENUE")
@click.argument("year", metavar="YEAR", type=int)
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "peersum"]), default=None,
              help="json: submission notes (openreview-py's to_json, v1 or v2) with their replies in "
                   "details; csv: one review a row with paper_id and the review form's fields as columns; "
                   "peersum: PeerSum's raw peersum_all.json. [default: csv for a .csv FILE, json otherwise]")
@output_option("Directory for papers.jsonl, reviews.jsonl, meta_reviews.jsonl and rebuttals.jsonl.",
               default="records", file_okay=False, writes="praib.sources.openreview:RECORD_FOLDER_FILES")
def import_dump_command(dump, venue, year, fmt, output):
    """Convert a shared OpenReview dump FILE of one VENUE and YEAR into praib records (the review
    form is read from the venue's layout)."""

    from praib.sources.openreview import import_dump, write_records
    from praib.records import RecordError

    try:
        records = import_dump(dump, fmt or ("csv" if dump.lower().endswith(".csv") else "json"), venue, year)
    except (RecordError, ValueError) as err:
        raise click.ClickException(str(err)) from None
    counts = write_records(records, output)
    click.echo(f"{venue} {year} from {dump}: {_record_counts(counts, records['paper'])}; wrote {output}")


@data.command("sample")
@click.argument("papers", type=click.Path(exists=True), metavar="PAPERS")
@click.option("--reviews", type=click.Path(exists=True), help="Review records, kept for the sampled papers.")
@click.option("--meta-reviews", type=click.Path(exists=True), help="Meta-review records, filtered likewise.")
@click.option("--rebuttals", type=click.Path(exists=True), help="Rebuttal records, filtered likewise.")
@click.option("--per-venue-year", type=click.IntRange(min=2), default=100, show_default=True,
              help="Papers per venue-year: half accepted, half rejected.")
@click.option("--rejected-share", type=click.FloatRange(0, 1, min_open=True), metavar="SHARE",
              help="Instead of a balanced sample, draw this share of all the rejected papers (the target-aspect "
                   "study: 0.075).")
@seed_option("Seed of the ranking that picks the papers.")
@click.option("--year", "years", type=int, multiple=True,
              help="Sample only this year, for every venue in PAPERS; repeatable (PRAIB: 2021 to 2025). "
                   "[default: every year in PAPERS]")
@click.option("--include-withdrawn", is_flag=True, help="Count withdrawn and desk-rejected papers as rejected.")
@output_option("Directory for the sampled papers.jsonl and the filtered record files.", default="sample",
               file_okay=False, writes="praib.sources.openreview:RECORD_FOLDER_FILES")
def sample_command(papers, reviews, meta_reviews, rebuttals, per_venue_year, rejected_share, seed, years,
                   include_withdrawn, output):
    """Draw a balanced accept/reject sample of the PAPERS records per venue-year, reproducibly under --seed
    whatever the order of the records, and keep the reviews, meta-reviews and rebuttals of the
    sampled papers."""
    from collections import Counter

    from praib.sources.openreview import write_records
    from praib.records import RecordError, load_records
    from praib.sources.sampling import SamplingError, sample_records

    try:
        sources = {kind: load_records(path, kind, allow_empty=kind != "paper") if path else None for kind, path in
                   (("paper", papers), ("review", reviews), ("meta_review", meta_reviews),
                    ("rebuttal", rebuttals))}
        sampled = sample_records(sources["paper"], sources["review"], sources["meta_review"], sources["rebuttal"],
                                 per_venue_year=per_venue_year, seed=seed, include_withdrawn=include_withdrawn,
                                 years=years or None, rejected_share=rejected_share)
    except (RecordError, SamplingError) as err:
        raise click.ClickException(str(err)) from None
    counts = write_records(sampled, output)
    per_group = Counter(zip(sampled["paper"]["venue"], sampled["paper"]["year"]))
    groups = ", ".join(f"{venue} {year}: {n}" for (venue, year), n in sorted(per_group.items()))
    kept = ", ".join(f"{n} {kind.replace('_', '-')}s" for kind, n in counts.items() if kind != "paper")
    click.echo(f"sampled {counts['paper']} papers ({groups}) with seed {seed}"
               + (f"; kept {kept}" if kept else "") + f"; wrote {output}")


@data.command("import-ukp")
@click.argument("release_dir", metavar="DIR", type=SOURCE)
@output_option("Directory for papers.jsonl (the originals), counterfactuals.jsonl, logic.jsonl and release.jsonl "
               "(what the records do not hold, for export-ukp).", default="ukp", file_okay=False,
               writes="praib.sources.ukp:IMPORT_FILES")
def import_ukp_command(release_dir, output):
    """Read the UKP counter-review-logic release's data folder DIR (papers/, blueprints/, cf_datasets/)
    into praib records: the papers, the research logic of the blueprints, and the counterfactuals as
    variant papers (soundness-critical for the blueprint_* types)."""
    import json

    from praib.perturb.logic import logic_features, table
    from praib.records import coerce_record, records_to_dataset, save_records
    from praib.records.atomic import replace_folder
    from praib.sources.ukp import RELEASE_FILES, read_release

    try:
        release = read_release(release_dir)
        papers = [coerce_record(r, "paper", f"paper {r['paper_id']}") for r in release.papers]
        variants = [coerce_record(r, "paper", f"counterfactual of {r['paper_id']}") for r in release.counterfactuals]
        outputs = {"papers.jsonl": records_to_dataset(papers, "paper"),
                   "counterfactuals.jsonl": records_to_dataset(variants, "paper"),
                   "logic.jsonl": table(release.logic, logic_features())}
    except ValueError as err:
        raise click.ClickException(str(err)) from None
    for note in release.notes:
        click.echo(f"warning: {note}", err=True)
    written = []
    with replace_folder(output) as folder:  # a file of an earlier import would be exported too
        for name, records in outputs.items():
            if len(records):
                save_records(records, folder / name)
                written.append(name)
        (folder / RELEASE_FILES).write_text("".join(json.dumps(f, ensure_ascii=False) + "\n"
                                                    for f in release.files), encoding="utf-8")
    click.echo(f"read {release.describe()}; wrote {', '.join([*written, RELEASE_FILES])} to {output}")


@data.command("export-ukp")
@click.argument("records_path", metavar="RECORDS", type=SOURCE)
@click.option("--counterfactuals", type=click.Path(exists=True),
              help="Counterfactual paper records (e.g. from `praib counterfactual build`) to export instead of "
                   "RECORDS/counterfactuals.jsonl.")
@click.option("--logic", "logic_path", type=click.Path(exists=True),
              help="Logic records (e.g. from `praib counterfactual extract`) to export instead of RECORDS/logic.jsonl.")
@output_option("The release's data folder to write: papers/, blueprints/, cf_datasets/.", default="ukp-release",
               file_okay=False, writes=None)
def export_ukp_command(records_path, counterfactuals, logic_path, output):
    """Write praib records in the UKP counter-review-logic release's layout: a paper folder (paper.md,
    index.json, meta.json) per paper, a blueprint per logic record and a counterfactual dataset file
    per variant. RECORDS is a folder written by `praib data import-ukp` (papers.jsonl, and
    counterfactuals.jsonl, logic.jsonl, release.jsonl when there) or a file of paper records. Files
    that came from the release are written back as they were."""
    from pathlib import Path

    from praib.perturb.logic import load_logic
    from praib.records import load_records
    from praib.records.atomic import replace_folder
    from praib.sources.ukp import RELEASE_FILES, describe_counts, read_release_files, write_release

    records = Path(records_path)

    def beside(name: str) -> Path | None:
        return records / name if records.is_dir() and (records / name).exists() else None

    counterfactuals = counterfactuals or beside("counterfactuals.jsonl")
    logic_path = logic_path or beside("logic.jsonl")
    try:
        papers = load_records(records / "papers.jsonl" if records.is_dir() else records, "paper").to_list()
        variants = load_records(counterfactuals, "paper").to_list() if counterfactuals else []
        logic = load_logic(logic_path).to_list() if logic_path else []
        files = read_release_files(beside(RELEASE_FILES)) if beside(RELEASE_FILES) else []
        with replace_folder(output) as folder:
            counts = write_release(folder, papers, variants, logic, files)
    except ValueError as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"wrote {describe_counts(counts)} in the UKP release's layout to {output}")
