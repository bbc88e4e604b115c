"""Jinja templates of every role, found and compiled in one way.

Each role (review prompts, judge prompts, perturbation prompts, the leaderboard report, the dataset
card) has a :class:`TemplateSet`: a folder of built-in ``<name>.jinja`` files and the Jinja
settings that role renders with. A template is named by its built-in name or by the path of a
user's own ``.jinja`` file, which then stands in for the built-in one. A template is looked up in
its own folder first and then in the built-in folder, so a user's file can include the built-in
shared blocks (``_macros.jinja``, ...).

Every template renders in Jinja's immutable sandbox: a template reads the variables it is given
and calls the filters and globals of its role, and nothing else (no attributes that lead to Python
internals, no changing the lists and mappings it is given). A template that breaks a rule, does not
compile or fails while rendering is a ValueError of one line naming its file (and line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

# What compiling or rendering a user's template may raise: Jinja's own errors, a file that is not
# UTF-8 text or cannot be read, the errors of the Python operations its expressions run, and a macro
# or include that calls itself without end.
TEMPLATE_FAULTS = (jinja2.TemplateError, UnicodeDecodeError, OSError, TypeError, ValueError, ArithmeticError,
                   LookupError, AttributeError, RecursionError)


def error_place(err: BaseException, path: str | Path) -> str:
    """``FILE: line N`` where ``err`` arose in template ``path``: Jinja's own report for a compile error,
    else the innermost template frame, else ``path`` alone. A frame of compiled template code knows its
    template, which maps the Python line back; Jinja's rewritten frames already carry the template line."""
    if isinstance(err, jinja2.TemplateSyntaxError) and err.lineno:
        return f"{err.filename or path}: line {err.lineno}"
    place = str(path)
    frame = err.__traceback__
    while frame is not None:
        code, compiled = frame.tb_frame.f_code, frame.tb_frame.f_globals.get("__jinja_template__")
        if compiled is not None:
            place = f"{compiled.filename or path}: line {compiled.get_corresponding_lineno(frame.tb_lineno)}"
        elif code.co_filename.endswith(".jinja"):
            place = f"{code.co_filename}: line {frame.tb_lineno}"
        frame = frame.tb_next
    return place


def template_error(err: BaseException, path: str | Path) -> ValueError:
    """``err``, raised while compiling or rendering the template file ``path``, as a ValueError of one
    line: the file (the included one where it arose there), the line where known, what went wrong."""
    if isinstance(err, SecurityError):
        what = f"unsafe template, refused by Jinja's sandbox: {err}"
    elif isinstance(err, jinja2.TemplateNotFound):
        what = f"includes or imports {err.name!r}, which is neither beside it nor a built-in template"
    elif isinstance(err, jinja2.TemplateSyntaxError):
        what = f"not a valid Jinja template: {err.message}"
    elif isinstance(err, RecursionError):
        what = "calls macros or includes too deeply (one that calls itself without end?): Python's recursion limit"
    elif isinstance(err, UnicodeDecodeError):
        what = f"not UTF-8 text (byte {err.object[err.start]:#04x} at offset {err.start})"
    elif isinstance(err, jinja2.TemplateError):
        what = str(err.message)
    else:
        what = f"{type(err).__name__}: {err}"
    return ValueError(f"{error_place(err, path)}: {' '.join(what.split())}")


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
            path = own if own is not None and own.exists() else self.directory / f"{template}.jinja"
        if path.is_dir():
            raise ValueError(f"{path}: is a directory, not a {self.role} template file")
        if not path.is_file():
            raise ValueError(f"no {self.role} template {str(template)!r} ({path} does not exist); "
                             f"built-in: {', '.join(self.names())}")
        return path

    def environment(self, folder: str | Path) -> jinja2.Environment:
        """The environment of templates in ``folder``: that folder first, then the built-in one."""
        folder = Path(folder).resolve()
        if folder not in self._environments:
            search = [folder] if folder == self.directory else [folder, self.directory]
            environment = ImmutableSandboxedEnvironment(loader=jinja2.FileSystemLoader([str(f) for f in search]), **self.options)
            environment.globals.update(self.globals)
            self._environments[folder] = environment
        return self._environments[folder]

    def template(self, template: str | Path, overrides: str | Path | None = None) -> jinja2.Template:
        """``template`` compiled (once per file: runs render thousands of prompts from a handful of files)."""
        path = self.path(template, overrides).resolve()
        if path not in self._compiled:
            try:
                self._compiled[path] = self.environment(path.parent).get_template(path.name)
            except TEMPLATE_FAULTS as err:
                raise template_error(err, path) from None
        return self._compiled[path]

    def render(self, template: str | Path, /, **variables: Any) -> str:
        """``template`` rendered with ``variables``; a variable it needs and lacks is a ValueError
        naming the file, and so is any other fault of the template (see :func:`template_error`)."""
        compiled = self.template(template)
        try:
            return compiled.render(**variables)
        except jinja2.UndefinedError as err:
            raise ValueError(f"{self.role} template {self.path(template).name}: {err.message}") from None
        except TEMPLATE_FAULTS as err:
            raise template_error(err, self.path(template)) from None
