"""`aoven-git disagreements [--pass P] [--round R] [--amendment A] [--write]`: cells where raters differ.

Lists every cell of one pass and round on which the raters who have a score file differ (each
rater's score and the spread) and marks the flagged ones (spread > `rules.flag_spread`): those
need a quoted justification from every rater and a consensus in the reconciliation file
(docs/sealing.md, "Attributed consensus"). With `--amendment A` the cells are A's re-scores and the
file is A's own reconciliation, in its folder (docs/amendments.md, "Each rater's steps").

`--write --rater R` creates the reconciliation file, or extends its (last) reconciliation table,
with one row per flagged cell R scored that has no row of R's yet; justification and consensus
are left empty for R to fill in. Every row is its rater's own statement, attributed from history
(docs/sealing.md, "Attributed consensus"), so each rater writes and commits only their own rows;
without --rater the rater is the one whose e-mail is the git identity. Rows already there are
never touched and every other byte is preserved, so running it again changes nothing. With no
flagged cell nothing is created.

In a plan with replicates cells are written `L1/TRT#2/V`; on a nominal scale scores are listed
(and the JSON `scores` given) as labels, any two different labels flag a cell, and `spread` is
the number of different labels minus one (docs/score-files.md, "Labels").

Exit codes: 0 listed (and written); 1 a score file of the pass/round is invalid (the listing
would rest on wrong scores, so nothing is listed or written) or the reconciliation file cannot be
read or written; 2 plan or usage error (unknown pass or round).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import click

from aoven_git.commands._common import Study, chosen_scope, format_option, study_options
from aoven_git.commands._push import Upstream, push_option
from aoven_git.errors import FindingsError, UsageError
from aoven_git.model import Pass, Plan, ScoreSheet
from aoven_git.reconciliation import (
    COLUMNS,
    Disagreement,
    find_tables,
    flag_spread,
    flagged_cells,
    parse_reconciliation,
    shown,
)


def _sheets(study: Study, plan: Plan, pass_id: str, round_id: str,
            amendment: str | None = None) -> list[ScoreSheet]:
    from dataclasses import replace

    from aoven_git.naming import classify
    from aoven_git.validation import read_study, work_tree_study

    study_files = work_tree_study(study.root, plan, amendments=amendment is not None)
    scores = {p: b for p, b in study_files.files.items() if classify(plan, p).kind == "score"}
    # the scores alone, without quote checks (root None): the listing rests on the cells
    reading = read_study(replace(study_files, files=scores, links=study_files.links & set(scores), root=None))
    report = reading.validation
    bad = []
    for f in report.files:
        ours = (f.pass_id, f.round_id, f.amendment) == (pass_id, round_id, amendment)
        if f.errors and (f.rater is None or ours):
            first = f.errors[0]
            bad.append(
                f"{f.path}:{first.line}: {first.code}: {first.message}"
                + (f" (and {len(f.errors) - 1} more)" if len(f.errors) > 1 else "")
            )
    if bad:
        raise FindingsError(
            "score files are invalid; fix them first (`aoven-git validate`):\n  " + "\n  ".join(bad)
        )
    if amendment:
        return report.amendment_sheets  # re-scores are kept apart
    # a blind pass's reconciliation settles cells by question and condition, once its key is in
    return list(reading.sheets)


def _of(sheets: list[ScoreSheet], pass_id: str, round_id: str, amendment: str | None) -> list[ScoreSheet]:
    return [s for s in sheets if (s.sheet.pass_id, s.sheet.round_id, s.sheet.amendment)
            == (pass_id, round_id, amendment)]


def _elsewhere(plan: Plan, sheets: list[ScoreSheet], shown: str, round_id: str) -> list[str]:
    """`pass P: N flagged` for every other pass with flagged cells: each has its own
    reconciliation, easy to forget when only the primary pass is listed."""
    out = []
    for p in (p for p in plan.passes if p.id != shown):
        n = sum(d.flagged for d in flagged_cells(plan, _of(sheets, p.id, round_id, None), p.id, round_id)[1])
        if n:
            out.append(f"pass {p.id} also has {n} flagged cell(s): `aoven-git disagreements --pass {p.id}` "
                       f"(its own reconciliation file)")
    return out


def _row(key: str, rater: str, columns: dict[str, int], width: int) -> str:
    parts = [""] * max(width, 2)
    parts[columns["cell"]] = key
    parts[columns["rater"]] = rater
    return "| " + " | ".join(parts) + " |"


def _template(plan: Plan, pass_id: str, round_id: str, rows: list[str], nl: str,
              amendment: str | None = None) -> str:
    header = "| " + " | ".join(COLUMNS) + " |"
    lines = [
        "---",
        f"pass: {pass_id}",
        f"round: {round_id}",
        *([f"amendment: {amendment}"] if amendment else []),
        "---",
        "",
        f"# Reconciliation — {pass_id} pass, {round_id} round"
        + (f", amendment {amendment}" if amendment else ""),
        "",
        "For every flagged cell, each rater who scored it writes their own row: a justification with a",
        'quoted phrase ("…") copied from the response, and the value they accept (Consensus): '
        + (f"one of the labels {', '.join(plan.scale.labels)}" if plan.scale.labels else "a whole"),
        ("" if plan.scale.labels else f"number {plan.scale.min}–{plan.scale.max} ")
        + "or `contested`. Commit your own rows yourself: a row last written by anyone",
        "else is ignored. A cell has a consensus when every rater who scored it accepts the same value.",
        "",
        header,
        "|" + "---|" * len(COLUMNS),
        *rows,
    ]
    return nl.join(lines) + nl


_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def extend(
    plan: Plan, path: str, data: bytes | None, wanted: list[tuple[str, str]], pass_id: str, round_id: str,
    amendment: str | None = None,
) -> tuple[bytes | None, int]:
    """New file content with a row for each wanted (cell, rater) not yet present, and how many
    rows were added; None when nothing changes. Pure: no I/O."""
    if data is None:
        if not wanted:
            return None, 0
        cols = {"cell": 0, "rater": 1}
        rows = [_row(k, r, cols, len(COLUMNS)) for k, r in wanted]
        return _template(plan, pass_id, round_id, rows, "\n", amendment).encode("utf-8"), len(rows)
    text = data.decode("utf-8")  # the caller checked it
    rec = parse_reconciliation(plan, path, data)
    present = {(str(r.key), r.rater) for r in rec.rows}
    todo = [(k, r) for k, r in wanted if (k, r) not in present]
    if not todo:
        return None, 0
    nl = "\r\n" if "\r\n" in text else "\r" if "\r" in text and "\n" not in text else "\n"
    lines = _LINE_RE.findall(text)
    tables = find_tables(text)
    if not tables:
        cols = {"cell": 0, "rater": 1}
        rows = [_row(k, r, cols, len(COLUMNS)) for k, r in todo]
        block = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS), *rows]
        head = text if not text or text.endswith(("\n", "\r")) else text + nl
        sep = "" if not head or head.endswith(nl + nl) else nl
        return (head + sep + nl.join(block) + nl).encode("utf-8"), len(rows)
    table = tables[-1]
    end = min(table.end_line, len(lines))  # 1-based last line of the table
    last = lines[end - 1] if end >= 1 else ""
    prefix = re.match(r"^[ \t>]*", last)
    lead = prefix.group() if prefix else ""
    rows = [lead + _row(k, r, table.columns, table.width) for k, r in todo]
    before = "".join(lines[:end])
    if before and not before.endswith(("\n", "\r")):
        before += nl
    after = "".join(lines[end:])
    return (before + nl.join(rows) + nl + after).encode("utf-8"), len(rows)


def _refuse_opaque(plan: Plan, p: Pass, round_id: str, ds: list[Disagreement]) -> None:
    """Rows of a blind pass are written by question and condition, so not before its key is in."""
    from aoven_git.score_ids import BLIND_CONDITION

    if p.blind and any(d.key.condition == BLIND_CONDITION for d in ds):
        raise UsageError(f"pass {p.id} is blind and not unblinded yet: its cells are still opaque items. "
                         "Reconcile it after `aoven-git unblind` commits the key (nothing was written)")


def writing_rater(study: Study, plan: Plan, rater: str | None) -> str:
    """The rater whose rows `--write` adds: --rater, else the one whose e-mail is the git identity."""
    from aoven_git import gitio

    if rater is not None:
        if plan.rater(rater) is None:
            raise UsageError(f"unknown rater {rater!r} (plan raters: {', '.join(r.id for r in plan.raters)})")
        return rater
    me = (gitio.user_email(study.root) or "").lower() if study.in_git else ""
    mine = [r.id for r in plan.raters if me and me in {e.lower() for e in r.emails}]
    if len(mine) != 1:
        raise UsageError("say whose rows to write: --write --rater ID (each rater writes and commits their "
                         f"own rows; your git e-mail <{me or 'unset'}> is not one rater's)")
    return mine[0]


def reconciliation_file(study: Study, plan: Plan, pass_id: str, round_id: str,
                        amendment: str | None = None) -> str:
    """The file the team keeps the reconciliation of (pass, round[, amendment]) in: the accepted
    name already in its folder (`reconciliation_main.md`), else the canonical one. Two side by side
    are refused: a reconciliation has one file (`duplicate-sheet`)."""
    from aoven_git.model import SheetId
    from aoven_git.naming import RECONCILIATION_STEM, classify, reconciliation_path, sheet_dir

    want = SheetId("", pass_id, round_id, amendment)
    home = sheet_dir(plan, amendment)
    folder = study.root / home
    found = sorted(rel for f in (folder.glob(f"{RECONCILIATION_STEM}*.md") if folder.is_dir() else [])
                   if classify(plan, rel := f"{home}/{f.name}").sheet == want)
    if len(found) > 1:
        raise FindingsError(f"{' and '.join(found)} are two files for one reconciliation; merge the rows "
                            "into one and delete the other (nothing was written)")
    return found[0] if found else reconciliation_path(plan, pass_id, round_id, amendment)


def _write(study: Study, plan: Plan, pass_id: str, round_id: str, ds: list[Disagreement],
           rater: str, amendment: str | None) -> tuple[str, int]:
    rel = reconciliation_file(study, plan, pass_id, round_id, amendment)
    full: Path = study.root / rel
    if full.is_symlink():
        raise FindingsError(f"{rel} is a symbolic link; refusing to write through it")
    data: bytes | None = None
    if full.exists():
        try:
            data = full.read_bytes()
            data.decode("utf-8")
        except OSError as exc:
            raise FindingsError(f"{rel}: cannot read: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise FindingsError(f"{rel}: not valid UTF-8; refusing to edit it") from None
    wanted = [(str(d.key), rater) for d in ds if d.flagged and rater in d.scores]
    new, added = extend(plan, rel, data, wanted, pass_id, round_id, amendment)
    if new is not None:
        try:
            full.parent.mkdir(parents=True, exist_ok=True)
            full.write_bytes(new)
        except OSError as exc:
            raise FindingsError(f"{rel}: cannot write: {exc.strerror or exc}") from None
    return rel, added


@click.command("disagreements")
@study_options
@click.option("--pass", "pass_id", default=None, help="Pass (default: the primary pass).")
@click.option("--round", "round_id", default=None, help="Round (default: the plan's first round).")
@click.option("--amendment", default=None,
              help="The re-scores of this amendment, and its own reconciliation file in its folder.")
@click.option(
    "--write",
    is_flag=True,
    help="Create or extend the reconciliation file with the rater's row for each flagged cell.",
)
@click.option("--rater", default=None,
              help="With --write: whose rows to add (default: the rater whose e-mail is your git identity).")
@push_option
@format_option("text", "json")
def command(study: Study, pass_id: str | None, round_id: str | None, amendment: str | None, write: bool,
            rater: str | None, push: bool, fmt: str) -> int:
    """List the cells where raters differ and mark the flagged ones (spread > rules.flag_spread)."""
    plan = study.plan
    p, rnd = chosen_scope(plan, pass_id, round_id, amendment)
    up = _pull_for_write(study, p.id, rnd.id, amendment, rater) if push and write else None
    if push and not write:
        raise UsageError("--push commits and pushes your reconciliation rows: use it with --write")
    if up is not None:
        plan = study.plan  # the pull may have brought a newer plan
        p, rnd = chosen_scope(plan, pass_id, round_id, amendment)
    every = _sheets(study, plan, p.id, rnd.id, amendment)
    sheets = _of(every, p.id, rnd.id, amendment)
    by_cell, ds = flagged_cells(plan, sheets, p.id, rnd.id)
    order = {r.id: k for k, r in enumerate(plan.raters)}
    raters = sorted({s.sheet.rater for s in sheets}, key=lambda r: order.get(r, len(order)))
    written: str | None = None
    added = 0
    if write:
        _refuse_opaque(plan, p, rnd.id, ds)
        rater_id = writing_rater(study, plan, rater)
        written, added = _write(study, plan, p.id, rnd.id, ds, rater_id, amendment)
    shared = _commit_and_push(study, up, written, rater_id, p.id, rnd.id, amendment) if up else []
    if fmt == "json":
        doc = _listing(plan, p.id, rnd.id, amendment, raters, len(by_cell), ds)
        doc.update({"reconciliation": written, "rows_added": added, **({"pushed": shared} if up else {})})
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return 0
    click.echo(
        f"pass {p.id}, round {rnd.id}: {len(raters)} rater(s) ({', '.join(raters) or 'none'}), "
        f"{len(by_cell)} cells scored, {len(ds)} with disagreement, {sum(d.flagged for d in ds)} flagged "
        + ("(any two different labels)" if plan.scale.labels else f"(spread > {plan.rules.flag_spread})")
    )
    if len(raters) < 2:
        click.echo("  fewer than two raters have a score file for this pass and round")
    _print_cells(plan, ds)
    if write:
        _print_written(ds, written, added, _written_by_others(study, written, rater_id) if not added else [])
    if pass_id is None and amendment is None:
        for line in _elsewhere(plan, every, p.id, rnd.id):
            click.echo(line)
    for line in shared:
        click.echo(line)
    return 0


def _pull_for_write(study: Study, pass_id: str, round_id: str, amendment: str | None,
                    rater: str | None) -> Upstream:
    """`--write --push`: pull with rebase before writing, carrying the rater's uncommitted rows of
    the reconciliation file across (merged with the rows others pushed; a conflict refuses)."""
    from aoven_git.commands import _push

    plan = study.plan
    writing_rater(study, plan, rater)  # usage errors before anything changes
    rel = reconciliation_file(study, plan, pass_id, round_id, amendment)
    empty = _template(plan, pass_id, round_id, [], "\n", amendment).encode("utf-8")
    carried = _push.Carried(rel, empty, lambda data: _merged_rows_problem(plan, rel, data))
    return _push.pull(study, carry=(carried,))


def _merged_rows_problem(plan: Plan, path: str, data: bytes) -> str | None:
    """Two raters' rows merged line by line must still be one row per cell and rater: when both
    sides changed the same row, say so instead of keeping both."""
    seen: set[tuple[str, str]] = set()
    twice = []
    for r in parse_reconciliation(plan, path, data).rows:
        key = (str(r.key), r.rater)
        if key in seen:
            twice.append(f"{key[0]} ({key[1]})")
        seen.add(key)
    return f"both sides have a row for {', '.join(twice[:3])}" if twice else None


def _commit_and_push(study: Study, up: Upstream, path: str | None, rater: str, pass_id: str,
                     round_id: str, amendment: str | None) -> list[str]:
    """Commit the reconciliation file as it stands (the rater's own statements: rows count only
    when their rater commits them) and push; what to tell the user."""
    from aoven_git import gitio
    from aoven_git.commands import _push

    lines = []
    if path is not None and gitio.changed_against_head(study.root, path, untracked=True):
        scope = f"{pass_id}/{round_id}" + (f" of amendment {amendment}" if amendment else "")
        gitio.add(study.root, [path])
        sha = gitio.commit_only(study.root, [path], f"Reconciliation: {rater}'s rows of {scope}\n")
        lines.append(f"committed {path} in {sha[:10]}")
    else:
        lines.append("nothing to commit: the reconciliation file is as committed")
    lines.append(_push.push(study.root, up))
    return lines


def _listing(plan: Plan, pass_id: str, round_id: str, amendment: str | None, raters: list[str],
             scored: int, ds: list[Disagreement]) -> dict[str, object]:
    """The JSON listing of the cells (docs/commands.md, `disagreements`)."""
    return {
        "pass": pass_id,
        "round": round_id,
        "amendment": amendment,
        "flag_spread": flag_spread(plan),
        "raters": raters,
        "cells_scored": scored,
        "cells": [
            {"cell": str(d.key), "scores": _scores(plan, d), "spread": d.spread, "flagged": d.flagged}
            for d in ds
        ],
        "flagged": [str(d.key) for d in ds if d.flagged],
    }


def _scores(plan: Plan, d: Disagreement) -> dict[str, int] | dict[str, str]:
    """Each rater's score as the JSON gives it: the number, or the label on a nominal scale."""
    return {r: shown(plan, v) for r, v in d.scores.items()} if plan.scale.labels else d.scores


def _print_cells(plan: Plan, ds: list[Disagreement]) -> None:
    width = max((len(str(d.key)) for d in ds), default=0)
    for d in ds:
        scores = "  ".join(f"{r} {shown(plan, v)}" for r, v in d.scores.items())
        mark = "  FLAGGED" if d.flagged else ""
        click.echo(f"  {d.key!s:<{width}}  {scores}  spread {d.spread}{mark}")


def _written_by_others(study: Study, path: str | None, rater: str) -> list[str]:
    """The cells whose committed row under `rater`'s name in `path` someone else wrote (it counts
    for nobody until `rater` commits it as their own statement), from the history verify-seal
    reads; none outside git or when the history cannot be read."""
    from aoven_git.errors import AovenError
    from aoven_git.sealing import verify

    if not study.in_git or path is None:
        return []
    try:
        report = verify(study.root, study.relpath(study.plan_file))
    except AovenError:
        return []
    return [r["cell"] for r in report.rows
            if r["path"] == path and r["rater"] == rater and r["attributed"] is False]


def _print_written(ds: list[Disagreement], written: str | None, added: int, others: list[str]) -> None:
    if not any(d.flagged for d in ds):
        click.echo("no flagged cells: nothing written")
    elif added:
        click.echo(f"wrote {added} row(s) to {written}: fill in each justification (with a quote) and "
                   "the value you accept, then commit them yourself")
    elif others:
        click.echo(f"{written} has a row under your name for every flagged cell, but someone else wrote the "
                   f"one(s) for {', '.join(others)}: they count for nobody until you state them yourself — "
                   "check the value, edit the row and commit it")
    else:
        click.echo(f"{written} already has your row for every flagged cell: unchanged")
