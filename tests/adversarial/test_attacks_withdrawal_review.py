"""Adversarial review of withdrawals (docs/sealing.md, "Withdrawals"): a lead or a rater using the
one plan change allowed after the first seal to drop inconvenient scores, hide when it was made,
or smuggle something else in with it. Honest shapes stay clean.
"""

from __future__ import annotations

import json

import pytest

from aoven_git.progress import WITHHELD_UNTIL_SEALED
from tests.adversarial.conftest import PLAN, Lab, as_identity, at, expect, identity, sheet_text
from tests.conftest import run_cli

THREE = PLAN.replace(", required: false", "")


def withdraw(rater: str, category: str = "unforeseen") -> str:
    return f"withdrawals:\n  - {{rater: {rater}, reason: left the company, category: {category}}}\n"


def reveal_all(lab: Lab, *raters: str) -> None:
    for rater in raters:
        lab.write(lab.score_path(rater), lab.texts[(rater, "unblinded")])
        res = lab.cli(rater, "reveal", "--rater", rater)
        assert res.code == 0, res.output


def report_json(lab: Lab) -> dict:
    with as_identity(identity("lead")):
        res = run_cli("report", "--format", "json", "--bootstrap", "0", cwd=lab.path)
    assert "Traceback" not in res.output, res.output
    return json.loads(res.out)


# --------------------------------------------------------------------------- timing of the withdrawal


def test_a_withdrawal_on_an_old_branch_merged_after_the_reveal_drops_nothing(lab: Lab) -> None:
    """The lead branches from before the logician sealed, withdraws the logician there, and merges
    it after everyone revealed: git cannot show the withdrawal came first, so the logician's
    sheet (sealed, not after the withdrawal) still counts and the withdrawal is shown as after
    the reveal, not "before any reveal"."""
    base = lab.start(THREE)
    lab.branch("drop", base)
    withdrawal = lab.file("lead", "aoven.yaml", THREE + withdraw("logician"), "withdraw logician")
    lab.checkout("main")
    lab.seal("cto", (1, 2))
    lab.seal("logician", (3, 3))
    lab.seal("redteam", (1, 2))
    reveal_all(lab, "cto", "logician", "redteam")
    lab.land("drop")
    data = expect(lab, [])
    [w] = data["withdrawals"]
    assert w["commit"] == withdrawal and w["excluded"] == []
    assert [r["pass"] for r in w["after_reveal"]] == ["unblinded"]
    doc = report_json(lab)
    assert doc["raters"] == {"unblinded": ["cto", "logician", "redteam"]}
    [event] = [e for e in doc["protocol_deviations"]["events"] if e["kind"] == "withdrawal"]
    assert event["when"] == "after the reveal of pass unblinded"


def test_a_linear_withdrawal_before_the_rater_sealed_excludes_their_late_seal(lab: Lab) -> None:
    """Honest shape kept: withdrawn before sealing, a seal made after it counts nowhere."""
    lab.start(THREE)
    lab.seal("cto", (1, 2))
    withdrawal = lab.file("lead", "aoven.yaml", THREE + withdraw("logician"), "withdraw logician")
    lab.seal("redteam", (1, 2))
    lab.seal("logician", (3, 3))
    data = expect(lab, [])
    [w] = data["withdrawals"]
    assert w["commit"] == withdrawal and w["after_reveal"] == []
    assert w["excluded"] == [{"pass": "unblinded", "round": "main"}] and w["kept"] == []
    assert data["status"] == "complete"


# --------------------------------------------------------------------------- a withdrawn rater's plaintext


def test_a_withdrawn_raters_scores_committed_before_another_seals_are_still_visible_at_seal(lab: Lab) -> None:
    """Withdrawn with the plan, the red team commits its scores anyway; the cto seals after they
    were readable. Leaving the study does not make one's scores unreadable."""
    lab.start(THREE + withdraw("redteam"))
    lab.content("redteam", (3, 3))
    lab.seal("cto", (3, 3))
    lab.seal("logician", (1, 2))
    data = expect(lab, [("visible-at-seal", "cto"), ("visible-at-seal", "logician")])
    assert "redteam" in at(data, "visible-at-seal", "cto")["message"]


# --------------------------------------------------------------------------- nobody left to compare


def test_withdrawing_the_only_other_required_rater_leaves_no_agreement_to_pass_on(lab: Lab) -> None:
    """cto and logician are the required raters; the lead withdraws the logician before they seal,
    so cto's scores would be compared with nobody's. The report must not reach PASS on one rater."""
    lab.start(PLAN)
    lab.seal("cto", (0, 0))
    lab.file("lead", "aoven.yaml", PLAN + withdraw("logician"), "withdraw logician")
    reveal_all(lab, "cto")
    data = expect(lab, [])
    assert data["status"] == "complete"
    doc = report_json(lab)
    assert doc["verdict"] == "INCONCLUSIVE", doc["verdict"]
    assert doc["kappa"]["unblinded"]["D1"]["reason"] == (
        "fewer than two raters, so there is no pair to compare")


def test_withdrawing_the_only_other_rater_under_undefined_include_does_not_pass(lab: Lab) -> None:
    """`kappa.undefined: include` lets an undefined κ count; with the only other rater withdrawn,
    every κ is undefined, so one rater's treatment-friendly scores alone must still not PASS."""
    rules = "rules: {kappa: {undefined: include}, pass: {questions: 1}}\n"
    plan = PLAN + rules
    lab.start(plan)
    text = sheet_text("cto", (0, 0), nonce="n-cto").replace("| A | 0 | 0 | 0 |", "| A | 3 | 3 | 6 |")
    lab.texts[("cto", "unblinded")] = text
    lab.file("cto", lab.seal_path("cto"), lab.seal_bytes("cto", text), "seal cto")
    lab.file("lead", "aoven.yaml", plan + withdraw("logician"), "withdraw logician")
    reveal_all(lab, "cto")
    doc = report_json(lab)
    assert (doc["verdict"], doc["not_ready"]) == ("INCONCLUSIVE", [])  # PASS with two raters alike


# --------------------------------------------------------------------------- bundling


def test_a_bundled_withdrawal_on_a_branch_from_before_the_first_seal_is_withdrawal_bundled(lab: Lab) -> None:
    """Made on a branch from before the first seal, the withdrawal commit also sets `retest_cap`;
    merged after the seals, it is not proven to precede them, so it must be a commit of its own."""
    base = lab.start(THREE)
    lab.branch("drop", base)
    bundled = lab.file("lead", "aoven.yaml", THREE + withdraw("redteam") + "retest_cap: 3\n", "withdraw")
    lab.checkout("main")
    lab.seal("cto", (1, 2))
    lab.seal("logician", (1, 2))
    lab.land("drop")
    data = expect(lab, [("withdrawal-bundled", None)])
    v = at(data, "withdrawal-bundled", None)
    assert v["commit"] == bundled and "retest_cap: (absent) → 3" in v["message"]


def test_a_withdrawal_added_by_a_merge_with_another_plan_change_is_withdrawal_bundled(lab: Lab) -> None:
    """An evil merge: the merge commit itself adds the withdrawal and sets `retest_cap`."""
    lab.start(THREE)
    lab.seal("cto", (1, 2))
    side = lab.head()
    lab.branch("side", side)
    lab.seal("logician", (1, 2))
    lab.checkout("main")
    lab.git("merge", "-q", "--no-ff", "--no-commit", "side")
    lab.write("aoven.yaml", THREE + withdraw("redteam") + "retest_cap: 3\n")
    merge = lab.put("lead", "merge side, withdraw redteam", no_verify=True)
    assert len(lab.git("rev-list", "--parents", "-n1", merge).split()) == 3
    data = expect(lab, [("withdrawal-bundled", None)])
    assert at(data, "withdrawal-bundled", None)["commit"] == merge


def test_a_withdrawal_with_reordered_keys_and_new_comments_is_clean(lab: Lab) -> None:
    """Honest: the lead's editor re-sorts two top-level keys and the lead adds a comment; the data
    of every other key is unchanged, so the withdrawal is a commit of its own."""
    lab.start(THREE)
    lab.seal("cto", (1, 2))
    lines = THREE.splitlines(keepends=True)
    moved = [ln for ln in lines if ln.startswith(("markers:", "security:"))]
    rest = [ln for ln in lines if ln not in moved]
    plan = "".join(rest) + "".join(reversed(moved)) + "# the red team left in week 2\n" + withdraw("redteam")
    lab.file("lead", "aoven.yaml", plan, "withdraw redteam")
    lab.seal("logician", (1, 2))
    data = expect(lab, [])
    assert data["status"] == "complete" and data["withdrawals"][0]["rater"] == "redteam"


def test_a_withdrawal_whose_alias_rewrites_another_key_is_withdrawal_bundled(lab: Lab) -> None:
    """YAML anchors: the withdrawal commit anchors its reason and, through an alias of it, also
    rewrites `study`. The rule compares what the plan says, whatever the spelling, so the changed
    `study` is named."""
    plan = THREE.replace("study: sealing-test\n", "study: &name sealing-test\n")
    lab.start(plan)
    lab.seal("cto", (1, 2))
    new = plan.replace("study: &name sealing-test\n", "study: *why\n").replace(
        "version: 1\n", "version: 1\nnote: &why left the company\n")
    new += "withdrawals:\n  - {rater: redteam, reason: *why, category: unforeseen}\n"
    bundled = lab.file("lead", "aoven.yaml", new, "withdraw redteam")
    data = expect(lab, [("withdrawal-bundled", None)])
    v = at(data, "withdrawal-bundled", None)
    assert v["commit"] == bundled and "study:" in v["message"]


# --------------------------------------------------------------------------- status


def status_json(lab: Lab, who: str) -> dict:
    res = lab.cli(who, "status", "--format", "json")
    assert res.code == 0 and "Traceback" not in res.output, res.output
    return json.loads(res.out)


def test_status_does_not_wait_for_a_withdrawn_rater_and_asks_for_rows(lab: Lab) -> None:
    """Honest: the red team is withdrawn with the plan; cto and logician revealed and disagree.
    status must ask cto for rows, not say "nothing is yours to do" while waiting for the red team."""
    lab.start(THREE + withdraw("redteam"))
    lab.seal("cto", (1, 2))
    lab.seal("logician", (3, 3))
    reveal_all(lab, "cto", "logician")
    before = lab.snapshot()
    doc = status_json(lab, "cto")
    assert not any("waiting for redteam" in s["why"] for s in doc["steps"]), doc["steps"]
    [rec] = doc["reconciliation"]
    assert rec["pass"] == "unblinded" and rec["flagged"] == 4
    assert "disagreements" in doc["next"]["command"] and "--rater cto" in doc["next"]["command"]
    assert lab.snapshot() == before


def test_status_ignores_a_withdrawn_raters_lost_sealed_sheet(lab: Lab) -> None:
    """The red team sealed, lost its sheet and was withdrawn before the pass was complete: its
    sealed, never revealed sheet holds up neither the reconciliation nor anyone's steps."""
    lab.start(THREE)
    lab.seal("redteam", (1, 2))
    lab.seal("cto", (1, 2))
    lab.file("lead", "aoven.yaml", THREE + withdraw("redteam"), "withdraw redteam: sheet lost")
    lab.seal("logician", (3, 3))
    reveal_all(lab, "cto", "logician")
    data = expect(lab, [])
    assert data["withdrawals"][0]["excluded"] == [{"pass": "unblinded", "round": "main"}]
    doc = status_json(lab, "logician")
    assert [r["pass"] for r in doc["reconciliation"]] == ["unblinded"]
    assert "--rater logician" in doc["next"]["command"]


# --------------------------------------------------------------------------- undoing, hiding


def test_withdraw_to_reveal_then_bring_back_is_withdrawal_changed_and_visible_at_seal(lab: Lab) -> None:
    """The lead withdraws the red team so the others may reveal, then brings it back; the red team
    seals after reading their scores."""
    lab.start(THREE)
    lab.seal("cto", (1, 2))
    lab.seal("logician", (2, 2))
    lab.file("lead", "aoven.yaml", THREE + withdraw("redteam"), "withdraw redteam")
    reveal_all(lab, "cto", "logician")
    back = lab.file("lead", "aoven.yaml", THREE, "the red team is back")
    lab.seal("redteam", (1, 2))
    data = expect(lab, [("visible-at-seal", "redteam"), ("withdrawal-changed", None)])
    assert at(data, "withdrawal-changed", None)["commit"] == back


def bundled_behind_a_broken_plan(lab: Lab) -> tuple[str, str, dict]:
    """The lead first commits a plan that does not parse, then a commit that repairs it, adds the
    withdrawal and sets `retest_cap`."""
    lab.start(THREE)
    lab.seal("cto", (1, 2))
    broken = lab.file("lead", "aoven.yaml", THREE + "withdrawals: [\n", "wip")
    fixed = lab.file("lead", "aoven.yaml", THREE + withdraw("redteam") + "retest_cap: 3\n", "withdraw")
    lab.seal("logician", (2, 2))
    res, data = lab.verify()
    assert "Traceback" not in res.output and res.code == 1, res.output
    return broken, fixed, data


def test_a_withdrawal_behind_a_broken_plan_commit_still_fails_verification(lab: Lab) -> None:
    """The broken plan itself is a change after the first seal that stays in history: the study
    fails verification whatever the next commit does."""
    broken, _, data = bundled_behind_a_broken_plan(lab)
    assert at(data, "plan-changed-after-seal", None)["commit"] == broken


@pytest.mark.xfail(strict=True, reason="withdrawal_rules._bundled_with compares the plan with its "
                   "first parent's only; a parent plan that does not parse hides the bundled keys "
                   "(the broken commit is already plan-changed-after-seal)")
def test_a_withdrawal_bundled_behind_a_broken_plan_commit_is_withdrawal_bundled(lab: Lab) -> None:
    _, fixed, data = bundled_behind_a_broken_plan(lab)
    assert any(v["commit"] == fixed and "retest_cap" in v["message"] for v in data["violations"]
               if v["code"] == "withdrawal-bundled")


def test_a_withdrawn_raters_reveal_and_rows_after_the_withdrawal_count_nowhere(lab: Lab) -> None:
    """Withdrawn before the pass was complete, the red team still reveals: its scores leave
    agreement, and the report lists only cto and logician."""
    lab.start(THREE)
    lab.seal("redteam", (3, 3))
    lab.seal("cto", (1, 2))
    lab.file("lead", "aoven.yaml", THREE + withdraw("redteam"), "withdraw redteam")
    lab.seal("logician", (1, 2))
    reveal_all(lab, "cto", "logician", "redteam")
    data = expect(lab, [])
    assert data["withdrawals"][0]["excluded"] == [{"pass": "unblinded", "round": "main"}]
    doc = report_json(lab)
    assert doc["raters"] == {"unblinded": ["cto", "logician"]}
    assert not doc["flagged_cells"], doc["flagged_cells"]  # the red team's 3s would flag every cell


def test_status_of_an_unsealed_rater_does_not_name_where_the_others_disagree(lab: Lab) -> None:
    """cto and logician force-revealed before the red team sealed. Their files are readable in
    the repository, but `status`, which the red team runs to learn its next step, should not put
    the cells where they disagree on its screen before it has sealed."""
    lab.start(THREE)
    lab.seal("cto", (1, 2))
    lab.seal("logician", (3, 3))
    for rater in ("cto", "logician"):
        lab.write(lab.score_path(rater), lab.texts[(rater, "unblinded")])
        assert lab.cli(rater, "reveal", "--rater", rater, "--force").code == 0
    doc = status_json(lab, "redteam")
    assert doc["next"]["command"].startswith("aoven-git sheet --rater redteam")
    shown = json.dumps(doc["verdicts"])
    assert "Q1/A/D1" not in shown, shown
    assert WITHHELD_UNTIL_SEALED in doc["verdicts"][0]["not_ready"]
    # once the red team has sealed, the reasons are theirs to read
    lab.seal("redteam", (2, 2))
    assert "Q1/A/D1" in json.dumps(status_json(lab, "redteam")["verdicts"])


def test_status_of_an_unsealed_rater_shows_no_count_of_sealed_disagreements(lab: Lab) -> None:
    """Honest: both others sealed by digest, nothing revealed. status tells the red team to score
    and shows the others only as `sealed`: no reconciliation, no flagged cells, no scores."""
    lab.start(THREE)
    lab.seal("cto", (1, 2))
    lab.seal("logician", (3, 3))
    doc = status_json(lab, "redteam")
    states = {(s["rater"], s["pass"]): s["state"] for s in doc["sheets"]}
    assert states == {("cto", "unblinded"): "sealed", ("logician", "unblinded"): "sealed",
                      ("redteam", "unblinded"): "missing"}
    assert doc["reconciliation"] == []
    assert "flagged" not in json.dumps(doc["verdicts"])
    assert doc["next"]["command"].startswith("aoven-git sheet --rater redteam")


def test_withdrawing_an_optional_rater_after_the_reveal_keeps_their_revealed_scores(lab: Lab) -> None:
    """The optional red team sealed in time, revealed, and disagrees; withdrawing it afterwards
    does not drop its scores (the pass was complete) and is shown as after the reveal."""
    lab.start(PLAN)
    lab.seal("cto", (1, 2))
    lab.seal("logician", (1, 2))
    lab.seal("redteam", (3, 3))
    reveal_all(lab, "cto", "logician", "redteam")
    lab.file("lead", "aoven.yaml", PLAN + withdraw("redteam"), "withdraw redteam")
    data = expect(lab, [])
    [w] = data["withdrawals"]
    assert (w["excluded"], w["kept"]) == ([], [{"pass": "unblinded", "round": "main"}])
    doc = report_json(lab)
    assert doc["raters"] == {"unblinded": ["cto", "logician", "redteam"]}
