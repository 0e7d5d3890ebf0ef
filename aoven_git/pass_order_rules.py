"""The sealing rule about pass order (docs/sealing.md, "Pass order"). Pure: no git, no I/O (in the
hook's staged history, naming a seal in HEAD's history asks `History.first_added`, as the other
rules' messages do). `seal_rules.RULES` lists it with the other rules; `sealing.seal` refuses by the
same reading (`unsealed_earlier`).

A plan may order a rater's own passes: `passes: [{id: layer2, …, after: [layer1]}]` says that each
rater fixes their layer-1 scores before they score layer 2 (what layer 2 shows must not move
layer 1). Git proves only ancestry, so the rule is an invariant over it, like every sealing rule:
the rater's seal of each earlier pass is a proper ancestor of **every first commit** of their sheet
of the later pass — the commits that add its score or seal file, under any accepted name, with no
earlier such commit among their ancestors (the sheet's seal points, `ledger.SheetRecord.points`).
Later commits of the sheet descend from a first one, so they are covered.

======================== ==================================================================
code                     rule (function)
======================== ==================================================================
pass-order               a rater's first commit of their sheet of a pass with `after: [P]`
                         does not have that rater's seal of P (same round) among its proper
                         ancestors (`pass_order`)
======================== ==================================================================

Decisions (documented in docs/sealing.md, "Pass order"):

* the earlier seal is the rater's sheet of P **in the same round** (and, for an amendment's
  re-scores, the amendment's sheet of P when the amendment re-scores P; else nothing is required);
* a seal in the same commit as the first commit of the later sheet proves nothing (strictly before);
* a seal of either kind counts: a digest seal or a content seal (the plaintext committed);
* a sheet a rater's withdrawal leaves out of the study (`withdrawal_rules`) is not judged: it
  counts nowhere; an optional rater's `pass-order` excludes that rater, as any violation does.
"""

from __future__ import annotations

from collections.abc import Iterator

from aoven_git import ledger as ledger_mod
from aoven_git import naming
from aoven_git.ledger import Found, Ledger, SheetRecord
from aoven_git.model import Plan, SheetId
from aoven_git.withdrawal_rules import withdrawals

_v = ledger_mod.found

CODE = "pass-order"


def earlier_sheets(plan: Plan, sheet: SheetId) -> list[SheetId]:
    """The sheets of the same rater that must be sealed before the first commit of `sheet`: its
    pass's `after` passes, in the same round. An amendment's re-scores are ordered within the
    amendment: only the `after` passes it re-scores too (the study's own sheets were sealed and
    revealed before any amendment, by design)."""
    p = plan.pass_(sheet.pass_id)
    if p is None or not p.after:
        return []
    if sheet.amendment is None:
        return [SheetId(sheet.rater, q, sheet.round_id) for q in p.after]
    scope = plan.amendment(sheet.amendment)
    passes = scope.passes if scope is not None else ()
    return [SheetId(sheet.rater, q, sheet.round_id, sheet.amendment) for q in p.after if q in passes]


def _added_at(led: Ledger, rec: SheetRecord, node: int) -> str:
    """The file of the sheet that `node` adds (the one a first commit is named by)."""
    added = (p for p in (*rec.score_paths, *rec.seal_paths) if led.events[node].get(p) == "add")
    return next(added, rec.path)


def _seal_name(led: Ledger, rec: SheetRecord, node: int) -> str:
    """The short id of the seal at `node` (in a staged history: the commit in HEAD's history that
    added it, `History.first_added`)."""
    return led.hist.first_added(node, sorted({*rec.seal_paths, *rec.score_paths}))


def _why(led: Ledger, rec: SheetRecord | None, node: int) -> str:
    """Why the seal `rec` does not precede `node`: absent, later, beside it, or the same commit."""
    if rec is None:
        return "they have not sealed it at all"
    if node in rec.points:
        return "the seal is in that very commit, which proves nothing about which came first"
    seal = f"the seal ({_seal_name(led, rec, rec.primary)})"
    if any(led.before(node, q) for q in rec.points):
        return f"{seal} was committed after it"
    return f"{seal} is on another line of history, not an ancestor of it"


def _message(led: Ledger, sid: SheetId, earlier: SheetId, node: int, path: str) -> str:
    scope = f" of amendment {sid.amendment}" if sid.amendment else ""
    return (f"{sid.rater}'s first commit of their {sid.pass_id}/{sid.round_id} sheet{scope} ({path}, "
            f"{led.short(node)}) is not preceded by their seal of {earlier.pass_id}/{earlier.round_id}: "
            f"{_why(led, led.sheets.get(earlier), node)}. The plan orders {sid.pass_id} after "
            f"{earlier.pass_id} (`after: [{earlier.pass_id}]`): seal {earlier.pass_id} first, then commit "
            f"or seal {sid.pass_id}")


def _judged(led: Ledger, sid: SheetId) -> bool:
    """Whether the rule judges `sid`: not a sheet a withdrawal left out of the study."""
    w = withdrawals(led).get(sid.rater)
    return w is None or not w.excludes(sid)


def pass_order(led: Ledger) -> Iterator[Found]:
    """`pass-order` at every first commit of a sheet whose rater's seal of an `after` pass (same
    round) is not a proper ancestor of it."""
    for sid in sorted(led.sheets, key=str):
        earlier_ids = earlier_sheets(led.plan, sid)
        if not earlier_ids or not _judged(led, sid):
            continue
        rec = led.sheets[sid]
        for earlier in earlier_ids:
            before = led.sheets.get(earlier)
            for node in rec.points:
                if before is not None and any(led.before(q, node) for q in before.points):
                    continue
                path = _added_at(led, rec, node)
                yield _v(led, node, CODE, sid.rater, _message(led, sid, earlier, node, path), path,
                         sid.amendment)


def unsealed_earlier(plan: Plan, sheet: SheetId, head_paths: set[str]) -> list[SheetId]:
    """For `seal`: the sheets of `earlier_sheets` with neither a seal file nor a score file, under
    any accepted name, in HEAD (a file in HEAD's tree was added by an ancestor of the seal commit
    about to be made, so that seal is a proper ancestor of it)."""
    wanted = earlier_sheets(plan, sheet)
    if not wanted:
        return []
    present = {c.sheet for p in head_paths if naming.inside(plan, p)
               for c in (naming.classify(plan, p),) if c.kind in ("score", "seal")}
    return [e for e in wanted if e not in present]


__all__ = ["CODE", "earlier_sheets", "pass_order", "unsealed_earlier"]
