"""praib's ``evaluate`` modules (the ``metrics/<name>`` folders) as Hugging Face Space repositories, so that
after ``hf upload ORG/<name> DIR/<name> --repo-type space`` anyone can ``evaluate.load("ORG/<name>")``.

Each exported folder holds the module file and its card with the examples loading ``ORG/<name>`` instead of
the source tree's ``metrics/<name>``, the card's YAML header (the registry's,
:func:`praib.metrics.registry.card_header`) extended with what a Space needs (``sdk: gradio``, ``app_file``), an ``app.py`` serving ``evaluate``'s widget of the module, and its
requirements with gradio added. The modules ship in praib's wheel (``praib/evaluate_modules``), so an
installed praib exports them without the source tree.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from praib.metrics.registry import card_header
from praib.records.atomic import replace_folder

DEFAULT_ORG = "praib"
_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)


class ExportError(ValueError):
    """A module folder that cannot be exported, naming the file."""


def modules_folder() -> Path:
    """Where the modules are: the wheel's copy (``praib/evaluate_modules``), else a source tree's ``metrics/``."""
    package = Path(__file__).resolve().parents[1]  # praib/
    packaged = package / "evaluate_modules"
    return packaged if packaged.is_dir() else package.parent / "metrics"


def module_names(folder: Path | None = None) -> list[str]:
    folder = folder or modules_folder()
    return sorted(p.name for p in folder.iterdir() if (p / f"{p.name}.py").is_file())


def _gradio_requirement() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"gradio=={version('gradio')}"
    except PackageNotFoundError:
        return "gradio>=6.31,<7"


def space_module(name: str, org: str, folder: Path | None = None) -> dict[str, str]:
    """The exported files of module ``name`` by file name."""
    source = (folder or modules_folder()) / name
    card = (source / "README.md").read_text(encoding="utf-8")
    match = _FRONT_MATTER.match(card)
    if match is None:
        raise ExportError(f"{source / 'README.md'}: no YAML header (--- ... ---) to extend")
    header = card_header(name)
    header.update({"emoji": "📏", "colorFrom": "blue", "colorTo": "gray", "sdk": "gradio",
                   "sdk_version": _gradio_requirement().partition("==")[2] or "6.31.0", "app_file": "app.py",
                   "pinned": False})

    def on_the_hub(text: str) -> str:
        return text.replace(f'"metrics/{name}"', f'"{org}/{name}"')

    requirements = (source / "requirements.txt").read_text(encoding="utf-8").rstrip("\n").splitlines()
    return {
        f"{name}.py": on_the_hub((source / f"{name}.py").read_text(encoding="utf-8")),
        "README.md": "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n"
                     + on_the_hub(card[match.end():]),
        "app.py": ('"""The widget of the evaluate module beside this file."""\n\nimport evaluate\n'
                   "from evaluate.utils import launch_gradio_widget\n\n"
                   f'launch_gradio_widget(evaluate.load("{org}/{name}"))\n'),
        "requirements.txt": "\n".join([*requirements, _gradio_requirement()]) + "\n",
    }


def export_modules(output: str | Path, org: str = DEFAULT_ORG) -> list[Path]:
    """Write every module as a Space repository folder ``output/<name>`` (in place of an earlier export's
    files there); returns the folders."""
    output = Path(output)
    written = []
    with replace_folder(output) as folder:
        for name in module_names():
            (folder / name).mkdir()
            for file_name, text in space_module(name, org).items():
                (folder / name / file_name).write_text(text, encoding="utf-8")
            written.append(output / name)
    return written
