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

A render is also bounded: it stops after ``$PRAIB_TEMPLATE_TIMEOUT`` seconds (default 10), checked at
every loop step, call, filter, operator and output, and no value it makes or writes may hold more than
``$PRAIB_TEMPLATE_MAX_CHARS`` characters and items (default 10,000,000). Operations that multiply
their input (``*``, ``**``, ``%`` and format widths, ``~``, ``join``, ``replace``, ``indent``, an integer
argument such as a ``center`` width) are refused before they run, so the text is never built; other
calls and filters are checked when they return. Rendering in the calling thread with these checks
needs no watchdog thread that could not be stopped.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import jinja2
from jinja2 import nodes
from jinja2.runtime import markup_join, str_join
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from jinja2.visitor import NodeTransformer

# What compiling or rendering a user's template may raise: Jinja's own errors, a file that is not
# UTF-8 text or cannot be read, the errors of the Python operations its expressions run, and a macro
# or include that calls itself without end.
TEMPLATE_FAULTS = (jinja2.TemplateError, UnicodeDecodeError, OSError, TypeError, ValueError, ArithmeticError,
                   LookupError, AttributeError, RecursionError)


TIME_LIMIT_VARIABLE = "PRAIB_TEMPLATE_TIMEOUT"
SIZE_LIMIT_VARIABLE = "PRAIB_TEMPLATE_MAX_CHARS"
DEFAULT_TIME_LIMIT = 10.0          # seconds: real prompts render in milliseconds
DEFAULT_SIZE_LIMIT = 10_000_000    # characters and items: a long paper is about 300,000 characters


class TemplateLimitError(jinja2.TemplateRuntimeError):
    """A template ran past its time limit, or would make a value or text past its size limit."""


@dataclass(frozen=True)
class TemplateLimits:
    """How long one render may take (``seconds``) and how many characters and items a value it makes
    may hold (``size``)."""

    seconds: float = DEFAULT_TIME_LIMIT
    size: int = DEFAULT_SIZE_LIMIT

    @classmethod
    def from_environment(cls) -> "TemplateLimits":
        """The limits set by ``$PRAIB_TEMPLATE_TIMEOUT`` and ``$PRAIB_TEMPLATE_MAX_CHARS``, else the defaults."""
        return cls(_positive(TIME_LIMIT_VARIABLE, float, "a number of seconds", DEFAULT_TIME_LIMIT),
                   _positive(SIZE_LIMIT_VARIABLE, int, "a whole number of characters", DEFAULT_SIZE_LIMIT))


def _positive(variable: str, kind: type, what: str, default: float) -> Any:
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not value > 0 or value == float("inf"):
        raise TemplateLimitError(f"{variable}={text!r} is not {what} above 0")
    return value


class _Budget:
    """What one render may still spend: a deadline (none while a template compiles) and the size limit."""

    def __init__(self, limits: TemplateLimits, timed: bool = True) -> None:
        self.limits = limits
        self.deadline = time.monotonic() + limits.seconds if timed else None

    def tick(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise TemplateLimitError(f"still rendering after {self.limits.seconds:g} s, the time limit of a template "
                                     f"(a loop without end? {TIME_LIMIT_VARIABLE} sets the limit)")

    def check(self, size: int, what: str = "a value") -> None:
        if size > self.limits.size:
            raise TemplateLimitError(f"would make {what} of {size:,} characters or items, over the limit of "
                                     f"{self.limits.size:,} for a template ({SIZE_LIMIT_VARIABLE} sets it)")


# The render under way in this thread; None between renders.
_rendering = threading.local()


def _budget() -> _Budget:
    """The budget of the render under way in this thread, else (a template being compiled, whose
    constant parts Jinja evaluates) the size limit alone."""
    budget = getattr(_rendering, "budget", None)
    return budget if budget is not None else _Budget(TemplateLimits.from_environment(), timed=False)


def weight(value: Any, limit: int) -> int:
    """The characters of the strings and the items of the lists, tuples, sets and mappings reachable
    from ``value`` (anything else counts 1), counted until the total passes ``limit``: what printing
    the value would write, roughly, and what a list repeating one long string really holds."""
    total, pending = 0, [iter((value,))]
    while pending and total <= limit:
        for item in pending[-1]:
            if isinstance(item, (str, bytes)):
                total += len(item)
            elif isinstance(item, (list, tuple, set, frozenset, dict)):
                total += len(item)
                pending.append(iter(item.items() if isinstance(item, dict) else item))
                break
            else:
                total += 1
            if total > limit:
                break
        else:
            pending.pop()
    return total


_PERCENT_FIELD = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")
_BRACE_SPEC = re.compile(r"\{[^{}]*:([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")


def _format_size(template: str, arguments: Iterable[Any], limit: int) -> int:
    """An upper bound of what formatting ``template`` (``%`` or ``str.format``) with ``arguments`` writes:
    its own length, the arguments and the widest width or precision it asks for. A width taken from the
    arguments (``%*d``, ``{:{}}``) may be any integer among them."""
    widths = [int(n) for field in _PERCENT_FIELD.finditer(template) for n in field.groups() if n and n != "*"]
    specs = _BRACE_SPEC.findall(template)
    widths += [int(n) for spec in specs for n in re.findall(r"\d+", spec)]
    arguments = list(arguments)
    if any("*" in field.group(0) for field in _PERCENT_FIELD.finditer(template)) or any("{" in s for s in specs):
        widths += [n for n in arguments if isinstance(n, int)]
    fields = max(1, len(_PERCENT_FIELD.findall(template)) + len(specs))
    return len(template) + weight(arguments, limit) + fields * max(widths, default=0)


def _operands(value: Any) -> tuple:
    return tuple(value.values()) if isinstance(value, dict) else value if isinstance(value, tuple) else (value,)


def _binop_size(op: str, left: Any, right: Any, limit: int) -> int:
    """An upper bound of the size of ``left op right``, computed without building it (0 when small)."""
    sequences = (str, bytes, list, tuple)
    if op == "*":
        if isinstance(left, int) and isinstance(right, sequences):
            left, right = right, left
        if isinstance(left, sequences) and isinstance(right, int):
            return weight(left, limit) * max(right, 0)
        if isinstance(left, int) and isinstance(right, int):
            return (abs(left).bit_length() + abs(right).bit_length()) * 3 // 10
    elif op == "**" and isinstance(left, int) and isinstance(right, int) and right > 0:
        return abs(left).bit_length() * right * 3 // 10      # decimal digits: bits x log10(2)
    elif op == "+" and isinstance(left, sequences) and isinstance(right, sequences):
        return weight((left, right), limit)
    elif op == "%" and isinstance(left, str):
        return _format_size(left, _operands(right), limit)
    return 0


def _call_size(name: str, value: Any, arguments: tuple, keywords: dict, limit: int, method: bool) -> int:
    """An upper bound, before the call, of what the filter (or, ``method``, the ``str`` method) ``name``
    makes of ``value`` (the filtered value, or the string the method belongs to) when it multiplies its
    input: formatting, ``join``, ``replace`` and ``indent``; 0 for any other."""
    def argument(position: int, keyword: str) -> Any:
        return arguments[position] if len(arguments) > position else keywords.get(keyword)

    if not isinstance(value, str) and not (name == "join" and not method):
        return 0
    if name == "format":
        return _format_size(value, (*arguments, *keywords.values()), limit)
    if name == "format_map":
        return _format_size(value, _operands(argument(0, "mapping")), limit)
    if name == "join":
        items, separator = (argument(0, "iterable"), value) if method else (value, argument(0, "d") or "")
        if isinstance(items, (list, tuple)) and isinstance(separator, str):
            return weight(items, limit) + len(separator) * len(items)
    elif name == "replace" and isinstance(argument(0, "old"), str) and isinstance(argument(1, "new"), str):
        old, new = argument(0, "old"), argument(1, "new")
        return len(value) + (value.count(old) if old else len(value) + 1) * max(0, len(new) - len(old))
    elif name == "indent" and isinstance(argument(0, "width"), str):
        return len(value) + (value.count("\n") + 1) * len(argument(0, "width"))
    return 0


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


def _check_call(budget: _Budget, name: str, value: Any, arguments: tuple, keywords: dict, method: bool) -> None:
    """Refuse, before it runs, a filter or call that would make more than the size limit: one given an
    integer over the limit (a width, a count) or a value over it, or one that multiplies its input past it."""
    if name not in ("format", "format_map"):   # formatting is bounded by the widths it asks for
        budget.check(max((n for n in (*arguments, *keywords.values()) if isinstance(n, int)), default=0))
    budget.check(weight((value, arguments, keywords), budget.limits.size))
    budget.check(_call_size(name, value, arguments, keywords, budget.limits.size, method))


def _limited_filter(name: str, function: Callable) -> Callable:
    """``function``, the filter ``name``, checked by :func:`_check_call` before it runs and its result after."""
    value_at = 1 if hasattr(function, "jinja_pass_arg") else 0   # after the context or environment Jinja passes

    @functools.wraps(function)
    def limited(*arguments: Any, **keywords: Any) -> Any:
        budget = _budget()
        budget.tick()
        value = arguments[value_at] if len(arguments) > value_at else None
        _check_call(budget, name, value, arguments[value_at + 1:], keywords, method=False)
        result = function(*arguments, **keywords)
        budget.check(weight(result, budget.limits.size))
        return result

    return limited


def _paced(items: Iterable[Any]) -> Iterator[Any]:
    """A loop's items, the time limit checked before each."""
    budget = _budget()
    for item in items:
        budget.tick()
        yield item


@jinja2.pass_eval_context
def _joined(eval_context: Any, parts: list[Any]) -> str:
    """``a ~ b ~ ...``, refused before it is built when it would be over the size limit."""
    budget = _budget()
    budget.tick()
    budget.check(weight(parts, budget.limits.size), "a text")
    return (markup_join if eval_context.autoescape else str_join)(parts)


PACED_FILTER, JOINED_FILTER = "_praib_paced", "_praib_joined"


class _Limited(NodeTransformer):
    """Routes every loop's items through :func:`_paced` and every ``~`` through :func:`_joined`."""

    def visit_For(self, node: nodes.For) -> nodes.For:
        self.generic_visit(node)
        node.iter = nodes.Filter(node.iter, PACED_FILTER, [], [], None, None, lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Filter:
        self.generic_visit(node)
        return nodes.Filter(nodes.List(node.nodes, lineno=node.lineno), JOINED_FILTER, [], [], None, None,
                            lineno=node.lineno)


def _within_limits(render: Callable) -> Callable:
    """A template's render function that starts the budget of a render (the outermost template: an
    included, imported or extended one spends its includer's) and counts what it writes."""
    @functools.wraps(render)
    def limited(context: Any) -> Iterator[str]:
        if getattr(_rendering, "budget", None) is not None:
            yield from render(context)
            return
        _rendering.budget = budget = _Budget(TemplateLimits.from_environment())
        try:
            written = 0
            for chunk in render(context):
                written += len(chunk)
                budget.tick()
                budget.check(written, "a text")
                yield chunk
        finally:
            _rendering.budget = None

    return limited


class _LimitedTemplate(jinja2.Template):
    @classmethod
    def _from_namespace(cls, environment: jinja2.Environment, namespace: Any, globals: Any) -> jinja2.Template:
        template = super()._from_namespace(environment, namespace, globals)
        template.root_render_func = _within_limits(template.root_render_func)
        return template


class LimitedSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox with the time and size limits of the module docstring, checked where a
    template does work: each loop step (``_paced``), call, filter, attribute, intercepted operator,
    ``~``, output expression (``finalize``) and written chunk."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})
    template_class = _LimitedTemplate

    def __init__(self, **options: Any) -> None:
        super().__init__(finalize=self._finalize, **options)
        self.filters = {name: _limited_filter(name, f) for name, f in self.filters.items()}
        self.filters.update({PACED_FILTER: _paced, JOINED_FILTER: _joined})

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = _Limited().visit(super()._parse(source, name, filename))
        tree.set_environment(self)
        return tree

    @staticmethod
    def _finalize(value: Any) -> Any:
        budget = _budget()
        budget.tick()
        budget.check(weight(value, budget.limits.size))
        return value

    def concat(self, chunks: Iterable[str]) -> str:
        """The text of a macro, a ``set`` or ``filter`` block or a render, refused once it passes the limit."""
        budget, pieces, size = _budget(), [], 0
        for chunk in chunks:
            size += len(chunk)
            budget.check(size, "a text")
            pieces.append(chunk)
        return "".join(pieces)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        budget = _budget()
        budget.tick()
        budget.check(_binop_size(operator, left, right, budget.limits.size))
        return super().call_binop(context, operator, left, right)

    def getattr(self, obj: Any, attribute: str) -> Any:
        return self._checked(super().getattr(obj, attribute))

    def getitem(self, obj: Any, argument: Any) -> Any:
        return self._checked(super().getitem(obj, argument))

    @staticmethod
    def _checked(value: Any) -> Any:
        """``value``, read from what the template was given, after the time check and a size check
        that costs nothing (its length, not its contents)."""
        budget = _budget()
        budget.tick()
        if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)):
            budget.check(len(value))
        return value

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (Jinja's names)
        budget = _budget()
        budget.tick()
        method = getattr(__obj, "__wrapped__", __obj)   # str.format comes wrapped by the sandbox
        owner = getattr(method, "__self__", None)
        _check_call(budget, getattr(method, "__name__", ""), owner if isinstance(owner, str) else None, args, kwargs,
                    method=isinstance(owner, str))
        result = super().call(__context, __obj, *args, **kwargs)
        budget.check(weight(result, budget.limits.size))
        return result


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
            environment = LimitedSandbox(loader=jinja2.FileSystemLoader([str(f) for f in search]), **self.options)
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
