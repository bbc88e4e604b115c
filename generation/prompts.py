"""Prompt templates for LLM reviewers and meta-reviewers.

Each strategy is one Jinja file in ``templates/``. A template opens with a Jinja
comment that holds YAML metadata::

    {#
    name: extended
    description: ...
    source: praib-behaviour-benchmark, Appendix L (extended ICLR 2025 / NeurIPS 2025 prompts)
    scale: venue            # venue | generic | none: the scale of the scores the answer gives
    inputs: [paper]         # subset of paper, reviews, rebuttal
    output: review          # review | meta_review
    system: true            # prepend the shared system prompt (system.jinja, knowledge cut-off)
    params:                 # further template parameters: required | optional
      venue_guidelines: required
    #}

A file without a header comment gets the defaults (scale venue, inputs [paper], output review,
no system prompt); a header comment that names any of these fields is the metadata, and must be
valid YAML with known fields only. A review prompt must take and render the paper's text, a
meta-review prompt also every review it is given: a prompt that renders without them is a
ValueError before any request is sent.

The template body is the user message. A template may also define its own system
message at top level with ``{% set system_message %}...{% endset %}``; then
``system`` should be false. Files whose name starts with ``_`` and ``system.jinja``
are shared blocks, not strategies.

Templates receive ``paper_text``, ``venue`` (as given), ``venue_name`` (the
canonical name from the scale file), ``year``, ``knowledge_cutoff``, ``reviews``
(a list), ``rebuttal`` and ``rebuttals`` (one per review, or None), any extra
keyword parameters, and - for ``scale: venue`` or ``generic`` - the scales as
data: ``rating_scale`` and ``confidence_scale`` (lists of ``(value, label)`` in
descending order; ``confidence_scale`` is None when the venue-year had none) and
``subscores`` (a list of :class:`SubscoreScale`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import jinja2
import yaml

from praib.scales import UnknownScaleError, VenueScales, generic_scales, venue_scales
from praib.templates import TEMPLATE_FAULTS, TemplateSet, error_place, template_error

TEMPLATES_DIR = Path(__file__).parent / "templates"
SYSTEM_TEMPLATE = "system.jinja"

SCALES = ("venue", "generic", "none")
INPUTS = ("paper", "reviews", "rebuttal")
OUTPUTS = ("review", "meta_review")

_HEADER = re.compile(r"\A\s*\{#-?(?P<meta>.*?)-?#\}", re.S)
METADATA_FIELDS = ("name", "description", "source", "scale", "inputs", "output", "system", "params")
# The input a prompt of each output must take and render.
_NEEDED_INPUT = {"review": "paper", "meta_review": "reviews"}


@dataclass(frozen=True)
class PromptSpec:
    name: str
    description: str
    source: str              # which seed section it follows
    scale: str               # "venue" | "generic" | "none": the scale the output's scores are on
    inputs: tuple[str, ...]  # subset of ("paper", "reviews", "rebuttal")
    output: str              # "review" | "meta_review"
    path: Path


class SubscoreScale(NamedTuple):
    """One sub-score as templates see it."""

    name: str                          # the scale-file key, e.g. "technical_novelty_and_significance"
    title: str                         # "Technical novelty and significance"
    levels: list[tuple[int, str]]      # (value, label), highest value first


def _levels(scale) -> list[tuple[int, str]]:
    return [(value, scale.labels[value]) for value in sorted(scale.labels, reverse=True)]


def scale_context(scales: VenueScales) -> dict[str, Any]:
    """The template variables that describe one venue-year's scales."""
    return {
        "rating_scale": _levels(scales.rating),
        "confidence_scale": _levels(scales.confidence) if scales.confidence is not None else None,
        "subscores": [SubscoreScale(name, name.replace("_", " ").capitalize(), _levels(scale))
                      for name, scale in scales.subscores.items()],
    }


def _read_metadata(path: Path, text: str) -> tuple[dict[str, Any], bool]:
    """The YAML metadata of a template's header comment, and whether it had one. A comment that names
    no metadata field is an ordinary comment; one that does must be valid YAML with known fields only."""
    match = _HEADER.match(text)
    if not match:
        return {}, False
    names_a_field = re.search(rf"^\s*({'|'.join(METADATA_FIELDS)})\s*:", match.group("meta"), re.M)
    try:
        meta = yaml.safe_load(match.group("meta"))
    except yaml.YAMLError as err:
        if not names_a_field:
            return {}, False  # an ordinary comment, not a metadata header
        mark = getattr(err, "problem_mark", None)
        line = f": line {text[:match.start('meta')].count(chr(10)) + mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or type(err).__name__
        raise ValueError(f"{path}{line}: the metadata header is not valid YAML ({problem})") from None
    if not isinstance(meta, dict) or not names_a_field:
        return {}, False
    unknown = sorted(str(key) for key in meta if key not in METADATA_FIELDS)
    if unknown:
        raise ValueError(f"{path}: unknown metadata field(s) {', '.join(unknown)} in the header; "
                         f"known: {', '.join(METADATA_FIELDS)}")
    return meta, True


def _spec_from(path: Path, text: str) -> tuple[PromptSpec, bool, dict[str, str]]:
    meta, _ = _read_metadata(path, text)
    name = str(meta.get("name") or path.stem)
    scale = str(meta.get("scale", "venue"))
    if scale not in SCALES:
        raise ValueError(f"prompt {name!r} ({path}): scale must be one of {', '.join(SCALES)}, not {scale!r}")
    raw_inputs = meta.get("inputs", ["paper"])
    if isinstance(raw_inputs, str):
        raw_inputs = [raw_inputs]
    if not isinstance(raw_inputs, list):
        raise ValueError(f"prompt {name!r} ({path}): inputs must be a list, a subset of {', '.join(INPUTS)}; "
                         f"got {raw_inputs!r}")
    inputs = tuple(str(i) for i in raw_inputs)
    unknown = [i for i in inputs if i not in INPUTS]
    if unknown:
        raise ValueError(f"prompt {name!r} ({path}): unknown inputs {unknown}; use a subset of {', '.join(INPUTS)}")
    output = str(meta.get("output", "review"))
    if output not in OUTPUTS:
        raise ValueError(f"prompt {name!r} ({path}): output must be one of {', '.join(OUTPUTS)}, not {output!r}")
    if _NEEDED_INPUT[output] not in inputs:
        raise ValueError(f"prompt {name!r} ({path}): a {output} prompt needs the input "
                         f"{_NEEDED_INPUT[output]}; inputs are {list(inputs)}")
    if not isinstance(meta.get("params") or {}, dict):
        raise ValueError(f"prompt {name!r} ({path}): params must map names to 'required' or 'optional', "
                         f"got {meta['params']!r}")
    if not isinstance(meta.get("system", False), bool):
        raise ValueError(f"prompt {name!r} ({path}): system must be true or false, got {meta['system']!r}")
    params = {str(k): str(v) for k, v in (meta.get("params") or {}).items()}
    bad = {k: v for k, v in params.items() if v not in ("required", "optional")}
    if bad:
        raise ValueError(f"prompt {name!r} ({path}): params must be 'required' or 'optional': {bad}")
    spec = PromptSpec(
        name=name,
        description=str(meta.get("description", "")).strip(),
        source=str(meta.get("source", "")).strip(),
        scale=scale,
        inputs=inputs,
        output=output,
        path=path,
    )
    return spec, bool(meta.get("system", False)), params


def _builtin_paths() -> list[Path]:
    return [p for p in sorted(TEMPLATES_DIR.glob("*.jinja"))
            if not p.name.startswith("_") and p.name != SYSTEM_TEMPLATE]


def list_prompts() -> list[PromptSpec]:
    """The built-in prompt strategies, sorted by name."""
    specs = [_spec_from(p, p.read_text(encoding="utf-8"))[0] for p in _builtin_paths()]
    return sorted(specs, key=lambda s: s.name)


class PromptRenderError(Exception):
    """Raised by the ``fail()`` template function; turned into a ValueError naming the prompt."""


def _fail(message: str) -> None:
    raise PromptRenderError(message)


# A user's template is looked up in its own folder first (its shared blocks), then in the built-in folder.
PROMPT_TEMPLATES = TemplateSet("prompt", TEMPLATES_DIR, globals={"fail": _fail}, keep_trailing_newline=True,
                               autoescape=False)


def _rebuttal_list(rebuttal: Any, n_reviews: int) -> list[str | None] | None:
    if rebuttal is None or isinstance(rebuttal, str):
        return None
    items = list(rebuttal)
    if len(items) != n_reviews:
        raise ValueError(f"got {len(items)} rebuttals for {n_reviews} reviews; pass one rebuttal per review "
                         "or a single rebuttal text")
    return [None if r is None or not str(r).strip() else str(r) for r in items]


class Prompt:
    """One loaded template: its spec, its text, and :meth:`render`."""

    def __init__(self, spec: PromptSpec, source_text: str, system: bool = False,
                 params: dict[str, str] | None = None):
        self.spec = spec
        self.source_text = source_text
        self.system = system                      # whether the shared system prompt is prepended
        self.params = dict(params or {})          # extra parameters: name -> "required" | "optional"
        self._env = PROMPT_TEMPLATES.environment(spec.path.parent)
        try:  # compiled now, so that a broken file fails before any paper is read
            self._env.get_template(spec.path.name)
        except TEMPLATE_FAULTS as err:
            raise template_error(err, spec.path) from None

    def __repr__(self) -> str:
        return f"Prompt({self.spec.name!r}, scale={self.spec.scale!r}, output={self.spec.output!r})"

    def _error(self, what: str) -> ValueError:
        return ValueError(f"prompt {self.spec.name!r}: {what}")

    def describe_params(self) -> str:
        """The template's extra parameters as ``name (required), other (optional)``; "-" for none."""
        return ", ".join(f"{name} ({kind})" for name, kind in self.params.items()) or "-"

    def check_params(self, params: dict[str, Any]) -> None:
        """Refuse parameters the template does not declare and missing required ones, before any model loads."""
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            raise self._error(f"unknown parameter {', '.join(unknown)}; its parameters: {self.describe_params()}")
        missing = [name for name, kind in self.params.items()
                   if kind == "required" and not str(params.get(name) or "").strip()]
        if missing:
            raise self._error(f"missing parameter {', '.join(missing)}: give it with --prompt-arg "
                              f"{missing[0]}=VALUE (VALUE '@file' reads a file)")

    def _scales(self, venue: str | None, year: int | None) -> VenueScales | None:
        if self.spec.scale == "none":
            return None
        if self.spec.scale == "generic":
            return generic_scales()
        missing = [n for n, v in (("venue", venue), ("year", year)) if v is None or v == ""]
        if missing:
            raise self._error(f"missing parameter {' and '.join(missing)}: its rating, confidence and "
                              "sub-score sections follow the venue's scales of that year")
        try:
            return venue_scales(venue, year)
        except UnknownScaleError as err:
            raise self._error(str(err)) from err

    def render(self, *, paper_text: str = "", venue: str | None = None, year: int | None = None,
               knowledge_cutoff: str | None = None, reviews: Sequence[str] = (), rebuttal: str | None = None,
               **params: Any) -> list[dict[str, str]]:
        """The chat messages: an optional system message, then the user message."""
        spec = self.spec
        if "paper" in spec.inputs and not (paper_text and paper_text.strip()):
            raise self._error("missing parameter paper_text (the paper to review)")
        if isinstance(reviews, str):
            reviews = [reviews]
        reviews = [str(r) for r in reviews]
        if "reviews" in spec.inputs and not any(r.strip() for r in reviews):
            raise self._error("missing parameter reviews (at least one review to aggregate)")
        rebuttals = _rebuttal_list(rebuttal, len(reviews))
        if rebuttals is not None:
            rebuttal = None
        elif rebuttal is not None and not str(rebuttal).strip():
            rebuttal = None
        for name, kind in self.params.items():
            value = params.get(name)
            if kind == "required" and (value is None or (isinstance(value, str) and not value.strip())):
                raise self._error(f"missing parameter {name}")
            params.setdefault(name, None)
        scales = self._scales(venue, year)

        context: dict[str, Any] = dict(params)
        context.update(
            paper_text=paper_text, venue=venue, year=year, knowledge_cutoff=knowledge_cutoff,
            venue_name=scales.venue if scales is not None and spec.scale == "venue" else venue,
            reviews=reviews, rebuttal=rebuttal, rebuttals=rebuttals,
            prompt_name=spec.name,
        )
        if scales is not None:
            context.update(scale_context(scales))

        try:
            module = self._env.get_template(spec.path.name).make_module(context)
            user = str(module)
            system = getattr(module, "system_message", None)
            if system is None and self.system:
                system = self._env.get_template(SYSTEM_TEMPLATE).render(context)
        except jinja2.UndefinedError as err:
            raise ValueError(f"{error_place(err, spec.path)}: prompt {spec.name!r}: missing parameter: "
                             f"{err.message}") from err
        except PromptRenderError as err:
            raise self._error(str(err)) from err
        except TEMPLATE_FAULTS as err:
            raise template_error(err, spec.path) from None

        messages = []
        if system is not None and str(system).strip():
            messages.append({"role": "system", "content": str(system).strip() + "\n"})
        messages.append({"role": "user", "content": user.strip() + "\n"})
        self._check_inputs_rendered(messages, paper_text, reviews)
        return messages

    def _check_inputs_rendered(self, messages: list[dict[str, str]], paper_text: str, reviews: list[str]) -> None:
        """Refuse messages that lack the paper's text, or (meta-review prompts) a review: a template that
        never shows them would have the model review nothing. Whitespace is ignored, so ``| trim``,
        ``| indent`` and ``| wordwrap`` pass."""
        rendered = _words(" ".join(m["content"] for m in messages))
        if "paper" in self.spec.inputs and _words(paper_text) not in rendered:
            raise ValueError(f"{self.spec.path}: prompt {self.spec.name!r} renders no paper text: put "
                             "{{ paper_text }} where the paper goes")
        if "reviews" in self.spec.inputs:
            missing = sum(_words(r) not in rendered for r in reviews if r.strip())
            if missing:
                raise ValueError(f"{self.spec.path}: prompt {self.spec.name!r} renders without {missing} of the "
                                 f"{sum(bool(r.strip()) for r in reviews)} reviews it is given: show each of "
                                 "{{ reviews }} (e.g. m.reviews_block from _macros.jinja)")


def _words(text: str) -> str:
    return " ".join(text.split())


def load_prompt(name_or_path: str | Path) -> Prompt:
    """A built-in prompt by name, or a user's own ``.jinja`` file by path.

    A file without a metadata header gets the defaults: scale "venue", inputs
    ("paper",), output "review", no system prompt.
    """
    candidate = Path(name_or_path)
    is_path = isinstance(name_or_path, Path) or candidate.suffix == ".jinja" or len(candidate.parts) > 1
    if is_path:
        if candidate.is_dir():
            raise ValueError(f"{candidate}: is a directory, not a prompt template file")
        if not candidate.is_file():
            raise ValueError(f"prompt template file not found: {candidate}")
        path = candidate
    else:
        by_name = {spec.name: spec.path for spec in list_prompts()}
        if str(name_or_path) not in by_name:
            raise ValueError(f"unknown prompt {str(name_or_path)!r}; available prompts: "
                             f"{', '.join(sorted(by_name))} (or pass the path of a .jinja file)")
        path = by_name[str(name_or_path)]
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise template_error(err, path) from None
    spec, system, params = _spec_from(path, text)
    return Prompt(spec, text, system=system, params=params)
