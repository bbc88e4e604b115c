"""The suite's own shape: test modules share code through helper modules, never by importing each other."""

import ast

import pytest

from tests.paths import ROOT

TESTS = ROOT / "tests"
TEST_MODULES = sorted(TESTS.rglob("test_*.py"))


def imported_modules(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = ".".join(filter(None, ["tests" if node.level else None, node.module]))
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names)


@pytest.mark.parametrize("path", TEST_MODULES, ids=lambda path: str(path.relative_to(TESTS)))
def test_no_test_module_imports_another(path):
    tree = ast.parse(path.read_text(), str(path))
    test_imports = [name for name in imported_modules(tree)
                    if name.split(".")[0] == "tests" and any(part.startswith("test_") for part in name.split("."))]
    assert test_imports == [], f"{path.relative_to(ROOT)} imports a test module; move what it shares to a helper"


def test_every_test_folder_is_a_package():
    """Package folders give test modules distinct names, so two layers may both have a test_run.py."""
    folders = {path.parent for path in TEST_MODULES}
    assert [f for f in folders if not (f / "__init__.py").exists()] == []
