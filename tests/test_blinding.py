"""Full blinding, the pure core: normalisation, leak scan, opaque ids, corpus and its check.

Inputs are the example study's real responses (A as generated, B from its stripped copy, as the
`blind` command takes them). Expected texts and line numbers are written out by hand or derived
from the source files by independent means (plain string slicing and regexes), never from the
module's own output.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from scipy.stats import chi2_contingency, chisquare

from aoven_git.blinding import (
    ID_ALPHABET,
    ID_LENGTH,
    BlindKey,
    Corpus,
    Item,
    LeakHit,
    build_corpus,
    check_corpus,
    file_name,
    leaks,
    new_ids,
    normalise,
)
from aoven_git.errors import FindingsError, PlanError, UsageError
from aoven_git.plan import load_plan
from tests.conftest import EXAMPLE

PLAN = load_plan(EXAMPLE / "aoven.yaml")
MARKERS = PLAN.markers
QUESTIONS = {q.id: q.text for q in PLAN.questions}
CONDITIONS = tuple(c.id for c in PLAN.conditions)

# Independent oracles for "shows its condition": plain regexes, not the module's.
MARKER_ORACLE = re.compile(r"\[\s*(?:" + "|".join(MARKERS) + r")(?![A-Za-z0-9_])")
CONDITION_ORACLE = re.compile(r"(?i)(?:condition|test)s?[\s_-]*[ab](?![a-z0-9])")


def source_path(question: str, condition: str) -> Path:
    return EXAMPLE / PLAN.response_path(condition, question, stripped=condition == "B")


def example_items() -> list[Item]:
    items = []
    for q, text in QUESTIONS.items():
        for c in CONDITIONS:
            path = source_path(q, c)
            items.append(Item(q, c, text, path.read_bytes(), str(path.relative_to(EXAMPLE))))
    return items


def build(items: list[Item] | None = None, seed: int = 1, **kw: object) -> Corpus:
    result = build_corpus(
        example_items() if items is None else items,
        MARKERS,
        rng=random.Random(seed),
        pass_id="blind",
        conditions=CONDITIONS,
        **kw,  # type: ignore[arg-type]
    )
    assert isinstance(result, Corpus), result
    return result


def response_after_heading(document: str) -> str:
    """The example files' layout read by hand: everything after the `## Response` line."""
    return document.split("\n## Response\n", 1)[1].strip("\n")


# --------------------------------------------------------------------------- normalise


def test_normalise_keeps_question_and_response_in_a_fixed_layout() -> None:
    document = (
        "# Q9 — Condition B (Aoven-framed)\r\n\r\n## Prompt\r\n\r\n"
        "[Aoven v0.1 | require: INTUIT | no flattery]\r\nGut feeling?\r\n\r\n"
        "## Response   \r\n\r\n\r\n"
        "[INTUIT] Probably yes.   \r\n\r\n\r\n\r\n"
        "[FACT] Trials show a moderate effect [CONF(medium)].\t\r\n\r\n"
    )
    assert normalise(document, MARKERS, "  Is meditation effective?\n") == (
        "## Question\n\nIs meditation effective?\n\n## Response\n\n"
        "Probably yes.\n\nTrials show a moderate effect.\n"
    )


def test_a_and_b_of_a_question_share_the_question_part_and_lose_title_prompt_header_markers() -> None:
    for q, text in QUESTIONS.items():
        a = normalise(source_path(q, "A").read_text(), MARKERS, text)
        b = normalise(source_path(q, "B").read_text(), MARKERS, text)
        head = f"## Question\n\n{text}\n\n## Response\n\n"
        assert a.startswith(head) and b.startswith(head), q
        for blinded in (a, b):
            assert blinded.count("\n## ") == 1  # only the Response heading follows the Question one
            assert not re.search(r"(?m)^# Q\d", blinded) and "## Prompt" not in blinded
            assert "[Aoven" not in blinded and "Aoven" not in blinded
            assert MARKER_ORACLE.search(blinded) is None, q
            assert blinded.endswith("\n") and not blinded.endswith("\n\n")


def test_a_response_is_kept_word_for_word() -> None:
    for q, text in QUESTIONS.items():
        document = source_path(q, "A").read_text()
        blinded = normalise(document, MARKERS, text)
        assert blinded.split("\n## Response\n\n", 1)[1] == response_after_heading(document) + "\n"


def test_b_from_the_generated_file_equals_b_from_the_stripped_copy() -> None:
    for q, text in QUESTIONS.items():
        generated = (EXAMPLE / PLAN.response_path("B", q)).read_text()
        stripped = source_path(q, "B").read_text()
        assert MARKER_ORACLE.search(generated)  # the generated one really has markers
        assert normalise(generated, MARKERS, text) == normalise(stripped, MARKERS, text)
        # the stripped copy's own response part, read by hand, is what the rater sees
        assert normalise(stripped, MARKERS, text).endswith(response_after_heading(stripped) + "\n")


def test_normalise_is_idempotent_on_its_output() -> None:
    for q, text in QUESTIONS.items():
        for c in CONDITIONS:
            once = normalise(source_path(q, c).read_text(), MARKERS, text)
            assert normalise(once, MARKERS, text) == once


def test_byte_order_mark_and_line_ends_do_not_change_the_blinded_text() -> None:
    document = source_path("Q3", "A").read_text()
    expected = normalise(document, MARKERS, QUESTIONS["Q3"])
    for variant in ("\ufeff" + document, document.replace("\n", "\r\n"), document.replace("\n", "\r")):
        assert normalise(variant, MARKERS, QUESTIONS["Q3"]) == expected


def test_file_without_response_heading_keeps_all_but_the_title() -> None:
    document = "# Answer\n\nFirst paragraph [FACT].\n\n\nSecond.\n"
    assert normalise(document, MARKERS, "Q?") == (
        "## Question\n\nQ?\n\n## Response\n\nFirst paragraph.\n\nSecond.\n"
    )
    assert normalise("# Only a title\n", MARKERS, "Q?") == "## Question\n\nQ?\n\n## Response\n"


def test_empty_question_text_is_refused() -> None:
    with pytest.raises(UsageError, match="question text is empty"):
        normalise("## Response\n\nx\n", MARKERS, " \n ")


# --------------------------------------------------------------------------- leaks

LEAKY = """\
## Question

Is this a test?

## Response

We test a hypothesis; the condition a doctor names is a medical condition.
As Condition B requires, and conditions A and B differ.
See `[FACT]` and test_b/q1.md and TEST-A.
```
[Aoven v0.1 | require: FACT]
[HYP] inside a fence
```
This is Aoven-framed output, a [citation needed] and a [FACT sheet](https://example.org).
An [ASSUMPTION] and an epistemic aside. Test B. testB and tests A.
"""


def test_leaks_names_every_tell_with_its_line_and_column() -> None:
    found = [(x.line, x.column, x.kind, x.excerpt) for x in leaks(LEAKY, MARKERS, [r"(?i)\bepistemic\b"])]
    assert found == [
        (8, 4, "condition-word", "Condition B"),
        (8, 30, "condition-word", "conditions A"),
        (9, 6, "marker", "[FACT]"),
        (9, 18, "condition-word", "test_b"),
        (9, 35, "condition-word", "TEST-A"),
        (11, 1, "aoven-header", "[Aoven v0.1 | require: FACT]"),
        (12, 1, "marker", "[HYP]"),
        (14, 9, "protocol-word", "Aoven"),
        (15, 4, "unknown-marker", "[ASSUMPTION]"),
        (15, 24, "leak-pattern", "epistemic"),
        (15, 41, "condition-word", "Test B"),
        (15, 49, "condition-word", "testB"),
        (15, 59, "condition-word", "tests A"),
    ]


def test_leak_excerpts_and_columns_come_from_the_text() -> None:
    text = "x [AB~C] then `[AB~C]` and \\[HYP] ~~~[FACT]\n"
    assert [(x.column, x.kind, x.excerpt) for x in leaks(text, MARKERS)] == [
        (3, "unknown-marker", "[AB~C]"),
        (16, "unknown-marker", "[AB~C]"),
        (29, "marker", "[HYP]"),
        (38, "marker", "[FACT]"),
    ]


def test_leaks_follow_the_plan_condition_ids() -> None:
    text = "Condition treated versus condition plain; Condition B.\n"
    found = [x.excerpt for x in leaks(text, MARKERS, conditions=("plain", "treated"))]
    assert found == ["Condition treated", "condition plain"]


def test_leak_patterns_are_checked() -> None:
    assert leaks("abc\n", MARKERS, [re.compile("b")])[0].excerpt == "b"
    with pytest.raises(PlanError, match=r"leak pattern '\(' is not a valid regular expression"):
        leaks("x", MARKERS, ["("])
    with pytest.raises(PlanError, match="leak pattern 3 is not a string"):
        leaks("x", MARKERS, [3])  # type: ignore[list-item]


def test_leaks_count_lines_like_markdown() -> None:
    found = leaks("one\r\ntwo\rthree\nCondition A\n", MARKERS)
    assert [(x.line, x.kind) for x in found] == [(4, "condition-word")]


# --------------------------------------------------------------------------- the example corpus


def test_example_corpus_shows_no_condition_anywhere() -> None:
    corpus = build()
    assert len(corpus.files) == len(QUESTIONS) * len(CONDITIONS)
    for name, data in corpus.files.items():
        assert re.fullmatch(rf"[a-z0-9]{{{ID_LENGTH}}}\.md", name)
        text = data.decode("utf-8")
        assert MARKER_ORACLE.search(text) is None, name
        assert "aoven" not in text.lower(), name
        assert CONDITION_ORACLE.search(text) is None, name
        assert "\r" not in text and not re.search(r"[ \t]\n", text) and "\n\n\n" not in text
    assert list(corpus.files) == sorted(corpus.files)  # listed by random id: no item order
    assert sorted(corpus.files) == sorted(file_name(e.blind_id) for e in corpus.key.entries)


def test_every_item_once_in_the_key_with_its_source_digest() -> None:
    items = example_items()
    corpus = build(items)
    assert corpus.key.pass_id == "blind" and re.fullmatch(r"[0-9a-f]{32}", corpus.key.nonce)
    by_item = {(e.question, e.condition): e for e in corpus.key.entries}
    assert len(by_item) == len(corpus.key.entries) == len(items)
    for item in items:
        entry = by_item[(item.question, item.condition)]
        assert entry.source_sha256 == hashlib.sha256(item.source).hexdigest()
        expected = normalise(item.source.decode(), MARKERS, item.question_text).encode()
        assert corpus.files[file_name(entry.blind_id)] == expected


def test_ids_depend_only_on_the_random_generator() -> None:
    one, two = build(seed=1), build(seed=2)
    assert set(one.files).isdisjoint(two.files)
    assert build(seed=1) == one  # same draws, same corpus: nothing but the RNG goes into the ids
    fresh = [build_corpus(example_items(), MARKERS, pass_id="blind") for _ in range(2)]
    assert isinstance(fresh[0], Corpus) and isinstance(fresh[1], Corpus)
    assert set(fresh[0].files).isdisjoint(fresh[1].files)
    assert fresh[0].key.nonce != fresh[1].key.nonce


def test_position_in_the_listing_is_uniform() -> None:
    """Where an item lands in the corpus listing is independent of the item (chi-square)."""
    items = [Item(f"Q{n}", c, f"question {n}?", b"## Response\n\nsame text\n", f"q{n}{c}.md")
             for n in (1, 2) for c in ("A", "B")]
    rng = random.Random(2024)
    positions = Counter()
    for _ in range(800):
        corpus = build_corpus(items, MARKERS, rng=rng, pass_id="p")
        assert isinstance(corpus, Corpus)
        order = [corpus.key.entries[k] for k in range(len(items))]  # entries follow the listing
        assert [file_name(e.blind_id) for e in order] == list(corpus.files)
        positions[next(k for k, e in enumerate(order) if (e.question, e.condition) == ("Q1", "A"))] += 1
    assert chisquare([positions[k] for k in range(len(items))]).pvalue > 1e-3


@pytest.mark.parametrize("rng", [random.Random(11), None], ids=["seeded", "csprng"])
def test_id_characters_are_uniform(rng: random.Random | None) -> None:
    ids = new_ids(3000, rng)
    assert len(set(ids)) == 3000 and {len(i) for i in ids} == {ID_LENGTH}
    assert set("".join(ids)) <= set(ID_ALPHABET) and not set("ilou") & set("".join(ids))
    first = Counter(i[0] for i in ids)
    rest = Counter(ch for i in ids for ch in i[1:])
    assert set(first) <= set(ID_ALPHABET[10:])  # a letter first: never a number
    assert chisquare([first[ch] for ch in ID_ALPHABET[10:]]).pvalue > 1e-6
    assert chisquare([rest[ch] for ch in ID_ALPHABET]).pvalue > 1e-6
    # no order information: the first half of the draws looks like the second half
    half = len(ids) // 2
    early = Counter(ch for i in ids[:half] for ch in i[1:])
    late = Counter(ch for i in ids[half:] for ch in i[1:])
    table = [[early[ch] for ch in ID_ALPHABET], [late[ch] for ch in ID_ALPHABET]]
    assert chi2_contingency(table).pvalue > 1e-6


def test_new_ids_edge_counts() -> None:
    assert new_ids(0) == []
    with pytest.raises(UsageError):
        new_ids(-1)


# --------------------------------------------------------------------------- refusing leaky texts


def replace_source(items: list[Item], question: str, condition: str, data: bytes) -> list[Item]:
    target = (question, condition)
    return [replace(i, source=data) if (i.question, i.condition) == target else i for i in items]


def test_leaky_source_is_refused_with_source_lines_and_nothing_drawn() -> None:
    items = example_items()
    a3 = source_path("Q3", "A").read_text().splitlines(keepends=True)
    b5 = source_path("Q5", "B").read_text().splitlines(keepends=True)
    a3.insert(12, "In Condition B the model would hedge.\n")  # becomes source line 13
    b5[-1:] = [b5[-1], "\n", "```\n", "[FACT] left in a code block\n", "```\n"]  # the marker line
    marker_line = len(b5) - 1
    items = replace_source(items, "Q3", "A", "".join(a3).encode())
    items = replace_source(items, "Q5", "B", "".join(b5).encode())
    rng = random.Random(5)
    state = rng.getstate()
    result = build_corpus(items, MARKERS, rng=rng, pass_id="blind", conditions=CONDITIONS)
    assert rng.getstate() == state  # refused before any id was drawn
    assert [(h.path, h.line, h.kind, h.excerpt, h.question, h.condition) for h in result] == [  # type: ignore[union-attr]
        ("test_a/q3.md", 13, "condition-word", "Condition B", "Q3", "A"),
        ("test_b_stripped/q5.md", marker_line, "marker", "[FACT]", "Q5", "B"),
    ]
    assert str(result[0]) == "test_a/q3.md:13: Q3/A would show condition-word 'Condition B'"  # type: ignore[index]


def test_caller_leak_pattern_is_honoured_at_every_source_line() -> None:
    items = [i for i in example_items() if i.question == "Q1"]
    result = build_corpus(items, MARKERS, [r"Alzheimer"], random.Random(1), pass_id="blind")
    assert isinstance(result, list)
    for item in items:
        lines = item.source.decode().split("\n")
        response_start = lines.index("## Response") + 1
        expected = [
            n for n, line in enumerate(lines, 1) if n > response_start for _ in re.finditer("Alzheimer", line)
        ]
        got = [h for h in result if h.path == item.path]
        assert [h.line for h in got if h.part == "response"] == expected
        assert [(h.line, h.part) for h in got if h.part != "response"] == [(None, "question")]
        assert all(h.kind == "leak-pattern" and h.excerpt == "Alzheimer" for h in got)


def test_question_text_naming_the_protocol_is_a_question_hit() -> None:
    items = [replace(i, question_text="What is Aoven?") for i in example_items() if i.question == "Q2"]
    result = build_corpus(items, MARKERS, pass_id="blind")
    assert isinstance(result, list) and {(h.part, h.line, h.kind) for h in result} == {
        ("question", None, "protocol-word")
    }
    assert "(question text)" in str(result[0])


def test_generated_b_with_markers_blinds_like_its_stripped_copy() -> None:
    items = example_items()
    generated = [replace(i, source=(EXAMPLE / PLAN.response_path("B", i.question)).read_bytes())
                 if i.condition == "B" else i for i in items]
    one, two = build(items, seed=3), build(generated, seed=3)
    assert one.files == two.files  # same bytes under the same ids; only the source digests differ


def test_bad_items_are_refused_clearly() -> None:
    items = example_items()
    with pytest.raises(UsageError, match="nothing to blind"):
        build_corpus([], MARKERS, pass_id="blind")
    with pytest.raises(UsageError, match="an item is given twice: Q1/A"):
        build_corpus([items[0], items[0]], MARKERS, pass_id="blind")
    bad = replace(items[0], source=b"## Response\n\nok\n\xff\n")
    with pytest.raises(FindingsError) as err:
        build_corpus([bad], MARKERS, pass_id="blind")
    assert (err.value.path, err.value.line, err.value.exit_code) == ("test_a/q1.md", 4, 1)


# --------------------------------------------------------------------------- check_corpus


def checked(corpus: Corpus, files: dict[str, bytes] | None = None, items: list[Item] | None = None,
            key: BlindKey | None = None) -> list[tuple[str, str | None]]:
    problems = check_corpus(key or corpus.key, corpus.files if files is None else files,
                            example_items() if items is None else items, MARKERS)
    return [(p.code, p.name) for p in problems]


def name_of(corpus: Corpus, question: str, condition: str) -> str:
    return file_name(corpus.key.by_item()[(question, condition)].blind_id)


def test_honest_corpus_checks_clean() -> None:
    assert checked(build()) == []


def test_edited_blinded_file_is_a_mismatch_with_its_line() -> None:
    corpus = build()
    name = name_of(corpus, "Q4", "B")
    text = corpus.files[name].decode().replace("Rust", "Rust (the better one)", 1)
    problems = check_corpus(corpus.key, {**corpus.files, name: text.encode()}, example_items(), MARKERS)
    assert [(p.code, p.name) for p in problems] == [("blind-mismatch", name)]
    expected_line = text.split("\n").index(next(x for x in text.split("\n") if "the better one" in x)) + 1
    assert f"line {expected_line} differs from the normalised test_b_stripped/q4.md" in problems[0].message


def test_swapped_mapping_is_caught() -> None:
    """A key that sends A's file to B and back (a lead relabelling conditions) cannot pass."""
    corpus = build()
    entries = {(e.question, e.condition): e for e in corpus.key.entries}
    a, b = entries[("Q6", "A")], entries[("Q6", "B")]
    swapped = tuple(
        replace(e, blind_id=b.blind_id) if e is a else replace(e, blind_id=a.blind_id) if e is b else e
        for e in corpus.key.entries
    )
    bad_key = replace(corpus.key, entries=swapped)
    assert sorted(checked(corpus, key=bad_key)) == sorted(
        [("blind-mismatch", file_name(a.blind_id)), ("blind-mismatch", file_name(b.blind_id))]
    )


def test_changed_source_is_a_mismatch() -> None:
    corpus = build()
    items = replace_source(example_items(), "Q2", "A", source_path("Q2", "A").read_bytes() + b"\n")
    problems = check_corpus(corpus.key, corpus.files, items, MARKERS)
    assert [(p.code, p.name) for p in problems] == [("blind-mismatch", name_of(corpus, "Q2", "A"))]
    assert "SHA-256 changed since blinding" in problems[0].message


def test_missing_extra_and_unknown_files_and_items() -> None:
    corpus = build()
    q1a = name_of(corpus, "Q1", "A")
    files = {k: v for k, v in corpus.files.items() if k != q1a}
    assert checked(corpus, files={**files, "zzzzzzzzzzzz.md": b"x", "notes.txt": b"y"}) == [
        ("blind-missing-file", q1a),
        ("blind-extra-file", "notes.txt"),
        ("blind-extra-file", "zzzzzzzzzzzz.md"),
    ]
    kept = tuple(e for e in corpus.key.entries if file_name(e.blind_id) != q1a)
    fewer_entries = replace(corpus.key, entries=kept)
    assert checked(corpus, key=fewer_entries) == [("blind-missing-item", None), ("blind-extra-file", q1a)]
    fewer_items = [i for i in example_items() if (i.question, i.condition) != ("Q1", "A")]
    assert checked(corpus, items=fewer_items) == [("blind-unknown-item", q1a)]


def test_key_cannot_hold_an_item_or_id_twice() -> None:
    key = build().key
    first, second = key.entries[0], key.entries[1]
    with pytest.raises(ValueError, match="id twice"):
        replace(key, entries=(first, replace(second, blind_id=first.blind_id)))
    with pytest.raises(ValueError, match=r"\(question, condition\) twice"):
        replace(key, entries=(first, replace(second, question=first.question, condition=first.condition)))


def test_leak_hit_fields() -> None:
    hit = LeakHit("p.md", None, "marker", "[FACT]", "Q1", "B", "heading")
    assert str(hit) == "p.md (heading text): Q1/B would show marker '[FACT]'"


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("see TEST_B_STRIPPED/q1.md", "TEST_B"),
        ("the condition_a files", "condition_a"),
        ("in test\\_b", "test\\_b"),
        ("Tests B and", "Tests B"),
        ("the testa of a seed", None),
        ("we test a drug", None),
        ("a condition a doctor treats", None),
        ("Testa", None),  # joined without a separator: the id in the plan's case only
        ("TestA", "TestA"),
    ],
)
def test_condition_word_forms(text: str, hit: str | None) -> None:
    found = [x.excerpt for x in leaks(text, MARKERS) if x.kind == "condition-word"]
    assert found == ([hit] if hit else [])
