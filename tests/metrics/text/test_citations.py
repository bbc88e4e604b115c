"""Formatted citations: each style with exact fields, negatives, and the verification seam."""

import dataclasses

import pytest

from praib.metrics.text.citations import Citation, count_citations, find_citations


def only(text):
    found = find_citations(text)
    assert len(found) == 1, found
    return found[0]


def test_apa_with_initials():
    text = "Laine, S., & Aila, T. (2022). Visual counterfactual explanations. In CVPR."
    c = only(text)
    assert c == Citation("APA", ("Laine, S.", "Aila, T."), "Visual counterfactual explanations", 2022, text)
    assert c.surnames == ("Laine", "Aila")


def test_apa_et_al_at_line_start():
    c = only("Vaswani et al. (2017). Attention is all you need.")
    assert (c.style, c.authors, c.title, c.year) == ("APA", ("Vaswani",), "Attention is all you need", 2017)


def test_apa_inside_prose_and_lists():
    text = ("Missing related work:\n"
            "- Devlin, J., Chang, M.-W., Lee, K., & Toutanova, K. (2019). BERT: Pre-training of deep "
            "bidirectional transformers for language understanding. In NAACL.\n"
            "- He and Sun (2016). Deep residual learning for image recognition.\n"
            "See also Müller, K. and van der Berg, J. (2020a). Why does it work? NeurIPS.")
    cs = find_citations(text)
    assert [c.style for c in cs] == ["APA", "APA", "APA"]
    assert cs[0].authors == ("Devlin, J.", "Chang, M.-W.", "Lee, K.", "Toutanova, K.")
    assert cs[0].title == ("BERT: Pre-training of deep bidirectional transformers for language understanding")
    assert cs[0].year == 2019
    assert (cs[1].authors, cs[1].year) == (("He", "Sun"), 2016)
    assert cs[2].authors == ("Müller, K.", "van der Berg, J.")
    assert cs[2].surnames == ("Müller", "van der Berg")
    assert (cs[2].title, cs[2].year) == ("Why does it work?", 2020)


def test_mla():
    text = ('Vaswani, Ashish, et al. "Attention Is All You Need." Advances in Neural Information '
            'Processing Systems, vol. 30, 2017.')
    c = only(text)
    assert c == Citation("MLA", ("Vaswani, Ashish",), "Attention Is All You Need", 2017, text)


def test_mla_several_authors_curly_quotes_and_pages():
    text = ('[2] Tomioka, Ryota, Taiji Suzuki, and Masashi Sugiyama. “Super-linear convergence of dual '
            'augmented Lagrangian algorithm.” JMLR, vol. 12, no. 2, 2011, pp. 1537-1586. Then prose.')
    c = only(text)
    assert c.style == "MLA"
    assert c.authors == ("Tomioka, Ryota", "Taiji Suzuki", "Masashi Sugiyama")
    assert c.surnames == ("Tomioka", "Suzuki", "Sugiyama")
    assert c.title == "Super-linear convergence of dual augmented Lagrangian algorithm"
    assert c.year == 2011
    assert c.text.endswith("2011, pp. 1537-1586.")


def test_ieee():
    text = ('[3] A. Vaswani, N. Shazeer, and N. Parmar, "Attention is all you need," in Proc. NeurIPS, '
            '2017, pp. 5998–6008.')
    c = only(text)
    assert c == Citation("IEEE", ("A. Vaswani", "N. Shazeer", "N. Parmar"), "Attention is all you need", 2017, text)
    assert c.surnames == ("Vaswani", "Shazeer", "Parmar")


def test_ieee_without_number_with_particles_and_arxiv():
    c = only('As in L. van der Maaten and G. Hinton, "Visualizing data using t-SNE," J. Mach. Learn. Res., '
             'vol. 9, pp. 2579–2605, 2008.')
    assert (c.style, c.authors, c.year) == ("IEEE", ("L. van der Maaten", "G. Hinton"), 2008)
    assert c.surnames == ("van der Maaten", "Hinton")
    c = only('A. Dosovitskiy et al., "An image is worth 16x16 words," arXiv:2010.11929, 2020.')
    assert (c.authors, c.title, c.year) == (("A. Dosovitskiy",), "An image is worth 16x16 words", 2020)


@pytest.mark.parametrize("text", [
    "Smith et al. (2020) did this.",
    "This was shown in Smith et al. (2020). However, the authors ignore it.",
    "(Kingma & Ba, 2015)",
    "Smith, J. (2020) showed it without a full stop after the year.",
    'The authors say "this is robust." In 2020 we saw it.',
    'Vaswani, Ashish, et al. "Attention Is All You Need." Advances in Neural Information Processing Systems.',
    "", "No citations at all.",
])
def test_not_a_formatted_citation(text):
    assert find_citations(text) == []
    assert count_citations(text) == 0


def test_order_and_mixed_styles():
    text = ('[1] A. Vaswani and N. Shazeer, "Attention is all you need," in NeurIPS, 2017.\n'
            'Kingma, D. P., & Ba, J. (2015). Adam: A method for stochastic optimization. In ICLR.\n'
            'Smith, John, and Jane Doe. "A Study of Things." Journal of Stuff, 2019.')
    assert [(c.style, c.year) for c in find_citations(text)] == [("IEEE", 2017), ("APA", 2015), ("MLA", 2019)]
    assert count_citations(text) == 3


def test_citation_is_frozen():
    c = only("Vaswani et al. (2017). Attention is all you need.")
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.year = 2018


def test_a_numbered_reference_with_its_year_in_parentheses_is_ieee_as_the_paper_reads_it():
    # Issue 12, item 7: the PRAIB paper's IEEE expression (Appendix C.2) takes "[n] ... (YYYY)" whatever
    # the order of the names; without the number it is MLA.
    numbered = '[1] Vaswani, Ashish, et al. "Attention is all you need." Advances in Neural Information Processing Systems (2017).'
    (citation,) = find_citations(numbered)
    assert (citation.style, citation.authors, citation.year) == ("IEEE", ("Vaswani, Ashish",), 2017)
    unnumbered = 'Vaswani, Ashish, et al. "Attention is all you need." Advances in Neural Information Processing Systems, 2017.'
    assert [c.style for c in find_citations(unnumbered)] == ["MLA"]


def test_a_search_from_the_first_year_still_finds_the_references_that_reach_farthest_back():
    # count_citations(text, first_year) starts its search where the first reference could start: for a
    # quoted title, the opening quote of a 300-character title, its stop, the closing quote and 250 characters
    # of container before the year; for APA, the "(" right before it.
    title = "T" + "x" * 299
    container = " in Proc." + " v" * 120 + " "  # 250 characters, no year, no quote
    assert len(container) == 250
    quoted = f'[1] A. Vaswani, "{title},"{container}2017.'
    assert quoted.index("2017") - quoted.index('"') == 553
    apa = "Laine, S., & Aila, T. (2022). Visual counterfactual explanations. In CVPR."
    for text, expected in ((quoted, 1), (apa, 1), ("Prose first. " + apa + "\n" + quoted, 2)):
        first_year = min(text.find("2017") % len(text), text.find("2022") % len(text))
        assert count_citations(text) == expected
        assert count_citations(text, first_year) == expected


def test_quoted_titles_are_tried_only_where_one_can_begin_with_the_same_matches():
    from praib.metrics.text import citations

    def quoted(title, container="Venue, ", year="2019", opening='"', closing='"'):
        return f"{opening}{title}{closing} {container}{year}."

    texts = [
        quoted("ab"), quoted("a"), quoted("x" * 300 + "."), quoted("x" * 301), quoted("x" * 301 + "."),
        quoted("Title", container="y" * 249), quoted("Title", container="y" * 250), quoted("Title", container="y" * 251),
        quoted("Title", opening="“", closing="”"), quoted("Title", closing="“"), quoted("Ti\ntle"),
        quoted("Title", container="in \"Proc.\" "), quoted("Title", container="line\nbreak "),
        quoted("Title", year="20201"), quoted("Title", year="1799"), quoted("Title", year="v2.2019"),
        'He said "great" and "fine" then "Title," Venue 2017 and "Other." arXiv, 2020, pp. 1-2.',
        '"""' + quoted("Title") + '"' * 3, 'A "quote" 2019 "' + "z" * 400 + '" 2020 "Last." 2021',
    ]
    for text in texts:
        for start in range(0, len(text), 7):
            assert ([m.span() for m in citations._quoted_anchors(text, start)]
                    == [m.span() for m in citations._QUOTED_RE.finditer(text, start)]), (text, start)
