"""`aoven-git check-plan`: load the plan (exit 2 if broken) and audit it (exit 1 on errors).

What is audited, and the finding codes, are in `aoven_git/coverage.py` and docs/plan.md
("check-plan").
"""

from __future__ import annotations

import json

import click

from aoven_git.commands._common import Study, format_option, study_options
from aoven_git.coverage import Coverage, RoundCoverage, audit
from aoven_git.design_audit import summary_lines
from aoven_git.model import Finding, Plan

#: the design warnings, which name no transition or question: their line says where to look
LINED = frozenset({"bound-never-holds", "bound-always-holds", "row-never-taken", "unused-criterion",
                   "no-verdict"})


@click.command("check-plan")
@study_options
@format_option("text", "json")
def command(study: Study, fmt: str) -> int:
    """Audit the plan: each transition covered by exactly one dimension, every transition
    probed by some question of each round, the unique probes, false unique-probe claims, pass
    rules that no scores could meet, and criteria bounds that never or always hold."""
    plan = study.plan
    cov = audit(plan)
    if fmt == "json":
        click.echo(json.dumps(cov.as_dict(), indent=2, sort_keys=True))
    else:
        _print_text(study.display(study.plan_file), plan, cov)
    return 0 if cov.ok else 1


def _print_text(shown: str, plan: Plan, cov: Coverage) -> None:
    rounds = f", {len(plan.rounds)} rounds" if len(plan.rounds) > 1 else ""
    click.echo(
        f"{shown}: {len(plan.transitions)} transitions, {len(plan.dimensions)} dimensions, "
        f"{len(plan.questions)} questions{rounds}"
    )
    for line in summary_lines(cov.design):
        click.echo(line)
    _print_findings(cov.findings)
    for rnd in cov.rounds:
        _print_round(rnd)
    click.echo("ok" if cov.ok else "check-plan found problems")


def _print_findings(findings: tuple[Finding, ...]) -> None:
    for f in findings:
        prefix = "unreachable rule: " if f.code == "unreachable-rule" else ""
        line = f" (line {f.line})" if f.code in LINED and f.line else ""
        click.echo(f"  {f.severity}: {prefix}{f.message}{line}")


def _print_round(rnd: RoundCoverage) -> None:
    role = "verdict round" if rnd.verdict_round else "re-test round"
    click.echo(f"round {rnd.id} ({role}), {len(rnd.questions)} questions: {', '.join(rnd.questions)}")
    _print_findings(rnd.findings)
    if rnd.unique_probes:
        listed = ", ".join(
            f"{q} for #{t}" for t, q in sorted(rnd.unique_probes.items(), key=lambda kv: int(kv[0]))
        )
        click.echo(f"  unique probes (removing the question leaves the transition unprobed): {listed}")
