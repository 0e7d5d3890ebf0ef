"""verify-seal's report: the seals, reveals, timeline and pending sheets of a judged history, and
the two entry points that run the rules (docs/sealing.md, "Violations").

`check` judges a whole history (verify-seal, the report); `check_staged` judges the one commit the
pre-commit hook is asked to allow, with the same rules plus `unsealed_readers`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from aoven_git.history import STAGED, History
from aoven_git.ledger import Ledger, Plaintext, SheetRecord
from aoven_git.model import Plan, Seal, SheetId, Violation
from aoven_git.protocol_events import protocol_events
from aoven_git.seal_rules import findings, joined, judge, unsealed_readers
from aoven_git.withdrawal_rules import withdrawals


@dataclass(frozen=True)
class SheetSeal:
    seal: Seal
    revealed: str | None = None  # commit of the first reveal (digest seals)

    def as_dict(self) -> dict[str, Any]:
        s = self.seal
        out = {"rater": s.rater, "pass": s.pass_id, "round": s.round_id, "commit": s.commit,
               "kind": s.kind, "path": s.path, "revealed": self.revealed}
        return {**out, "amendment": s.amendment} if s.amendment else out


@dataclass
class SealReport:
    commit: str | None
    seals: list[SheetSeal] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    pending: list[SheetId] = field(default_factory=list)
    forced_reveals: list[dict[str, str]] = field(default_factory=list)
    #: (commit, rater, amendment) needing a signature; the amendment is the sheet's (None: the study's)
    to_sign: list[tuple[str, str, str | None]] = field(default_factory=list)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    optional: frozenset[str] = frozenset()  # raters whose violations exclude them instead of blocking
    git_calls: int = 0
    plan: Plan | None = None  # the plan the history was judged by (as of the first seal)
    signers_blob: bytes | None = None  # the allowed-signers file as of the first seal
    first_seal: str | None = None  # the commit whose plan the history is judged by
    reconciliation_paths: list[str] = field(default_factory=list)  # every one history has seen
    ledger: Any = field(default=None, repr=False)  # the judged history (for attribution; not reported)
    rows: list[dict[str, Any]] = field(default_factory=list)  # reconciliation rows and their authors
    unattributed: list[dict[str, Any]] = field(default_factory=list)  # rows not their rater's own
    withdrawals: list[dict[str, Any]] = field(default_factory=list)  # withdrawn raters (withdrawal_rules)
    protocol_events: list[dict[str, Any]] = field(default_factory=list)  # deviations (protocol_events.py)
    anchors: list[Any] | None = None  # time-stamp tokens (timestamps.Anchor) when the plan pins authorities

    @property
    def blocking(self) -> list[Violation]:
        return [v for v in self.violations if v.rater is None or v.rater not in self.optional]

    @property
    def excluded(self) -> dict[str, list[str]]:
        """Optional raters with violations: their sheets are left out of agreement and consensus."""
        out: dict[str, list[str]] = {}
        for v in self.violations:
            if v.rater is not None and v.rater in self.optional:
                out.setdefault(v.rater, [])
                if v.code not in out[v.rater]:
                    out[v.rater].append(v.code)
        return out

    @property
    def ok(self) -> bool:
        return not self.blocking

    @property
    def status(self) -> Literal["complete", "pending", "violated"]:
        if self.blocking:
            return "violated"
        return "pending" if self.pending else "complete"

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "status": self.status,
            "commit": self.commit,
            "seals": [s.as_dict() for s in self.seals],
            "violations": [v.as_dict() for v in self.violations],
            "excluded_raters": [{"rater": r, "codes": c} for r, c in self.excluded.items()],
            "pending": [_sheet_dict(p) for p in self.pending],
            "forced_reveals": self.forced_reveals,
            "timeline": self.timeline,
            "reconciliation_rows": self.rows,
            "unattributed_rows": self.unattributed,
            "withdrawals": self.withdrawals,
            "protocol_events": self.protocol_events,
            **({"timestamps": [a.as_dict() for a in self.anchors]} if self.anchors is not None else {}),
        }


def _sheet_dict(sheet: SheetId) -> dict[str, str]:
    out = {"rater": sheet.rater, "pass": sheet.pass_id, "round": sheet.round_id}
    return {**out, "amendment": sheet.amendment} if sheet.amendment else out


def _reveals(led: Ledger, rec: SheetRecord) -> list[int]:
    """Commits that first commit a digest-sealed sheet's plaintext (its reveals)."""
    if rec.kind != "digest":
        return []
    out = set()
    for cp in rec.score_paths:
        present = 0
        for i, n in enumerate(led.nodes):
            if cp in n.state:
                present |= 1 << i
        for i in led.origins(cp, "add"):
            if not any(led.hist.anc[q] & present for q in led.nodes[i].parents):
                out.add(i)
    return sorted(out)


def _premature_reveal(led: Ledger, node: int, rec: SheetRecord) -> list[str]:
    """Required raters who had not sealed an overlapping pass when this reveal was committed (a
    forced reveal, whatever its message says)."""
    for pt, missing in unsealed_readers(led, node):
        if pt.path in rec.score_paths:
            return missing
    return []


def _event(led: Ledger, node: int, what: str, sid: SheetId) -> dict[str, Any]:
    return {"commit": led.nodes[node].sha, "event": what, "rater": sid.rater or None,
            "pass": sid.pass_id, "round": sid.round_id, "amendment": sid.amendment,
            "author": led.nodes[node].email}


def _seals_and_timeline(led: Ledger, report: SealReport) -> None:
    timeline: list[tuple[int, dict[str, Any]]] = []
    for sid in sorted(led.sheets, key=lambda s: (led.sheets[s].primary, str(s))):
        rec = led.sheets[sid]
        reveals = _reveals(led, rec)
        for i in reveals:
            report.to_sign.append((led.nodes[i].sha, sid.rater, sid.amendment))
            timeline.append((i, _event(led, i, "reveal", sid)))
            early = _premature_reveal(led, i, rec)
            if early:  # from ancestry, never from what the commit message claims
                report.forced_reveals.append({"rater": sid.rater, "pass": sid.pass_id, "round": sid.round_id,
                                              "commit": led.nodes[i].sha, "unsealed": early})
        for p in rec.points:
            report.to_sign.append((led.nodes[p].sha, sid.rater, sid.amendment))
            timeline.append((p, _event(led, p, f"{rec.kinds[p]}-seal", sid)))
        seal = Seal(sid.rater, sid.pass_id, sid.round_id, led.nodes[rec.primary].sha, rec.kind,  # type: ignore[arg-type]
                    rec.path, sid.amendment)
        report.seals.append(SheetSeal(seal, led.nodes[reveals[0]].sha if reveals else None))
    for pt in led.plaintext:
        if pt.kind == "reconciliation":
            sid = SheetId("", pt.pass_id, pt.round_id)
            timeline.append((pt.node, _event(led, pt.node, "reconciliation", sid)))
    timeline.sort(key=lambda t: (t[0], t[1]["event"], t[1]["rater"] or ""))
    report.timeline = [e for _, e in timeline]


def _pending(led: Ledger) -> list[SheetId]:
    """Required raters' sheets with no seal: every pass of every round in play, and every sheet of
    an amendment someone has started (an amendment nobody touched is nobody's debt)."""
    rounds = {led.plan.main_round.id, *(s.round_id for s in led.sheets),
              *(pt.round_id for pt in led.plaintext)}
    started = {s.amendment for s in led.sheets if s.amendment}
    scopes: list[tuple[str | None, tuple[str, ...]]] = [(None, tuple(p.id for p in led.plan.passes))]
    scopes += [(a.id, a.passes) for a in led.plan.amendments if a.id in started]
    gone = set(withdrawals(led))  # a withdrawn rater is no longer waited for
    return [SheetId(r.id, p, rnd.id, a) for a, passes in scopes for rnd in led.plan.rounds
            if rnd.id in rounds for p in passes for r in led.plan.required_raters
            if r.id not in gone and SheetId(r.id, p, rnd.id, a) not in led.sheets]


def _scope_dict(pass_id: str, round_id: str, amendment: str | None) -> dict[str, str]:
    out = {"pass": pass_id, "round": round_id}
    return {**out, "amendment": amendment} if amendment else out


def _withdrawals(led: Ledger) -> list[dict[str, Any]]:
    """Each withdrawal with its commit, what it excludes (the rater's sealed sheets of passes not
    complete at that commit), what it keeps, and the reveals before it (it may be outcome-driven)."""
    out = []
    for rater, w in withdrawals(led).items():
        entry = w.entry if isinstance(w.entry, dict) else {}
        sealed = sorted((s for s in led.sheets if w.excludes(s)), key=str)
        out.append({
            "rater": rater, "reason": str(entry.get("reason") or ""), "category": entry.get("category"),
            "commit": led.nodes[w.node].sha, "author": led.nodes[w.node].email,
            "excluded": [_scope_dict(s.pass_id, s.round_id, s.amendment) for s in sealed],
            "kept": [_scope_dict(*k) for k in w.kept],
            "after_reveal": [{**_scope_dict(p, r, a), "commit": led.nodes[n].sha}
                             for p, r, a, n in w.after_reveal],
        })
    return out



def check(head_plan: Plan, hist: History, plan_path: str) -> SealReport:
    """Every rule over the history (signatures are checked by sealing.py: see `to_sign`)."""
    led, extra = judge(head_plan, hist, plan_path)
    report = SealReport(hist.commit, git_calls=hist.git_calls, plan=led.plan)
    report.optional = frozenset(r.id for r in led.plan.raters if not r.required)
    report.violations = [v for _, v in sorted([*extra, *findings(led)], key=lambda t: t[0])]
    _seals_and_timeline(led, report)
    report.pending = _pending(led)
    report.withdrawals = _withdrawals(led)
    report.protocol_events = protocol_events(led, report.forced_reveals, report.excluded, report.violations)
    report.reconciliation_paths = sorted(p for p, r in led.roles.items() if r.kind == "reconciliation")
    report.ledger = led
    signers = led.plan.security.allowed_signers
    if led.first_seals:
        report.first_seal = led.nodes[led.frozen_node if led.frozen_node is not None
                                      else led.first_seals[0]].sha
    if signers and led.nodes:
        at = led.frozen_node if led.frozen_node is not None else len(led.nodes) - 1
        report.signers_blob = led.blob(at, signers)
    return report


def check_staged(head_plan: Plan, hist: History, plan_path: str, *,
                 forced: bool = False) -> list[Violation]:
    """The rules for the commit the hook is asked to allow (the last node of a staged history):
    the same rules as verify-seal, at that node only, plus `unsealed_readers` unless forced.
    `head_plan` is the staged plan (already parsed: its blob is not parsed again)."""
    staged_plan = hist.nodes[-1].state.get(plan_path)
    led, extra = judge(head_plan, hist, plan_path, head_blob=staged_plan.blob if staged_plan else None)
    staged = len(led.nodes) - 1
    assert led.nodes[staged].sha == STAGED
    out = [v for node, v in [*extra, *findings(led)] if node == staged]
    if not forced:
        for pt, missing in unsealed_readers(led, staged):
            out.append(Violation("unsealed-readers", pt.rater, STAGED, _premature(led, pt, missing), pt.path))
    return out


def _premature(led: Ledger, pt: Plaintext, missing: list[str]) -> str:
    from aoven_git import naming

    what = "the reconciliation" if pt.rater is None else f"{pt.rater}'s {pt.pass_id}/{pt.round_id} scores"
    head = (f"{what} cannot be committed yet: required rater(s) {joined(missing)} have not sealed an "
            f"overlapping pass in HEAD and could read them before fixing their own.")
    if pt.rater is None:
        return head + " Wait until everyone has sealed and revealed."
    sheet = SheetId(pt.rater, pt.pass_id, pt.round_id)
    args = f"--rater {pt.rater}" + ("" if pt.pass_id == led.plan.primary_pass.id else f" --pass {pt.pass_id}")
    if sheet in led.sheets and any(led.before(p, len(led.nodes) - 1) for p in led.sheets[sheet].points):
        return head + f" {pt.rater} has sealed: wait until they have too, then run `aoven-git reveal {args}`."
    seal_file = naming.seal_path(led.plan, sheet)
    return (head + f" Seal with a digest instead (`aoven-git seal {args}` commits only {seal_file}), "
            "and reveal once everyone has sealed.")


