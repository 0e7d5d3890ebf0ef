"""decisions.py: the decision table read against evaluated criteria (docs/statistics.md,
"Decisions"), on the issue's four-arm table "both variants → adopt P1+P2+P3; B1 → adopt P1+P2;
otherwise defer R1". Outcomes are set by hand, so each row rule is pinned on its own."""

from __future__ import annotations

import pytest

from aoven_git.decisions import decide
from aoven_git.model import CriterionOutcome, CriterionResult
from tests.design_studies import four_arm

PLAN = four_arm()
B1 = ("B1-same", "B1-lighter", "B1-seed")
B2 = ("B2-same", "B2-lighter", "B2-seed")


def outcomes(default: CriterionOutcome = "holds", **given: CriterionOutcome) -> list[CriterionResult]:
    """Every criterion `default`, except those named (dashes written as underscores)."""
    named = {k.replace("_", "-"): v for k, v in given.items()}
    return [CriterionResult(c.id, c.kind, named.get(c.id, default)) for c in PLAN.criteria]


def test_the_first_row_whose_criteria_all_hold_is_taken() -> None:
    d = decide(PLAN, outcomes(), ready=True)
    assert (d.status, d.then, d.row, d.blocking) == ("decided", "adopt P1+P2+P3", 1, ())
    assert d.rows == ("taken", "not-reached", "not-reached")


def test_a_failing_row_passes_the_decision_to_the_next() -> None:
    d = decide(PLAN, outcomes(B2_lighter="fails"), ready=True)
    assert (d.status, d.then, d.row) == ("decided", "adopt P1+P2", 2)
    assert d.rows == ("fails", "taken", "not-reached")
    assert d.reasons == ("row 1 (adopt P1+P2+P3) fails: B2-lighter fails",
                         "row 2 (adopt P1+P2): B1-same, B1-lighter, B1-seed hold")


def test_otherwise_is_taken_when_every_row_before_fails() -> None:
    d = decide(PLAN, outcomes(B1_seed="fails"), ready=True)
    assert (d.status, d.then, d.row) == ("decided", "defer R1", 3)
    assert d.rows == ("fails", "fails", "taken")
    assert d.reasons[-1] == "row 3 (otherwise): defer R1"


def test_an_undecided_earlier_row_blocks_a_later_one_that_holds() -> None:
    # row 1: B2-same undecided and nothing failing → it might still hold; row 2 may not be taken
    d = decide(PLAN, outcomes(B2_same="undecided"), ready=True)
    assert (d.status, d.then, d.row, d.blocking) == ("undecided", None, None, ("B2-same",))
    assert d.rows == ("blocked", "not-reached", "not-reached")
    assert d.reasons == ("row 1 (adopt P1+P2+P3) can be neither taken nor passed over: B2-same is undecided",)


def test_a_row_blocked_only_by_contested_criteria_is_contested() -> None:
    d = decide(PLAN, outcomes(B2_seed="contested"), ready=True)
    assert (d.status, d.blocking) == ("contested", ("B2-seed",))
    mixed = decide(PLAN, outcomes(B2_seed="contested", B2_same="undecided"), ready=True)
    assert (mixed.status, mixed.blocking) == ("undecided", ("B2-same", "B2-seed"))


def test_a_definitely_failing_row_is_passed_over_even_with_undecided_criteria() -> None:
    d = decide(PLAN, outcomes(B2_same="undecided", B2_lighter="fails"), ready=True)
    assert (d.status, d.row) == ("decided", 2)


def test_a_study_that_is_not_ready_has_no_decision() -> None:
    d = decide(PLAN, outcomes(), ready=False, reasons=["required rater cto has not revealed"])
    assert (d.status, d.then, d.row) == ("not-ready", None, None)
    assert d.reasons == ("required rater cto has not revealed",)
    assert d.rows == ("not-reached",) * 3


@pytest.mark.parametrize("missing", [B1[0], B2[2]])
def test_a_criterion_without_a_result_is_undecided(missing: str) -> None:
    d = decide(PLAN, [r for r in outcomes() if r.id != missing], ready=True)
    assert d.status == "undecided" and d.blocking == (missing,)
