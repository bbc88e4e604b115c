"""Checking and writing records, and reading the files they are stored in.

Every record set is a :class:`datasets.Dataset` with one of the explicit
``*_FEATURES`` schemas of :mod:`praib.records.schema`. :func:`coerce_record` validates one raw
record and fails with a :class:`RecordError` that names the file, the line or row, and the field;
:mod:`praib.records.stream` reads whole sources with it (:func:`~praib.records.stream.load_records`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import re
import sys
from collections import Counter
import dataclasses
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Union

import datasets
import msgspec
import pyarrow as pa
import yaml
from datasets import Dataset, List, Value

from praib.records.atomic import replace_atomically, replace_folder
from praib.records.ids import canonical_id, record_id
from praib.records.schema import (IDENTITY_FIELDS, REVIEW_SECTIONS, SCHEMAS, RecordError,
                                  perturbation_kind)
from praib.scales import subscore_names

if TYPE_CHECKING:
    import pyarrow.parquet as pq

# A number given as text: the number alone, or followed by a label (OpenReview's "6: marginally above the
# acceptance threshold", "3 good", "4 (Borderline Accept)", "7 - accept"); the label is not read.
_TEXT_INT = re.compile(r"\s*([+-]?\d+(?:\.0+)?)\s*(?P<label>(?:[:(]|-\s|(?<=\s)[^\W\d_]).*)?", re.S)
# A score out of some total ("7/10", "7 out of 10", "7 of 10"): on a scale the record does not name.
_FRACTION = re.compile(r"\s*[+-]?\d+(?:\.\d+)?\s*(?:/|out\s+of\b|of\b)\s*\d", re.I)
_INT_BITS = {"int32": 32, "int64": 64}


def _in_range(number: int, dtype: str, where: str, field: str) -> int:
    bound = 2 ** (_INT_BITS[dtype] - 1)
    if not -bound <= number < bound:
        digits = str(number)
        found = digits if len(digits) <= 30 else f"{digits[:20]}... ({len(digits.lstrip('-'))} digits)"
        raise RecordError(where, field, f"expected an integer from {-bound} to {bound - 1} ({dtype}), found {found}")
    return number


@dataclasses.dataclass
class ReadNotes:
    """What a reader let pass, to be said once at the end of an input: the fields the schema does not know,
    and the numbers given as text with a label after them, read as the number (``"8: accept"`` as 8)."""

    unknown_fields: set[str] = dataclasses.field(default_factory=set)
    numbers_from_text: int = 0
    example: str | None = None
    #: OpenReview notes of a review input that are no review, by what they are (``official comment``, ...).
    left_out_notes: Counter = dataclasses.field(default_factory=Counter)

    def add(self, other: "ReadNotes") -> "ReadNotes":
        """These notes with ``other``'s (of other records of the same input) added."""
        self.unknown_fields |= other.unknown_fields
        self.left_out_notes.update(other.left_out_notes)
        self.numbers_from_text += other.numbers_from_text
        self.example = min(filter(None, (self.example, other.example)), default=None)  # whatever the merge order
        return self

    def warnings(self, label: str, kind: str) -> list[str]:
        """One line per note, naming the input ``label``."""
        lines = []
        if self.unknown_fields:
            lines.append(f"{label}: ignored fields not in the {kind} schema: {', '.join(sorted(self.unknown_fields))}")
        if self.numbers_from_text:
            lines.append(f"{label}: read {self.numbers_from_text} score(s) given as text by their leading number, "
                         f"e.g. {self.example} (the label after the number is not checked)")
        if self.left_out_notes:
            count = sum(self.left_out_notes.values())
            lines.append(f"{label}: left out {count} OpenReview note(s) that are no review ("
                         + ", ".join(f"{what} {n}" for what, n in sorted(self.left_out_notes.items())) + ")")
        return lines


def _as_int(value: Any, where: str, field: str, dtype: str = "int64", notes: ReadNotes | None = None) -> int | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool):
        raise RecordError(where, field, f"expected an integer, got {value!r}")
    if isinstance(value, int):
        return _in_range(value, dtype, where, field)
    if isinstance(value, float):
        if value.is_integer():
            return _in_range(int(value), dtype, where, field)
        raise RecordError(where, field, f"{value!r} is not a whole number; scales are integer-valued")
    if isinstance(value, str):
        if not value.strip():
            return None
        if _FRACTION.match(value):
            raise RecordError(where, field, f"{value!r:.60} is a score out of another total: give the value on the "
                                            "venue's scale itself (praib does not convert between scales)")
        # OpenReview stores scored fields as "6: marginally above the acceptance threshold".
        match = _TEXT_INT.fullmatch(value)
        if match:
            number = _in_range(int(float(match.group(1))), dtype, where, field)
            if match["label"] and notes is not None:
                notes.numbers_from_text += 1
                notes.example = notes.example or f"{field} {value!r:.60} as {number}"
            return number
    raise RecordError(where, field, f"expected an integer, got {value!r:.60}")


def _as_str(value: Any, where: str, field: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and math.isnan(value):
            return None
        return str(value)
    raise RecordError(where, field, f"expected text, got {type(value).__name__} {value!r:.60}")


def _as_bool(value: Any, where: str, field: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise RecordError(where, field, f"expected true or false, got {value!r}")


def _as_float(value: Any, where: str, field: str) -> float | None:
    if value is None or isinstance(value, bool):
        if isinstance(value, bool):
            raise RecordError(where, field, f"expected a number, got {value!r}")
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise RecordError(where, field, f"expected a number, got {value!r:.60}") from None


def _as_value(value: Any, feature: Value, where: str, field: str, notes: ReadNotes | None = None) -> Any:
    if feature.dtype in _INT_BITS:
        return _as_int(value, where, field, feature.dtype, notes)
    if feature.dtype.startswith("float"):
        return _as_float(value, where, field)
    if feature.dtype == "bool":
        return _as_bool(value, where, field)
    return _as_str(value, where, field)


def _as_struct(value: Any, fields: dict, where: str, field: str) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RecordError(where, field, f"expected a mapping, got {value!r:.60}")
    unknown = set(value) - set(fields)
    if unknown:
        raise RecordError(where, field, f"unknown keys {', '.join(sorted(unknown))}; allowed: {', '.join(fields)}")
    return {name: _as_value(value.get(name), sub, where, f"{field}.{name}") for name, sub in fields.items()}


def _as_subscores(value: Any, where: str, notes: ReadNotes | None) -> list[dict]:
    if value is None:
        return []
    if isinstance(value, dict):
        if set(value) == {"name", "value"} and isinstance(value["name"], list):  # Arrow's column-wise form
            value = [{"name": n, "value": v} for n, v in zip(value["name"], value["value"])]
        else:
            value = [{"name": k, "value": v} for k, v in value.items()]
    if not isinstance(value, list):
        raise RecordError(where, "subscores", f"expected a mapping of name to score, got {value!r:.60}")
    out = []
    for item in value:
        if not isinstance(item, dict) or "name" not in item:
            raise RecordError(where, "subscores", f"each sub-score needs a name and a value, got {item!r:.60}")
        score = _as_int(item.get("value"), where, f"subscores.{item['name']}", "int32", notes)
        if score is not None:
            out.append({"name": str(item["name"]), "value": score})
    return out


def _review_id(row: dict) -> str:
    return record_id([row.get(k) for k in ("paper_id", "source", "model", "prompt", "reviewer_id", "text",
                                           *REVIEW_SECTIONS)] + [perturbation_kind(row)])


def coerce_record(raw: Any, kind: str, where: str, notes: ReadNotes | None = None) -> dict:
    """Validate one raw record against the schema of ``kind`` and return it in
    canonical form (every schema field present, values of the schema's types).

    Accepts the forms found in the wild: numeric strings and OpenReview's
    "6: label" for scores (read as the number, and counted in ``notes``), sub-scores as a mapping or as
    top-level keys (``"soundness": 3``). A score out of another total ("7/10") is refused. Ids and the
    fields that group records (:data:`~praib.records.schema.IDENTITY_FIELDS`) are put in Unicode NFC, and
    one holding a character a reader cannot see is refused (:func:`~praib.records.ids.canonical_id`).
    Unknown keys are collected in ``notes``.
    """
    features, required, id_field = SCHEMAS[kind]
    if not isinstance(raw, dict):
        raise RecordError(where, None, f"expected a JSON object, got {type(raw).__name__}")
    row: dict[str, Any] = {}
    known_subscores = subscore_names() if "subscores" in features else set()
    folded = []
    for key, value in raw.items():
        if key in features:
            continue
        if key in known_subscores:
            folded.append({"name": key, "value": value})
        elif notes is not None:
            notes.unknown_fields.add(key)
    for name, feature in features.items():
        value = raw.get(name)
        if name == "subscores":
            row[name] = _as_subscores(value, where, notes) + _as_subscores(folded, where, notes)
        elif isinstance(feature, List):
            if value is None:
                row[name] = []
            elif isinstance(value, list):
                row[name] = [_as_str(v, where, name) for v in value]
            else:
                raise RecordError(where, name, f"expected a list, got {value!r:.60}")
        elif isinstance(feature, dict):
            row[name] = _as_struct(value, feature, where, name)
        elif value is None or (type(value) is str and feature.dtype == "string"):
            row[name] = value  # what _as_value gives them, without its dispatch: most values of a record
        else:
            row[name] = _as_value(value, feature, where, name, notes)
    for name in required:
        if row[name] is None or row[name] == "":
            hint = ("; name whose reviews they are with --source NAME (source_name= in Python)"
                    if name == "source" else "")
            raise RecordError(where, name, "is required and missing" + hint)
    if kind in ("review", "meta_review"):
        row["source"] = row["source"].strip()
    for name in IDENTITY_FIELDS:
        if row.get(name) is not None:
            try:
                row[name] = canonical_id(row[name])
            except ValueError as err:
                raise RecordError(where, name, str(err)) from None
    if kind in ("review", "meta_review"):
        if kind == "review" and row["text"] is None:
            # A record that only carries sections gets its full text from them, so that
            # text metrics see it; ratings-only records keep text None and are skipped.
            sections = [row[s] for s in REVIEW_SECTIONS if row[s]]
            row["text"] = "\n\n".join(sections) if sections else None
    if row[id_field] is None:
        row[id_field] = _review_id(row) if kind == "review" else record_id(row)
    return row


def _not_utf8(path: Path, data: bytes, err: UnicodeDecodeError, line: int, line_offset: int = 0) -> RecordError:
    return RecordError(f"{path}: line {line}", None, f"not UTF-8: byte 0x{data[err.start]:02x} at byte offset "
                                                   f"{line_offset + err.start} of the file")


def _readable_file(path: Path) -> None:
    if path.is_dir():
        raise RecordError(str(path), None, "is a directory, expected a file")
    if not path.exists():
        raise RecordError(str(path), None, "no such file")


def read_csv_rows(path: Path) -> tuple[list[str], list[tuple[int, dict]]]:
    """The header and the (first line, row) of every record of a comma-separated UTF-8 file. CSV that
    does not parse (an unclosed quote, a field over the csv module's limit, a row with more or fewer
    fields than the header) is a :class:`RecordError` naming the line where the record starts."""
    text = read_text(path)
    nul = text.find("\0")
    if nul >= 0:
        raise RecordError(f"{path}: line {text.count(chr(10), 0, nul) + 1}", None,
                          "a NUL byte (0x00), which CSV text does not hold (a binary or damaged file?)")
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    rows, last = [], 0
    try:
        header = reader.fieldnames or []
        last = reader.line_num
        repeated = [column for column, count in Counter(header).items() if count > 1]
        if repeated:
            names = ", ".join(map(repr, repeated))
            raise RecordError(f"{path}: line {last}", None,
                              f"the header names column(s) {names} more than once (which one holds the data?)")
        for row in reader:
            if None in row or None in row.values():
                found = len(header) + len(row.get(None) or []) - list(row.values()).count(None)
                raise RecordError(f"{path}: line {last + 1}", None,
                                  f"{found} fields, the header has {len(header)} (an unquoted comma?)")
            rows.append((last + 1, row))
            last = reader.line_num
    except csv.Error as err:
        problem = (f"a field longer than {csv.field_size_limit()} characters, the csv module's limit (an unclosed "
                   "quote?)" if "field limit" in str(err) else f"not valid CSV ({err})")
        raise RecordError(f"{path}: line {last + 1}", None, problem) from None
    return header, rows


def read_text(path: str | Path, what: str | None = "records") -> str:
    """The text of a UTF-8 file (a leading byte-order mark dropped). A missing file, a directory, bytes
    that are not UTF-8 (with their line and byte offset) and, unless ``what`` is None, a file with
    nothing but whitespace ("empty: no {what}") are a :class:`RecordError` naming the file."""
    path = Path(path)
    _readable_file(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise RecordError(str(path), None, f"cannot read it ({err.strerror})") from None
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        raise _not_utf8(path, data, err, data.count(b"\n", 0, err.start) + 1) from None
    if what is not None and not text.strip():
        raise RecordError(str(path), None, f"empty: no {what}")
    return text


class _NotJSONConstant(ValueError):
    """NaN, Infinity or -Infinity: Python's json reads them, but JSON has no such values."""


def _refuse_constant(name: str) -> Any:
    raise _NotJSONConstant(name)


# What json.loads(text, parse_constant=_refuse_constant) builds for every call, built once: a JSONL file
# is a million calls.
_JSON = json.JSONDecoder(parse_constant=_refuse_constant)


# A string is matched whole so that a bracket or a "NaN" inside one is not taken for JSON syntax.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|(?P<constant>-?Infinity|NaN)|(?P<open>[\[{])|(?P<close>[\]}])')


def _refusal_position(text: str, refusal: Exception) -> int:
    """Where in ``text`` (valid JSON up to the refusal) the parser refused: the first bare constant, or
    the first point nested as deeply as the text goes, up to the recursion limit the parser ran into."""
    depth = deepest = position = 0
    for token in _JSON_TOKEN.finditer(text):
        if isinstance(refusal, _NotJSONConstant):
            if token["constant"]:
                return token.start()
        elif token["open"]:
            depth += 1
            if depth > deepest:
                deepest, position = depth, token.start()
                if deepest >= sys.getrecursionlimit():
                    break
        elif token["close"]:
            depth -= 1
    return position


def _refused(text: str, refusal: Exception, path: Path, first_line: int = 1) -> RecordError:
    line = first_line + text.count("\n", 0, _refusal_position(text, refusal))
    problem = ("nested too deeply" if isinstance(refusal, RecursionError)
               else f"{refusal} is not valid JSON (use null)")
    return RecordError(f"{path}: line {line}", None, problem)


def parse_json(text: str, path: Path, first_line: int = 1) -> Any:
    """The JSON value of ``text``, the content of ``path`` from line ``first_line`` on. Text that is not
    JSON, the constants NaN and Infinity, and nesting too deep to parse are a :class:`RecordError` naming
    the file and line."""
    try:
        return _JSON.decode(text)
    except json.JSONDecodeError as err:
        raise RecordError(f"{path}: line {first_line + err.lineno - 1}", None, f"not valid JSON ({err.msg})") from None
    except (_NotJSONConstant, RecursionError) as err:
        raise _refused(text, err, path, first_line) from None


def read_json(path: str | Path, what: str = "data") -> Any:
    """The JSON value of the file ``path``: :func:`read_text`, then :func:`parse_json`."""
    return parse_json(read_text(path, what=what), Path(path))


def iter_jsonl(path: Path, empty_ok: bool = False) -> Iterator[tuple[str, Any]]:
    """(where, value) for every non-blank line of a JSONL file. A line that is not JSON or not UTF-8, a
    last line cut off mid-record and (unless ``empty_ok``) a file without any record raise
    :class:`RecordError` naming the file and line."""
    _readable_file(path)
    empty = True
    with path.open("rb") as handle:
        for where, value in jsonl_values(path, handle):
            empty = False
            yield where, value
    if empty and not empty_ok:
        raise RecordError(str(path), None, "empty: no records")


def _json_nested(depth: int) -> Any:
    """The JSON values nested at most ``depth`` arrays or objects deep, as a type for msgspec to decode to."""
    value = Union[None, bool, int, float, str]
    for _ in range(depth):
        value = Union[None, bool, int, float, str, list[value], dict[str, value]]
    return value


# JSON objects whose values nest at most 8 deep (a review record's nest 2): decoded by msgspec, in C, straight from
# the bytes, about twice as fast as the json module. Where both accept a text, both give the same values (ints of
# any size as ints, floats as float() reads their digits, the last of repeated keys in the place of the first);
# msgspec refuses some texts json reads: NaN, Infinity, numbers beyond a float's range, lone surrogate escapes.
# The bound keeps it far from the recursion limit, where json, which spends one level more on its call, would refuse
# a text nested a level less deeply than msgspec. strict: no text read as a number or a bool.
_RECORDS = msgspec.json.Decoder(dict[str, _json_nested(8)], strict=True)


def jsonl_batch(lines: list[bytes]) -> list[Any] | None:
    """The values of the lines of a JSONL file when every one of them is one, decoded in one pass without the
    per-line bookkeeping that only an error message or a blank line needs (the common case); else None, and
    :func:`jsonl_values` skips or names the lines as ever."""
    # Lines that each open an object and (the last aside) end with its "}" and the newline, as praib writes them:
    # msgspec decodes them at once. A "}" at the end of a line ends a value at the top (a string does not run on
    # over a newline, and a "{" cannot follow a value inside an object or array), so each line starts a value
    # and holds one when there are as many values as lines. Anything else, or anything msgspec refuses, is
    # decoded by the json module as ever.
    if lines and {raw[:1] for raw in lines} == {b"{"} and {raw[-2:] for raw in lines[:-1]} <= {b"}\n"}:
        try:
            values = _RECORDS.decode_lines(b"".join(lines))
        except (msgspec.DecodeError, ValueError, RecursionError):  # not JSON or not such an object, not UTF-8
            values = None
        if values is not None and len(values) == len(lines):
            return values
    return _json_module_batch(lines)


def _json_module_batch(lines: list[bytes]) -> list[Any] | None:
    """:func:`jsonl_batch` by the json module, for lines msgspec is not given or refuses."""
    scan = _JSON.scan_once  # what JSONDecoder.decode calls, less the Python around it
    try:
        texts = [raw.decode("utf-8") for raw in lines]
        scanned = [scan(text, 0) for text in texts]
    except (ValueError, RecursionError, StopIteration):  # not UTF-8, not JSON, a refused constant, a blank line,
        return None  # a line that starts with whitespace or a BOM
    # As JSONDecoder.decode: one value a line, followed by nothing but JSON's whitespace.
    if any(end != len(text) and text[end:].strip(" \t\n\r") for text, (_, end) in zip(texts, scanned)):
        return None
    return [value for value, _ in scanned]


def jsonl_values(path: Path, lines: Iterable[bytes], number: int = 1, offset: int = 0) -> Iterator[tuple[str, Any]]:
    """(where, value) for every non-blank line of ``lines``: the raw lines of the JSONL file ``path`` from
    line ``number``, which starts at byte ``offset``, on. A line that is not JSON or not UTF-8, and a last
    line cut off mid-record, raise :class:`RecordError` naming the file and line."""
    for number, raw in enumerate(lines, start=number):
        where = f"{path}: line {number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise _not_utf8(path, raw, err, number, offset) from None
        offset += len(raw)
        line = line.removeprefix("\ufeff") if number == 1 else line
        if not line.strip():
            continue
        try:
            value = _JSON.decode(line)
        except (_NotJSONConstant, RecursionError) as err:
            raise _refused(line, err, path, number) from None
        except json.JSONDecodeError as err:
            # A writer killed mid-record leaves a last line without its end (and without a newline).
            if not raw.endswith(b"\n") and (err.pos >= len(line.rstrip()) or err.msg.startswith("Unterminated")):
                raise RecordError(where, None, "the last line is cut off mid-record (and has no newline): "
                                               "the file looks truncated") from None
            raise RecordError(where, None, f"not valid JSON ({err.msg} at column {err.colno})") from None
        yield where, value


def read_json_list(path: Path, keys: tuple[str, ...], what: str, single: Callable[[Any], bool] | None = None) -> list:
    """The list a .json file holds, as it is or under the first of ``keys`` in an object (or the one object
    for which ``single`` holds); a file that is not JSON, or holds no such list, is a :class:`RecordError`
    naming the file (and the line)."""
    data = read_json(path, what="records")
    if single is not None and single(data):
        return [data]
    if isinstance(data, dict):
        data = next((data[key] for key in keys if key in data), None)
    if not isinstance(data, list):
        raise RecordError(str(path), None, f"{what} (or {{'{keys[0]}': [...]}})")
    return data


def dataset_configs(path: Path) -> list[str]:
    """The config names of a dataset folder's README (:func:`is_dataset_repo`), in its order; none for another
    folder or a card that cannot be read."""
    from huggingface_hub.repocard import metadata_load

    if not is_dataset_repo(path):
        return []
    try:
        configs = (metadata_load(path / "README.md") or {}).get("configs") or []
    except (yaml.YAMLError, ValueError):
        return []
    return [str(c.get("config_name", "default")) for c in configs if isinstance(c, dict)] \
        if isinstance(configs, list) else []


def is_dataset_repo(path: Path) -> bool:
    """A folder laid out as a Hub dataset repository: a README whose YAML header names configs."""
    card = path / "README.md"
    if not card.is_file():
        return False
    header = read_text(card, what=None).split("\n---", 1)[0]
    return header.startswith("---") and re.search(r"^configs:", header, re.M) is not None


#: The files of a records folder, one per record kind, as `praib data collect`, `data import-dump`,
#: `data sample` and `data import-ukp` write them.
RECORD_FILES = {"paper": "papers.jsonl", "review": "reviews.jsonl", "meta_review": "meta_reviews.jsonl",
                "rebuttal": "rebuttals.jsonl"}


def record_files(folder: Path, kind: str | None = None) -> list[Path]:
    """The files a folder of records is read from. A records folder (one holding any of
    :data:`RECORD_FILES`) gives the file of ``kind`` (none when it lacks it); any other folder its .parquet
    files, else its .jsonl files, else its .json files (recursively, a submission's manifest.json aside)."""
    if any((folder / name).is_file() for name in RECORD_FILES.values()):
        kinds = [kind] if kind else list(RECORD_FILES)
        return [folder / RECORD_FILES[k] for k in kinds if (folder / RECORD_FILES[k]).is_file()]
    return (sorted(folder.rglob("*.parquet")) or sorted(folder.rglob("*.jsonl"))
            or sorted(p for p in folder.rglob("*.json") if p.name != "manifest.json"))


def _data_file_patterns(data_files: Any) -> Iterator[str]:
    """The paths and glob patterns of a README config's ``data_files``, in any of its forms: a string,
    a list, ``{split, path}`` entries, or a mapping of split to paths."""
    if isinstance(data_files, str):
        yield data_files
    elif isinstance(data_files, dict):
        yield from _data_file_patterns(data_files["path"] if "path" in data_files else list(data_files.values()))
    elif isinstance(data_files, list):
        for item in data_files:
            yield from _data_file_patterns(item)


def _pattern_problem(pattern: str) -> str | None:
    """Why a ``data_files`` path could reach outside its repository: a URL, an absolute path, or '..'."""
    posix = pattern.replace("\\", "/")
    if "://" in pattern:
        return "is a URL"
    if PurePosixPath(posix).is_absolute() or PureWindowsPath(pattern).drive:
        return "is an absolute path"
    if ".." in PurePosixPath(posix).parts:
        return "climbs out with '..'"
    return None


def _config_paths_outside(card: Path, label: str, folder: Path | None) -> list[str]:
    """The ``data_files`` of the README ``card`` that lead outside its repository: each pattern that is a URL,
    an absolute path or climbs out with '..', and (``folder``, a local repository) each file a config
    resolves to, after globbing and following symlinks, that lies outside ``folder``."""
    from huggingface_hub.repocard import metadata_load

    try:
        configs = (metadata_load(card) or {}).get("configs") or []
    except (yaml.YAMLError, ValueError):  # a card datasets cannot read either: no data is read through it
        return []
    problems, names = [], []
    for config in configs if isinstance(configs, list) else []:
        if not isinstance(config, dict):
            continue
        name = config.get("config_name", "default")
        bad = [(pattern, why) for pattern in _data_file_patterns(config.get("data_files"))
               if (why := _pattern_problem(pattern))]
        problems += [f"{label}: README.md: config {name!r}: data_files {pattern!r} {why}" for pattern, why in bad]
        if not bad:
            names.append(name)
    if folder is None:
        return problems
    root = folder.resolve()
    for name in names:
        try:
            files = datasets.load_dataset_builder(str(folder), name).config.data_files or {}
        except Exception:  # noqa: BLE001 - a config that cannot be read: reading it reports why
            continue
        for found in sorted({f for split_files in files.values() for f in split_files}):
            target = Path(found).resolve()
            if not target.is_relative_to(root):
                problems.append(f"{label}: README.md: config {name!r}: data file {found} leads to {target}, "
                                f"outside {root}")
    return problems


def _json_file(path: Path) -> Any:
    """The JSON value of ``path``, or None when it is missing or unreadable (its reader reports why)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _saved_dataset_files(folder: Path) -> list[Path]:
    """The Arrow files ``Dataset.save_to_disk`` listed in the folder's (or its splits') state.json."""
    listed = _json_file(folder / "dataset_dict.json")
    files = []
    for split in (listed.get("splits") if isinstance(listed, dict) else None) or ["."]:
        state = _json_file(folder / str(split) / "state.json")
        entries = state.get("_data_files") if isinstance(state, dict) else None
        files += [folder / str(split) / entry["filename"] for entry in entries or []
                  if isinstance(entry, dict) and isinstance(entry.get("filename"), str)]
    return files


def paths_outside(source: str | Path) -> list[str]:
    """Every data path of the folder or Hub dataset ``source`` that :func:`load_records` would follow out
    of it, one line each naming the path: a README ``data_files`` entry that is a URL, an absolute path
    or climbs out with '..'; a data file (after globbing and following symlinks) outside the folder; a
    saved dataset's file outside it. A single file has nothing to follow: the list is empty, as it is
    for a folder or repository whose data all lies inside it. Used to confine untrusted data (leaderboard
    submissions); :func:`load_records` itself reads what it is pointed at."""
    folder_part, _, config = str(source).partition(":")
    folder = Path(folder_part) if config and Path(folder_part).is_dir() else Path(source)
    if folder.is_dir():
        root = folder.resolve()
        if (folder / "dataset_info.json").exists() or (folder / "state.json").exists():
            files = _saved_dataset_files(folder)
        elif is_dataset_repo(folder):
            return _config_paths_outside(folder / "README.md", str(folder), folder)
        else:
            files = record_files(folder)
        return [f"{folder}: {f.relative_to(folder) if f.is_relative_to(folder) else f} leads to {f.resolve()}, "
                f"outside {root}" for f in files if not f.resolve().is_relative_to(root)]
    if folder.exists() or not re.fullmatch(r"[\w.-]+/[\w.-]+(:[\w.-]+)?", str(source)):
        return []
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import RemoteEntryNotFoundError

    repo = str(source).partition(":")[0]
    try:
        check_hub(repo, "download README.md to check its data_files")
        card = Path(hf_hub_download(repo, "README.md", repo_type="dataset"))
    except RecordError as err:
        return [str(err)]
    except RemoteEntryNotFoundError:  # a repository without a card: its files are found inside it
        return []
    except Exception as err:  # noqa: BLE001 - the Hub client raises many unrelated types
        return [str(hub_error(repo, err, "download README.md to check its data_files"))]
    return _config_paths_outside(card, repo, None)


def check_hub(label: str, what: str = "load the dataset") -> None:
    """Fail at once with a :class:`RecordError` naming ``label`` (a Hub id) and what to do when the Hub
    cannot be reached (:func:`praib.http_retry.check_reachable`), rather than let the Hub client retry
    for half a minute. With HF_HUB_OFFLINE set the network is not asked; see :func:`hub_error`."""
    from huggingface_hub import constants

    from praib.http_retry import Unreachable, check_reachable

    if datasets.config.HF_HUB_OFFLINE:
        return
    try:
        check_reachable(constants.ENDPOINT)
    except Unreachable as err:
        raise RecordError(label, None, f"could not {what}: not a local file or folder, and the Hub cannot be "
                                       f"reached: {err}; give a local path, or set HF_HUB_OFFLINE=1 to read a copy "
                                       "in the Hugging Face cache") from None


#: The variables that keep the Hub clients offline, and the values that turn them on.
_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
_TRUE = {"1", "ON", "YES", "TRUE"}


def hub_error(label: str, err: Exception, what: str = "load the dataset") -> RecordError:
    """The :class:`RecordError` for the Hub dataset ``label`` that the Hub client could not ``what``
    (``err``); when HF_HUB_OFFLINE kept the client to its cache, it says so and what to do."""
    if datasets.config.HF_HUB_OFFLINE:
        # Offline, the clients look in their cache and fail when it holds nothing usable, whatever they call it.
        named = " and ".join(v for v in _OFFLINE_VARIABLES if os.environ.get(v, "").upper() in _TRUE) \
            or "HF_HUB_OFFLINE"
        return RecordError(label, None, f"could not {what}: not a local file or folder, and not in the Hugging Face "
                                        f"cache ({named} set, so nothing is downloaded); give a local path, or "
                                        f"unset {named}")
    return RecordError(label, None, f"could not {what} ({type(err).__name__}: {_first_line(err)})")


def _first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [""])[0]


def open_parquet(path: Path) -> pq.ParquetFile:
    """The Parquet file ``path``, opened to be read in batches (its pages are read as they are needed, not
    whole row groups at once); one that is missing, empty or not Parquet is a :class:`RecordError` naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    _readable_file(path)
    if path.stat().st_size == 0:
        raise RecordError(str(path), None, "empty: no records")
    try:
        return pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
    except (pa.ArrowException, OSError) as err:
        raise unreadable_parquet(path, err) from None


def unreadable_parquet(path: Path, err: Exception) -> RecordError:
    """The error for the Parquet file ``path`` that Arrow could not open or read (``err``)."""
    problem = _first_line(err).split(f"'{path}': ", 1)[-1]  # Arrow repeats the path
    return RecordError(str(path), None, f"not a readable Parquet file ({problem})")


def read_parquet_rows(path: Path) -> list[dict]:
    """The rows of a Parquet file; one that is empty or not Parquet is a :class:`RecordError` naming it."""
    import pyarrow as pa

    parquet = open_parquet(path)
    try:
        return parquet.read().to_pylist()
    except (pa.ArrowException, OSError) as err:
        raise unreadable_parquet(path, err) from None


def load_saved_dataset(path: Path, split: str) -> Dataset:
    """The dataset ``Dataset.save_to_disk`` wrote to the folder ``path`` (memory-mapped), or its ``split``
    (its only split, whatever its name); a damaged folder or a missing split is a :class:`RecordError`."""
    try:
        loaded = datasets.load_from_disk(str(path))
    except Exception as err:  # datasets raises OS, JSON, Arrow and its own errors for a damaged folder
        raise RecordError(str(path), None, f"not a readable saved dataset ({type(err).__name__}: "
                                           f"{_first_line(err)})") from None
    if isinstance(loaded, datasets.DatasetDict):
        loaded = _pick_split(loaded, split, str(path))
    return loaded


def _pick_split(loaded: datasets.DatasetDict, split: str, label: str) -> Dataset:
    if split in loaded:
        return loaded[split]
    if len(loaded) == 1:
        return next(iter(loaded.values()))
    raise RecordError(label, None, f"no split {split!r}; splits are {', '.join(loaded)}")


def records_to_dataset(rows: list[dict], kind: str = "review") -> Dataset:
    """Build a Dataset of ``kind`` from already-validated rows (see :func:`coerce_record`)."""
    if not rows:
        return Dataset.from_dict({name: [] for name in SCHEMAS[kind][0]}, features=SCHEMAS[kind][0])
    return table_dataset(records_table(rows, kind))


def records_table(rows: list[dict], kind: str = "review") -> pa.Table:
    """The Arrow table of already-validated rows of ``kind``, with the schema's types."""
    # Arrow builds the table from the rows with the schema's types; Dataset.from_list would encode every
    # value through the features in Python first (twice the time), for the same table.
    return pa.Table.from_pylist(rows, schema=SCHEMAS[kind][0].arrow_schema)


def table_dataset(table: pa.Table) -> Dataset:
    """A Dataset of an Arrow table of records held in memory, fingerprinted by a hash of the table's buffers as they
    are (the fingerprint names the results of transforms datasets caches, and a saved dataset's state). Left to
    itself, datasets would serialise the whole table in memory to hash it: about three times its size (a reference
    of 15,000 reviews took the reading process from 450 to 660 MB)."""
    digest = hashlib.blake2b(str(table.schema).encode("utf-8"), digest_size=8)
    for column in table.columns:
        for chunk in column.chunks:
            digest.update(f"{chunk.offset} {len(chunk)}".encode("ascii"))
            for buffer in chunk.buffers():
                if buffer is not None:
                    digest.update(memoryview(buffer))
    return Dataset(table, fingerprint=digest.hexdigest())


#: The files ``Dataset.save_to_disk`` writes in every folder, beside its ``data-*.arrow``.
SAVED_DATASET_FILES = ("dataset_info.json", "state.json")


def save_records(records: Dataset, destination: str | Path) -> Path:
    """Write records as .jsonl, .parquet, or (any other path) a saved Dataset directory; the file or
    directory is built under a temporary name and moved into place (:mod:`praib.records.atomic`),
    the directory keeping the files praib did not write there. A write the system refuses (a full disk,
    no permission) raises :class:`praib.records.schema.OutputWriteError` naming ``destination`` (or its file)."""
    destination = Path(destination)
    suffix = destination.suffix.lower()
    # Writing takes a moment; a progress bar of datasets' own here would only clutter the caller's.
    shown = datasets.utils.logging.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        if suffix in (".jsonl", ".parquet"):
            with replace_atomically(destination) as temporary:
                if suffix == ".jsonl":
                    records.to_json(str(temporary), lines=True, force_ascii=False)
                else:
                    records.to_parquet(str(temporary))
        else:
            with replace_folder(destination) as folder:
                records.save_to_disk(str(folder))
    finally:
        if shown:
            datasets.enable_progress_bars()
    return destination
