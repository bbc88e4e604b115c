"""A small paper as a PDF with a text layer, and the markdown praib makes of it (tests of the PDF path share it)."""

HEADER = "Preprint. Under review at a conference."
LINE, GAP = 12, 26  # points between baselines: within a paragraph, and between paragraphs

# Each page: lines as (text, points below the previous line); the header and page number are added.
PAGES = [
    [("Abstract", 0), ("We measure how lan-", GAP), ("guage models review papers", LINE), ("of many kinds.", LINE),
     ("1 Introduction", GAP), ("Peer review is slow and costly.", GAP), ("Models might help", LINE),
     ("the reviewers.", LINE)],
    [("2 Method", 0), ("2.1 Data", GAP), ("We collect reviews from Open-", GAP), ("Review for two", LINE),
     ("venues and years.", LINE), ("A second paragraph", GAP), ("follows here.", LINE)],
    [("References", 0), ("Smith, J. A study of", GAP), ("reviews. 2020.", LINE), ("A Proofs", GAP),
     ("The proof is short.", GAP)],
]

EXPECTED = """# Reviewing Reviewers

## Abstract

We measure how language models review papers of many kinds.

## 1 Introduction

Peer review is slow and costly. Models might help the reviewers.

## 2 Method

### 2.1 Data

We collect reviews from OpenReview for two venues and years.

A second paragraph follows here.

## References

Smith, J. A study of reviews. 2020.

## A Proofs

The proof is short.
"""


def write_pdf(path, pages, title="Reviewing Reviewers", header=HEADER, page_numbers=True):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    height = 792.0
    with matplotlib.rc_context({"pdf.fonttype": 42, "font.size": 10}), \
            PdfPages(path, metadata={"Title": title} if title else {}) as pdf:
        for number, lines in enumerate(pages, start=1):
            fig = plt.figure(figsize=(8.5, 11))
            if header:
                fig.text(0.1, 1 - 40 / height, header)
            y = height - 90
            for text, step in lines:
                y -= step
                fig.text(0.1, y / height, text)
            if page_numbers:
                fig.text(0.5, 30 / height, str(number))
            pdf.savefig(fig)
            plt.close(fig)
    return path
