"""A deployable Hugging Face Space of the leaderboard app: ``app.py`` (which calls
:func:`praib.leaderboard.app.launch` on the Hub datasets of the results and the queue),
``requirements.txt`` (praib and gradio pinned) and ``README.md`` (the Space's YAML header and how to
deploy it and run its runner)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from praib._version import __version__
from praib.leaderboard.submission import is_hub_id
from praib.records.atomic import replace_folder

SPACE_FILES = ("app.py", "requirements.txt", "README.md")
#: The gradio the app was built and tested with, pinned where gradio is not installed here.
TESTED_GRADIO = "6.31.0"


class SpaceError(ValueError):
    """A Space that cannot be written as asked."""


def gradio_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gradio")
    except PackageNotFoundError:
        return TESTED_GRADIO


def space_files(results: str, queue: str, title: str, license: str) -> dict[str, str]:
    """The Space's files by name. ``results`` and ``queue`` must be Hub dataset ids: a Space reads no
    folder of this machine."""
    for value in (results, queue):
        if not is_hub_id(value):
            raise SpaceError(f"{value}: a Space reads its data from the Hub: give a dataset id ORG/NAME "
                             "(`hf repo create ORG/NAME --repo-type dataset`)")
    gradio = gradio_version()
    app = (f'"""{title}: the praib leaderboard app over the Hub datasets {results} (results) and {queue} '
           '(requests)."""\n\nfrom praib.leaderboard.app import launch\n\n'
           f"launch({json.dumps(results)}, {json.dumps(queue)}, port=7860, host=\"0.0.0.0\")\n")
    header = {"title": title, "emoji": "🧐", "colorFrom": "blue", "colorTo": "gray", "sdk": "gradio",
              "sdk_version": gradio, "app_file": "app.py", "pinned": False, "license": license,
              "tags": ["leaderboard", "praib", "peer-review"]}
    readme = f"""---
{yaml.safe_dump(header, sort_keys=False, allow_unicode=True).strip()}
---

# {title}

How far LLMs review papers like human reviewers do, measured by praib. The table reads the results dataset
[`{results}`](https://huggingface.co/datasets/{results}); the Submit tab files requests into
[`{queue}`](https://huggingface.co/datasets/{queue}).

## Deploy

    hf upload ORG/SPACE . --repo-type space

Give the Space a secret `HF_TOKEN` with write access to `{queue}`, so that the Submit tab can file requests.

## Run the runner

Anywhere with praib installed, a token with write access to both datasets and the human reference:

    praib leaderboard process --queue {queue} --results {results} --reference HUMAN --watch 600

or from cron, every ten minutes (`--once` takes what is pending and stops):

    */10 * * * * praib leaderboard process --queue {queue} --results {results} --reference HUMAN --once

Several runners may share the queue: each request is taken by one of them, under a lease (`--lease`).
"""
    requirements = f"praib[app]=={__version__}\ngradio=={gradio}\n"
    return {"app.py": app, "requirements.txt": requirements, "README.md": readme}


def write_space(results: str, queue: str, output: str | Path, title: str = "praib leaderboard",
                license: str = "apache-2.0") -> Path:
    """Write the Space's files into ``output`` (in place of those of an earlier call; other files kept)."""
    files = space_files(results, queue, title, license)
    with replace_folder(output) as folder:
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
    return Path(output)
