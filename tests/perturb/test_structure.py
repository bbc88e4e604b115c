"""Rule-based paper edits respect the paper's markup, in every input format praib reads.

Each synthetic paper is written with its editable prose between « and »: everything outside those
marks (title, headings, figure and table blocks, captions, equations, code, HTML, links' targets and
titles, citations, the reference list, the blank lines between blocks) must come back byte-identical.
The optional tests run every rule-based kind on a real paper of the UKP counterfactual release, whose
markup the tests find with their own simple patterns, and compare `layout` with the release's own
layout variant of that paper.
"""

import difflib
import json
import random
import re
from pathlib import Path

import pytest

from praib.perturb import injection, structure, surface
from praib.perturb.registry import apply_perturbation, list_perturbations
from praib.records import coerce_record, records_to_dataset

RELEASE = Path("/work/shared/data/counter-review-logic")
REAL_PAPER = RELEASE / "papers/2023.acl/2023.acl%2023.acl-long.124/paper.md"
REAL_LAYOUT = RELEASE / "cf_datasets/paper_layout/2023.acl%2023.acl-long.124.json"
needs_release = pytest.mark.skipif(not REAL_PAPER.exists() or not REAL_LAYOUT.exists(),
                                   reason="the UKP release's sample in ../shared/data is not available")

# --- the UKP release's paper.md ---------------------------------------------------------------

UKP_FIGURE = ("[FIGURE S1.F1.g1]\n![Figure S1.F1.g1](./media/x1.png)\n\nFigure 1: \n"
              "The color behavior of a labeled video, as the optimizer sees it.\n[/FIGURE]")
UKP_TABLE = ('[TABLE S2.T1]\n\n<table class="ltx_tabular ltx_centering">\n<thead class="ltx_thead">\n'
             '<tr class="ltx_tr">\n<th class="ltx_td"><span class="ltx_text ltx_font_bold">Method</span></th>\n'
             '<th class="ltx_td">Color behavior</th>\n</tr>\n</thead>\n<tbody class="ltx_tbody">\n<tr class="ltx_tr">\n'
             '<th class="ltx_td">MulT <cite class="ltx_cite">(Tsai et al., <a class="ltx_ref">2019</a>)</cite></th>\n'
             '<td class="ltx_td">0.801</td>\n</tr>\n</tbody>\n</table>\n\n'
             "Table 1: The color behavior of each optimizer; the labeled center is the best.\n[/TABLE]")
UKP_EQUATIONS = ("|  | $$\\hat{y}=\\operatorname{argmax}_{y}\\operatorname{P}(y\\mid Z),$$ |  | (1) |\n"
                 "| --- | --- | --- | --- |\n\n"
                 "|  | $$[X^{l+1}||B^{l+1}]=\\text{Transformer}([X^{l}||B^{l}]),$$ |  | (2) |\n"
                 "| --- | --- | --- | --- |")
UKP = (
    "\n# Colorful Behavior: Optimizing the Color of Labeled Data \nfor Modeling Behavior\n\n"
    "###### Abstract\n\n"
    "«We analyze the color behavior of an optimizer, and its effect is centered on a labeled data set. "
    "The code is at »<https://github.com/example/color>«.»  \n\n"
    "## 1 Introduction\n\n"
    f"{UKP_FIGURE}\n\n"
    "«Multimodal sentiment analysis (»Poria et\xa0al., [2020](#bib.bib22)«) uses the color of each frame, and »"
    "Liu et\xa0al. ([2020](#bib.bib13))« normalize the behavior of the fusion gate. As shown in the Figure »"
    '[1](#S1.F1 "Figure 1 ‣ 1 Introduction ‣ Colorful Behavior: Optimizing the Color of Labeled Data for '
    'Modeling Behavior")«, the behavior is a favorite topic; we analyze it under the noise-contrastive '
    "estimation framework (»Gutmann and Hyvärinen, [2010](#bib.bib5)«).»  \n\n"
    "## 2 Method\n\n"
    "«For summarization, we utilize »$Z$« to predict the color »$\\hat{y}$« of a video, which is the center of "
    "our modeling.»  \n\n"
    f"{UKP_EQUATIONS}\n\n"
    "«where »$||$« denotes the concatenation, as in Equation »"
    '[2](#S2.E2 "In 2 Method ‣ Colorful Behavior: Optimizing the Color")«, and the optimizer is labeled as the '
    "center.»  \n\n"
    f"{UKP_TABLE}\n\n"
    "## References\n\n"
    "* Poria et\xa0al. (2020)  Soujanya Poria and Devamanyu Hazarika. 2020.   Beneath the color of the behavior: an "
    "analysis.   *IEEE Transactions on Affective Computing*. \n"
    "* Liu et\xa0al. (2020)  Nayu Liu. 2020.   The behavior of the center.   In *Proceedings of EMNLP*, "
    "pages 1834–1845. \n\n"
    "## Appendix A Hyper-parameters\n\n"
    "«We optimize the color behavior as shown in Table »"
    '[1](#S2.T1 "Table 1 ‣ 2 Method ‣ Colorful Behavior: Optimizing the Color")« for the best analysis.»  \n')

# --- the markdown `praib data pdf` writes from a PDF's text layer -----------------------------

PDF_FIGURE_CAPTION = "Figure 1: The color behavior of a labeled video, as the optimizer sees it."
PDF_TABLE_CAPTION = "Table 1: The color behavior of each optimizer on the labeled center."
PDF = (
    "# Colorful Behavior: Optimizing the Color of Labeled Data\n\n"
    "## Abstract\n\n"
    "«We analyze the color behavior of an optimizer, and its effect is centered on a labeled data set.»\n\n"
    "## 1 Introduction\n\n"
    "«Prior work studies the color of frames (»Poria et al., 2020; Liu et al., 2020«) and the behavior of "
    "the fusion gate »[12, 14]«. »Zadeh et al. (2018)« normalize the color behavior, which is a favorite analysis.»\n\n"
    f"{PDF_FIGURE_CAPTION}\n\n"
    "«Our optimizer is centered on the color, and the analysis is labeled by hand.»\n\n"
    "## 2 Experiments\n\n"
    f"{PDF_TABLE_CAPTION}\n\n"
    "«Method Color behavior MulT 0.801 Ours 0.853»\n\n"
    "«We analyze the behavior of the optimizer in Table 1; its color is the center of the analysis.»\n\n"
    "## References\n\n"
    "Soujanya Poria and Devamanyu Hazarika. 2020. Beneath the color of the behavior: an analysis. IEEE "
    "Transactions on Affective Computing.\n\n"
    "Nayu Liu. 2020. The behavior of the center. In Proceedings of EMNLP, pages 1834–1845.\n")

# --- plain markdown, with what an OCR model writes (display maths, HTML and pipe tables) --------

MD_FIGURE = "![Color behavior plot](figures/color.png)\n\nFigure 1: The color behavior of the labeled optimizer."
MD_TABLE = ("Table 1: The labeled center of the color analysis.\n\n"
            "| Model | Color behavior |\n| --- | --- |\n| Labeled center | 0.91 |")
MD_HTML_TABLE = "<table><tr><td>Method</td><td>Color behavior</td></tr><tr><td>Ours</td><td>0.853</td></tr></table>"
MARKDOWN = (
    "# Colorful Behavior of Optimizers\n\n"
    "## Abstract\n\n"
    "«We analyze the color behavior of an optimizer, and its effect is centered on a labeled data set.»\n\n"
    "## 1 Introduction\n\n"
    "«Prior work »[@smith2020; @lee2019]« studies color and the behavior of »\\cite{poria2020}«, and »[«the guide»]"
    '(https://example.org/color "Color behavior guide")« is a favorite analysis»[^1]«.»\n\n'
    f"{MD_FIGURE}\n\n"
    "## 2 Method\n\n"
    "«The loss normalizes the color »$c$« of each frame, and »\\(x\\)« is the center:»\n\n"
    "$$\n\\text{color} = \\text{behavior}(x)\n$$\n\n"
    "\\begin{equation}\n\\text{center} = \\frac{a}{b}\n\\end{equation}\n\n"
    f"{MD_TABLE}\n\n"
    f"{MD_HTML_TABLE}\n\n"
    "```python\ndef normalize_color(behavior):\n\n    return the_center(behavior)\n```\n\n"
    "    the indented color behavior is code\n\n"
    "<!-- the color of the behavior -->\n\n"
    "- «We analyze it with the »`colorize()`« helper, and the center is labeled.»\n"
    "- «The optimizer is a favorite, which is the color of the analysis.»\n\n"
    "> «A quoted remark on the color behavior of the optimizer.»\n\n"
    "[^1]«: The color footnote is labeled.»\n\n"
    '[guide]: https://example.org/color "Color guide"\n\n'
    "## References\n\n"
    "- Smith, J. 2020. The color of behavior. In *Proc. of the Center*.\n"
    "- Lee, K. and Kim, M. 2019. Normalize the behavior. *Journal of Color*.\n")

FORMATS = {"ukp": UKP, "pdf": PDF, "markdown": MARKDOWN}
WORD_EDITS = {"spelling": {"fraction": 0.5}, "typos": {"fraction": 1.0, "per_paragraph": 3},
              "language-errors": {"fraction": 1.0, "per_paragraph": 3}, "whitespace": {"rate": 0.5}}


def plain(template):
    return template.replace("«", "").replace("»", "")


def papers(text):
    return records_to_dataset([coerce_record({"paper_id": "p1", "venue": "ACL", "year": 2023, "title": "T",
                                              "text": text}, "paper", "test")], "paper")


def changed_prose(template, edited):
    """How many «» spans of ``template`` differ in ``edited``; fails if anything outside them changed
    (word and space edits never add or remove a line)."""
    lines, got = template.split("\n"), edited.split("\n")
    assert len(got) == len(lines)
    changed = 0
    for line, new in zip(lines, got):
        pieces = re.split(r"«(.*?)»", line)
        pattern = "".join(re.escape(piece) if i % 2 == 0 else "(.*?)" for i, piece in enumerate(pieces))
        match = re.fullmatch(pattern, new)
        assert match, f"markup changed: {plain(line)!r} became {new!r}"
        changed += sum(old != now for old, now in zip(pieces[1::2], match.groups()))
    return changed


def markers(text):
    """The figure/table/algorithm markers in order, after checking that each opening one is closed
    before the next opens; and the number of HTML tables opened and closed."""
    found = re.findall(r"^\[(/?)(FIGURE|TABLE|ALGORITHM)\b", text, re.M)
    open_kind = None
    for closing, kind in found:
        assert (open_kind == kind) if closing else open_kind is None, f"[{closing}{kind}] out of pairing"
        open_kind = None if closing else kind
    assert open_kind is None, f"[{open_kind}] never closed"
    return found, len(re.findall(r"<table\b", text)), len(re.findall(r"</table>", text))


# --- the parsed view --------------------------------------------------------------------------

def test_blocks_of_a_ukp_paper():
    text = plain(UKP)
    got = [(b.kind, text[b.start:b.end].split("\n")[0][:30]) for b in structure.blocks(text)]
    assert got == [
        ("title", "# Colorful Behavior: Optimizin"), ("heading", "###### Abstract"),
        ("prose", "We analyze the color behavior "), ("heading", "## 1 Introduction"),
        ("figure", "[FIGURE S1.F1.g1]"), ("prose", "Multimodal sentiment analysis "),
        ("heading", "## 2 Method"), ("prose", "For summarization, we utilize "),
        ("equation", "|  | $$\\hat{y}=\\operatorname{a"), ("equation", "|  | $$[X^{l+1}||B^{l+1}]=\\tex"),
        ("prose", "where $||$ denotes the concate"), ("table", "[TABLE S2.T1]"),
        ("heading", "## References"), ("reference", "* Poria et\xa0al. (2020)  Soujany"),
        ("reference", "* Liu et\xa0al. (2020)  Nayu Liu."), ("heading", "## Appendix A Hyper-parameters"),
        ("prose", "We optimize the color behavior")]
    figure, table = [b for b in structure.blocks(text) if b.kind in ("figure", "table")]
    assert (text[figure.start:figure.end], text[table.start:table.end]) == (UKP_FIGURE, UKP_TABLE)


def test_blocks_of_plain_markdown():
    text = plain(MARKDOWN)
    kinds = [b.kind for b in structure.blocks(text)]
    assert kinds == ["title", "heading", "prose", "heading", "prose", "figure", "caption", "heading", "prose",
                     "equation", "equation", "caption", "table", "table", "code", "code", "html", "prose", "prose",
                     "prose", "prose", "other", "heading", "reference", "reference"]


def test_floats_take_the_caption_of_their_kind_beside_them():
    text = plain(MARKDOWN)
    assert [(f.kind, text[f.start:f.end]) for f in structure.floats(text)] == [
        ("figure", MD_FIGURE), ("table", MD_TABLE), ("table", MD_HTML_TABLE)]
    text = plain(PDF)  # the text layer keeps captions only: each is a float of its own
    assert [(f.kind, text[f.start:f.end]) for f in structure.floats(text)] == [
        ("figure", PDF_FIGURE_CAPTION), ("table", PDF_TABLE_CAPTION)]
    text = "![a](a.png)\n\nTable 2: Scores.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nFigure 3: A plot.\n\nEnd."
    assert [(f.kind, text[f.start:f.end]) for f in structure.floats(text)] == [
        ("figure", "![a](a.png)"), ("table", "Table 2: Scores.\n\n| a | b |\n|---|---|\n| 1 | 2 |"),
        ("figure", "Figure 3: A plot.")]


def test_inline_markup_inside_prose():
    text = plain(UKP)
    chunk = text[text.index("Multimodal sentiment"):text.index("(#bib.bib5)).") + len("(#bib.bib5)).")]
    assert [chunk[s:e][:24] for s, e in structure.inline_spans(chunk)] == [
        "Poria et\xa0al., [2020](#bi", "Liu et\xa0al. ([2020](#bib.", '](#S1.F1 "Figure 1 ‣ 1 I',
        "Gutmann and Hyvärinen, ["]
    chunk = "- See (Smith and Lee, 2019; Wu, 2020a) and [3] or [1-4], `x y`, $a b$ and [t](u 'v w')."
    assert [chunk[s:e] for s, e in structure.inline_spans(chunk)] == [
        "- ", "Smith and Lee, 2019; Wu, 2020a", "[3]", "[1-4]", "`x y`", "$a b$", "](u 'v w')"]


def test_equation_rows_are_not_tables():
    assert [b.kind for b in structure.blocks("|  | $$a=b$$ |  | (3) |\n| --- | --- | --- | --- |\n\n"
                                             "| $x$ | (A.2) |\n\n| a | (1) |\n|---|---|\n\n| $x$ | 0.5 |")] == [
        "equation", "equation", "table", "table"]


# --- every rule-based kind on synthetic papers ------------------------------------------------

@pytest.mark.parametrize("paper_format", FORMATS)
@pytest.mark.parametrize("kind", WORD_EDITS)
def test_word_and_space_edits_change_prose_only(kind, paper_format):
    template = FORMATS[paper_format]
    text = plain(template)
    outputs = set()
    for seed in range(6):
        edited = apply_perturbation(kind, papers(text), seed=seed, **WORD_EDITS[kind])[0]["text"]
        assert changed_prose(template, edited) >= 1
        assert markers(edited) == markers(text)
        assert apply_perturbation(kind, papers(text), seed=seed, **WORD_EDITS[kind])[0]["text"] == edited
        outputs.add(edited)
    assert len(outputs) > 1


@pytest.mark.parametrize("paper_format, first_paragraph_end", [
    ("ukp", "<https://github.com/example/color>."), ("pdf", "on a labeled data set."),
    ("markdown", "on a labeled data set.")])
@pytest.mark.parametrize("placement", injection.PLACEMENTS)
def test_injection_goes_after_the_first_paragraph_or_at_the_end(placement, paper_format, first_paragraph_end):
    text = plain(FORMATS[paper_format])
    edited = apply_perturbation(f"injection-{placement}", papers(text))[0]["text"]
    if placement == "appendix":
        assert edited.startswith(text.rstrip()) and edited[len(text.rstrip()):].startswith("\n\n## Appendix: Note")
        return
    at = text.index(first_paragraph_end) + len(first_paragraph_end)
    hidden = re.search(r"\n\n(<!-- .*? -->|<span style=.*?</span>)", edited[at:]).group()
    assert edited[at:].startswith(hidden) and edited == text[:at] + hidden + text[at:]


@pytest.mark.parametrize("paper_format, moved", [
    ("ukp", [UKP_FIGURE, UKP_TABLE]), ("pdf", [PDF_FIGURE_CAPTION, PDF_TABLE_CAPTION]),
    ("markdown", [MD_FIGURE, MD_TABLE, MD_HTML_TABLE])])
def test_layout_moves_whole_figure_and_table_blocks_and_nothing_else(paper_format, moved):
    text = plain(FORMATS[paper_format])
    edited = surface.layout({"text": text}, random.Random(0), line_breaks=(1,))[0]["text"]
    body = text
    for block in moved:
        body = body.replace(block + "\n\n", "")
    assert edited == body.rstrip("\n") + "\n\n## Figures and Tables\n\n" + "\n\n".join(moved) + "\n"
    assert markers(edited) == markers(text)
    tripled = surface.layout({"text": text}, random.Random(0), line_breaks=(3,))[0]["text"]
    # Only the line breaks between blocks multiply: inside the moved blocks they stay as they were.
    assert re.sub(r"\n\n\n\n\n\n", "\n\n", re.sub(r"(?<!\n)\n\n\n(?!\n)", "\n", tripled)) == edited
    assert all(block in tripled for block in moved)


def test_every_rule_based_paper_kind_is_covered_here():
    rule_based = {p.name for p in list_perturbations() if p.component == "paper" and not p.needs_llm}
    covered = {*WORD_EDITS, "layout", *(f"injection-{p}" for p in injection.PLACEMENTS)}
    assert rule_based == covered


# --- the real paper -------------------------------------------------------------------------

def real_markup(text):
    """(start, end) of the real paper's markup, by patterns of this test's own."""
    patterns = [(r"^\[(FIGURE|TABLE)[^\]\n]*\]$.*?^\[/\1\]$", re.S | re.M), (r"^\|.*$", re.M), (r"^#.*$", re.M),
                (r"\]\((?:[^()\"]|\"[^\"]*\")*\)", 0),
                (r"[A-Z][^\s,()]*(?:\sand\s[A-Z][^\s,()]*|\set\sal\.)?,?\s\(?\[\d{4}[a-z]?\]\(#bib[^)]*\)", 0),
                (r"\$\$[^\n]*?\$\$|\$[^$\n]+\$", 0), (r"<[^<>\n]+>", 0),
                (r"^## References$.*?(?=^## Appendix$)", re.S | re.M)]
    spans = [(m.start(), m.end()) for pattern, flags in patterns for m in re.finditer(pattern, text, flags)]
    wrapped = text.index("\n", text.index("# ")) + 1  # the title's second line
    return spans + [(wrapped, text.index("\n", wrapped))]


def changed_ranges(before, after):
    """(start, end) in ``before`` of every character run an edit replaced, deleted or inserted at,
    line by line: word and space edits keep the lines."""
    old, new = before.split("\n"), after.split("\n")
    assert len(old) == len(new)
    ranges, offset = [], 0
    for line, edited in zip(old, new):
        if line != edited:
            ranges += [(offset + i1, offset + i2) for tag, i1, i2, _, _
                       in difflib.SequenceMatcher(None, line, edited, autojunk=False).get_opcodes() if tag != "equal"]
        offset += len(line) + 1
    return ranges


@needs_release
@pytest.mark.parametrize("kind", [*WORD_EDITS, *(f"injection-{p}" for p in injection.PLACEMENTS)])
def test_real_paper_markup_is_untouched_by_every_word_edit_and_injection(kind):
    text = REAL_PAPER.read_text(encoding="utf-8")
    markup = real_markup(text)
    blocks = [m.group() for m in re.finditer(r"^\[(FIGURE|TABLE)[^\]\n]*\]$.*?^\[/\1\]$", text, re.S | re.M)]
    assert len(blocks) == 8
    for seed in range(3):
        edited = apply_perturbation(kind, papers(text), seed=seed)[0]["text"]
        assert edited != text and markers(edited) == markers(text)
        assert all(block in edited for block in blocks)
        if kind.startswith("injection"):
            continue  # checked on the synthetic papers: one block added, nothing else changed
        hits = [(s, e) for s, e in changed_ranges(text, edited) for ms, me in markup
                if max(s, ms) < min(e, me) or ms < s == e < me]
        assert not hits, f"{kind} changed markup: {[text[max(0, s - 20):e + 20] for s, e in hits[:3]]}"


@needs_release
def test_real_paper_layout_moves_the_eight_figure_and_table_blocks_and_keeps_the_equations():
    text = REAL_PAPER.read_text(encoding="utf-8")
    edited, description = surface.layout({"text": text}, random.Random(0), line_breaks=(2,))
    edited = edited["text"]
    assert description == ("moved 3 figures, 5 tables into a closing 'Figures and Tables' section; "
                           "line breaks between blocks multiplied by 2")
    body, closing = edited.split("\n## Figures and Tables\n")
    ids = re.findall(r"^\[(?:FIGURE|TABLE) ([^\]]+)\]$", closing, re.M)
    assert ids == ["S1.F1.g1", "S2.F2.g1", "S4.F3.g1", "S3.T1", "S3.T2", "S4.T3", "S4.T4", "A1.T5"]
    blocks = [m.group() for m in re.finditer(r"^\[(FIGURE|TABLE)[^\]\n]*\]$.*?^\[/\1\]$", text, re.S | re.M)]
    assert all(block in closing for block in blocks) and markers(edited)[1:] == markers(text)[1:]
    equations = re.findall(r"^\|  \| \$\$.*\|$", text, re.M)
    assert len(equations) == 8 and re.findall(r"^\|  \| \$\$.*\|$", body, re.M) == equations
    remaining = text
    for block in blocks:
        remaining = remaining.replace(block, "")
    assert re.sub(r"\n+", "\n", body).strip() == re.sub(r"\n+", "\n", remaining).strip()


@needs_release
def test_real_paper_layout_reproduces_the_release_layout_variant():
    text = REAL_PAPER.read_text(encoding="utf-8")
    release = json.loads(REAL_LAYOUT.read_text(encoding="utf-8"))
    assert release["changes"] == ["replaced \\n by random number of \\n",
                                  "moved all figures and tables to the very back of the paper"]
    # The release's variants are made from the paper without its appendix, and this one tripled the line breaks.
    main = text[:text.index("\n## Appendix\n") + 1]
    edited = surface.layout({"text": main}, random.Random(0), line_breaks=(3,))[0]["text"]

    def sections(md):
        return re.findall(r"^#+ (.*?) *$", md, re.M)

    assert sections(edited) == sections(release["cf_paper"]["md"])
    assert sections(edited)[-2:] == ["References", "Figures and Tables"]
    # Same blocks, same order, same words: the texts differ only where the release also multiplied
    # the line breaks inside blocks (the title's wrap, inside figures and tables).
    assert re.sub(r"\n+", "\n", edited).strip() == re.sub(r"\n+", "\n", release["cf_paper"]["md"]).strip()
    assert [len(run) for run in re.findall(r"(\n+)#", edited)] == [3] + [6] * (len(sections(edited)) - 1)
