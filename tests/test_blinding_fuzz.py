"""Fuzzing the blinding core: arbitrary responses, texts and key files never crash it.

Inputs mix random text with the pieces the parsers care about (headings, fences, markers, the
`[Aoven …]` line, line ends, condition words), so the interesting paths are reached quickly.
"""

from __future__ import annotations

import random
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aoven_git.blinding import (
    BlindKey,
    Corpus,
    Item,
    KeyEntry,
    KeyProblem,
    build_corpus,
    leaks,
    normalise,
    parse_key,
)
from aoven_git.errors import FindingsError
from tests.conftest import PLAN_MARKERS

PIECES = [
    "# Q1 — Condition B (Aoven-framed)", "## Prompt", "## Response", "Response", "===", "---",
    "[Aoven v0.1 | require: FACT]", "[FACT]", "[HYP, CONF(low)]", "[FACT.M]", "[NOSRC on x]", "[ASSUMPTION]",
    "```", "~~~", "`", "    ", "\t", " ", "\n", "\r\n", "\r", "\n\n\n", "> ", "- ", "**", "_", "\\",
    "[x](http://e.org)", "[FACT]: http://e.org", "Condition A", "test_b", "tests B", "aoven", "\ufeff",
    "\x0b", "\x85", "\u2028", "\xa0", "é", "word", "Why?",
]
documents = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=12)), max_size=40).map("".join)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
QUESTION = "Is it so?"


@FUZZ
@given(documents, st.text(min_size=1, max_size=30).filter(str.strip))
def test_normalise_never_crashes_and_keeps_its_layout(document: str, question: str) -> None:
    out = normalise(document, PLAN_MARKERS, question)
    assert out.startswith("## Question\n\n") and out.endswith("\n") and not out.endswith("\n\n")
    assert "\r" not in out and "\n\n\n" not in out
    assert all(line == line.rstrip() for line in out.split("\n"))
    assert "\n\n## Response\n" in out


@FUZZ
@given(documents)
def test_normalise_is_idempotent(document: str) -> None:
    once = normalise(document, PLAN_MARKERS, QUESTION)
    assert normalise(once, PLAN_MARKERS, QUESTION) == once


@FUZZ
@given(documents)
def test_leaks_never_crash_and_point_into_the_text(text: str) -> None:
    found = leaks(text, PLAN_MARKERS, [r"(?i)epistemic"])
    lines = re.split(r"\r\n|\r|\n", text)
    for x in found:  # each leak points at what it quotes
        assert 1 <= x.line <= len(lines) and x.column >= 1 and x.excerpt
        assert lines[x.line - 1][x.column - 1 :].startswith(x.excerpt.removesuffix("…"))
    protocol = re.search(r"(?i)(?<![^\W_])aoven", text) is not None
    assert protocol == any(x.kind in ("protocol-word", "aoven-header") for x in found)


@FUZZ
@given(documents)
def test_blinded_text_of_any_response_is_refused_or_clean(document: str) -> None:
    data = document.encode("utf-8", "surrogatepass")
    item = Item("Q1", "A", QUESTION, data, "test_a/q1.md")
    try:
        result = build_corpus([item], PLAN_MARKERS, rng=random.Random(0), pass_id="p")
    except FindingsError:  # lone surrogates are not UTF-8: refused with a line, as asked
        assert b"\xed" in data
        return
    n_lines = len(re.split(r"\r\n|\r|\n", document))
    if isinstance(result, Corpus):
        assert leaks(next(iter(result.files.values())).decode(), PLAN_MARKERS, conditions=("A",)) == []
    else:
        assert result and all(h.line is None or 1 <= h.line <= n_lines for h in result)


KEY = BlindKey("blind", "0" * 32, (KeyEntry("c4mxq0z7k2ab", "Q1", "B", "a" * 64),
                                   KeyEntry("k9w3h8r2t6ye", "Q1", "A", "b" * 64))).to_json()


@FUZZ
@given(st.binary(max_size=300))
def test_parse_key_never_crashes_on_bytes(data: bytes) -> None:
    result = parse_key(data)
    assert isinstance(result, KeyProblem | BlindKey)
    if isinstance(result, KeyProblem):
        assert result.line >= 1 and result.message


@FUZZ
@given(st.integers(0, len(KEY)), st.integers(0, 8), st.binary(max_size=8))
def test_edited_keys_are_rejected_or_identical(at: int, cut: int, insert: bytes) -> None:
    data = KEY[:at] + insert + KEY[at + cut :]
    result = parse_key(data)
    if isinstance(result, BlindKey):
        assert result.to_json() == data  # only the canonical bytes are ever accepted
    else:
        assert 1 <= result.line <= data.count(b"\n") + 1
