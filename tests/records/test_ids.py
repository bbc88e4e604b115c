"""The id recipe saved records depend on: golden digests from coreutils ``sha1sum``."""

from praib.records.ids import hash_id, record_id


def test_hash_id_is_the_leading_hex_digits_of_sha1():
    # printf '%s' abc | sha1sum  ->  a9993e364706816aba3e25717850c26c9cd0d89d
    assert hash_id("abc") == "a9993e364706816a"
    assert hash_id("abc", length=12) == "a9993e364706"


def test_record_id_hashes_json_with_sorted_keys():
    # printf '%s' '["a", {"x": 1, "y": 2}]' | sha1sum  ->  8d00888295031edc0d67dcd7b5242824c80f3fc4
    assert record_id(["a", {"y": 2, "x": 1}]) == "8d00888295031edc"
