"""Imports point one way, down the pipeline's layers, and no library module imports the command line."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Lowest first; a module may import its own layer and the layers before it.
LAYERS = (
    ("praib._version", "praib.records", "praib.scales", "praib.templates", "praib.http_retry"),
    ("praib.llm", "praib.parsing"),
    ("praib.generation", "praib.perturb"),
    ("praib.metrics",),
    ("praib.sources",),
    ("praib.evaluation",),
    ("praib.leaderboard",),
    ("praib.tables",),
    ("praib.api",),
    ("praib.cli",),
)


def _layer(module: str) -> int | None:
    for rank, packages in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in packages):
            return rank
    return None


def _library_modules():
    for folder in ("praib", "generation", "perturb"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[0] != "praib":
                parts.insert(0, "praib")
            if parts[-1] == "__init__":
                parts.pop()
            yield path, ".".join(parts)


def _imports(path: Path):
    """Every praib module a file imports, at the top or inside a function."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("praib"):
            for alias in node.names:
                yield node.lineno, node.module, f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("praib"):
                    yield node.lineno, alias.name, alias.name


def test_every_library_module_sits_in_a_layer():
    unplaced = [module for _, module in _library_modules() if module != "praib" and _layer(module) is None]
    assert not unplaced


def test_imports_point_down_the_layers():
    upward = []
    for path, module in _library_modules():
        own = _layer(module)
        if own is None:
            continue  # praib/__init__.py: the lazy API names every layer on purpose
        for line, imported, name in _imports(path):
            # `from praib.records import x` names a module or a name in it: judge by the deeper one that exists.
            target = _layer(name) if _layer(name) is not None and name.count(".") > imported.count(".") else None
            target = _layer(imported) if target is None else target
            if target is not None and target > own:
                upward.append(f"{path.relative_to(ROOT)}:{line}: {module} imports {imported}")
    assert not upward, "\n".join(upward)


def test_no_library_module_imports_the_command_line():
    offenders = [f"{path.relative_to(ROOT)}:{line}" for path, module in _library_modules()
                 if not module.startswith("praib.cli") for line, imported, _ in _imports(path)
                 if imported.startswith("praib.cli")]
    assert not offenders


def test_no_library_module_imports_from_the_package_top():
    """``from praib import X`` runs praib/__init__.py, whose lazy API names every layer: the version comes from
    the ground floor's praib._version instead."""
    offenders = [f"{path.relative_to(ROOT)}:{line}" for path, module in _library_modules() if module != "praib"
                 for line, imported, _ in _imports(path) if imported == "praib"]
    assert not offenders
