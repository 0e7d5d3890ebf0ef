"""criteria.py: every criterion kind on the issue's four-arm and probe designs (docs/statistics.md,
"Criteria"). Every expected value is worked out by hand in the comments from the scores written
next to it; plans are parsed from YAML (tests/design_studies.py), cells resolved by verdict.py."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from aoven_git.criteria import Inputs, describe, evaluate, evaluate_all, pass_for, passes_read
from aoven_git.model import CellKey, Plan
from aoven_git.verdict import CellResolution, decide, resolve_cells
from tests.design_studies import (
    DIMS,
    FOUR_ARM_CRITERIA,
    PROBES,
    QS,
    arm_grid,
    four_arm,
    lowered,
    probe_grid,
    probes,
)

EPISTEMIC = ["D1", "D2", "D3", "D4", "D5", "D6"]
PLAN = four_arm()
PROBE = probes()


def resolved(*graders: dict[CellKey, int], consensus: dict[CellKey, int | str] | None = None,
             alternatives: dict[CellKey, list[int]] | None = None) -> CellResolution:
    """Each grid is one rater's sheet; cells after consensus as the report resolves them."""
    return resolve_cells({f"r{i}": g for i, g in enumerate(graders)}, consensus, alternatives=alternatives)


def results(plan: Plan, res: CellResolution, counted: set[str] | None = None,
            excluded: dict[str, str] | None = None) -> dict[str, object]:
    pass_id = plan.primary_pass.id
    dims = set(plan.primary_pass.dimensions) if counted is None else counted
    out = evaluate(plan, {pass_id: res}, {pass_id: dims}, excluded={pass_id: excluded or {}})
    return {r.id: r for r in out}


def honest_grid() -> dict[CellKey, int]:
    """A at 2 everywhere; B, B1, B2 at 1 on D1–D6; B1 at 1 on D7, D8 (B and B2 at 2 there).
    B1 − B: 0 on every epistemic dimension, D7+D8 sum −2; B2 − B: 0 and 0."""
    return arm_grid({**lowered("B", EPISTEMIC, 1), **lowered("B1", EPISTEMIC, 1),
                     **lowered("B2", EPISTEMIC, 1), **lowered("B1", ["D7", "D8"], 1)})


def test_delta_per_dimension_holds_with_each_difference_written_out() -> None:
    got = results(PLAN, resolved(honest_grid()))
    same = got["B1-same"]
    assert same.outcome == "holds"
    assert same.values == {d: Fraction(0) for d in EPISTEMIC}
    assert same.satisfied == {d: True for d in EPISTEMIC}
    assert same.passes == ("unblinded",)


def test_delta_per_dimension_fails_when_one_dimension_moves_past_the_bound() -> None:
    # B1 at 3 on D4 for Q1–Q6 (1 elsewhere): mean B1 on D4 = (6·3 + 4·1)/10 = 22/10; B = 1 → v = 6/5
    grid = {**honest_grid(), **{CellKey(q, "B1", "D4"): 3 for q in QS[:6]}}
    same = results(PLAN, resolved(grid))["B1-same"]
    assert same.outcome == "fails"
    assert same.values["D4"] == Fraction(6, 5)
    assert same.satisfied["D4"] is False and same.satisfied["D3"] is True
    assert any(r.startswith("D4: v = 6/5 does not meet |v| ≤ 1/2") for r in same.reasons)


def test_delta_per_sum_is_the_difference_of_the_mean_sums() -> None:
    got = results(PLAN, resolved(honest_grid()))
    # B1: D7 + D8 = 1 + 1 = 2 per response; B: 2 + 2 = 4 → v = −2 < 0
    assert got["B1-lighter"].values == {"sum": Fraction(-2)}
    assert got["B1-lighter"].outcome == "holds"
    # B2 equals B on D7 and D8 → v = 0, not < 0
    assert got["B2-lighter"].values == {"sum": Fraction(0)}
    assert got["B2-lighter"].outcome == "fails"


def test_a_dimension_the_gate_does_not_count_leaves_the_criterion_undecided() -> None:
    counted = set(DIMS) - {"D3"}
    same = results(PLAN, resolved(honest_grid()), counted, {"D3": "kappa 0.2 below 0.6"})["B1-same"]
    assert same.outcome == "undecided"
    assert same.values["D3"] == Fraction(0)  # still shown
    assert same.reasons == ("D3 does not count in pass unblinded (kappa 0.2 below 0.6)",)


def test_gate_false_evaluates_a_dimension_the_gate_leaves_out() -> None:
    plan = four_arm(FOUR_ARM_CRITERIA.replace("per: dimension, within: 0.5}", "per: dimension, within: 0.5, "
                                              "gate: false}"))
    same = results(plan, resolved(honest_grid()), set(DIMS) - {"D3"})["B1-same"]
    assert same.outcome == "holds"


def test_a_known_failing_dimension_fails_the_criterion_even_beside_an_ungated_one() -> None:
    grid = {**honest_grid(), **{CellKey(q, "B1", "D4"): 3 for q in QS}}  # v(D4) = 2
    same = results(PLAN, resolved(grid), set(DIMS) - {"D3"})["B1-same"]
    assert same.outcome == "fails"


def test_a_cell_without_consensus_makes_the_mean_undefined() -> None:
    one = honest_grid()
    other = {**one, CellKey("Q2", "B1", "D2"): 3}  # 1 vs 3: flagged, no consensus → no value
    same = results(PLAN, resolved(one, other))["B1-same"]
    assert same.outcome == "undecided"
    assert same.values["D2"] is None
    assert "D2: a mean of B1 or B is undefined (a cell without a resolved score)" in same.reasons


def test_contested_cells_at_both_extremes_give_a_contested_outcome() -> None:
    # Q1/B1/D2 contested between 1 and 3 (raters 1 and 3): v(D2) is 0 at best, 2/10 at worst — both
    # hold (|v| ≤ 1/2). Five such cells: v at worst = 5·2/10 = 1 → fails, at best 0 → holds.
    one = honest_grid()
    other = {**one, **{CellKey(q, "B1", "D2"): 3 for q in QS[:5]}}
    consensus: dict[CellKey, int | str] = {CellKey(q, "B1", "D2"): "contested" for q in QS[:5]}
    same = results(PLAN, resolved(one, other, consensus=consensus))["B1-same"]
    assert same.outcome == "contested"
    assert same.extremes == ("holds", "fails")
    assert same.values["D2"] == Fraction(1)  # reported at the worst extreme for B1
    one_cell = {CellKey("Q1", "B1", "D2"): "contested"}
    other = {**one, CellKey("Q1", "B1", "D2"): 3}
    robust = results(PLAN, resolved(one, other, consensus=one_cell))["B1-same"]  # type: ignore[arg-type]
    assert robust.outcome == "holds" and robust.extremes == ("holds", "holds")


def test_a_seed_criterion_is_the_seed_verdict_for_its_treatment() -> None:
    res = resolved(honest_grid())
    evaluated = evaluate_all(PLAN, Inputs({"unblinded": res}, {"unblinded": set(DIMS)}, "main"))
    got = {r.id: r for r in evaluated.results}
    for treatment in ("B1", "B2"):
        verdict = decide(PLAN, primary=res, counted_dims=DIMS, treatment=treatment)
        assert evaluated.seeds[f"{treatment}-seed"].verdict == verdict.verdict
        assert evaluated.seeds[f"{treatment}-seed"].evaluation == verdict.evaluation
    # B1 (A 16 → B1 8 per question): improvement 1/2, every question improves → PASS
    assert evaluated.seeds["B1-seed"].evaluation.improvement == Fraction(1, 2)
    assert got["B1-seed"].outcome == "holds"
    assert got["B1-seed"].values == {"verdict": None}
    # B2 (16 → 10): improvement 3/8, but D7/D8 equal → still PASS on the seed's rules
    assert evaluated.seeds["B2-seed"].evaluation.improvement == Fraction(3, 8)


def test_a_seed_criterion_that_is_inconclusive_fails_and_not_ready_is_undecided() -> None:
    # B1 only 1 point lower on Q1/D1: improvement 1/160 < 1/10 → FAIL
    grid = arm_grid({("Q1", "B1", "D1"): 1})
    assert results(PLAN, resolved(grid))["B1-seed"].outcome == "fails"
    one, other = grid, {**grid, CellKey("Q3", "B1", "D2"): 0}  # 2 vs 0: flagged, no consensus
    assert results(PLAN, resolved(one, other))["B1-seed"].outcome == "undecided"


def test_rate_counts_label_shares_over_replicates_per_question() -> None:
    # TRT: 3/3, 2/3, 2/3, 0/3, 1/3 PASS on L1–L5; CTRL: 1/3, 1/3, 2/3, 1/3, 0/3
    grid = probe_grid({("L1", "TRT"): 3, ("L2", "TRT"): 2, ("L3", "TRT"): 2, ("L5", "TRT"): 1,
                       ("L1", "CTRL"): 1, ("L2", "CTRL"): 1, ("L3", "CTRL"): 2, ("L4", "CTRL"): 1})
    got = results(PROBE, resolved(grid))
    moved = got["L-moved"]
    assert moved.values == {"L1": Fraction(2, 3), "L2": Fraction(1, 3), "L3": Fraction(0),
                            "L4": Fraction(-1, 3), "L5": Fraction(1, 3)}
    assert moved.outcome == "holds"  # L1, L2, L5 above 0: 3 of 5, 3 required
    assert got["L-first"].outcome == "holds"
    fewer = {**grid, CellKey("L5", "TRT", "V", 1): PROBE.scale.value_of("FAIL")}
    moved = results(PROBE, resolved(fewer))["L-moved"]
    assert moved.outcome == "fails"
    assert moved.reasons[0] == "2 of 5 meet > 0; 3 required"


def test_rate_reads_the_pass_only_dimension_and_a_label_case_insensitively() -> None:
    plan = probes(probes_text_with("label: PASS, of: [TRT, CTRL], questions: [L1, L2]",
                                   "label: pass, of: [TRT], questions: [L1, L2]"))
    grid = probe_grid({("L1", "TRT"): 3, ("L2", "TRT"): 1})
    first = results(plan, resolved(grid))["L-first"]
    assert first.values == {"L1": Fraction(1), "L2": Fraction(1, 3)}  # the share alone
    assert first.outcome == "holds"


def test_a_label_disagreement_without_consensus_is_open_between_the_labels() -> None:
    # PASS and FAIL are positions 0 and 1: a spread of 1 is not flagged, and the seed's `mean`
    # would make it 1/2 — a label has no mean, so the cell stays open between PASS and FAIL.
    grid = probe_grid({("L1", "TRT"): 1, ("L2", "TRT"): 1})  # L1, L2: 1/3 vs 0/3
    other = {**grid, CellKey("L1", "TRT", "V", 1): PROBE.scale.value_of("FAIL")}
    first = results(PROBE, resolved(grid, other))["L-first"]
    assert first.extremes == ("holds", "fails")
    assert first.outcome == "contested"
    assert first.values["L1"] == Fraction(0)  # the worst extreme for TRT: FAIL


def test_pass_for_prefers_the_primary_pass_then_the_one_that_scores_the_dimension() -> None:
    text = FOUR_ARM_CRITERIA
    plan = four_arm(text)
    layer = replace(plan.passes[0], id="layer2", primary=False, dimensions=("D9",))
    plan = replace(plan, passes=(*plan.passes, layer))
    crit = plan.criterion("B1-same")
    assert crit is not None
    assert pass_for(plan, crit, "D1") == "unblinded"
    assert pass_for(plan, crit, "D9") == "layer2"
    assert pass_for(plan, crit, "D10") is None
    assert pass_for(plan, replace(crit, pass_id="layer2"), "D1") == "layer2"
    assert passes_read(plan, plan.criterion("B1-seed")) == ("unblinded",)  # type: ignore[arg-type]


def test_every_criterion_reads_as_one_sentence() -> None:
    words = {c.id: describe(PLAN, c) for c in PLAN.criteria}
    assert words["B1-same"] == "mean B1 − mean B on each of D1–D6, |v| ≤ 1/2"
    assert words["B1-lighter"] == "mean B1 − mean B of the sum D7 + D8, v < 0"
    assert words["B1-seed"] == "the seed verdict for B1 against A is PASS"
    moved = PROBE.criterion("L-moved")
    assert moved is not None
    assert describe(PROBE, moved) == ("share TRT − share CTRL labelled PASS on V, on at least 3 of L1–L5, "
                                      "v > 0")
    assert len(PROBES) == 6


def probes_text_with(old: str, new: str) -> str:
    from tests.design_studies import PROBE_PLAN

    assert old in PROBE_PLAN
    return PROBE_PLAN.replace(old, new, 1)


def test_a_criterion_naming_a_pass_without_cells_is_undecided_not_a_crash() -> None:
    crit = PLAN.criterion("B1-same")
    assert crit is not None
    plan = replace(PLAN, criteria=(replace(crit, pass_id="nowhere"), replace(crit, id="nobound", bound=None)))
    got = results(plan, resolved(honest_grid()))
    assert got["B1-same"].outcome == "undecided"
    assert got["B1-same"].values == {d: None for d in EPISTEMIC}
    assert got["nobound"].outcome == "undecided"
    assert "criterion nobound has no bound" in got["nobound"].reasons
