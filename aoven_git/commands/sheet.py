"""`aoven-git sheet --rater R [--pass P] [--round N] [--amendment ID] [--layout wide|long] [-o FILE]`.

A blank score file with front matter and one empty score per cell of the pass: `validate`
rejects it (missing cells) until every score is filled in, so a rater cannot forget a cell.

With `--amendment ID` the sheet holds the amendment's scope only: its dimensions and conditions
within the pass (docs/amendments.md). For a blind pass the rows are the opaque items of the
committed corpus, `| Item | D1 | … |`, in id order (docs/blinding.md).
"""

from __future__ import annotations

from pathlib import Path

import click

from aoven_git.commands._common import Study, study_options
from aoven_git.errors import UsageError
from aoven_git.model import Plan, SheetId
from aoven_git.sheet_writer import render_sheet


def _known(kind: str, value: str, ids: list[str]) -> UsageError:
    return UsageError(f"unknown {kind} {value!r}; the plan knows: {', '.join(ids)}")


def resolve_sheet(plan: Plan, rater_id: str, pass_id: str | None, round_id: str | None,
                  amendment: str | None) -> SheetId:
    """The sheet the options name, or a usage error listing what the plan knows."""
    from aoven_git.commands._common import chosen_scope

    if plan.rater(rater_id) is None:
        raise _known("rater", rater_id, [r.id for r in plan.raters])
    p, rnd = chosen_scope(plan, pass_id, round_id, amendment)
    return SheetId(rater_id, p.id, rnd.id, amendment)


def blind_items(study: Study, plan: Plan, sheet: SheetId) -> list[str] | None:
    """The corpus ids a sheet of a blind pass lists (as committed in HEAD, or in the folder outside
    git), None for any other sheet; a usage error when the pass has no corpus yet."""
    from aoven_git import blind_corpus, gitio

    p = plan.pass_(sheet.pass_id)
    if p is None or not p.blind or sheet.amendment or sheet.round_id != plan.main_round.id:
        return None
    head = gitio.head_commit(study.root) if study.in_git else None
    if head is not None:
        found = blind_corpus.corpus_ids(plan, (path for path, _, _ in gitio.tree_entries(study.root, head)))
    else:
        found = {} if study.in_git else blind_corpus.work_tree_corpus_ids(study.root, plan)
    items = sorted(found.get(p.id, ()))
    if not items:
        where = f"{plan.study_dir}/blind/{p.id}/"
        raise UsageError(f"pass {p.id} is blind, but no blinded corpus is committed in {where} yet: "
                         f"the study lead runs `aoven-git blind --pass {p.id}`")
    return items


@click.command("sheet")
@study_options
@click.option("--rater", "rater_id", required=True, help="Rater id from the plan.")
@click.option("--pass", "pass_id", default=None, help="Pass id (default: the primary pass).")
@click.option("--round", "round_id", default=None, help="Round id (default: the plan's first round).")
@click.option("--amendment", default=None, help="A sheet of this amendment's re-scoring (its scope only).")
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
    amendment: str | None,
    layout: str,
    output: str | None,
    force: bool,
) -> int:
    """Print a blank score file with every cell of a pass (or of an amendment), ready to fill in."""
    plan = study.plan
    sheet = resolve_sheet(plan, rater_id, pass_id, round_id, amendment)
    text = render_sheet(plan, sheet, layout, blind_items(study, plan, sheet))
    if output is None:
        click.echo(text, nl=False)
        return 0
    _write(study, plan, sheet, text, Path(output), force)
    return 0


def _write(study: Study, plan: Plan, sheet: SheetId, text: str, target: Path, force: bool) -> None:
    from aoven_git.naming import score_path

    if target.exists() and not force:
        raise UsageError(f"{target} exists; not overwriting it (use --force)")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8", newline="\n")
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
    click.echo(f"wrote {target}", err=True)
    expected = score_path(plan, sheet)
    try:
        rel = (target.parent.resolve() / target.name).relative_to(study.root.resolve()).as_posix()
    except ValueError:
        rel = None
    if rel != expected:
        click.echo(f"note: commit it as {expected}: the file name must agree with its front matter", err=True)
