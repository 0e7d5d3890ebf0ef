"""The paper is faithful: stories told on paper (tests/adversarial/paper.py) give the history model
`read_history` reads from git, node for node, and the same verify-seal report.

A sample of stories, one per shape the paper imitates (a merge with the branch as first parent, an
octopus, a conflict resolved by hand, a fast-forward, `git rm` and `git mv`, a side branch whose net
effect is nil, a plan edit merged from a branch, commits that touch nothing tracked), is replayed
on a real repository here on every run; the whole catalogue is with `AOVEN_PAPER_SHADOW=1 python -m
pytest tests/adversarial tests/test_rules_pure_seal_rules.py`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aoven_git.history import git_blob_id
from tests.adversarial import test_backdated, test_duplicates, test_honest, test_plan_at_seal
from tests.adversarial.conftest import Lab, expect
from tests.adversarial.paper import PaperLab
from tests.test_rules_pure_seal_rules import ROWS

#: (story, its arguments besides the lab): each names the shape it covers
STORIES: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "merge-taking-a-side-then-fast-forward": (
        test_duplicates.test_parallel_reseal_with_another_digest_merged_in_either_order,
        {"first_parent": "branch"}),
    "git-mv": (test_duplicates.test_rename_of_a_sealed_score_file_to_an_alias, {}),
    "git-rm": (test_duplicates.test_stray_copy_added_and_deleted_before_other_rater_sealed, {}),
    "land-branch-first": (test_backdated.test_backdated_branch_digest_seal_after_reveal,
                          {"first_parent": "branch"}),
    "octopus": (test_honest.test_octopus_merge_of_three_seal_branches, {}),
    "side-branch-with-no-net-effect": (
        test_backdated.test_reveal_added_and_removed_on_a_side_branch_is_still_unordered, {}),
    "plan-edit": (test_plan_at_seal.test_rater_added_after_reveals, {}),
}


@pytest.mark.parametrize("name", list(STORIES))
def test_a_story_on_paper_reads_as_it_does_in_git(tmp_path: Path, name: str) -> None:
    """`PaperLab` with a shadow compares the history model and the report at every `verify`."""
    story, kwargs = STORIES[name]
    lab = PaperLab(tmp_path / "lab", Lab(tmp_path / "lab"))
    story(lab, **kwargs)
    assert lab.shas, "the story made no commit"


@pytest.mark.parametrize("name", ["plan-change-on-a-branch-merged-after-a-seal"])
def test_a_table_row_on_paper_reads_as_it_does_in_git(tmp_path: Path, name: str) -> None:
    lab = PaperLab(tmp_path / "lab", Lab(tmp_path / "lab"))
    ROWS[name].story(lab)
    expect(lab, ROWS[name].codes)


def test_commits_that_touch_nothing_tracked_are_left_out_as_git_log_leaves_them(tmp_path: Path) -> None:
    lab = PaperLab(tmp_path / "lab", Lab(tmp_path / "lab"))
    lab.start()
    lab.file("lead", "notes/outside.md", "not the study's\n")  # outside every pathspec
    lab.seal("cto")
    lab.put("lead", "an empty commit")
    lab.seal("logician")
    expect(lab, [])


@pytest.mark.parametrize("data", [b"", b"scores\n", "ü\r\n".encode(), bytes(range(256))])
def test_blob_ids_are_gits_own(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "f").write_bytes(data)
    proc = subprocess.run(["git", "hash-object", "--no-filters", str(tmp_path / "f")], capture_output=True,
                          text=True, check=True)
    assert git_blob_id(data) == proc.stdout.strip()


def test_a_story_that_needs_git_is_refused_on_paper(tmp_path: Path) -> None:
    lab = PaperLab(tmp_path / "lab")
    lab.start()
    with pytest.raises(AssertionError, match="PaperLab cannot show the hook"):
        lab.install_hook()
    with pytest.raises(AssertionError, match="PaperLab cannot show `git rebase"):
        lab.git("rebase", "main")
