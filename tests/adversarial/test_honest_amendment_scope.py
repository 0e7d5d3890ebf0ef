"""Review 3 of the amendment scope and the one-file reconciliation: honest shapes that must stay
clean, and a study offence that must still block the study.

`readiness._violation_scope` lets a violation block only an amendment when verify-seal names it,
which `seal_rules.scopes` does only when every sheet concerned is that amendment's. The
shapes below are what an honest team does (an optional rater who does not re-score, an optional
rater whose re-score is broken, a reconciliation renamed on a branch while rows are added on main)
and one attack (the lead writes a study sheet and the optional rater's re-score in one commit).
"""

from __future__ import annotations

from tests.adversarial.conftest import RECONCILIATION_DRAFT, Lab
from tests.adversarial.test_amendment_folder import (
    FOLDER,
    lab,
    report,
    rescores,
    scores,
    seal,
    violation_scopes,
)

__all__ = ["lab"]


def honest_study(lab: Lab) -> None:
    """cto and logician seal and reveal the study (PASS); the optional red team takes no part."""
    seal(lab, "cto"), seal(lab, "logician")
    lab.reveal("cto"), lab.reveal("logician")


def rescore_through_the_cli(lab: Lab, *raters: str) -> None:
    for r in raters:
        lab.write(f"{FOLDER}/scores_{r}.md", rescores(r))
        res = lab.cli(r, "seal", "--rater", r, "--amendment", "d2-ruling")
        assert res.code == 0, res.output
    for r in raters:
        res = lab.cli(r, "reveal", "--rater", r, "--amendment", "d2-ruling")
        assert res.code == 0, res.output


def test_an_optional_rater_who_does_not_rescore_blocks_nothing(lab: Lab) -> None:
    honest_study(lab)
    rescore_through_the_cli(lab, "cto", "logician")
    _, doc = report(lab)
    assert doc["seals"]["violations"] == []
    assert doc["verdict"] == "PASS" and doc["not_ready"] == []
    assert doc["amendments"][0]["verdict"] != "NOT-READY", doc["amendments"][0]


def test_an_optional_raters_broken_rescore_excludes_them_from_the_amendment_only(lab: Lab) -> None:
    """The red team (optional) scores the study honestly; its re-score is committed by the lead
    (`unauthorized-author`, about an amendment sheet only). The red team stays in the study."""
    seal(lab, "cto"), seal(lab, "logician"), seal(lab, "redteam")
    lab.reveal("cto"), lab.reveal("logician"), lab.reveal("redteam")
    rescore_through_the_cli(lab, "cto", "logician")
    lab.file("lead", f"{FOLDER}/scores_redteam.md", rescores("redteam"), no_verify=True)
    _, doc = report(lab)
    # a content seal after the others' reveals is also `visible-at-seal`: both the amendment's
    assert violation_scopes(doc) == [("unauthorized-author", "redteam", "d2-ruling"),
                                     ("visible-at-seal", "redteam", "d2-ruling")]
    assert doc["verdict"] == "PASS" and doc["not_ready"] == []
    assert "excluded_raters" in doc
    assert [e for e in doc["excluded_raters"] if e.get("rater") == "redteam"] == []


def test_lead_writing_a_study_sheet_with_the_optional_raters_rescore_blocks_the_study(lab: Lab) -> None:
    """One commit by the lead adds logician's study sheet and the red team's re-score: logician's
    offence concerns a study sheet and must block the study, whatever the red team's is."""
    seal(lab, "cto")
    lab.write("study/scores_logician.md", scores("logician"))
    lab.write(f"{FOLDER}/scores_redteam.md", rescores("redteam"))
    lab.put("lead", "typed in by the lead", no_verify=True)
    lab.reveal("cto")
    _, doc = report(lab)
    assert ("unauthorized-author", "logician", None) in violation_scopes(doc), violation_scopes(doc)
    assert doc["verdict"] == "NOT-READY"


def test_a_reconciliation_renamed_on_a_branch_while_main_adds_rows_is_one_file(lab: Lab) -> None:
    """The lead renames `reconciliation.md` to `reconciliation_main.md` on a branch (`git mv`);
    meanwhile cto extends the draft on main; the merge carries cto's change into the new name.
    No commit ever has both names: no `duplicate-sheet`."""
    honest_study(lab)
    lab.file("lead", "study/reconciliation.md", RECONCILIATION_DRAFT, "draft")
    lab.branch("rename")
    lab.git("mv", "study/reconciliation.md", "study/reconciliation_main.md")
    lab.put("lead", "rename the reconciliation")
    lab.checkout("main")
    lab.write("study/reconciliation.md", RECONCILIATION_DRAFT + "\n<!-- cto: rows follow -->\n")
    lab.put("cto", "a note in the draft")
    lab.land("rename")
    assert sorted(p for p in lab.git("ls-files", "study").split() if "reconciliation" in p) == [
        "study/reconciliation_main.md"]
    _, doc = report(lab)
    assert violation_scopes(doc) == []


def test_two_reconciliation_names_on_parallel_branches_merged_into_both_are_caught(lab: Lab) -> None:
    """The attack the rule exists for, through a merge: cto keeps writing `reconciliation.md` on
    main, logician's branch adds `reconciliation_main.md`; the merge holds both."""
    honest_study(lab)
    lab.file("lead", "study/reconciliation.md", RECONCILIATION_DRAFT, "draft")
    lab.branch("other")
    side = lab.file("logician", "study/reconciliation_main.md", RECONCILIATION_DRAFT, "my own file")
    lab.checkout("main")
    lab.land("other")
    _, doc = report(lab)
    dup = [v for v in doc["seals"]["violations"] if v["code"] == "duplicate-sheet"]
    assert [(v["rater"], v["amendment"]) for v in dup] == [(None, None)], doc["seals"]["violations"]
    assert dup[0]["commit"] == side  # where the two first stand side by side
    assert doc["verdict"] == "NOT-READY"
