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
