"""Review: the pre-commit hook's two-node view (found by reading history.staged_history and
commands/hook.py).

The hook judges the staged index as ONE commit on top of HEAD's tree. That view has three blind
spots the catalogue does not cover:

* a merge concluded with `git commit` (after a conflict) has a second parent the hook never
  looks at, so everything the merged branch brings is judged as made by whoever concludes the
  merge: honest merges are refused;
* with no plan in the index the hook checks nothing at all (`hook._plans` returns None), so
  `git rm --cached aoven.yaml` lets any change through without `--no-verify`;
* `gitio.tree_entries` drops gitlinks but `gitio.index_entries` keeps them, so a submodule named
  `scores_*` looks newly added in EVERY later commit: every commit is refused.

And the hook judges the plan found at HEAD's first seal under the *staged* plan: a study_dir move
hides every earlier seal (see also test_attacks_plan_judge.py).
"""

from __future__ import annotations

import subprocess

import pytest

from tests.adversarial.conftest import Lab, expect, refused, sheet_text
from tests.sealing.conftest import plan


def conflicted_merge(lab: Lab, bring: str) -> subprocess.CompletedProcess[str]:
    """logician works on a branch (`bring`: their seal, or their reveal), the lead and logician
    both edit README.md, and the lead concludes the conflicted merge with a plain `git commit`."""
    lab.start()
    lab.install_hook()
    lab.file("lead", "README.md", "study notes\n")
    if bring == "reveal":
        lab.seal("cto")
        lab.seal("logician")
    lab.branch("logician-work")
    lab.file("logician", "README.md", "logician's notes\n", no_verify=True)
    lab.seal("logician") if bring == "seal" else lab.reveal("logician")
    lab.checkout("main")
    lab.file("lead", "README.md", "lead's notes\n")
    if bring == "seal":
        lab.seal("cto")
    merge = subprocess.run(["git", "merge", "--no-ff", "--no-edit", "logician-work"], cwd=lab.path,
                           capture_output=True, text=True, check=False)
    assert merge.returncode != 0 and "CONFLICT" in merge.stdout, merge.stdout
    lab.write("README.md", "both notes\n")
    return lab.git_commit("lead", "merge logician's work", "README.md")


@pytest.mark.parametrize("bring", ["seal", "reveal"])
def test_hook_allows_concluding_a_conflicted_merge_of_a_raters_branch(lab: Lab, bring: str) -> None:
    """HONEST: the merge adds nothing of its own to logician's files, yet the hook refuses it as
    `unauthorized-author` (logician's file "changed by lead"): only `--no-verify` gets the lead
    past it. verify-seal on the resulting history is clean."""
    proc = conflicted_merge(lab, bring)
    assert proc.returncode == 0, proc.stderr
    assert len(lab.git("rev-list", "--parents", "-n1", "HEAD").split()) == 3
    expect(lab, [])


def test_hook_refuses_a_commit_that_unstages_the_plan(lab: Lab) -> None:
    """cto changes his revealed scores and takes the plan out of the index in the same commit: the
    hook finds "no plan in the index: not a study repository (yet)" and allows everything."""
    lab.start()
    lab.install_hook()
    lab.seal("cto")
    lab.seal("logician")
    lab.reveal("cto")
    lab.write(lab.score_path("cto"), sheet_text("cto", (0, 0)))
    lab.git("add", lab.score_path("cto"))
    lab.git("rm", "-q", "--cached", "aoven.yaml")
    proc = lab.git_commit("cto", "better scores")
    refused(proc, "modified-after-seal")
    assert "plan-changed-after-seal" in proc.stderr


def test_hook_allows_unrelated_commits_after_a_submodule_named_scores(lab: Lab) -> None:
    """HONEST: a tools submodule happens to be named `scores_pipeline`. Whatever one thinks of the
    submodule itself (committed here with --no-verify), a later commit that only edits README.md
    is refused as `stray-scores` for `tools/scores_pipeline`, and so is every commit after it."""
    lab.start()
    tools = Lab(lab.path.parent / "tools")
    tools.file("lead", "run.sh", "echo scores\n")
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{tools.head()},tools/scores_pipeline")
    lab.git("commit", "-q", "--no-verify", "-m", "add the scoring tools", author=("Lead", "lead@example.org"))
    lab.install_hook()
    lab.write("README.md", "how to run the study\n")
    proc = lab.git_commit("lead", "readme", "README.md")
    assert proc.returncode == 0, proc.stderr


def test_hook_refuses_moving_the_study_dir_after_the_first_seal(lab: Lab) -> None:
    """`study_dir` is locked. cto, the only rater who has sealed, moves the study: under the staged
    plan HEAD's seal is a stray and the staged one looks like the first seal, whose plan is the
    staged plan itself, so nothing is "changed after the first seal"; cto authors his own moved
    seal, so nothing else fires either. The commit is accepted."""
    lab.start()
    lab.install_hook()
    lab.seal("cto")
    lab.git("mv", "study", "phase2")
    lab.write("aoven.yaml", plan(study_dir="phase2"))
    lab.git("add", "aoven.yaml")
    proc = lab.git_commit("cto", "shorter paths")
    refused(proc, "plan-changed-after-seal")
