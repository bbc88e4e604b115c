"""The leaderboard app: a Gradio page over a results store (a folder, or a Hub dataset written by
``praib leaderboard process``) with a form that files requests into the queue.

Tabs: the leaderboard table (search by model; venue, prompt and metric-family filters; sort by
closeness to the human reference; each value with its 95% interval and its distance to human, ★ for
the closest with its rank interval where the run has one), a submission's page (its rating and
confidence distributions beside the human ones, every metric with its interval, the judges'
validity), the pairwise comparisons (``comparisons.parquet``, when the results hold them), About (the
metrics as :mod:`praib.metrics.registry` describes them) and Submit. The results are read again on
every page load, so a reload shows what the runners published since.

The tables are built by plain functions of the loaded :class:`Board`, so that they are tested
without a browser; :func:`build_app` only lays them out (and imports gradio, the ``[app]`` extra).
"""

from __future__ import annotations

import base64
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from praib.leaderboard.queue import Request, SubmissionRefused, read_requests, submit
from praib.leaderboard.report import POOLED, LeaderboardResults, ReportError, format_number, load_results, markdown_escape
from praib.leaderboard.stores import HubStore, Store, StoreError, open_store
from praib.metrics.registry import (DIFFERENCE, FAMILIES as METRIC_FAMILIES, ITSELF, MAGNITUDE, METRICS, PANEL_CHANGE,
                                    SHORTFALL, digits_of, label_of, lookup)
from praib.records import HUMAN_SOURCE, RecordError

#: Results that are no registered metric (written by another praib version, say) form one family.
OTHER_FAMILY = "other"
FAMILIES = (*(family.name for family in METRIC_FAMILIES), OTHER_FAMILY)
BY_NAME_ORDER = "submission"
#: What a distance to the human reference is, by the registry's distance kinds.
DISTANCE_MEANING = {
    DIFFERENCE: "|value − human value|",
    MAGNITUDE: "|value| (the metric is already a difference from the human reviews)",
    ITSELF: "the value itself (a distance between the two distributions)",
    PANEL_CHANGE: "|α of the human panels with the submission added − α of the panels alone|",
    SHORTFALL: "1 − value (1: the human items are matched exactly)",
    None: "not compared with the human value",
}
#: The files of a results store the app reads.
READ_FILES = ("results.parquet", "run.json", "eras.json", "comparisons.parquet", "ranks.parquet")
READ_FOLDERS = ("manifests", "details")


def family_of(metric: str) -> str:
    found = lookup(metric)
    return OTHER_FAMILY if found is None else found.family


@dataclass
class Board:
    """What the app shows: the results (empty before the first submission is processed), the paired
    comparisons and rank intervals when the results hold them, and where they came from."""

    results: LeaderboardResults
    label: str
    comparisons: list[dict] = field(default_factory=list)
    ranks: dict[tuple[str, str, str], tuple[float, float]] = field(default_factory=dict)

    @property
    def submissions(self) -> list[str]:
        return [s for s in self.results.submissions if s != HUMAN_SOURCE]

    def prompts(self, submission: str) -> list[str]:
        return list(self.results.manifests.get(submission, {}).get("prompts") or [])

    def model(self, submission: str) -> str:
        row = next((r for r in self.results.rows if r["submission"] == submission), None)
        return (row or {}).get("model") or submission

    def families(self) -> list[str]:
        present = {family_of(r["metric"]) for r in self.results.rows}
        return [f for f in FAMILIES if f in present]


def _parquet_rows(path: Path) -> list[dict]:
    from praib.records import read_parquet_rows

    return read_parquet_rows(path) if path.is_file() else []


def load_board(location: str, token: str | None = None) -> Board:
    """Read the results store at ``location``; a store with nothing published yet is an empty board."""
    store = open_store(location, token)
    with tempfile.TemporaryDirectory(prefix="praib-app-") as scratch:
        folder = _local_folder(store, Path(scratch))
        try:
            results = load_results(folder) if (folder / "results.parquet").is_file() else \
                LeaderboardResults(folder, [])
        except ReportError as err:
            raise StoreError(str(err)) from None
        ranks = {(r["submission"], r["metric"], r["venue"]): (r.get("rank_low"), r.get("rank_high"))
                 for r in _parquet_rows(folder / "ranks.parquet")}
        return Board(results, store.label, _parquet_rows(folder / "comparisons.parquet"), ranks)


def _local_folder(store: Store, scratch: Path) -> Path:
    """The store's files the app reads, in a local folder (a folder store is one already)."""
    if not isinstance(store, HubStore):
        return store.folder
    snapshot = store.snapshot()
    for path in snapshot.paths:
        if path in READ_FILES or path.split("/")[0] in READ_FOLDERS:
            target = scratch / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(store.read(path, snapshot.version) or b"")
    return scratch


# ----------------------------------------------------------------------------- the leaderboard table


def _interval(row: dict, digits: int) -> str:
    if row.get("ci_low") is None or row.get("ci_high") is None:
        return ""
    return f" [{format_number(row['ci_low'], digits)}, {format_number(row['ci_high'], digits)}]"


def metric_cell(board: Board, row: dict | None) -> str:
    """A metric's cell: the value with its 95% interval; under it the distance to human, ★ when closest,
    and the rank interval when the results hold one."""
    if row is None or row.get("value") is None:
        return "–"
    digits = digits_of(row["metric"])
    text = format_number(row["value"], digits) + _interval(row, digits)
    if row["submission"] == HUMAN_SOURCE or row.get("distance_to_human") is None:
        return text
    distance = f"Δ {format_number(row['distance_to_human'], digits)}"
    rank = board.ranks.get((row["submission"], row["metric"], row["venue"]))
    if rank and None not in rank:
        distance += f" (rank {rank[0]:g}–{rank[1]:g})"
    return f"{text}\n{'★ ' if row.get('closest_to_human') else ''}{distance}"


def shown_metrics(board: Board, venue: str, families) -> list[str]:
    """The venue's metrics of ``families``, in the registry's order (the others after)."""
    shown = [m for m in board.results.metrics(venue) if family_of(m) in set(families)]
    order = {metric.name: number for number, metric in enumerate(METRICS)}
    return sorted(shown, key=lambda m: order.get(getattr(lookup(m), "name", None), len(order)))


def sort_choices(board: Board, venue: str = POOLED) -> list[tuple[str, str]]:
    """(label, value) pairs: by submission name, or closest to human first on one metric."""
    return [("submission name", BY_NAME_ORDER)] + [
        (f"{label_of(m)}: closest to human first", m) for m in board.results.metrics(venue)
        if any(r["metric"] == m and r["distance_to_human"] is not None for r in board.results.rows)]


def leaderboard_table(board: Board, venue: str = POOLED, prompts=(), families=FAMILIES, search: str = "",
                      sort_by: str = BY_NAME_ORDER) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the leaderboard: the human reference first, then every submission that has
    results on ``venue``, reviews with one of ``prompts`` (all when empty) and whose model or name holds
    ``search``, ordered by ``sort_by``."""
    metrics = shown_metrics(board, venue, families)
    header = ["Submission", "Model", "Prompts", *(label_of(m) for m in metrics)]
    wanted = search.strip().lower()
    kept = [s for s in board.submissions
            if any(board.results.row(s, m, venue) for m in board.results.metrics(venue))
            and (not prompts or set(board.prompts(s)) & set(prompts))
            and (not wanted or wanted in s.lower() or wanted in board.model(s).lower())]
    if sort_by != BY_NAME_ORDER:
        def distance(submission):
            row = board.results.row(submission, sort_by, venue)
            value = None if row is None else row["distance_to_human"]
            return (value is None, value if value is not None else 0.0, submission)
        kept.sort(key=distance)
    else:
        kept.sort()
    rows = []
    if board.results.row(HUMAN_SOURCE, metrics[0], venue) if metrics else False:
        rows.append(["human (reference)", "–", "–",
                     *(metric_cell(board, board.results.row(HUMAN_SOURCE, m, venue)) for m in metrics)])
    for submission in kept:
        rows.append([submission, board.model(submission), ", ".join(board.prompts(submission)),
                     *(metric_cell(board, board.results.row(submission, m, venue)) for m in metrics)])
    return header, rows


# ----------------------------------------------------------------------------- a submission's page


def submission_metrics(board: Board, submission: str) -> tuple[list[str], list[list[str]]]:
    """Every result of one submission: metric, venue, value, 95% interval, human value, distance."""
    header = ["Metric", "Family", "Venue", "Value", "95% interval", "Human", "Distance to human"]
    rows = []
    for row in board.results.rows:
        if row["submission"] != submission:
            continue
        digits = digits_of(row["metric"])
        rows.append([label_of(row["metric"]), family_of(row["metric"]), row["venue"],
                     format_number(row["value"], digits), _interval(row, digits).strip() or "–",
                     format_number(row["human_value"], digits),
                     format_number(row["distance_to_human"], digits) + (" ★" if row["closest_to_human"] else "")])
    return header, rows


def submission_summary(board: Board, submission: str) -> str:
    """Markdown: the manifest's facts and the judges' validity."""
    from praib.evaluation.judge_validity import validity_lines

    manifest = board.results.manifests.get(submission, {})
    facts = [f"**Model** {board.model(submission)}", f"**revision** {manifest.get('revision') or '–'}",
             f"**backend** {manifest.get('backend') or '–'}", f"**prompts** {', '.join(board.prompts(submission))}",
             f"**generated** {manifest.get('date') or '–'}",
             f"**knowledge cut-off** {manifest.get('knowledge_cutoff') or '–'}"]
    text = [f"### {submission}", " · ".join(facts)]
    if manifest.get("sampling"):
        text.append("**Sampling** " + ", ".join(f"{k}={v}" for k, v in manifest["sampling"].items()))
    run = board.results.run or {}
    if run.get("judge"):
        text.append("**Judge** " + str(run["judge"].get("model")) + "\n\n```\n"
                    + "\n".join(validity_lines(run.get("judge_validation") or {})) + "\n```")
    else:
        text.append("**Judge** none: the judged metrics (math engagement, coverage, target/aspect) were not computed.")
    return "\n\n".join(text)


def distribution_plots(board: Board, submission: str) -> str:
    """HTML: the submission's rating and confidence distributions beside the human ones (PNG)."""
    from praib.leaderboard.plots import score_distribution_png

    images = []
    for group in (board.results.details.get(submission) or {}).get("groups", []):
        png = None if group.get("is_reference") else score_distribution_png(group)
        if png:
            images.append(f'<img alt="{_escape(submission)}: rating and confidence distributions" '
                          f'style="max-width:100%" src="data:image/png;base64,{base64.b64encode(png).decode()}">')
    return "".join(images) or "<p>No distributions to plot (no details of this submission).</p>"


def _escape(text: str) -> str:
    import html

    return html.escape(text, quote=True)


# ----------------------------------------------------------------------------- comparisons, about, queue


def comparison_table(board: Board, metric: str | None = None, venue: str | None = None
                     ) -> tuple[list[str], list[list[str]]]:
    """The paired comparisons of ``metric`` on ``venue`` (every column the results hold)."""
    rows = [r for r in board.comparisons if (metric is None or r.get("metric") == metric)
            and (venue is None or r.get("venue") == venue)]
    header = list(board.comparisons[0]) if board.comparisons else []
    return header, [[format_number(v, 3) if isinstance(v, float) else "–" if v is None else str(v)
                     for v in (r.get(c) for c in header)] for r in rows]


def about_markdown() -> str:
    """Each metric a leaderboard run computes as the registry describes it (not those of a command of their own,
    such as ``praib grounding``), and how to submit."""
    lines = ["### Metrics", "",
             "| Metric | Name | Family | Unit | Over | Distance to human | Source |", "|---|---|---|---|---|---|---|"]
    for m in (m for m in METRICS if m.command is None):
        cells = [m.label, m.name, m.family, m.unit, f"per {m.over}", DISTANCE_MEANING[m.distance],
                 m.source + (" (needs a judge)" if m.judged else "")]
        lines.append("| " + " | ".join(markdown_escape(cell) for cell in cells) + " |")
    lines += ["", "### Reading the table", "",
              "Each cell is the submission's value with its 95% cluster-bootstrap interval over papers, and under "
              "it the distance to the human reference (Δ, as the table above defines it; smaller is more human-like). "
              "★ marks the submission closest to human on that metric and venue; where the results hold rank "
              "intervals, the range of its rank over the bootstrap draws follows.", "",
              "### Submitting", "",
              "Publish the generated reviews (Review records) with their `manifest.json` as a Hub dataset, check it "
              "with `praib leaderboard validate ORG/NAME`, then file it in the Submit tab or with "
              "`praib leaderboard submit ORG/NAME --queue QUEUE`. A runner scores it against the human reference; "
              "its row appears here once its request is FINISHED."]
    return "\n".join(lines)


def queue_table(queue: Store | None) -> tuple[list[str], list[list[str]]]:
    header = ["Request", "Model", "Revision", "Prompts", "Status", "Submitted", "Reason"]
    if queue is None:
        return header, []
    _, requests = read_requests(queue)
    return header, [[r.name, r.model, r.revision or "–", ", ".join(r.prompts), r.status, r.submitted,
                     r.reason or ""] for r in requests]


def file_request(queue: Store, source: str) -> str:
    """Markdown: the filed request, or why the submission was refused (its validation report)."""
    source = source.strip()
    if not source:
        return "Give a Hub dataset id (ORG/NAME) or a path."
    from praib.leaderboard.submission import SubmissionError

    try:
        request: Request = submit(queue, source)
    except SubmissionRefused as err:
        report = f"\n\n```\n{err.report.format()}\n```" if err.report is not None else ""
        return f"**Not filed.** {_escape(str(err))}{report}"
    except (SubmissionError, StoreError, RecordError) as err:
        return f"**Not filed.** {_escape(str(err))}"
    return (f"**Filed** `{request.name}` ({_escape(request.model)}, {request.n_reviews} reviews) as "
            f"**{request.status}**; it appears in the leaderboard once a runner has processed it.")


# ----------------------------------------------------------------------------- the page


def build_app(results: str, queue: str | None = None, token: str | None = None, title: str = "praib leaderboard"):
    """The Gradio app over the results store ``results``, with a Submit tab when ``queue`` is given."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    import gradio as gr

    queue_store = open_store(queue, token) if queue else None

    def frame(table):
        import pandas as pd

        header, rows = table
        return pd.DataFrame(rows, columns=header)

    def refresh(venue, prompts, families, search, sort_by):
        board = load_board(results, token)
        venues = board.results.venues() or [POOLED]
        venue = venue if venue in venues else POOLED
        prompt_choices = sorted({p for s in board.submissions for p in board.prompts(s)})
        family_choices = board.families()
        chosen = [f for f in families or [] if f in family_choices]
        sorts = sort_choices(board, venue)
        sort_by = sort_by if sort_by in [v for _, v in sorts] else BY_NAME_ORDER
        return (board, gr.update(choices=venues, value=venue),
                gr.update(choices=prompt_choices, value=[p for p in prompts or [] if p in prompt_choices]),
                gr.update(choices=family_choices, value=chosen), gr.update(choices=sorts, value=sort_by),
                frame(leaderboard_table(board, venue, prompts or [], chosen, search or "", sort_by)),
                gr.update(choices=board.submissions, value=board.submissions[0] if board.submissions else None),
                _status(board))

    def table(board, venue, prompts, families, search, sort_by):
        return frame(leaderboard_table(board, venue or POOLED, prompts or [], families or [], search or "",
                                       sort_by or BY_NAME_ORDER))

    def page(board, submission):
        if not submission:
            return "No submission yet.", "", frame(submission_metrics(board, ""))
        return (submission_summary(board, submission), distribution_plots(board, submission),
                frame(submission_metrics(board, submission)))

    def comparisons(board, metric, venue):
        if not board.comparisons:
            return frame(([], []))
        return frame(comparison_table(board, metric or None, venue or None))

    with gr.Blocks(title=title) as app:
        board = gr.State()
        gr.Markdown(f"# {_escape(title)}")
        status = gr.Markdown()
        with gr.Tab("Leaderboard"):
            with gr.Row():
                search = gr.Textbox(label="Search by model", placeholder="model or submission name", scale=2)
                venue = gr.Dropdown(label="Venue", choices=[POOLED], value=POOLED, elem_id="venue")
                prompts = gr.Dropdown(label="Prompts", choices=[], multiselect=True)
                sort_by = gr.Dropdown(label="Sort by", choices=[("submission name", BY_NAME_ORDER)],
                                      value=BY_NAME_ORDER)
            families = gr.CheckboxGroup(label="Metric families shown", choices=list(FAMILIES), value=list(FAMILIES))
            leaderboard = gr.Dataframe(interactive=False, wrap=True, line_breaks=True, elem_id="leaderboard",
                                       max_height=900, pinned_columns=1)
        with gr.Tab("Submission"):
            chosen = gr.Dropdown(label="Submission", choices=[])
            summary = gr.Markdown()
            plots = gr.HTML()
            details = gr.Dataframe(interactive=False, wrap=True)
        with gr.Tab("Comparisons"):
            gr.Markdown("Paired differences of the distance to human between two submissions on the papers both "
                        "reviewed, with their interval and verdict, from the results' `comparisons.parquet`.")
            with gr.Row():
                compared_metric = gr.Textbox(label="Metric (name)", placeholder="e.g. fre")
                compared_venue = gr.Textbox(label="Venue", placeholder="e.g. all")
            compared = gr.Dataframe(interactive=False, wrap=True)
        with gr.Tab("About"):
            gr.Markdown(about_markdown())
        if queue_store is not None:
            with gr.Tab("Submit"):
                gr.Markdown("File a submission for the runners to score: a Hub dataset id (ORG/NAME) holding the "
                            "reviews and their `manifest.json`"
                            + ("" if isinstance(queue_store, HubStore) else ", or a path on the machine that serves "
                               "this page") + ".")
                source = gr.Textbox(label="Submission", elem_id="submission-source")
                send = gr.Button("Submit", elem_id="submit-button")
                outcome = gr.Markdown(elem_id="submit-outcome")
                requests = gr.Dataframe(interactive=False, wrap=True, label="Queue", elem_id="queue")
                send.click(lambda text: file_request(queue_store, text), source, outcome).then(
                    lambda: frame(queue_table(queue_store)), None, requests)
                app.load(lambda: frame(queue_table(queue_store)), None, requests)

        filters = [venue, prompts, families, search, sort_by]
        app.load(refresh, filters, [board, venue, prompts, families, sort_by, leaderboard, chosen, status]).then(
            page, [board, chosen], [summary, plots, details]).then(
            comparisons, [board, compared_metric, compared_venue], compared)
        for control in filters:
            control.change(table, [board, *filters], leaderboard)
        chosen.change(page, [board, chosen], [summary, plots, details])
        for control in (compared_metric, compared_venue):
            control.change(comparisons, [board, compared_metric, compared_venue], compared)
    return app


def _status(board: Board) -> str:
    n = len(board.submissions)
    run = board.results.run or {}
    if not n:
        return f"No results in {board.label} yet: they appear once a runner has processed a submission."
    return (f"{n} submission{'s' if n != 1 else ''} against the human reference {run.get('reference', '–')}; "
            f"{run.get('n_bootstrap', '–')} bootstrap draws; praib {run.get('praib_version', '–')}.")


def launch(results: str, queue: str | None = None, port: int | None = None, host: str = "127.0.0.1",
           token: str | None = None) -> None:
    """Serve the app (blocks until stopped)."""
    build_app(results, queue, token).launch(server_name=host, server_port=port, footer_links=[], quiet=True)
