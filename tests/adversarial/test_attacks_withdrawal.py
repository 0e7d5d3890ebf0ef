"""Attacks on withdrawals (docs/sealing.md, "Withdrawals"): a withdrawal smuggling another change,
a withdrawal undone or rewritten, a rater withdrawn to hide scores already read, and plans that
withdraw nobody or give no valid category. Honest shapes (a withdrawal of its own, one declared
before the first seal) stay clean.
"""

from __future__ import annotations

import json

import pytest

from tests.adversarial.conftest import PLAN, Lab, as_identity, at, expect, identity, names, refused
from tests.adversarial.paper import paper_lab
from tests.conftest import run_cli

#: the stories of this module test the sealing rules, not git: they run on paper
#: (tests/adversarial/paper.py); those marked `git` build a real repository
lab = paper_lab

THREE = PLAN.replace(", required: false", "")
WITHDRAW = "withdrawals:\n  - {rater: redteam, reason: left the company, category: unforeseen}\n"


def begun(lab: Lab) -> None:
    """A three-rater study whose first two raters sealed; the red team has not."""
    lab.start(THREE)
    lab.seal("cto", (1, 2))
    lab.seal("logician", (2, 2))


def report_json(lab: Lab) -> dict:
    with as_identity(identity("lead")):
        res = run_cli("report", "--format", "json", "--bootstrap", "0", cwd=lab.path)
    assert res.code == 0 and "Traceback" not in res.output, res.output
    return json.loads(res.out)


def reveal_all(lab: Lab, *raters: str, force: bool = False) -> None:
    for rater in raters:
        lab.write(lab.score_path(rater), lab.texts[(rater, "unblinded")])
        res = lab.cli(rater, "reveal", "--rater", rater, *(["--force"] if force else []))
        assert res.code == 0, res.output


# --------------------------------------------------------------------------- honest shapes


def test_a_withdrawal_of_its_own_is_clean(lab: Lab) -> None:
    begun(lab)
    lab.file("lead", "aoven.yaml", THREE + WITHDRAW, "withdraw redteam")
    data = expect(lab, [])
    assert data["status"] == "complete"


def test_a_withdrawal_declared_with_the_plan_before_any_seal_is_clean(lab: Lab) -> None:
    lab.start(THREE + WITHDRAW)
    lab.seal("cto")
    lab.seal("logician")
    data = expect(lab, [])
    assert data["status"] == "complete" and data["withdrawals"][0]["rater"] == "redteam"


# --------------------------------------------------------------------------- bundled


def test_a_withdrawal_bundled_with_another_plan_change_is_withdrawal_bundled(lab: Lab) -> None:
    begun(lab)
    bundled = lab.file("lead", "aoven.yaml", THREE + WITHDRAW + "retest_cap: 3\n", "withdraw redteam")
    data = expect(lab, [("withdrawal-bundled", None)])
    v = at(data, "withdrawal-bundled", None)
    assert v["commit"] == bundled and "retest_cap: (absent) → 3" in v["message"]
    assert "redteam" in v["message"]


def test_a_withdrawal_bundled_with_a_study_file_is_withdrawal_bundled(lab: Lab) -> None:
    begun(lab)
    lab.write("aoven.yaml", THREE + WITHDRAW)
    lab.write("study/notes.md", "# Notes\n\nThe red team left.\n")
    bundled = lab.put("lead", "withdraw redteam, and notes", "aoven.yaml", "study/notes.md")
    data = expect(lab, [("withdrawal-bundled", None)])
    v = at(data, "withdrawal-bundled", None)
    assert v["commit"] == bundled and "study/notes.md" in v["message"]


@pytest.mark.git
def test_the_hook_refuses_a_bundled_withdrawal(lab: Lab) -> None:
    lab.start(THREE)
    lab.install_hook()
    lab.seal("cto")
    head = lab.head()
    lab.write("aoven.yaml", THREE + WITHDRAW + "retest_cap: 3\n")
    refused(lab.git_commit("lead", "withdraw redteam", "aoven.yaml"), "withdrawal-bundled")
    assert lab.head() == head


# --------------------------------------------------------------------------- changed


def test_a_withdrawal_removed_later_is_withdrawal_changed(lab: Lab) -> None:
    begun(lab)
    declared = lab.file("lead", "aoven.yaml", THREE + WITHDRAW, "withdraw redteam")
    removed = lab.file("lead", "aoven.yaml", THREE, "bring the red team back")
    data = expect(lab, [("withdrawal-changed", None)])
    v = at(data, "withdrawal-changed", None)
    assert v["commit"] == removed and names(v, declared) and "was removed" in v["message"]


def test_a_withdrawal_edited_later_is_withdrawal_changed(lab: Lab) -> None:
    begun(lab)
    lab.file("lead", "aoven.yaml", THREE + WITHDRAW, "withdraw redteam")
    edited = lab.file("lead", "aoven.yaml", THREE + WITHDRAW.replace("unforeseen", "error"), "recategorise")
    data = expect(lab, [("withdrawal-changed", None)])
    v = at(data, "withdrawal-changed", None)
    assert v["commit"] == edited and "was edited" in v["message"]


# --------------------------------------------------------------------------- hiding scores


@pytest.mark.git
def test_withdrawing_a_rater_after_everyone_revealed_hides_nothing_and_shows_after_reveal(lab: Lab) -> None:
    """The logician's revealed scores disagree, so the lead withdraws the logician: the pass was
    complete at the withdrawal, so the scores stay, and the table says it came after the reveal."""
    begun(lab)
    lab.seal("redteam", (2, 2))
    reveal_all(lab, "cto", "logician", "redteam")
    entry = "withdrawals:\n  - {rater: logician, reason: disagreed too often, category: error}\n"
    withdrawal = lab.file("lead", "aoven.yaml", THREE + entry, "withdraw logician")
    data = expect(lab, [])
    w = data["withdrawals"][0]
    assert (w["excluded"], w["kept"]) == ([], [{"pass": "unblinded", "round": "main"}])
    assert [r["pass"] for r in w["after_reveal"]] == ["unblinded"]
    doc = report_json(lab)
    assert doc["raters"] == {"unblinded": ["cto", "logician", "redteam"]}
    [event] = [e for e in doc["protocol_deviations"]["events"] if e["kind"] == "withdrawal"]
    assert (event["commit"], event["when"]) == (withdrawal, "after the reveal of pass unblinded")
    with as_identity(identity("lead")):
        md = run_cli("report", "--format", "markdown", "--bootstrap", "0", cwd=lab.path).out
    assert "⚠️ **Protocol:** 1 protocol deviation after a reveal (withdrawal) (see Protocol deviations)." in md


@pytest.mark.git
def test_withdrawing_a_rater_whose_scores_were_force_revealed_is_shown_after_the_reveal(lab: Lab) -> None:
    """Before the red team sealed, the logician force-revealed; withdrawing the logician then does
    take their sheet out of the unfinished pass — and the table shows both the forced reveal and a
    withdrawal after the reveal of the pass, for a reader to judge."""
    begun(lab)
    reveal_all(lab, "logician", force=True)
    entry = "withdrawals:\n  - {rater: logician, reason: unreachable, category: unforeseen}\n"
    withdrawal = lab.file("lead", "aoven.yaml", THREE + entry, "withdraw logician")
    data = expect(lab, [])
    assert data["withdrawals"][0]["excluded"] == [{"pass": "unblinded", "round": "main"}]
    assert {p["rater"] for p in data["pending"]} == {"redteam"}
    kinds = [(e["kind"], e["when"]) for e in data["protocol_events"]]
    assert kinds == [("forced-reveal", "before any reveal"),
                     ("withdrawal", "after the reveal of pass unblinded")]
    assert data["protocol_events"][1]["commit"] == withdrawal


# --------------------------------------------------------------------------- bad plans


@pytest.mark.git
def test_a_withdrawal_of_an_unknown_rater_is_a_plan_error_naming_its_line(lab: Lab) -> None:
    begun(lab)
    lab.file("lead", "aoven.yaml",
             THREE + "withdrawals:\n  - {rater: mallory, reason: gone, category: unforeseen}\n", "withdraw")
    line = THREE.count("\n") + 2
    before = lab.snapshot()
    res = lab.cli("lead", "check-plan")
    assert res.code == 2 and f"aoven.yaml:{line}: withdrawals: unknown rater 'mallory'" in res.output
    with as_identity(identity("lead")):
        rep = run_cli("report", "--format", "json", cwd=lab.path)
    assert rep.code == 2 and f":{line}: withdrawals: unknown rater 'mallory'" in rep.output
    assert "Traceback" not in rep.output
    data = expect(lab, [])
    assert data["withdrawals"] == [] and {p["rater"] for p in data["pending"]} == {"redteam"}
    assert lab.snapshot() == before


@pytest.mark.git
def test_a_withdrawal_with_a_bad_category_is_a_plan_error_naming_its_line(lab: Lab) -> None:
    begun(lab)
    lab.install_hook()
    head = lab.head()
    lab.write("aoven.yaml", THREE + "withdrawals:\n  - {rater: redteam, reason: gone, category: bored}\n")
    line = THREE.count("\n") + 2
    res = lab.cli("lead", "check-plan")
    assert res.code == 2
    assert f"aoven.yaml:{line}: withdrawals/0/category: 'bored' is not one of" in res.output
    proc = lab.git_commit("lead", "withdraw", "aoven.yaml")
    assert proc.returncode != 0 and "bored" in proc.stderr and "Traceback" not in proc.stderr
    assert lab.head() == head
