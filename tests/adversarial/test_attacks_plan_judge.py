"""Review: which plan finds the first seal (found by reading seal_rules.judge).

`judge` reads the history under the plan at the verified revision to find the first seal, and only
then switches to the plan committed with that seal. When the plan at HEAD moved the study
(`study_dir`, a locked key), no earlier seal is a seal under it: the first "seal" is the commit
that moved the files, whose plan is HEAD's own, so nothing has "changed after the first seal".
The real change goes unreported and the honest raters are accused instead.
"""

from __future__ import annotations

import pytest

from tests.adversarial.conftest import PLAN, Lab, at, expect, sheet_text
from tests.sealing.conftest import CTO, LOGICIAN, REDTEAM, plan

MOVED = plan(study_dir="phase2")


def test_study_dir_moved_after_every_seal(lab: Lab) -> None:
    """cto and logician seal honestly; the lead then moves the study to `phase2/` and edits
    `study_dir` (locked). Judged by the plan of the first seal, the move deletes both seal files
    and adds two `scores_*` copies outside the study dir, and the plan changed. Today verify-seal
    reports neither `plan-changed-after-seal` nor the deletions, and instead accuses both raters of
    `visible-at-seal` (each other's *seal files* read as plaintext) and `unauthorized-author`."""
    assert MOVED != PLAN
    lab.start()
    lab.seal("cto")
    lab.seal("logician")
    lab.git("mv", "study", "phase2")
    lab.write("aoven.yaml", MOVED)
    move = lab.put("lead", "shorter paths", no_verify=True)
    # the moved seal files hold digests, not scores: outside the study dir only content makes a
    # copy (docs/sealing.md, "Copies of scores")
    data = expect(lab, [("deleted-after-seal", "cto"), ("deleted-after-seal", "logician"),
                        ("plan-changed-after-seal", None)])
    assert at(data, "plan-changed-after-seal", None)["commit"] == move


LOOSE = plan(raters=["{id: cto, name: CTO, emails: [cto@example.org, mallory@example.org]}",
                     LOGICIAN, REDTEAM])


@pytest.mark.parametrize("first_parent", ["main", "branch"])
def test_parallel_first_seal_under_a_looser_plan(lab: Lab, first_parent: str) -> None:
    """On a branch from before any seal, mallory adds her e-mail to cto's and seals as cto; on
    main logician seals under the real plan; the merge keeps the loose plan. Both seals are
    "first" (neither is an ancestor of the other) and `judge` takes `first_seals[0]`, whichever
    the topological sort puts first (it follows `git log` order, i.e. commit dates): with main as
    the first parent mallory's seal is `unauthorized-author`, with the branch first it is not."""
    assert LOOSE != PLAN
    base = lab.start()
    lab.branch("side", base)
    lab.write("aoven.yaml", LOOSE)
    lab.put("lead", "plan tweak", "aoven.yaml")
    lab.seal("cto", who=("Mallory", "mallory@example.org"))
    lab.checkout("main")
    lab.seal("logician")
    if first_parent == "main":
        lab.merge_taking("side", take="side")
    else:
        lab.checkout("side")
        lab.merge_taking("main", take="side")
        lab.checkout("main")
        lab.git("merge", "-q", "--ff-only", "side")
    expect(lab, [("plan-changed-after-seal", None), ("unauthorized-author", "cto")])


def test_first_seal_commit_that_edits_the_plan(lab: Lab) -> None:
    """The README lists "a seal commit that edits the plan" under `plan-changed-after-seal`. cto's
    seal commit also makes logician optional: as the FIRST seal, its own plan is the frozen plan,
    so nothing is reported and logician is optional from then on."""
    lab.start()
    optional = "{id: logician, name: Logician, emails: [logician@example.org], required: false}"
    lab.write("aoven.yaml", plan(raters=[CTO, optional, REDTEAM]))
    lab.write(lab.seal_path("cto"), lab.seal_bytes("cto", sheet_text("cto", nonce="n")))
    seal = lab.put("cto", "seal cto")
    assert lab.git("show", "--name-only", "--format=", seal).split() == ["aoven.yaml", lab.seal_path("cto")]
    data = expect(lab, [("plan-changed-after-seal", None)])
    assert at(data, "plan-changed-after-seal", None)["commit"] == seal
