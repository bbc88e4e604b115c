"""A paper's table as data: cells that remember where their numbers came from, rendered as Markdown or LaTeX.

Every number in a :class:`Table` is a :class:`Cell` holding the value read from a result file, the
JSON pointer (RFC 6901) it was read from, and how the paper prints it (decimals, a sign, a percent).
Rendering only formats; so a table can be checked against its results cell by cell
(:func:`praib.tables.resolve`), and a value the run did not produce prints as "—" with a note naming
the input or option that produces it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

MISSING = "—"


@dataclass(frozen=True)
class Cell:
    """One cell: a number from a result (``source`` is its JSON pointer there), or a label.

    ``value`` is always the result's own number; ``digits`` is the paper's rounding; ``signed`` prints ``+`` before positive numbers (tables of
    differences); ``missing`` is True where the result has no value there (printed as "—")."""

    value: Any
    source: str | None = None
    digits: int | None = None
    signed: bool = False
    #: Printed as ``value * scale``: a share the result holds as 0-1 that the paper prints in percent.
    scale: float = 1
    #: Between the parts of a joined cell.
    separator: str = "/"
    #: Printed bold, as the papers mark e.g. the value closest to the human one.
    bold: bool = False
    #: Printed in italics, as PRAIB Table 9 prints the model heading over each model's rows (:func:`heading`).
    italic: bool = False

    @property
    def missing(self) -> bool:
        return self.value is None

    def text(self) -> str:
        if isinstance(self.value, tuple):
            return self.separator.join(part.text() for part in self.value)
        if self.value is None:
            return MISSING
        if isinstance(self.value, str) or self.digits is None and not isinstance(self.value, float):
            return str(self.value)
        digits = 3 if self.digits is None else self.digits
        shown = self.value * self.scale
        text = f"{shown:,.{digits}f}" if abs(shown) >= 10_000 else f"{shown:.{digits}f}"
        if text.lstrip("-").strip("0.,") == "":
            text = text.lstrip("-")  # -0.000 prints as 0.000
        return f"+{text}" if self.signed and not text.startswith("-") and text.strip("0.,") else text

    def marked(self, strong: Callable[[str], str], escape: Callable[[str], str] = str) -> str:
        """The text as a renderer writes it: ``escape``d, and each bold part (of a joined cell too) wrapped by
        ``strong``."""
        if isinstance(self.value, tuple):
            return self.separator.join(part.marked(strong, escape) for part in self.value)
        text = escape(self.text())
        return strong(text) if self.bold else text


def label(text: str) -> Cell:
    """A row or column label."""
    return Cell(text)


def heading(text: str, width: int) -> list[Cell]:
    """A row that names the rows under it, as PRAIB Table 9 names each model over its rows: ``text`` in italics,
    then ``width - 1`` empty cells (LaTeX spans it over the whole row)."""
    return [Cell(text, italic=True), *(label("") for _ in range(width - 1))]


def is_heading(row: list[Cell]) -> bool:
    """Whether ``row`` is a :func:`heading`."""
    return bool(row) and row[0].italic and all(cell.value == "" and cell.source is None for cell in row[1:])


def joined(*parts: Cell, separator: str = "/") -> Cell:
    """Several numbers in one cell, as the papers print ``ICLR/NeurIPS`` pairs (``0.34/0.24``) or a mean with its
    standard deviation (``separator=" ± "``)."""
    return Cell(tuple(parts), separator=separator)


def _numbers(cell: Cell):
    if isinstance(cell.value, tuple):
        for part in cell.value:
            yield from _numbers(part)
    elif cell.source is not None:
        yield cell


@dataclass
class Table:
    """One of a paper's tables, laid out from result files.

    ``header`` is one row of column names (``header_groups`` optionally spans them with group
    names, as the papers' two-level headers do: pairs of (name, number of columns)); ``rows`` are
    lists of cells as wide as the header; ``notes`` say how the numbers were computed and where praib
    departs from the paper; ``needs`` says which input or option produces what is missing."""

    key: str
    paper: str
    number: int
    title: str
    header: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    header_groups: list[tuple[str, int]] | None = None
    notes: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    @property
    def caption(self) -> str:
        return f"{self.paper} Table {self.number}: {self.title}"

    def cells(self):
        """Every number of the table with the JSON pointer it came from."""
        for row in self.rows:
            for cell in row:
                yield from _numbers(cell)

    def to_markdown(self) -> str:
        lines = [f"**{self.caption}**", ""]
        if self.header_groups:
            spans = []
            for name, width in self.header_groups:
                spans += [name] + [""] * (width - 1)
            lines.append(_markdown_row(spans))
            lines.append(_markdown_row(["---"] * len(self.header)))
            lines.append(_markdown_row(self.header))
        else:
            lines.append(_markdown_row(self.header))
            lines.append(_markdown_row(["---"] * len(self.header)))
        for row in self.rows:
            lines.append(_markdown_row([_italic(cell, cell.marked(lambda text: f"**{text}**"), "*{}*")
                                        for cell in row]))
        lines.append("")
        lines += [f"*{note}*" for note in self._notes()]
        return "\n".join(lines).rstrip() + "\n"

    def to_latex(self) -> str:
        columns = "l" * _label_columns(self) + "r" * (len(self.header) - _label_columns(self))
        lines = ["\\begin{table}[t]", "\\centering", f"\\caption{{{_latex(self.caption)}}}",
                 f"\\label{{tab:{self.key}}}", f"\\begin{{tabular}}{{{columns}}}", "\\toprule"]
        if self.header_groups:
            lines.append(" & ".join(_latex(name) if width == 1 else f"\\multicolumn{{{width}}}{{c}}{{{_latex(name)}}}"
                                    for name, width in self.header_groups) + " \\\\")
        lines.append(" & ".join(_latex(name) for name in self.header) + " \\\\")
        lines.append("\\midrule")
        for row in self.rows:
            if is_heading(row):
                lines.append(f"\\multicolumn{{{len(self.header)}}}{{l}}{{\\textit{{{_latex(row[0].text())}}}}} \\\\")
                continue
            lines.append(" & ".join(_italic(cell, cell.marked(lambda text: f"\\textbf{{{text}}}", _latex),
                                            "\\textit{{{}}}") for cell in row) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        for note in self._notes():
            lines.append(f"\\par\\smallskip\\footnotesize {_latex(note)}")
        lines.append("\\end{table}")
        return "\n".join(lines) + "\n"

    def _notes(self) -> list[str]:
        out = list(self.notes)
        out += [f"Missing ({MISSING}): {need}" for need in self.needs]
        if self.sources:
            out.append(f"From: {', '.join(self.sources)}")
        return out


def _italic(cell: Cell, text: str, form: str) -> str:
    """``text``, the cell as a renderer marked it, put in ``form`` where the cell is italic."""
    return form.format(text) if cell.italic else text


def _label_columns(table: Table) -> int:
    first = next((row for row in table.rows if not is_heading(row)), [])
    return max(1, sum(1 for _ in _leading_labels(first)))


def _leading_labels(row: list[Cell]):
    for cell in row:
        if cell.source is not None or not isinstance(cell.value, str):
            return
        yield cell


def _markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


_LATEX_SPECIAL = {"&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#", "_": "\\_", "{": "\\{", "}": "\\}",
                  "~": "\\textasciitilde{}", "^": "\\textasciicircum{}", "\\": "\\textbackslash{}",
                  MISSING: "---", "±": "$\\pm$", "Σ": "$\\Sigma$", "Δ": "$\\Delta$", "α": "$\\alpha$",
                  "−": "$-$", "↑": "$\\uparrow$", "↓": "$\\downarrow$", "↔": "$\\leftrightarrow$",
                  "≤": "$\\leq$", "≥": "$\\geq$", "×": "$\\times$", "<": "$<$", ">": "$>$", "|": "$|$"}


def _latex(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)
