"""`praib submit --validate` on two submissions built from the demo set: a clean one and one
with planted problems, each of which must be reported on its own line."""

import json
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.leaderboard.submission import (SubmissionError, load_submission, manifest_problems,
                                          validate_submission)
from praib.records.io import paths_outside

DEMO = Path(str(resources.files("praib").joinpath("data/demo")))
PAPERS = DEMO / "papers.jsonl"
MANIFEST = {"model": "demo-model-a", "revision": "v1", "backend": "transformers", "prompts": ["extended"],
            "sampling": {"temperature": 0.0, "top_p": 1.0, "max_new_tokens": 4096, "seed": 0},
            "date": "2025-06-01", "knowledge_cutoff": "2024-06"}


def demo_rows(model="demo-model-a", prompt="extended"):
    rows = [json.loads(line) for line in (DEMO / "reviews.jsonl").read_text().splitlines()]
    return [r for r in rows if r.get("model") == model and r.get("prompt") == prompt]


def write_submission(directory: Path, rows, manifest) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "reviews.jsonl").open("w") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    (directory / "manifest.json").write_text(json.dumps(manifest))
    return directory


@pytest.fixture
def clean(tmp_path):
    return write_submission(tmp_path / "clean", demo_rows(), MANIFEST)


@pytest.fixture
def planted(tmp_path):
    rows = demo_rows()
    assert len(rows) == 8
    rows = [r for r in rows if r["paper_id"] != "demo-neurips25-04"]          # a missing paper
    rows.append({**rows[0], "review_id": rows[0]["review_id"] + "-copy"})     # a duplicate
    rows[1] = {**rows[1], "review_id": "out-of-scale", "rating": 7}            # 7 is not on ICLR 2025's scale
    rows[2] = {**rows[2], "review_id": "unparsed", "text": "I could not follow this paper at all, sorry."}
    manifest = {**MANIFEST, "date": "June 2025"}                               # a bad manifest field
    return write_submission(tmp_path / "planted", rows, manifest)


def test_clean_submission_is_valid(clean):
    report = validate_submission(str(clean), PAPERS)
    assert report.valid, report.format()
    assert report.n_reviews == 8
    assert any("all 8 benchmark papers" in line for line in report.checked)


def test_every_planted_problem_is_reported_on_its_own_line(planted):
    report = validate_submission(str(planted), PAPERS)
    assert not report.valid
    assert all("\n" not in p for p in report.problems)
    expected = {
        "manifest": "manifest: field 'date' must be an ISO date YYYY-MM-DD, got 'June 2025'",
        "coverage": "coverage: prompt 'extended' has no review of 1 of 8 benchmark papers: demo-neurips25-04",
        "parse": "parse rate: 1 of 8 reviews (12.5%) did not parse, more than the 5% allowed: unparsed",
        "duplicates": "duplicates: 1 reviews repeat another of the same paper, model and prompt word for word: "
                      "demo-iclr25-01 (extended) x2",
        "scale": "scale: 1 ratings outside the venue scale: out-of-scale (7 not in [1, 3, 5, 6, 8, 10] of ICLR 2025)",
    }
    assert sorted(report.problems) == sorted(expected.values())


def test_cli_exit_status_follows_validity(clean, planted):
    runner = CliRunner()
    ok = runner.invoke(main, ["leaderboard", "validate", str(clean), "--benchmark-papers", str(PAPERS)])
    assert ok.exit_code == 0, ok.output
    assert "valid (8 reviews)" in ok.output
    bad = runner.invoke(main, ["leaderboard", "validate", str(planted / "reviews.jsonl"),
                               "--benchmark-papers", str(PAPERS)])
    assert bad.exit_code == 1
    assert sum(line.startswith("  problem: ") for line in bad.output.splitlines()) == 5
    assert runner.invoke(main, ["submit", str(clean)]).exit_code == 2  # no such command: it is `leaderboard validate`


def test_explicit_manifest_and_parse_threshold(planted, tmp_path):
    good = tmp_path / "good-manifest.json"
    good.write_text(json.dumps(MANIFEST))
    report = validate_submission(str(planted), PAPERS, manifest=good, max_unparsed=0.2)
    assert not any(p.startswith(("manifest:", "parse rate:")) for p in report.problems)
    assert len(report.problems) == 3


def test_schema_errors_name_file_line_and_field(tmp_path):
    rows = demo_rows()
    rows[3] = {**rows[3], "confidence": "very"}
    rows[5] = {key: value for key, value in rows[5].items() if key != "paper_id"}
    submission = write_submission(tmp_path / "s", rows, MANIFEST)
    report = validate_submission(str(submission))
    schema = [p for p in report.problems if p.startswith("schema:")]
    assert len(schema) == 2
    assert "reviews.jsonl: line 4: field 'confidence'" in schema[0]
    assert "reviews.jsonl: line 6: field 'paper_id'" in schema[1]
    with pytest.raises(SubmissionError, match="line 4"):
        load_submission(str(submission))


def test_records_must_match_the_manifest_and_not_be_human(tmp_path):
    rows = demo_rows()
    rows[0] = {**rows[0], "prompt": "guidelines"}
    rows[1] = {**rows[1], "source": "human", "model": None, "review_id": "h1"}
    report = validate_submission(str(write_submission(tmp_path / "s", rows, MANIFEST)))
    assert sorted(p.split(":")[0] for p in report.problems) == ["model", "prompt", "source"]


def test_manifest_schema():
    assert manifest_problems(MANIFEST) == []
    problems = manifest_problems({**{k: v for k, v in MANIFEST.items() if k != "backend"},
                                  "prompts": [], "knowledge_cutoff": 2024, "scale": "venue", "temperature": 0})
    assert problems == [
        "manifest: field 'backend' is missing (expected a non-empty string)",
        "manifest: field 'prompts' must be a non-empty list of strings, got []",
        "manifest: field 'knowledge_cutoff' must be YYYY-MM, YYYY-MM-DD or null, got 2024",
        "manifest: unknown field 'temperature' (known: model, revision, backend, prompts, sampling, date, "
        "knowledge_cutoff, scale, description, judge_validation)",
    ]


@pytest.mark.parametrize("value, fits", [(10**400, False), (2**63, True), (1.5e308, True), ("greedy", True),
                                         (True, True), (None, True), ([0.7], False)],
                         ids=["401 digits", "2**63", "1.5e308", "string", "boolean", "null", "list"])
def test_sampling_values_are_numbers_a_float_holds_strings_booleans_or_null(value, fits):
    problems = manifest_problems({**MANIFEST, "sampling": {"temperature": value}})
    if fits:
        assert problems == []
    else:
        assert len(problems) == 1 and problems[0].startswith(
            "manifest: field 'sampling' must be an object of parameter names to numbers (that a float can hold), "
            "strings, booleans or null, got {'temperature': ")


def test_a_401_digit_sampling_number_fails_validate_and_run(clean, tmp_path):
    huge = tmp_path / "huge.json"
    huge.write_text(json.dumps(MANIFEST).replace('"temperature": 0.0', '"temperature": 1' + "0" * 400))
    result = CliRunner().invoke(main, ["leaderboard", "validate", str(clean), "--manifest", str(huge)])
    assert result.exit_code == 1
    assert f"  problem: manifest: {huge}: field 'sampling' must be an object" in result.output
    (clean / "manifest.json").write_text(huge.read_text())
    result = CliRunner().invoke(main, ["leaderboard", "run", str(clean), "--demo", "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and "field 'sampling' must be" in result.output


def test_problems_of_a_manifest_given_apart_name_its_file(clean, tmp_path):
    other = tmp_path / "other-manifest.json"
    other.write_text(json.dumps({k: v for k, v in MANIFEST.items() if k != "model"}))
    report = validate_submission(str(clean), manifest=other)
    assert report.problems == [f"manifest: {other}: field 'model' is missing (expected a non-empty string)"]


def test_missing_manifest_is_a_problem_not_a_crash(tmp_path):
    submission = write_submission(tmp_path / "s", demo_rows(), MANIFEST)
    (submission / "manifest.json").unlink()
    report = validate_submission(str(submission))
    assert len(report.problems) == 1 and "no manifest" in report.problems[0]


def test_code_in_a_submission_is_never_run(tmp_path):
    submission = write_submission(tmp_path / "s", demo_rows(), MANIFEST)
    marker = tmp_path / "executed"
    (submission / "s.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    assert validate_submission(str(submission)).valid
    loaded = load_submission(str(submission))
    assert len(loaded.reviews) == 8 and loaded.name == "s"
    assert not marker.exists()


def test_a_missing_submission_is_named_as_missing(tmp_path):
    missing = str(tmp_path / "nothere")
    with pytest.raises(SubmissionError, match=f"^{missing}: no such file or directory"):
        load_submission(missing)
    result = CliRunner().invoke(main, ["leaderboard", "run", missing, "--demo", "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and result.output.strip() == \
        f"Error: {missing}: no such file or directory (and not a Hub dataset id 'org/name')"


# --- a submission's data lies inside its folder ----------------------------------------------------

def card(configs: str) -> str:
    return f"---\nconfigs:\n{configs}---\n# A submission\n"


@pytest.fixture
def elsewhere(tmp_path):
    """Valid reviews outside any submission folder: read, they would make a submission valid."""
    return write_submission(tmp_path / "elsewhere", demo_rows(), MANIFEST) / "reviews.jsonl"


def escape_up(folder, outside):
    (folder / "README.md").write_text(card("- config_name: default\n  data_files: ../elsewhere/reviews.jsonl\n"))
    return "data_files '../elsewhere/reviews.jsonl' climbs out with '..'"


def escape_absolute(folder, outside):
    (folder / "README.md").write_text(card(f"- config_name: default\n  data_files:\n  - split: train\n"
                                           f"    path: {outside}\n"))
    return f"data_files '{outside}' is an absolute path"


def escape_glob(folder, outside):
    (folder / "README.md").write_text(card("- config_name: default\n  data_files: '../*/reviews.jsonl'\n"))
    return "data_files '../*/reviews.jsonl' climbs out with '..'"


def escape_glob_to_a_symlink(folder, outside):
    (folder / "data").mkdir()
    (folder / "data" / "reviews.jsonl").symlink_to(outside)
    (folder / "README.md").write_text(card("- config_name: default\n  data_files: 'data/*.jsonl'\n"))
    return f"data file {folder / 'data' / 'reviews.jsonl'} leads to {outside}, outside {folder}"


def escape_symlink(folder, outside):
    (folder / "reviews.jsonl").symlink_to(outside)
    return f"reviews.jsonl leads to {outside}, outside {folder}"


def escape_saved_dataset(folder, outside):
    from praib.records import load_records, save_records

    save_records(load_records(outside), folder / "saved")
    state = json.loads((folder / "saved" / "state.json").read_text())
    arrow = folder / "saved" / state["_data_files"][0]["filename"]
    arrow.rename(outside.parent / arrow.name)
    state["_data_files"][0]["filename"] = f"../../elsewhere/{arrow.name}"
    (folder / "saved" / "state.json").write_text(json.dumps(state))
    (folder / "manifest.json").rename(folder / "saved" / "manifest.json")
    return f"leads to {outside.parent / arrow.name}, outside {folder / 'saved'}"


@pytest.mark.parametrize("escape", [escape_up, escape_absolute, escape_glob, escape_glob_to_a_symlink, escape_symlink,
                                    escape_saved_dataset])
def test_data_outside_the_submission_folder_is_refused(tmp_path, elsewhere, escape):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(MANIFEST))
    expected = escape(folder, elsewhere)
    source = str(folder / "saved") if escape is escape_saved_dataset else str(folder)

    report = validate_submission(source, PAPERS)
    assert not report.valid and report.n_reviews == 0
    assert [p for p in report.problems if expected in p and p.startswith("data: ")], report.problems
    validated = CliRunner().invoke(main, ["leaderboard", "validate", source])
    assert validated.exit_code == 1 and expected in validated.output and "Traceback" not in validated.output

    with pytest.raises(SubmissionError, match="a submission's data files must lie inside it"):
        load_submission(source)
    run = CliRunner().invoke(main, ["leaderboard", "run", source, "--demo", "-o", str(tmp_path / "out"),
                                    "--n-bootstrap", "2", "--no-progress"])
    assert run.exit_code == 1 and "Traceback" not in run.output
    assert len(run.output.strip().splitlines()) == 1 and expected in run.output
    assert not (tmp_path / "out").exists()


def test_nested_data_and_symlinks_inside_the_folder_are_read(tmp_path):
    folder = tmp_path / "sub"
    rows = demo_rows()
    write_submission(folder / "data" / "v2", rows[:5], MANIFEST)
    write_submission(folder / "data" / "v3", rows[5:], MANIFEST)
    (folder / "data" / "v3" / "reviews.jsonl").rename(folder / "data" / "v3" / "later.jsonl")
    (folder / "data" / "current.jsonl").symlink_to(folder / "data" / "v3" / "later.jsonl")
    (folder / "manifest.json").write_text(json.dumps(MANIFEST))
    (folder / "README.md").write_text(card("- config_name: default\n  data_files:\n  - split: train\n"
                                           "    path: [data/v2/*.jsonl, data/current.jsonl]\n"))
    report = validate_submission(str(folder), PAPERS)
    assert report.valid, report.format()
    assert report.n_reviews == 8 and "data: every data file lies inside the submission" in report.checked
    assert len(load_submission(str(folder)).reviews) == 8


def test_a_manifest_outside_the_folder_is_a_problem(tmp_path, elsewhere):
    folder = write_submission(tmp_path / "sub", demo_rows(), MANIFEST)
    (folder / "manifest.json").unlink()
    (folder / "manifest.json").symlink_to(elsewhere.parent / "manifest.json")
    report = validate_submission(str(folder))
    assert report.problems == [f"manifest: {folder / 'manifest.json'} leads to {elsewhere.parent / 'manifest.json'}, "
                               f"outside the submission folder {folder}"]


def test_a_hub_submission_names_only_files_of_its_repository(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text(card("- config_name: default\n  data_files:\n  - split: train\n"
                           "    path: [data/ok.jsonl, hf://datasets/someone/else/x.jsonl, /etc/reviews.jsonl,\n"
                           "           data/../../x.jsonl, 'data\\..\\..\\y.jsonl']\n"))
    monkeypatch.setattr("huggingface_hub.hf_hub_download", lambda repo, filename, repo_type: str(readme))
    assert paths_outside("org/sub") == [
        "org/sub: README.md: config 'default': data_files 'hf://datasets/someone/else/x.jsonl' is a URL",
        "org/sub: README.md: config 'default': data_files '/etc/reviews.jsonl' is an absolute path",
        "org/sub: README.md: config 'default': data_files 'data/../../x.jsonl' climbs out with '..'",
        "org/sub: README.md: config 'default': data_files 'data\\\\..\\\\..\\\\y.jsonl' climbs out with '..'",
    ]


def test_a_review_id_used_twice_is_a_problem_and_an_exact_repeat_a_warning(tmp_path, caplog):
    rows = demo_rows()
    rows.append({**rows[2], "rating": 3, "text": rows[2]["text"] + " On reflection, reject."})  # its id, another review
    rows += [dict(rows[4]), dict(rows[4]), dict(rows[5])]                      # three exact repeats
    submission = write_submission(tmp_path / "s", rows, MANIFEST)
    report = validate_submission(str(submission))
    assert report.problems == [f"ids: 1 review_id repeats with different content: {rows[2]['review_id']}"]
    dropped = ("ids: dropped 3 exact duplicate records (same review_id and content), as `leaderboard run` drops "
               "them: " + ", ".join(sorted([rows[4]["review_id"]] * 2 + [rows[5]["review_id"]])))
    assert report.warnings == [dropped]
    result = CliRunner().invoke(main, ["leaderboard", "validate", str(submission)])
    assert result.exit_code == 1 and result.output.count("  problem: ids: ") == 1
    assert f"  warning: {dropped}\n" in result.output
    with pytest.raises(SubmissionError, match=rf"^{submission}: field 'review_id': 1 id repeats with different "
                                              rf"content: {rows[2]['review_id']}$"):
        load_submission(str(submission))

    exact = write_submission(tmp_path / "exact", rows[:8] + rows[9:], MANIFEST)
    assert len(load_submission(str(exact)).reviews) == 8
    assert f"{exact}: dropped 3 exact duplicate records (same review_id and content)" in caplog.text
    # validate says what run does: the exact repeats alone leave the submission valid.
    result = CliRunner().invoke(main, ["leaderboard", "validate", str(exact)])
    assert result.exit_code == 0, result.output
    assert f"{exact}: valid (8 reviews)" in result.output and f"  warning: {dropped}\n" in result.output


def test_an_empty_submission_is_a_problem_and_refused_by_the_leaderboard(tmp_path):
    empty = write_submission(tmp_path / "empty", [], MANIFEST)
    assert validate_submission(str(empty)).problems == ["schema: the submission holds no review"]
    result = CliRunner().invoke(main, ["leaderboard", "run", str(empty), "--demo", "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {empty}: holds no records"
    assert not (tmp_path / "out").exists()
