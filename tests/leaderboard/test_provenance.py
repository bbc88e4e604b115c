"""What a leaderboard publishes names its inputs by file name and content hash, never by a path of the
machine that ran it (run.json, the report)."""

import hashlib
import json

from click.testing import CliRunner

from praib.cli.main import main
from tests.leaderboard.boards import demo_submission
from tests.paths import DEMO


def test_run_json_and_report_name_the_reference_and_submissions_without_local_paths(tmp_path):
    reference = tmp_path / "private" / "human.jsonl"
    reference.parent.mkdir()
    reference.write_text("".join(line + "\n" for line in (DEMO / "reviews.jsonl").read_text().splitlines()
                                 if json.loads(line)["source"] == "human"))
    submission = demo_submission(tmp_path / "private" / "model-b", "b")
    out = tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(main, ["leaderboard", "run", str(submission), "--reference", str(reference),
                                  "--n-bootstrap", "5", "--workers", "1", "--no-progress", "--output", str(out)])
    assert result.exit_code == 0, result.output
    run = json.loads((out / "run.json").read_text())
    assert run["reference"] == f"human.jsonl (sha256:{hashlib.sha256(reference.read_bytes()).hexdigest()[:16]})"
    assert run["submissions"]["model-b"].startswith("model-b/ (sha256:")
    report = runner.invoke(main, ["leaderboard", "report", str(out), "--output", str(tmp_path / "r.html"),
                                  "--markdown", str(tmp_path / "r.md")])
    assert report.exit_code == 0, report.output
    published = [*(out.rglob("*.json")), out / "results.jsonl", tmp_path / "r.md", tmp_path / "r.html"]
    leaks = [p.name for p in published if str(tmp_path) in p.read_text()]
    assert leaks == []
    assert "reference = human.jsonl (sha256:" in (tmp_path / "r.md").read_text()
