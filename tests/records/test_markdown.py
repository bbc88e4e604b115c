"""The one paragraph splitter: spans worked out by hand."""

from praib.perturb.logic import split_paragraphs
from praib.perturb.structure import blocks
from praib.perturb.text import heading_spans
from praib.records.markdown import blank_line_chunks, paragraph_spans
from praib.sources.papertext import paragraph_index


def test_paragraphs_are_the_trimmed_runs_between_blank_lines():
    text = "\n  One line.\n \t\nTwo\nlines.  \n\n\n# Head\n"
    # "One line." is 3-12, the gap "\n \t\n" 12-16, "Two\nlines." 16-26 and its spaces to 28, the gap
    # "\n\n\n" 28-31, "# Head" 31-37; the last line break is no blank line.
    assert blank_line_chunks(text) == [(0, 12), (16, 28), (31, 38)]
    assert blank_line_chunks("\n\nx") == [(0, 0), (2, 3)]
    assert paragraph_spans(text) == [(3, 12), (16, 26), (31, 37)]
    assert [text[s:e] for s, e in paragraph_spans(text)] == ["One line.", "Two\nlines.", "# Head"]


def test_a_blank_line_holds_only_spaces_and_tabs():
    assert paragraph_spans("a\n\u00a0\nb") == [(0, 5)]  # a no-break space is not blank, as in CommonMark


def test_windows_line_endings_split_paragraphs_in_every_user():
    text = "# Intro\r\nFirst.\r\n\r\nSecond.\r\n"
    assert paragraph_index(text) == {"s1.p1": "First.", "s1.p2": "Second."}
    assert [(p.id, text[p.start:p.end]) for p in split_paragraphs(text)] == [("p1", "# Intro\r\nFirst."),
                                                                           ("p2", "Second.")]
    assert [text[start:end] for start, end in heading_spans(text)] == ["# Intro\r"]
    section = "#" + text
    assert [(b.kind, section[b.start:b.end]) for b in blocks(section)] == [("heading", "## Intro"),
                                                                           ("prose", "First."), ("prose", "Second.")]
