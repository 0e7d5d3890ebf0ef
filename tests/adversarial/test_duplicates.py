"""Class 2, two seals or two files for one sheet, and copies of scores anywhere.

A sheet (rater, pass, round) has one seal point and one path: a second seal point with other
bytes is `resealed`, a second accepted name is `duplicate-sheet`. Any other tracked copy of a
rater's scores is a leak, `stray-scores` at the commit adding it, and counts as that rater's
plaintext for the ordering rules."""

from __future__ import annotations

import pytest

from tests.adversarial.conftest import Lab, at, expect, sheet_text
from tests.adversarial.paper import paper_lab

#: the stories of this module test the sealing rules, not git: they run on paper
#: (tests/adversarial/paper.py); those marked `git` build a real repository
lab = paper_lab

ORDERS = ["main", "branch"]


@pytest.mark.parametrize("first_parent", ORDERS)
def test_parallel_reseal_with_another_digest_merged_in_either_order(lab: Lab, first_parent: str) -> None:
    """cto seals twice on two branches (two candidate score sets) and keeps one at the merge."""
    lab.start()
    seal_log = lab.seal("logician")
    lab.branch("again", seal_log)
    second = lab.seal("cto", (0, 0), nonce="second-thoughts")
    lab.checkout("main")
    first = lab.seal("cto", (1, 2))
    if first_parent == "main":
        lab.merge_taking("again", take=first)
    else:
        lab.checkout("again")
        lab.merge_taking("main", take=first)
        lab.checkout("main")
        lab.git("merge", "-q", "--ff-only", "again")
    assert lab.unordered(first, second)
    data = expect(lab, [("resealed", "cto")])
    assert at(data, "resealed", "cto")["commit"] in {first, second}


def test_parallel_reseal_under_an_alias_name(lab: Lab) -> None:
    """The second seal avoids the merge conflict by using an alias seal name."""
    lab.start()
    seal_log = lab.seal("logician")
    lab.branch("again", seal_log)
    lab.seal("cto", (0, 0), nonce="second", path="study/seals/scores_cto_main.sha256")
    lab.checkout("main")
    lab.seal("cto")
    lab.land("again")
    expect(lab, [("duplicate-sheet", "cto"), ("resealed", "cto")])


@pytest.mark.parametrize("alias", ["scores_cto_unblinded.md", "scores_cto_main.md",
                                   "scores_cto_main_unblinded.md"])
def test_alias_score_file_with_different_scores(lab: Lab, alias: str) -> None:
    lab.start()
    lab.seal("logician")
    lab.content("cto", (1, 2))
    lab.reveal("logician")
    bad = lab.content("cto", (0, 0), path=f"study/{alias}")
    data = expect(lab, [("duplicate-sheet", "cto")])
    v = at(data, "duplicate-sheet", "cto")
    assert v["commit"] == bad and alias in v["message"]


def test_alias_seal_file_after_the_seal(lab: Lab) -> None:
    lab.start()
    lab.seal("cto", (1, 2))
    lab.seal("logician")
    text = sheet_text("cto", (0, 0), nonce="other")
    bad = lab.file("cto", "study/seals/scores_cto_main.sha256", lab.seal_bytes("cto", text))
    data = expect(lab, [("duplicate-sheet", "cto")])
    assert at(data, "duplicate-sheet", "cto")["commit"] == bad


def test_rename_of_a_sealed_score_file_to_an_alias(lab: Lab) -> None:
    """Renames count as delete + add: the sealed path disappears and a second path appears."""
    lab.start()
    lab.seal("logician")
    lab.content("cto")
    lab.git("mv", "study/scores_cto.md", "study/scores_cto_main.md")
    moved = lab.put("cto", "rename my scores")
    data = expect(lab, [("deleted-after-seal", "cto"), ("duplicate-sheet", "cto")])
    assert {v["commit"] for v in data["violations"]} == {moved}


STRAY_PATHS = ["study/sub/scores_cto.md", "study/old/scores_cto.md", "Study/scores_cto.md",
               "Tests/Phase2/scores_cto.md", "study/scores_cto.md.txt", "docs/scores_cto.txt",
               "SCORES_CTO.MD"]


@pytest.mark.parametrize("path", STRAY_PATHS)
def test_stray_copy_anywhere_in_the_repository(lab: Lab, path: str) -> None:
    """After everyone revealed, a copy of cto's scores is still a leak of its own."""
    lab.start()
    for r in ("cto", "logician"):
        lab.seal(r)
    for r in ("cto", "logician"):
        lab.reveal(r)
    bad = lab.file("cto", path, lab.texts[("cto", "unblinded")], "keep a copy")
    data = expect(lab, [("stray-scores", "cto")])
    assert at(data, "stray-scores", "cto")["commit"] == bad


@pytest.mark.parametrize("path", ["docs/scores_cto.txt", "Study/scores_cto.md", "study/sub/scores_cto.md",
                                  "study/scores_cto.md.txt"])
def test_stray_copy_leaked_before_other_rater_sealed(lab: Lab, path: str) -> None:
    lab.start()
    lab.seal("cto")
    leak = lab.file("cto", path, lab.texts[("cto", "unblinded")], "my working copy")
    bad = lab.seal("logician")
    data = expect(lab, [("stray-scores", "cto"), ("visible-at-seal", "logician")])
    assert at(data, "stray-scores", "cto")["commit"] == leak
    v = at(data, "visible-at-seal", "logician")
    assert v["commit"] == bad and path in v["message"]


def test_stray_copy_added_and_deleted_before_other_rater_sealed(lab: Lab) -> None:
    """Deleting the copy again does not make it unread."""
    lab.start()
    lab.seal("cto")
    leak = lab.file("cto", "docs/scores_cto.txt", lab.texts[("cto", "unblinded")], "copy")
    lab.git("rm", "-q", "docs/scores_cto.txt")
    lab.put("cto", "oops")
    bad = lab.seal("logician")
    data = expect(lab, [("stray-scores", "cto"), ("visible-at-seal", "logician")])
    assert at(data, "stray-scores", "cto")["commit"] == leak
    assert at(data, "visible-at-seal", "logician")["commit"] == bad


def test_score_table_pasted_into_notes_with_front_matter(lab: Lab) -> None:
    """No `scores_` in the name: the table itself and its front matter make it cto's scores."""
    lab.start()
    lab.seal("cto")
    notes = ("---\nrater: cto\n---\n\n# Working notes\n\nSome thoughts first.\n\n"
             + sheet_text("cto", front_matter=False))
    leak = lab.file("cto", "study/notes.md", notes, "notes")
    bad = lab.seal("logician")
    data = expect(lab, [("stray-scores", "cto"), ("visible-at-seal", "logician")])
    assert at(data, "stray-scores", "cto")["commit"] == leak
    assert at(data, "visible-at-seal", "logician")["commit"] == bad


@pytest.mark.parametrize(("path", "content"), [
    ("study/archive/old_table.md", sheet_text("cto", front_matter=False).replace("Scores of cto", "Old")),
    ("study/exports/final.csv", "question,condition,D1,D2\nQ1,A,1,2\n"),
], ids=["table-in-study-dir", "csv-in-study-dir"])
def test_stray_copy_with_unknown_owner(lab: Lab, path: str, content: str) -> None:
    lab.start()
    for r in ("cto", "logician"):
        lab.seal(r)
    bad = lab.file("lead", path, content, "an old table")
    data = expect(lab, [("stray-scores", None)])
    assert at(data, "stray-scores", None)["commit"] == bad


def test_stray_copy_on_a_side_branch_is_plaintext_for_order(lab: Lab) -> None:
    """A copy outside the study dir, on a branch logician's seal does not descend from."""
    lab.start()
    seal_cto = lab.seal("cto")
    lab.branch("side", seal_cto)
    leak = lab.file("cto", "docs/scores_cto.txt", lab.texts[("cto", "unblinded")], "copy")
    lab.checkout("main")
    seal_log = lab.seal("logician")
    lab.land("side")
    data = expect(lab, [("stray-scores", "cto"), ("unproven-order", "logician")])
    v = at(data, "unproven-order", "logician")
    assert v["commit"] == seal_log and v["message"] and leak[:7] in v["message"]
