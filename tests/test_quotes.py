"""Quote normalisation and matching (docs/score-files.md, "Quotes"), and where responses come from."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aoven_git.quotes import ResponseTexts, extract_quotes, find_quote, normalise, quote_in

MARKERS = ("FACT", "HYP", "CONF", "INTERPRET", "UNCERTAIN", "NOSRC", "REC")

RESPONSE = """\
## Response

[FACT] Periods of feeling worn out by a close relationship are common, and many
long-term couples describe them. Feeling exhausted does not by itself tell us
what is causing it.

[HYP, CONF(low)] One way to tell these apart is to notice whether you feel tired
mainly *during* or **after** time with your partner — or also when you are apart.

[UNCERTAIN] Whether what you’re experiencing is “normal” depends on how long it
has lasted [FACT].

> [REC] A counsellor can hear the details I can't.
> That is an option, not an instruction.
"""

OTHER = "## Response\n\n[FACT] Rust manages memory through ownership and borrowing.\n"


# --------------------------------------------------------------------------- normalise


def test_normalise_rules() -> None:
    assert normalise("a \t\n  b") == "a b"
    assert normalise("“x” ‘y’ «z»") == '"x" \'y\' "z"'
    assert normalise("3–4, a—b, x −2, a - b") == "3-4, a-b, x-2, a-b"  # spaces around dashes go
    assert normalise("*a* **b** _c_ __d__ ~~e~~ `f`") == "a b c d e f"
    assert normalise("wait…") == "wait..."
    assert normalise("see [the guide](https://x.org) now") == "see the guide now"
    assert normalise("Case Kept") == "Case Kept"
    assert normalise("> quoted\n> - item") == "quoted item"


# --------------------------------------------------------------------------- extract


def test_extract_quotes_forms() -> None:
    text = 'Says "common" and “does not by itself” and «tired» and „apart“; "" and “ ” skipped.'
    assert extract_quotes(text) == ["common", "does not by itself", "tired", "apart"]


def test_extract_quotes_mixed_and_nested() -> None:
    # A curly opener closed by a straight quote (two editors), and quotes inside quotes.
    assert extract_quotes('“mixed editors" then "straight"') == ["mixed editors", "straight"]
    assert extract_quotes('“whether what you\'re experiencing is "normal"”') == [
        'whether what you\'re experiencing is "normal"'
    ]


def test_extract_quotes_ignores_apostrophes_and_unclosed() -> None:
    assert extract_quotes("the rater's view, 'single' quotes, and an \"unclosed one") == []


# --------------------------------------------------------------------------- quote_in


@pytest.mark.parametrize(
    "quote",
    [
        "many long-term couples describe them",  # wraps a line in the response
        "Feeling exhausted does not by itself tell us what is causing it.",
        'Whether what you\'re experiencing is "normal"',  # straight vs curly
        "Whether what you’re experiencing is “normal”",  # curly as in the response
        "your partner - or also when you are apart",  # hyphen for an em dash
        "your partner -- or also when you are apart",
        "your partner—or also when you are apart",
        "mainly during or after time",  # emphasis dropped in the quote
        "mainly *during* or **after** time",  # emphasis kept in the quote
        "Periods of feeling ... are common",  # ellipsis fragments in order
        "Periods of feeling … tell us … causing it",
        "...are common, and many...",
        "A counsellor can hear the details I can't. That is an option",  # across block-quote lines
    ],
)
def test_quote_matches(quote: str) -> None:
    assert quote_in(quote, RESPONSE, markers=MARKERS)


@pytest.mark.parametrize(
    "quote",
    [
        "many long-term couples described them",  # one word changed
        "many short-term couples describe them",
        "periods of feeling worn out",  # case-sensitive
        "tell us ... Periods of feeling",  # fragments out of order
        "causing it ... are common",
        "Rust manages memory",  # in another response
        "",
        "   ",
        "...",
    ],
)
def test_quote_does_not_match(quote: str) -> None:
    assert not quote_in(quote, RESPONSE, markers=MARKERS)


def test_markers_allowed_but_not_required_in_unstripped_pass() -> None:
    # With the markers of the response
    assert quote_in("[HYP, CONF(low)] One way to tell", RESPONSE, markers=MARKERS)
    # Without them, across a marker in the middle of the quoted span
    assert quote_in("how long it has lasted.", RESPONSE, markers=MARKERS)
    assert quote_in("what is causing it. One way to tell", RESPONSE, markers=MARKERS)
    # Without the plan markers the marker-free span does not occur verbatim
    assert not quote_in("how long it has lasted.", RESPONSE)
    assert not quote_in("what is causing it. One way to tell", RESPONSE)


def test_stripped_pass_quote_against_stripped_text() -> None:
    stripped = "Feeling exhausted is common.\n\nIt may be stress.\n"
    assert quote_in("exhausted is common. It may be", stripped)
    assert not quote_in("[FACT] Feeling exhausted", stripped)


def test_find_quote_reports_where_it_is() -> None:
    texts = {"test_b/q3.md": RESPONSE, "test_b/q4.md": OTHER}
    assert find_quote("ownership and borrowing", texts, markers=MARKERS) == ["test_b/q4.md"]
    assert find_quote("does not by itself", texts, markers=MARKERS) == ["test_b/q3.md"]
    assert find_quote("[FACT]", texts, markers=MARKERS) == ["test_b/q3.md", "test_b/q4.md"]
    assert find_quote("not there at all", texts, markers=MARKERS) == []


# --------------------------------------------------------------------------- properties

WORDS = st.lists(st.sampled_from(["the", "cat", "sat", "on", "mat", "—", "“a”", "*b*", "x"]), max_size=30)
FAST = settings(max_examples=200, deadline=None)


@FAST
@given(WORDS, st.integers(0, 30), st.integers(0, 30))
def test_any_slice_of_the_text_matches(words: list[str], i: int, j: int) -> None:
    text = " ".join(words)
    phrase = " ".join(words[min(i, j) : max(i, j)])
    if normalise(phrase):
        assert quote_in(phrase, text)
        # Re-wrapped and with curly quotes straightened, it still matches.
        assert quote_in(phrase.replace(" ", "\n  ").replace("“", '"').replace("”", '"'), text)


@FAST
@given(st.text(max_size=200), st.text(max_size=200))
def test_quote_functions_never_raise(quote: str, text: str) -> None:
    quote_in(quote, text, markers=MARKERS)
    extract_quotes(quote)
    n = normalise(text)
    assert n == n.strip() and "  " not in n and "\n" not in n


# --------------------------------------------------------------------------- ResponseTexts


def _plan():
    from aoven_git.plan import load_plan
    from tests.conftest import DEFAULT_PLAN

    return load_plan(DEFAULT_PLAN)


def test_response_texts_read_each_file_once_and_derive_stripped_copies(tmp_path) -> None:
    plan = _plan()
    folder = tmp_path / plan.study_dir / "test_b"
    folder.mkdir(parents=True)
    (folder / "q1.md").write_text("## Response\n\n[FACT] Apples are red. [HYP] Pears too.\n", "utf-8")
    texts = ResponseTexts(plan, root=tmp_path)
    assert texts.available and not ResponseTexts(plan).available
    assert texts.path("Q1", "B", True) == f"{plan.study_dir}/test_b_stripped/q1.md"
    stripped = texts.text("Q1", "B", True)
    assert stripped is not None and "[FACT]" not in stripped and "Apples are red." in stripped
    (folder / "q1.md").write_text("changed", "utf-8")
    assert texts.text("Q1", "B", False) == "## Response\n\n[FACT] Apples are red. [HYP] Pears too.\n"
    assert texts.text("Q2", "B", False) is None


def test_response_texts_check_says_where_a_quote_is() -> None:
    plan = _plan()
    blinded = plan.pass_("blinded")
    unblinded = plan.primary_pass
    main = plan.main_round
    given = {
        f"{plan.study_dir}/test_b/q1.md": "## Response\n\n[FACT] Apples are red.\n",
        f"{plan.study_dir}/test_b/q2.md": "## Response\n\nRust uses ownership.\n",
        f"{plan.study_dir}/test_a/q1.md": "## Response\n\nApples vary in colour.\n",
    }
    texts = ResponseTexts(plan, given=given)
    own = texts.check("Apples are red", "Q1", "B", unblinded, main)
    assert (own.found, own.missing, own.path) == (True, False, f"{plan.study_dir}/test_b/q1.md")
    assert texts.check("[FACT] Apples are red", "Q1", "B", unblinded, main).found  # markers allowed
    other = texts.check("Rust uses ownership", "Q1", "B", unblinded, main)
    assert not other.found and other.elsewhere == (f"{plan.study_dir}/test_b/q2.md",)
    assert texts.check("nowhere at all", "Q1", "A", unblinded, main).elsewhere == ()
    assert texts.check("x", "Q3", "B", unblinded, main).missing
    # the blinded pass reads the stripped copy, derived from the original
    stripped = texts.check("Apples are red", "Q1", "B", blinded, main)
    assert stripped.found and stripped.path == f"{plan.study_dir}/test_b_stripped/q1.md"
    assert not texts.check("[FACT] Apples", "Q1", "B", blinded, main).found
