"""The evaluate modules of metrics/ and running a card's doctest examples, for the card and export tests."""

import doctest

from tests.paths import METRICS

MODULES = sorted(p.name for p in METRICS.iterdir() if p.is_dir())
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def run_examples(text: str, name: str, globs: dict) -> doctest.TestResults:
    test = doctest.DocTestParser().get_doctest(text, globs, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    return runner.summarize(verbose=False)
