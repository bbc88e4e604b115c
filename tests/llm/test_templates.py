import re

import jinja2
import pytest

from praib.templates import TemplateSet


@pytest.fixture
def builtin(tmp_path):
    folder = tmp_path / "builtin"
    folder.mkdir()
    (folder / "greet.jinja").write_text("Hello {{ name }}.\n")
    (folder / "_sign.jinja").write_text("-- the built-in block")
    (folder / "farewell.jinja").write_text("Bye.")
    return TemplateSet("test", folder, keep_trailing_newline=True)


def test_a_name_is_the_builtin_file_and_a_path_is_the_users_file(builtin, tmp_path):
    assert builtin.render("greet", name="Ada") == "Hello Ada.\n"
    own = tmp_path / "mine.jinja"
    own.write_text("Hi {{ name }}! {% include '_sign.jinja' %}")
    assert builtin.render(own, name="Ada") == "Hi Ada! -- the built-in block"
    assert builtin.render(str(own), name="Ada") == "Hi Ada! -- the built-in block"


def test_a_folder_of_overrides_replaces_only_the_names_it_has(builtin, tmp_path):
    overrides = tmp_path / "overrides"
    overrides.mkdir()
    (overrides / "greet.jinja").write_text("Yo {{ name }}")
    assert builtin.path("greet", overrides) == overrides / "greet.jinja"
    assert builtin.path("farewell", overrides) == builtin.directory / "farewell.jinja"


def test_an_unknown_name_is_one_line_naming_the_file_and_the_builtin_names(builtin):
    with pytest.raises(ValueError) as error:
        builtin.path("nope")
    message = str(error.value)
    assert "\n" not in message
    assert message == (f"no test template 'nope' ({builtin.directory / 'nope.jinja'} does not exist); "
                       "built-in: _sign, farewell, greet")


def test_a_missing_variable_names_the_file(builtin):
    with pytest.raises(ValueError, match=r"^test template greet.jinja: 'name' is undefined$"):
        builtin.render("greet")


def test_each_file_is_compiled_once(builtin):
    assert builtin.template("greet") is builtin.template("greet")


# --- the sandbox and a user's broken files --------------------------------------------------------

def escape_payload(marker):
    """A template that, rendered outside a sandbox, runs a shell command creating ``marker``."""
    return "Hi {{ cycler.__init__.__globals__.os.popen('touch " + str(marker) + "').read() }}"


def test_a_template_cannot_reach_python_internals(builtin, tmp_path):
    marker = tmp_path / "escaped"
    own = tmp_path / "evil.jinja"
    own.write_text(escape_payload(marker))
    # the payload is live: an ordinary Jinja environment runs the command
    unsafe = tmp_path / "unsafe"
    jinja2.Environment().from_string(escape_payload(unsafe)).render()
    assert unsafe.exists()

    with pytest.raises(ValueError) as error:
        builtin.render(own, name="Ada")
    message = str(error.value)
    assert not marker.exists()
    assert "\n" not in message and message.startswith(f"{own}: line 1: unsafe template")


def test_a_template_cannot_change_what_it_is_given(builtin, tmp_path):
    own = tmp_path / "append.jinja"
    own.write_text("{{ names.append('Eve') }}")
    names = ["Ada"]
    with pytest.raises(ValueError, match=r"append.jinja: line 1: unsafe template"):
        builtin.render(own, names=names)
    assert names == ["Ada"]


@pytest.mark.parametrize("content, expected", [
    (b"Hi\n{% if %}\n", r"broken.jinja: line 2: not a valid Jinja template: Expected an expression"),
    (b"Hi\n\n{{ name | shout }}", r"broken.jinja: line 3: not a valid Jinja template: No filter named 'shout'"),
    (b"\xff\xfeHi", r"broken.jinja: not UTF-8 text \(byte 0xff at offset 0\)"),
    (b"Hi\n{{ 1 / 0 }}", r"broken.jinja: line 2: ZeroDivisionError: division by zero"),
    (b"Hi {% include 'nowhere.jinja' %}", r"broken.jinja: line 1: includes or imports 'nowhere.jinja'"),
])
def test_a_broken_user_template_is_one_line_naming_file_and_line(builtin, tmp_path, content, expected):
    own = tmp_path / "broken.jinja"
    own.write_bytes(content)
    with pytest.raises(ValueError) as error:
        builtin.render(own, name="Ada")
    message = str(error.value)
    assert "\n" not in message and message.startswith(str(tmp_path))
    assert re.search(expected, message), message


def test_a_directory_is_not_a_template(builtin, tmp_path):
    folder = tmp_path / "folder.jinja"
    folder.mkdir()
    with pytest.raises(ValueError, match=rf"^{re.escape(str(folder))}: is a directory, not a test template file$"):
        builtin.render(folder)
    overrides = tmp_path / "overrides"
    (overrides / "greet.jinja").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"overrides/greet.jinja: is a directory"):
        builtin.path("greet", overrides)
