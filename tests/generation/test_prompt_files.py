"""A user's prompt file that cannot work is one line naming it, from the library and from `praib prompts
show` and `praib generate --prompt`, and a prompt that would send no paper (or no reviews) is refused
before any request."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.generation.prompts import load_prompt
from tests.chat_server import ChatServer

HEADER = "{#\nname: mine\nscale: generic\ninputs: [paper]\noutput: review\n#}\n"
META_HEADER = "{#\nname: my_meta\nscale: generic\ninputs: [paper, reviews]\noutput: meta_review\n#}\n"

# file name -> (content, None for a directory or a missing file, and what the error says)
BAD_PROMPTS = {
    "syntax.jinja": (HEADER + "Review:\n{% if %}\n{{ paper_text }}", "line 8: not a valid Jinja template"),
    "latin1.jinja": (HEADER.encode() + "Critique la th\xe8se:\n{{ paper_text }}".encode("latin-1"),
                     "not UTF-8 text (byte 0xe8 at offset 77)"),
    "folder.jinja": (None, "is a directory, not a prompt template file"),
    "absent.jinja": (None, "prompt template file not found"),
    "badheader.jinja": ("{#\nname: mine\ninputs: [paper\n#}\n{{ paper_text }}",
                        "line 4: the metadata header is not valid YAML"),
    "typo.jinja": ("{#\nname: mine\nouptut: meta_review\n#}\n{{ paper_text }}",
                   "unknown metadata field(s) ouptut in the header"),
    "filter.jinja": (HEADER + "{{ paper_text | shout }}", "line 7: not a valid Jinja template: No filter named 'shout'"),
    "undefined.jinja": (HEADER + "For {{ audience }}:\n{{ paper_text }}", "line 7: prompt 'mine': missing parameter"),
    "empty.jinja": ("", "prompt 'empty' renders no paper text"),
    "nopaper.jinja": (HEADER + "Write a review of a paper on graphs.", "prompt 'mine' renders no paper text"),
    "escape.jinja": (HEADER + "{{ cycler.__init__.__globals__.os.popen('id').read() }}\n{{ paper_text }}",
                     "line 7: unsafe template, refused by Jinja's sandbox"),
    "recursive.jinja": (HEADER + "{% macro f() %}{{ f() }}{% endmacro %}\n{{ f() }}\n{{ paper_text }}",
                        "line 7: calls macros or includes too deeply"),
}


def write(tmp_path, name):
    path = tmp_path / name
    content = BAD_PROMPTS[name][0]
    if name == "folder.jinja":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    return path


def assert_one_line_naming(result, path, expected):
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and str(path) in error[0] and expected in error[0], result.output


@pytest.mark.parametrize("name", sorted(BAD_PROMPTS))
def test_prompts_show_names_the_broken_file(tmp_path, name):
    path = write(tmp_path, name)
    result = CliRunner().invoke(main, ["prompts", "show", str(path), "--venue", "ICLR", "--year", "2025"])
    assert_one_line_naming(result, path, BAD_PROMPTS[name][1])


@pytest.fixture
def server():
    chat = ChatServer()
    yield chat
    chat.close()


@pytest.mark.parametrize("name", sorted(BAD_PROMPTS))
def test_generate_refuses_a_broken_prompt_before_any_request(tmp_path, server, name):
    path = write(tmp_path, name)
    papers = tmp_path / "papers"
    papers.mkdir()
    for pid in ("alpha", "beta"):
        (papers / f"{pid}.md").write_text(f"# Paper {pid}\n\nWe study sparse message passing in {pid}.\n")
    output = tmp_path / "reviews.jsonl"
    result = CliRunner().invoke(main, [
        "generate", "canned-lm", str(papers), "--backend", "openai", "--base-url", server.url, "--prompt", str(path),
        "--venue", "ICLR", "--year", "2025", "--output", str(output), "--cache-dir", str(tmp_path / "cache"),
        "--no-progress"])
    assert_one_line_naming(result, path, BAD_PROMPTS[name][1])
    assert server.bodies == [] and not output.exists()


def test_a_meta_review_prompt_must_render_every_review(tmp_path):
    path = tmp_path / "meta.jinja"
    path.write_text(META_HEADER + "Paper:\n{{ paper_text }}\nFirst review:\n{{ reviews[0] }}\n", encoding="utf-8")
    prompt = load_prompt(path)
    one = prompt.render(paper_text="The paper.", reviews=["Sound but slow."])
    assert one[-1]["content"] == "Paper:\nThe paper.\nFirst review:\nSound but slow.\n"
    with pytest.raises(ValueError, match=rf"^{path}: prompt 'my_meta' renders without 1 of the 2 reviews"):
        prompt.render(paper_text="The paper.", reviews=["Sound but slow.", "Novel; proofs unclear."])

    path.write_text(META_HEADER + "Paper:\n{{ paper_text }}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"renders without 2 of the 2 reviews"):
        load_prompt(path).render(paper_text="The paper.", reviews=["Sound but slow.", "Novel; proofs unclear."])


def test_the_paper_may_be_reshaped_by_whitespace_filters(tmp_path):
    path = tmp_path / "indented.jinja"
    path.write_text(HEADER + "Paper:\n{{ paper_text | indent(4, first=true) }}\n", encoding="utf-8")
    messages = load_prompt(path).render(paper_text="Line one.\n\nLine two.")
    assert messages[-1]["content"] == "Paper:\n    Line one.\n\n    Line two.\n"


@pytest.mark.parametrize("header, expected", [
    ("{#\nname: mine\noutput: meta_review\n#}\n", "a meta_review prompt needs the input reviews"),
    ("{#\nname: mine\ninputs: [reviews]\n#}\n", "a review prompt needs the input paper"),
    ("{#\nname: mine\ninputs: 3\n#}\n", "inputs must be a list"),
    ("{#\nname: mine\nparams: [tone]\n#}\n", "params must map names to 'required' or 'optional'"),
    ("{#\nname: mine\nsystem: sometimes\n#}\n", "system must be true or false"),
])
def test_metadata_of_the_wrong_shape_names_the_file(tmp_path, header, expected):
    path = tmp_path / "mine.jinja"
    path.write_text(header + "{{ paper_text }} {{ reviews | join }}", encoding="utf-8")
    with pytest.raises(ValueError) as error:
        load_prompt(path)
    assert str(path) in str(error.value) and expected in str(error.value)


def test_an_ordinary_leading_comment_is_not_metadata(tmp_path):
    path = tmp_path / "plain.jinja"
    path.write_text("{# Note: adapted from our lab's form, 2024 #}\nReview:\n{{ paper_text }}\n", encoding="utf-8")
    prompt = load_prompt(path)
    assert (prompt.spec.name, prompt.spec.inputs, prompt.spec.output) == ("plain", ("paper",), "review")
