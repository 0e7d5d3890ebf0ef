"""Fuzzing the score-file parser and `validate`: garbage in, findings out, never a crash."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aoven_git import schemas
from aoven_git.model import Plan, ScoreSheet
from aoven_git.plan import load_plan, parse_plan
from aoven_git.scorefile import cell_conforms, parse_score_file, rescores, set_front_matter, simple_yaml
from aoven_git.yamlio import YamlError, load_yaml
from tests.conftest import DEFAULT_PLAN, run_cli
from tests.test_blind_e2e import PLAN as BLIND_PLAN_TEXT

PLAN = load_plan(DEFAULT_PLAN)
PATH = "tests/phase2/scores_cto.md"

ALIAS_BOMB = (
    "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n---\n"
)

cell_text = st.one_of(
    st.sampled_from(
        [
            "Q1",
            "Q10 label",
            "A",
            "B",
            "Test B",
            "D1",
            "L1-D3",
            "D9",
            "Q99",
            "",
            " ",
            "2",
            "**3**",
            "2 #8",
            "3 (#7, #8)",
            "1 #5",
            "4",
            "-1",
            "2.5",
            "x",
            "#8",
            "a \\| b",
            '"quote"',
            "`|`",
            "<!-- c -->",
            "Σ",
            "\u00a0",
            "1e9",
            "9" * 40,
            "#0",
            "# 8",
        ]
    ),
    st.text(max_size=12),
)
row = st.lists(cell_text, min_size=1, max_size=12).map(lambda cells: "| " + " | ".join(cells) + " |")
header = st.sampled_from(
    [
        "| Q | Cond | D1 | D2 | D3 | D4 | D5 | D6 | D7 | D8 | Σ |",
        "| Question | Condition | Dimension | Score | Transition | Citation |",
        "| Dim | Score | Citation |",
        "| Q | Cond | D1 | Notes |",
        "| Question | Condition | Dimension | Score |",
        "| Q | D1 A | D2 A | A Total | D1 B | B Total |",
        "| Item | D7' | D8' | Why |",
        "| Q (Test B) | Original D7 | New D7 | Cited phrase | Mechanism |",
        "| Q | C1 marker accuracy | D2 | Time-sensitive |",
        "| Q | Conditon | Dim3 | D4 |",
        "| Qestion | Condition | Dimenson | Scroe |",
        "| Q | Cond | D7 | D7' | D7 new |",
    ]
)
table = st.tuples(header, st.lists(row, max_size=8)).map(
    lambda t: "\n".join([t[0], "|" + "---|" * (t[0].count("|") - 1), *t[1]])
)
block = st.one_of(
    table,
    table.map(lambda t: f"```\n{t}\n```"),
    table.map(lambda t: f"<!--\n{t}\n-->"),
    table.map(lambda t: f"> {t}"),
    st.sampled_from(
        [
            "## Q3 — x",
            "### Test A",
            "### Condition B",
            "### A",
            "## Q16",
            "### Condition Z",
            "# T",
            "---",
            "...",
            "rater: cto",
            "```",
            "<!--",
            "-->",
            "| a |",
            "|---|",
            "~~~",
        ]
    ),
    st.text(max_size=40),
    st.integers(1000, 5000).map(lambda n: "x" * n),
    st.integers(100, 500).map(lambda n: "| " * n),
)
front = st.one_of(
    st.just(""),
    st.just("---\nrater: cto\npass: unblinded\nround: main\nplan_version: 1\n---\n"),
    st.just("---\nrater: cto\n"),  # unclosed
    st.just(ALIAS_BOMB),
    st.just("---\n!!python/object:os.system [ls]\n---\n"),
    st.just("---\nrater: [a\n---\n"),
    st.just("---\nplan_version: true\nnonce: {a: 1}\n---\n"),
    st.text(max_size=60).map(lambda t: f"---\n{t}\n---\n"),
)
markdown = st.tuples(front, st.lists(block, max_size=10)).map(lambda t: t[0] + "\n\n".join(t[1]))
garbage = st.one_of(
    st.binary(max_size=400),
    markdown.map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.tuples(markdown, st.binary(max_size=20)).map(lambda t: t[0].encode("utf-8", "surrogatepass") + t[1]),
)


def check_sheet(sheet: ScoreSheet) -> None:
    assert isinstance(sheet, ScoreSheet)
    for f in sheet.findings:
        assert f.line is None or f.line >= 1
        assert f.code and f.message
    for cell in sheet.cells:
        assert cell.score in PLAN.scale


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    garbage,
    st.sampled_from(
        [PATH, "tests/phase2/scores_cto_blinded.md", "tests/phase2/scores_nobody.md", "elsewhere/x.md"]
    ),
    st.booleans(),
)
def test_parse_never_raises(data: bytes, path: str, link: bool) -> None:
    check_sheet(parse_score_file(PLAN, path, data, is_symlink=link))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(garbage)
def test_rescores_never_raise(data: bytes) -> None:
    for r in rescores(PLAN, PATH, data):
        assert r.new in PLAN.scale and r.line >= 1
        assert r.original is None or isinstance(r.original, int)


def clean_file() -> str:
    """A valid wide file of the default plan (every cell, annotations where needed)."""
    rows = []
    for q in range(1, 11):
        for c in "AB":
            vals = [(q + d + (c == "B")) % 4 for d in range(1, 9)]
            shown = [
                f"{v} #8" if d == 1 and v else f"{v} #5" if d == 5 and v else str(v)
                for d, v in enumerate(vals, 1)
            ]
            rows.append(f"| Q{q} | {c} | " + " | ".join(shown) + f" | {sum(vals)} |")
    head = "| Q | Cond | " + " | ".join(f"D{d}" for d in range(1, 9)) + " | Σ |\n|" + "---|" * 11
    return "---\nrater: cto\n---\n\n" + head + "\n" + "\n".join(rows) + "\n"


# What tables after the scores may add: never an error about the cells, never a cell.
AFTER = {
    "amended-in-file",
    "rescore-invalid",
    "rescore-conflict",
    "rescored-in-file",
    "summary-mismatch",
    "duplicate-cell",
    "unknown-question",
    "unknown-condition",
    "unknown-dimension",
    "unknown-column",
    "section-context-missing",
    "score-not-integer",
    "score-off-scale",
    "cell-not-in-pass",
    "sum-mismatch",
    "wrong-transition",
    "missing-annotation",
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        block.filter(lambda b: not b.startswith("---") and b not in ("...", "```", "~~~", "<!--")), max_size=6
    )
)
def test_tables_after_the_scores_never_change_the_cells(blocks: list[str]) -> None:
    """Summaries, re-score tables, ignored tables and prose appended to a valid file: the cells
    stay those of the first table (a later table never supplies or replaces a cell)."""
    base = parse_score_file(PLAN, PATH, clean_file().encode())
    assert base.findings == () and len(base.cells) == 160
    text = clean_file() + "\n\n" + "\n\n".join(blocks) + "\n"
    sheet = parse_score_file(PLAN, PATH, text.encode())
    if any(b.count("```") % 2 or b.count("<!--") > b.count("-->") for b in blocks):
        return  # an unclosed fence or comment swallows what follows: nothing to compare
    assert {c.key: c.score for c in sheet.cells} == {c.key: c.score for c in base.cells}
    assert {f.code for f in sheet.findings} <= AFTER
    check_sheet(sheet)


@settings(max_examples=50, deadline=None)
@given(garbage)
def test_set_front_matter_keeps_the_body(data: bytes) -> None:
    out = set_front_matter(data, nonce="abc123")
    assert data.replace(b"\r\n", b"\n").split(b"\n")[-1] in out
    check_sheet(parse_score_file(PLAN, PATH, out))


def test_alias_bomb_is_a_finding() -> None:
    sheet = parse_score_file(PLAN, PATH, (ALIAS_BOMB + "\nbody\n").encode())
    bombs = [f for f in sheet.findings if f.code == "front-matter-invalid"]
    assert len(bombs) == 1 and "aliases" in bombs[0].message
    # a line inside the front matter (lines 2-7), not the `---` opener
    assert bombs[0].line is not None and 2 <= bombs[0].line <= ALIAS_BOMB.count("\n") - 1


@pytest.fixture(scope="module")
def cli_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "tests" / "phase2").mkdir(parents=True)
    shutil.copy(DEFAULT_PLAN, root / "aoven.yaml")
    return root


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(garbage, st.sampled_from(["text", "json", "github"]))
def test_cli_exits_1_or_2_with_a_message(cli_study: Path, data: bytes, fmt: str) -> None:
    (cli_study / "tests" / "phase2" / "scores_cto.md").write_bytes(data)
    r = run_cli("validate", "--format", fmt, cwd=cli_study)
    assert r.code in (0, 1, 2), r.output
    assert "Traceback" not in r.output and "internal error" not in r.output
    if r.code == 1:
        assert "error" in r.out or '"ok": false' in r.out
    if r.code == 0:  # only a file that really scores every cell can pass
        assert len(parse_score_file(PLAN, PATH, data).cells) == 160


# --------------------------------------------------------------------------- fast paths = slow paths

json_value = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 2**40),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=4),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=5,
)
KEYS = ["question", "condition", "dimension", "score", "line", "transitions", "citation"]
cells = st.one_of(
    st.fixed_dictionaries(
        {
            "question": st.one_of(st.sampled_from(["Q1", ""]), json_value),
            "condition": st.sampled_from(["A", "", 1]),
            "dimension": st.sampled_from(["D1", None]),
            "score": st.one_of(st.integers(-5, 5), st.sampled_from(["2", 2.0, 2.5, True, None])),
            "line": st.one_of(st.integers(-1, 5), st.sampled_from([1.0, True, "3"])),
            "transitions": st.one_of(
                st.lists(st.one_of(st.integers(-1, 14), st.sampled_from([True, 2.0, "8"])), max_size=4),
                st.sampled_from([None, "8", (8,)]),
            ),
            "citation": st.one_of(st.text(max_size=5), st.sampled_from([None, 1])),
        }
    ),
    st.dictionaries(st.sampled_from([*KEYS, "extra"]), json_value, max_size=8),
)


@settings(max_examples=200, deadline=None)
@given(cells)
def test_cell_fast_check_never_accepts_what_the_schema_rejects(cell: dict) -> None:
    doc = {"rater": "cto", "pass": "unblinded", "round": "main", "cells": [cell]}
    if cell_conforms(cell):
        assert schemas.validator("scores").is_valid(doc)


def test_cell_fast_check_accepts_parser_output() -> None:
    cell = {
        "question": "Q1",
        "condition": "A",
        "dimension": "D1",
        "score": 2,
        "line": 7,
        "transitions": [8, 7],
        "citation": "x",
    }
    assert cell_conforms(cell)
    assert schemas.validator("scores").is_valid({"rater": "cto", "pass": "p", "round": "r", "cells": [cell]})


yaml_line = st.one_of(
    st.tuples(
        st.sampled_from(["rater", "pass", "round", "nonce", "plan_version", "x_y", "Rater"]),
        st.one_of(
            st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True),
            st.sampled_from(
                [
                    "true",
                    "null",
                    "yes",
                    "0",
                    "1",
                    "012",
                    "1e3",
                    "0x1f",
                    "True",
                    "~",
                    "-1",
                    "a b",
                    "'q'",
                    "x # c",
                    "2024-01-01",
                ]
            ),
            st.integers(0, 10**10).map(str),
        ),
    ).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    st.sampled_from(["", "  ", "# comment", "key:value", "- item", "a: b: c"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(yaml_line, max_size=6), st.sampled_from(["\n", "\r\n"]))
def test_simple_front_matter_agrees_with_yaml(lines: list[str], newline: str) -> None:
    text = newline.join(lines) + newline
    fast = simple_yaml(text, line_offset=1)
    if fast is None:
        return
    try:
        slow = load_yaml(text, line_offset=1)
    except YamlError:
        raise AssertionError(f"fast path accepted YAML the parser rejects: {text!r}") from None
    assert fast == slow


def test_plan_fixture_is_the_default() -> None:
    assert isinstance(PLAN, Plan) and PLAN.scale.max == 3


header_word = st.one_of(
    cell_text,
    st.sampled_from(
        [
            "D1 A",
            "A D1",
            "D7'",
            "D8′",
            "Original D7",
            "New D7",
            "D7 new",
            "A Total",
            "Total (B)",
            "Σ B",
            "Q (Test B)",
            "Item",
            "Conditon",
            "Dim3",
            "Scroe",
            "Time-sensitive",
            "C1 label",
            "Test B",
            "Cited phrase",
        ]
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(header_word, max_size=14))
def test_every_header_column_has_exactly_one_meaning(header: list[str]) -> None:
    from aoven_git.score_columns import read_header
    from aoven_git.score_ids import ids_for

    cols = read_header(header, ids_for(PLAN))
    meanings = [
        *cols.roles.values(),
        *cols.dims,
        *cols.summary,
        *cols.totals,
        *cols.new,
        *cols.original,
        *cols.unknown_dims,
        *(i for i, _ in cols.misspelt),
        *cols.ignored,
    ]
    assert sorted(meanings) == list(range(len(header)))  # every column has one meaning
    assert cols.kind in (None, "wide", "long", "sectioned", "summary", "rescore")


# --------------------------------------------------------------------------- amendments and blind sheets

SCOPED_PLAN = parse_plan(
    (BLIND_PLAN_TEXT + "amendments:\n  - {id: d2-ruling, title: t, rationale: r, dimensions: [D2], "
     "conditions: [B]}\n").encode(), display="aoven.yaml")
CORPUS_IDS = ("a00000000000", "bcd000000001", "xyz000000002", "mnp000000003")
scoped_cell = st.one_of(cell_text, st.sampled_from([*CORPUS_IDS, "A00000000000", "a0000000000", "zz", "?"]))
scoped_row = st.lists(scoped_cell, min_size=1, max_size=6).map(lambda cells: "| " + " | ".join(cells) + " |")
scoped_header = st.sampled_from(["| Item | D1 | D2 | Σ | Notes |", "| Item | Dimension | Score | Citation |",
                                 "| Item | Cond | D1 | D2 |", "| Q | Cond | D2 |", "| Q | Cond | D1 | D2 |",
                                 "| Dim | Score | Citation |"])
scoped_table = st.tuples(scoped_header, st.lists(scoped_row, max_size=8)).map(
    lambda t: "\n".join([t[0], "|" + "---|" * (t[0].count("|") - 1), *t[1]]))
scoped_front = st.sampled_from(["", "---\nrater: cto\npass: hidden\n---\n",
                                "---\namendment: d2-ruling\n---\n", "---\namendment: other\n---\n",
                                "---\nrater: cto\namendment: [x]\n---\n"])
scoped = st.tuples(scoped_front, st.lists(st.one_of(scoped_table, block), max_size=6)).map(
    lambda t: (t[0] + "\n\n".join(t[1])).encode("utf-8", "surrogatepass"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    scoped,
    st.sampled_from(["study/scores_cto_hidden.md", "study/amendments/d2-ruling/scores_cto.md",
                     "study/amendments/d2-ruling/scores_cto_hidden.md", "study/amendments/nope/scores_cto.md",
                     "elsewhere/x.md"]),
    st.sampled_from([None, {}, {"hidden": frozenset()}, {"hidden": frozenset(CORPUS_IDS)}]),
)
def test_blind_and_amendment_sheets_never_raise(data: bytes, path: str, corpus: dict | None) -> None:
    sheet = parse_score_file(SCOPED_PLAN, path, data, blind_items=corpus)
    check_sheet(sheet)
    if sheet.ok and sheet.sheet.pass_id == "hidden" and not sheet.sheet.amendment and corpus:
        # a valid blind sheet scores exactly the corpus: every cell an item of it, no condition
        assert {c.key.question for c in sheet.cells} == set(corpus["hidden"])
        assert {c.key.condition for c in sheet.cells} == {"?"}
    if sheet.ok and sheet.sheet.amendment == "d2-ruling":
        assert {(c.key.condition, c.key.dimension) for c in sheet.cells} == {("B", "D2")}
