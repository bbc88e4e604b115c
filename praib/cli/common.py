"""Options and helpers shared by the commands of the ``praib`` command line.

Command modules import from here, never from ``praib.cli.main``, which imports them.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import importlib.util
import json
import logging
import os
import stat
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import click

from praib.llm.backends import BACKENDS, DEFAULT_BASE_URL
from praib.llm.failures import EXIT_FAILED_ITEMS, FailureLog, TooManyFailures, failures_path, parse_max_failures

CACHE_DIR_HELP = "Call cache; a rerun resumes from it. [default: $PRAIB_CACHE or ~/.cache/praib/calls]"


def configure_output() -> None:
    """What a command prints besides its own lines: warnings as ``praib: ...`` lines, each once (datasets
    and huggingface_hub give their loggers a handler of their own, and the root's printed every line
    of theirs a second time), and praib's progress (:mod:`praib.records.progress`), not the libraries'
    bars: none of datasets' (``Map:``, ``Filter:``, ``Generating train split:``), and huggingface_hub's
    downloads only on a terminal. The libraries are set so once a command imports them: a command that
    needs neither (every ``--help``) starts without them."""
    from praib.records.progress import shows_bars

    logging.basicConfig(level=logging.WARNING, format="praib: %(message)s")

    def quiet_datasets() -> None:
        import datasets

        logging.getLogger("datasets").handlers.clear()
        datasets.disable_progress_bars()

    def quiet_huggingface_hub() -> None:
        import huggingface_hub.utils
        import huggingface_hub.utils.logging  # (which gives the library's logger its handler)

        logging.getLogger("huggingface_hub").handlers.clear()
        if not shows_bars():
            huggingface_hub.utils.disable_progress_bars()

    when_imported("datasets", quiet_datasets)
    when_imported("huggingface_hub", quiet_huggingface_hub)


def when_imported(name: str, action) -> None:
    """Call ``action()`` now if module ``name`` is imported, else right after it is first imported."""
    if name in sys.modules:
        action()
    else:
        sys.meta_path.insert(0, _AfterImport(name, action))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds module ``name`` through the finders after it and runs ``action()`` once the module has run: what
    the command line sets in a library it may never import."""

    def __init__(self, name: str, action) -> None:
        self.name, self.action = name, action

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            execute = spec.loader.exec_module

            def execute_then_act(module) -> None:
                execute(module)
                self.action()

            spec.loader.exec_module = execute_then_act
        return spec


def _apply(command, options):
    for option in reversed(options):
        command = option(command)
    return command


class OutputPath(click.Path):
    """The type of a path a command writes (--output, and --per-review, --markdown): before the command
    runs, each is checked against its inputs (:func:`_refusing_inputs`)."""


class _Source(click.types.StringParamType):
    """The type of a string that names an input of the command: records (a path or a Hub id), a folder
    of them, ``disapere:PATH``; the paths among them are checked against its outputs."""


#: The type of an input given as a string (:class:`_Source`); an input of type click.Path is one already.
SOURCE = _Source()
#: Path options that are no input: a cache is read and added to, never replaced.
_NOT_INPUTS = ("cache_dir",)


def output_option(help: str, default: str | None = None, file_okay: bool = True, dir_okay: bool = True,
                  writes: str | None = "praib.records.io:SAVED_DATASET_FILES", beside: tuple[str, ...] = ()):
    """-o/--output, the one spelling of where a command writes its result. An output that is one of the
    command's inputs, a file of an input folder, or a folder holding an input it would replace, is
    refused before the command runs (:func:`_refusing_inputs`). The command runs holding the output's
    lock (:func:`praib.records.locks.output_lock`), which also covers the files it writes beside the
    output: a second run on the same output is refused at once. Every such command has --overwrite.

    An existing output file is replaced only when praib wrote it and it is unchanged since; any other
    file is refused before the run unless --overwrite is given (:func:`_refusing_users_file`).

    An output folder: the command replaces the files praib wrote in the folder
    (:func:`praib.records.atomic.replace_folder`) and refuses a folder that holds any other file unless
    --overwrite is given, which keeps them; ``writes`` ("module:NAME" of a tuple of names, by default a
    saved dataset's) are the files it writes in every folder, so that a file of the user's of one of those
    names is refused before the run rather than after it.

    ``beside`` ("module:NAME" of functions of the output's path) name the files the command writes beside its
    output (``OUTPUT.stats.json``): each is judged as the output file is."""
    option = click.option("--output", "-o", type=OutputPath(file_okay=file_okay, dir_okay=dir_okay, path_type=Path),
                          default=default, show_default=default is not None,
                          help=f"{help} A symbolic link is written through to its target.")
    replaces = ["Replace an output file that praib did not write (or that changed since)."] if file_okay else []
    if dir_okay:
        replaces.append(f"{'Write' if not file_okay else 'Or write'} into an output folder that holds files praib "
                        "did not write there (or that changed since): praib's own files are replaced, the others "
                        "kept.")
    overwrite = click.option("--overwrite", is_flag=True, help=" ".join(replaces))
    return lambda command: option(overwrite(_refusing_inputs(_holding_output_lock(
        _refusing_users_files(command, writes if dir_okay else None, beside)))))


def _refusing_users_files(command, writes: str | None, beside: tuple[str, ...]):
    @functools.wraps(command)
    def run(**params):
        output, overwrite = params["output"], params.pop("overwrite")
        if output is None:
            return command(**params)
        written = _files_written(output, params, beside)
        if os.path.isdir(output):
            _refuse_users_files_in_folder(output, overwrite, writes)
            del written[output]
        with _refusing_users_file(written, overwrite):
            return command(**params)
    return run


def _refuse_users_files_in_folder(output: Path, overwrite: bool, writes: str | None) -> None:
    from pkgutil import resolve_name

    from praib.records.atomic import RECORD, finish_interrupted, ownership

    finish_interrupted(output)
    held = ownership(output)
    if held.users and not overwrite:
        shown = ", ".join(map(str, held.users[:5])) + (", ..." if len(held.users) > 5 else "")
        which = f"praib did not write there, or that changed since ({shown})" if held.recorded else \
            f"praib has no record of writing ({shown}; a folder without {RECORD} is all yours)"
        raise click.ClickException(f"{output}: holds files {which}; give --overwrite to keep them and replace "
                                   "only praib's own, or choose another --output")
    clashes = [name for name in (resolve_name(writes) if writes else ())
               if os.path.lexists(output / name) and name not in held.praib]
    if clashes:
        one = len(clashes) == 1
        command_path = click.get_current_context().command_path
        raise click.ClickException(
            f"{output}: {', '.join(clashes)}: {'a file' if one else 'files'} of yours (praib did not write "
            f"{'it' if one else 'them'} there, or {'it' if one else 'they'} changed since) where "
            f"`{command_path}` writes its own; --overwrite keeps your files: move {'it' if one else 'them'} away "
            "or choose another --output")


def _files_written(output: Path, params: dict, beside: tuple[str, ...]) -> dict[Path, str]:
    """The files a command writes at ``output`` and beside it that an earlier run may have left, each with the
    option that names it: the output, its failure records (``OUTPUT.failures.jsonl``, where the command takes
    --max-failures), the files ``beside`` names and the files of its other file options (``leaderboard report
    --markdown``)."""
    from pkgutil import resolve_name

    context = click.get_current_context()
    written = {output: "--output"}
    if "max_failures" in params:
        written[failures_path(output)] = "--output"
    for name in beside:
        written[Path(resolve_name(name)(output))] = "--output"
    for param in context.command.params:
        if isinstance(param.type, OutputPath) and param.name != "output" and not param.type.dir_okay \
                and context.params.get(param.name) is not None:
            written[Path(context.params[param.name])] = _role(param)
    return written


@contextmanager
def _refusing_users_file(written: dict[Path, str], overwrite: bool) -> Iterator[None]:
    """Refuse, in one line and before the block runs, a file at one of the paths of ``written`` (each with the
    option that names it) that praib did not write there or that changed since
    (:func:`praib.records.atomic.written_by_praib`; a symbolic link is judged by the file it points to), unless
    ``overwrite``. After the block, however it ended, record in the folder's record
    (:func:`praib.records.atomic.record_written`) each of them that it wrote (a file that was not there before,
    or was replaced: the block runs holding the output's lock), and drop the entry of one it removed: a rerun
    then replaces praib's own file without a flag."""
    from praib.records.atomic import written_by_praib

    if not overwrite:
        for path, option in written.items():
            if os.path.exists(path) and not written_by_praib(path):
                raise click.ClickException(f"{path}: a file praib did not write (or one changed since); give "
                                           f"--overwrite to replace it, or choose another {option}")
    before = {path: _identity(path) for path in written}
    try:
        yield
    finally:
        _record_files(before)


def _identity(path: Path) -> tuple[int, int, int, int] | None:
    """What tells one version of the regular file at ``path`` (symbolic links followed) from another: a
    file replaced by an atomic rename is a new inode; None when there is no such file."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns) if stat.S_ISREG(status.st_mode) \
        else None


def _record_files(before: dict[Path, tuple[int, int, int, int] | None]) -> None:
    from praib.records.atomic import file_digest, record_written

    for path, identity in before.items():
        now = _identity(path)
        if now == identity:
            continue
        target = Path(os.path.realpath(path))
        record_written(target.parent, {target.name: file_digest(target) if now is not None else None},
                       outputs=True)


def _refusing_inputs(command):
    """Refuse, in one line, an output that is an input of the command (symbolic links followed), a file
    of an input folder, or a folder holding an input that the command would replace."""
    @functools.wraps(command)
    def run(**params):
        context = click.get_current_context()
        outputs = [(param, Path(context.params[param.name])) for param in context.command.params
                   if isinstance(param.type, OutputPath) and context.params.get(param.name) is not None]
        inputs = [(param, path) for param in context.command.params
                  if isinstance(param.type, (click.Path, _Source)) and not isinstance(param.type, OutputPath)
                  and param.name not in _NOT_INPUTS for path in _paths_in(context.params.get(param.name))]
        for output_param, output in outputs:
            for input_param, source in inputs:
                problem = _overlap(output, source, read_whole=isinstance(input_param.type, _Source))
                if problem:
                    raise click.ClickException(f"{output}: {problem.format(input=_role(input_param), path=source)}; "
                                               f"choose another {_role(output_param)}")
        return command(**params)
    return run


def _paths_in(value) -> Iterator[Path]:
    """The existing paths a parameter's value names: itself, or (``disapere:PATH``, ``DIR:config``) a part."""
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from _paths_in(item)
        return
    if not isinstance(value, (str, Path)):
        return
    text = str(value)
    candidates = [text, text.partition(":")[2], text.rpartition(":")[0]] if ":" in text else [text]
    for candidate in candidates:
        if candidate and os.path.lexists(candidate):
            yield Path(candidate)
            return


def _overlap(output: Path, source: Path, read_whole: bool) -> str | None:
    """How writing ``output`` would overwrite the input ``source`` (a message with {input} and {path}
    to fill), or None. ``read_whole``: the input is records, and a folder of them is read whole."""
    from praib.records.atomic import ownership

    written, read = Path(os.path.realpath(output)), Path(os.path.realpath(source))
    if written == read or (written.exists() and os.path.samefile(written, read)):
        return "is the input {input}" + ("" if output == source else " ({path})")
    if written.is_relative_to(read) and read.is_dir():
        held = ownership(read)
        name = written.relative_to(read).as_posix()
        # A folder of records that praib did not write is read whole: a file written into it would be read
        # back as an input on the next run. Other folders (a run folder) take new files beside their own, and
        # commands' output files (a report written into the run folder) are no files of the folder's.
        if _holds(held.folders, name) if held.recorded else read_whole or os.path.lexists(written):
            return "is a file of the input folder {path} ({input})"
    if read.is_relative_to(written) and written.is_dir() and _holds(ownership(written).folders,
                                                                    read.relative_to(written).as_posix()):
        return "holds the input {path} ({input}), a file praib wrote there that this command would replace"
    return None


def _holds(files, name: str) -> bool:
    return name in files or any(file.startswith(f"{name}/") for file in files)


def _role(param: click.Parameter) -> str:
    return param.human_readable_name.removesuffix("...") if isinstance(param, click.Argument) else max(param.opts, key=len)


def _holding_output_lock(command):
    # Taken when the command runs rather than while click parses, so that a usage error takes no lock.
    @functools.wraps(command)
    def run(**params):
        from praib.records.atomic import OutputClashError
        from praib.records.locks import OutputLockedError, output_lock

        with contextlib.ExitStack() as held:
            if params["output"] is not None:
                try:
                    held.enter_context(output_lock(params["output"]))
                except OutputLockedError as err:
                    raise click.ClickException(f"{err}; wait for it or choose another --output") from None
            try:
                return command(**params)
            except OutputClashError as err:
                raise click.ClickException(str(err)) from None
    return run


def cache_dir_option(help: str = CACHE_DIR_HELP):
    return click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help=help)


def _hide_download_bars(context, parameter, hidden: bool) -> bool:
    if hidden:
        when_imported("huggingface_hub", _no_download_bars)
    return hidden


def _no_download_bars() -> None:
    import huggingface_hub.utils

    huggingface_hub.utils.disable_progress_bars()


no_progress_option = click.option("--no-progress", is_flag=True, callback=_hide_download_bars,
                                  help="Hide progress bars.")

split_option = click.option("--split", default="train", show_default=True,
                            help="Split to read from a dataset or Hub id.")

#: Whose reviews the input's records are, where they do not say (a CSV or JSONL without a source column).
source_option = click.option("--source", "source_name", metavar="NAME",
                             help="The source of the reviews read that name none: fills their 'source' (and "
                                  "'model', unless NAME is 'human'), e.g. --source gpt-4o for a CSV of that "
                                  "model's reviews. [default: records must name their source; AI-Scientist "
                                  "reviews are 'ai-scientist', OpenReview notes 'human']")


def seed_option(help: str):
    # Seeds are stored with the records as int64.
    return click.option("--seed", type=click.IntRange(-2**63, 2**63 - 1), default=0, show_default=True, help=help)


@dataclass(frozen=True)
class BackendSpec:
    """A model and how to run it, as a command's options chose it (for the generator or the judge)."""

    kind: str
    model: str | None
    base_urls: tuple[str, ...]
    timeout: float
    max_tries: int
    concurrency: int
    max_model_len: int | None
    engine_args: tuple[tuple[str, Any], ...]
    tokenizer: str | None

    def options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`praib.llm.backends.make_backend` for this backend."""
        if self.kind == "openai":
            return {"base_url": list(self.base_urls), "timeout": self.timeout, "max_tries": self.max_tries,
                    "concurrency": self.concurrency, "max_model_len": self.max_model_len,
                    "tokenizer": load_tokenizer(self.tokenizer) if self.tokenizer else None}
        engine = dict(self.engine_args)
        if self.max_model_len is not None and self.kind == "vllm":
            engine.setdefault("max_model_len", self.max_model_len)
        return engine

    def open(self):
        """The backend, closed (its engine shut down) when the command ends, however it ends."""
        from praib.llm.backends import make_backend

        return closed_at_exit(make_backend(self.kind, self.model, **self.options()))


def closed_at_exit(backend):
    """``backend``, closed when the running command ends (on success, on error and on Ctrl-C alike)."""
    close = getattr(backend, "close", None)
    context = click.get_current_context(silent=True)
    if callable(close) and context is not None:
        context.call_on_close(close)
    return backend


def load_tokenizer(name: str):
    """A Hugging Face tokenizer (local directory or Hub id) to count a server's tokens with."""
    from praib.llm.backends import BackendError

    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(name)
    except ImportError as err:
        raise BackendError(f"counting tokens with {name!r} needs transformers ({err}); "
                           "`pip install praib[transformers]`") from None
    except (OSError, ValueError) as err:
        raise BackendError(f"could not load tokenizer {name!r}: {err}") from None


def _backend_spec(kind: str, model: str | None, base_urls, timeout, max_tries, concurrency, max_model_len,
                  engine_args, tokenizer, role: str) -> BackendSpec:
    prefix = "--judge-" if role == "judge" else "--"
    if engine_args and kind not in ("vllm", "transformers"):
        raise click.UsageError(f"{prefix}engine-arg is for an in-process backend (vllm, transformers), "
                               f"not {kind}")
    if max_model_len is not None and kind == "transformers":
        raise click.UsageError(f"{prefix}max-model-len is for vllm or a server (openai); the transformers backend "
                               "reads the model's positions from its config")
    if tokenizer and kind != "openai":
        raise click.UsageError(f"{prefix}tokenizer is for a server (openai); the {kind} backend counts with "
                               "the model's own tokenizer")
    return BackendSpec(kind, model, tuple(base_urls), timeout, max_tries, concurrency, max_model_len,
                       tuple(engine_values(engine_args, f"{prefix}engine-arg").items()), tokenizer)


def engine_values(pairs: tuple[str, ...], option: str) -> dict[str, Any]:
    """KEY=VALUE engine arguments; values are JSON where they parse (8192, true, "auto"), text otherwise."""
    values: dict[str, Any] = {}
    for key, raw in key_values(pairs, option).items():
        try:
            values[key] = json.loads(raw)
        except ValueError:
            values[key] = raw
    return values


def _server_options(prefix: str, role: str, backend_flag: str):
    """The options of one backend role: the servers, their knobs, the model's context and engine."""
    whose = "the judge model's" if role == "judge" else "the model's"
    return [
        click.option(f"--{prefix}base-url", f"{prefix.replace('-', '_')}base_urls", multiple=True,
                     default=(DEFAULT_BASE_URL,), show_default=True,
                     help=f"OpenAI-compatible server of the {role} ({backend_flag} openai); repeat it to spread the "
                          "requests over several servers of the same model. The API key is read from "
                          "$OPENAI_API_KEY."),
        click.option(f"--{prefix}timeout", type=click.FloatRange(min=0, min_open=True), default=600.0,
                     show_default=True, help=f"Seconds to wait for one answer of the {role}'s server "
                                             f"({backend_flag} openai)."),
        click.option(f"--{prefix}max-tries", type=click.IntRange(min=1), default=5, show_default=True,
                     help="Attempts per request, with exponential backoff, before the item is recorded as failed "
                          f"({backend_flag} openai)."),
        click.option(f"--{prefix}concurrency", type=click.IntRange(min=1), default=8, show_default=True,
                     help=f"Parallel requests to each of the {role}'s servers ({backend_flag} openai)."),
        click.option(f"--{prefix}max-model-len", type=click.IntRange(min=1), default=None,
                     help=f"{whose.capitalize()} context length in tokens, when its backend cannot tell (a server "
                          "that does not report it); prompts are fitted to it. [default: what the backend says]"),
        click.option(f"--{prefix}engine-arg", f"{prefix.replace('-', '_')}engine_args", multiple=True,
                     metavar="KEY=VALUE",
                     help=f"An argument of the {role}'s in-process engine (repeatable; {backend_flag} vllm: LLM(...) "
                          "arguments such as max_model_len=32768, dtype=float32, tensor_parallel_size=2; "
                          "transformers: device, dtype, revision); values are read as JSON when they parse."),
        click.option(f"--{prefix}tokenizer", metavar="NAME_OR_DIR",
                     help=f"Tokenizer of {whose[:-2]} (local dir or Hub id) to count tokens with when it runs on "
                          f"a server ({backend_flag} openai); else 1.3 tokens a word is assumed."),
    ]


@dataclass(frozen=True)
class JudgeSpec:
    """The judge a command's options chose; ``backend.model`` None when none was given."""

    backend: BackendSpec
    max_new_tokens: int
    cache_dir: Path | None
    templates: tuple[tuple[str, str], ...] = ()

    @property
    def model(self) -> str | None:
        return self.backend.model

    def make(self, failures: FailureLog):
        """The :class:`praib.llm.judge.Judge` (None without a model), recording into ``failures``; its
        backend is closed when the command ends."""
        if not self.model:
            return None
        from praib.llm import judge

        made = judge.make_judge(self.backend.kind, self.model, max_new_tokens=self.max_new_tokens,
                                cache_dir=self.cache_dir, failures=failures, templates=dict(self.templates),
                                **self.backend.options())
        closed_at_exit(made.backend)
        return made


def _judge_templates(values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    from praib.llm.judge import check_judge_templates

    pairs = []
    for value in values:
        name, _, template = value.partition("=")
        if not name or not template:
            raise click.BadParameter(f"expected NAME=TEMPLATE, got {value!r}", param_hint="--judge-template")
        pairs.append((name.strip(), template.strip()))
    try:
        check_judge_templates(dict(pairs))
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--judge-template") from None
    return tuple(pairs)


def judge_options(command):
    """The options that choose and run a judge model, the same on every command that takes a judge;
    the command receives them as one ``judge_spec`` argument, a :class:`JudgeSpec` (and ``cache_dir``)."""
    @functools.wraps(command)
    def with_judge(*args, **kwargs):
        backend = _backend_spec(
            kwargs.pop("judge_backend"), kwargs.pop("judge_model"), kwargs.pop("judge_base_urls"),
            kwargs.pop("judge_timeout"), kwargs.pop("judge_max_tries"), kwargs.pop("judge_concurrency"),
            kwargs.pop("judge_max_model_len"), kwargs.pop("judge_engine_args"), kwargs.pop("judge_tokenizer"),
            "judge")
        kwargs["judge_spec"] = JudgeSpec(backend, kwargs.pop("judge_max_new_tokens"), kwargs.get("cache_dir"),
                                         _judge_templates(kwargs.pop("judge_templates")))
        return command(*args, **kwargs)

    return _apply(with_judge, [
        click.option("--judge", "judge_model", metavar="MODEL",
                     help="Model that judges or edits text: the judged metrics (math engagement, coverage, target/aspect), "
                          "LLM-driven perturbations and counterfactual edits."),
        click.option("--judge-backend", type=click.Choice(BACKENDS), default="transformers", show_default=True,
                     help="Backend that runs the judge model."),
        click.option("--judge-max-new-tokens", type=click.IntRange(min=1), default=1024, show_default=True,
                     help="Longest judge answer, in tokens."),
        click.option("--judge-template", "judge_templates", multiple=True, metavar="NAME=TEMPLATE",
                     help="Ask the judge with TEMPLATE (a built-in name or a .jinja file) in place of its built-in "
                          "template NAME (repeatable), e.g. coverage=coverage_strict for the stricter coverage "
                          "criterion; the names are those of praib/llm/templates."),
        *_server_options("judge-", "judge", "--judge-backend"),
        cache_dir_option("Call cache of the judge (and of the command's other model calls); a rerun resumes "
                         "from it. [default: $PRAIB_CACHE or ~/.cache/praib/calls]"),
    ])


max_failures_option = click.option(
    "--max-failures", metavar="N|SHARE", default=None,
    help="Stop the run once N items failed, or once more than SHARE (e.g. 0.1) of the items tried failed. "
         "[default: go on; stop only when none of the first 20 requests got an answer]")


@contextmanager
def failure_log(max_failures: str | None, output: Path | None) -> Iterator[FailureLog]:
    """The run's :class:`~praib.llm.failures.FailureLog`. When the block ends, the failed items are
    written to ``<output>.failures.jsonl`` (a stale file is removed) and counted on stderr, and the
    command exits with status 3 if there are any; a run stopped by ``--max-failures`` (or a server
    that never answers) ends with one line and status 1, its failures written all the same."""
    try:
        log = FailureLog(parse_max_failures(max_failures))
    except ValueError as err:
        raise click.BadParameter(str(err).removeprefix("--max-failures: "), param_hint="--max-failures") from None
    try:
        yield log
        log.stop_if_none_answered()
    except TooManyFailures as err:
        _write_failures(log, output)
        raise click.ClickException(str(err)) from None
    except BaseException:
        _write_failures(log, output)
        raise
    written = _write_failures(log, output)
    if log.items:
        click.echo(f"warning: {log.describe()}"
                   + (f"; written to {written}" if written else "; give --output to keep the failure records")
                   + "; rerun the same command to retry them", err=True)
        raise SystemExit(EXIT_FAILED_ITEMS)


def _write_failures(log: FailureLog, output: Path | None) -> Path | None:
    return log.write(output) if output is not None else None


def failed_names(log: FailureLog, owners: dict[str, str], most: int = 5) -> str:
    """What a summary line calls the failed items: ``owners`` maps a record's name (its paper, review or
    rebuttal id, with which a failure's ``item_id`` starts: ``p3``, ``p3/finding``) to the name to show
    (its paper id); each is named once, at most ``most`` of them, then how many more."""
    names: list[str] = []
    for item in log.items:
        name = item.item_id
        while name not in owners and "/" in name:
            name = name.rsplit("/", 1)[0]
        shown = owners.get(name, item.item_id)
        if shown not in names:
            names.append(shown)
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def stop_if_nothing_made(log: FailureLog, made: int, what: str, output: Path | None) -> None:
    """A run in which every item failed made nothing, which is an error (exit 1, one line), not a
    partial result (exit 3); a server that answered none of them is said as such."""
    if made or not log.items:
        return
    log.stop_if_none_answered()
    kept = f"; the failure records are in {failures_path(output)}" if output is not None else ""
    raise click.ClickException(f"{what}: every item failed ({log.describe()}){kept}")


def model_options(command):
    """The options that choose a model and how it samples, shared by `generate` and `meta-review`; the
    command receives the backend options (and its MODEL argument) as one ``model_spec``, a
    :class:`BackendSpec`."""
    @functools.wraps(command)
    def with_model(*args, **kwargs):
        kwargs["model_spec"] = _backend_spec(
            kwargs.pop("backend_kind"), kwargs.pop("model"), kwargs.pop("base_urls"), kwargs.pop("timeout"),
            kwargs.pop("max_tries"), kwargs.pop("concurrency"), kwargs.pop("max_model_len"),
            kwargs.pop("engine_args"), kwargs.pop("tokenizer"), "model")
        return command(*args, **kwargs)

    return _apply(with_model, [
        click.option("--backend", "backend_kind", type=click.Choice(BACKENDS), default="transformers",
                     show_default=True, help="vllm: offline engine (GPU, or the CPU build); openai: any "
                                             "OpenAI-compatible server (e.g. `vllm serve`); transformers: CPU, small "
                                             "models."),
        click.option("--max-new-tokens", type=click.IntRange(min=1), default=2048, show_default=True,
                     help="Longest output, in tokens."),
        click.option("--temperature", type=click.FloatRange(min=0), default=0.0, show_default=True,
                     help="Sampling temperature; 0 is greedy."),
        click.option("--top-p", type=click.FloatRange(0, 1, min_open=True), default=1.0, show_default=True,
                     help="Nucleus sampling: keep the smallest token set with this probability mass."),
        seed_option("Seed of the sampling (and of the perturbation, when there is one)."),
        click.option("--token-budget", type=click.IntRange(min=1), default=50_000, show_default=True,
                     help="Truncate each paper to this many tokens (the model's tokenizer when the backend has one), "
                          "or to what the prompt and the answer leave of the model's context when that is less."),
        click.option("--batch-size", type=click.IntRange(min=1), default=None,
                     help="Requests per backend call, written to disk after each. "
                          "[default: all at once for vllm, 16 otherwise]"),
        click.option("--no-cache", is_flag=True, help="Do not read or write the call cache."),
        click.option("--source", help="The records' source field. [default: the model name]"),
        *_server_options("", "model", "--backend"),
    ])


def write_json(data, output: Path) -> None:
    """A command's results as indented UTF-8 JSON, creating the folder; written whole or not at all."""
    from praib.records.atomic import write_text_atomically

    write_text_atomically(output, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def key_values(pairs: tuple[str, ...], option: str) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint=option)
        out[key.strip()] = value
    return out


def param_values(pairs: tuple[str, ...]) -> dict[str, str]:
    """--prompt-arg KEY=VALUE; VALUE '@file.txt' reads the file (venue guidelines are long)."""
    from praib.records import RecordError, read_text

    params = key_values(pairs, "--prompt-arg")
    for key, value in params.items():
        if value.startswith("@"):
            try:
                params[key] = read_text(value[1:], what="text")
            except RecordError as err:
                raise click.BadParameter(f"{key}: {err}", param_hint="--prompt-arg") from None
    return params
