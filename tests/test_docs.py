"""The documentation: the site builds strictly (a broken link or anchor, a page left out of the navigation, a
docstring the API reference cannot read fails), every metric card is a page of it, and every shell block marked
runnable runs as written on the demo data and prints what the page shows.

A block is runnable when the line before its fence is ``<!-- runnable -->``; the fenced block after
``<!-- output -->`` that follows it (only text between) is what it prints. The blocks of one page run in order,
each in its own ``bash -e``, in one temporary folder that holds the repository's folders (``praib``,
``examples``, ``tests``, ...) as links, so a command written for the repository root runs as written and what it
writes stays in the folder. An output is matched line by line: each shown line, spaces collapsed, must equal a
line the block printed (stdout and stderr), in the shown order, other lines may come between, and ``...`` stands
for any text (a line of only ``...`` marks lines left out).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.paths import METRICS, ROOT

DOCS = ROOT / "docs"
RUNNABLE, OUTPUT = "<!-- runnable -->", "<!-- output -->"
#: The repository's entries a runnable block may name by a relative path, as from the repository root.
LINKED = ("praib", "generation", "perturb", "metrics", "examples", "tests", "benchmarks", "datasets")
DOCS_TOOLS = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python",
              "mkdocs_include_markdown_plugin")


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


@dataclass
class Block:
    page: Path
    line: int
    language: str
    code: str
    output: str | None


def runnable_blocks(page: Path) -> list[Block]:
    tokens = [t for t in MarkdownIt("commonmark").parse(page.read_text(encoding="utf-8"))
              if t.type in ("fence", "html_block") or t.level == 0]
    blocks: list[Block] = []
    marker = None
    for token in tokens:
        if token.type == "html_block" and token.content.strip() in (RUNNABLE, OUTPUT):
            marker = token.content.strip()
        elif token.type == "fence" and marker == RUNNABLE:
            blocks.append(Block(page, token.map[0] + 1, token.info.split()[0] if token.info else "", token.content,
                                None))
            marker = None
        elif token.type == "fence" and marker == OUTPUT:
            assert blocks and blocks[-1].output is None, f"{page}: line {token.map[0] + 1}: an output block follows no runnable block"
            blocks[-1].output = token.content
            marker = None
        elif token.type == "fence":
            marker = None
    return blocks


def unmatched_lines(shown: str, printed: str) -> list[str]:
    """The shown lines that the printed text does not hold in the shown order (empty when it holds them all)."""

    def normal(line: str) -> str:
        return " ".join(line.split())

    lines = [normal(line) for line in printed.splitlines()]
    position = 0
    for expected in (normal(line) for line in shown.splitlines()):
        if expected in ("", "..."):
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in expected.split("...")))
        found = next((i for i in range(position, len(lines)) if pattern.fullmatch(lines[i])), None)
        if found is None:
            return [expected]
        position = found + 1
    return []


def test_output_matching_holds_lines_in_order_with_ellipses():
    printed = "loading\nSource   n  TKC\nhuman   26  190 ± 82\nmodel    8  422 ± 54\ndone in 3.2 s\n"
    assert unmatched_lines("Source n TKC\nhuman 26 190 ± 82\n...\n", printed) == []
    assert unmatched_lines("human 26 ...\ndone in ... s\n", printed) == []
    assert unmatched_lines("human 26 190 ± 83\n", printed) == ["human 26 190 ± 83"]
    assert unmatched_lines("model 8 422 ± 54\nhuman 26 190 ± 82\n", printed) == ["human 26 190 ± 82"]
    assert unmatched_lines("human 26\n", printed) == ["human 26"]  # a shown line is a whole line


def test_a_runnable_block_and_its_output_are_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n<!-- runnable -->\n```bash\necho one\n```\n\nIt prints:\n\n<!-- output -->\n```text\n"
                    "one\n```\n\n```bash\nnot runnable\n```\n\n<!-- runnable -->\n```bash\necho two\n```\n")
    assert [(b.line, b.code, b.output) for b in runnable_blocks(page)] == [
        (4, "echo one\n", "one\n"), (20, "echo two\n", None)]


PAGES_WITH_BLOCKS = [page for page in pages() if runnable_blocks(page)]


def test_the_docs_have_runnable_blocks():
    assert PAGES_WITH_BLOCKS, "no page marks a block <!-- runnable -->"


@pytest.mark.parametrize("page", PAGES_WITH_BLOCKS, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_runnable_block_runs_and_prints_what_the_page_shows(page, tmp_path):
    for name in LINKED:
        if (ROOT / name).exists():
            (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "PRAIB_CACHE": str(tmp_path / ".cache" / "praib"), "TQDM_DISABLE": "1",
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    for block in runnable_blocks(page):
        assert block.language in ("bash", "sh", "python"), f"{page}: line {block.line}: runs bash or python"
        command = ["bash", "-e", "-c", block.code] if block.language != "python" else [sys.executable, "-c", block.code]
        done = subprocess.run(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=900)
        where = f"{page.relative_to(ROOT)}: line {block.line}"
        assert done.returncode == 0, f"{where}: exit status {done.returncode}:\n{done.stdout[-3000:]}"
        if block.output is not None:
            missing = unmatched_lines(block.output, done.stdout)
            assert missing == [], f"{where}: the output shown does not match; first line not printed: " \
                                  f"{missing[0]!r}\nprinted:\n{done.stdout[-4000:]}"


def test_every_metric_card_is_a_page_of_the_site():
    cards = sorted(folder.name for folder in METRICS.iterdir() if (folder / "README.md").is_file())
    assert cards
    for name in cards:
        page = DOCS / "metrics" / f"{name}.md"
        assert page.is_file(), f"metrics/{name}/README.md has no page docs/metrics/{name}.md"
        assert f'"../../metrics/{name}/README.md"' in page.read_text(), f"{page} does not include the card"


def test_the_site_builds_strictly(tmp_path):
    missing = [name for name in DOCS_TOOLS if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"the docs tools are not installed ({', '.join(missing)}): pip install -e \".[docs]\"")
    site = tmp_path / "site"
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                           env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, capture_output=True, text=True,
                           timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    html = (site / "metrics" / "readability" / "index.html").read_text(encoding="utf-8")
    assert "Flesch" in html and "tags: [evaluate" not in html  # the card's text, without its YAML header
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert all(f"{name}" in api for name in ("praib.api.evaluate", "praib.records.load_records", "praib.load_prompt"))


#: The README is read in five minutes; the documentation is in docs/.
README_LIMIT = 12 * 1024


def _linked(page: Path) -> set[Path]:
    """The files of the repository that ``page`` links to by a relative Markdown link."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    targets = re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", text)
    return {(page.parent / target).resolve() for target in targets if "://" not in target}


def _nav_pages(entries) -> list[Path]:
    pages = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += _nav_pages(value) if isinstance(value, list) else [(DOCS / value).resolve()]
    return pages


def test_the_readme_is_short_and_every_page_of_the_site_is_reachable_from_it():
    import yaml

    readme = ROOT / "README.md"
    assert len(readme.read_bytes()) <= README_LIMIT
    reachable, todo = set(), [readme.resolve()]
    while todo:
        page = todo.pop()
        for target in _linked(page):
            if target.suffix == ".md" and target.is_file() and target not in reachable:
                reachable.add(target)
                todo.append(target)
    nav = _nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
    assert len(nav) > 20
    assert [str(page.relative_to(ROOT)) for page in nav if page not in reachable] == []


def test_the_readme_keeps_the_two_set_up_commands_of_a_fresh_machine():
    """One command installs praib and runs the demo, the other runs the tests as CI (.ci/run) does."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Set up on a fresh machine\n\n```bash\n", 1)[1].split("```", 1)[0]
    assert block.splitlines() == [
        "python -m venv .venv && . .venv/bin/activate && pip install -e . && praib evaluate --demo --output results.json",
        'pip install -e ".[test]" && python -m pytest -q']
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'pip install --quiet -e ".[test]"' in ci and "python -m pytest -q" in ci
