"""Class 4, passes: the unblinded pass scores A and B, the blinded pass scores B again with the
markers stripped. The two passes share condition B, so seeing another rater's unblinded B scores
before sealing the blinded pass (or the other way round) contaminates it: every pass is sealed
before anything of an overlapping pass of the same round is revealed."""

from __future__ import annotations

import pytest

from tests.adversarial.conftest import BLINDED, TWO_PASS_PLAN, UNBLINDED, Lab, at, expect, sheet_text
from tests.adversarial.paper import paper_lab

#: the stories of this module test the sealing rules, not git: they run on paper
#: (tests/adversarial/paper.py); those marked `git` build a real repository
lab = paper_lab

RATERS = ("cto", "logician")


def seal_all(lab: Lab, pass_id: str) -> dict[str, str]:
    return {r: lab.seal(r, pass_id=pass_id) for r in RATERS}


def reveal_all(lab: Lab, pass_id: str) -> dict[str, str]:
    return {r: lab.reveal(r, pass_id=pass_id) for r in RATERS}


def test_unblinded_reveal_before_blinded_seal(lab: Lab) -> None:
    lab.start(TWO_PASS_PLAN)
    seal_all(lab, UNBLINDED)
    reveal_all(lab, UNBLINDED)
    bad = seal_all(lab, BLINDED)
    data = expect(lab, [("visible-at-seal", "cto"), ("visible-at-seal", "logician")])
    for r in RATERS:
        assert at(data, "visible-at-seal", r)["commit"] == bad[r]


def test_blinded_reveal_before_unblinded_seal(lab: Lab) -> None:
    lab.start(TWO_PASS_PLAN)
    seal_all(lab, BLINDED)
    reveal_all(lab, BLINDED)
    bad = seal_all(lab, UNBLINDED)
    data = expect(lab, [("visible-at-seal", "cto"), ("visible-at-seal", "logician")])
    for r in RATERS:
        assert at(data, "visible-at-seal", r)["commit"] == bad[r]


def test_blinded_seals_on_backdated_branches_after_unblinded_reveals(lab: Lab) -> None:
    lab.start(TWO_PASS_PLAN)
    sealed = seal_all(lab, UNBLINDED)
    blinded = {}
    for r in RATERS:
        lab.branch(f"blind-{r}", sealed["logician"])
        blinded[r] = lab.seal(r, pass_id=BLINDED)
    lab.checkout("main")
    revealed = reveal_all(lab, UNBLINDED)
    for r in RATERS:
        lab.land(f"blind-{r}")
    reveal_all(lab, BLINDED)
    assert lab.unordered(blinded["cto"], revealed["logician"])
    data = expect(lab, [("unproven-order", "cto"), ("unproven-order", "logician")])
    for r in RATERS:
        assert at(data, "unproven-order", r)["commit"] == blinded[r]


def test_unblinded_reconciliation_before_blinded_seal(lab: Lab) -> None:
    """Nothing revealed, but a reconciliation of the unblinded pass is everyone's plaintext."""
    lab.start(TWO_PASS_PLAN)
    seal_all(lab, UNBLINDED)
    lab.recon(UNBLINDED)
    bad = seal_all(lab, BLINDED)
    data = expect(lab, [("visible-at-seal", "cto"), ("visible-at-seal", "logician")])
    for r in RATERS:
        assert at(data, "visible-at-seal", r)["commit"] == bad[r]


def test_unblinded_reveal_before_the_other_raters_blinded_seal(lab: Lab) -> None:
    """cto sealed both passes, then revealed unblinded while logician had not sealed blinded:
    only logician's blinded seal is contaminated."""
    lab.start(TWO_PASS_PLAN)
    seal_all(lab, UNBLINDED)
    lab.seal("cto", pass_id=BLINDED)
    lab.reveal("cto", pass_id=UNBLINDED)
    bad = lab.seal("logician", pass_id=BLINDED)
    lab.reveal("logician", pass_id=UNBLINDED)
    reveal_all(lab, BLINDED)
    data = expect(lab, [("visible-at-seal", "logician")])
    assert at(data, "visible-at-seal", "logician")["commit"] == bad


@pytest.mark.git
def test_seal_command_refuses_blinded_pass_after_unblinded_reveal(lab: Lab) -> None:
    lab.start(TWO_PASS_PLAN)
    seal_all(lab, UNBLINDED)
    reveal_all(lab, UNBLINDED)
    path = lab.score_path("cto", BLINDED)
    text = sheet_text("cto", pass_id=BLINDED)
    lab.write(path, text)
    before = lab.snapshot()
    res = lab.cli("cto", "seal", "--rater", "cto", "--pass", BLINDED)
    assert res.code == 1, res.output
    assert "logician" in res.err and "Traceback" not in res.output
    assert lab.snapshot() == before
    assert (lab.path / path).read_text() == text  # no nonce written either
