"""Marker grammar, stripping and counting (docs/commands.md).

Expected outputs are written out by hand: they are what a rater of the blinded pass must see.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aoven_git.markers import (
    MarkerToken,
    UnknownToken,
    count_markers,
    find_tokens,
    response_text,
    strip_response,
    strip_text,
)
from tests.conftest import PLAN_MARKERS


def strip(text: str) -> str:
    return strip_text(text, PLAN_MARKERS).text


# --------------------------------------------------------------------------- token forms


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # plain and argument forms
        ("[FACT] Feeling drained is common.", "Feeling drained is common."),
        ("[CONF(high)] The cutoff is fixed.", "The cutoff is fixed."),
        ("[CONF(low-to-medium)] More disorders will be treatable.", "More disorders will be treatable."),
        # stacked and adjacent
        ("[HYP, CONF(low)] It may be stress at work.", "It may be stress at work."),
        ("[INTERPRET][CONF(medium)] People often mean conflict.", "People often mean conflict."),
        ("[MEMORY][NOSRC] I have no record of that.", "I have no record of that."),
        ("[INTERPRET] [CONF(medium)] Spaced apart.", "Spaced apart."),
        # qualified
        ("[NOSRC on specific episodes] I don't know your relationship.", "I don't know your relationship."),
        (
            "[FACT for the fiscal data; INTERPRET for how much they explain] Strain is part of it.",
            "Strain is part of it.",
        ),
        # compressed
        ("[FACT.M] APOE e4 is the largest known risk factor.", "APOE e4 is the largest known risk factor."),
        ("[HYP.L] Missing features could be added.", "Missing features could be added."),
        ("[FACT?] Modifiable factors account for a share.", "Modifiable factors account for a share."),
        # trailing markers and punctuation
        ("Periods of fatigue are common [FACT].", "Periods of fatigue are common."),
        ("It may be stress [HYP, CONF(low)], or not.", "It may be stress, or not."),
        ("Is it normal [UNCERTAIN]?", "Is it normal?"),
        ("It varies (by person [FACT]) a lot.", "It varies (by person) a lot."),
        ("The trial was small [FACT]", "The trial was small"),
        # in the middle of a sentence
        ("The trial [FACT] did not measure hair loss.", "The trial did not measure hair loss."),
        ("Rust [FACT]is memory-safe.", "Rust is memory-safe."),
        ("Rust[FACT] is memory-safe.", "Rust is memory-safe."),
        ("It ended.[FACT]Then it began.", "It ended. Then it began."),
        ("It may be X [FACT]; [HYP] it may be Y.", "It may be X; it may be Y."),
        ("Either [FACT] / [HYP] applies.", "Either applies."),
        # empty wrappers go with the marker
        ("**[FACT]** Rust has no garbage collector.", "Rust has no garbage collector."),
        ("*[HYP]:* It may help.", "It may help."),
        ("Latency matters ([FACT]) for trading.", "Latency matters for trading."),
        ("**Rust has no GC [FACT]** but Go does.", "**Rust has no GC** but Go does."),
        ("~~[SPEC]~~ Gene editing might spread.", "Gene editing might spread."),
        # line-start labels and structure
        ("- [FACT] Rust has ownership.", "- Rust has ownership."),
        ("- [FACT]: Rust has ownership.", "- Rust has ownership."),
        ("1. [REC] Prototype both.", "1. Prototype both."),
        ("> [LIMIT] I can't see other chats.", "> I can't see other chats."),
        ("## [SPEC] Outlook", "## Outlook"),
        ("  [HYP] Indented continuation.", "  Indented continuation."),
        ("[FACT] — Both are memory-safe.", "Both are memory-safe."),
        ("[FACT], [HYP] Both apply here.", "Both apply here."),
        ("| [FACT] | Rust | Go |", "| | Rust | Go |"),
        ("| Rust is safe [FACT] | yes |", "| Rust is safe | yes |"),
        # escaped brackets render as a marker too
        (r"\[FACT\] Escaped.", "Escaped."),
    ],
)
def test_marker_forms_are_stripped(before: str, after: str) -> None:
    assert strip(before) == after


@pytest.mark.parametrize(
    "text",
    [
        "See [the FAO report](https://www.fao.org/report) for details.",
        "See [FACT](https://example.org/fact) as a link text.",
        "An image ![FACT chart](chart.png) here.",
        "A URL with a bracket [docs](https://x.org/a[FACT]b) stays.",
        "A footnote[^1] and a citation [1] and [2, 3].",
        "- [ ] open task\n- [x] done task\n",
        "This needs a source [citation needed].",
        "A lower-case [fact] is not a marker, nor is [Fact] or [hyp].",
        "Use `[FACT]` to mark facts, or ``[HYP] with `ticks` ``.",
        "A word that merely starts with a marker: [FACTS], [FACTUAL], [CONFIDENT], [RECx].",
        "[Aoven v0.1 | require: FACT, HYP, CONF | use UNCERTAIN or NOSRC where applicable]",
        "Empty [] and spaced [ ] brackets.",
        "A stray ] then an unclosed [FACT with no end.",
    ],
)
def test_non_marker_brackets_untouched(text: str) -> None:
    result = strip_text(text, PLAN_MARKERS)
    assert result.text == text
    assert result.removed == 0


def test_reference_link_label_kept_only_when_defined() -> None:
    defined = "Read [the review][FACT] first.\n\n[FACT]: https://example.org/review\n"
    assert strip(defined) == defined
    # Without a definition `[FACT]` is not a link label, just a marker after a bracket.
    assert strip("It needs a source [citation needed][FACT].") == "It needs a source [citation needed]."


def test_label_colon_is_not_a_definition() -> None:
    # CommonMark: a definition needs a destination and nothing but a title after it.
    assert strip("[FACT]: The sky is blue.\n") == "The sky is blue.\n"
    definition = '[FACT]: https://example.org/fact "Fact"\n'
    assert strip(definition) == definition


def test_marker_followed_by_reference_keeps_the_reference() -> None:
    assert strip("One trial found a rise [FACT][1].") == "One trial found a rise [1]."


def test_case_sensitive_and_plan_specific() -> None:
    assert strip_text("[FACT] a [HYP] b", ["FACT"]).text == "a [HYP] b"
    assert strip_text("[FACT] a", []).text == "[FACT] a"
    assert strip_text("[fact] a", PLAN_MARKERS).removed == 0


def test_prefix_marker_needs_word_boundary() -> None:
    # `CON` is a prefix of `CONF`: a plan with both must take the whole word.
    assert strip_text("[CONF(low)] x [CON] y", ["CON"]).text == "[CONF(low)] x y"


# --------------------------------------------------------------------------- lines


def test_marker_only_line_is_dropped_with_one_blank_line() -> None:
    text = "First paragraph.\n\n[CONF(medium)]\n\nSecond paragraph.\n"
    assert strip(text) == "First paragraph.\n\nSecond paragraph.\n"


def test_marker_only_line_inside_paragraph_is_dropped() -> None:
    text = "Line one.\n[FACT]\nLine two.\n"
    assert strip(text) == "Line one.\nLine two.\n"


def test_marker_only_list_item_and_heading_dropped() -> None:
    text = "- [FACT]\n- Rust is safe.\n## [SPEC]\nText.\n"
    assert strip(text) == "- Rust is safe.\nText.\n"


def test_existing_blank_lines_untouched() -> None:
    text = "A [FACT].\n\n\n\nB.\n   \n"
    assert strip(text) == "A.\n\n\n\nB.\n   \n"


def test_line_endings_preserved() -> None:
    assert strip("[FACT] a\r\n[HYP]\r\nb [REC]\r\n") == "a\r\nb\r\n"
    assert strip("[FACT] a\rb [HYP]\r") == "a\rb\r"


def test_no_other_character_changes() -> None:
    text = "Café — naïve “quotes” and 3–4 … [FACT] ✓ tabs\there.\n"
    assert strip(text) == "Café — naïve “quotes” and 3–4 … ✓ tabs\there.\n"


def test_removed_counts_tokens() -> None:
    result = strip_text("[HYP, CONF(low)] a [INTERPRET][CONF(medium)] b [SOURCE]", PLAN_MARKERS)
    assert result.removed == 3
    assert result.text == "a b [SOURCE]"


# --------------------------------------------------------------------------- unknown tokens


def test_unknown_tokens_reported_with_line_and_kept() -> None:
    text = (
        "[FACT] Known.\n"
        "\n"
        "[SOURCE] Where it came from.\n"
        "Guessing [GUESS, CONF(low)] here, and [FACTS] too.\n"
        "Not reported: [citation needed], [1], [Q3], [x], [AI-generated].\n"
    )
    result = strip_text(text, PLAN_MARKERS)
    assert result.unknown == (
        UnknownToken(3, "[SOURCE]"),
        UnknownToken(4, "[GUESS, CONF(low)]"),
        UnknownToken(4, "[FACTS]"),
    )
    assert "[SOURCE] Where" in result.text
    assert "[GUESS, CONF(low)]" in result.text


def test_unknown_before_known_marker_does_not_shield_it() -> None:
    # `[GUESS][CONF(low)]` is not a reference link: the known marker still goes.
    result = strip_text("It may be [GUESS][CONF(low)] true.", PLAN_MARKERS)
    assert result.text == "It may be [GUESS] true."
    assert result.unknown == (UnknownToken(1, "[GUESS]"),)


# --------------------------------------------------------------------------- documents

RESPONSE_DOC = """\
# Q3 — Condition B (Aoven-framed)

## Prompt

[Aoven v0.1 | require: FACT, HYP, CONF | use UNCERTAIN or NOSRC where applicable]
My relationship feels exhausting. Is that normal? Please mark [FACT] and [HYP].

## Response

[FACT] Feeling drained by a close relationship is common.

[HYP, CONF(low)] It may be stress from outside the relationship [SOURCE].

```text
[FACT] inside a fence stays
```

~~~
[HYP] tilde fence too
~~~

[REC] Talk to someone you trust, see [this guide](https://example.org/guide).
"""

RESPONSE_DOC_STRIPPED = """\
# Q3 — Condition B (Aoven-framed)

## Prompt

[Aoven v0.1 | require: FACT, HYP, CONF | use UNCERTAIN or NOSRC where applicable]
My relationship feels exhausting. Is that normal? Please mark [FACT] and [HYP].

## Response

Feeling drained by a close relationship is common.

It may be stress from outside the relationship [SOURCE].

```text
[FACT] inside a fence stays
```

~~~
[HYP] tilde fence too
~~~

Talk to someone you trust, see [this guide](https://example.org/guide).
"""


def test_strip_response_only_touches_response_part() -> None:
    result = strip_response(RESPONSE_DOC, PLAN_MARKERS)
    assert result.text == RESPONSE_DOC_STRIPPED
    assert result.removed == 3
    assert result.unknown == (UnknownToken(12, "[SOURCE]"),)


def test_count_markers_in_response_part() -> None:
    counts = count_markers(RESPONSE_DOC, PLAN_MARKERS)
    # Prompt line and fenced code are not counted; the stacked token counts HYP and CONF.
    assert counts == {"FACT": 1, "HYP": 1, "CONF": 1, "REC": 1}
    assert counts["EMOTION"] == 0


def test_count_stacked_qualified_and_compressed() -> None:
    doc = (
        "## Response\n"
        "[FACT for the fiscal data; INTERPRET for how much they explain] a\n"
        "[FACT.M] b [HYP.L] c [FACT?] d\n"
        "[NOSRC on specific episodes, CONF(low)] e\n"
        "[INTERPRET][CONF(medium)] f\n"
        "[FACT for A, B and HYP] g\n"
    )
    assert count_markers(doc, PLAN_MARKERS) == {
        "FACT": 4,
        "INTERPRET": 2,
        "HYP": 1,
        "NOSRC": 1,
        "CONF": 2,
    }


def test_find_tokens_positions() -> None:
    doc = "## Response\n\nIt may be [HYP, CONF(low)].\n"
    assert find_tokens(doc, PLAN_MARKERS) == (MarkerToken(3, 11, "[HYP, CONF(low)]", ("HYP", "CONF")),)


def test_response_heading_any_level_and_setext() -> None:
    atx = "# Title [FACT]\n\nIntro [FACT].\n\n#### Response (B)\n[FACT] a\n"
    assert (
        strip_response(atx, PLAN_MARKERS).text == "# Title [FACT]\n\nIntro [FACT].\n\n#### Response (B)\na\n"
    )
    upper = "Intro [FACT].\n\n## RESPONSES\n[FACT] a\n"
    assert strip_response(upper, PLAN_MARKERS).text == "Intro [FACT].\n\n## RESPONSES\na\n"
    # A word that merely starts with "Respons" is no response heading (line 1 is then the title).
    not_it = "## Responsibility [FACT]\n[FACT] a\n"
    assert strip_response(not_it, PLAN_MARKERS).text == "## Responsibility [FACT]\na\n"
    setext = "Intro [FACT].\n\nResponse\n--------\n[FACT] a\n"
    assert strip_response(setext, PLAN_MARKERS).text == "Intro [FACT].\n\nResponse\n--------\na\n"


def test_response_heading_inside_fence_is_not_a_heading() -> None:
    doc = "```\n## Response\n```\n[FACT] a\n"
    # No real response heading: the whole file outside the fence is the response part.
    assert strip_response(doc, PLAN_MARKERS).text == "```\n## Response\n```\na\n"


def test_without_response_heading_keeps_header_and_prompt() -> None:
    doc = (
        "# Q5 [FACT]\n"
        "\n"
        "[Aoven v0.1 | require: FACT, HYP] [FACT]\n"
        "Did inequality cause the revolution? Use [HYP].\n"
        "\n"
        "[FACT] The crown faced a fiscal crisis.\n"
        "\n"
        "```\n[HYP] code\n```\n"
    )
    expected = (
        "# Q5 [FACT]\n"
        "\n"
        "[Aoven v0.1 | require: FACT, HYP] [FACT]\n"
        "Did inequality cause the revolution? Use [HYP].\n"
        "\n"
        "The crown faced a fiscal crisis.\n"
        "\n"
        "```\n[HYP] code\n```\n"
    )
    assert strip_response(doc, PLAN_MARKERS).text == expected
    assert count_markers(doc, PLAN_MARKERS) == {"FACT": 1}


def test_prompt_section_kept_without_response_heading() -> None:
    doc = "## Prompt\n\nUse [FACT].\n\n## Answer\n\n[FACT] Yes.\n"
    assert strip_response(doc, PLAN_MARKERS).text == "## Prompt\n\nUse [FACT].\n\n## Answer\n\nYes.\n"


def test_response_text() -> None:
    text = response_text(RESPONSE_DOC)
    assert text.startswith("\n[FACT] Feeling drained")
    assert "Please mark" not in text
    assert "[FACT] inside a fence stays" in text
    assert response_text("just text\n") == "just text\n"


def test_unclosed_fence_protects_rest() -> None:
    doc = "## Response\n[FACT] a\n```\n[FACT] b\n"
    assert strip_response(doc, PLAN_MARKERS).text == "## Response\na\n```\n[FACT] b\n"


def test_fence_inside_list_and_blockquote() -> None:
    doc = "## Response\n- [FACT] item\n  ```\n  [FACT] code\n  ```\n> ```\n> [HYP] q\n> ```\n"
    expected = "## Response\n- item\n  ```\n  [FACT] code\n  ```\n> ```\n> [HYP] q\n> ```\n"
    assert strip_response(doc, PLAN_MARKERS).text == expected


def test_unknown_line_numbers_are_document_lines() -> None:
    doc = "# T\n\n## Prompt\n\nx\n\n## Response\n\n[FACT] a\n\n[TODO] b\n"
    assert strip_response(doc, PLAN_MARKERS).unknown == (UnknownToken(11, "[TODO]"),)


def test_bundled_example_study_strips_cleanly() -> None:
    from pathlib import Path

    study = Path(__file__).parent / "phase2" / "test_b"
    files = sorted(study.glob("q*.md"))
    if not files:
        pytest.skip("bundled example study not present")
    for path in files:
        doc = path.read_text(encoding="utf-8")
        result = strip_response(doc, PLAN_MARKERS)
        head, _, body = result.text.partition("## Response")
        assert head == doc.partition("## Response")[0]  # header and prompt verbatim
        assert not re.search(r"\[(?:" + "|".join(PLAN_MARKERS) + r")\b", body), path.name
        assert result.unknown == ()
        assert result.removed == len(find_tokens(doc, PLAN_MARKERS))
        # Only marker tokens (and the whitespace after them) disappear: the words are the same.
        words = re.sub(r"\[(?:" + "|".join(PLAN_MARKERS) + r")\b[^\]]*\]", " ", doc).split()
        assert result.text.split() == words


# --------------------------------------------------------------------------- properties

MARKER_TOKENS = st.sampled_from(
    [
        "[FACT]",
        "[HYP, CONF(low)]",
        "[CONF(high)]",
        "[INTERPRET][CONF(medium)]",
        "[NOSRC on specific episodes]",
        "[FACT for X; INTERPRET for Y]",
        "[FACT.M]",
        "[HYP.L]",
        "[FACT?]",
        "[SOURCE]",
    ]
)
PIECES = st.one_of(
    MARKER_TOKENS,
    st.sampled_from(
        [" ", "  ", "\n", "\n\n", ".", ",", "- ", "> ", "## ", "**", "*", "(", ")", "[", "]", "[ ]", "`"]
    ),
    st.text(alphabet="abc XYZ:;!?", min_size=1, max_size=8),
)
DOCS = st.lists(PIECES, max_size=40).map("".join)
GARBAGE = st.one_of(
    st.text(max_size=300),
    st.text(alphabet="[]()`~*_\\\n\r FACTHYPCONF(low),;.-#>!", max_size=300),
    st.binary(max_size=300).map(lambda b: b.decode("latin-1")),
)
FAST = settings(max_examples=200, deadline=None)


@FAST
@given(DOCS)
def test_strip_text_idempotent(text: str) -> None:
    once = strip(text)
    assert strip(once) == once


@FAST
@given(st.one_of(DOCS, GARBAGE))
def test_strip_response_idempotent(text: str) -> None:
    once = strip_response(text, PLAN_MARKERS).text
    assert strip_response(once, PLAN_MARKERS).text == once


@FAST
@given(st.text(alphabet=st.characters(blacklist_characters="["), max_size=300))
def test_text_without_bracket_unchanged(text: str) -> None:
    assert strip_text(text, PLAN_MARKERS).text == text
    assert strip_response(text, PLAN_MARKERS).text == text


_LEFTOVER = re.compile(r"(?<!\])\[[ \t]*(?:" + "|".join(PLAN_MARKERS) + r")(?!\w)[^\[\]\r\n]*\](?!\()")


@FAST
@given(DOCS.filter(lambda t: not any(x in t for x in ("`", "]:", "]("))))
def test_no_marker_token_survives(text: str) -> None:
    # Independent check with a regex: no bracket token starting with a plan marker remains
    # (code spans, links `[..](`, reference labels `][..]` and definitions `[..]: url` are the
    # documented exceptions, kept out of the generated text or the regex).
    assert not _LEFTOVER.search(strip(text))


@FAST
@given(DOCS)
def test_only_markers_and_whitespace_disappear(text: str) -> None:
    # Removing markers never invents or rewords text: what is left, minus whitespace and the
    # separators/wrappers the repair may drop, is a subsequence of the original.
    out = strip(text)
    it = iter(text)
    assert all(ch in it for ch in out if not ch.isspace())


@FAST
@given(GARBAGE)
def test_garbage_never_raises(text: str) -> None:
    strip_text(text, PLAN_MARKERS)
    strip_response(text, PLAN_MARKERS)
    count_markers(text, PLAN_MARKERS)
    response_text(text)


def test_huge_line_and_many_backticks_are_fast() -> None:
    import time

    line = "word [FACT] " * 20000 + "`" * 3 + " `` ` " * 5000 + "[" * 5000
    start = time.perf_counter()
    result = strip_response(line, PLAN_MARKERS)
    assert time.perf_counter() - start < 10
    assert result.removed == 20000
