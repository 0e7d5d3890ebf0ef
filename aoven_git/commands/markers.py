"""`aoven-git markers [--round R] [--condition C]`: how often each plan marker is used in the
treatment responses.

Refinement R5 of the Aoven plan drops markers used fewer than 2 times; this is the count it is
decided on. It reads the original (unstripped) responses of one round — of every treatment (the
conditions that are not the baseline), or of `--condition C` — every replicate of each, counts in
the response part only (the prompt's `[Aoven …]` line names markers too and must not count), and a
stacked token `[HYP, CONF(low)]` counts each marker in it once.

Exit codes: 0 every response of the round was read; 1 some are missing or unreadable (the counts
of the others are still shown, with the list of missing files: a count over part of the study
would understate use); 2 plan or usage error (unknown round).
"""

from __future__ import annotations

import json
from collections import Counter

import click

from aoven_git.commands._common import Study, chosen_round, format_option, study_options
from aoven_git.errors import UsageError
from aoven_git.markers import count_markers
from aoven_git.model import Plan

RARE_BELOW = 2  # "used fewer than 2 times"


def counted_conditions(plan: Plan, condition: str | None) -> tuple[str, ...]:
    """`--condition C` (any condition of the plan), else every treatment: the responses that
    carry markers."""
    if condition is None:
        return tuple(c.id for c in plan.treatments)
    if plan.condition(condition) is None:
        known = ", ".join(c.id for c in plan.conditions)
        raise UsageError(f"unknown condition {condition!r} (plan conditions: {known})")
    return (condition,)


def response_files(plan: Plan, questions: tuple[str, ...], conditions: tuple[str, ...]) -> list[str]:
    """The response files counted, repository-relative: question, then condition, then replicate."""
    return [f"{plan.study_dir}/{plan.response_path(c, q, replicate=r)}"
            for q in questions for c in conditions for r in plan.replicate_ids]


@click.command("markers")
@study_options
@click.option("--round", "round_id", default=None, help="Round to count (default: the plan's first round).")
@click.option("--condition", "condition_id", default=None,
              help="Count this condition's responses (default: every treatment).")
@format_option("text", "json")
def command(study: Study, round_id: str | None, condition_id: str | None, fmt: str) -> int:
    """Count each marker's uses in the treatment responses of a round and list the rarely used."""
    plan = study.plan
    rnd = chosen_round(plan, round_id)
    conditions = counted_conditions(plan, condition_id)
    condition = ", ".join(conditions)
    counts: Counter[str] = Counter()
    read: list[str] = []
    missing: list[str] = []
    for rel in response_files(plan, rnd.questions, conditions):
        try:
            text = (study.root / rel).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            missing.append(rel)
            continue
        counts.update(count_markers(text, plan.markers))
        read.append(rel)
    table = {m: counts.get(m, 0) for m in plan.markers}
    rare = [m for m in plan.markers if table[m] < RARE_BELOW]
    code = 1 if missing else 0
    if fmt == "json":
        doc = {
            "round": rnd.id,
            "condition": conditions[0] if len(conditions) == 1 else None,
            "conditions": list(conditions),
            "files": read,
            "missing": missing,
            "counts": table,
            "rarely_used": rare,
        }
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return code
    click.echo(f"markers in {len(read)} {condition} response(s) of round {rnd.id}:")
    width = max((len(m) for m in plan.markers), default=0)
    order = {m: k for k, m in enumerate(plan.markers)}
    for m in sorted(table, key=lambda m: (-table[m], order[m])):
        click.echo(f"  {m:<{width}}  {table[m]}")
    click.echo(f"used fewer than {RARE_BELOW} times: {', '.join(rare) if rare else 'none'}")
    for rel in missing:
        click.echo(f"error: {rel}: response missing or not UTF-8; not counted", err=True)
    return code
