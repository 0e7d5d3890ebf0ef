"""`aoven-git install-hook`: install the pre-commit hook script (SPEC §5.3)."""

from __future__ import annotations

import stat

import click

from aoven_git.commands._common import Study, study_options
from aoven_git.errors import CannotVerify, UsageError

MARKER = "aoven-git hook pre-commit"

#: the same script ships as hooks/pre-commit (usable with `git config core.hooksPath hooks`)
HOOK_SCRIPT = """\
#!/bin/sh
# aoven-git pre-commit hook: checks the staged index (validation, seals, locked plan).
# Installed by `aoven-git install-hook`; see `aoven-git hook pre-commit --help`.
if command -v aoven-git >/dev/null 2>&1; then
    exec aoven-git hook pre-commit
fi
exec python3 -m aoven_git hook pre-commit
"""


@click.command("install-hook")
@study_options
@click.option("--force", is_flag=True, help="Replace an existing pre-commit hook that is not aoven-git's.")
def command(study: Study, force: bool) -> int:
    """Install the pre-commit hook (into core.hooksPath when it is set, else .git/hooks)."""
    if not study.in_git:
        raise CannotVerify(f"{study.root} is not a git repository")
    from aoven_git import gitio

    target = gitio.hooks_dir(study.root) / "pre-commit"
    if target.exists() or target.is_symlink():
        try:
            current = target.read_text("utf-8", "replace")
        except OSError:
            current = ""
        if current == HOOK_SCRIPT:
            click.echo(f"{target} is already installed")
            return 0
        if MARKER not in current and not force:
            raise UsageError(f"{target} already exists and is not aoven-git's hook; keep it and call "
                             f"`{MARKER}` from it, or replace it with --force")
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink():
        target.unlink()
    target.write_text(HOOK_SCRIPT, "utf-8")
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    click.echo(f"installed {target}")
    return 0
