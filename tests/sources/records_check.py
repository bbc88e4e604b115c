"""Comparing imported records with hand-written ones (the OpenReview collection and dump-import tests)."""


def assert_records(actual, expected):
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        for field, value in got.items():
            default = [] if isinstance(value, list) else None
            assert value == want.get(field, default), (got.get("review_id") or got["paper_id"], field)
