"""Ids of records and templates: a short SHA-1 of what makes the thing what it is.

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
