"""`aoven-git install-hook`: install the pre-commit hook and record the Python that runs it
(docs/workflow.md, "The hook in every clone").

Hooks are not cloned, and the hook runs in whatever environment `git commit` has, which is often
not the virtual environment aoven-git lives in. So besides writing the generic hook script (the
same bytes as the repository's `hooks/pre-commit`) this records `sys.executable` of the running
CLI in the repository's own configuration (`git config aoven-git.python`), where the script looks
first. The path goes to the configuration, not into the script: with `core.hooksPath` pointing at
a tracked folder, the script is a committed file that must stay the same on every machine.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import click

from aoven_git.commands._common import PLAN_KEY, Study, study_options
from aoven_git.errors import CannotVerify, UsageError

MARKER = "aoven-git hook pre-commit"
#: the git configuration key the hook script reads first
PYTHON_KEY = "aoven-git.python"
#: the same script ships as hooks/pre-commit (usable with `git config core.hooksPath hooks`)
HOOK_SCRIPT = (Path(__file__).resolve().parent.parent / "templates" / "pre-commit-hook").read_text("utf-8")


def write_hook(target: Path, force: bool) -> str:
    """Write the script at `target`; say what happened: installed, updated or already installed.
    A hook that is not aoven-git's is replaced only with `force`."""
    if target.exists() or target.is_symlink():
        try:
            current = target.read_text("utf-8", "replace")
        except OSError:
            current = ""
        if current == HOOK_SCRIPT:
            return "already installed"
        if MARKER not in current and not force:
            raise UsageError(f"{target} already exists and is not aoven-git's hook; keep it and call "
                             f"`{MARKER}` from it, or replace it with --force")
        done = "updated"
    else:
        done = "installed"
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink():
        target.unlink()
    target.write_text(HOOK_SCRIPT, "utf-8")
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return done


def record_python(root: Path) -> tuple[str | None, str | None]:
    """Record the interpreter running this CLI for the hook; (recorded, previous value). The path
    is kept as the user's environment names it: resolving a virtual environment's `python`
    symlink would name the base interpreter, which lacks aoven-git."""
    from aoven_git import gitio

    previous = gitio.config_get(root, PYTHON_KEY, local=True) or None
    if not sys.executable:  # an embedded interpreter: nothing to record
        return None, previous
    python = os.path.abspath(sys.executable)
    if python != previous:
        gitio.config_set(root, PYTHON_KEY, python)
    return python, previous


def plan_to_record(study: Study) -> str | None:
    """The plan given with `--plan`, repository-relative, for the hook (which runs without
    options) to find; None for the default plan (`aoven.yaml` at the root), which needs no
    record. A missing file is refused before anything is written."""
    rel = study.relpath(study.plan_file)
    if rel == "aoven.yaml":
        return None
    if not study.plan_file.is_file():
        raise UsageError(f"--plan {rel}: no such file; the hook would find no plan to check")
    return rel


def record_plan(root: Path, rel: str) -> list[str]:
    """Record `rel` beside the plans recorded before: a repository with several studies (one plan
    and study folder each) has the hook check every one. Returns every recorded plan."""
    from aoven_git import gitio

    if rel not in gitio.config_values(root, PLAN_KEY):
        gitio.config_add(root, PLAN_KEY, rel)
    return gitio.config_values(root, PLAN_KEY)


@click.command("install-hook")
@study_options
@click.option("--force", is_flag=True, help="Replace an existing pre-commit hook that is not aoven-git's.")
def command(study: Study, force: bool) -> int:
    """Install the pre-commit hook (into core.hooksPath when it is set, else .git/hooks) and record
    this Python for it, so commits are checked without an active virtual environment. With --plan,
    record that plan for the hook too (once per study, for several studies). Run it in every clone:
    hooks are not cloned."""
    if not study.in_git:
        raise CannotVerify(f"{study.root} is not a git repository")
    from aoven_git import gitio

    plan = plan_to_record(study)
    target = gitio.hooks_dir(study.root) / "pre-commit"
    click.echo(f"{write_hook(target, force)} {target}")
    if plan is not None:
        plans = ", ".join(record_plan(study.root, plan))
        click.echo(f"the hook checks the plan {plan}, recorded as git config {PLAN_KEY} (every plan it "
                   f"checks: {plans})")
    python, previous = record_python(study.root)
    if python is None:
        click.echo("could not tell which Python runs aoven-git: the hook will look for `aoven-git` on "
                   "PATH, then `python3 -m aoven_git`")
        return 0
    was = f" (was {previous})" if previous and previous != python else ""
    click.echo(f"the hook runs aoven-git with {python}{was}, recorded as git config {PYTHON_KEY}; run "
               "`aoven-git install-hook` again from another environment to change it")
    return 0
