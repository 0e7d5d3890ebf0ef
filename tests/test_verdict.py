"""The verdict rules (docs/statistics.md), each pinned on its threshold.

Every expected number is written by hand as a Fraction next to the scores that produce it
(the arithmetic is in the comments), never read back from the module under test. The default
plan has 10 questions, 8 dimensions (D1–D6 epistemic, D7 quality, D8 load); a baseline of
every A cell at 2 gives an A aggregate of 16 per question and 160 over the round, so moving
B down by N points in total gives improvement N/160.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aoven_git.errors import UsageError
from aoven_git.model import CellKey, Plan, Round
from aoven_git.plan import load_plan, parse_plan
from aoven_git.verdict import (
    blinding_divergence,
    blinding_pass,
    decide,
    resolve_cells,
    retest_problems,
    self_bias,
)
from aoven_git.verdict_rules import at_least, at_most, rule_pair

QS = [f"Q{i}" for i in range(1, 11)]
DIMS = [f"D{i}" for i in range(1, 9)]
ALL = set(DIMS)
DEFAULT_PLAN = Path(__file__).resolve().parent.parent / "aoven_git" / "templates" / "aoven.yaml"


_PLAN = load_plan(DEFAULT_PLAN)


@pytest.fixture(scope="module")
def plan() -> Plan:
    return _PLAN


def grid(
    changes: dict[tuple[str, str, str], int] | None = None,
    *,
    base: int = 2,
    questions: list[str] = QS,
    conds: tuple[str, ...] = ("A", "B"),
) -> dict[CellKey, int]:
    """Every cell of the round at `base`, then the listed (question, condition, dimension) overrides."""
    out = {CellKey(q, c, d): base for q in questions for c in conds for d in DIMS}
    for (q, c, d), v in (changes or {}).items():
        out[CellKey(q, c, d)] = v
    return out


def lower(
    questions: list[str], dims: list[str], to: int = 1, cond: str = "B"
) -> dict[tuple[str, str, str], int]:
    return {(q, cond, d): to for q in questions for d in dims}


def run(
    plan: Plan,
    scores: dict[CellKey, int] | dict[str, dict[CellKey, int]],
    *,
    counted=ALL,
    excluded=None,
    consensus=None,
    blinded=None,
    **kw,
):
    """decide() on one rater's grid (all cells agreed) or on several raters' grids."""
    per_rater = scores if isinstance(next(iter(scores)), str) else {"r1": scores}
    primary = resolve_cells(
        per_rater, consensus or {}, flag_spread=plan.rules.flag_spread, unflagged=plan.rules.unflagged
    )
    bl = resolve_cells({"r1": blinded}) if blinded is not None else None
    return decide(plan, primary=primary, blinded=bl, counted_dims=counted, excluded=excluded or {}, **kw)


def rule(v, rule_id):
    ev = v.evaluation
    return next(r for r in ev.rules if r.id == rule_id)


# Q1–Q6 improve on D1–D5 (-30); Q7 improves on D6 and D7 (-2): B total 128, improvement 32/160.
EXACT_20 = {**lower(QS[:6], ["D1", "D2", "D3", "D4", "D5"]), **lower(["Q7"], ["D6", "D7"])}


# --------------------------------------------------------------------------- improvement thresholds


def test_improvement_exactly_20_percent_passes(plan):
    v = run(plan, grid(EXACT_20))
    assert v.evaluation.mean_a == Fraction(16) and v.evaluation.mean_b == Fraction(128, 10)
    assert v.evaluation.improvement == Fraction(1, 5)
    assert rule(v, "pass.improvement").outcome == "met"
    assert rule(v, "pass.questions").value == Fraction(6)
    assert v.verdict == "PASS"


def test_improvement_just_below_20_percent_is_inconclusive(plan):
    changes = {**lower(QS[:6], ["D1", "D2", "D3", "D4", "D5"]), **lower(["Q7"], ["D6"])}  # -31
    v = run(plan, grid(changes))
    assert v.evaluation.improvement == Fraction(31, 160)
    assert rule(v, "pass.improvement").outcome == "not-met"
    assert rule(v, "fail.improvement").outcome == "not-met"
    assert v.verdict == "INCONCLUSIVE"
    assert "19.38%" in v.summary and "20%" in v.summary


def test_improvement_exactly_10_percent_is_not_fail(plan):
    # Q1–Q3 on D1–D5 (-15) and Q4 on D1 (-1): -16 → 16/160 = 1/10; only 3 questions improve.
    v = run(plan, grid({**lower(QS[:3], ["D1", "D2", "D3", "D4", "D5"]), **lower(["Q4"], ["D1"])}))
    assert v.evaluation.improvement == Fraction(1, 10)
    assert rule(v, "fail.improvement").outcome == "not-met"
    assert v.verdict == "INCONCLUSIVE"


def test_improvement_just_below_10_percent_fails(plan):
    v = run(plan, grid(lower(QS[:3], ["D1", "D2", "D3", "D4", "D5"])))  # -15
    assert v.evaluation.improvement == Fraction(15, 160)
    assert rule(v, "fail.improvement").outcome == "met"
    assert v.verdict == "FAIL"
    assert v.summary.startswith("FAIL: improvement 9.38% is below 10%")


def test_negative_improvement_fails(plan):
    v = run(plan, grid({("Q1", "B", "D7"): 3}))
    assert v.evaluation.improvement == Fraction(-1, 160)
    assert v.verdict == "FAIL"


def test_thresholds_from_yaml_decimals_are_exact(plan):
    """0.2 in YAML is 1/5, not the float 0.2000000000000000111."""
    assert plan.rules.pass_.improvement == Fraction(1, 5)
    assert plan.rules.pass_.dims_fraction == Fraction(5, 8)


# --------------------------------------------------------------------------- load and regression


# Q1–Q8 improve on D1–D5 (-40); improvement stays ≥ 20% when five or six +1 are added back.
WIDE = lower(QS[:8], ["D1", "D2", "D3", "D4", "D5"])


@pytest.mark.parametrize("dim,rule_kind", [("D8", "load"), ("D6", "regression")])
def test_delta_exactly_half_is_allowed(plan, dim, rule_kind):
    v = run(plan, grid({**WIDE, **{(q, "B", dim): 3 for q in QS[:5]}}))  # five +1 → delta 5/10
    d = next(x for x in v.evaluation.dimensions if x.id == dim)
    assert d.delta == Fraction(1, 2)
    assert rule(v, f"pass.{rule_kind}.{dim}").outcome == "met"
    assert rule(v, f"fail.{rule_kind}.{dim}").outcome == "not-met"
    assert v.evaluation.improvement == Fraction(35, 160)
    assert v.verdict == "PASS"


@pytest.mark.parametrize("dim,rule_kind", [("D8", "load"), ("D6", "regression")])
def test_delta_just_above_half_fails(plan, dim, rule_kind):
    v = run(plan, grid({**WIDE, **{(q, "B", dim): 3 for q in QS[:6]}}))  # six +1 → delta 6/10
    assert next(x for x in v.evaluation.dimensions if x.id == dim).delta == Fraction(3, 5)
    assert v.evaluation.improvement == Fraction(34, 160)  # still above 20%
    assert rule(v, f"fail.{rule_kind}.{dim}").outcome == "met"
    assert v.verdict == "FAIL"
    assert dim in v.summary


def test_quality_dimension_other_than_load_has_no_regression_rule(plan):
    v = run(plan, grid({**WIDE, **{(q, "B", "D7"): 3 for q in QS[:6]}}))  # D7 +0.6: not epistemic, not load
    assert not any(r.id.endswith(".D7") for r in v.evaluation.rules)
    assert v.verdict == "PASS"


# --------------------------------------------------------------------------- mean A = 0


def test_mean_a_zero_is_inconclusive(plan):
    v = run(plan, grid(base=0))
    assert v.evaluation.mean_a == 0 and v.evaluation.improvement is None
    assert rule(v, "pass.improvement").outcome == "not-evaluable"
    assert rule(v, "fail.improvement").outcome == "not-evaluable"
    assert v.verdict == "INCONCLUSIVE"
    assert "undefined" in v.summary


def test_mean_a_zero_still_fails_on_an_evaluable_regression(plan):
    v = run(plan, grid({(q, "B", "D1"): 1 for q in QS[:6]}, base=0))  # D1 +0.6
    assert v.evaluation.improvement is None
    assert v.verdict == "FAIL"


# --------------------------------------------------------------------------- kappa exclusion


def test_excluded_dimension_is_left_out_of_the_aggregate(plan):
    # D7 excluded: 7 counted dims, A aggregate 14/question. B D7 at 3 everywhere would cost
    # +10 if it counted; it does not. Q1–Q6 on D1–D5: -30 → 30/140.
    changes = {**lower(QS[:6], ["D1", "D2", "D3", "D4", "D5"]), **{(q, "B", "D7"): 3 for q in QS}}
    v = run(plan, grid(changes), counted=ALL - {"D7"}, excluded={"D7": "kappa 0.41 below 0.6"})
    assert v.evaluation.mean_a == 14 and v.evaluation.improvement == Fraction(3, 14)
    assert v.evaluation.needed_dimensions == 5  # ceil(5/8 × 7) = ceil(4.375)
    assert v.verdict == "PASS"
    assert "D7" in v.excluded and any("kappa 0.41" in r for r in v.reasons)


def test_questions_rule_needs_ceil_of_five_eighths_of_seven(plan):
    # Q1–Q5 on D1–D5, Q6 and Q7 on D1–D4 only: 25+4+4 = -33 → 33/140 ≥ 20%, but only five
    # questions reach 5 improved dims (a floor of 4.375 would have let seven through).
    changes = {
        **lower(QS[:5], ["D1", "D2", "D3", "D4", "D5"]),
        **lower(["Q6", "Q7"], ["D1", "D2", "D3", "D4"]),
    }
    v = run(plan, grid(changes), counted=ALL - {"D7"})
    assert v.evaluation.improvement == Fraction(33, 140)
    assert [q.improved_dimensions for q in v.evaluation.questions][:8] == [5, 5, 5, 5, 5, 4, 4, 0]
    r = rule(v, "pass.questions")
    assert (r.value, r.threshold, r.outcome) == (Fraction(5), Fraction(6), "not-met")
    assert v.verdict == "INCONCLUSIVE"


def test_excluded_load_dimension_makes_pass_impossible(plan):
    v = run(plan, grid(WIDE), counted=ALL - {"D8"}, excluded={"D8": "kappa 0.41 below 0.6"})
    assert v.evaluation.improvement == Fraction(40, 140)  # far above 20%
    assert rule(v, "pass.load.D8").outcome == "not-evaluable"
    assert rule(v, "fail.load.D8").outcome == "not-evaluable"
    assert "kappa 0.41 below 0.6" in rule(v, "pass.load.D8").reason
    assert v.verdict == "INCONCLUSIVE"
    assert "PASS is impossible" in v.summary and "D8" in v.summary


def test_excluded_dimension_does_not_shield_an_evaluable_fail(plan):
    changes = {**WIDE, **{(q, "B", "D6"): 3 for q in QS[:6]}}  # D6 regresses by 0.6
    v = run(plan, grid(changes), counted=ALL - {"D8"}, excluded={"D8": "kappa 0.41 below 0.6"})
    assert rule(v, "pass.load.D8").outcome == "not-evaluable"
    assert rule(v, "fail.regression.D6").outcome == "met"
    assert v.verdict == "FAIL"


def test_no_counted_dimension(plan):
    v = run(plan, grid(WIDE), counted=set())
    assert v.evaluation.improvement is None
    assert rule(v, "pass.questions").outcome == "not-evaluable"
    assert v.verdict == "INCONCLUSIVE"


# --------------------------------------------------------------------------- step 1: cells


def test_unflagged_mean_median_require():
    key = CellKey("Q1", "A", "D1")
    scores = {"r1": {key: 0}, "r2": {key: 1}, "r3": {key: 1}}  # spread 1: not flagged
    mean = resolve_cells(scores, unflagged="mean").cells[key]
    assert (mean.resolution, mean.value, mean.flagged) == ("mean", Fraction(2, 3), False)
    assert resolve_cells(scores, unflagged="median").cells[key].value == Fraction(1)
    even = {"r1": {key: 1}, "r2": {key: 2}}
    assert resolve_cells(even, unflagged="median").cells[key].value == Fraction(3, 2)
    req = resolve_cells(scores, unflagged="require")
    assert req.cells[key].resolution == "missing" and req.needs_consensus == [key]
    assert resolve_cells(scores, {key: 0}, unflagged="require").cells[key].value == Fraction(0)


def test_agreement_wins_over_consensus_and_contested_keeps_recorded_values():
    k1, k2, k3 = CellKey("Q1", "A", "D1"), CellKey("Q1", "B", "D1"), CellKey("Q2", "B", "D1")
    scores = {"r1": {k1: 2, k2: 0, k3: 0}, "r2": {k1: 2, k2: 3, k3: 3}}
    res = resolve_cells(scores, {k1: 0, k2: "contested", k3: 1}, alternatives={k2: [1]})
    assert res.cells[k1].resolution == "agreed" and res.cells[k1].value == 2
    assert res.cells[k2].resolution == "contested" and res.cells[k2].options == (0, 1, 3)
    assert res.cells[k2].value is None and res.cells[k2].flagged
    assert res.cells[k3].resolution == "consensus" and res.cells[k3].value == 1


def test_flagged_cells_without_consensus_are_not_ready(plan):
    r1 = grid(EXACT_20)
    r2 = dict(r1)
    r2[CellKey("Q2", "A", "D3")] = 0  # 2 vs 0: spread 2 > 1
    r2[CellKey("Q6", "B", "D8")] = 3  # 2 vs 3: unflagged, mean 5/2
    v = run(plan, {"r1": r1, "r2": r2})
    assert v.verdict == "NOT-READY" and v.evaluation is None
    assert any("Q2/A/D3" in s and "consensus" in s for s in v.not_ready)
    assert not any("Q6/B/D8" in s for s in v.not_ready)
    done = run(plan, {"r1": r1, "r2": r2}, consensus={CellKey("Q2", "A", "D3"): 2})
    # Q6/B/D8 resolves to 5/2: B total 128 + 1/2 → improvement (32 - 1/2)/160 = 63/320.
    assert done.evaluation.improvement == Fraction(63, 320)
    assert done.verdict == "INCONCLUSIVE"


def test_blockers_make_not_ready_and_are_listed(plan):
    v = run(plan, grid(EXACT_20), blockers=["seal violation visible-at-seal by cto: …"])
    assert v.verdict == "NOT-READY" and v.not_ready == ("seal violation visible-at-seal by cto: …",)


def test_missing_scores_are_not_ready(plan):
    scores = grid(EXACT_20)
    del scores[CellKey("Q3", "B", "D2")]
    v = run(plan, scores)
    assert v.verdict == "NOT-READY" and "Q3/B/D2" in v.summary


# --------------------------------------------------------------------------- step 6: contested


def test_contested_cell_that_flips_the_verdict(plan):
    r1 = grid(EXACT_20)
    r2 = dict(r1)
    r2[CellKey("Q7", "B", "D6")] = 3  # r1 says 1 (the -1 that reaches exactly 20%), r2 says 3
    v = run(plan, {"r1": r1, "r2": r2}, consensus={CellKey("Q7", "B", "D6"): "contested"})
    assert v.verdict == "CONTESTED"
    assert v.contested == (CellKey("Q7", "B", "D6"),)
    assert v.best.verdict == "PASS" and v.best.improvement == Fraction(1, 5)  # B at 1
    assert v.worst.verdict == "INCONCLUSIVE"
    assert v.worst.improvement == Fraction(30, 160)  # B at 3: -32 + 2
    assert "PASS" in v.summary and "INCONCLUSIVE" in v.summary


def test_contested_cell_that_does_not_flip_is_robust(plan):
    # WIDE passes with improvement 40/160. Q9/A/D7 contested between 0 and 2: best for B is the
    # higher A (2 → 40/160), worst the lower (0 → A total 158, improvement 38/158).
    r1 = grid(WIDE)
    r2 = dict(r1)
    r2[CellKey("Q9", "A", "D7")] = 0
    v = run(plan, {"r1": r1, "r2": r2}, consensus={CellKey("Q9", "A", "D7"): "contested"})
    assert v.verdict == "PASS"
    assert v.best.improvement == Fraction(40, 160)
    assert v.worst.improvement == Fraction(38, 158)
    assert v.evaluation is v.worst
    assert any("robust to 1 contested cell" in r for r in v.reasons)


# --------------------------------------------------------------------------- step 2: blinding


def blinded_grid(changes):
    return grid(changes, conds=("B",))


def test_blinding_divergence_exactly_half_uses_primary(plan):
    # Primary B: WIDE (40 cells at 1). Blinded B: every cell at 2, so 40 of the 80
    # (question, dimension) pairs differ by 1 → divergence 40/80 = 1/2, not above 0.5.
    v = run(plan, grid(WIDE), blinded=blinded_grid({}))
    assert v.blinding.divergence == Fraction(1, 2) and v.blinding.compared == 80
    assert v.b_scores_from == "unblinded"
    assert v.evaluation.improvement == Fraction(40, 160) and v.verdict == "PASS"


def test_blinding_divergence_just_above_half_uses_blinded(plan):
    # One more differing pair (Q9/D1: 2 vs 3) → 41/80 > 1/2: the blinded B scores count, and
    # those are A plus one point: improvement -1/160 → FAIL.
    v = run(plan, grid(WIDE), blinded=blinded_grid({("Q9", "B", "D1"): 3}))
    assert v.blinding.divergence == Fraction(41, 80)
    assert v.b_scores_from == "blinded" and v.blinding.used == "blinded"
    assert v.evaluation.improvement == Fraction(-1, 160)
    assert v.verdict == "FAIL"


def test_blinding_divergence_function():
    u = {("Q1", "D1"): Fraction(1), ("Q1", "D2"): Fraction(2), ("Q2", "D1"): Fraction(0)}
    b = {("Q1", "D1"): Fraction(3), ("Q1", "D2"): Fraction(3, 2)}
    assert blinding_divergence(u, b) == Fraction(5, 4)  # (2 + 1/2) / 2: Q2/D1 not in both
    assert blinding_divergence(u, {}) is None


def test_blinding_pass_found(plan):
    assert blinding_pass(plan).id == "blinded"
    plain = dataclasses.replace(plan, passes=(plan.primary_pass,))
    assert blinding_pass(plain) is None


# --------------------------------------------------------------------------- self-bias


def test_self_bias_flag():
    honest = grid({("Q3", "B", "D8"): 3})  # one B worse than A
    biased = grid(lower(QS[:4], ["D1"]))  # B never worse
    out = self_bias({"cto": biased, "logician": honest}, pass_id="unblinded", baseline="A", treatment="B")
    assert [(s.rater, s.b_worse, s.compared, s.flagged) for s in out] == [
        ("cto", 0, 80, True),
        ("logician", 1, 80, False),
    ]


# --------------------------------------------------------------------------- re-test rounds


HOLD = ["Q11", "Q12", "Q13", "Q14", "Q15"]


def retest_plan(plan: Plan, *rounds: Round, cap: int = 1) -> Plan:
    return dataclasses.replace(plan, rounds=(plan.rounds[0], *rounds), retest_cap=cap)


def hold_grid(changes=None):
    return grid(changes, questions=HOLD)


def test_terminal_second_inconclusive_round(plan):
    p = retest_plan(plan, Round("retest1", tuple(HOLD), "holdout", ("R1",)))
    # Q11–Q15: three questions improve on D1–D5 (-15/80 A total → 3/16 = 18.75%): inconclusive.
    v = run(
        p,
        hold_grid(lower(HOLD[:3], ["D1", "D2", "D3", "D4", "D5"])),
        round_id="retest1",
        previous_verdicts={"main": "INCONCLUSIVE"},
    )
    assert v.evaluation.improvement == Fraction(15, 80)
    assert v.verdict == "INCONCLUSIVE" and v.terminal
    assert "v0.1 is terminated" in v.summary and "v0.2 needs structural changes" in v.summary
    assert v.retest_problems == ()
    unknown = run(p, hold_grid(lower(HOLD[:3], ["D1", "D2", "D3", "D4", "D5"])), round_id="retest1")
    assert unknown.verdict == "INCONCLUSIVE" and not unknown.terminal
    assert any("verdict of round main is unknown" in r for r in unknown.reasons)
    main = run(p, grid(EXACT_20), round_id="main", previous_verdicts={})
    assert not main.terminal and main.verdict == "PASS"


def test_retest_round_problems(plan):
    mixed = Round("retest1", ("Q1", "Q11"), "explicit", ("R1", "R9"))
    over = Round("retest2", tuple(HOLD), "holdout", ())
    p = retest_plan(plan, mixed, over, cap=1)
    probs = retest_problems(p, "retest1", {"main": "INCONCLUSIVE"})
    assert any("outside the hold-out set: Q1" in s for s in probs)
    assert any("not listed in the plan: R9" in s for s in probs)
    assert not any("at most" in s for s in probs)
    assert any("allows at most 1" in s for s in retest_problems(p, "retest2", {}))
    after_fail = retest_problems(p, "retest2", {"main": "INCONCLUSIVE", "retest1": "FAIL"})
    assert any("only allowed after an INCONCLUSIVE round" in s for s in after_fail)
    terminated = retest_problems(p, "retest2", {"main": "INCONCLUSIVE", "retest1": "INCONCLUSIVE"})
    assert any("already terminated" in s for s in terminated)
    assert retest_problems(p, "main", {}) == []
    with pytest.raises(UsageError, match="unknown round"):
        retest_problems(p, "nope", {})


def test_retest_problem_makes_round_not_ready(plan):
    p = retest_plan(plan, Round("retest1", tuple(HOLD), "holdout", ("R1",)))
    v = run(p, hold_grid(), round_id="retest1", previous_verdicts={"main": "PASS"})
    assert v.verdict == "NOT-READY" and "only allowed after an INCONCLUSIVE round" in v.summary


def test_retest_with_fewer_questions_than_the_questions_rule(plan):
    p = retest_plan(plan, Round("retest1", tuple(HOLD), "holdout", ()))
    v = run(
        p,
        hold_grid(lower(HOLD, ["D1", "D2", "D3", "D4", "D5"])),
        round_id="retest1",
        previous_verdicts={"main": "INCONCLUSIVE"},
    )
    assert v.evaluation.improvement == Fraction(25, 80)
    assert rule(v, "pass.questions").outcome == "not-met"
    assert "the round has only 5" in rule(v, "pass.questions").sentence
    assert v.verdict == "INCONCLUSIVE" and v.terminal


# --------------------------------------------------------------------------- plans from YAML


def test_custom_plan_from_yaml():
    """A small hand-written plan: thresholds read as exact decimals, 2 questions, 2 dims."""
    text = DEFAULT_PLAN.read_text(encoding="utf-8")
    text = text.replace("pass: {improvement: 0.20, questions: 6,", "pass: {improvement: 0.25, questions: 2,")
    p = parse_plan(text.encode())
    p = dataclasses.replace(p, rounds=(Round("main", ("Q1", "Q2"), "explicit"),))
    assert p.rules.pass_.improvement == Fraction(1, 4)
    # Q1, Q2 each improve on D1–D5 (-10 of A total 32): 10/32 = 5/16 ≥ 1/4.
    v = run(p, grid(lower(["Q1", "Q2"], ["D1", "D2", "D3", "D4", "D5"]), questions=["Q1", "Q2"]))
    assert v.evaluation.improvement == Fraction(5, 16) and v.verdict == "PASS"


# --------------------------------------------------------------------------- property: reference rules


def reference_verdict(a: dict[tuple[str, str], int], b: dict[tuple[str, str], int]) -> str:
    """Steps 3–5 of docs/statistics.md for the default plan, every dimension counted, written out plainly."""
    mean_a = Fraction(sum(a.values()), 10)
    mean_b = Fraction(sum(b.values()), 10)
    imp = None if mean_a == 0 else (mean_a - mean_b) / mean_a
    delta = {d: Fraction(sum(b[q, d] - a[q, d] for q in QS), 10) for d in DIMS}
    guarded = ["D1", "D2", "D3", "D4", "D5", "D6", "D8"]  # epistemic and load: same 0.5 here
    if (imp is not None and imp < Fraction(1, 10)) or any(delta[d] > Fraction(1, 2) for d in guarded):
        return "FAIL"
    improving = sum(1 for q in QS if sum(b[q, d] < a[q, d] for d in DIMS) >= 5)
    if imp is not None and imp >= Fraction(1, 5) and improving >= 6:
        return "PASS"
    return "INCONCLUSIVE"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 3), min_size=80, max_size=80),
    st.lists(st.sampled_from([-1, 0]), min_size=10, max_size=10),
    st.lists(st.sampled_from([-1, 0, 0, 0, 1]), min_size=80, max_size=80),
)
def test_verdict_matches_reference_rules(a_scores, per_question, noise):
    """Random studies (B shifted per question, plus per-cell noise) against the plain reference."""
    keys = [(q, d) for q in QS for d in DIMS]
    a = dict(zip(keys, a_scores, strict=True))
    shift = {q: s for q, s in zip(QS, per_question, strict=True)}
    b = {k: min(3, max(0, a[k] + shift[k[0]] + n)) for k, n in zip(keys, noise, strict=True)}
    scores = {CellKey(q, "A", d): v for (q, d), v in a.items()} | {
        CellKey(q, "B", d): v for (q, d), v in b.items()
    }
    assert run(_PLAN, scores).verdict == reference_verdict(a, b)


# --------------------------------------------------------------------------- rule families


@given(
    value=st.fractions(min_value=-2, max_value=2, max_denominator=40),
    threshold=st.fractions(min_value=-1, max_value=1, max_denominator=10),
    fail_offset=st.fractions(min_value=0, max_value=1, max_denominator=10),
)
@settings(max_examples=200, deadline=None)
def test_rule_pair_twin_is_the_negated_condition_at_the_fail_threshold(value, threshold, fail_offset):
    fail_at = threshold - fail_offset
    rules = rule_pair(id="improvement", value=value, threshold=threshold, fail_threshold=fail_at,
                      holds=at_least, texts=("≥", "<"), sentences=("missed", "failing"))
    by_kind = {r.kind: r for r in rules}
    assert [r.id for r in rules] == ["pass.improvement", "fail.improvement"]
    assert by_kind["pass"].outcome == ("met" if value >= threshold else "not-met")
    assert by_kind["fail"].outcome == ("met" if value < fail_at else "not-met")  # "met": it fails
    assert (by_kind["pass"].value, by_kind["fail"].value) == (value, value)
    assert (by_kind["pass"].threshold, by_kind["fail"].threshold) == (threshold, fail_at)
    assert by_kind["pass"].sentence == (None if value >= threshold else "missed")
    assert by_kind["fail"].sentence == ("failing" if value < fail_at else None)
    same = rule_pair(id="load.D8", value=value, threshold=threshold, holds=at_most, texts=("≤", ">"))
    assert [r.outcome for r in same].count("met") == 1  # same threshold: exactly one side holds


def test_rule_pair_not_evaluable_and_without_twin():
    rules = rule_pair(id="load.D8", value=Fraction(1), threshold=Fraction(1, 2), holds=at_most,
                      texts=("≤", ">"), not_evaluable="D8 does not count", impossible="the load rule")
    assert [(r.outcome, r.reason) for r in rules] == [("not-evaluable", "D8 does not count")] * 2
    assert rules[0].sentence == "PASS is impossible: the load rule" and rules[1].sentence is None
    assert rules[0].value == Fraction(1)  # the delta is still shown
    [alone] = rule_pair(id="questions", value=Fraction(5), threshold=Fraction(6), holds=at_least,
                        texts=("≥ 6 questions", None), sentences=("only 5", ""))
    assert (alone.id, alone.outcome, alone.sentence) == ("pass.questions", "not-met", "only 5")


def test_verdict_modules_import_no_numpy():
    """The verdict stays importable without numpy/scipy (what the pre-commit hook may load)."""
    code = ("import sys, aoven_git.verdict, aoven_git.verdict_rules, aoven_git.numfmt; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy', 'aoven_git')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "numpy" not in out and "scipy" not in out
    assert "aoven_git.agreement" not in out and "aoven_git.analysis" not in out
