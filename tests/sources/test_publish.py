"""`praib data build` -> load_dataset round trip, the card, and `praib data push` against a local fake Hub."""

import base64
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import datasets
import pytest
import yaml
from click.testing import CliRunner

from praib.cli.data import data
from praib.sources.publish import DEFAULT_CARD_TEMPLATE, PublishError, build_dataset_repo, repository_card
from praib.records.atomic import RECORD
from praib.records import (META_REVIEW_FEATURES, PAPER_FEATURES, REBUTTAL_FEATURES, REVIEW_FEATURES, RecordError,
                           coerce_record, records_to_dataset, save_records)
from tests.paths import ROOT


PERTURBED = {"kind": "remove_method_details", "category": "soundness-critical", "component": "paper",
             "description": "Deleted the training details of Section 3.", "seed": 7}
COUNTERFACTUAL = {"kind": "counterfactual_result", "category": "soundness-critical", "component": "paper",
                  "description": "Table 2 now shows the baseline ahead.", "seed": 1}
GENERATION = {"backend": "openai", "model_revision": "fp_abc", "template": "extended@1a2b3c4d", "temperature": 0.0,
              "top_p": 1.0, "max_new_tokens": 4096, "seed": 0, "knowledge_cutoff": "2024-06",
              "paper_tokens": 12345, "paper_truncated": False, "appendix_removed": True}

RAW = {
    "papers": ("paper", [
        {"paper_id": "p1", "venue": "ICLR", "year": 2025, "title": "A", "abstract": "About A.",
         "keywords": ["review", "llm"], "decision": "Accept (Poster)", "text": "# A\n\n## 1 Introduction\n\nText."},
        {"paper_id": "p2", "venue": "NeurIPS", "year": 2024, "title": "B", "text": "# B\n\nBody."}]),
    "reviews": ("review", [
        {"paper_id": "p1", "source": "human", "venue": "ICLR", "year": 2025, "reviewer_id": "R1",
         "summary": "Sum.", "strengths": "Clear.", "weaknesses": "Small data.", "rating": 6, "confidence": 4,
         "subscores": [{"name": "soundness", "value": 3}, {"name": "presentation", "value": 2}]},
        {"paper_id": "p1", "source": "human", "venue": "ICLR", "year": 2025, "text": "Made harsher.", "rating": 3,
         "perturbation": {**PERTURBED, "component": "review", "kind": "review_tone"}}]),
    "meta_reviews": ("meta_review", [
        {"paper_id": "p1", "source": "human", "venue": "ICLR", "year": 2025, "text": "Accept.",
         "recommendation": "Accept (Poster)"}]),
    "rebuttals": ("rebuttal", [
        {"paper_id": "p1", "review_id": "r-1", "venue": "ICLR", "year": 2025, "source": "authors",
         "text": "We added data."}]),
    "generated_reviews": ("review", [
        {"paper_id": "p1", "source": "qwen", "model": "Qwen/Qwen2.5-7B-Instruct", "prompt": "extended",
         "venue": "ICLR", "year": 2025, "text": "## Summary\nGood.\nRating: 6", "rating": 6,
         "parse_status": "partial", "parse_reason": "no confidence", "generation": GENERATION},
        {"paper_id": "p1", "source": "qwen", "model": "Qwen/Qwen2.5-7B-Instruct", "prompt": "extended",
         "text": "Unparsable", "parse_status": "failed", "generation": GENERATION, "perturbation": PERTURBED}]),
    "counterfactuals": ("paper", [
        {"paper_id": "p1", "venue": "ICLR", "year": 2025, "title": "A", "text": "# A\n\nEdited.",
         "perturbation": COUNTERFACTUAL}]),
    "perturbations": ("paper", [
        {"paper_id": "p1", "venue": "ICLR", "year": 2025, "title": "A", "text": "# A\n\nNo details.",
         "perturbation": PERTURBED}]),
}
FEATURES = {"papers": PAPER_FEATURES, "reviews": REVIEW_FEATURES, "meta_reviews": META_REVIEW_FEATURES,
            "rebuttals": REBUTTAL_FEATURES, "generated_reviews": REVIEW_FEATURES, "counterfactuals": PAPER_FEATURES,
            "perturbations": PAPER_FEATURES}


def records(config):
    kind, rows = RAW[config]
    return records_to_dataset([coerce_record(r, kind, f"{config}[{i}]") for i, r in enumerate(rows)], kind)


@pytest.fixture
def built(tmp_path):
    args = []
    for config in RAW:
        path = save_records(records(config), tmp_path / "in" / f"{config}.jsonl")
        args += [f"--{config.replace('_', '-')}", str(path)]
    result = CliRunner().invoke(data, ["build", *args, "--output", str(tmp_path / "repo")])
    assert result.exit_code == 0, result.output
    return tmp_path / "repo"


def front_matter(card: Path) -> dict:
    return yaml.safe_load(card.read_text(encoding="utf-8").split("---\n")[1])


@pytest.mark.parametrize("config", list(RAW))
def test_build_then_load_dataset_gives_the_records_back(built, config):
    loaded = datasets.load_dataset(str(built), config, split="train")
    assert loaded.features == FEATURES[config]
    assert loaded.to_list() == records(config).to_list()


def test_round_trip_keeps_the_structs(built):
    generated = datasets.load_dataset(str(built), "generated_reviews", split="train")
    assert generated[0]["generation"] == GENERATION and generated[0]["perturbation"] is None
    assert generated[1]["perturbation"] == PERTURBED
    reviews = datasets.load_dataset(str(built), "reviews", split="train")
    assert reviews[0]["subscores"] == [{"name": "soundness", "value": 3}, {"name": "presentation", "value": 2}]


def test_default_config_is_reviews(built):
    assert datasets.load_dataset(str(built), split="train").to_list() == records("reviews").to_list()


def test_card_names_every_config_file_and_counts(built):
    meta = front_matter(built / "README.md")
    assert meta["license"] == "other" and "peer-review" in meta["tags"]
    assert sorted(c["config_name"] for c in meta["configs"]) == sorted(RAW)
    reviews = next(c for c in meta["configs"] if c["config_name"] == "reviews")
    assert reviews == {"config_name": "reviews", "default": True,
                       "data_files": [{"split": "train", "path": "data/reviews/train-00000-of-00001.parquet"}]}
    assert sum(bool(c.get("default")) for c in meta["configs"]) == 1
    for c in meta["configs"]:
        assert (built / c["data_files"][0]["path"]).is_file()
    sizes = {i["config_name"]: i["splits"][0]["num_examples"] for i in meta["dataset_info"]}
    assert sizes == {"papers": 2, "reviews": 2, "meta_reviews": 1, "rebuttals": 1, "generated_reviews": 2,
                     "counterfactuals": 1, "perturbations": 1}
    body = (built / "README.md").read_text(encoding="utf-8")
    assert "| `reviews` (default) | review | 2 | 1 |" in body
    assert "| `generated_reviews` | review | 2 | 1 |" in body
    assert "| `generation.paper_truncated` | bool |" in body and "| `keywords` | list of string |" in body
    assert "| `subscores` | list of {name: string, value: int32} |" in body
    assert "| NeurIPS | 2024 | 1 |" in body and "| ICLR | 2025 | 1 |" in body
    assert "{{ " not in body and "{%" not in body  # rendered (the BibTeX keeps its own "{{PRAIB}")


def test_statistics_count_the_original_papers_and_reviews_per_venue_and_year(built):
    """By hand from RAW: p1 (ICLR 2025, accepted) and p2 (NeurIPS 2024, no decision); one unperturbed human review
    and one unperturbed generated review, both of p1; the perturbed records do not count."""
    stats = json.loads((built / "statistics.json").read_text(encoding="utf-8"))
    assert stats["statistics_of"] == "praib data build" and stats["configs"] == sorted(RAW)
    nothing = {"papers": 0, "accepted": 0, "rejected": 0, "withdrawn": 0, "undecided": 0, "reviews": 0,
               "generated_reviews": 0}
    iclr = {**nothing, "papers": 1, "accepted": 1, "reviews": 1, "generated_reviews": 1,
            "by_model": {"Qwen/Qwen2.5-7B-Instruct": {"extended": 1}}}
    neurips = {**nothing, "papers": 1, "undecided": 1}
    assert stats["venues"] == {"ICLR": {"years": {"2025": iclr}, "total": iclr},
                               "NeurIPS": {"years": {"2024": neurips}, "total": neurips}}
    assert stats["total"] == {**nothing, "papers": 2, "accepted": 1, "undecided": 1, "reviews": 1,
                              "generated_reviews": 1, "by_model": {"Qwen/Qwen2.5-7B-Instruct": {"extended": 1}}}


def test_statistics_pool_a_venues_year_group_and_leave_out_counts_of_configs_not_built(tmp_path):
    papers = [coerce_record({"paper_id": f"p{i}", "venue": "ICLR", "year": year, "decision": decision}, "paper", "t")
              for i, (year, decision) in enumerate([(2017, "Accept (Oral)"), (2018, "Reject"),
                                                    (2018, "Withdrawn"), (2019, "Desk rejected")])]
    build_dataset_repo({"papers": records_to_dataset(papers, "paper")}, tmp_path / "repo")
    stats = json.loads((tmp_path / "repo" / "statistics.json").read_text(encoding="utf-8"))
    years = stats["venues"]["ICLR"]["years"]
    assert list(years) == ["<=2018", "2019"]  # ICLR 2017 and 2018 share one rating scale, as PRAIB pools them
    assert years["<=2018"] == {"papers": 3, "accepted": 1, "rejected": 1, "withdrawn": 1, "undecided": 0}
    assert years["2019"] == {"papers": 1, "accepted": 0, "rejected": 0, "withdrawn": 1, "undecided": 0}


def test_checked_in_card_is_the_rendered_template():
    """datasets/praib/README.md is the template rendered for every config without records; the
    template itself is package data, so a wheel install builds cards without the source tree."""
    assert DEFAULT_CARD_TEMPLATE.is_relative_to(ROOT / "praib")
    checked_in = (ROOT / "datasets" / "praib" / "README.md").read_text(encoding="utf-8")
    assert checked_in == repository_card(), "regenerate datasets/praib/README.md (see datasets/README.md)"
    meta = front_matter(ROOT / "datasets" / "praib" / "README.md")
    assert [c["config_name"] for c in meta["configs"] if c.get("default")] == ["reviews"]
    assert {c["config_name"] for c in meta["configs"]} == {
        "papers", "reviews", "meta_reviews", "rebuttals", "generated_reviews", "counterfactuals", "perturbations"}
    assert all("splits" not in info for info in meta["dataset_info"])  # no records, no sizes
    assert "| `reviews` (default) | review |\n" in checked_in and "| venue | year | rows |" not in checked_in


def test_rebuilding_with_fewer_configs_leaves_no_stale_files(tmp_path):
    out = build_dataset_repo({"reviews": records("reviews"), "papers": records("papers")}, tmp_path / "repo")
    build_dataset_repo({"reviews": records("reviews")}, out)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet")) == [
        "data/reviews/train-00000-of-00001.parquet"]


def test_build_refuses_unknown_configs_and_foreign_schemas(tmp_path):
    with pytest.raises(PublishError, match="unknown config.*reviewz"):
        build_dataset_repo({"reviewz": records("reviews")}, tmp_path / "x")
    with pytest.raises(PublishError, match="config 'papers': records do not have the paper schema"):
        build_dataset_repo({"papers": records("reviews")}, tmp_path / "x")
    # Review rows read as papers pass the schema (the fields they share) but repeat their paper_id.
    reviews = [{**row, "review_id": f"r{i}", "text": f"Review {i}."} for i, row in enumerate(RAW["reviews"][1][:1] * 2)]
    save_records(records_to_dataset([coerce_record(r, "review", "r") for r in reviews], "review"),
                 tmp_path / "reviews.jsonl")
    with pytest.raises(RecordError, match=r"reviews.jsonl: field 'paper_id': 1 id repeats with different content: p1$"):
        build_dataset_repo({"papers": tmp_path / "reviews.jsonl"}, tmp_path / "x")
    as_papers = records_to_dataset([coerce_record(r, "paper", "r") for r in reviews], "paper")
    with pytest.raises(PublishError, match="config 'papers': paper_id repeats"):
        build_dataset_repo({"papers": as_papers}, tmp_path / "x")


def test_build_skips_empty_configs_with_a_warning_and_refuses_when_all_are_empty(tmp_path, caplog):
    reviews = save_records(records("reviews"), tmp_path / "reviews.jsonl")
    empty = {kind: save_records(records_to_dataset([], kind), tmp_path / f"no-{kind}.parquet")
             for kind in ("paper", "rebuttal")}
    out = tmp_path / "repo"
    result = CliRunner().invoke(data, ["build", "--reviews", str(reviews), "--papers", str(empty["paper"]),
                                       "--rebuttals", str(empty["rebuttal"]), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"wrote {out}: configs reviews; statistics.json: 1 human review, 0 model reviews"
    assert f"skipped 2 empty configs: papers ({empty['paper']}), rebuttals ({empty['rebuttal']})" in caplog.text
    assert [p.relative_to(out).as_posix() for p in out.rglob("*.parquet")] == [
        "data/reviews/train-00000-of-00001.parquet"]
    assert [c["config_name"] for c in front_matter(out / "README.md")["configs"]] == ["reviews"]

    result = CliRunner().invoke(data, ["build", "--papers", str(empty["paper"]), "--rebuttals", str(empty["rebuttal"]),
                                       "--output", str(tmp_path / "none")])
    assert result.exit_code == 1 and not (tmp_path / "none").exists()
    assert result.output.strip() == (f"Error: every config holds no records: papers ({empty['paper']}), "
                                     f"rebuttals ({empty['rebuttal']}); nothing to build")
    with pytest.raises(PublishError, match=r"^the default config 'papers' holds no records"):
        build_dataset_repo({"reviews": reviews, "papers": empty["paper"]}, tmp_path / "x", default="papers")


def test_build_reports_the_bad_line(tmp_path):
    bad = tmp_path / "reviews.jsonl"
    bad.write_text('{"paper_id": "p1", "source": "human"}\n{"paper_id": "p1", "source": "human", "rating": "x"}\n')
    result = CliRunner().invoke(data, ["build", "--reviews", str(bad), "--output", str(tmp_path / "repo")])
    assert result.exit_code == 1
    assert "reviews.jsonl: line 2: field 'rating': expected an integer, got 'x'" in result.output


def _build_with_card(tmp_path, template_text):
    template = tmp_path / "card.jinja"
    template.write_text(template_text, encoding="utf-8")
    reviews = save_records(records("reviews"), tmp_path / "reviews.jsonl")
    result = CliRunner().invoke(data, ["build", "--reviews", str(reviews), "--card-template", str(template),
                                       "--output", str(tmp_path / "repo")])
    return result, template


@pytest.mark.parametrize("text, found", [("", "no text"), ("\n  \n", "no text"),
                                         ("---\nlicense: mit\n---\n\n", "no text but its YAML header")])
def test_a_card_template_that_renders_nothing_is_refused(tmp_path, text, found):
    result, template = _build_with_card(tmp_path, text)
    assert result.exit_code == 1 and not (tmp_path / "repo").exists()
    assert result.output == (f"Error: {template}: the card template renders {found}; "
                             "a dataset card needs a description of the data\n")


def test_a_card_template_without_a_header_gets_praibs_header_without_a_warning(tmp_path, caplog):
    result, _ = _build_with_card(tmp_path, "# Our reviews ({{ configs | length }} config)\n")
    assert result.exit_code == 0, result.output
    card = (tmp_path / "repo" / "README.md").read_text(encoding="utf-8")
    assert card.endswith("---\n# Our reviews (1 config)\n")
    assert [c["config_name"] for c in front_matter(tmp_path / "repo" / "README.md")["configs"]] == ["reviews"]
    assert "metadata block" not in caplog.text + result.output


def test_a_recursive_macro_in_a_card_template_is_one_line_naming_it(tmp_path):
    result, template = _build_with_card(tmp_path, "# Card\n{% macro f() %}{{ f() }}{% endmacro %}\n{{ f() }}\n")
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: cannot render the card template: {template}: line 2: calls macros "
                                    "or includes too deeply")
    assert len(result.output.splitlines()) == 1


# --------------------------------------------------------------------------- push


class FakeHub(BaseHTTPRequestHandler):
    """The few Hub endpoints that create_repo and upload_folder call; every file is uploaded inline."""

    requests: list = []

    def log_message(self, *args):
        pass

    def _reply(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.requests.append(("GET", self.path, self.headers.get("Authorization"), b""))
        self._reply(404, {"error": "not here"})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.requests.append(("POST", self.path, self.headers.get("Authorization"), body))
        host = f"http://{self.headers['Host']}"
        if self.path == "/api/repos/create" and json.loads(body)["name"] == "forbidden":
            self._reply(403, {"error": "You don't have the rights to create a dataset under this namespace"})
        elif self.path == "/api/repos/create":
            self._reply(200, {"url": f"{host}/datasets/org/praib", "name": "org/praib"})
        elif self.path == "/api/validate-yaml":
            self._reply(200, {"errors": [], "warnings": []})
        elif self.path == "/api/datasets/org/praib/preupload/main":
            self._reply(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                        for f in json.loads(body)["files"]]})
        elif self.path == "/api/datasets/org/praib/commit/main":
            self._reply(200, {"commitUrl": f"{host}/datasets/org/praib/commit/{'c' * 40}", "commitOid": "c" * 40})
        else:
            self._reply(404, {"error": "not here"})


@pytest.fixture
def fake_hub():
    FakeHub.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", FakeHub.requests
    server.shutdown()
    server.server_close()


def run_praib(*args, endpoint):
    # A fresh interpreter, so huggingface_hub reads HF_ENDPOINT at import as it would for a user. Any
    # request to another host goes to a dead proxy and fails, so nothing can reach the real Hub.
    env = {**os.environ, "HF_ENDPOINT": endpoint, "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_TELEMETRY": "1",
           "HF_TOKEN": "", "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
           "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    return subprocess.run([sys.executable, "-m", "praib.cli.main", *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_push_uploads_the_built_folder_in_one_commit_to_hf_endpoint(built, fake_hub):
    endpoint, requests = fake_hub
    result = run_praib("data", "push", str(built), "org/praib", "--private", "--token", "hf_test",
                       endpoint=endpoint)
    assert result.returncode == 0, result.stderr
    assert f"pushed {built} to org/praib: {endpoint}/datasets/org/praib/commit/{'c' * 40}" in result.stdout
    posts = [r for r in requests if r[0] == "POST"]
    assert all(auth == "Bearer hf_test" for _, _, auth, _ in posts)
    create = json.loads(next(body for _, path, _, body in posts if path == "/api/repos/create"))
    assert (create["organization"], create["name"], create["type"], create["visibility"]) == (
        "org", "praib", "dataset", "private")
    commits = [body for _, path, _, body in posts if path.endswith("/commit/main")]
    assert len(commits) == 1
    lines = [json.loads(line) for line in commits[0].decode().splitlines()]
    uploaded = {item["value"]["path"]: base64.b64decode(item["value"]["content"])
                for item in lines if item["key"] == "file"}
    local = {p.relative_to(built).as_posix(): p.read_bytes() for p in built.rglob("*") if p.is_file()}
    del local[RECORD]  # praib's record of what it wrote in the folder stays home
    assert uploaded == local and len(local) == 9  # the card, statistics.json and 7 Parquet files


def test_push_refuses_a_folder_that_was_not_built(tmp_path, fake_hub):
    endpoint, requests = fake_hub
    (tmp_path / "README.md").write_text("# just a readme\n")
    result = run_praib("data", "push", str(tmp_path), "org/praib", "--token", "hf_test",
                       endpoint=endpoint)
    assert result.returncode == 1
    assert "the card names no configs" in result.stderr and requests == []


def test_push_reports_a_refusal_from_the_hub(built, fake_hub):
    endpoint, requests = fake_hub
    result = run_praib("data", "push", str(built), "org/forbidden", "--token", "hf_test",
                       endpoint=endpoint)
    assert result.returncode == 1
    assert f"Error: could not push {built} to {endpoint} as org/forbidden: HfHubHTTPError" in result.stderr
    assert "403" in result.stderr and not any(path.endswith("/commit/main") for _, path, _, _ in requests)
