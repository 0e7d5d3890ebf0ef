"""`aoven-git init`: write the Aoven v0.1 plan and the files a study repository needs.

It never overwrites: if any target exists, nothing at all is written (exit 2) unless --force,
so a half-initialised repository cannot happen.
"""

from __future__ import annotations

from pathlib import Path

import click

from aoven_git.commands._common import Study, study_options
from aoven_git.errors import UsageError
from aoven_git.schemas import SCHEMA_DIR

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def planned_files(study: Study) -> list[tuple[Path, Path]]:
    """(source template, destination) pairs, in the order they are written."""
    root = study.root
    pairs = [
        (TEMPLATES / "aoven.yaml", study.plan_file),
        (SCHEMA_DIR / "plan.schema.json", root / ".aoven" / "plan.schema.json"),
        (TEMPLATES / "study" / "README.md", root / "tests" / "phase2" / "README.md"),
        (TEMPLATES / "pre-commit-config.yaml", root / ".pre-commit-config.yaml"),
    ]
    for name, dest in (
        ("study-workflow.yml", ".github/workflows/aoven-study.yml"),
        ("action.yml", ".github/actions/aoven/action.yml"),
    ):
        if (TEMPLATES / name).exists():
            pairs.append((TEMPLATES / name, root / dest))
    return pairs


@click.command("init")
@study_options
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
def command(study: Study, force: bool) -> int:
    """Write aoven.yaml (Aoven v0.1, with comments), the study dir, a pre-commit config and the
    study workflow. Refuses to overwrite any existing file without --force."""
    pairs = planned_files(study)
    existing = [dest for _, dest in pairs if dest.exists() or dest.is_symlink()]
    if existing and not force:
        listed = "\n  ".join(study.display(p) for p in existing)
        raise UsageError(
            f"refusing to overwrite existing files (nothing was written):\n  {listed}\n"
            "Move them aside, or rerun with --force to overwrite them."
        )
    for _, dest in pairs:
        if dest.is_dir():
            raise UsageError(f"{study.display(dest)} is a directory")
    for source, dest in pairs:
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.is_symlink():
            dest.unlink()
        dest.write_bytes(source.read_bytes())
        click.echo(f"wrote {study.display(dest)}")
    click.echo(
        "\nNext steps:\n"
        "  1. edit aoven.yaml (raters, emails, hold-out questions) and check it: aoven-git check-plan\n"
        "  2. add the responses under tests/phase2/test_a/ and test_b/, then: aoven-git strip-markers\n"
        "  3. commit the plan and responses before anyone scores (the plan is locked at the first seal)\n"
        "  4. each rater: aoven-git sheet --rater <id> -o tests/phase2/scores_<id>.md, fill it in,\n"
        "     aoven-git seal --rater <id>; once all have sealed: aoven-git reveal --rater <id>"
        + ("" if study.in_git else "\n  (this folder is not a git repository yet: run `git init` first)")
    )
    return 0
