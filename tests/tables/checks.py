"""The check every laid-out table must pass, shared by the table tests: a cell shows its result's own value."""

from praib.tables import load_result, resolve
from praib.tables.layout import MISSING


def assert_cells_are_their_results(tables) -> int:
    """Rows as wide as the header; every cell's value is the value at its pointer in its result as
    ``load_result`` reads it (a number, a verdict's string, a flag; a leaderboard folder's pointers are into
    ``{"run", "rows"}``), or None and printed "—" where the result has none; every cell's text appears in the
    Markdown, and the LaTeX is labelled with the table's key. Returns how many cells held a value."""
    results: dict[str, object] = {}
    checked = 0
    for table in tables:
        assert all(len(row) == len(table.header) for row in table.rows), table.key
        markdown, latex = table.to_markdown(), table.to_latex()
        assert latex.startswith("\\begin{table}") and f"\\label{{tab:{table.key}}}" in latex
        for cell in table.cells():
            path, pointer = cell.source.split("#", 1)
            if path not in results:
                results[path] = load_result(path).data
            expected = resolve(results[path], pointer)
            if expected is None:
                assert cell.value is None and cell.text() == MISSING, (table.key, cell.source)
            else:
                assert cell.value == expected and type(cell.value) is type(expected), (table.key, cell.source)
                checked += 1
            assert cell.text() in markdown, (table.key, cell.source)
    return checked
