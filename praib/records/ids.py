"""Ids of records and templates (a short SHA-1 of what makes the thing what it is), reviewer labels, and the
one form of an id a record gives (:func:`canonical_id`).

Saved records carry these ids, so the recipe (SHA-1, hex, 16 characters, JSON with sorted
keys) is fixed: changing it would orphan every id already written.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from typing import Any


def hash_id(key: str, length: int = 16) -> str:
    """The first ``length`` hex digits of the SHA-1 of ``key``."""
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:length]


def record_id(value: Any) -> str:
    """The id of a JSON-able value: :func:`hash_id` of its JSON with sorted keys (anything
    JSON cannot hold written as ``str``)."""
    return hash_id(json.dumps(value, sort_keys=True, default=str))


def reviewer_label(row: dict) -> str:
    """The reviewer a record comes from: its source, plus the model when it differs, plus the prompt
    (the key that pairs the reviews of an original with those of its variants)."""
    parts = [row.get("source")]
    model = row.get("model")
    # A local model directory is recorded as its path and named by its folder in ``source``.
    if model and model != row.get("source") and model.rstrip("/").rsplit("/", 1)[-1] != row.get("source"):
        parts.append(model)
    if row.get("prompt"):
        parts.append(row["prompt"])
    return "/".join(str(p) for p in parts if p)


# The default-ignorable code points (Unicode's DerivedCoreProperties) that are neither format nor control
# characters: the stdlib's unicodedata has categories but not that property, and the list is short and fixed.
_IGNORABLE_RANGES = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x2065, 0x2065),
                     (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0xE0000, 0xE0FFF))
# Control, format (zero-width characters, bidi controls, the byte-order mark, the soft hyphen), surrogate,
# line and paragraph separator.
_UNSEEN_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def unseen_characters(text: str) -> list[str]:
    """The characters of ``text`` a reader cannot see, each once in order of first use, as
    ``U+200B ZERO WIDTH SPACE``: control and format characters (zero-width spaces and joiners, bidi
    controls, the byte-order mark, the soft hyphen, tabs and newlines), lone surrogates, line and paragraph
    separators, and the other default-ignorable code points (variation selectors, Hangul fillers)."""
    if text.isascii() and text.isprintable():  # nearly every id: no character to look at
        return []
    found = []
    for char in dict.fromkeys(text):
        point, category = ord(char), unicodedata.category(char)
        if category in _UNSEEN_CATEGORIES or any(low <= point <= high for low, high in _IGNORABLE_RANGES):
            name = unicodedata.name(char, None) or {"Cc": "CONTROL", "Cs": "SURROGATE"}.get(category, "UNASSIGNED")
            found.append(f"U+{point:04X} {name}")
    return found


def canonical_id(value: str) -> str:
    """``value`` in Unicode normal form NFC, so that ids typed or stored differently (``café`` as one code point
    or as ``e`` and a combining accent) are one id; a ValueError lists the characters a reader cannot see
    (:func:`unseen_characters`), which would make two ids that look the same different."""
    unseen = unseen_characters(value)
    if unseen:
        raise ValueError(f"{value!r} holds characters a reader cannot see ({', '.join(unseen)}): two ids that "
                         "look the same would differ; remove them")
    return value if value.isascii() else unicodedata.normalize("NFC", value)
