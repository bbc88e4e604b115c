"""Ids of records and templates (a short SHA-1 of what makes the thing what it is), and reviewer labels.

Saved records carry these ids, so the recipe (SHA-1, hex, 16 characters, JSON with sorted
keys) is fixed: changing it would orphan every id already written.
"""

from __future__ import annotations

import hashlib
import json
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
