"""`aoven-git amend import FILE --amendment ID [-o PATH] [--force]` (docs/amendments.md).

Raters who re-score after a rubric ruling tend to append the new values to their sealed score
file: primed dimensions (`D7'`), fused item ids (`Q2B`), `Original D7 | New D7` tables. Those
values never count there (`amended-in-file`). This command turns them into the score file of a
declared amendment, for the same rater, pass and round: the rater's new value for every re-scored
cell of the amendment's scope, and the file's sealed score for every scope cell the tables leave
alone. The result is an ordinary amendment sheet, sealed and revealed with `--amendment ID`.

Refusals (nothing written): an unknown amendment, or one that does not re-score the file's pass
(exit 2); a file whose rater/pass/round is unknown, with no re-score table, with a re-score value
that cannot be imported, re-scoring a cell outside the amendment's scope, or lacking the sealed
score of a scope cell (exit 1); an output that exists (without `--force`, exit 2) or is already
sealed (exit 1); an output that would not validate (exit 1). A plan with replicates or a nominal
scale is refused too (exit 2): re-score tables name no replicate and hold no labels, so the
amendment's sheet is written with `aoven-git sheet --amendment ID` instead (docs/score-files.md,
"Re-score tables").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from aoven_git.commands._common import Study, study_options
from aoven_git.errors import FindingsError, UsageError
from aoven_git.model import Amendment, Cell, CellKey, Plan, SheetId


@dataclass(frozen=True)
class Row:
    """One cell of the amendment file: its value and where it came from."""

    key: CellKey
    score: int
    transitions: tuple[int, ...]
    citation: str
    origin: str  # "re-score, line 41" / "sealed score, line 17"


def _amendment(plan: Plan, amendment_id: str) -> Amendment:
    a = plan.amendment(amendment_id)
    if a is None:
        known = ", ".join(x.id for x in plan.amendments) or "none yet: append one to `amendments:`"
        raise UsageError(f"unknown amendment {amendment_id!r} (plan amendments: {known})")
    return a


def _source_sheet(plan: Plan, path: str, data: bytes, a: Amendment) -> SheetId:
    """The rater, pass and round of the file whose re-scores are imported."""
    from aoven_git.scorefile import parse_score_file

    parsed = parse_score_file(plan, path, data)
    s = parsed.sheet
    if not s.rater or plan.rater(s.rater) is None:
        why = "; ".join(f"line {f.line}: {f.message}" for f in parsed.errors[:3]) or "no rater"
        raise FindingsError(f"{path}: cannot tell whose scores these are ({why}); name the file "
                            "scores_<rater>[_<round>][_<pass>].md or give it front matter")
    if s.amendment:
        raise FindingsError(f"{path} is already a file of amendment {s.amendment}: import from the "
                            "rater's sealed score file")
    if s.pass_id not in a.passes:
        raise UsageError(f"amendment {a.id} does not re-score pass {s.pass_id} (it re-scores "
                         f"{', '.join(a.passes)}), the pass of {path}")
    return s


def collect_rows(plan: Plan, path: str, data: bytes, a: Amendment) -> tuple[SheetId, list[Row]]:
    """Every cell of the amendment's scope for the file's rater, pass and round: re-scored, or
    kept as sealed. Raises (FindingsError) what makes the import impossible."""
    from aoven_git.scorefile import parse_score_file, rescores

    source = _source_sheet(plan, path, data, a)
    found = rescores(plan, path, data)
    parsed = parse_score_file(plan, path, data)
    unusable = [f for f in parsed.warnings if f.code == "rescore-invalid"]
    if unusable:
        raise FindingsError(f"{path}: re-score values that cannot be imported (fix the table first):\n  "
                            + "\n  ".join(f"line {f.line}: {f.message}" for f in unusable))
    if not found:
        raise FindingsError(f"{path} has no re-score table (primed dimensions `D7'`, fused item ids "
                            "`Q2B`, or `Original D7 | New D7` columns): there is nothing to import")
    scope = plan.expected_cells(source.pass_id, source.round_id, amendment=a.id)
    inside = set(scope)
    outside = [r for r in found if r.key not in inside]
    if outside:
        raise FindingsError(
            f"{path} re-scores cells outside amendment {a.id}, which re-scores only "
            f"{', '.join(a.dimensions)} of condition {', '.join(a.conditions)}:\n  "
            + "\n  ".join(f"line {r.line}: {r.key}" for r in outside)
            + "\nDeclare an amendment whose scope covers them, or import into that one.")
    sealed: dict[CellKey, Cell] = {c.key: c for c in parsed.cells}
    new = {r.key: r for r in found}
    lacking = [k for k in scope if k not in new and k not in sealed]
    if lacking:
        raise FindingsError(f"{path} gives neither a re-score nor a valid sealed score for "
                            f"{', '.join(map(str, lacking))}: every cell of the amendment needs a value")
    rows = [Row(k, new[k].new, new[k].transitions, new[k].citation, f"re-score, line {new[k].line}")
            if k in new else Row(k, sealed[k].score, sealed[k].transitions, sealed[k].citation,
                                 f"sealed score, line {sealed[k].line}")
            for k in scope]
    return source, rows


def _cell_text(text: str) -> str:
    """Free text made safe for one table cell."""
    return " ".join(text.replace("|", "\\|").split())


def render_amendment(plan: Plan, sheet: SheetId, source: str, rows: list[Row]) -> str:
    """The amendment file: long layout, one row per scope cell, with where each value came from."""
    a = plan.amendment(sheet.amendment or "")
    assert a is not None
    lines = [
        "---", f"rater: {sheet.rater}", f"pass: {sheet.pass_id}", f"round: {sheet.round_id}",
        f"amendment: {a.id}", f"plan_version: {plan.version}", "---", "",
        f"# Amendment {a.id} — {a.title}", "",
        f"Re-scores of {sheet.rater} for pass {sheet.pass_id}, round {sheet.round_id}, imported by "
        f"`aoven-git amend import` from `{source}`: the new values of its re-score tables, and the sealed "
        "score for every cell of the amendment the tables leave unchanged.", "",
        "| Question | Condition | Dimension | Score | Transition | Citation | From |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        trans = ", ".join(f"#{t}" for t in r.transitions)
        lines.append(f"| {r.key.question} | {r.key.condition} | {r.key.dimension} | {r.score} | {trans} | "
                     f"{_cell_text(r.citation)} | {r.origin} |")
    return "\n".join(lines) + "\n"


def _output(study: Study, plan: Plan, sheet: SheetId, output: str | None, force: bool) -> tuple[Path, str]:
    """Where the file goes (absolute, repository-relative), refusing to overwrite or to replace a
    sealed sheet."""
    from aoven_git import gitio, naming

    rel = study.relpath(output) if output else naming.score_path(plan, sheet)
    target = study.root / rel
    if study.in_git:
        paths = [naming.seal_path(plan, sheet), naming.score_path(plan, sheet)]
        committed = gitio.head_blobs(study.root, paths)
        if committed:
            raise FindingsError(f"{sheet} is already sealed ({', '.join(sorted(committed))} is committed): "
                                "a sealed sheet is never replaced")
    if target.exists() and not force:
        raise UsageError(f"{rel} exists; not overwriting it (use --force)")
    return target, rel


def _check_output(study: Study, plan: Plan, sheet: SheetId, text: str) -> None:
    """The file must validate as the sheet it is (at its canonical path, whatever -o says)."""
    from aoven_git.naming import score_path
    from aoven_git.validation import validate_sources

    canonical = score_path(plan, sheet)
    report = validate_sources(plan, {canonical: text.encode("utf-8")}, root=study.root)
    errors = [f for fr in report.files for f in fr.errors]
    if errors:
        raise FindingsError("the amendment file would not validate (nothing was written):\n  "
                            + "\n  ".join(f"{canonical}:{f.line}: {f.code}: {f.message}" for f in errors)
                            + "\nAdd what is missing to the re-score table (e.g. the transition of an "
                            "annotated dimension) and import again.")


def _refuse_designs(plan: Plan, amendment_id: str) -> None:
    """Re-score tables are read for the seed's design only: one response per (question,
    condition), whole-number scores. Elsewhere the amendment's sheet is written by hand."""
    why = ("the plan has replicates (re-score tables name no Rep)" if plan.replicates > 1
           else "the plan's scale is nominal (re-score tables hold whole numbers)" if plan.scale.labels
           else None)
    if why is not None:
        raise UsageError(f"amend import cannot read this study's re-scores: {why}. Write the amendment's "
                         f"sheet with `aoven-git sheet --rater R --amendment {amendment_id}` and fill it in "
                         "(nothing was written)")


@click.group("amend")
def command() -> None:
    """Amendments: declared, exploratory re-scoring after a rubric ruling."""


@command.command("import")
@study_options
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--amendment", "amendment_id", required=True, help="Amendment id from the plan.")
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              help="Write here (default: the rater's file in amendments/<ID>/).")
@click.option("--force", is_flag=True, help="Overwrite the output if it exists (never a sealed one).")
def import_(study: Study, file: str, amendment_id: str, output: str | None, force: bool) -> int:
    """Turn the re-score tables of a score file into its rater's file of amendment ID."""
    plan = study.plan
    _refuse_designs(plan, amendment_id)
    a = _amendment(plan, amendment_id)
    path = Path(file)
    if not path.is_file():
        raise UsageError(f"{file}: no such file")
    try:
        source = study.relpath(path)
    except UsageError:
        source = path.name  # outside the repository: identified by its name and front matter
    source_sheet, rows = collect_rows(plan, source, path.read_bytes(), a)
    sheet = SheetId(source_sheet.rater, source_sheet.pass_id, source_sheet.round_id, a.id)
    target, rel = _output(study, plan, sheet, output, force)
    text = render_amendment(plan, sheet, source, rows)
    _check_output(study, plan, sheet, text)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8", newline="\n")
    except OSError as exc:
        raise UsageError(f"cannot write {rel}: {exc.strerror or exc}") from None
    changed = sum(r.origin.startswith("re-score") for r in rows)
    click.echo(f"wrote {rel}: {len(rows)} cells of amendment {a.id} for {sheet.rater} "
               f"({changed} re-scored, {len(rows) - changed} kept as sealed)")
    click.echo(f"Check it, then seal it: aoven-git seal --rater {sheet.rater} --amendment {a.id}"
               + (f" --pass {sheet.pass_id}" if sheet.pass_id != plan.primary_pass.id else "")
               + (f" --round {sheet.round_id}" if sheet.round_id != plan.main_round.id else ""))
    return 0
