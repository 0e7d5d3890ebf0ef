"""Class 3, rules judged by the plan at HEAD: the attacker loosens the plan after the first seal
(an extra e-mail, `required: false`, `require_signed` off, another key in the allowed signers) and
hopes the verifier judges the whole history by the loosened plan. The history is judged by the
plan as of the first seal; the edit itself is `plan-changed-after-seal` (rater null), even for
keys the plan does not list under `locked`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import (
    NO_SECURITY,
    SIGNED_SECURITY,
    Lab,
    at,
    expect,
    needs_ssh,
    signed_lab,
    signers_line,
)
from tests.adversarial.paper import paper_lab
from tests.sealing.conftest import PEOPLE, PLAN

#: the stories of this module test the sealing rules, not git: they run on paper
#: (tests/adversarial/paper.py); those marked `git` build a real repository
lab = paper_lab

CTO = "  - {id: cto, name: CTO, emails: [cto@example.org]}\n"
LOGICIAN = "  - {id: logician, name: Logician, emails: [logician@example.org]}\n"
PENDING_LOGICIAN = {"rater": "logician", "pass": "unblinded", "round": "main"}


def replan(lab: Lab, old: str, new: str, *, plan: str = PLAN) -> str:
    assert old in plan
    return lab.file("lead", "aoven.yaml", plan.replace(old, new), "plan: " + new.strip()[:40])


@pytest.mark.parametrize(("emails", "author"), [
    ("[cto@example.org, cto-laptop@example.org]", ("CTO", "cto-laptop@example.org")),
    ("[lead@example.org]", PEOPLE["lead"]),
], ids=["email-added", "email-replaced-by-the-leads"])
def test_email_changed_after_seal_does_not_authorize(lab: Lab, emails: str, author: tuple[str, str]) -> None:
    lab.start()
    lab.seal("cto")
    lab.seal("logician")
    change = replan(lab, CTO, CTO.replace("[cto@example.org]", emails))
    bad = lab.reveal("cto", who=author)
    lab.reveal("logician")
    data = expect(lab, [("plan-changed-after-seal", None), ("unauthorized-author", "cto")])
    assert at(data, "plan-changed-after-seal", None)["commit"] == change
    assert at(data, "unauthorized-author", "cto")["commit"] == bad


def test_email_added_later_does_not_legalize_an_earlier_seal(lab: Lab) -> None:
    """The lead committed cto's seal, then added the lead's address to cto's e-mails."""
    lab.start()
    forged = lab.seal("cto", who="lead")
    change = replan(lab, CTO, CTO.replace("[cto@example.org]", "[cto@example.org, lead@example.org]"))
    lab.seal("logician")
    data = expect(lab, [("plan-changed-after-seal", None), ("unauthorized-author", "cto")])
    assert at(data, "plan-changed-after-seal", None)["commit"] == change
    assert at(data, "unauthorized-author", "cto")["commit"] == forged


def test_required_false_later_leaves_rater_pending(lab: Lab) -> None:
    """logician never sealed; making them optional afterwards does not make the study complete."""
    lab.start()
    lab.seal("cto")
    change = replan(lab, LOGICIAN, LOGICIAN.replace("]}", "], required: false}"))
    lab.reveal("cto")
    data = expect(lab, [("plan-changed-after-seal", None)])
    assert at(data, "plan-changed-after-seal", None)["commit"] == change
    assert data["pending"] == [PENDING_LOGICIAN]


def test_rater_removed_after_seal_is_still_pending(lab: Lab) -> None:
    lab.start()
    lab.seal("cto")
    change = replan(lab, LOGICIAN, "")
    data = expect(lab, [("plan-changed-after-seal", None)])
    assert at(data, "plan-changed-after-seal", None)["commit"] == change
    assert data["pending"] == [PENDING_LOGICIAN]


def test_rater_added_after_reveals(lab: Lab) -> None:
    """A friendly rater added once everyone's scores are public: a change of `raters`, and the
    newcomer is no rater of the plan the study was sealed under (never pending)."""
    lab.start()
    for r in ("cto", "logician"):
        lab.seal(r)
    for r in ("cto", "logician"):
        lab.reveal(r)
    friend = "  - {id: friend, name: Friend, emails: [friend@example.org]}\n"
    change = replan(lab, LOGICIAN, LOGICIAN + friend)
    data = expect(lab, [("plan-changed-after-seal", None)])
    assert at(data, "plan-changed-after-seal", None)["commit"] == change
    assert data["pending"] == []


@pytest.mark.git
def test_require_signed_turned_on_after_seal_is_a_change_not_a_rule(lab: Lab) -> None:
    """Judged by the plan at the first seal, no signature was required: the unsigned seals stand;
    the security edit is the offence."""
    lab.write("keys/allowed_signers", "cto@example.org ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDummyKey\n")
    lab.start()
    lab.put("lead", "a signers file, not required yet", "keys")
    lab.seal("cto")
    lab.seal("logician")
    change = replan(lab, NO_SECURITY, SIGNED_SECURITY)
    data = expect(lab, [("plan-changed-after-seal", None)])
    assert at(data, "plan-changed-after-seal", None)["commit"] == change


@pytest.mark.git
@needs_ssh
def test_require_signed_turned_off_still_checks_signatures(lab: Lab, keys: dict[str, Path]) -> None:
    from tests.adversarial.conftest import SIGNED_PLAN

    signed_lab(lab, keys)
    lab.seal("cto", sign_key=keys["cto"])
    change = replan(lab, SIGNED_SECURITY, NO_SECURITY, plan=SIGNED_PLAN)
    unsigned = lab.seal("logician")
    data = expect(lab, [("plan-changed-after-seal", None), ("unsigned-commit", "logician")])
    assert at(data, "plan-changed-after-seal", None)["commit"] == change
    assert at(data, "unsigned-commit", "logician")["commit"] == unsigned


@pytest.mark.git
@needs_ssh
def test_allowed_signers_swapped_after_seal(lab: Lab, keys: dict[str, Path]) -> None:
    """The attacker's key replaces logician's in the allowed-signers file, then signs a reveal
    in logician's name: no good signature under the signers of the first seal."""
    signed_lab(lab, keys)
    for r in ("cto", "logician"):
        lab.seal(r, sign_key=keys[r])
    swapped = (signers_line(PEOPLE["cto"][1], keys["cto"])
               + signers_line(PEOPLE["logician"][1], keys["mallory"]))
    change = lab.file("lead", "keys/allowed_signers", swapped, "rotate logician's key")
    lab.reveal("cto", sign_key=keys["cto"])
    forged = lab.reveal("logician", sign_key=keys["mallory"])
    data = expect(lab, [("plan-changed-after-seal", None), ("unsigned-commit", "logician")])
    assert at(data, "plan-changed-after-seal", None)["commit"] == change
    assert at(data, "unsigned-commit", "logician")["commit"] == forged


@pytest.mark.parametrize("first_parent", ["main", "branch"])
def test_locked_key_changed_on_a_branch_landed_in_either_order(lab: Lab, first_parent: str) -> None:
    base = lab.start()
    lab.branch("replan", base)
    replan(lab, "scale: {min: 0, max: 3}", "scale: {min: 0, max: 4}")
    lab.checkout("main")
    lab.seal("cto")
    merge = lab.land("replan", first_parent=first_parent)
    data = expect(lab, [("plan-changed-after-seal", None)])
    assert at(data, "plan-changed-after-seal", None)["commit"] == merge
