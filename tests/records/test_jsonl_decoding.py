"""JSONL lines decoded by msgspec give what the json module gives (issue 32): msgspec decodes a group of lines only
where the json module reads every one of them, to the same values (types, float bits, key order); whatever msgspec
refuses or is not given is read by the json module, with today's values and errors."""

from __future__ import annotations

import json
import logging
import random
import struct
from pathlib import Path

import msgspec
import pytest

from praib.records import io as records_io
from praib.records.io import _RECORDS, _json_module_batch, jsonl_batch, jsonl_values
from praib.records.stream import iter_record_batches
from tests.bad_records import REVIEW, record_cases

GOOD = json.dumps(REVIEW).encode()


def _refuse(name):
    raise ValueError(name)


def json_module(line: bytes):
    """The value the json module reads from a line, as the reader calls it (NaN and Infinity refused)."""
    return json.loads(line.decode("utf-8"), parse_constant=_refuse)


def same(a, b) -> bool:
    """Equal values of equal types, floats to the bit (-0.0 is not 0.0), dicts in the same key order (walked with
    a stack of its own: the values nest as deep as the recursion limit)."""
    pairs = [(a, b)]
    while pairs:
        a, b = pairs.pop()
        if type(a) is not type(b):
            return False
        if isinstance(a, float):
            if struct.pack("<d", a) != struct.pack("<d", b):
                return False
        elif isinstance(a, dict):
            if list(a) != list(b):
                return False
            pairs += [(a[key], b[key]) for key in a]
        elif isinstance(a, list):
            if len(a) != len(b):
                return False
            pairs += zip(a, b)
        elif a != b:
            return False
    return True


def in_review(value: bytes) -> bytes:
    return b'{"review_id": "r1", "paper_id": "p1", "source": "human", "text": "A review.", "extra": ' + value + b"}"


NESTED = {depth: b"[" * depth + b"1" + b"]" * depth for depth in (7, 8, 9, 50, 900, 995, 996, 997, 998, 1200)}
# (line without its newline, whether msgspec decodes it: None where it may go either way)
LINES = {
    "escapes": (in_review(rb'"a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\u0000"'), True),
    "surrogate pair escape": (in_review(rb'"\ud83d\ude00 \uD83D\uDE00"'), True),
    "non-BMP and accents as UTF-8": (in_review('"😀 é ü 中 \u2028 \x7f"'.encode()), True),
    "escaped key": (b'{"\\u0061": 1, "b\\u00e9": 2}', True),
    "lone high surrogate": (in_review(rb'"\ud800"'), False),
    "lone low surrogate": (in_review(rb'"x\udc00"'), False),
    "high then not low": (in_review(rb'"\ud800\u0041"'), False),
    "two high surrogates": (in_review(rb'"\ud800\ud800"'), False),
    "2**63": (in_review(str(2**63).encode()), True),
    "-2**63 - 1": (in_review(str(-2**63 - 1).encode()), True),
    "2**64": (in_review(str(2**64).encode()), True),
    "10**100": (in_review(str(10**100).encode()), True),
    "-10**300": (in_review(str(-10**300).encode()), True),
    "4300 digits": (in_review(b"9" * 4300), True),
    "4301 digits (over Python's limit)": (in_review(b"9" * 4301), False),
    "-0": (in_review(b"-0"), True),
    "-0.0": (in_review(b"-0.0"), True),
    "-0e0": (in_review(b"-0e0"), True),
    "exponents": (b'{"a": [1E5, 1e+5, 1e-5, 1e0, 1E-0, 1.5e0010, 2e-0300]}', True),
    "digits of 0.1's double": (in_review(b"0.1000000000000000055511151231257827021181583404541015625"), True),
    "just above the least normal": (in_review(b"[2.2250738585072011e-308, 2.2250738585072014e-308]"), True),
    "subnormals": (in_review(b"[4.9e-324, 5e-324, 2.4703282292062328e-324, 2.4703282292062327e-324]"), True),
    "largest doubles": (in_review(b"[1.7976931348623157e308, 1.7976931348623158e308]"), True),
    "2**53 + 1": (in_review(b"[9007199254740993, 9007199254740993.0, 9007199254740993e0]"), True),
    "many digits": (in_review(b"123456789012345678901234567890123456789e-20"), True),
    "400 zeros then 1": (in_review(b"0." + b"0" * 400 + b"1"), True),
    "underflow to 0": (in_review(b"[1e-400, -1e-400]"), True),
    "overflow": (in_review(b"1e400"), False),
    "negative overflow": (in_review(b"-1.8e308"), False),
    "huge exponent digits": (in_review(b"1e0000000000000000000001"), True),
    "NaN": (in_review(b"NaN"), False),
    "Infinity": (in_review(b"-Infinity"), False),
    **{f"nested {depth}": (in_review(value), depth <= 8) for depth, value in NESTED.items()},
    "nested objects 8": (b'{"a": ' + b'{"b": ' * 8 + b"1" + b"}" * 8 + b"}", True),
    "nested objects 9": (b'{"a": ' + b'{"b": ' * 9 + b"1" + b"}" * 9 + b"}", False),
    "duplicate keys": (b'{"a": 1, "b": 2, "a": [3], "c": 4, "b": 5}', True),
    "form feed inside": (b'{"a":\x0c1}', False),
    "no-break space inside": (b'{"a":\xc2\xa0 1}', False),
    "form feed after": (GOOD + b"\x0c", False),
    "no-break space after": (GOOD + b"\xc2\xa0", False),
    "JSON whitespace after": (GOOD + b" \t\r", None),
    "JSON whitespace inside": (b'{ "a" :\t1 ,\r"b":[ 1 , 2 ] }', True),
    "space before": (b" " + GOOD, False),
    "tab before": (b"\t" + GOOD, False),
    "form feed before": (b"\x0c" + GOOD, False),
    "blank": (b"", False),
    "whitespace only": (b" \t", False),
    "BOM": (b"\xef\xbb\xbf" + GOOD, False),
    "not UTF-8": (b'{"a": "\xff"}', False),
    "overlong UTF-8": (b'{"a": "\xc0\x80"}', False),
    "a surrogate in UTF-8": (b'{"a": "\xed\xa0\x80"}', False),
    "beyond U+10FFFF": (b'{"a": "\xf4\x90\x80\x80"}', False),
    "cut-off UTF-8": (b'{"a": "\xe2\x82"}', False),
    "control character in a string": (b'{"a": "x\x01y"}', False),
    "tab in a string": (b'{"a": "x\ty"}', False),
    "cut off": (b'{"a": 1, "b": "abc', False),
    "two values": (GOOD + GOOD, False),
    "two values with a space": (GOOD + b" " + GOOD, False),
    "an array": (b"[1, 2]", False),
    "a string": (b'"text"', False),
    "a number": (b"1", False),
    "null": (b"null", False),
    "empty object": (b"{}", True),
    "trailing comma": (b'{"a": 1,}', False),
}
NAMES = list(LINES)


@pytest.mark.parametrize("name", NAMES)
def test_msgspec_decodes_a_line_only_as_the_json_module_does(name):
    line = LINES[name][0]
    try:
        decoded = _RECORDS.decode(line)
    except (msgspec.DecodeError, ValueError, RecursionError):
        return
    assert same(decoded, json_module(line))


def groups(line: bytes) -> list[list[bytes]]:
    """The line alone, last without a newline, and among good lines, first and in the middle."""
    return [[line + b"\n"], [line], [GOOD + b"\n", line], [line + b"\n", GOOD + b"\n", GOOD],
            [GOOD + b"\n", line + b"\n", GOOD + b"\n"]]


@pytest.mark.parametrize("name", NAMES)
def test_a_group_decodes_as_the_json_module_reads_it(name, monkeypatch):
    line, fast = LINES[name]
    for group in groups(line):
        values, by_json = jsonl_batch(group), _json_module_batch(group)
        assert (values is None) == (by_json is None)
        if values is not None:
            assert same(values, by_json)
            assert same(values, [json_module(raw) for raw in group])
            assert same(values, [value for _, value in jsonl_values(Path("f.jsonl"), group)])
    if fast is not None:  # msgspec decodes the lines it should, and leaves the others to the json module
        asked = []
        monkeypatch.setattr(records_io, "_json_module_batch", lambda lines: asked.append(lines))
        jsonl_batch([GOOD + b"\n", line + b"\n", GOOD])
        assert not asked if fast else asked


def test_lines_that_are_values_only_together_are_not_decoded_together():
    # Each line opens an object and the values are as many as the lines, but the first two lines hold one value
    # and the third two: the json module reads none of the first two, so neither does jsonl_batch.
    group = [b'{"a": {"b": 1}\n', b'}\n', b'{"c": 1}{"d": 2}\n']
    assert len(_RECORDS.decode_lines(b"".join(group))) == len(group)
    assert jsonl_batch(group) is None
    # A "}" at the end of a line inside a string would need a newline in the string, which JSON has not.
    assert jsonl_batch([b'{"a": "}\n', b'{"b": "}\n']) is None


def test_nesting_at_the_recursion_limit_decodes_as_the_json_module_reads_it(monkeypatch):
    # The json module gives up a level sooner than msgspec would: the type msgspec decodes to nests far less deep.
    def decoded(depth: int, refusing: bool):
        with monkeypatch.context() as patch:
            if refusing:
                patch.setattr(records_io, "_RECORDS", _Refusing())
            return jsonl_batch([in_review(b"[" * depth + b"1" + b"]" * depth)])

    deepest = max(depth for depth in range(1, 1100) if decoded(depth, True) is not None)
    assert deepest > 800
    for depth in range(deepest - 3, deepest + 4):
        assert (decoded(depth, False) is None) == (decoded(depth, True) is None)


def read(path, caplog) -> tuple:
    """What the reader gives for ``path``: its rows (repr: types and float digits show), or its error; the warnings."""
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        try:
            result = repr([row for batch in iter_record_batches(path, "review", batch_rows=3) for row in batch.rows])
        except Exception as error:  # noqa: BLE001 - whatever it is, both paths must raise it alike
            result = f"{type(error).__name__}: {error}"
    return result, [record.getMessage() for record in caplog.records]


class _Refusing:
    def decode_lines(self, data):
        raise ValueError("msgspec left out")


def records_in_fields(line: bytes) -> list[bytes]:
    """The line, and its value as the text, the rating and an unknown field of a review where it is one."""
    texts = [line]
    if line.startswith(b"{") and b"extra" in line:
        value = line[line.index(b'"extra": ') + 9:-1]
        texts += [in_review(value).replace(b'"text": "A review."', b'"text": ' + value),
                  in_review(value).replace(b'"source": "human"', b'"source": "human", "rating": ' + value)]
    return texts


CASES = {**{f"{name} | {i}": text for name in NAMES for i, text in enumerate(records_in_fields(LINES[name][0]))},
         **{f"bad-input matrix | {case}": content for case, content in record_cases("review").items()
            if isinstance(content, bytes)}}


@pytest.mark.parametrize("case", list(CASES))
def test_the_reader_gives_what_it_gave_with_the_json_module_alone(tmp_path, caplog, monkeypatch, case):
    content = CASES[case]
    if not case.startswith("bad-input matrix"):
        content = b"".join(raw + b"\n" for raw in (GOOD.replace(b'"r1"', b'"r0"'), content,
                                                   GOOD.replace(b'"r1"', b'"r2"'), GOOD.replace(b'"r1"', b'"r3"')))
    for cut in (content, content.rstrip(b"\n")):  # the last line with and without its newline
        path = tmp_path / "reviews.jsonl"
        path.write_bytes(cut)
        now = read(path, caplog)
        with monkeypatch.context() as patch:
            patch.setattr(records_io, "_RECORDS", _Refusing())
            assert read(path, caplog) == now


def random_number_texts(count: int, seed: int = 0):
    """(sign, whole digits, fraction digits or None, exponent or None) of ``count`` JSON-like number texts: up to 40
    digits before and after the point, exponents of up to 4 digits, many of them beyond a double's range."""
    rng = random.Random(seed)

    def digits(most: int) -> str:
        return "".join(rng.choices("0123456789", k=rng.randint(1, most)))

    for _ in range(count):
        exponent = rng.choice("eE") + rng.choice(["", "+", "-"]) + digits(4) if rng.random() < 0.5 else None
        yield rng.choice(["", "-"]), digits(40), digits(40) if rng.random() < 0.5 else None, exponent


def test_float_text_decodes_as_float_reads_it():
    beyond = 0
    for sign, whole, fraction, exponent in random_number_texts(3000):
        whole = whole.lstrip("0") or "0"  # JSON has no leading zeros
        text = sign + whole + ("." + fraction if fraction is not None else "") + (exponent or "")
        try:
            decoded = _RECORDS.decode(f'{{"x": {text}}}'.encode())["x"]
        except msgspec.DecodeError:
            # an int is always read; a float only within a double's range
            assert (fraction is not None or exponent) and abs(float(text)) == float("inf"), text
            beyond += 1
            continue
        assert same(decoded, json_module(text.encode())), text
        if fraction is not None or exponent:
            assert same(decoded, float(text)), text
    assert 100 < beyond < 1500  # (both kinds of text were drawn)


def test_random_doubles_repr_decodes_to_the_same_double():
    rng = random.Random(0)
    doubles = [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(20000)]
    doubles = [d for d in doubles if d == d and abs(d) != float("inf")]
    doubles += [rng.uniform(-1e6, 1e6) for _ in range(5000)] + [5e-324, -5e-324, 2.2250738585072014e-308]
    texts = [repr(d) for d in doubles] + [f"{d:.17e}" for d in doubles[:5000]] + [f"{d:.25g}" for d in doubles[:5000]]
    decoded = _RECORDS.decode(('{"x": [' + ", ".join(texts) + "]}").encode())["x"]
    # JSON reads the digits alone (25 significant digits of a large double) as an int, as Python's json does
    assert same(decoded, [float(text) if "." in text or "e" in text else int(text) for text in texts])
    assert same(decoded, [json_module(text.encode()) for text in texts])
    assert sum(type(value) is float for value in decoded) > 30000
