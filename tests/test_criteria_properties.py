"""Properties of criteria.py over random studies (hypothesis): outcomes do not depend on the order
of raters or of score rows; a `seed` criterion is exactly the seed verdict; a bound sits exactly
on its value (`within: m` holds at v = m and fails at v = m + ε, in fractions)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from aoven_git.criteria import evaluate
from aoven_git.model import Bound, CellKey, Criterion, Plan
from aoven_git.plan import load_plan
from aoven_git.verdict import decide, resolve_cells
from tests.design_studies import ARMS, DIMS, QS, TEMPLATE, four_arm

PLAN = four_arm()
SEED_PLAN = load_plan(TEMPLATE)
RATERS = ("cto", "logician", "redteam")

scores = st.integers(min_value=0, max_value=3)


@st.composite
def four_arm_study(draw: st.DrawFn) -> tuple[dict[str, dict[CellKey, int]], dict[CellKey, int | str]]:
    """Three raters who agree except on a few drawn cells, and consensus on some of those:
    a value or `contested`."""
    base = {CellKey(q, c, d): draw(st.sampled_from((1, 2))) for q in QS for c in ARMS for d in DIMS}
    keys = sorted(base)
    graders = {r: dict(base) for r in RATERS}
    consensus: dict[CellKey, int | str] = {}
    for _ in range(draw(st.integers(0, 6))):
        key = draw(st.sampled_from(keys))
        graders[draw(st.sampled_from(RATERS))][key] = draw(scores)
        consensus[key] = draw(st.one_of(scores, st.just("contested")))
    return graders, consensus


def outcomes(plan: Plan, graders: dict[str, dict[CellKey, int]], consensus: dict[CellKey, int | str],
             counted: set[str]) -> list[tuple[str, str, object, object]]:
    res = resolve_cells(graders, consensus)
    pass_id = plan.primary_pass.id
    got = evaluate(plan, {pass_id: res}, {pass_id: counted})
    return [(r.id, r.outcome, r.values, r.extremes) for r in got]


@settings(max_examples=40, deadline=None)
@given(four_arm_study(), st.randoms(use_true_random=False), st.sets(st.sampled_from(DIMS), min_size=6))
def test_outcomes_do_not_depend_on_the_order_of_raters_or_rows(study, rnd, counted) -> None:  # type: ignore[no-untyped-def]
    graders, consensus = study
    before = outcomes(PLAN, graders, consensus, counted)
    raters = list(graders)
    rnd.shuffle(raters)
    shuffled = {}
    for r in raters:
        rows = list(graders[r].items())
        rnd.shuffle(rows)
        shuffled[r] = dict(rows)
    assert outcomes(PLAN, shuffled, consensus, counted) == before


@st.composite
def seed_study(draw: st.DrawFn) -> dict[CellKey, int]:
    """A seed study (A, B on D1–D8, ten questions): A at 2, B lowered on drawn cells."""
    grid = {CellKey(q, c, d): 2 for q in QS for c in ("A", "B") for d in DIMS}
    for key in draw(st.lists(st.sampled_from(sorted(k for k in grid if k.condition == "B")), max_size=60)):
        grid[key] = draw(scores)
    return grid


@settings(max_examples=60, deadline=None)
@given(seed_study(), st.sets(st.sampled_from(DIMS), min_size=4))
def test_a_seed_criterion_is_exactly_the_seed_verdict(grid: dict[CellKey, int], counted: set[str]) -> None:
    plan = replace(SEED_PLAN, criteria=(Criterion("B-seed", "seed", treatment="B"),))
    res = resolve_cells({"cto": grid, "logician": grid})
    seed = decide(SEED_PLAN, primary=res, blinded=res, counted_dims=counted)
    (result,) = evaluate(plan, {"unblinded": res, "blinded": res}, {"unblinded": counted})
    assert (result.outcome == "holds") == (seed.verdict == "PASS")
    # INCONCLUSIVE while a dimension is gated out is undecided (criteria.seed_outcome)
    gated_out = seed.verdict == "INCONCLUSIVE" and bool(seed.excluded)
    assert (result.outcome == "fails") == (seed.verdict == "FAIL" or
                                           (seed.verdict == "INCONCLUSIVE" and not gated_out))
    assert (result.outcome == "undecided") == (gated_out or seed.verdict == "NOT-READY")


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10), st.integers(1, 10**9), st.sampled_from(("B1", "B2")))
def test_within_holds_exactly_at_its_bound_and_fails_just_past_it(k: int, n: int, arm: str) -> None:
    # `arm` one point above B on D1 in k of the ten questions: v = mean arm − mean B = k/10 exactly
    grid = {CellKey(q, c, d): 1 for q in QS for c in ARMS for d in DIMS}
    grid.update({CellKey(q, arm, "D1"): 2 for q in QS[:k]})
    res = resolve_cells({"cto": grid})
    same = Criterion("same", "delta", Bound("within", Fraction(k, 10)), of=(arm, "B"), dimensions=("D1",))
    eps = Fraction(1, n)
    for bound, expected in ((Fraction(k, 10), "holds"), (Fraction(k, 10) - eps, "fails")):
        plan = replace(PLAN, criteria=(replace(same, bound=Bound("within", bound)),))
        (result,) = evaluate(plan, {"unblinded": res}, {"unblinded": set(DIMS)})
        assert result.values == {"D1": Fraction(k, 10)}
        assert result.outcome == (expected if bound >= 0 else "fails")
    # and the mirror: v = −k/10 (B above the arm) sits on the same bound
    flipped = {key: (grid[replace(key, condition=arm)] if key.condition == "B" else
                     1 if key.condition == arm else v) for key, v in grid.items()}
    plan = replace(PLAN, criteria=(same,))
    (result,) = evaluate(plan, {"unblinded": resolve_cells({"cto": flipped})}, {"unblinded": set(DIMS)})
    assert result.values == {"D1": Fraction(-k, 10)} and result.outcome == "holds"


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3), st.integers(0, 3), st.integers(1, 10**6))
def test_a_rate_bound_sits_exactly_on_a_share(trt: int, ctrl: int, n: int) -> None:
    from tests.design_studies import probe_grid, probes

    plan = probes()
    grid = probe_grid({("L1", "TRT"): trt, ("L1", "CTRL"): ctrl})
    v = Fraction(trt - ctrl, 3)
    res = resolve_cells({"ann": grid})
    rate = Criterion("r", "rate", Bound("at_least", v), of=("TRT", "CTRL"), questions=("L1",), label="PASS")
    for bound, expected in ((v, "holds"), (v + Fraction(1, n), "fails")):
        p = replace(plan, criteria=(replace(rate, bound=Bound("at_least", bound)),))
        (result,) = evaluate(p, {"labels": res}, {"labels": {"V"}})
        assert result.values == {"L1": v} and result.outcome == expected
