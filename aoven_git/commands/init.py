"""`aoven-git init`: write the Aoven v0.1 plan and the files a study repository needs.

It never overwrites: if any target exists, nothing at all is written (exit 2) unless --force,
so a half-initialised repository cannot happen.

Most templates are copied byte for byte. A few carry `@NAME@` placeholders filled in here (see
`placeholders`): the aoven-git version the study workflow installs, and the plan and study folder
paths `.gitattributes` marks `-text`. The plan itself is never rendered: it is written exactly as
shipped, comments included.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from aoven_git import __version__
from aoven_git.commands._common import Study, study_options
from aoven_git.errors import UsageError
from aoven_git.model import Plan
from aoven_git.plan import DESIGN_TEMPLATES
from aoven_git.schemas import SCHEMA_DIR

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
PLAN_TEMPLATE = TEMPLATES / "aoven.yaml"
DESIGNS = DESIGN_TEMPLATES
#: templates whose text has `@NAME@` placeholders
RENDERED = frozenset({"gitattributes", "study-workflow.yml"})
PLACEHOLDER = re.compile(r"@([A-Z_]+)@")


def _template_plan(template: Path = PLAN_TEMPLATE) -> Plan:
    from aoven_git.plan import load_plan

    return load_plan(template)


def _study_dir(template: Path = PLAN_TEMPLATE) -> str:
    """The study folder of the plan init writes (read from the template, never hard-coded)."""
    return _template_plan(template).study_dir.strip("/")


def planned_files(study: Study, template: Path = PLAN_TEMPLATE) -> list[tuple[Path, Path]]:
    """(source template, destination) pairs, in the order they are written."""
    root = study.root
    study_dir = root / _study_dir(template)
    return [
        (template, study.plan_file),
        (SCHEMA_DIR / "plan.schema.json", root / ".aoven" / "plan.schema.json"),
        (TEMPLATES / "gitattributes", root / ".gitattributes"),
        (TEMPLATES / "study" / "README.md", study_dir / "README.md"),
        (TEMPLATES / "study" / "RESPONSE_TEMPLATE.md", study_dir / "RESPONSE_TEMPLATE.md"),
        (TEMPLATES / "pre-commit-config.yaml", root / ".pre-commit-config.yaml"),
        (TEMPLATES / "study-workflow.yml", root / ".github" / "workflows" / "aoven-study.yml"),
        (TEMPLATES / "action.yml", root / ".github" / "actions" / "aoven" / "action.yml"),
    ]


def _attribute_pattern(path: str) -> str:
    """A .gitattributes pattern anchored at the repository root; C-quoted when it has a space, a
    quote or a backslash (git reads such patterns quoted)."""
    pattern = "/" + path
    if any(c in pattern for c in ' \t"\\'):
        escaped = pattern.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
        return f'"{escaped}"'
    return pattern


def placeholders(study: Study, template: Path = PLAN_TEMPLATE) -> dict[str, str]:
    """The values of the `@NAME@` placeholders of the rendered templates."""
    try:
        plan = study.plan_file.resolve().relative_to(study.root.resolve()).as_posix()
        plan_line = f"{_attribute_pattern(plan)} -text"
    except ValueError:  # --plan outside the repository: nothing here to mark
        plan_line = f"# the plan ({study.plan_file}) is outside this repository"
    return {
        "AOVEN_GIT_VERSION": __version__,
        "PLAN_ATTRIBUTES": plan_line,
        "STUDY_ATTRIBUTES": f"{_attribute_pattern(_study_dir(template) + '/**')} -text",
    }


def render(source: Path, values: dict[str, str]) -> bytes:
    """The bytes to write for `source`: placeholders filled in for the rendered templates."""
    data = source.read_bytes()
    if source.name not in RENDERED:
        return data
    text = data.decode("utf-8")
    missing = sorted({m.group(1) for m in PLACEHOLDER.finditer(text)} - set(values))
    if missing:  # a template and this table out of step: a bug, never the user's input
        raise AssertionError(f"{source.name}: no value for {', '.join(missing)}")
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], text).encode("utf-8")


def next_steps(study: Study, template: Path = PLAN_TEMPLATE) -> str:
    """What to do after init, in the order a team does it (docs/workflow.md of aoven-git)."""
    plan = _template_plan(template)
    d = plan.study_dir.strip("/")
    first = plan.questions[0].id
    rep = plan.replicate_ids[0]
    a, b = (plan.response_path(c.id, first, replicate=rep) for c in (plan.baseline, plan.treatments[0]))
    steps = (
        "\nNext steps (the team workflow: docs/workflow.md of aoven-git):\n"
        "  1. lead: edit aoven.yaml (raters and their e-mails, question texts), then: aoven-git check-plan\n"
        f"  2. lead: add the responses ({d}/{a}, {d}/{b}, …; layout:\n"
        f"     {d}/RESPONSE_TEMPLATE.md), then: aoven-git strip-markers\n"
        "  3. lead: commit all of it, push, and protect main (changes by pull request only, CI required);\n"
        "     the first seal freezes the plan\n"
        "  4. everyone, in every clone: aoven-git install-hook (hooks are not cloned)\n"
        "  5. each rater, on a branch: aoven-git sheet --rater <id> [--pass <pass>] -o <file>, fill it in,\n"
        "     aoven-git validate, then aoven-git seal --rater <id> --pass <pass> for EVERY pass;\n"
        "     push the branch and open a pull request (only the digests are committed)\n"
        "  6. once every required rater's seals of every pass are merged: git pull, then\n"
        "     aoven-git reveal --rater <id> --pass <pass> for each pass; pull request\n"
        "  7. flagged cells: aoven-git disagreements --write; each rater commits their own rows\n"
        "  8. CI runs validate, verify-seal and report on every pull request"
    )
    if not study.in_git:
        steps += "\n  (this folder is not a git repository yet: run `git init` first)"
    return steps


@click.command("init")
@study_options
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
@click.option("--design", type=click.Choice(list(DESIGNS)), default="seed", show_default=True,
              help="The plan to start from: seed (Aoven v0.1, one A/B), arms (four arms and a decision "
                   "table) or probes (labels, replicates, pass rates).")
def command(study: Study, force: bool, design: str) -> int:
    """Write aoven.yaml (with comments: Aoven v0.1, or the shape --design names), .gitattributes,
    the study dir (README and a response template), a pre-commit config and the study workflow.
    Refuses to overwrite any existing file without --force."""
    template = DESIGNS[design]
    pairs = planned_files(study, template)
    existing = [dest for _, dest in pairs if dest.exists() or dest.is_symlink()]
    if existing and not force:
        listed = "\n  ".join(study.display(p) for p in existing)
        raise UsageError(
            f"refusing to overwrite existing files (nothing was written):\n  {listed}\n"
            "Move them aside (and merge your own lines back afterwards), or rerun with --force to "
            "overwrite them."
        )
    for _, dest in pairs:
        if dest.is_dir():
            raise UsageError(f"{study.display(dest)} is a directory")
    values = placeholders(study, template)
    contents = [(dest, render(source, values)) for source, dest in pairs]
    for dest, data in contents:
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.is_symlink():
            dest.unlink()
        dest.write_bytes(data)
        click.echo(f"wrote {study.display(dest)}")
    click.echo(next_steps(study, template))
    return 0
