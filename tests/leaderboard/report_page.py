"""Reading a report page back: its tables (caption, rows, which cells are marked closest) and inline plots;
and rendering it in headless Chromium."""

from __future__ import annotations

import base64
import io
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np


class Tables(HTMLParser):
    """Every <table> of a page: caption, header and body rows as cell texts, and which body
    cells carry class="closest"."""

    def __init__(self):
        super().__init__()
        self.tables, self.images, self._cell, self._in_caption = [], [], None, False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append({"caption": "", "rows": [], "closest": []})
        elif tag == "caption":
            self._in_caption = True
        elif tag == "tr":
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th"):
            self._cell = {"text": "", "closest": "closest" in (attrs.get("class") or "")}
        elif tag == "span" and self._cell is not None:
            self._cell["text"] += " "
        elif tag == "img":
            self.images.append(attrs)

    def handle_endtag(self, tag):
        if tag == "caption":
            self._in_caption = False
        elif tag in ("td", "th") and self._cell is not None:
            row = self.tables[-1]["rows"][-1]
            if self._cell["closest"]:
                self.tables[-1]["closest"].append((len(self.tables[-1]["rows"]) - 1, len(row)))
            row.append(" ".join(self._cell["text"].split()))
            self._cell = None

    def handle_data(self, data):
        if self._in_caption:
            self.tables[-1]["caption"] += data
        elif self._cell is not None:
            self._cell["text"] += data


def parse(html: str) -> Tables:
    parser = Tables()
    parser.feed(html)
    return parser


def table(parsed: Tables, caption: str) -> dict:
    matches = [t for t in parsed.tables if t["caption"] == caption]
    assert len(matches) == 1, [t["caption"] for t in parsed.tables]
    return matches[0]


def cell(t: dict, row_name: str, column: str) -> str:
    header = t["rows"][0]
    row = next(r for r in t["rows"][1:] if r[0] == row_name)
    return row[header.index(column)]


def decode_png(uri: str) -> np.ndarray:
    from matplotlib.image import imread

    assert uri.startswith("data:image/png;base64,")
    return imread(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])), format="png")


CHROMIUM = Path("/usr/bin/chromium")


def chromium(*args: str, user_data_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={user_data_dir}", *args],
        capture_output=True, text=True, timeout=120, check=False)
