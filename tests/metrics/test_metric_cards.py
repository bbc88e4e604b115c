"""Every metric card's example and every module's docstring example runs as written, through
``evaluate.load("metrics/<name>")`` offline, and prints what the card shows; every module folder names
its requirements."""

import ast
import re
import warnings

import evaluate
import pytest
from tests.metrics.cards import MODULES, run_examples
from tests.paths import ROOT as REPO


@pytest.mark.parametrize("name", MODULES)
def test_card_example_runs_and_prints_what_the_card_shows(name, monkeypatch):
    monkeypatch.chdir(REPO)  # the cards load "metrics/<name>" from the repository root
    card = (REPO / "metrics" / name / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", card, re.S)
    assert blocks and all(">>> " in block for block in blocks), "the card's examples are doctests"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = run_examples("\n".join(blocks), f"metrics/{name}/README.md", {})
    assert results.attempted > 0 and results.failed == 0
    # A card's example runs clean: a warning the card does not show would surprise whoever copies it.
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("name", MODULES)
def test_module_docstring_example_runs(name, monkeypatch):
    monkeypatch.chdir(REPO)
    tree = ast.parse((REPO / "metrics" / name / f"{name}.py").read_text())
    kwargs_description = next(node.value.value for node in tree.body if isinstance(node, ast.Assign)
                              and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["_KWARGS_DESCRIPTION"])
    results = run_examples(kwargs_description, f"metrics/{name}/{name}.py", {"evaluate": evaluate})
    assert results.attempted > 0 and results.failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_module_folder_lists_praib_and_every_import(name):
    folder = REPO / "metrics" / name
    required = {re.split(r"[<>=!~ ;\[]", line, maxsplit=1)[0].strip()
                for line in (folder / "requirements.txt").read_text().splitlines() if line.strip()}
    tree = ast.parse((folder / f"{name}.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "praib" in required
    assert imported <= required, f"imports without a requirement: {sorted(imported - required)}"


@pytest.mark.parametrize("name", MODULES)
def test_the_card_header_and_the_module_description_are_the_registry_s(name):
    """A module's description and its card's header are written once, in the registry's entry of the module;
    the description lists the registered metrics the module serves."""
    import yaml

    from praib.metrics.registry import MODULES as REGISTERED, card_header, of_module

    card = (REPO / "metrics" / name / "README.md").read_text()
    assert yaml.safe_load(card.split("---\n")[1]) == card_header(name)
    module = evaluate.load(str(REPO / "metrics" / name))
    assert module.description.startswith(REGISTERED[name].about)
    served = [m for m in of_module(name) if m.scalar]
    assert served and all(f"(`{m.name}`): {m.unit}; {m.source}" in module.description for m in served)
