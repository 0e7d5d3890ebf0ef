"""What counts as a copy of a blind key (aoven_git/key_copies.py): shape, nonce, id→condition pairs;
and what does not (a rater's blind sheet, a wrong guess, the docs' example). Fuzzed: any bytes give
an answer, never an exception."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from aoven_git.blinding import BlindKey, KeyEntry
from aoven_git.key_copies import copied_passes, pairs_mapping, secret_of

IDS = {"c4mxq0z7k2ab": ("Q1", "A"), "d5nyr1a8l3bc": ("Q1", "B"), "e6ozs2b9m4cd": ("Q2", "A"),
       "f7pat3c0n5de": ("Q2", "B")}
NONCE = "0123456789abcdef0123456789abcdef"
KEY = BlindKey("hidden", NONCE, tuple(KeyEntry(i, q, c, "0" * 64) for i, (q, c) in sorted(IDS.items())))
KEY_BYTES = KEY.to_json()
SECRET = secret_of("hidden", KEY_BYTES)
BLIND = ["hidden"]


def copies(data: bytes) -> list[str]:
    assert SECRET is not None
    return copied_passes(BLIND, data, [SECRET])


def test_the_secret_of_a_real_key() -> None:
    assert SECRET is not None and SECRET.nonce == NONCE.encode()
    assert SECRET.conditions == {i.encode(): c.encode() for i, (_, c) in IDS.items()}


def test_the_key_itself_and_a_reformatted_key_are_copies() -> None:
    assert copies(KEY_BYTES) == ["hidden"]
    doc = json.loads(KEY_BYTES)
    assert copies(json.dumps(doc, indent=None).encode()) == ["hidden"]
    del doc["format"], doc["nonce"]
    assert copies(json.dumps(doc["entries"], indent=8).encode()) == ["hidden"]  # the entries alone


def test_a_key_shape_is_a_copy_before_the_key_is_committed() -> None:
    """Before `unblind` nothing but the shape can tell: the format line and a real nonce."""
    assert copied_passes(BLIND, KEY_BYTES, []) == ["hidden"]
    example = b'{"format": "aoven-git blind key v1", "nonce": "<32 hex digits>", "pass": "P"}'
    assert copied_passes(BLIND, example, []) == []


def test_pairs_in_prose_or_a_table_are_a_copy() -> None:
    prose = b"c4mxq0z7k2ab is A, d5nyr1a8l3bc is B, the rest I do not know"
    table = b"| c4mxq0z7k2ab | A |\n| f7pat3c0n5de | B |\n"
    assert copies(prose) == ["hidden"] and copies(table) == ["hidden"]


def test_a_blind_sheet_or_wrong_guesses_are_no_copy() -> None:
    """(One pair stated is a copy of that item's mapping: tests/test_key_copies_pairs.py.)"""
    sheet = "".join(f"| {i} | 1 | 2 | 3 |\n" for i in IDS).encode()
    assert copies(b"| id | D1 | D2 | \xce\xa3 |\n|---|---|---|---|\n" + sheet) == []
    wrong = b"c4mxq0z7k2ab: B\nd5nyr1a8l3bc: A\ne6ozs2b9m4cd: B\nf7pat3c0n5de: A\n"
    assert copies(wrong) == []
    half = b"c4mxq0z7k2ab: A\nd5nyr1a8l3bc: A\ne6ozs2b9m4cd: A\nf7pat3c0n5de: A\n"
    assert not pairs_mapping(SECRET, half)  # 2 right, 2 wrong: a constant guess, no copy


def test_the_nonce_alone_is_a_copy() -> None:
    assert copies(b"backup: " + NONCE.encode()) == ["hidden"]


@given(st.binary(max_size=2000))
def test_any_bytes_give_an_answer(data: bytes) -> None:
    assert copies(data) in ([], ["hidden"])
    assert secret_of("hidden", data) is None or secret_of("hidden", data).pass_id == "hidden"


def test_odd_key_bytes_have_no_secret() -> None:
    for data in (b"[" * 200_000, b"[]", b'"x"', b'{"nonce": 5}', b"\xff\xfe", b"", None):
        assert secret_of("hidden", data) is None
