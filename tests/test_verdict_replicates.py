"""The seed verdict and condition means on a plan with replicates (docs/statistics.md, "Labels
and replicates"): a question's replicates are averaged first (per question, condition and
dimension), then the means run over questions as in the seed; a contested replicate leaves the
average open between its lowest and highest mean."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from aoven_git.model import CellKey
from aoven_git.plan import load_plan
from aoven_git.verdict import average_replicates, decide, resolve_cells
from tests.design_studies import DIMS, QS, TEMPLATE

SEED = load_plan(TEMPLATE)
PLAN = replace(SEED, replicates=3, responses="test_{condition}/{question}_{replicate}.md")


def grid(b_first: int, b_rest: int) -> dict[CellKey, int]:
    """A at 2 everywhere; B's replicate 1 at `b_first`, replicates 2 and 3 at `b_rest`."""
    out = {CellKey(q, "A", d, r): 2 for q in QS for d in DIMS for r in (1, 2, 3)}
    out.update({CellKey(q, "B", d, r): b_first if r == 1 else b_rest
                for q in QS for d in DIMS for r in (1, 2, 3)})
    return out


def test_replicates_are_averaged_before_the_means() -> None:
    res = resolve_cells({"cto": grid(0, 1)})
    averaged = average_replicates(res)
    assert averaged.cells[CellKey("Q1", "B", "D1")].value == Fraction(2, 3)  # (0 + 1 + 1) / 3
    assert averaged.cells[CellKey("Q1", "A", "D1")].resolution == "agreed"
    verdict = decide(PLAN, primary=res, blinded=None, counted_dims=DIMS)
    # per question: A = 8 · 2 = 16, B = 8 · 2/3 = 16/3 → improvement (16 − 16/3)/16 = 2/3
    assert verdict.evaluation is not None
    assert verdict.evaluation.mean_b == Fraction(16, 3)
    assert verdict.evaluation.improvement == Fraction(2, 3)
    assert verdict.verdict == "PASS"


def test_a_resolution_without_replicates_is_unchanged() -> None:
    res = resolve_cells({"cto": {CellKey("Q1", "A", "D1"): 2}})
    assert average_replicates(res) is res


def test_a_contested_replicate_keeps_its_average_open_between_both_ends() -> None:
    # Q1/B/D1 replicate 1: raters 0 and 3, contested; replicates 2 and 3 agreed at 1
    one, other = grid(0, 1), grid(0, 1)
    other[CellKey("Q1", "B", "D1", 1)] = 3
    res = resolve_cells({"cto": one, "logician": other}, {CellKey("Q1", "B", "D1", 1): "contested"})
    cell = average_replicates(res).cells[CellKey("Q1", "B", "D1")]
    assert cell.resolution == "contested"
    assert cell.options == (Fraction(2, 3), Fraction(5, 3))  # (0+1+1)/3 and (3+1+1)/3
    verdict = decide(PLAN, primary=res, blinded=None, counted_dims=DIMS)
    assert verdict.best is not None and verdict.worst is not None
    assert verdict.contested == (CellKey("Q1", "B", "D1"),)


def test_a_missing_replicate_withholds_the_verdict_naming_the_replicate() -> None:
    one, other = grid(0, 1), grid(0, 1)
    other[CellKey("Q2", "B", "D3", 2)] = 3  # 1 vs 3: flagged, no consensus
    res = resolve_cells({"cto": one, "logician": other})
    verdict = decide(PLAN, primary=res, blinded=None, counted_dims=DIMS)
    assert verdict.verdict == "NOT-READY"
    assert "Q2/B#2/D3" in verdict.summary
