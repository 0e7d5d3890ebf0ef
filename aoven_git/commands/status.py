"""`aoven-git status [--rater R] [--format text|json]`: where the study stands, on one screen.

Per rater, pass, round and amendment: whether the sheet is missing, written (in the work tree, not
valid yet), valid, sealed or revealed; the reconciliation rows still due; blind passes not blinded
or not unblinded; what keeps the report's verdict NOT-READY (the report's own reasons); and the next
command for the person at the keyboard — the rater whose plan e-mail is their git `user.email`,
else the study lead (`--rater R` shows R's view).

Everything is read through the readers the other commands use: validate's work-tree check,
verify-seal's history, the rules `reveal` and `unblind` apply, `disagreements`' flagged cells and
reconciliation file, and `report` itself (without bootstrap) for the verdict and its NOT-READY
reasons; `progress.py` only lays them out. Informational: exit 0, except 2 for a usage or plan error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import click

from aoven_git.commands._common import Study, format_option, study_options
from aoven_git.errors import AovenError, UsageError
from aoven_git.model import Plan, SheetId
from aoven_git.progress import (
    BlindProgress,
    Person,
    Progress,
    Reconciling,
    SheetProgress,
    Verdict,
    finish,
    ordered,
    rows_due,
    scopes,
    sheet_state,
    withheld_for,
)
from aoven_git.validation import StudyReading, ValidationReport


def person(study: Study, plan: Plan, rater: str | None) -> Person:
    """`--rater R`, else the rater whose plan e-mail is the git identity, else the lead."""
    from aoven_git import gitio

    email = gitio.user_email(study.root) if study.in_git else None
    if rater is not None:
        if plan.rater(rater) is None:
            raise UsageError(f"unknown rater {rater!r} (plan raters: {', '.join(r.id for r in plan.raters)})")
        return Person(rater, email, "--rater")
    me = (email or "").lower()
    mine = next((r.id for r in plan.raters if me and me in {e.lower() for e in r.emails}), None)
    return Person(mine, email, "git-email")


def _written(checked: ValidationReport) -> dict[SheetId, tuple[str, str | None]]:
    """Each work-tree score file validate read: its path and first error (None when valid)."""
    out: dict[SheetId, tuple[str, str | None]] = {}
    for f in checked.files:
        if f.kind != "score" or not f.rater or not f.pass_id or not f.round_id:
            continue
        sid = SheetId(f.rater, f.pass_id, f.round_id, f.amendment)
        first = f.errors[0] if f.errors else None
        problem = f"line {first.line}: {first.code}: {first.message}" if first else None
        if sid not in out or (out[sid][1] is None and problem):  # a duplicate makes the sheet invalid
            out[sid] = (f.path, problem)
    return out


def _sealed(seals: Mapping[str, Any] | None) -> dict[SheetId, Mapping[str, Any]]:
    """verify-seal's seals by sheet."""
    out: dict[SheetId, Mapping[str, Any]] = {}
    for s in (seals or {}).get("seals", []) or []:
        out.setdefault(SheetId(s["rater"], s["pass"], s["round"], s.get("amendment")), s)
    return out


def _rounds(plan: Plan, written: Mapping[SheetId, Any], sealed: Mapping[SheetId, Any]) -> list[str]:
    """The rounds in play: the first one, and every round someone wrote or sealed a sheet of."""
    seen = {s.round_id for s in [*written, *sealed]}
    return [r.id for r in plan.rounds if r.id == plan.main_round.id or r.id in seen]


def _sheets(plan: Plan, rounds: Sequence[str], written: Mapping[SheetId, tuple[str, str | None]],
            sealed: Mapping[SheetId, Mapping[str, Any]], head_paths: set[str],
            unblinded: set[str], seals: Mapping[str, Any] | None) -> list[SheetProgress]:
    from aoven_git.naming import score_path
    from aoven_git.readiness import withdrawn_from, withdrawn_kept
    from aoven_git.sealing import unsealed_sheets

    gone = withdrawn_kept(seals)

    out = []
    blind = {p.id for p in plan.passes if p.blind}
    for sid in scopes(plan, rounds):
        state, path, problem = sheet_state(sid, sealed=sealed, written=written,
                                           default_path=score_path(plan, sid))
        waits = tuple(u.rater for u in unsealed_sheets(plan, sid, head_paths)) if state == "sealed" else ()
        rater = plan.rater(sid.rater)
        pending_blind = sid.pass_id in blind and sid.pass_id not in unblinded and state == "missing"
        withdrawn = withdrawn_from(gone, sid.rater, (sid.pass_id, sid.round_id, sid.amendment))
        out.append(SheetProgress(sid, bool(rater and rater.required) and not withdrawn, state, path,
                                 problem, waits, pending_blind, withdrawn))
    return out


def _blind(study: Study, plan: Plan, head_paths: set[str], documents: Sequence[Mapping[str, Any]]
           ) -> list[BlindProgress]:
    """Each blind pass: blinded when its key digest is committed, unblinded when its key is (the
    report's state, which reads the key), and who must seal before `unblind` (unblind's rule)."""
    from aoven_git.commands.blind import default_key_path
    from aoven_git.commands.unblind import unsealed
    from aoven_git.naming import blind_key_path, blind_key_seal_path

    reported = {b["pass"]: b["state"] for d in documents[:1] for b in d.get("blind_passes", []) or []}
    out = []
    for p in (p for p in plan.passes if p.blind):
        key = str(default_key_path(study, p.id))
        if blind_key_seal_path(plan, p.id) not in head_paths:
            out.append(BlindProgress(p.id, "not-blinded", key_file=key))
        elif blind_key_path(plan, p.id) in head_paths:
            state = "invalid-key" if reported.get(p.id) == "invalid-key" else "unblinded"
            out.append(BlindProgress(p.id, state, key_file=key))
        else:
            out.append(BlindProgress(p.id, "blinded", unsealed(plan, p.id, head_paths), key))
    return out


def _reconciling(study: Study, reading: StudyReading, sheets: Sequence[SheetProgress],
                 seals: Mapping[str, Any] | None, blind: Sequence[BlindProgress]) -> list[Reconciling]:
    """For every pass and round (of an amendment) whose sheets are all revealed, the flagged cells'
    rows still due, from the reconciliation file `disagreements --write` extends. A withdrawn
    rater's sheet that left the study (docs/plan.md, "Withdrawals") is neither waited for nor
    counted, as in the report."""
    from aoven_git.reconciliation import flagged_cells

    plan = reading.source.plan
    pending_blind = {b.pass_id for b in blind if b.state != "unblinded"}
    pool = [*reading.sheets, *reading.amendment_sheets]
    groups: dict[tuple[str, str, str | None], list[SheetProgress]] = {}
    for s in sheets:
        if not s.withdrawn:  # left the study: nobody waits for it, and it does not count
            groups.setdefault((s.sheet.pass_id, s.sheet.round_id, s.sheet.amendment), []).append(s)
    out = []
    for (pass_id, round_id, amendment), group in groups.items():
        public = {s.sheet for s in group if s.state == "revealed"}
        waiting = any(s.state == "sealed" or (s.required and s.state != "revealed") for s in group)
        if waiting or len(public) < 2 or (pass_id in pending_blind and not amendment):
            continue
        mine = [s for s in pool if s.sheet in public and s.ok]
        flagged = [d for d in flagged_cells(plan, mine, pass_id, round_id)[1] if d.flagged]
        if flagged:
            out.append(_rows(study, plan, (pass_id, round_id, amendment), flagged, seals))
    return out


def _rows(study: Study, plan: Plan, scope: tuple[str, str, str | None], flagged: list[Any],
          seals: Mapping[str, Any] | None) -> Reconciling:
    """The rows due of one reconciliation, or why its file cannot take them: two files for it
    (`disagreements --write` refuses), or one its parser cannot read (every row then counts as
    missing, as the report counts it)."""
    from aoven_git.naming import reconciliation_path

    pass_id, round_id, amendment = scope
    try:
        file, rec = _reconciliation(study, plan, pass_id, round_id, amendment, seals)
    except AovenError as exc:
        file = reconciliation_path(plan, pass_id, round_id, amendment)
        due = rows_due(flagged, None)
        return Reconciling(pass_id, round_id, amendment, file, len(flagged), due, str(exc))
    errors = [f for f in (rec.findings if rec is not None else ()) if f.severity == "error"]
    problem = f"{file}:{errors[0].line}: {errors[0].code}: {errors[0].message}" if errors else None
    return Reconciling(pass_id, round_id, amendment, file, len(flagged), rows_due(flagged, rec), problem)


def _reconciliation(study: Study, plan: Plan, pass_id: str, round_id: str, amendment: str | None,
                    seals: Mapping[str, Any] | None) -> tuple[str, Any]:
    """The reconciliation file (the one `disagreements --write` extends) and its rows in the work
    tree, each marked from verify-seal's attribution (a row not committed by its rater is not)."""
    from aoven_git.commands.disagreements import reconciliation_file
    from aoven_git.readiness import attributed
    from aoven_git.reconciliation import parse_reconciliation
    from aoven_git.validation import read_limited

    file = reconciliation_file(study, plan, pass_id, round_id, amendment)
    full = study.root / file
    if not full.is_file() or full.is_symlink():
        return file, None
    rec = parse_reconciliation(plan, file, read_limited(full))
    return file, attributed(rec, seals) if seals is not None else rec


def _verdicts(study: Study, rounds: Sequence[str], seals: dict[str, Any] | None
              ) -> tuple[list[Verdict], list[dict[str, Any]]]:
    """The report of each round in play (no bootstrap: only the verdict and its reasons are read),
    on verify-seal's document of HEAD when it was read already."""
    from aoven_git.commands.report import build_report

    verdicts, documents = [], []
    for rnd in rounds:
        doc = build_report(study, rev=None, round_id=rnd, bootstrap=0, seed=0, seals=seals)
        documents.append(doc)
        amendments = tuple((str(a.get("id")), str(a.get("verdict")), tuple(a.get("not_ready") or ()))
                           for a in doc.get("amendments", []) or [] if isinstance(a, dict))
        verdicts.append(Verdict(rnd, str(doc["verdict"]), tuple(doc.get("not_ready") or ()), amendments))
    return verdicts, documents


def _head(study: Study) -> tuple[str | None, set[str], dict[str, Any] | None]:
    """HEAD, the paths it holds, and verify-seal's document for it (None outside git or when
    there is no commit)."""
    from aoven_git import gitio
    from aoven_git.report_inputs import seal_status

    head = gitio.head_commit(study.root) if study.in_git else None
    if head is None:
        return None, set(), None
    return head, {p for p, _, _ in gitio.tree_entries(study.root, head)}, seal_status(study, head)


def gather(study: Study, rater: str | None) -> Progress:
    """The study's progress as `progress.py` lays it out, and the steps of the person."""
    from aoven_git.validation import read_study, work_tree_study

    plan = study.plan
    who = person(study, plan, rater)
    head, head_paths, seals = _head(study)
    reading = read_study(work_tree_study(study.root, plan))
    checked = reading.validation
    written, sealed = _written(checked), _sealed(seals)
    rounds = _rounds(plan, written, sealed)
    verdicts, documents = _verdicts(study, rounds, seals)
    blind = _blind(study, plan, head_paths, documents)
    unblinded = {b.pass_id for b in blind if b.state != "not-blinded"}
    sheets = list(ordered(plan, _sheets(plan, rounds, written, sealed, head_paths, unblinded, seals)))
    plan_path = study.relpath(study.plan_file)
    reconciling = _reconciling(study, reading, sheets, seals, blind)
    progress = Progress(plan.study, who, study.in_git, head, plan_path in head_paths, tuple(sheets),
                        tuple(reconciling), tuple(blind), withheld_for(who, sheets, verdicts,
                                                                    [d.id for d in plan.dimensions]))
    return finish(plan, progress, plan_path)


# --------------------------------------------------------------------------- text


def _who(p: Progress) -> str:
    email = f" <{p.person.email}>" if p.person.email else ""
    if p.person.chosen_by == "--rater":
        return f"Showing {p.person.rater}'s view (--rater)"
    if p.person.rater:
        return f"You are {p.person.rater}{email} (your git e-mail)"
    return f"You are the study lead: your git e-mail{email or ' (unset)'} is no rater's in the plan"


def _table(plan: Plan, sheets: Sequence[SheetProgress]) -> list[str]:
    """Per (round, amendment): one row per rater, one column per pass."""
    groups: dict[tuple[str, str | None], list[SheetProgress]] = {}
    for s in sheets:
        groups.setdefault((s.sheet.round_id, s.sheet.amendment), []).append(s)
    out = []
    for (round_id, amendment), group in groups.items():
        passes = list(dict.fromkeys(s.sheet.pass_id for s in group))
        title = f"amendment {amendment}, round {round_id}" if amendment else f"round {round_id}"
        header = "  " + f"{'rater':20}" + "".join(f"{p:14}" for p in passes)
        out += ["", f"Sheets, {title}:", header.rstrip()]
        for r in plan.raters:
            cells = {s.sheet.pass_id: s.state for s in group if s.sheet.rater == r.id}
            name = r.id + ("" if r.required else " (optional)")
            out.append(("  " + f"{name:20}" + "".join(f"{cells.get(p, '-'):14}" for p in passes)).rstrip())
    return out


def _rest(p: Progress) -> list[str]:
    out = []
    if p.blind:
        out += ["", "Blind passes:"]
        out += [f"  {b.pass_id}: {b.state}" + (f"; unblind once {', '.join(b.unsealed)} sealed" if b.unsealed
                                                else "") for b in p.blind]
    if p.reconciling:
        out += ["", "Reconciliation of flagged cells (rows still due):"]
        for r in p.reconciling:
            where = f"{r.pass_id}/{r.round_id}" + (f" of amendment {r.amendment}" if r.amendment else "")
            rows = "; ".join(f"{d.rater} {d.cell} ({d.state})" for d in r.due) or "none: every row is in"
            out.append(f"  {where} ({r.file}, {r.flagged} flagged): {rows}")
    for v in p.verdicts:
        out += ["", f"Verdict, round {v.round_id}: {v.verdict}"] + [f"  - {why}" for why in v.not_ready]
        for a, verdict, why in v.amendments:
            out += [f"  amendment {a}: {verdict}"] + [f"    - {w}" for w in why]
    return out


def render_text(plan: Plan, p: Progress) -> str:
    where = (f"HEAD {p.head[:10]}" if p.head else "no commit yet") if p.git else "not a git repository"
    out = [f"aoven-git status: {p.study} ({where})", _who(p)]
    out += _table(plan, p.sheets) + _rest(p)
    nxt = p.next
    out += ["", f"Next for {p.person.name}: {nxt.command}" if nxt else f"Next for {p.person.name}: nothing "
            "to run now"]
    if nxt:
        out.append(f"  {nxt.why}")
    others = [s for s in p.steps if s is not nxt]
    if others:
        out += ["Then, or waiting on others:"] + [f"  - {s.why}" + (f" (`{s.command}`)" if s.command and
                                                                 "`" not in s.why else "") for s in others]
    return "\n".join(out) + "\n"


@click.command("status")
@study_options
@click.option("--rater", default=None, help="Show this rater's view (default: the rater whose e-mail is your "
              "git identity, else the study lead's).")
@format_option("text", "json")
def command(study: Study, rater: str | None, fmt: str) -> int:
    """Where every sheet stands, what blocks the verdict, and the next command to run."""
    progress = gather(study, rater)
    if fmt == "json":
        click.echo(json.dumps(progress.as_dict(), indent=2, ensure_ascii=False, allow_nan=False))
    else:
        click.echo(render_text(study.plan, progress), nl=False)
    return 0
