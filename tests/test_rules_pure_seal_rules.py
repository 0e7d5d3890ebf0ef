"""The sealing rules as a table: one short story per row, the exact violations verify-seal reports
for it (code and rater), and which commit each names. The stories run on paper
(tests/adversarial/paper.py): the history model is built from dictionaries by
`history.from_commits`, so a row costs milliseconds; `AOVEN_PAPER_SHADOW=1` replays every row on
git too and checks both agree (`tests/test_rules_pure_paper.py` does so for a sample on every run).

What only git can show stays in real repositories: an evil merge resolution and a forged commit
date (tests/sealing/test_verify_violations.py), signatures, the hook, replace refs, eol filters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from aoven_git.model import SheetId
from aoven_git.seals import format_seal, sha256
from tests.adversarial.conftest import Lab, at, expect, sheet_text
from tests.adversarial.paper import paper_lab
from tests.sealing.conftest import PLAN, REDTEAM, plan

lab = paper_lab

Violation = tuple[str, str | None]


@dataclass(frozen=True)
class Row:
    """A story (it returns the commits it names), the violations it must give, the commit each
    violation names (`at`, by the story's name for it) and text its message holds (`says`, with
    `{name}` for a commit's 10-digit id)."""

    story: Callable[[Lab], dict[str, str]]
    codes: list[Violation]
    at: dict[Violation, str] = field(default_factory=dict)
    says: dict[Violation, tuple[str, ...]] = field(default_factory=dict)
    path: dict[Violation, str] = field(default_factory=dict)


def content_merged_then_sealed(lab: Lab) -> dict[str, str]:
    base = lab.start()
    lab.branch("cto", base)
    lab.content("cto")
    lab.checkout("main")
    lab.merge("cto")
    return {"bad": lab.content("logician")}  # cto's scores were readable on main


def content_merged_into_the_sealing_branch(lab: Lab) -> dict[str, str]:
    """The branch carrying cto's scores was merged into logician's branch before logician sealed."""
    base = lab.start()
    lab.branch("cto", base)
    cto = lab.content("cto")
    lab.branch("logician", base)
    lab.git("merge", "-q", "--ff-only", "cto")
    return {"cto": cto, "bad": lab.seal("logician")}


def content_added_then_deleted(lab: Lab) -> dict[str, str]:
    lab.start()
    added = lab.content("cto")
    lab.git("rm", "-q", "study/scores_cto.md")
    deleted = lab.put("cto", "oops, remove my scores")
    return {"added": added, "deleted": deleted, "bad": lab.seal("logician")}


def draft_added_and_deleted_on_a_side_branch(lab: Lab) -> dict[str, str]:
    """History simplification must not hide a branch whose net effect on the study is nil."""
    base = lab.start()
    lab.branch("peek", base)
    lab.write("study/reconciliation.md", "| Cell | Rater | Justification | Consensus |\n")
    lab.put("lead", "draft reconciliation", "study/reconciliation.md")
    lab.git("rm", "-q", "study/reconciliation.md")
    lab.put("lead", "remove draft")
    lab.checkout("main")
    lab.merge("peek")
    bad = lab.seal("cto")
    lab.seal("logician")
    return {"bad": bad}


def two_score_files_in_one_commit(lab: Lab, plan_text: str = PLAN) -> dict[str, str]:
    lab.start(plan_text)
    for r in ("cto", "logician"):
        lab.write(lab.score_path(r), sheet_text(r))
    return {"both": lab.put("lead", "both score files", "study")}


NO_EMAILS = plan(raters=["{id: cto, name: CTO, emails: []}", "{id: logician, name: Logician, emails: []}",
                         REDTEAM])


def sealed_and_revealed(lab: Lab) -> None:
    lab.start()
    for r in ("cto", "logician"):
        lab.seal(r)
    for r in ("cto", "logician"):
        lab.reveal(r)


def sealed_file_edited(lab: Lab) -> dict[str, str]:
    sealed_and_revealed(lab)
    edited = lab.texts[("cto", "unblinded")].replace("| Q1 | A | 1 | 2 | 3 |", "| Q1 | A | 0 | 2 | 2 |")
    assert edited != lab.texts[("cto", "unblinded")]
    return {"edit": lab.file("cto", lab.score_path("cto"), edited, "second thoughts")}


def sealed_file_edited_on_a_branch(lab: Lab) -> dict[str, str]:
    lab.start()
    lab.seal("logician")
    lab.content("cto")
    lab.branch("fix")
    edit = lab.file("cto", lab.score_path("cto"), sheet_text("cto", (0, 0)), "edit on a branch")
    lab.checkout("main")
    lab.file("lead", "study/notes.txt", "on main meanwhile", "meanwhile")
    lab.merge("fix")
    lab.file("lead", "study/notes.txt", "more", "more commits")
    return {"edit": edit}


def seal_file_edited(lab: Lab) -> dict[str, str]:
    lab.start()
    lab.seal("cto")
    lab.seal("logician")
    text = sheet_text("cto", (0, 0), nonce="other")
    seal = format_seal(sha256(text.encode()), "scores_cto.md", SheetId("cto", "unblinded", "main"))
    return {"edit": lab.file("cto", lab.seal_path("cto"), seal, "reseal")}


def seal_file_deleted(lab: Lab) -> dict[str, str]:
    lab.start()
    lab.seal("cto")
    lab.git("rm", "-q", lab.seal_path("cto"))
    gone = lab.put("cto", "unseal")
    lab.seal("logician")
    return {"gone": gone}


def revealed_bytes_differ(lab: Lab) -> dict[str, str]:
    lab.start()
    lab.seal("cto")
    lab.seal("logician")
    other = lab.texts[("cto", "unblinded")].replace("| Q2 | B | 1 | 2 | 3 |", "| Q2 | B | 0 | 1 | 1 |")
    assert other != lab.texts[("cto", "unblinded")]
    bad = lab.file("cto", lab.score_path("cto"), other, "reveal cto")
    lab.reveal("logician")
    return {"bad": bad}


def sealed_by_another_rater(lab: Lab) -> dict[str, str]:
    lab.start()
    bad = lab.seal("cto", who="logician")
    lab.seal("logician")
    return {"bad": bad}


def plan_edit(**overrides: str) -> Callable[[Lab], dict[str, str]]:
    def story(lab: Lab) -> dict[str, str]:
        lab.start()
        lab.seal("cto")
        change = lab.file("lead", "aoven.yaml", plan(**overrides), "edit the plan")
        lab.seal("logician")
        return {"change": change}
    return story


def plan_edit_merged_after_a_seal(lab: Lab) -> dict[str, str]:
    base = lab.start()
    lab.branch("replan", base)
    lab.file("lead", "aoven.yaml", plan(markers="[FACT]"), "drop a marker")
    lab.checkout("main")
    lab.seal("cto")
    return {"merge": lab.merge("replan")}


def plan_broken_then_restored(lab: Lab) -> dict[str, str]:
    lab.start()
    lab.seal("cto")
    change = lab.file("lead", "aoven.yaml", PLAN + "scale: [unclosed\n", "break the plan")
    lab.file("lead", "aoven.yaml", PLAN, "restore the plan")
    return {"change": change}


UNLOCKED = "[study_dir, responses, scale, conditions, transitions, dimensions, questions, passes, rules]"
VISIBLE_L, VISIBLE_C = ("visible-at-seal", "logician"), ("visible-at-seal", "cto")
PLAN_CHANGED = ("plan-changed-after-seal", None)

#: named after the real-git tests they replace (tests/sealing/test_verify_violations.py)
ROWS: dict[str, Row] = {
    "sealing-after-another-raters-content-was-merged": Row(
        content_merged_then_sealed, [VISIBLE_L], at={VISIBLE_L: "bad"},
        says={VISIBLE_L: ("study/scores_cto.md",)}),
    "digest-seal-after-content-visible-on-a-merged-branch": Row(
        content_merged_into_the_sealing_branch, [VISIBLE_L], at={VISIBLE_L: "bad"},
        says={VISIBLE_L: ("{cto}",)}),
    "content-added-then-deleted-before-second-seal-is-still-visible": Row(
        content_added_then_deleted, [("deleted-after-seal", "cto"), VISIBLE_L],
        at={VISIBLE_L: "bad", ("deleted-after-seal", "cto"): "deleted"}, says={VISIBLE_L: ("{added}",)}),
    "content-added-and-deleted-on-a-side-branch-is-still-visible": Row(
        draft_added_and_deleted_on_a_side_branch, [VISIBLE_C, VISIBLE_L], at={VISIBLE_C: "bad"},
        says={VISIBLE_C: ("study/reconciliation.md",)}),
    "two-raters-in-one-commit": Row(
        two_score_files_in_one_commit,
        [("sealed-together", "cto"), ("sealed-together", "logician"),
         ("unauthorized-author", "cto"), ("unauthorized-author", "logician")],
        at={("sealed-together", "cto"): "both", ("sealed-together", "logician"): "both",
            ("unauthorized-author", "cto"): "both", ("unauthorized-author", "logician"): "both"}),
    "two-raters-in-one-commit-same-author-rule-only": Row(
        lambda lab: two_score_files_in_one_commit(lab, NO_EMAILS),
        [("sealed-together", "cto"), ("sealed-together", "logician")]),
    "edit-to-a-sealed-file": Row(
        sealed_file_edited, [("modified-after-seal", "cto")], at={("modified-after-seal", "cto"): "edit"},
        path={("modified-after-seal", "cto"): "study/scores_cto.md"}),
    "edit-on-a-branch-is-reported-once-not-at-every-merge": Row(
        sealed_file_edited_on_a_branch, [("modified-after-seal", "cto")],
        at={("modified-after-seal", "cto"): "edit"}),
    "edit-to-a-seal-file": Row(
        seal_file_edited, [("modified-after-seal", "cto")], at={("modified-after-seal", "cto"): "edit"},
        path={("modified-after-seal", "cto"): "study/seals/scores_cto.sha256"}),
    "deleted-seal-file": Row(
        seal_file_deleted, [("deleted-after-seal", "cto")], at={("deleted-after-seal", "cto"): "gone"}),
    "revealed-bytes-differ-from-digest": Row(
        revealed_bytes_differ, [("digest-mismatch", "cto")], at={("digest-mismatch", "cto"): "bad"}),
    "commit-authored-by-another-rater": Row(
        sealed_by_another_rater, [("unauthorized-author", "cto")], at={("unauthorized-author", "cto"): "bad"},
        says={("unauthorized-author", "cto"): ("logician@example.org",)}),
    "locked-plan-key-changed-after-first-seal": Row(
        plan_edit(scale="{min: 0, max: 4}"), [PLAN_CHANGED], at={PLAN_CHANGED: "change"},
        says={PLAN_CHANGED: ("scale.max: 3 → 4",)}),
    "plan-change-on-a-branch-merged-after-a-seal": Row(
        plan_edit_merged_after_a_seal, [PLAN_CHANGED], at={PLAN_CHANGED: "merge"},
        says={PLAN_CHANGED: ("markers: [FACT, HYP] → [FACT] (removed HYP)",)}),
    "unlocking-a-key-after-seal": Row(
        plan_edit(locked=UNLOCKED), [PLAN_CHANGED], at={PLAN_CHANGED: "change"},
        says={PLAN_CHANGED: ("removed from `locked`: markers",)}),
    "plan-broken-after-seal": Row(  # reported once, where it stopped being the frozen plan
        plan_broken_then_restored, [PLAN_CHANGED], at={PLAN_CHANGED: "change"},
        says={PLAN_CHANGED: ("no longer parses",)}),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_verify_violations(lab: Lab, name: str) -> None:
    row = ROWS[name]
    commits = row.story(lab)
    data = expect(lab, row.codes)
    for violation, commit in row.at.items():
        assert at(data, *violation)["commit"] == commits[commit], (violation, data["violations"])
    for violation, texts in row.says.items():
        message = at(data, *violation)["message"]
        for text in texts:
            assert text.format(**{k: v[:10] for k, v in commits.items()}) in message, message
    for violation, path in row.path.items():
        assert at(data, *violation)["path"] == path


def test_verify_violations_forced_reveal_is_reported_not_a_violation(lab: Lab) -> None:
    lab.start()
    lab.seal("cto")
    forced = lab.reveal("cto", message="reveal cto early\n\nAoven-Force: reveal (unsealed: logician)")
    lab.seal("logician")
    # logician sealed with cto's plaintext in the history: that is still a violation
    data = expect(lab, [VISIBLE_L])
    assert data["forced_reveals"] == [
        {"rater": "cto", "pass": "unblinded", "round": "main", "commit": forced, "unsealed": ["logician"]}]
