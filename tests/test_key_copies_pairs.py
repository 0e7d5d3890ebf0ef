"""A single blind id ↔ condition pair is a copy of that item's key (aoven_git/key_copies.py,
`stated_pairs`): in prose, tables, JSON, YAML comments, ref names, either way round; and what
states nothing — an id beside a capital letter in prose, a blind sheet, a guess as often wrong
as right. Fuzzed: any bytes give an answer, never an exception."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aoven_git.blinding import BlindKey, KeyEntry
from aoven_git.key_copies import copied_passes, secret_of, stated_pairs, states_a_pair

IDS = {"c4mxq0z7k2ab": ("Q1", "A"), "d5nyr1a8l3bc": ("Q1", "B"), "e6ozs2b9m4cd": ("Q2", "A"),
       "f7pat3c0n5de": ("Q2", "B")}
KEY = BlindKey("hidden", "0123456789abcdef0123456789abcdef",
               tuple(KeyEntry(i, q, c, "0" * 64) for i, (q, c) in sorted(IDS.items())))
SECRET = secret_of("hidden", KEY.to_json())


def pairs(data: bytes) -> tuple[int, int]:
    assert SECRET is not None
    return stated_pairs(SECRET, data)


@pytest.mark.parametrize("text", [
    b"c4mxq0z7k2ab is A",
    b"c4mxq0z7k2ab: A\n",
    b"c4mxq0z7k2ab -> A",
    "c4mxq0z7k2ab → A".encode(),
    b"c4mxq0z7k2ab (condition A)",
    b"c4mxq0z7k2ab = test_A",
    b"| c4mxq0z7k2ab | A |",
    b"| A | c4mxq0z7k2ab |",
    b"A: c4mxq0z7k2ab",
    b'{"c4mxq0z7k2ab": {"condition": "A"}}',
    b"aoven.yaml comment:\n# c4mxq0z7k2ab: A\n",
    b"refs/heads/c4mxq0z7k2ab-A",
    b"refs/tags/A/c4mxq0z7k2ab",
    b"c4mxq0z7k2ab is A and the rest I do not know",
])
def test_one_stated_pair_is_a_copy_of_that_item(text: bytes) -> None:
    assert pairs(text) == (1, 0)
    assert copied_passes(["hidden"], text, [SECRET]) == ["hidden"]


@pytest.mark.parametrize("text", [
    b"Item c4mxq0z7k2ab. A long answer.",              # a full stop ends the statement
    b"c4mxq0z7k2ab: A rater asked about it",           # `A` followed by a word is an article
    b"| c4mxq0z7k2ab | A bit long. |",
    b"| c4mxq0z7k2ab | 2 | 1 | 3 | B |",               # a blind sheet row with a note: digits between
    b"c4mxq0z7k2ab and d5nyr1a8l3bc read well",        # no condition at all
    b"B-grade prose in c4mxq0z7k2ab",                  # `B-grade` is a word, not a condition
    b"c4mxq0z7k2abA",                                  # no token boundary
])
def test_prose_and_sheets_that_mention_ids_state_no_pair(text: bytes) -> None:
    assert pairs(text)[0] == 0
    assert copied_passes(["hidden"], text, [SECRET]) == []


def test_a_wrong_pair_or_a_guess_as_often_wrong_as_right_is_no_copy() -> None:
    assert pairs(b"c4mxq0z7k2ab is B") == (0, 1)
    guess = b"c4mxq0z7k2ab is A, d5nyr1a8l3bc is A"  # one right, one wrong: a constant guess
    assert pairs(guess) == (1, 1) and not states_a_pair(SECRET, guess)
    assert pairs(b"c4mxq0z7k2ab is A or B") == (0, 0)  # shown with both conditions: states nothing


def test_the_whole_key_states_every_pair() -> None:
    assert pairs(KEY.to_json()) == (4, 0)


def test_no_conditions_known_states_nothing() -> None:
    empty = secret_of("hidden", b'{"nonce": "0123456789abcdef0123456789abcdef", "entries": {}}')
    assert empty is not None and stated_pairs(empty, b"c4mxq0z7k2ab is A") == (0, 0)


def test_a_long_run_of_link_characters_is_read_in_linear_time() -> None:
    """The link between an id and its condition is bounded and made of disjoint single-character
    alternatives: no catastrophic backtracking on a file of separators."""
    data = b"c4mxq0z7k2ab" + b" |-:" * 200_000 + b"x"
    start = time.perf_counter()
    assert pairs(data) == (0, 0)
    assert time.perf_counter() - start < 5


@given(st.binary(max_size=2000))
def test_any_bytes_give_an_answer(data: bytes) -> None:
    right, wrong = pairs(data)
    assert 0 <= right + wrong <= len(IDS)
