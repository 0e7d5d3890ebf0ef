"""`aoven-git sheet --rater R [--pass P] [--round N] [--layout wide|long] [-o FILE]`.

A blank score file with front matter and one empty score per cell of the pass: `validate`
rejects it (missing cells) until every score is filled in, so a rater cannot forget a cell.
"""

from __future__ import annotations

from pathlib import Path

import click

from aoven_git.commands._common import Study, study_options
from aoven_git.errors import UsageError
from aoven_git.model import Plan, SheetId


def _known(kind: str, value: str, ids: list[str]) -> UsageError:
    return UsageError(f"unknown {kind} {value!r}; the plan knows: {', '.join(ids)}")


def render_sheet(plan: Plan, sheet: SheetId, layout: str) -> str:
    """The blank sheet's Markdown (pure: tests fill it in and validate it)."""
    p = plan.pass_(sheet.pass_id)
    rnd = plan.round_(sheet.round_id)
    assert p is not None and rnd is not None
    rater = plan.rater(sheet.rater)
    scale = plan.scale
    annotated = [d for d in plan.dimensions if d.annotate and d.id in p.dimensions]
    lines = [
        "---",
        f"rater: {sheet.rater}",
        f"pass: {sheet.pass_id}",
        f"round: {sheet.round_id}",
        f"plan_version: {plan.version}",
        "---",
        "",
        f"# Scores — {rater.name if rater else sheet.rater}, pass {sheet.pass_id}, round {sheet.round_id}",
        "",
        "<!--",
        f"Score every cell with a whole number from {scale.min} to {scale.max}. "
        f"Conditions: {', '.join(p.conditions)}"
        + (" (scored on the marker-stripped responses)." if p.stripped else "."),
    ]
    for d in annotated:
        refs = " or ".join(f"#{t}" for t in d.transitions)
        example = (
            f"`2 #{d.transitions[0]}`"
            if layout == "wide"
            else f"`#{d.transitions[0]}` in the Transition column"
        )
        lines.append(
            f"{d.id} ({d.name}): a score above {scale.min} must name its transition ({refs}), e.g. {example}."
        )
    lines += [
        "Put a quoted phrase from the response in the citation to back a score.",
        "Only the first table that scores a cell counts; after sealing, change nothing here.",
        "-->",
        "",
    ]
    dims = list(p.dimensions)
    if layout == "wide":
        lines.append("| Q | Cond | " + " | ".join(dims) + " | Σ | Notes |")
        lines.append("|---|---|" + "---|" * len(dims) + "---|---|")
        for q in rnd.questions:
            for c in p.conditions:
                lines.append(f"| {q} | {c} |" + "  |" * len(dims) + "  |  |")
    else:
        lines.append("| Question | Condition | Dimension | Score | Transition | Citation |")
        lines.append("|---|---|---|---|---|---|")
        for q in rnd.questions:
            for c in p.conditions:
                for d in dims:
                    lines.append(f"| {q} | {c} | {d} |  |  |  |")
    return "\n".join(lines) + "\n"


@click.command("sheet")
@study_options
@click.option("--rater", "rater_id", required=True, help="Rater id from the plan.")
@click.option("--pass", "pass_id", default=None, help="Pass id (default: the primary pass).")
@click.option("--round", "round_id", default=None, help="Round id (default: the plan's first round).")
@click.option(
    "--layout",
    type=click.Choice(["wide", "long"]),
    default="wide",
    show_default=True,
    help="wide: one row per item; long: one row per cell, with Transition and Citation columns.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write to this file instead of standard output (refuses to overwrite).",
)
@click.option("--force", is_flag=True, help="Overwrite --output if it exists.")
def command(
    study: Study,
    rater_id: str,
    pass_id: str | None,
    round_id: str | None,
    layout: str,
    output: str | None,
    force: bool,
) -> int:
    """Print a blank score file with every cell of a pass, ready to fill in."""
    plan = study.plan
    if plan.rater(rater_id) is None:
        raise _known("rater", rater_id, [r.id for r in plan.raters])
    pass_id = pass_id or plan.primary_pass.id
    if plan.pass_(pass_id) is None:
        raise _known("pass", pass_id, [p.id for p in plan.passes])
    round_id = round_id or plan.main_round.id
    if plan.round_(round_id) is None:
        raise _known("round", round_id, [r.id for r in plan.rounds])
    sheet = SheetId(rater_id, pass_id, round_id)
    text = render_sheet(plan, sheet, layout)
    if output is None:
        click.echo(text, nl=False)
        return 0
    from aoven_git.naming import score_path

    target = Path(output)
    if target.exists() and not force:
        raise UsageError(f"{output} exists; not overwriting it (use --force)")
    try:
        target.write_text(text, encoding="utf-8", newline="\n")
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None
    click.echo(f"wrote {output}", err=True)
    expected = score_path(plan, sheet)
    try:
        rel = (target.parent.resolve() / target.name).relative_to(study.root.resolve()).as_posix()
    except ValueError:
        rel = None
    if rel != expected:
        click.echo(f"note: commit it as {expected}: the file name must agree with its front matter", err=True)
    return 0
