"""A `seed` criterion whose verdict is INCONCLUSIVE only because a dimension does not count under
the agreement gate is undecided, not failed (docs/designs.md; SPEC §3.1: a criterion needing an
ungated dimension is undecided; §7: PASS is then impossible, not disproved)."""

from __future__ import annotations

from dataclasses import replace

from aoven_git.model import Criterion
from tests.design_studies import DIMS, four_arm
from tests.test_criteria import PLAN, honest_grid, resolved, results


def test_a_gated_out_dimension_leaves_the_seed_criterion_undecided() -> None:
    res = resolved(honest_grid())
    gated = set(DIMS) - {"D6"}
    got = results(PLAN, res, counted=gated, excluded={"D6": "κ below the threshold"})
    assert got["B1-seed"].outcome == "undecided"
    assert any("D6" in r and "agreement gate" in r for r in got["B1-seed"].reasons)


def test_every_dimension_counting_the_same_study_holds() -> None:
    assert results(PLAN, resolved(honest_grid()))["B1-seed"].outcome == "holds"


def test_gate_false_evaluates_the_seed_rule_on_every_dimension() -> None:
    """`gate: false` reads the gated-out dimension too, so the seed rule is evaluated in full."""
    plan = four_arm()
    criteria = tuple(replace(c, gate=False) if c.id == "B1-seed" else c for c in plan.criteria)
    plan = replace(plan, criteria=criteria)
    assert isinstance(plan.criterion("B1-seed"), Criterion)
    got = results(plan, resolved(honest_grid()), counted=set(DIMS) - {"D6"},
                  excluded={"D6": "κ below the threshold"})
    assert got["B1-seed"].outcome == "holds"


def test_a_seed_fail_is_a_fail_even_with_a_gated_out_dimension() -> None:
    # B1 barely below A: the improvement over the counted dimensions is under rules.fail → FAIL
    grid = {k: (2 if k.condition == "B1" else v) for k, v in honest_grid().items()}
    got = results(PLAN, resolved(grid), counted=set(DIMS) - {"D6"}, excluded={"D6": "κ below"})
    assert got["B1-seed"].outcome == "fails"
