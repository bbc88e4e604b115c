import re
import resource

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

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


# --- limits: time and size (issue 26, item 6) ----------------------------------------------------

NESTED_LOOPS = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"


@pytest.mark.parametrize("text", [
    NESTED_LOOPS,
    '{% set s = "x" * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}',
    "{% for i in range(100000) recursive %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{% macro spin() %}" + NESTED_LOOPS + "{% endmacro %}Hi {{ spin() }}",
    "Hi {% include 'spin.jinja' %}",
], ids=["nested range loops", "nested loops over a string", "recursive loop", "in a macro", "in an included file"])
def test_a_template_that_never_ends_stops_at_the_time_limit(builtin, tmp_path, monkeypatch, text):
    """Each of these runs for hours unchecked (10^10 loop steps that write nothing)."""
    monkeypatch.setenv("PRAIB_TEMPLATE_TIMEOUT", "0.5")
    (tmp_path / "spin.jinja").write_text(NESTED_LOOPS)
    own = tmp_path / "endless.jinja"
    own.write_text(text)
    with pytest.raises(ValueError) as error:
        builtin.render(own)
    message = str(error.value)
    assert "\n" not in message
    assert re.match(rf"{re.escape(str(tmp_path))}/(endless|spin).jinja: line 1: still rendering after 0.5 s, "
                    r"the time limit of a template \(a loop without end\? PRAIB_TEMPLATE_TIMEOUT sets the limit\)$",
                    message), message


S = '{% set s = "x" * 1000000 %}'   # one million characters: allowed


@pytest.mark.parametrize("text, size", [
    ('{{ "x" * 3000000000 }}', 3_000_000_000),
    ('{{ 3000000000 * "x" }}', 3_000_000_000),
    ('{{ ["x"] * 3000000000 }}', 6_000_000_000),                    # the list's items and their characters
    (S + "{{ [s] * 100 }}", 100 * 1_000_001),                        # a short list of one long string
    (S + "{{ [s, s, s, s, s, s, s, s, s, s, s]|join }}", None),
    ('{{ ("," * 1000000).join(range(100)|map("string")|list) }}', None),
    ('{{ "%3000000000d" % 1 }}', None),
    ('{{ "%*d" % (3000000000, 1) }}', None),
    ('{{ "%3000000000d"|format(1) }}', None),
    ('{{ "{:3000000000}".format(1) }}', None),
    ('{{ "{:{}}".format(1, 3000000000) }}', None),
    ('{{ "x"|center(3000000000) }}', 3_000_000_000),
    ('{{ "x".ljust(3000000000) }}', 3_000_000_000),
    ('{{ lipsum(3000000000) }}', 3_000_000_000),
    ("{{ 9 ** (9 ** 9) }}", None),                                   # a number of 370 million digits
    ('{% set ns = namespace(s="x") %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}', None),
    ('{% macro m(t, n) %}{{ m(t ~ t, n - 1) if n else t }}{% endmacro %}{{ m("x", 60) }}', None),
    (S + "{% for i in range(100000) %}{{ s }}{% endfor %}", None),  # what it writes
    (S + "{% set t %}{% for i in range(100) %}{{ s }}{% endfor %}{% endset %}{{ t|length }}", None),
    ('{{ ("a" * 1000000)|replace("a", "b" * 1000) }}', 1_000_000_000),
    ('{{ ("a\n" * 1000000)|indent("x" * 1000000) }}', None),
    (S + "{% for b in [1]|batch(1000000, s) %}{{ b }}{% endfor %}", None),
])
def test_a_template_cannot_make_a_text_over_the_size_limit(builtin, tmp_path, text, size):
    """Each of these builds gigabytes unchecked; here it is refused before (or, for what only
    grows step by step, just after) passing the limit: 10,000,000 characters or items."""
    own = tmp_path / "huge.jinja"
    own.write_text(text)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ValueError) as error:
        builtin.render(own)
    message = str(error.value)
    assert "\n" not in message
    assert re.match(rf"{re.escape(str(own))}(: line \d)?: would make a (value|text) of [\d,]+ characters or items, "
                    r"over the limit of 10,000,000 for a template \(PRAIB_TEMPLATE_MAX_CHARS sets it\)$", message), message
    if size is not None:
        assert f"of {size:,} characters" in message
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 500_000   # KiB: nothing near a gigabyte


def test_the_limits_are_set_by_environment_variables(builtin, tmp_path, monkeypatch):
    own = tmp_path / "repeat.jinja"
    own.write_text('{{ "ab" * n }}')
    assert builtin.render(own, n=2_000_000) == "ab" * 2_000_000
    monkeypatch.setenv("PRAIB_TEMPLATE_MAX_CHARS", "100")
    assert builtin.render(own, n=50) == "ab" * 50
    with pytest.raises(ValueError, match=r"would make a value of 102 characters or items, over the limit of 100 "):
        builtin.render(own, n=51)
    monkeypatch.setenv("PRAIB_TEMPLATE_MAX_CHARS", "lots")
    with pytest.raises(ValueError, match=r"^.*repeat.jinja: PRAIB_TEMPLATE_MAX_CHARS='lots' is not a whole number "
                                         r"of characters above 0$"):
        builtin.render(own, n=1)
    monkeypatch.delenv("PRAIB_TEMPLATE_MAX_CHARS")
    monkeypatch.setenv("PRAIB_TEMPLATE_TIMEOUT", "0")
    with pytest.raises(ValueError, match=r"PRAIB_TEMPLATE_TIMEOUT='0' is not a number of seconds above 0$"):
        builtin.render(own, n=1)


@pytest.mark.parametrize("text", [
    "{% for x in items %}{{ loop.index }}/{{ loop.length }}{{ ',' if not loop.last }}{% else %}none{% endfor %}",
    "{% for x in items if x > 1 %}{{ loop.revindex }}{{ x }}{% endfor %}",
    "{% for x in [items, [7, [8]]] recursive %}[{% if x is iterable %}{{ loop(x) }}{% else %}{{ x }}{% endif %}]"
    "{% endfor %}",
    "{% for k, v in {'a': 1, 'b': 2}|dictsort %}{{ k ~ '=' ~ v }} {% endfor %}{{ 'x' ~ 1 ~ none }}",
    "{% macro m(x) %}<{{ x }}>{% endmacro %}{% set t %}{{ m(1) }}{{ m('&') }}{% endset %}{{ t }}{{ '%05.1f' % 3.14159 }}"
    "{{ '{:>6}'.format('r') }}{{ 'a' * 3 }}{{ 2 ** 10 }}{{ [1] + [2] }}{{ items|join(', ') }}{{ 'ab'|center(6) }}",
    "{% for x in items %}{% for y in items %}{{ x * y }}{% endfor %}{% endfor %}",
])
@pytest.mark.parametrize("autoescape", [False, True])
def test_the_limits_change_nothing_a_template_renders(tmp_path, text, autoescape):
    """The same output as Jinja's own sandbox, with and without autoescaping."""
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "t.jinja").write_text(text)
    limited = TemplateSet("test", folder, autoescape=autoescape)
    plain = ImmutableSandboxedEnvironment(loader=jinja2.FileSystemLoader(str(folder)), autoescape=autoescape)
    items = [1, 2, 3]
    assert limited.render("t", items=items) == plain.get_template("t.jinja").render(items=items)
    assert limited.render("t", items=[]) == plain.get_template("t.jinja").render(items=[])
