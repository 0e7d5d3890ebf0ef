"""The sealing rules about withdrawals (docs/sealing.md, "Withdrawals"). Pure: no git, no I/O.
`seal_rules.RULES` lists them with the other rules.

A required rater who drops out would block a study forever, so the lead declares it in the plan
(`withdrawals: [{rater, reason, category}]`), the one plan change besides `amendments` allowed after
the first seal. Where the withdrawal lands is read from history, never from the plan at HEAD: the
**withdrawal commit** is the commit whose plan first lists the rater under `withdrawals`. The
rater's sheets of every pass and round not complete there (some required rater had not sealed)
leave the study; passes complete there keep their scores. A withdrawal committed after a reveal of
a pass may be outcome-driven, and is shown as such.

======================== ==================================================================
code                     rule (function)
======================== ==================================================================
withdrawal-bundled       a withdrawal commit after the first seal changes anything besides
                         `withdrawals`: another plan key or another study file
                         (`withdrawal_bundled`)
withdrawal-changed       a withdrawal entry removed or edited after its withdrawal commit
                         (`withdrawal_changed`)
======================== ==================================================================
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from aoven_git import ledger as ledger_mod
from aoven_git.frozen_rules import first_failures, plan_raw
from aoven_git.ledger import Found, Ledger
from aoven_git.model import SheetId

_v = ledger_mod.found

KEY = "withdrawals"


@dataclass(frozen=True)
class WithdrawalPoint:
    """A rater's withdrawal as history records it: the commit(s) that first list it, the entry as
    committed there, and what it does to the study."""

    rater: str
    nodes: tuple[int, ...]  # withdrawal commits (more than one only on parallel branches)
    entry: Any  # the entry as first committed (plain YAML data)
    #: (pass, round, amendment) the rater had sealed, and every required rater too, at the withdrawal
    kept: tuple[tuple[str, str, str | None], ...]
    after_reveal: tuple[tuple[str, str, str | None, int], ...]  # (pass, round, amendment, reveal node)

    @property
    def node(self) -> int:
        return self.nodes[0]

    def excludes(self, sheet: SheetId) -> bool:
        """Whether `sheet` leaves the study: the rater's, in a pass not complete at the withdrawal."""
        return sheet.rater == self.rater and (sheet.pass_id, sheet.round_id, sheet.amendment) not in self.kept


def entries(raw: Any) -> dict[str, Any]:
    """rater -> withdrawal entry of a plan's YAML data (malformed entries are the schema's to report)."""
    items = raw.get(KEY) if isinstance(raw, dict) else None
    if not isinstance(items, list):
        return {}
    out: dict[str, Any] = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("rater"), str):
            out.setdefault(item["rater"], item)
    return out


def _entries_at(led: Ledger, node: int) -> dict[str, Any]:
    found = plan_raw(led, node)
    return entries(found[1]) if found[0] == "ok" else {}


def _origins(led: Ledger) -> dict[str, list[int]]:
    """Per rater of the plan, the commits whose plan lists their withdrawal while no parent's plan
    does (an unknown rater is the plan's error to report, and withdraws nobody)."""
    out: dict[str, list[int]] = {}
    for i in led.origins(led.plan_path, "add", "modify"):
        before = [_entries_at(led, q) for q in led.nodes[i].parents]
        for rater in _entries_at(led, i):
            if led.plan.rater(rater) is not None and not any(rater in b for b in before):
                out.setdefault(rater, []).append(i)
    return {r: ledger_mod.minimal(nodes, led.hist) for r, nodes in out.items()}


def _scopes(led: Ledger) -> list[tuple[str, str, str | None]]:
    """Every (pass, round, amendment) a rater may have a sheet in."""
    plan = led.plan
    out = [(p.id, r.id, None) for r in plan.rounds for p in plan.passes]
    return out + [(p, r.id, a.id) for a in plan.amendments for r in plan.rounds for p in a.passes]


def _sealed(led: Ledger, sheet: SheetId, node: int) -> bool:
    """`sheet` has a seal not proven to come after the withdrawal commit `node` (an ancestor, or on
    a parallel branch): a withdrawal committed on a branch from an old commit and merged after the
    seals proves nothing about its order, so it cannot drop a sheet sealed meanwhile."""
    rec = led.sheets.get(sheet)
    return rec is not None and any(not led.before(node, p) for p in rec.points)


def _complete(led: Ledger, scope: tuple[str, str, str | None], node: int, gone: set[str]) -> bool:
    """Every required rater still in the study has sealed this pass at or before `node`."""
    return all(r.id in gone or _sealed(led, SheetId(r.id, *scope), node) for r in led.plan.required_raters)


def _revealed_before(led: Ledger, node: int) -> tuple[tuple[str, str, str | None, int], ...]:
    """The passes some of whose scores were readable (a reveal, a content seal, a reconciliation, a
    blind key) in a commit the withdrawal commit does not precede (an ancestor, or on a parallel
    branch merged later: not proven to come after it), each with its first such commit."""
    first: dict[tuple[str, str, str | None], int] = {}
    for pt in led.plaintext:
        if not led.at_or_before(node, pt.node):
            first.setdefault((pt.pass_id, pt.round_id, pt.amendment), pt.node)
    return tuple((*k, n) for k, n in sorted(first.items(), key=lambda t: (t[1], str(t[0]))))


def withdrawals(led: Ledger) -> dict[str, WithdrawalPoint]:
    """Every withdrawal history records, by rater, in the order of their commits (cached per ledger)."""
    cached = getattr(led, "_withdrawals", None)
    if cached is not None:
        return cached
    out: dict[str, WithdrawalPoint] = {}
    origins = sorted(_origins(led).items(), key=lambda t: t[1][0])
    for rater, nodes in origins:
        node = nodes[0]
        gone = {r for r, w in out.items() if led.at_or_before(w.node, node)}
        kept = tuple(s for s in _scopes(led) if _sealed(led, SheetId(rater, *s), node)
                     and _complete(led, s, node, gone))
        out[rater] = WithdrawalPoint(rater, tuple(nodes), _entries_at(led, node)[rater], kept,
                                     _revealed_before(led, node))
    led._withdrawals = out  # type: ignore[attr-defined]
    return out


def withdrawn_at(led: Ledger, rater: str, node: int) -> bool:
    """Whether `rater` had withdrawn at `node` (nobody waits for their seal from then on)."""
    w = withdrawals(led).get(rater)
    return w is not None and any(led.at_or_before(n, node) for n in w.nodes)


def _bundled_with(led: Ledger, node: int) -> list[str]:
    """What a withdrawal commit changes besides `withdrawals`: other plan keys, other study files."""
    from aoven_git.plan_diff import plan_differences

    others = sorted(p for p in led.events[node] if p != led.plan_path)
    now = plan_raw(led, node)
    parents = [plan_raw(led, q) for q in led.nodes[node].parents]
    if now[0] == "ok" and parents and parents[0][0] == "ok":
        old, new = parents[0][1], now[1]
        keys = [k for k in (*old, *new) if k != KEY]
        others = [str(d) for d in plan_differences(old, new, keys)] + others
    return others


def _not_before_first_seal(led: Ledger, node: int) -> bool:
    """Some first seal exists that `node` is not an ancestor of: the commit is after the first seal
    or on a branch merged beside it (from an old commit: not proven to come before any seal)."""
    return any(not led.before(node, s) for s in led.first_seals)


def withdrawal_bundled(led: Ledger) -> Iterator[Found]:
    """A withdrawal is a commit of its own: bundled with another change, the reviewer of the plan's
    one permitted edit could not see what else moved with it."""
    for w in withdrawals(led).values():
        for node in w.nodes:
            if not _not_before_first_seal(led, node):
                continue
            others = _bundled_with(led, node)
            if others:
                more = f" and {len(others) - 3} more" if len(others) > 3 else ""
                yield _v(led, node, "withdrawal-bundled", None,
                         f"the withdrawal of {w.rater} is committed together with other changes: "
                         f"{'; '.join(others[:3])}{more}. A withdrawal is a commit of its own that changes "
                         "only `withdrawals`; commit the other changes apart", led.plan_path)


def withdrawal_changed(led: Ledger) -> Iterator[Found]:
    """A withdrawal is final: removing it would bring back a rater whose sheets left the study, and
    editing it would rewrite the reason after the outcome was known."""
    for w in withdrawals(led).values():

        def change(i: int, w: WithdrawalPoint = w) -> str | None:
            now = _entries_at(led, i).get(w.rater)
            return None if now == w.entry else "removed" if now is None else "edited"

        def declared(i: int, w: WithdrawalPoint = w) -> bool:
            return any(led.at_or_before(n, i) for n in w.nodes)

        for i, what in first_failures(led, declared, change):
            yield _v(led, i, "withdrawal-changed", None,
                     f"the withdrawal of {w.rater} (declared in {led.short(w.node)}) was {what}: "
                     f"a withdrawal is final; restore its entry "
                     f"(`git show {led.short(w.node)}:{led.plan_path}`)",
                     led.plan_path)
