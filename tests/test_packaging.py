"""The wheel a user installs holds every module and data file of the source tree. The suite runs on an
editable install, which finds every file in the tree and would never notice one the wheel lacks
(.ci/wheel also installs the wheel and runs it)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.paths import ROOT

#: Each folder of the source tree and where its files go in the wheel.
PACKAGE_FOLDERS = {"praib": "praib", "generation": "praib/generation", "perturb": "praib/perturb",
                   "metrics": "praib/evaluate_modules"}
BUILD_FILES = ("setup.py", "setup.cfg", "pyproject.toml", "README.md")


def _can_build_offline() -> bool:
    """Whether this environment's setuptools builds a wheel without fetching anything: bdist_wheel is in
    setuptools from 70.1 on, and in the wheel package before."""
    return importlib.util.find_spec("setuptools") is not None and (
        importlib.util.find_spec("setuptools.command.bdist_wheel") is not None
        or importlib.util.find_spec("wheel") is not None)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    if not _can_build_offline():
        pytest.skip("this environment's setuptools cannot build a wheel without the network")
    # Built from a copy, as from a fresh clone: a build/ folder in the checkout keeps files deleted since.
    source, dist = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    for name in BUILD_FILES:
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, source / name)
    for folder in PACKAGE_FOLDERS:
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                            "--quiet", "--wheel-dir", str(dist), str(source)], capture_output=True, text=True,
                           timeout=600)
    assert built.returncode == 0, built.stderr
    [path] = dist.glob("praib-*.whl")
    with zipfile.ZipFile(path) as archive:
        yield archive


def source_files() -> dict[str, Path]:
    """Every file of the package folders (no bytecode), by the name it has in the wheel."""
    return {f"{target}/{path.relative_to(ROOT / folder).as_posix()}": path
            for folder, target in PACKAGE_FOLDERS.items() for path in sorted((ROOT / folder).rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts}


def test_the_wheel_holds_every_module_and_data_file_of_the_source_tree(wheel):
    files = source_files()
    assert {"praib/tables/registry.py", "praib/generation/run.py", "praib/perturb/data/american_british.tsv",
            "praib/data/scales/iclr.yaml", "praib/data/demo/reviews.jsonl"} <= set(files)  # the walk sees them
    held = set(wheel.namelist())
    assert sorted(set(files) - held) == []
    assert all(wheel.read(name) == path.read_bytes() for name, path in files.items())


def test_the_wheel_holds_only_praib_and_its_command(wheel):
    names = wheel.namelist()
    assert {name.split("/")[0] for name in names} == {"praib", "praib-0.1.0.dist-info"}
    assert wheel.read("praib-0.1.0.dist-info/entry_points.txt").decode().split() == [
        "[console_scripts]", "praib", "=", "praib.cli.main:main"]
