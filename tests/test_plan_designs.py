"""Plan errors of designs (docs/plan.md, "Criteria and decisions"): each one names the key and its
line, every problem at once, exit 2 through the CLI; honest four-arm and probe plans load clean."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from aoven_git.model import Bound
from aoven_git.plan import PlanProblems, parse_plan
from tests.conftest import run_cli

ARMS = """\
version: 1
study: arms
scale: {min: 0, max: 3}
conditions:
  - {id: A, role: baseline}
  - {id: B}
  - {id: B1}
dimensions:
  - {id: D1, name: One, kind: epistemic}
  - {id: D2, name: Two, kind: epistemic}
  - {id: D7, name: Clarity, kind: quality}
questions:
  - {id: Q1, text: "q1?"}
  - {id: Q2, text: "q2?"}
  - {id: Q3, text: "q3?"}
raters:
  - {id: ann}
passes:
  - {id: layer1, conditions: [A, B, B1], dimensions: [D1, D2], primary: true}
  - {id: layer2, conditions: [B, B1], dimensions: [D7], after: [layer1]}
rules: {pass: {questions: 2}}
criteria:
  - {id: same, kind: delta, of: [B1, B], dimensions: [D1, D2], within: 0.5}
  - {id: lighter, kind: delta, of: [B1, B], dimensions: [D7], per: sum, below: 0}
  - {id: seed, kind: seed, treatment: B1}
decisions:
  - {if: [same, lighter, seed], then: adopt}
  - {otherwise: defer}
"""

PROBES = """\
version: 1
study: probes
responses: "{condition}/{question}_{replicate}.md"
stripped_responses: "{condition}_s/{question}_{replicate}.md"
replicates: 3
scale: {labels: [PASS, FAIL, HARM]}
conditions:
  - {id: CTRL, role: baseline}
  - {id: TRT}
dimensions:
  - {id: V, name: Outcome, kind: quality}
questions:
  - {id: L1, text: "a"}
  - {id: L2, text: "b"}
  - {id: L3, text: "c"}
raters:
  - {id: ann}
rounds:
  - {id: r1, questions: main}
passes:
  - {id: main, conditions: [CTRL, TRT], dimensions: [V], primary: true}
criteria:
  - {id: up, kind: rate, label: PASS, of: [TRT, CTRL], questions: [L1, L2], above: 0}
  - {id: no-harm, kind: rate, label: HARM, of: [TRT], at_most: 0, require: 2}
decisions:
  - {if: [up, no-harm], then: adopt}
  - {otherwise: keep}
"""


def problems_of(text: str) -> list[tuple[int | None, str]]:
    with pytest.raises(PlanProblems) as info:
        parse_plan(text.encode())
    return info.value.problems


def patched(base: str, old: str, new: str) -> str:
    assert base.count(old) == 1, old
    return base.replace(old, new)


def only_problem(text: str) -> tuple[int | None, str]:
    found = problems_of(text)
    assert len(found) == 1, found
    return found[0]


# --------------------------------------------------------------------------- honest shapes


def test_the_four_arm_plan_loads_with_its_criteria_and_decisions() -> None:
    plan = parse_plan(ARMS.encode())
    assert [c.id for c in plan.treatments] == ["B", "B1"]
    same, lighter, seed = plan.criteria
    assert same.bound == Bound("within", Fraction(1, 2)) and same.per == "dimension"
    assert lighter.bound == Bound("below", Fraction(0)) and lighter.per == "sum"
    assert seed.bound is None and seed.treatment == "B1"
    assert plan.pass_("layer2").after == ("layer1",)
    assert [(r.criteria, r.then, r.otherwise) for r in plan.decisions] == [
        (("same", "lighter", "seed"), "adopt", False),
        ((), "defer", True),
    ]


def test_the_probe_plan_resolves_its_defaults_in_the_model() -> None:
    plan = parse_plan(PROBES.encode())
    up, harm = plan.criteria
    assert plan.scale.labels == ("PASS", "FAIL", "HARM") and plan.replicates == 3
    assert up.dimension == "V" and harm.dimension == "V"  # the pass's only dimension
    assert up.questions == ("L1", "L2") and harm.questions == ()  # () = every question of the round
    assert up.require is None and harm.require == 2
    assert plan.response_path("TRT", "L2", replicate=3) == "trt/l2_3.md"


def test_a_seed_criterion_takes_the_only_treatment_when_it_names_none() -> None:
    text = patched(ARMS, "  - {id: B1}\n", "").replace("[A, B, B1]", "[A, B]").replace("[B, B1]", "[A, B]")
    text = text.replace("of: [B1, B]", "of: [B, A]").replace("kind: seed, treatment: B1}", "kind: seed}")
    assert parse_plan(text.encode()).criterion("seed").treatment == "B"


def test_amendments_take_any_subset_of_several_conditions() -> None:
    text = (
        ARMS + "amendments:\n  - {id: d7-fix, title: T, rationale: R, dimensions: [D7], conditions: [B1], "
        "passes: [layer2]}\n"
    )
    amendment = parse_plan(text.encode()).amendment("d7-fix")
    assert amendment.conditions == ("B1",) and amendment.passes == ("layer2",)
    # the default (every pass) includes layer2, which does not score D1: named, with its line
    text = (
        ARMS
        + "amendments:\n  - {id: d1-fix, title: T, rationale: R, dimensions: [D1], conditions: [B, B1]}\n"
    )
    assert only_problem(text) == (
        30,
        "amendment d1-fix: pass layer2 does not score D1 (list the passes it re-scores under `passes`)",
    )
    listed = text.replace("conditions: [B, B1]}", "conditions: [B, B1], passes: [layer1]}")
    assert parse_plan(listed.encode()).amendment("d1-fix").conditions == ("B", "B1")


# --------------------------------------------------------------------------- unknown ids


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        (
            "of: [B1, B], dimensions: [D1, D2]",
            "of: [B9, B], dimensions: [D1, D2]",
            23,
            "criterion same: unknown condition 'B9'",
        ),
        (
            "kind: seed, treatment: B1",
            "kind: seed, treatment: C",
            25,
            "criterion seed: unknown condition 'C'",
        ),
        (
            "dimensions: [D1, D2], within",
            "dimensions: [D1, D9], within",
            23,
            "criterion same: unknown dimension 'D9'",
        ),
        (
            "dimensions: [D7], per",
            "dimensions: [D7], pass: layer9, per",
            24,
            "criterion lighter: unknown pass 'layer9'",
        ),
        (
            "if: [same, lighter, seed]",
            "if: [same, heavier, seed]",
            27,
            "decisions: unknown criterion 'heavier'",
        ),
        ("after: [layer1]", "after: [layer0]", 20, "pass layer2: after names unknown pass 'layer0'"),
    ],
)
def test_a_criterion_or_row_naming_an_unknown_id(old: str, new: str, line: int, message: str) -> None:
    assert only_problem(patched(ARMS, old, new)) == (line, message)


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        (
            "questions: [L1, L2], above",
            "questions: [L1, L7], above",
            23,
            "criterion up: unknown question 'L7'",
        ),
        (
            "label: PASS, of: [TRT, CTRL]",
            "label: PASSED, of: [TRT, CTRL]",
            23,
            "criterion up: unknown label 'PASSED' (the scale's labels: PASS, FAIL, HARM)",
        ),
        (
            "label: HARM, of: [TRT]",
            "label: HARM, dimension: W, of: [TRT]",
            24,
            "criterion no-harm: unknown dimension 'W'",
        ),
    ],
)
def test_a_rate_naming_an_unknown_question_label_or_dimension(
    old: str, new: str, line: int, message: str
) -> None:
    assert only_problem(patched(PROBES, old, new)) == (line, message)


# --------------------------------------------------------------------------- kinds, scales, bounds


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        (
            "D2], within: 0.5}",
            "D2], within: 0.5, below: 1}",
            23,
            "criterion same: needs exactly one bound (within, at_most, below, at_least or above), "
            "found 2: within, below",
        ),
        (
            "D2], within: 0.5}",
            "D2]}",
            23,
            "criterion same: needs exactly one bound (within, at_most, below, at_least or above), found 0",
        ),
        (
            "treatment: B1}",
            "treatment: B1, above: 0}",
            25,
            "criterion seed: a seed criterion takes no bound (it holds when the seed's rule gives PASS); "
            "remove `above`",
        ),
        ("within: 0.5}", "within: -0.5}", 23, "criterion same: within is -0.5, but |v| ≤ m needs m ≥ 0"),
        (
            "per: sum, below: 0}",
            "per: sum, label: PASS, below: 0}",
            24,
            "criterion lighter: `label` does not apply to a delta criterion "
            "(it takes of, dimensions, per, pass, gate)",
        ),
        (
            "treatment: B1}",
            "treatment: B1, pass: layer1}",
            25,
            "criterion seed: `pass` does not apply to a seed criterion (it takes treatment, gate)",
        ),
        (
            "{id: same, kind: delta, of: [B1, B], dimensions",
            "{id: same, kind: delta, dimensions",
            23,
            "criterion same: a delta criterion needs `of`",
        ),
        (
            "of: [B1, B], dimensions: [D1, D2]",
            "of: [B, B], dimensions: [D1, D2]",
            23,
            "criterion same: of compares B with itself",
        ),
    ],
)
def test_bounds_and_keys_belong_to_the_kind(old: str, new: str, line: int, message: str) -> None:
    assert only_problem(patched(ARMS, old, new)) == (line, message)


def test_per_on_a_rate_is_refused() -> None:
    text = patched(PROBES, "questions: [L1, L2], above: 0}", "questions: [L1, L2], per: sum, above: 0}")
    assert only_problem(text) == (
        23,
        "criterion up: `per` does not apply to a rate criterion "
        "(it takes of, label, dimension, questions, require, pass, gate)",
    )


def test_delta_and_seed_on_a_labelled_scale_are_plan_errors() -> None:
    text = (
        PROBES + "  - {id: mean-v, kind: delta, of: [TRT, CTRL], dimensions: [V], within: 1}\n"
        "  - {id: s, kind: seed, treatment: TRT}\n"
    )
    text = (
        text.replace("decisions:\n  - {if: [up, no-harm], then: adopt}\n  - {otherwise: keep}\n", "")
        + "decisions:\n  - {if: [up, no-harm, mean-v, s], then: adopt}\n  - {otherwise: keep}\n"
    )
    found = problems_of(text)
    assert (
        25,
        "criterion mean-v: a delta criterion needs means, and a labelled scale has none (use kind: rate)",
    ) in found
    assert (
        26,
        "criterion s: a seed criterion needs means, and a labelled scale has none (use kind: rate)",
    ) in found
    assert len(found) == 2, found


def test_a_rate_on_an_ordinal_scale_is_a_plan_error() -> None:
    text = patched(
        ARMS,
        "  - {id: seed, kind: seed, treatment: B1}\n",
        "  - {id: seed, kind: seed, treatment: B1}\n"
        "  - {id: r, kind: rate, label: PASS, of: [B1], dimension: D1, above: 0}\n",
    )
    text = text.replace("if: [same, lighter, seed]", "if: [same, lighter, seed, r]")
    assert only_problem(text) == (
        26,
        "criterion r: a rate criterion counts labels, and the scale has none "
        "(write scale: {labels: [...]}, or use kind: delta)",
    )


def test_require_above_the_number_of_questions() -> None:
    text = patched(PROBES, "at_most: 0, require: 2}", "at_most: 0, require: 4}")
    assert only_problem(text) == (24, "criterion no-harm: require is 4 but it is evaluated on 3 questions")
    text = patched(PROBES, "questions: [L1, L2], above: 0}", "questions: [L1, L2], above: 0, require: 3}")
    assert only_problem(text) == (23, "criterion up: require is 3 but it is evaluated on 2 questions")


def test_a_rate_question_outside_the_verdict_round() -> None:
    text = patched(
        PROBES,
        "  - {id: r1, questions: main}",
        "  - {id: r1, questions: [L1, L2, L3]}\n  - {id: r2, questions: holdout}",
    )
    text = patched(text, "raters:", "holdout:\n  - {id: L9, text: later}\nraters:")
    text = patched(text, "questions: [L1, L2], above", "questions: [L1, L9], above")
    assert only_problem(text) == (26, "criterion up: question L9 is not scored in the verdict round r1")


# --------------------------------------------------------------------------- which pass a criterion reads


def test_a_rate_whose_pass_scores_several_dimensions_needs_dimension() -> None:
    text = patched(
        PROBES,
        "  - {id: V, name: Outcome, kind: quality}\n",
        "  - {id: V, name: Outcome, kind: quality}\n  - {id: W, name: Harm, kind: quality}\n",
    )
    text = patched(text, "dimensions: [V], primary", "dimensions: [V, W], primary")
    found = problems_of(text)
    assert found == [
        (
            24,
            "criterion up: the primary pass scores several dimensions: name the labelled one with dimension:",
        ),
        (
            25,
            "criterion no-harm: the primary pass scores several dimensions: name the labelled one with "
            "dimension:",
        ),
    ]
    fixed = text.replace("label: PASS,", "label: PASS, dimension: V,").replace(
        "label: HARM,", "label: HARM, dimension: W,"
    )
    assert parse_plan(fixed.encode()).criterion("no-harm").dimension == "W"


def test_two_passes_scoring_a_dimension_and_no_primary_asks_for_pass() -> None:
    text = patched(
        ARMS,
        "  - {id: layer2, conditions: [B, B1], dimensions: [D7], after: [layer1]}\n",
        "  - {id: layer2, conditions: [B, B1], dimensions: [D7], after: [layer1]}\n"
        "  - {id: layer2b, conditions: [B, B1], dimensions: [D7]}\n",
    )
    assert only_problem(text) == (
        25,
        "criterion lighter: passes layer2 and layer2b both score D7 and neither is "
        "primary: name the one it reads with pass:",
    )
    named = text.replace("dimensions: [D7], per: sum", "dimensions: [D7], pass: layer2b, per: sum")
    assert parse_plan(named.encode()).criterion("lighter").pass_id == "layer2b"


def test_the_pass_read_must_score_the_dimension_and_the_conditions() -> None:
    text = patched(ARMS, "dimensions: [D7], per: sum", "dimensions: [D7], pass: layer1, per: sum")
    assert only_problem(text) == (24, "criterion lighter: pass layer1 does not score D7")
    text = patched(ARMS, "of: [B1, B], dimensions: [D7]", "of: [B1, A], dimensions: [D7]")
    assert only_problem(text) == (24, "criterion lighter: pass layer2 (read for D7) does not score A")


# --------------------------------------------------------------------------- decisions


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        (
            "  - {otherwise: defer}\n",
            "",
            26,
            "decisions: the last row must be `- {otherwise: ...}` "
            "(what is decided when no other row is taken)",
        ),
        (
            "  - {if: [same, lighter, seed], then: adopt}\n  - {otherwise: defer}\n",
            "  - {otherwise: defer}\n  - {if: [same, lighter, seed], then: adopt}\n",
            27,
            "decisions: row 1 is `otherwise`, which must be the last row (and the only one)",
        ),
        (
            "  - {otherwise: defer}\n",
            "  - {otherwise: defer}\n  - {otherwise: wait}\n",
            28,
            "decisions: row 2 is `otherwise`, which must be the last row (and the only one)",
        ),
        (
            "if: [same, lighter, seed]",
            "if: [same, lighter, same, seed]",
            27,
            "decisions: row 1 lists a criterion twice",
        ),
    ],
)
def test_the_decision_table_ends_with_one_otherwise(old: str, new: str, line: int, message: str) -> None:
    assert only_problem(patched(ARMS, old, new)) == (line, message)


def test_a_row_an_earlier_row_makes_unreachable() -> None:
    text = patched(
        ARMS,
        "  - {otherwise: defer}\n",
        "  - {if: [same, seed, lighter], then: never}\n"
        "  - {if: [seed], then: partly}\n  - {otherwise: defer}\n",
    )
    assert only_problem(text) == (
        28,
        "decisions: row 2 can never be taken: row 1 asks only for same, lighter, seed, which row 2 asks "
        "for too, so row 1 is taken first (put the stricter row first)",
    )
    honest = patched(
        ARMS, "  - {otherwise: defer}\n", "  - {if: [seed], then: partly}\n  - {otherwise: defer}\n"
    )
    assert len(parse_plan(honest.encode()).decisions) == 3  # the stricter row first: reachable


def test_criteria_and_decisions_come_together() -> None:
    without_rows = ARMS[: ARMS.index("decisions:")]
    assert only_problem(without_rows) == (
        22,
        "criteria: pre-registered criteria need a decision table: add `decisions:` with rows "
        "`- {if: [...], then: ...}` and a last `- {otherwise: ...}`",
    )
    rows_only = ARMS[: ARMS.index("criteria:")] + "decisions:\n  - {otherwise: defer}\n"
    found = problems_of(rows_only)
    assert (22, "decisions: a decision table needs `criteria` to decide on") in found


# --------------------------------------------------------------------------- conditions and the seed verdict


def test_several_treatments_without_criteria_ask_for_rules_pass_treatment() -> None:
    seedlike = ARMS[: ARMS.index("criteria:")]
    assert only_problem(seedlike) == (
        4,
        "conditions: 2 treatments (B, B1) and no criteria: name the one the seed's verdict compares with A "
        "under rules.pass.treatment, or pre-register criteria and decisions",
    )
    named = seedlike.replace("rules: {pass: {questions: 2}}", "rules: {pass: {questions: 2, treatment: B1}}")
    assert parse_plan(named.encode()).treatment.id == "B1"


@pytest.mark.parametrize(
    ("treatment", "message"),
    [
        (
            "A",
            "rules.pass.treatment: A is the baseline; name the treatment the seed's verdict compares with it",
        ),
        ("Z", "rules.pass.treatment: unknown condition 'Z'"),
    ],
)
def test_rules_pass_treatment_must_be_a_treatment(treatment: str, message: str) -> None:
    text = ARMS.replace(
        "rules: {pass: {questions: 2}}", f"rules: {{pass: {{questions: 2, treatment: {treatment}}}}}"
    )
    assert only_problem(text) == (21, message)


def test_a_seed_criterion_must_name_a_treatment_not_the_baseline() -> None:
    assert only_problem(patched(ARMS, "kind: seed, treatment: B1}", "kind: seed, treatment: A}")) == (
        25,
        "criterion seed: treatment A is the baseline; the seed's rule judges a treatment against it (B, B1)",
    )
    assert only_problem(patched(ARMS, "kind: seed, treatment: B1}", "kind: seed}")) == (
        25,
        "criterion seed: a seed criterion needs `treatment:` (one of B, B1)",
    )


def test_a_blind_pass_with_several_treatments_scores_the_baseline_and_one_of_them() -> None:
    blind = "  - {id: hidden, conditions: [B, B1], dimensions: [D1], stripped: true, blind: true}\n"
    text = patched(ARMS, "rules: {pass", blind + "rules: {pass")
    assert only_problem(text) == (
        21,
        "pass hidden: a blind pass must score the baseline A and at least one "
        "treatment of B, B1 (it does not score A)",
    )
    text = patched(ARMS, "rules: {pass", blind.replace("[B, B1]", "[A]") + "rules: {pass")
    assert only_problem(text) == (
        21,
        "pass hidden: a blind pass must score the baseline A and at least one "
        "treatment of B, B1 (it scores no treatment)",
    )
    text = patched(
        ARMS,
        "rules: {pass",
        blind.replace("[B, B1]", "[A, B1]").replace(" stripped: true,", "") + "rules: {pass",
    )
    assert only_problem(text) == (
        21,
        "pass hidden: a blind pass must be stripped: true (the markers would reveal the treatments)",
    )
    honest = patched(ARMS, "rules: {pass", blind.replace("[B, B1]", "[A, B1]") + "rules: {pass")
    assert parse_plan(honest.encode()).pass_("hidden").conditions == ("A", "B1")


# --------------------------------------------------------------------------- replicates and pass order


def test_replicates_need_the_placeholder_and_the_placeholder_needs_replicates() -> None:
    text = patched(
        PROBES, 'responses: "{condition}/{question}_{replicate}.md"', 'responses: "{condition}/{question}.md"'
    )
    assert only_problem(text) == (
        3,
        "responses: pattern must use exactly {condition} and {question} and "
        "{replicate}, found ['condition', 'question'] (replicates: above 1 needs "
        "{replicate})",
    )
    text = patched(PROBES, "replicates: 3\n", "replicates: 1\n")
    found = problems_of(text)
    assert (
        3,
        "responses: pattern must use exactly {condition} and {question}, found ['condition', 'question', "
        "'replicate'] ({replicate} needs replicates: above 1)",
    ) in found
    assert len(found) == 2, found  # and stripped_responses, line 4


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        ("after: [layer1]", "after: [layer2]", 20, "pass layer2: after names the pass itself"),
        (
            "dimensions: [D1, D2], primary: true}",
            "dimensions: [D1, D2], primary: true, after: [layer2]}",
            19,
            "pass layer1: the order layer1 → layer2 → layer1 is a cycle, "
            "so none of these passes could ever be "
            "scored first",
        ),
    ],
)
def test_pass_order_refuses_itself_and_cycles(old: str, new: str, line: int, message: str) -> None:
    assert only_problem(patched(ARMS, old, new)) == (line, message)


def test_a_three_pass_cycle_is_reported_once() -> None:
    text = patched(
        ARMS, "dimensions: [D1, D2], primary: true}", "dimensions: [D1, D2], primary: true, after: [l3]}"
    )
    text = patched(
        text, "rules: {pass", "  - {id: l3, conditions: [B], dimensions: [D7], after: [layer2]}\nrules: {pass"
    )
    text = text.replace("dimensions: [D7], per: sum", "dimensions: [D7], pass: layer2, per: sum")
    assert only_problem(text) == (
        19,
        "pass layer1: the order layer1 → l3 → layer2 → layer1 is a cycle, so none "
        "of these passes could ever be scored first",
    )


# --------------------------------------------------------------------------- all at once, through the CLI


def test_every_problem_at_once_with_exit_2_and_nothing_written(tmp_path: Path) -> None:
    text = patched(ARMS, "within: 0.5}", "within: -1, below: 2}")
    text = patched(text, "treatment: B1}", "treatment: A}")
    text = patched(text, "  - {otherwise: defer}\n", "")
    (tmp_path / "aoven.yaml").write_text(text, encoding="utf-8")
    before = sorted(p.name for p in tmp_path.iterdir())
    result = run_cli("check-plan", "--repo", str(tmp_path))
    assert result.code == 2
    assert "invalid plan (4 problems)" in result.err
    for needle in (
        "aoven.yaml:23: criterion same: needs exactly one bound",
        "aoven.yaml:23: criterion same: within is -1",
        "aoven.yaml:25: criterion seed: treatment A is the baseline",
        "aoven.yaml:26: decisions: the last row must be",
    ):
        assert needle in result.err, result.err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "1e400"])
def test_a_bound_that_is_no_number_is_a_plan_error_not_a_crash(value: str) -> None:
    found = only_problem(patched(ARMS, "per: sum, below: 0}", f"per: sum, below: {value}}}"))
    assert found[0] == 24 and found[1].startswith("criterion lighter: below must be a finite number, found ")



def test_labels_are_matched_as_score_cells_match_them_and_defaults_stay_as_written() -> None:
    lower = patched(PROBES, "label: PASS, of: [TRT, CTRL]", "label: pass, of: [TRT, CTRL]")
    plan = parse_plan(lower.encode())
    assert plan.criterion("up").label == "pass" and plan.scale.value_of("pass") == 0
    # a delta without `dimensions` reads every dimension of the primary pass; a seed may skip the gate
    text = patched(ARMS, "of: [B1, B], dimensions: [D1, D2], within", "of: [B1, B], within")
    text = patched(text, "kind: seed, treatment: B1}", "kind: seed, treatment: B1, gate: false}")
    plan = parse_plan(text.encode())
    assert plan.criterion("same").dimensions == () and plan.criterion("seed").gate is False


def test_criterion_ids_are_unique() -> None:
    text = patched(ARMS, "{id: lighter, kind: delta", "{id: same, kind: delta")
    text = text.replace("if: [same, lighter, seed]", "if: [same, seed]")
    assert only_problem(text) == (24, "criteria: duplicate id 'same' (also item 1)")


def test_a_rate_dimension_no_pass_scores() -> None:
    text = patched(PROBES, "  - {id: V, name: Outcome, kind: quality}\n",
                   "  - {id: V, name: Outcome, kind: quality}\n  - {id: W, name: Harm, kind: quality}\n")
    text = patched(text, "label: HARM, of: [TRT]", "label: HARM, dimension: W, of: [TRT]")
    assert only_problem(text) == (25, "criterion no-harm: no pass scores W")
