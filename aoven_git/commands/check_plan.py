"""`aoven-git check-plan`: load the plan (exit 2 if broken) and audit its coverage (exit 1)."""

from __future__ import annotations

import json

import click

from aoven_git.commands._common import Study, format_option, study_options
from aoven_git.coverage import audit


@click.command("check-plan")
@study_options
@format_option("text", "json")
def command(study: Study, fmt: str) -> int:
    """Audit the plan: each transition covered by exactly one dimension, every transition
    probed by some question, the unique probes, and any false unique-probe claim."""
    plan = study.plan
    cov = audit(plan)
    if fmt == "json":
        click.echo(json.dumps(cov.as_dict(), indent=2, sort_keys=True))
        return 0 if cov.ok else 1
    names = {t.id: t.name for t in plan.transitions}

    def label(t: int | str) -> str:
        return f"#{t} {names.get(int(t), '?')}"

    click.echo(
        f"{study.display(study.plan_file)}: {len(plan.transitions)} transitions, "
        f"{len(plan.dimensions)} dimensions, {len(plan.questions)} questions"
    )
    for t in cov.uncovered_transitions:
        click.echo(f"  error: {label(t)} is covered by no dimension")
    for t, dims in cov.multiply_covered.items():
        click.echo(f"  error: {label(t)} is covered by several dimensions: {', '.join(dims)}")
    for t in cov.unprobed_transitions:
        click.echo(f"  error: {label(t)} is probed by no question")
    for claim in cov.false_claims:
        click.echo(
            f"  error: false claim: {claim['question']} as the unique probe of "
            f"{label(claim['transition'])}: {claim['reason']}"
        )
    if cov.unique_probes:
        listed = ", ".join(
            f"{q} for #{t}" for t, q in sorted(cov.unique_probes.items(), key=lambda kv: int(kv[0]))
        )
        click.echo(f"  unique probes (removing the question leaves the transition unprobed): {listed}")
    for warning in cov.warnings:
        click.echo(f"  warning: {warning}")
    click.echo("ok" if cov.ok else "check-plan found problems")
    return 0 if cov.ok else 1
