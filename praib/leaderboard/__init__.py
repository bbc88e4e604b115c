"""Leaderboard of LLM reviewers: submissions, full scored runs with bootstrap intervals, paired comparisons of the
submissions, and era analysis.

The comparisons are reachable from here, loaded on first use (importing the package stays light):
:func:`load_comparison` reads them from a run folder, :func:`compare_submissions` computes them for submissions in
memory; both give a :class:`Comparison` (:mod:`praib.leaderboard.compare`)."""

_COMPARISONS = ("Comparison", "PairedDifference", "RankInterval", "compare_submissions", "load_comparison")


def __getattr__(name):
    if name in _COMPARISONS:
        from praib.leaderboard import compare

        return getattr(compare, name)
    raise AttributeError(f"module 'praib.leaderboard' has no attribute {name!r}")
