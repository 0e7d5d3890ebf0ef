"""Review 2: amendments declared while the study is still being sealed (found by reading
sealing.missing_seals, seal_rules.unsealed_readers and seal_rules.concerns).

The ordering rules are right: a study sheet must be sealed before every copy of another rater's
scores, an amendment's re-scores included (`concerns`). The team-workflow guards are not: `reveal
--amendment`, the pre-commit hook (`unsealed-readers`) and the report's list of forced reveals all
ask only whether everyone sealed *the amendment*. An amendment may be declared before the study is
sealed (docs/amendments.md: "Commit the plan entry before anyone seals a re-score"), so a rater
who follows the tool's own advice reveals re-scores of study cells while another required rater
has not sealed the study yet. That rater can then never seal cleanly: `seal` refuses
(visible-at-seal), a hand seal is a violation, and the study stays NOT-READY for good, through
an action the tool approved and does not even list as forced.
"""

from __future__ import annotations

from tests.adversarial.conftest import PLAN, Lab, sheet_text

AMENDMENT = ("{id: d2-ruling, title: Calibration ruling, rationale: a hedge is not a calibration, "
             "dimensions: [D2], conditions: [B]}")
FOLDER = "study/amendments/d2-ruling"
EARLY_AMENDMENT_PLAN = PLAN + "amendments:\n  - " + AMENDMENT + "\n"


def amendment_text(rater: str, score: int) -> str:
    """A valid re-score sheet of the amendment's scope (D2 of B, both questions)."""
    fm = f"---\nrater: {rater}\npass: unblinded\nround: main\namendment: d2-ruling\n---\n"
    rows = "".join(f"| {q} | B | {score} |\n" for q in ("Q1", "Q2"))
    return f"{fm}\n# Re-scores of {rater}\n\n| Q | Cond | D2 |\n|---|---|---|\n{rows}"


def both_sealed_the_amendment_only_cto_the_study(lab: Lab) -> None:
    """The amendment is in the plan from the start; cto sealed the study; both raters sealed the
    amendment through the CLI; logician has NOT sealed the study yet."""
    lab.start(EARLY_AMENDMENT_PLAN)
    lab.install_hook()
    lab.write("study/scores_cto.md", sheet_text("cto", (1, 2)))
    res = lab.cli("cto", "seal", "--rater", "cto")
    assert res.code == 0, res.output
    for rater, score in (("cto", 1), ("logician", 3)):
        lab.write(f"{FOLDER}/scores_{rater}.md", amendment_text(rater, score))
        res = lab.cli(rater, "seal", "--rater", rater, "--amendment", "d2-ruling")
        assert res.code == 0, res.output


def test_reveal_amendment_before_a_rater_sealed_the_study_is_refused(lab: Lab) -> None:
    """`reveal --amendment` would put cto's D2/B scores in front of logician, who has not sealed
    the study: it must refuse (exit 1, naming logician) and change nothing, as the study's own
    reveal does."""
    both_sealed_the_amendment_only_cto_the_study(lab)
    before = lab.snapshot()
    res = lab.cli("cto", "reveal", "--rater", "cto", "--amendment", "d2-ruling")
    assert res.code == 1, res.output
    assert "logician" in res.output
    assert lab.snapshot() == before


def test_hook_refuses_an_amendment_reveal_before_a_rater_sealed_the_study(lab: Lab) -> None:
    """The same reveal as a plain `git commit` of the re-score file: the hook's `unsealed-readers`
    rule must refuse it (logician has no study seal in HEAD)."""
    both_sealed_the_amendment_only_cto_the_study(lab)
    proc = lab.git_commit("cto", "reveal my re-scores", f"{FOLDER}/scores_cto.md")
    assert proc.returncode != 0, "the hook let the re-scores in while logician had not sealed the study"
    assert "unsealed-readers" in proc.stderr, proc.stderr
    assert "logician" in proc.stderr, proc.stderr


def test_amendment_reveal_before_a_study_seal_is_listed_as_forced(lab: Lab) -> None:
    """When such a reveal lands anyway (`--no-verify`), verify-seal must list it among the forced
    reveals (a reveal before every required rater had sealed an overlapping pass), as it does for
    a premature study reveal: the report shows who was exposed."""
    both_sealed_the_amendment_only_cto_the_study(lab)
    lab.put("cto", "reveal my re-scores", f"{FOLDER}/scores_cto.md", no_verify=True)
    res, data = lab.verify()
    assert "Traceback" not in res.output, res.output
    forced = [f for f in data["forced_reveals"] if f["rater"] == "cto"]
    assert forced and "logician" in forced[0]["unsealed"], data["forced_reveals"]


def test_logician_is_locked_out_after_the_approved_amendment_reveal(lab: Lab) -> None:
    """What the approved reveal costs (shown so the severity is clear): logician, honest, can no
    longer seal the study. The refusal itself is right; this test passes today and documents why
    the reveal above must be refused instead."""
    both_sealed_the_amendment_only_cto_the_study(lab)
    lab.put("cto", "reveal my re-scores", f"{FOLDER}/scores_cto.md", no_verify=True)
    lab.write("study/scores_logician.md", sheet_text("logician", (1, 3)))
    res = lab.cli("logician", "seal", "--rater", "logician")
    assert res.code == 1, res.output
    assert f"{FOLDER}/scores_cto.md" in res.output
