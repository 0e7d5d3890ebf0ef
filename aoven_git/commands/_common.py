"""What every command shares: `--repo`/`--plan` options and the lazily loaded study context."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import click

from aoven_git.errors import UsageError
from aoven_git.model import Pass, Plan, Round

F = TypeVar("F", bound=Callable[..., Any])

#: the plans the pre-commit hook checks, one value each (`install-hook --plan`); none recorded:
#: `aoven.yaml` at the repository root
PLAN_KEY = "aoven-git.plan"


@dataclass
class Study:
    """Where the study is. `root` is the repository work tree (or the given directory when it is
    not a git repository: validate and report work on plain folders too)."""

    root: Path
    plan_file: Path
    in_git: bool
    _plan: Plan | None = field(default=None, repr=False)

    @cached_property
    def plan(self) -> Plan:
        from aoven_git.plan import load_plan

        shown = self.display(self.plan_file)
        return load_plan(self.plan_file, display=shown)

    @property
    def study_dir(self) -> Path:
        return self.root / self.plan.study_dir

    def display(self, path: Path | str) -> str:
        """Paths in messages are relative to the repository root when they are inside it."""
        p = Path(path)
        try:
            return p.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(path)

    def relpath(self, path: Path | str) -> str:
        """Repository-relative posix path; refuses paths outside the repository."""
        p = Path(path)
        full = p if p.is_absolute() else Path.cwd() / p
        try:
            return full.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            raise UsageError(f"{path} is outside the repository {self.root}") from None


def chosen_pass(plan: Plan, pass_id: str | None) -> Pass:
    """`--pass`, defaulting to the primary pass; an unknown id is a usage error naming the passes."""
    p = plan.pass_(pass_id) if pass_id else plan.primary_pass
    if p is None:
        raise UsageError(f"unknown pass {pass_id!r} (plan passes: {', '.join(x.id for x in plan.passes)})")
    return p


def chosen_round(plan: Plan, round_id: str | None) -> Round:
    """`--round`, defaulting to the plan's first round; an unknown id is a usage error."""
    rnd = plan.round_(round_id) if round_id else plan.main_round
    if rnd is None:
        raise UsageError(f"unknown round {round_id!r} (plan rounds: {', '.join(r.id for r in plan.rounds)})")
    return rnd


def chosen_scope(plan: Plan, pass_id: str | None, round_id: str | None,
                 amendment: str | None) -> tuple[Pass, Round]:
    """`--pass`/`--round` within `--amendment` when given: the pass defaults to the primary one if
    the amendment re-scores it, else to its first pass; an amendment, or a pass it does not
    re-score, the plan does not know is a usage error naming what it knows."""
    if amendment is None:
        return chosen_pass(plan, pass_id), chosen_round(plan, round_id)
    a = plan.amendment(amendment)
    if a is None:
        known = ", ".join(x.id for x in plan.amendments) or "none yet: append one to `amendments:`"
        raise UsageError(f"unknown amendment {amendment!r} (plan amendments: {known})")
    p = chosen_pass(plan, pass_id or (plan.primary_pass.id if plan.primary_pass.id in a.passes
                                      else a.passes[0]))
    if p.id not in a.passes:
        raise UsageError(f"amendment {a.id} does not re-score pass {p.id} "
                         f"(it re-scores {', '.join(a.passes)})")
    return p, chosen_round(plan, round_id)


def resolve_study(repo: str | None, plan: str | None) -> Study:
    from aoven_git import gitio

    if repo is not None:
        start = Path(repo)
        if not start.is_dir():
            raise UsageError(f"--repo {repo}: no such directory")
    else:
        start = Path.cwd()
    root = gitio.find_root(start)
    in_git = root is not None
    if root is None:
        root = start.resolve()
    plan_file = Path(plan) if plan else root / "aoven.yaml"
    if plan and not plan_file.is_absolute():
        # --plan is taken relative to the current directory, as users type it
        plan_file = (Path.cwd() / plan_file).resolve()
    return Study(root=root, plan_file=plan_file, in_git=in_git)


def study_options(func: F) -> F:
    """Add --repo and --plan and pass a `study: Study` argument instead.

    Apply it directly under `@click.command`, above the command's own options: `functools.wraps`
    carries their click parameters over to the wrapper.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, repo: str | None, plan: str | None, **kwargs: Any) -> Any:
        obj = click.get_current_context().find_root().obj or {}
        study = resolve_study(repo or obj.get("repo"), plan or obj.get("plan"))
        return func(*args, study=study, **kwargs)

    wrapper = click.option(
        "--plan",
        "plan",
        type=click.Path(dir_okay=False),
        default=None,
        help="Plan file. Default: aoven.yaml at the repository root.",
    )(wrapper)
    wrapper = click.option(
        "--repo",
        "repo",
        type=click.Path(file_okay=False),
        default=None,
        help="Repository (or folder) of the study. Default: the current repository.",
    )(wrapper)
    return wrapper  # type: ignore[return-value]


def format_option(*choices: str, default: str = "text") -> Callable[[F], F]:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default=default,
        show_default=True,
        help="Output format.",
    )
