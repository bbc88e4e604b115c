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
