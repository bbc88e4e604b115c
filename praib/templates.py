"""Jinja templates of every role, found and compiled in one way.

Each role (review prompts, judge prompts, perturbation prompts, the leaderboard report, the dataset
card) has a :class:`TemplateSet`: a folder of built-in ``<name>.jinja`` files and the Jinja
settings that role renders with. A template is named by its built-in name or by the path of a
user's own ``.jinja`` file, which then stands in for the built-in one. A template is looked up in
its own folder first and then in the built-in folder, so a user's file can include the built-in
shared blocks (``_macros.jinja``, ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import jinja2


class TemplateSet:
    """The built-in templates of one role in ``directory``, rendered with Jinja ``options``
    (StrictUndefined unless ``options`` say otherwise)."""

    def __init__(self, role: str, directory: str | Path, *, globals: dict[str, Callable] | None = None,
                 **options: Any) -> None:
        self.role = role
        self.directory = Path(directory).resolve()
        self.options = {"undefined": jinja2.StrictUndefined, **options}
        self.globals = dict(globals or {})
        self._environments: dict[Path, jinja2.Environment] = {}
        self._compiled: dict[Path, jinja2.Template] = {}

    def names(self) -> list[str]:
        """The built-in template names, sorted."""
        return sorted(p.stem for p in self.directory.glob("*.jinja"))

    def path(self, template: str | Path, overrides: str | Path | None = None) -> Path:
        """The file of ``template``: a path (a ``Path``, a ``.jinja`` name or a name with a folder) as it
        is, else ``<overrides>/<name>.jinja`` when a user folder of overrides has it, else the built-in
        ``<name>.jinja``. A ValueError names the missing file and lists the built-in names."""
        path = Path(template)
        if not (isinstance(template, Path) or path.suffix == ".jinja" or len(path.parts) > 1):
            own = Path(overrides) / f"{template}.jinja" if overrides is not None else None
            path = own if own is not None and own.is_file() else self.directory / f"{template}.jinja"
        if not path.is_file():
            raise ValueError(f"no {self.role} template {str(template)!r} ({path} does not exist); "
                             f"built-in: {', '.join(self.names())}")
        return path

    def environment(self, folder: str | Path) -> jinja2.Environment:
        """The environment of templates in ``folder``: that folder first, then the built-in one."""
        folder = Path(folder).resolve()
        if folder not in self._environments:
            search = [folder] if folder == self.directory else [folder, self.directory]
            environment = jinja2.Environment(loader=jinja2.FileSystemLoader([str(f) for f in search]), **self.options)
            environment.globals.update(self.globals)
            self._environments[folder] = environment
        return self._environments[folder]

    def template(self, template: str | Path, overrides: str | Path | None = None) -> jinja2.Template:
        """``template`` compiled (once per file: runs render thousands of prompts from a handful of files)."""
        path = self.path(template, overrides).resolve()
        if path not in self._compiled:
            self._compiled[path] = self.environment(path.parent).get_template(path.name)
        return self._compiled[path]

    def render(self, template: str | Path, /, **variables: Any) -> str:
        """``template`` rendered with ``variables``; a variable it needs and lacks is a ValueError
        naming the file."""
        try:
            return self.template(template).render(**variables)
        except jinja2.UndefinedError as err:
            raise ValueError(f"{self.role} template {self.path(template).name}: {err.message}") from None
