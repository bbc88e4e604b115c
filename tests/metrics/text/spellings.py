"""Every spelling of a keyword of the cross-reference expressions, for the tests that the batch engine's keyword runs
cover them (test_xref.py, test_paper_xref.py)."""

import itertools

try:
    from re import _parser as regex_parser  # Python 3.11+
except ImportError:  # Python 3.10
    import sre_parse as regex_parser

__all__ = ["regex_parser", "spellings"]


def spellings(parsed) -> list[str]:
    """Every string that a parsed expression without unbounded repeats matches (look-arounds
    ignored, so a superset where it has them)."""
    found = [""]
    for op, arg in parsed:
        if op.name == "LITERAL":
            options = [chr(arg)]
        elif op.name == "IN":
            options = []
            for item_op, item in arg:
                assert item_op.name in ("LITERAL", "RANGE"), item_op
                low, high = (item, item) if item_op.name == "LITERAL" else item
                options += [chr(c) for c in range(low, high + 1)]
        elif op.name == "BRANCH":
            options = [s for branch in arg[1] for s in spellings(branch)]
        elif op.name == "SUBPATTERN":
            options = spellings(arg[-1])
        elif op.name in ("MAX_REPEAT", "MIN_REPEAT"):
            low, high, item = arg
            assert high < 10, "unbounded repeat"
            once = spellings(item)
            options = []
            for n in range(low, high + 1):
                options += ["".join(p) for p in itertools.product(once, repeat=n)]
        elif op.name in ("ASSERT", "ASSERT_NOT"):
            continue
        else:
            raise AssertionError(f"cannot enumerate {op.name}")
        found = [f + o for f in found for o in options]
    return found
