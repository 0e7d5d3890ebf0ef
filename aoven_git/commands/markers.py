"""`aoven-git markers [--round R]`: how often each plan marker is used in the treatment responses.

Refinement R5 of the Aoven plan drops markers used fewer than 2 times; this is the count it is
decided on. It reads the original (unstripped) treatment responses of one round, counts in the
response part only (the prompt's `[Aoven …]` line names markers too and must not count), and a
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
from aoven_git.markers import count_markers

RARE_BELOW = 2  # "used fewer than 2 times"


@click.command("markers")
@study_options
@click.option("--round", "round_id", default=None, help="Round to count (default: the plan's first round).")
@format_option("text", "json")
def command(study: Study, round_id: str | None, fmt: str) -> int:
    """Count each marker's uses in the treatment responses of a round and list the rarely used."""
    plan = study.plan
    rnd = chosen_round(plan, round_id)
    condition = plan.treatment.id
    counts: Counter[str] = Counter()
    read: list[str] = []
    missing: list[str] = []
    for q in rnd.questions:
        rel = f"{plan.study_dir}/{plan.response_path(condition, q)}"
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
            "condition": condition,
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
