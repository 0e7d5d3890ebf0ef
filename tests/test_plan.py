"""Plan loading: schema errors and semantic errors name the YAML line; defaults; exact thresholds."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from aoven_git.errors import PlanError
from aoven_git.plan import PlanProblems, load_plan, parse_plan
from tests.conftest import DEFAULT_PLAN, run_cli

MINIMAL = """\
version: 1
study: tiny
conditions:
  - {id: A, role: baseline}
  - {id: B, role: treatment}
transitions:
  - {id: 1, name: "X→Y"}
dimensions:
  - {id: D1, name: One, kind: epistemic, transitions: [1]}
questions:
  - {id: Q1, text: "q?", expects: [1]}
raters:
  - {id: ann}
passes:
  - {id: main-pass, conditions: [A, B], dimensions: [D1], primary: true}
"""


def problems_of(text: str) -> list[tuple[int | None, str]]:
    with pytest.raises(PlanProblems) as info:
        parse_plan(text.encode())
    return info.value.problems


def test_default_plan_loads_with_the_values_of_the_spec() -> None:
    plan = load_plan(DEFAULT_PLAN)
    assert [c.id for c in plan.conditions] == ["A", "B"]
    assert plan.baseline.id == "A" and plan.treatment.id == "B"
    assert len(plan.transitions) == 13 and len(plan.dimensions) == 8
    assert [q.id for q in plan.questions] == [f"Q{i}" for i in range(1, 11)]
    assert [q.id for q in plan.holdout] == [f"Q{i}" for i in range(11, 16)]
    assert plan.primary_pass.id == "unblinded"
    assert plan.pass_("blinded").stripped is True
    assert [r.id for r in plan.required_raters] == ["cto", "logician"]
    assert plan.rules.pass_.improvement == Fraction(1, 5)
    assert plan.rules.pass_.dims_fraction == Fraction(5, 8)
    assert plan.rules.kappa.threshold == Fraction(3, 5)
    assert plan.rules.fail.improvement == Fraction(1, 10)
    assert len(plan.expected_cells("unblinded", "main")) == 160
    assert len(plan.expected_cells("blinded", "main")) == 80
    assert plan.response_path("B", "Q3") == "test_b/q3.md"
    assert plan.response_path("B", "Q3", stripped=True) == "test_b_stripped/q3.md"
    assert plan.dimension("D1").annotate and plan.dimension("D1").transitions == (8, 7)


def test_minimal_plan_gets_documented_defaults() -> None:
    plan = parse_plan(MINIMAL.encode())
    assert plan.study_dir == "tests/phase2"
    assert plan.scale.values == (0, 1, 2, 3)
    assert plan.rounds[0].id == "main" and plan.rounds[0].questions == ("Q1",)
    assert plan.rules.flag_spread == 1 and plan.rules.unflagged == "mean"
    assert plan.retest_cap == 1 and plan.security.require_signed is False


def test_fractions_written_as_strings_are_exact() -> None:
    plan = parse_plan((MINIMAL + 'rules: {pass: {dims_fraction: "5/8", improvement: 0.2}}\n').encode())
    assert plan.rules.pass_.dims_fraction == Fraction(5, 8)
    assert plan.rules.pass_.improvement == Fraction(1, 5)


@pytest.mark.parametrize(
    ("patch", "line", "needle"),
    [
        (("  - {id: B, role: treatment}", "  - {id: B, role: baseline}"), 3, "exactly one baseline"),
        (("  - {id: B, role: treatment}", "  - {id: A, role: treatment}"), 5, "duplicate id 'A'"),
        (("transitions: [1]}", "transitions: [1, 7]}"), 9, "unknown transition #7"),
        (("expects: [1]}", "expects: [9]}"), 11, "expects unknown transition #9"),
        (
            ("dimensions: [D1], primary: true", "dimensions: [D2], primary: true"),
            15,
            "unknown dimension 'D2'",
        ),
        (("conditions: [A, B], dimensions", "conditions: [A, C], dimensions"), 15, "unknown condition 'C'"),
        ((", primary: true}", "}"), 14, "exactly one primary pass"),
        (("  - {id: ann}", "  - {id: Ann}"), 13, "does not match"),
        (("version: 1", "version: one"), 1, "is not of type 'integer'"),
    ],
)
def test_semantic_and_schema_errors_name_the_line(patch: tuple[str, str], line: int, needle: str) -> None:
    text = MINIMAL.replace(*patch)
    assert text != MINIMAL
    found = problems_of(text)
    assert any(ln == line and needle in msg for ln, msg in found), found


def test_misspelt_key_is_reported_at_its_own_line_and_missing_top_key_at_line_1() -> None:
    text = MINIMAL.replace("  - {id: ann}", "  - {id: ann, nmae: Ann}")
    text += "rules:\n  kappa: {}\n  flag_sprad: 2\n"
    found = problems_of(text.replace("study: tiny\n", ""))
    last = text.count("\n") - 1  # the flag_sprad line, after removing `study`
    assert (last, "rules: unknown key 'flag_sprad' (known: kappa, flag_spread, unflagged, "
            "blinding_divergence, pass, fail, require_annotations)") in found, found
    assert any(ln == 12 and "unknown key 'nmae'" in msg for ln, msg in found), found
    assert any(ln == 1 and "'study' is a required property" in msg for ln, msg in found), found


def test_all_problems_reported_at_once() -> None:
    text = MINIMAL.replace("transitions: [1]}", "transitions: [5]}").replace(", primary: true}", "}")
    assert len(problems_of(text)) == 2


def test_locked_keys_must_be_plan_keys() -> None:
    found = problems_of(MINIMAL + "locked: [rules, rubric]\n")
    assert any("unknown plan key 'rubric'" in m for _, m in found)


def test_round_and_pass_ids_may_not_clash() -> None:
    found = problems_of(MINIMAL + "rounds: [{id: main-pass, questions: main}]\n")
    assert any("both as round and pass" in m for _, m in found)


def test_require_signed_needs_allowed_signers() -> None:
    found = problems_of(MINIMAL + "security: {require_signed: true}\n")
    assert any("allowed_signers" in m for _, m in found)


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"version: [1\n", "invalid YAML"),
        (b"\xff\xfe garbage", "not valid UTF-8"),
        (b"- a\n- b\n", "must be a YAML mapping"),
        (b"a: 1\na: 2\n", "duplicate key"),
        (b"x: !!python/object/apply:os.system [echo pwned]\n", "unknown key 'x'"),
    ],
)
def test_malformed_yaml_is_a_plan_error(data: bytes, needle: str) -> None:
    with pytest.raises(PlanError) as info:
        parse_plan(data)
    assert needle in str(info.value)


def test_alias_bomb_is_bounded() -> None:
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n"
    prev = "a"
    for name in "bcdefgh":
        bomb += f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]\n"
        prev = name
    with pytest.raises(PlanError, match="aliases"):
        parse_plan(bomb.encode())


def test_missing_plan_file_exits_2_with_hint(tmp_path: Path) -> None:
    result = run_cli("check-plan", "--repo", str(tmp_path))
    assert result.code == 2
    assert "plan file not found" in result.err and "aoven-git init" in result.err


def test_deep_flow_nesting_is_refused_with_its_line_before_the_parser_stalls() -> None:
    # ruamel.yaml's scanner is quadratic in flow depth: 3,000 `[` took ~8 s before RecursionError
    text = MINIMAL + "extra:\n  - " + "[" * 3000 + "\n"
    with pytest.raises(PlanError) as info:
        parse_plan(text.encode())
    assert info.value.line == MINIMAL.count("\n") + 2
    assert "nested more than" in str(info.value)


def test_brackets_inside_quotes_and_comments_do_not_count_as_nesting() -> None:
    text = MINIMAL.replace('text: "q?"', 'text: "' + "[" * 300 + '?"') + "# " + "{" * 300 + "\n"
    plan = parse_plan(text.encode())
    assert plan.questions[0].text.startswith("[" * 300)


def test_oversized_plan_is_refused_before_parsing() -> None:
    from aoven_git.plan import MAX_PLAN_BYTES

    big = MINIMAL + "# " + "x" * MAX_PLAN_BYTES + "\n"
    with pytest.raises(PlanError, match="more than"):
        parse_plan(big.encode())
    padded = MINIMAL + "# " + "x" * (MAX_PLAN_BYTES - len(MINIMAL.encode()) - 3) + "\n"
    assert len(padded.encode()) == MAX_PLAN_BYTES
    assert parse_plan(padded.encode()).study == "tiny"


# --------------------------------------------------------------------------- scale bound


def test_scale_of_eleven_points_loads() -> None:
    plan = parse_plan((MINIMAL + "scale: {min: 0, max: 10}\n").encode())
    assert plan.scale.values == tuple(range(11))


@pytest.mark.parametrize(
    ("scale", "line", "message"),
    [
        ("scale: {min: 0, max: 11}\n", 16,
         "scale: 0..11 has 12 points; a scale may have at most 11 (max − min ≤ 10)"),
        ("scale:\n  min: 1\n  max: 100000\n", 18,
         "scale: 1..100000 has 100000 points; a scale may have at most 11 (max − min ≤ 10)"),
        ("scale: {min: 3, max: 3}\n", 16, "scale: min must be lower than max"),
        ("scale: {min: -1, max: 3}\n", 16, "scale/min: -1 is less than the minimum of 0"),
    ],
)
def test_scale_is_bounded_with_its_line(scale: str, line: int, message: str) -> None:
    assert problems_of(MINIMAL + scale) == [(line, message)]


# --------------------------------------------------------------------------- the reference table

RICH = """\
version: 1
study: rich
conditions:
  - {id: A, role: baseline}
  - {id: B, role: treatment}
transitions:
  - {id: 1, name: "X→Y"}
dimensions:
  - {id: D1, name: One, kind: epistemic, transitions: [1]}
  - {id: D2, name: Two, kind: quality}
questions:
  - {id: Q1, text: "q?", expects: [1]}
  - {id: Q2, text: "r?", expects: [1]}
raters:
  - {id: ann}
passes:
  - {id: open, conditions: [A, B], dimensions: [D1, D2], primary: true}
  - {id: stripped, conditions: [B], dimensions: [D1], stripped: true}
"""
AMENDMENT = """\
amendments:
  - id: d2-ruling
    title: D2 ruling
    rationale: the clarity anchors were ambiguous
    dimensions: [D2]
    conditions: [B]
    passes: [open]
"""


@pytest.mark.parametrize(
    ("extra", "line", "message"),
    [
        ("load_dimensions: [D2, D7]\n", 19, "load_dimensions: unknown dimension 'D7'"),
        ("holdout:\n  - {id: Q9, text: h, expects: [4]}\n", 20, "question Q9 expects unknown transition #4"),
        ("rounds:\n  - {id: main, questions: [Q1, Q3]}\n", 20, "round main: unknown question 'Q3'"),
        ("rounds:\n  - {id: main, questions: main, refinements: [R1]}\n", 20,
         "round main: unknown refinement 'R1'"),
        (AMENDMENT.replace("[D2]", "[D9]"), 23, "amendment d2-ruling: unknown dimension 'D9'"),
        (AMENDMENT.replace("[B]", "[C]"), 24, "amendment d2-ruling: unknown condition 'C'"),
        (AMENDMENT.replace("[open]", "[shut]"), 25, "amendment d2-ruling: unknown pass 'shut'"),
        ("locked: [rules, rubric]\n", 19, "locked: unknown plan key 'rubric'"),
    ],
)
def test_every_reference_is_checked_at_its_line(extra: str, line: int, message: str) -> None:
    assert problems_of(RICH + extra) == [(line, message)]


def test_a_round_written_as_main_or_holdout_has_no_list_to_check() -> None:
    plan = parse_plan((RICH + "holdout: [{id: Q9, text: h}]\nrounds:\n  - {id: main, questions: main}\n"
                       "  - {id: re, questions: holdout}\n").encode())
    assert [r.questions for r in plan.rounds] == [("Q1", "Q2"), ("Q9",)]


# --------------------------------------------------------------------------- amendments


def test_amendment_loads_into_the_model_and_scopes_the_cells() -> None:
    from aoven_git.model import Amendment, CellKey

    plan = parse_plan((RICH + AMENDMENT).encode())
    assert plan.amendments == (
        Amendment("d2-ruling", "D2 ruling", "the clarity anchors were ambiguous", ("D2",), ("B",), ("open",)),
    )
    assert plan.amendment("d2-ruling") is plan.amendments[0] and plan.amendment("nope") is None
    assert plan.expected_cells("open", "main", amendment="d2-ruling") == (
        CellKey("Q1", "B", "D2"), CellKey("Q2", "B", "D2"))
    assert plan.expected_cells("stripped", "main", amendment="d2-ruling") == ()
    assert plan.expected_cells("open", "main", amendment="nope") == ()
    assert len(plan.expected_cells("open", "main")) == 8  # the pre-registered sheet is unchanged


def test_amendment_conditions_and_passes_default_to_all() -> None:
    text = RICH + "amendments:\n  - {id: d1, title: t, rationale: r, dimensions: [D1]}\n"
    amendment = parse_plan(text.encode()).amendments[0]
    assert (amendment.conditions, amendment.passes) == (("A", "B"), ("open", "stripped"))


@pytest.mark.parametrize(
    ("amendment", "problems"),
    [
        (AMENDMENT.replace("    passes: [open]\n", ""),
         [(20, "amendment d2-ruling: pass stripped does not score D2 "
               "(list the passes it re-scores under `passes`)")]),
        (AMENDMENT.replace("[open]", "[open, stripped]"),
         [(25, "amendment d2-ruling: pass stripped does not score D2")]),
        (AMENDMENT.replace("[D2]", "[D1]").replace("[B]", "[A]").replace("[open]", "[stripped]"),
         [(25, "amendment d2-ruling: pass stripped scores none of its conditions (A)")]),
        (AMENDMENT + "  - {id: d2-ruling, title: again, rationale: r, dimensions: [D2], passes: [open]}\n",
         [(26, "amendments: duplicate id 'd2-ruling' (also item 1)")]),
        (AMENDMENT.replace("id: d2-ruling", "id: D2_Ruling"),
         [(20, "amendments/0/id: 'D2_Ruling' does not match '^[a-z0-9][a-z0-9-]{0,63}$'")]),
        (AMENDMENT.replace("    rationale: the clarity anchors were ambiguous\n", ""),
         [(20, "amendments/0: 'rationale' is a required property")]),
        (AMENDMENT + "locked: [rules, amendments]\n",
         [(26, "locked: amendments may not be locked: the list grows after the first seal "
               "(append an entry, never edit one)")]),
    ],
)
def test_amendment_problems_name_the_line(amendment: str, problems: list[tuple[int, str]]) -> None:
    assert problems_of(RICH + amendment) == problems


# --------------------------------------------------------------------------- blind passes

BLIND_PASS = "  - {id: hidden, conditions: [A, B], dimensions: [D1], stripped: true, blind: true}\n"


def test_blind_pass_and_leak_patterns_load() -> None:
    text = RICH + BLIND_PASS + "blind:\n  leak_patterns: ['Condition [AB]', '(?i)aoven']\n"
    plan = parse_plan(text.encode())
    assert plan.pass_("hidden").blind is True and plan.pass_("open").blind is False
    assert plan.leak_patterns == ("Condition [AB]", "(?i)aoven")
    assert parse_plan(RICH.encode()).leak_patterns == ()


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (("[A, B], dimensions: [D1], stripped: true, blind", "[B], dimensions: [D1], stripped: true, blind"),
         "pass hidden: a blind pass must score both A and B (it does not score A)"),
        ((", stripped: true, blind: true", ", blind: true"),
         "pass hidden: a blind pass must be stripped: true (the markers would reveal B)"),
        ((", blind: true}", ", blind: true, primary: true}"),
         "pass hidden: a blind pass may not be the primary pass"),
    ],
)
def test_blind_pass_rules(patch: tuple[str, str], message: str) -> None:
    text = RICH + BLIND_PASS.replace(*patch)
    found = problems_of(text)
    assert (19, message) in found, found


def test_leak_patterns_must_compile_and_not_match_everything() -> None:
    text = RICH + "blind:\n  leak_patterns:\n    - 'Condition [AB]'\n    - '(unclosed'\n    - 'x*'\n"
    assert problems_of(text) == [
        (22, "blind.leak_patterns: '(unclosed' is not a valid regular expression: "
             "missing ), unterminated subpattern at position 0"),
        (23, "blind.leak_patterns: 'x*' matches an empty line, so it flags every text"),
    ]


def test_every_new_problem_is_reported_in_one_run() -> None:
    text = (RICH + BLIND_PASS.replace(", stripped: true", "") + "scale: {min: 0, max: 20}\n"
            + "blind: {leak_patterns: ['[']}\n" + AMENDMENT.replace("[open]", "[nope]"))
    messages = [m for _, m in problems_of(text)]
    assert len(messages) == 4, messages


def test_a_dims_fraction_above_one_names_the_dimensions_it_would_need() -> None:
    assert problems_of(RICH + 'rules: {pass: {dims_fraction: "3/2"}}\n') == [
        (19, "rules.pass.dims_fraction is 1.5 but must be at most 1: a question would have to improve "
             "on 3 of the 2 dimensions pass open scores")]


# --------------------------------------------------------------------------- shape


def test_fraction_text_is_exact() -> None:
    from aoven_git.plan import fraction_text

    cases = {Fraction(1, 5): "0.2", Fraction(5, 8): "0.625", Fraction(2, 3): "2/3", Fraction(-3, 4): "-0.75",
             Fraction(6): "6", Fraction(1, 1000): "0.001"}
    assert {k: fraction_text(k) for k in cases} == cases


def test_plan_modules_keep_functions_short() -> None:
    """The plan layer was one 236-line function; keep every function within the project limit."""
    import ast

    root = Path(__file__).resolve().parent.parent
    for rel in ("aoven_git/plan.py", "aoven_git/coverage.py", "aoven_git/plan_diff.py",
                "aoven_git/commands/check_plan.py"):
        source = (root / rel).read_text("utf-8")
        assert source.count("\n") <= 700, rel
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                assert length <= 80, f"{rel}:{node.lineno} {node.name} has {length} lines"
