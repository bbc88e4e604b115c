"""`praib leaderboard space`: a Space folder whose app.py serves the same app over the Hub datasets, with
praib and gradio pinned and the Space's YAML header."""

import runpy

import yaml
from click.testing import CliRunner

from praib import __version__
from praib.cli.main import main
from praib.leaderboard import app as app_module
from praib.records.atomic import RECORD


def test_space_folder_runs_the_app_over_the_hub_datasets(tmp_path, monkeypatch):
    out = tmp_path / "space"
    result = CliRunner().invoke(main, ["leaderboard", "space", "org/results", "org/requests", "-o", str(out), "--title", "Reviewer board"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir() if p.name != RECORD) == ["README.md", "app.py", "requirements.txt"]
    header = yaml.safe_load((out / "README.md").read_text().split("---\n")[1])
    assert (header["title"], header["sdk"], header["app_file"], header["license"]) == (
        "Reviewer board", "gradio", "app.py", "apache-2.0")
    requirements = (out / "requirements.txt").read_text().splitlines()
    assert requirements == [f"praib[app]=={__version__}", f"gradio=={header['sdk_version']}"]
    readme = (out / "README.md").read_text()
    assert "hf upload ORG/SPACE . --repo-type space" in readme
    assert "praib leaderboard process --queue org/requests --results org/results --reference HUMAN --watch" in readme
    assert "*/10 * * * * praib leaderboard process" in readme
    launched = []
    monkeypatch.setattr(app_module, "launch", lambda *args, **kwargs: launched.append((args, kwargs)))
    runpy.run_path(str(out / "app.py"))
    assert launched == [(("org/results", "org/requests"), {"port": 7860, "host": "0.0.0.0"})]


def test_a_space_over_local_folders_is_refused(tmp_path):
    result = CliRunner().invoke(main, ["leaderboard", "space", str(tmp_path), "org/requests", "-o",
                                       str(tmp_path / "space")])
    assert result.exit_code == 1
    assert result.output == (f"Error: {tmp_path}: a Space reads its data from the Hub: give a dataset id "
                             "ORG/NAME (`hf repo create ORG/NAME --repo-type dataset`)\n")
    assert not (tmp_path / "space").exists()
