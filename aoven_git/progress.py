"""Where a study stands, and what the person at the keyboard runs next (`aoven-git status`).

Pure: the command (commands/status.py) gathers everything through the readers the other commands
use — validate's work-tree check, verify-seal's seals and pending sheets, the report's NOT-READY
reasons, `disagreements`' flagged cells and the attributed consensus of the reconciliation rows —
and hands it over as plain data. This module only lays it out per rater, pass, round and
amendment and turns it into steps (docs/commands.md, "aoven-git status"). It re-decides no rule:
whether a sheet may be revealed or a key committed arrives as the raters still missing, computed
by the rules `reveal` and `unblind` apply; which of a rater's passes come first is the pass-order
rule's own reading (`pass_order_rules.earlier_sheets`). Cells are named as everywhere
(`Q6/A/D3`, `L1/TRT#2/V` with replicates).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from aoven_git.attribution import cell_consensus
from aoven_git.model import Plan, Reconciliation, SheetId
from aoven_git.reconciliation import Disagreement

SCHEMA = "aoven-git/status/1"
LEAD = "lead"
#: a sheet's life, in order: no file; a file that does not validate; a valid file; its digest
#: committed (sealed); its plaintext committed (revealed, or sealed by content)
SheetState = Literal["missing", "written", "valid", "sealed", "revealed"]
#: why a rater's row of a flagged cell does not count yet
RowState = Literal["missing", "incomplete", "uncommitted", "not-theirs"]
BlindStateName = Literal["not-blinded", "blinded", "unblinded", "invalid-key"]


@dataclass(frozen=True)
class SheetProgress:
    """One rater's sheet of one pass and round (of an amendment's re-scores when `amendment`)."""

    sheet: SheetId
    required: bool
    state: SheetState
    path: str
    #: the first validation error of a written sheet; for a sealed one, that its file is not here
    problem: str | None = None
    #: required raters who must seal first before this sealed sheet may be revealed (reveal's rule)
    reveal_waits_for: tuple[str, ...] = ()
    blind_pending: bool = False  # a blind pass not blinded yet: there is nothing to score
    #: the rater withdrew and this sheet left the study (docs/plan.md, "Withdrawals"): nobody waits for it
    withdrawn: bool = False
    #: the passes the plan orders this one after (`after`) that the rater has not sealed yet
    #: (the rule `seal` applies, docs/sealing.md, "Pass order"): score and seal those first
    after_unsealed: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        s = self.sheet
        return {"rater": s.rater, "pass": s.pass_id, "round": s.round_id, "amendment": s.amendment,
                "required": self.required, "state": self.state, "path": self.path, "problem": self.problem,
                "reveal_waits_for": list(self.reveal_waits_for)}


@dataclass(frozen=True)
class RowDue:
    rater: str
    cell: str
    state: RowState


@dataclass(frozen=True)
class Reconciling:
    """The reconciliation of one pass and round (of an amendment): the rows still to come."""

    pass_id: str
    round_id: str
    amendment: str | None
    file: str
    flagged: int
    due: tuple[RowDue, ...]
    problem: str | None = None  # why the file cannot be read or extended (fix it before any row)

    def as_dict(self) -> dict[str, Any]:
        return {"pass": self.pass_id, "round": self.round_id, "amendment": self.amendment, "file": self.file,
                "flagged": self.flagged, "problem": self.problem,
                "rows_due": [{"rater": r.rater, "cell": r.cell, "state": r.state} for r in self.due]}


@dataclass(frozen=True)
class BlindProgress:
    """A blind pass: not blinded (no corpus committed), blinded (key pending), unblinded."""

    pass_id: str
    state: BlindStateName
    unsealed: tuple[str, ...] = ()  # required raters who must seal before `unblind` (unblind's rule)
    key_file: str = ""  # where `blind` writes the key by default

    def as_dict(self) -> dict[str, Any]:
        return {"pass": self.pass_id, "state": self.state, "unsealed": list(self.unsealed)}


@dataclass(frozen=True)
class Verdict:
    """The report's verdict of a round and the NOT-READY reasons it gives (never recomputed here)."""

    round_id: str
    verdict: str
    not_ready: tuple[str, ...]
    amendments: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # (id, verdict, not_ready)

    def as_dict(self) -> dict[str, Any]:
        return {"round": self.round_id, "verdict": self.verdict, "not_ready": list(self.not_ready),
                "amendments": [{"id": a, "verdict": v, "not_ready": list(n)} for a, v, n in self.amendments]}


#: what a rater who has not sealed sees instead of a NOT-READY reason that names cells
WITHHELD_UNTIL_SEALED = ("a reason naming cells other raters scored is withheld until you have sealed "
                         "every sheet of yours (run `aoven-git status` again after your seals)")


def unsealed_sheets_of(person: Person, sheets: Sequence[SheetProgress]) -> bool:
    """Whether the rater at the keyboard still has a sheet to seal (missing, written or valid)."""
    return person.rater is not None and any(
        s.sheet.rater == person.rater and s.state in ("missing", "written", "valid") for s in sheets)


def _without_cells(reasons: Sequence[str], dimensions: Sequence[str]) -> tuple[str, ...]:
    """The reasons, each one that names a cell (`…/D3`) replaced by one withheld sentence."""
    names_cell = re.compile(r"/(?:" + "|".join(map(re.escape, dimensions)) + r")\b") if dimensions else None
    kept = [r for r in reasons if names_cell is None or not names_cell.search(r)]
    return tuple(kept) + ((WITHHELD_UNTIL_SEALED,) if len(kept) < len(reasons) else ())


def withheld_for(person: Person, sheets: Sequence[SheetProgress], verdicts: Sequence[Verdict],
                 dimensions: Sequence[str]) -> tuple[Verdict, ...]:
    """The verdicts as this person may read them: a rater who has not sealed every sheet is not
    shown the NOT-READY reasons that name cells (where others disagree: a forced reveal makes
    them readable in the repository, but status must not be the one to put them on the screen
    of a rater still scoring: docs/commands.md, "status")."""
    if not unsealed_sheets_of(person, sheets):
        return tuple(verdicts)
    return tuple(replace(v, not_ready=_without_cells(v.not_ready, dimensions),
                         amendments=tuple((a, verdict, _without_cells(why, dimensions))
                                          for a, verdict, why in v.amendments))
                 for v in verdicts)


@dataclass(frozen=True)
class Step:
    """Something to do: a command to run, or (command None) what someone else must do first."""

    why: str
    command: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"command": self.command, "why": self.why}


@dataclass(frozen=True)
class Person:
    """Who is at the keyboard: a rater of the plan, or the lead (an e-mail that is no rater's)."""

    rater: str | None
    email: str | None
    chosen_by: Literal["--rater", "git-email"]

    @property
    def name(self) -> str:
        return self.rater or LEAD

    def as_dict(self) -> dict[str, Any]:
        return {"rater": self.rater, "role": "rater" if self.rater else LEAD, "email": self.email,
                "chosen_by": self.chosen_by}


@dataclass(frozen=True)
class Progress:
    study: str
    person: Person
    git: bool
    head: str | None
    plan_committed: bool
    sheets: tuple[SheetProgress, ...]
    reconciling: tuple[Reconciling, ...]
    blind: tuple[BlindProgress, ...]
    verdicts: tuple[Verdict, ...]
    steps: tuple[Step, ...] = field(default=())

    @property
    def next(self) -> Step | None:
        """The first step with a command; None when everything left waits on someone else."""
        return next((s for s in self.steps if s.command), None)

    def as_dict(self) -> dict[str, Any]:
        nxt = self.next
        return {"schema": SCHEMA, "study": self.study, "person": self.person.as_dict(), "git": self.git,
                "head": self.head, "plan_committed": self.plan_committed,
                "sheets": [s.as_dict() for s in self.sheets],
                "reconciliation": [r.as_dict() for r in self.reconciling],
                "blind_passes": [b.as_dict() for b in self.blind],
                "verdicts": [v.as_dict() for v in self.verdicts],
                "next": nxt.as_dict() if nxt else None,
                "steps": [s.as_dict() for s in self.steps]}


# --------------------------------------------------------------------------- the state table


def scopes(plan: Plan, rounds: Sequence[str]) -> list[SheetId]:
    """Every sheet the study expects, rater by rater: each pass of each round in play, then each
    declared amendment's re-scored passes (raters in plan order)."""
    out = [SheetId(r.id, p.id, rnd) for rnd in rounds for r in plan.raters for p in plan.passes]
    out += [SheetId(r.id, p, rnd, a.id) for a in plan.amendments for rnd in rounds[:1]
            for r in plan.raters for p in a.passes]
    return out


def sheet_state(
    sheet: SheetId, *, sealed: Mapping[SheetId, Mapping[str, Any]],
    written: Mapping[SheetId, tuple[str, str | None]], default_path: str,
) -> tuple[SheetState, str, str | None]:
    """(state, path, problem) of one sheet: verify-seal's seals first (a content seal is public, so
    revealed), then the work-tree file validate checked (`written`: path and first error). A sealed
    sheet whose file is not in this work tree can only be revealed where it was sealed: said."""
    seal = sealed.get(sheet)
    if seal is not None:
        public = seal.get("kind") == "content" or bool(seal.get("revealed"))
        path = written[sheet][0] if sheet in written else default_path  # verify names the seal file
        absent = None if public or sheet in written else f"the sealed file {path} is not in this work tree"
        return ("revealed" if public else "sealed"), path, absent
    if sheet in written:
        path, problem = written[sheet]
        return ("written" if problem else "valid"), path, problem
    return "missing", default_path, None


def ordered(plan: Plan, sheets: Sequence[SheetProgress]) -> tuple[SheetProgress, ...]:
    """`sheets` with, on each sheet not sealed yet, the passes the plan orders it after that the
    same rater has not sealed (`pass_order_rules.earlier_sheets`: same round, an amendment's
    within the amendment). `seal` refuses the later pass until those are sealed, and what the
    later pass shows must not move the earlier scores, so status asks for the earlier seal first."""
    from aoven_git.pass_order_rules import earlier_sheets

    state = {s.sheet: s.state for s in sheets}
    out = []
    for s in sheets:
        if s.state in ("missing", "written", "valid") and not s.withdrawn:
            before = tuple(e.pass_id for e in earlier_sheets(plan, s.sheet)
                           if state.get(e, "missing") not in ("sealed", "revealed"))
            s = replace(s, after_unsealed=before) if before else s
        out.append(s)
    return tuple(out)


def rows_due(flagged: Sequence[Disagreement], rec: Reconciliation | None) -> tuple[RowDue, ...]:
    """Per flagged cell, each of its raters whose row does not count yet — the consensus state of
    `attribution.cell_consensus`, the one the report uses — with why: no row, a row without a
    justification or a value, a complete row not committed yet, or one committed by someone who may
    not speak for the rater (verify-seal names its author: it counts for nobody)."""
    rows = rec.rows if rec is not None else ()
    raters_of = {d.key: list(d.scores) for d in flagged}
    consensus = cell_consensus(rows, raters_of, set(raters_of))
    out = []
    for d in flagged:
        found = consensus.get(d.key)
        for rater in (found.missing if found is not None else tuple(d.scores)):
            mine = [r for r in rows if r.key == d.key and r.rater == rater]
            complete = any((r.justification or "").strip() and r.consensus is not None for r in mine)
            state: RowState = "missing" if not mine else "incomplete" if not complete else (
                "not-theirs" if any(r.attributed is False and r.author for r in mine) else "uncommitted")
            out.append(RowDue(rater, str(d.key), state))
    return tuple(out)


# --------------------------------------------------------------------------- steps


def _args(sheet: SheetId, plan: Plan) -> str:
    """The options that name a sheet, leaving out the defaults (primary pass, first round)."""
    out = f"--rater {sheet.rater}"
    primary = plan.primary_pass.id
    amendment = plan.amendment(sheet.amendment) if sheet.amendment else None
    default_pass = amendment.passes[0] if amendment and primary not in amendment.passes else primary
    if sheet.pass_id != default_pass:
        out += f" --pass {sheet.pass_id}"
    if sheet.round_id != plan.main_round.id:
        out += f" --round {sheet.round_id}"
    return out + (f" --amendment {sheet.amendment}" if sheet.amendment else "")


def sheet_step(plan: Plan, s: SheetProgress) -> Step | None:
    """What a rater does next with one of their sheets (None: nothing, it is revealed or left the
    study with its rater's withdrawal)."""
    what = f"{s.sheet.pass_id}/{s.sheet.round_id}"
    what += f" of amendment {s.sheet.amendment}" if s.sheet.amendment else ""
    args = _args(s.sheet, plan)
    if s.state == "revealed" or s.withdrawn:
        return None
    if s.blind_pending:
        return Step(f"{what}: the lead must blind pass {s.sheet.pass_id} before anyone can score it")
    if s.after_unsealed:
        first = ", ".join(s.after_unsealed)
        return Step(f"{what}: seal your {first} sheet first: the plan orders {s.sheet.pass_id} after {first} "
                    f"(`after`), so `seal` refuses {s.sheet.pass_id} until then")
    if s.state == "missing":
        return Step(f"{what}: write your scores into {s.path} (a blank sheet to start from)",
                    f"aoven-git sheet {args} -o {s.path}")
    if s.state == "written":
        return Step(f"{what}: {s.path} is not valid yet ({s.problem}); fix it and check again",
                    f"aoven-git validate {s.path}")
    if s.state == "valid":
        return Step(f"{what}: {s.path} is valid; seal it (commits only its digest)", f"aoven-git seal {args}")
    if s.reveal_waits_for:
        return Step(f"{what}: sealed; reveal once {', '.join(s.reveal_waits_for)} "
                    f"{'has' if len(s.reveal_waits_for) == 1 else 'have'} sealed (pull their seals)")
    where = f" ({s.problem}: run it in the clone that sealed it)" if s.problem else ""
    return Step(f"{what}: sealed, and everyone it waits for has sealed: reveal it{where}",
                f"aoven-git reveal {args}")


def row_steps(plan: Plan, rater: str, recs: Sequence[Reconciling]) -> list[Step]:
    """A rater's own reconciliation rows still due, one step per reconciliation file."""
    out = []
    for r in recs:
        mine = [d for d in r.due if d.rater == rater]
        if not mine:
            continue
        cells = ", ".join(d.cell for d in mine)
        if r.problem:
            out.append(Step(f"flagged cell(s) {cells} need your row, but {r.problem}: fix that first",
                            f"aoven-git validate {r.file}"))
            continue
        scope = f"--pass {r.pass_id}" + (f" --round {r.round_id}" if r.round_id != plan.main_round.id else "")
        scope += f" --amendment {r.amendment}" if r.amendment else ""
        if any(d.state == "missing" for d in mine):
            out.append(Step(f"flagged cell(s) {cells} need your row in {r.file} (a quoted justification "
                            "and the value you accept)",
                            f"aoven-git disagreements {scope} --write --rater {rater}"))
        elif any(d.state == "not-theirs" for d in mine):
            out.append(Step(f"the row(s) under your name for {cells} in {r.file} were committed by someone "
                            "else and count for nobody: check each value, edit the row, then commit it "
                            "yourself", _commit(rater, r.file)))
        elif any(d.state == "incomplete" for d in mine):
            out.append(Step(f"your row(s) for {cells} in {r.file} lack a justification or a value: "
                            "fill them in, then commit them yourself"))
        else:
            out.append(Step(f"your row(s) for {cells} in {r.file} count once you commit them yourself",
                            _commit(rater, r.file)))
    return out


def _commit(rater: str, file: str) -> str:
    """Commit only the reconciliation file (`git add` first: a new file is not taken otherwise)."""
    return f'git add {file} && git commit -m "Reconciliation: {rater}\'s own rows" -- {file}'


def rater_steps(plan: Plan, rater: str, p: Progress) -> list[Step]:
    """A rater's steps: their study sheets, their reconciliation rows, then their re-scores."""
    if not p.plan_committed:
        return [Step("the lead must commit the plan and the responses before anyone seals")]
    # reveals come last: every pass is sealed before any is revealed
    # (docs/workflow.md, "3. Each rater seals every pass")
    own = sorted((s for s in p.sheets if s.sheet.rater == rater), key=lambda s: s.state == "sealed")
    steps = [st for s in own if not s.sheet.amendment for st in [sheet_step(plan, s)] if st]
    steps += row_steps(plan, rater, [r for r in p.reconciling if not r.amendment])
    steps += [st for s in own if s.sheet.amendment for st in [sheet_step(plan, s)] if st]
    steps += row_steps(plan, rater, [r for r in p.reconciling if r.amendment])
    return steps


def lead_steps(plan: Plan, p: Progress, plan_path: str) -> list[Step]:
    """The lead's steps: commit the plan, blind and unblind, then what each rater still owes."""
    if not p.plan_committed:
        return [Step(f"commit the plan and the responses: the first seal freezes {plan_path}",
                     f'git add {plan_path} {plan.study_dir} && git commit -m "Pre-register the plan"')]
    steps = []
    for b in p.blind:
        if b.state == "not-blinded":
            steps.append(Step(f"blind pass {b.pass_id}: commit its opaque items and the key's digest",
                              f"aoven-git blind --pass {b.pass_id}"))
        elif b.state == "blinded" and b.unsealed:
            steps.append(Step(f"blind pass {b.pass_id}: unblind once {', '.join(b.unsealed)} "
                              f"{'has' if len(b.unsealed) == 1 else 'have'} sealed"))
        elif b.state == "blinded":
            steps.append(Step(f"blind pass {b.pass_id}: every required rater has sealed; commit its key",
                              f"aoven-git unblind --pass {b.pass_id} --key {b.key_file}"))
    return steps + owed(plan, p)


def owed(plan: Plan, p: Progress) -> list[Step]:
    """What each rater still has to do, as waiting steps (required raters first); nobody waits
    for a withdrawn rater (docs/plan.md, "Withdrawals")."""
    order = sorted((r for r in plan.raters if plan.withdrawal(r.id) is None), key=lambda r: not r.required)
    out = []
    for r in order:
        theirs = [s for s in rater_steps(plan, r.id, p) if s.command]
        if theirs:
            optional = "" if r.required else " (optional)"
            out.append(Step(f"waiting for {r.id}{optional}: {theirs[0].why} (`{theirs[0].command}`)"))
    return out


def finish(plan: Plan, p: Progress, plan_path: str) -> Progress:
    """`p` with the steps of the person at the keyboard, ending in `aoven-git report` once the
    report gives a verdict (or when only others' work is left, to see where it stands)."""
    rater = p.person.rater
    if not p.git:
        return replace(p, steps=(Step("not a git repository: seals, reveals and the verdict need one; create "
                                      "it, then commit the plan and the responses", "git init"),))
    steps = rater_steps(plan, rater, p) if rater else lead_steps(plan, p, plan_path)
    if rater and p.plan_committed and not any(s.command for s in steps):
        steps += [s for s in owed(plan, p) if not s.why.startswith(f"waiting for {rater}")]
    blocked = any(v.not_ready for v in p.verdicts)
    if p.plan_committed and not any(s.command for s in steps):
        why = ("every sheet is in and the report gives a verdict" if not blocked
               else "nothing is yours to do now; the report says what still blocks the verdict")
        steps.append(Step(why, "aoven-git report"))
    return replace(p, steps=tuple(steps))
