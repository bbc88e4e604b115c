"""`praib metrics export`: every evaluate module as a Space repository that `evaluate.load` reads offline and
whose card's example runs as written, loading ORG/<name>; and the modules ship in praib's wheel, so that an
installed praib exports them."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile

import evaluate
import pytest
import yaml
from click.testing import CliRunner

from praib.records.atomic import RECORD
from praib.cli.main import main
from tests.metrics.cards import MODULES, run_examples
from tests.paths import ROOT

ORG = "someorg"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("spaces")
    result = CliRunner().invoke(main, ["metrics", "export", "-o", str(root / ORG), "--org", ORG])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"wrote {len(MODULES)} module Spaces into {root / ORG}: ")
    return root


@pytest.mark.parametrize("name", MODULES)
def test_an_exported_module_loads_offline_and_its_card_example_runs(exported, name, monkeypatch):
    folder = exported / ORG / name
    assert sorted(p.name for p in folder.iterdir()) == sorted(["README.md", "app.py", f"{name}.py", "requirements.txt"])
    module = evaluate.load(str(folder))
    assert module.name == name and module.description.strip()
    card = (folder / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    source_header = yaml.safe_load((ROOT / "metrics" / name / "README.md").read_text().split("---\n")[1])
    assert header == {**source_header, **{key: header[key] for key in ("emoji", "colorFrom", "colorTo")},
                      "sdk": "gradio", "sdk_version": header["sdk_version"], "app_file": "app.py", "pinned": False}
    assert f'evaluate.load("{ORG}/{name}"' in card and '"metrics/' not in card
    # From the folder above the export, "ORG/<name>" is the exported folder: the card runs as a Hub user runs it.
    monkeypatch.chdir(exported)
    blocks = re.findall(r"```python\n(.*?)```", card, re.S)
    results = run_examples("\n".join(blocks), f"{ORG}/{name}/README.md", {})
    assert results.attempted > 0 and results.failed == 0
    app = (folder / "app.py").read_text()
    compile(app, "app.py", "exec")
    assert f'launch_gradio_widget(evaluate.load("{ORG}/{name}"))' in app
    requirements = (folder / "requirements.txt").read_text().splitlines()
    assert requirements[:-1] == (ROOT / "metrics" / name / "requirements.txt").read_text().splitlines()
    assert requirements[-1].startswith("gradio")


def test_the_wheel_holds_the_modules_and_an_installed_praib_exports_them(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for entry in ("setup.py", "setup.cfg", "pyproject.toml", "README.md", "praib", "generation", "perturb", "metrics"):
        copy = shutil.copytree if (ROOT / entry).is_dir() else shutil.copy
        copy(ROOT / entry, source / entry, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                              if (ROOT / entry).is_dir() else {}))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                            str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    wheel = zipfile.ZipFile(next((tmp_path / "dist").glob("praib-*.whl")))
    shipped = {n for n in wheel.namelist() if n.startswith("praib/evaluate_modules/")}
    assert shipped == {f"praib/evaluate_modules/{name}/{file}" for name in MODULES
                       for file in (f"{name}.py", "README.md", "requirements.txt")}
    wheel.extractall(tmp_path / "site")
    # The wheel's praib alone on the path, run from elsewhere: no source tree to fall back on.
    exported = subprocess.run([sys.executable, "-m", "praib.cli.main", "metrics", "export", "-o", "out"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "", "HF_HUB_OFFLINE": "1",
                                   "HOME": str(tmp_path)})
    assert exported.returncode == 0, exported.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if p.name != RECORD) == MODULES
    assert (tmp_path / "out" / "readability" / "readability.py").read_text().replace('"praib/readability"', "") \
        == (ROOT / "metrics" / "readability" / "readability.py").read_text().replace('"metrics/readability"', "")
