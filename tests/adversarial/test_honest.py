"""Honest histories that must stay clean (exit 0, no violation): the ordinary ways a team lands
seal branches (merges in any order, octopus and criss-cross merges, rebase, cherry-pick, squash),
signed histories, CRLF editors, harmless plan edits, several passes sealed before any reveal.
A rule that catches the attacks in this folder but flags one of these is too strict."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import (
    BLINDED,
    SPLIT_PASS_PLAN,
    TWO_PASS_PLAN,
    UNBLINDED,
    Lab,
    expect,
    needs_ssh,
    sheet_text,
    signed_lab,
)
from tests.adversarial.paper import paper_lab
from tests.sealing.conftest import PLAN

#: the stories of this module test the sealing rules, not git: they run on paper
#: (tests/adversarial/paper.py); those marked `git` build a real repository
lab = paper_lab

RATERS = ("cto", "logician")
THREE = ("cto", "logician", "redteam")


def seal_commits(data: dict) -> dict[str, str]:
    return {s["rater"]: s["commit"] for s in data["seals"]}


def reveal_all(lab: Lab, raters: tuple[str, ...] = RATERS, pass_id: str = UNBLINDED) -> None:
    for r in raters:
        lab.reveal(r, pass_id=pass_id)


@pytest.mark.parametrize("first_parent", ["main", "branch"])
@pytest.mark.parametrize("order", [THREE, THREE[::-1]], ids=["cto-first", "redteam-first"])
def test_digest_seals_on_parallel_branches_merged_in_any_order(lab: Lab, order: tuple[str, ...],
                                                               first_parent: str) -> None:
    base = lab.start()
    tips = {}
    for r in order:
        lab.branch(f"seal-{r}", base)
        tips[r] = lab.seal(r)
    lab.checkout("main")
    lab.file("lead", "README.md", "main moves on\n")  # every landing is a real merge
    for r in order:
        lab.land(f"seal-{r}", first_parent=first_parent)
    reveal_all(lab, THREE)
    data = expect(lab, [])
    assert data["status"] == "complete" and seal_commits(data) == tips


def test_octopus_merge_of_three_seal_branches(lab: Lab) -> None:
    base = lab.start()
    tips = {}
    for r in THREE:
        lab.branch(f"seal-{r}", base)
        tips[r] = lab.seal(r)
    lab.octopus(*(f"seal-{r}" for r in THREE))
    reveal_all(lab, THREE)
    data = expect(lab, [])
    assert seal_commits(data) == tips


@pytest.mark.git
def test_criss_cross_merges_of_seal_branches(lab: Lab) -> None:
    base = lab.start()
    lab.branch("a", base)
    seal_cto = lab.seal("cto")
    lab.branch("b", base)
    seal_log = lab.seal("logician")
    lab.checkout("a")
    lab.git("merge", "-q", "--no-ff", "--no-edit", seal_log)
    lab.checkout("b")
    lab.git("merge", "-q", "--no-ff", "--no-edit", seal_cto)
    lab.land("a")
    lab.land("b")
    reveal_all(lab)
    data = expect(lab, [])
    assert seal_commits(data) == {"cto": seal_cto, "logician": seal_log}


def test_reveals_on_branches_merged_in_either_order(lab: Lab) -> None:
    lab.start()
    for r in RATERS:
        lab.seal(r)
    sealed = lab.head()
    for r in RATERS:
        lab.branch(f"reveal-{r}", sealed)
        lab.reveal(r)
    lab.checkout("main")
    lab.file("lead", "README.md", "main moves on\n")
    lab.land("reveal-cto", first_parent="branch")
    lab.land("reveal-logician", first_parent="main")
    expect(lab, [])


@pytest.mark.git
def test_rebase_landing_of_a_seal_branch(lab: Lab) -> None:
    base = lab.start()
    lab.branch("seal-cto", base)
    lab.seal("cto")
    lab.checkout("main")
    lab.seal("logician")
    lab.git("rebase", "-q", "main", "seal-cto")
    landed = lab.head()
    lab.checkout("main")
    lab.git("merge", "-q", "--ff-only", "seal-cto")
    assert lab.git("log", "-1", "--format=%ae", landed) == "cto@example.org"
    reveal_all(lab)
    data = expect(lab, [])
    assert seal_commits(data)["cto"] == landed


@pytest.mark.git
def test_cherry_pick_landing_of_a_seal(lab: Lab) -> None:
    base = lab.start()
    lab.branch("seal-cto", base)
    original = lab.seal("cto")
    lab.checkout("main")
    lab.seal("logician")
    lab.git("cherry-pick", original)
    picked = lab.head()
    assert lab.git("log", "-1", "--format=%ae", picked) == "cto@example.org"
    reveal_all(lab)
    data = expect(lab, [])
    assert seal_commits(data)["cto"] == picked


@pytest.mark.git
def test_cherry_pick_landing_and_the_branch_merged_too(lab: Lab) -> None:
    """Two seal points of cto's sheet, but the very same seal blob: the same bytes fixed twice."""
    base = lab.start()
    lab.branch("seal-cto", base)
    original = lab.seal("cto")
    lab.checkout("main")
    lab.seal("logician")
    lab.git("cherry-pick", original)
    picked = lab.head()
    lab.land("seal-cto")
    assert lab.unordered(original, picked)
    reveal_all(lab)
    data = expect(lab, [])
    assert seal_commits(data)["cto"] in {original, picked}


@pytest.mark.git
def test_squash_merge_of_a_seal_branch_authored_by_the_rater(lab: Lab) -> None:
    base = lab.start()
    lab.branch("seal-cto", base)
    lab.seal("cto")
    lab.file("cto", "notes-cto.txt", "scratch\n")
    lab.checkout("main")
    lab.seal("logician")
    lab.git("merge", "-q", "--squash", "seal-cto")
    squashed = lab.put("cto", "seal cto (squashed)")
    reveal_all(lab)
    data = expect(lab, [])
    assert seal_commits(data)["cto"] == squashed


def test_reveal_on_a_branch_beside_its_own_digest_seal(lab: Lab) -> None:
    """cto's plaintext lands from a branch that does not hold cto's seal: a second seal point of
    the sheet, but its bytes are exactly the sealed digest's."""
    lab.start()
    sealed = lab.seal("logician")
    lab.branch("reveal-cto", sealed)
    lab.checkout("main")
    seal_cto = lab.seal("cto")
    lab.checkout("reveal-cto")
    plain = lab.reveal("cto")
    lab.land("reveal-cto")
    lab.reveal("logician")
    assert lab.unordered(seal_cto, plain)
    expect(lab, [])


@pytest.mark.git
@needs_ssh
def test_ssh_signed_history_with_require_signed(lab: Lab, keys: dict[str, Path]) -> None:
    """Signed seals and reveals verify, also with `log.showSignature` on (signature output would
    otherwise be mixed into every `git log`)."""
    signed_lab(lab, keys)
    for r in RATERS:
        lab.seal(r, sign_key=keys[r])
    for r in RATERS:
        lab.reveal(r, sign_key=keys[r])
    assert expect(lab, [])["status"] == "complete"
    lab.git("config", "log.showSignature", "true")
    assert expect(lab, [])["status"] == "complete"


@pytest.mark.git
def test_crlf_editor_with_autocrlf(lab: Lab) -> None:
    """An editor saving CRLF under `core.autocrlf=true`: the digest is over the bytes git stores,
    so the CLI's seal and reveal (through the hook) verify clean."""
    lab.start()
    lab.install_hook()
    lab.git("config", "core.autocrlf", "true")
    for r in RATERS:
        lab.write(lab.score_path(r), sheet_text(r).replace("\n", "\r\n").encode())
        res = lab.cli(r, "seal", "--rater", r)
        assert res.code == 0, res.output
    for r in RATERS:
        res = lab.cli(r, "reveal", "--rater", r)
        assert res.code == 0, res.output
    assert b"\r\n" not in lab.git("show", f"HEAD:{lab.score_path('logician')}").encode()
    data = expect(lab, [])
    assert data["status"] == "complete"


def test_comment_only_plan_edits_after_seals(lab: Lab) -> None:
    """Comments anywhere, also among the raters and on the security line, are not plan changes."""
    lab.start()
    for r in RATERS:
        lab.seal(r)
    edited = "# reviewed after sealing\n" + PLAN.replace(
        "raters:\n", "raters:  # as registered\n").replace(
        "  - {id: redteam", "  # the red team joined late\n  - {id: redteam").replace(
        "allowed_signers: null}", "allowed_signers: null}  # unsigned study")
    assert edited.count("#") >= 4
    lab.file("lead", "aoven.yaml", edited, "comments")
    reveal_all(lab)
    expect(lab, [])


def test_all_passes_sealed_before_any_reveal(lab: Lab) -> None:
    lab.start(TWO_PASS_PLAN)
    for p in (UNBLINDED, BLINDED):
        for r in RATERS:
            lab.seal(r, pass_id=p)
    for p in (UNBLINDED, BLINDED):
        reveal_all(lab, pass_id=p)
    data = expect(lab, [])
    assert data["status"] == "complete" and len(data["seals"]) == 4


def test_passes_without_a_shared_condition_may_reveal_in_turn(lab: Lab) -> None:
    """`first` scores A, `second` scores B: revealing the first before sealing the second shows
    nothing the second pass scores."""
    lab.start(SPLIT_PASS_PLAN)
    for p in ("first", "second"):
        for r in RATERS:
            lab.seal(r, pass_id=p)
        reveal_all(lab, pass_id=p)
    data = expect(lab, [])
    assert data["status"] == "complete"


def test_optional_rater_who_never_seals(lab: Lab) -> None:
    lab.start()
    for r in RATERS:
        lab.seal(r)
    reveal_all(lab)
    data = expect(lab, [])
    assert data["status"] == "complete" and data["pending"] == []


def test_pending_required_rater(lab: Lab) -> None:
    lab.start()
    lab.seal("cto")
    data = expect(lab, [])
    assert data["status"] == "pending" and data["ok"] is True
    assert data["pending"] == [{"rater": "logician", "pass": "unblinded", "round": "main"}]


@pytest.mark.git
def test_full_cli_two_pass_workflow_with_the_hook(lab: Lab) -> None:
    """Seal every pass, then reveal, through the CLI with the hook installed: nothing refused."""
    lab.start(TWO_PASS_PLAN)
    lab.install_hook()
    for p in (UNBLINDED, BLINDED):
        for r in RATERS:
            lab.write(lab.score_path(r, p), sheet_text(r, pass_id=p))
            res = lab.cli(r, "seal", "--rater", r, "--pass", p)
            assert res.code == 0, res.output
    for p in (UNBLINDED, BLINDED):
        for r in RATERS:
            res = lab.cli(r, "reveal", "--rater", r, "--pass", p)
            assert res.code == 0, res.output
    data = expect(lab, [])
    assert data["status"] == "complete" and data["forced_reveals"] == []
