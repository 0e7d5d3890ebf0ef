"""`aoven-git hook pre-commit` and `install-hook`, through real `git commit` runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aoven_git.commands.install_hook import HOOK_SCRIPT
from tests.conftest import ROOT, run_cli
from tests.sealing.conftest import PEOPLE, PLAN, Study, plan, score_text


def commit(study: Study, who: str, message: str, *paths: str) -> subprocess.CompletedProcess[str]:
    """A real `git commit` (hooks run), as `who`."""
    name, email = PEOPLE[who]
    env = {**os.environ, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
    if paths:
        subprocess.run(["git", "add", "-A", "--", *paths], cwd=study.path, check=True)
    return subprocess.run(["git", "commit", "-q", "-m", message], cwd=study.path, capture_output=True,
                          text=True, env=env, check=False)


@pytest.fixture
def hooked(study: Study) -> Study:
    study.start()
    assert run_cli("install-hook", cwd=study.path).code == 0
    return study


def test_shipped_script_is_what_install_hook_writes(hooked: Study) -> None:
    assert (ROOT / "hooks" / "pre-commit").read_text() == HOOK_SCRIPT
    assert os.access(ROOT / "hooks" / "pre-commit", os.X_OK)
    installed = hooked.path / ".git" / "hooks" / "pre-commit"
    assert installed.read_text() == HOOK_SCRIPT and os.access(installed, os.X_OK)


def test_install_hook_refuses_foreign_hook_without_force(study: Study) -> None:
    study.start()
    hook = study.path / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\necho mine\n")
    res = run_cli("install-hook", cwd=study.path)
    assert res.code == 2 and "not aoven-git's hook" in res.err
    assert hook.read_text() == "#!/bin/sh\necho mine\n"
    res = run_cli("install-hook", "--force", cwd=study.path)
    assert res.code == 0 and hook.read_text() == HOOK_SCRIPT
    assert run_cli("install-hook", cwd=study.path).code == 0  # idempotent


def test_install_hook_follows_core_hooks_path(study: Study) -> None:
    study.start()
    study.git("config", "core.hooksPath", "my-hooks")
    assert run_cli("install-hook", cwd=study.path).code == 0
    assert (study.path / "my-hooks" / "pre-commit").read_text() == HOOK_SCRIPT


def test_content_commit_refused_until_others_sealed_then_validated(hooked: Study) -> None:
    s = hooked
    s.write(s.score_path("cto"), score_text("cto"))
    proc = commit(s, "cto", "cto scores", s.score_path("cto"))
    assert proc.returncode == 1
    assert "unsealed-readers" in proc.stderr
    assert "required rater(s) logician have not sealed an overlapping pass in HEAD" in proc.stderr
    assert "Seal with a digest instead (`aoven-git seal --rater cto`" in proc.stderr
    s.git("reset", "-q")
    # once logician has sealed, cto may commit content, but only a valid file
    s.digest_seal("logician")
    bad_sum = score_text("cto").replace("| Q1 | B | 1 | 2 | 3 |", "| Q1 | B | 1 | 2 | 4 |")
    s.write(s.score_path("cto"), bad_sum)
    proc = commit(s, "cto", "cto scores", s.score_path("cto"))
    assert proc.returncode == 1 and "study/scores_cto.md:" in proc.stderr and "sum" in proc.stderr.lower()
    s.write(s.score_path("cto"), score_text("cto"))
    proc = commit(s, "cto", "cto scores", s.score_path("cto"))
    assert proc.returncode == 0, proc.stderr


def test_two_raters_in_one_commit_refused(hooked: Study) -> None:
    s = hooked
    s.write(s.score_path("cto"), score_text("cto"))
    s.write(s.score_path("logician"), score_text("logician"))
    proc = commit(s, "lead", "both", "study")
    assert proc.returncode == 1 and "sealed-together" in proc.stderr


def test_sealed_files_cannot_change_or_disappear(hooked: Study) -> None:
    s = hooked
    s.digest_seal("cto")
    s.digest_seal("logician")
    s.reveal("cto")
    s.write(s.score_path("cto"), score_text("cto", (0, 0)))
    proc = commit(s, "cto", "edit", s.score_path("cto"))
    assert proc.returncode == 1
    assert "modified-after-seal: sealed score file study/scores_cto.md" in proc.stderr
    s.git("reset", "-q", "--hard")
    s.git("rm", "-q", s.seal_path("logician"))
    proc = commit(s, "logician", "unseal")
    assert proc.returncode == 1
    assert "deleted-after-seal: seal file study/seals/scores_logician.sha256" in proc.stderr
    s.git("reset", "-q", "--hard")
    s.write(s.score_path("logician"), score_text("logician", (3, 3)))  # not what was sealed
    proc = commit(s, "logician", "reveal wrong bytes", s.score_path("logician"))
    assert proc.returncode == 1 and "digest-mismatch: revealed study/scores_logician.md" in proc.stderr


def test_locked_plan_frozen_after_first_seal(hooked: Study) -> None:
    s = hooked
    s.write("aoven.yaml", plan(markers="[FACT]"))
    assert commit(s, "lead", "before any seal: allowed", "aoven.yaml").returncode == 0
    s.digest_seal("cto")
    s.write("aoven.yaml", PLAN)
    proc = commit(s, "lead", "after a seal", "aoven.yaml")
    assert proc.returncode == 1 and "markers: [FACT] → [FACT, HYP] (added HYP)" in proc.stderr
    assert "git show" in proc.stderr  # how to restore it
    s.write("aoven.yaml", "# comment only\n" + plan(markers="[FACT]"))
    proc = commit(s, "lead", "comment", "aoven.yaml")
    assert proc.returncode == 0, proc.stderr


def test_unrelated_commit_passes_and_hook_needs_no_scipy(hooked: Study) -> None:
    s = hooked
    s.digest_seal("logician")  # makes cto's content commit legal
    s.write("README.md", "hello")
    s.write(s.score_path("cto"), score_text("cto"))
    s.git("add", "README.md", s.score_path("cto"))
    cto = {"GIT_AUTHOR_NAME": "CTO", "GIT_AUTHOR_EMAIL": "cto@example.org"}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "aoven_git", "hook", "pre-commit"],
                          cwd=s.path, capture_output=True, text=True, check=False, env={**os.environ, **cto})
    assert proc.returncode == 0, proc.stderr
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert "markdown_it" in imported  # the score file really was parsed
    assert "numpy" not in imported and "scipy" not in imported and "git" not in imported


def test_hook_outside_a_repository(tmp_path: Path) -> None:
    res = run_cli("hook", "pre-commit", cwd=tmp_path)
    assert res.code == 3


def test_install_hook_from_a_linked_worktree_installs_where_git_runs_it(study: Study, tmp_path: Path) -> None:
    """Linked work trees share the main repository's hooks; `.git/worktrees/<name>/hooks` is never run."""
    study.start()
    tree = tmp_path / "rater tree"
    study.git("worktree", "add", "-q", str(tree), "-b", "scores")
    assert run_cli("install-hook", cwd=tree).code == 0
    assert (study.path / ".git" / "hooks" / "pre-commit").read_text() == HOOK_SCRIPT
    (tree / "study" / "scores_cto.md").write_text(score_text("cto"))
    subprocess.run(["git", "add", "-A"], cwd=tree, check=True)
    name, email = PEOPLE["cto"]
    proc = subprocess.run(["git", "commit", "-q", "-m", "scores"], cwd=tree, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email},
                          check=False)
    assert proc.returncode != 0 and "required rater(s) logician have not sealed" in proc.stderr


def test_amending_the_commit_that_added_a_seal_says_how_to_redo_it(hooked: Study) -> None:
    hooked.digest_seal("cto")
    hooked.write(hooked.seal_path("cto"), "changed\n")
    res = commit(hooked, "cto", "reseal", hooked.seal_path("cto"))
    assert res.returncode != 0 and "git reset --soft HEAD~1" in res.stderr
    # once another commit follows, the seal is not HEAD's own: no such hint
    hooked.git("checkout", "-q", "HEAD", "--", hooked.seal_path("cto"))
    hooked.digest_seal("logician")
    hooked.write(hooked.seal_path("cto"), "changed\n")
    res = commit(hooked, "cto", "reseal", hooked.seal_path("cto"))
    assert res.returncode != 0 and "modified-after-seal" in res.stderr and "reset --soft" not in res.stderr


def test_reconciliation_rows_for_another_rater_are_a_warning(hooked: Study) -> None:
    """The hook lets a reconciliation row written for someone else through, but says it will be
    ignored: each rater commits their own row (unattributed-row)."""
    s = hooked
    s.digest_seal("cto", (1, 2)), s.digest_seal("logician", (2, 2))  # D1 differs: a consensus settles it
    for r in ("cto", "logician"):
        s.reveal(r)
    header = "| Cell | Rater | Justification | Consensus |\n|---|---|---|---|\n"
    s.write("study/reconciliation.md", header + '| Q1/A/D1 | logician | "x" | 1 |\n')
    proc = commit(s, "lead", "the lead writes logician's row", "study/reconciliation.md")
    assert proc.returncode == 0, proc.stderr
    assert ("warning: study/reconciliation.md:3: unattributed-row: the row of logician for Q1/A/D1 is being "
            "written by lead@example.org, not by logician: it will be ignored") in proc.stderr
    rows = '| Q1/A/D1 | logician | "x" | 1 |\n| Q1/A/D1 | cto | "y" | 1 |\n'
    s.write("study/reconciliation.md", header + rows)
    proc = commit(s, "cto", "cto's own row", "study/reconciliation.md")
    assert proc.returncode == 0 and "unattributed-row" not in proc.stderr, proc.stderr


def test_a_wrong_quote_on_a_flagged_cell_is_refused_though_the_commit_holds_no_score_file(
        hooked: Study) -> None:
    """cto scores D1 0, logician 3: every D1 cell is flagged. The reconciliation commit touches
    only the reconciliation file; the hook still reads the committed scores to know which cells are
    flagged, so a quote found in no response is an error there, as `validate` says."""
    s = hooked
    s.digest_seal("cto", (0, 2)), s.digest_seal("logician", (3, 2))
    s.reveal("cto"), s.reveal("logician")
    header = "| Cell | Rater | Justification | Consensus |\n|---|---|---|---|\n"
    s.write("study/reconciliation.md", header + '| Q1/A/D1 | cto | It says "No such words" | 1 |\n')
    proc = commit(s, "cto", "cto's row", "study/reconciliation.md")
    assert proc.returncode != 0 and "study/reconciliation.md:3: quote-not-found" in proc.stderr, proc.stderr
    s.write("study/reconciliation.md", header + '| Q1/A/D1 | cto | It says "Response A." | 1 |\n')
    proc = commit(s, "cto", "cto's row", "study/reconciliation.md")
    # accepted although the file is far from complete: the other rows come in later commits
    assert proc.returncode == 0, proc.stderr
    assert run_cli("validate", cwd=s.path).code == 1  # validate still says what is missing
