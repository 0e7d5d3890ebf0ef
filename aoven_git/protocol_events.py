"""The study's protocol deviations as history records them, for the report's deviations table
(docs/report.md, "Protocol deviations"). Pure: no git, no I/O; read from the judged ledger.

A reader of a pre-registered verdict must see every place the study left its protocol, when, and
whether the scores were already readable then: a change made before any reveal cannot have been
steered by the outcome; one made after the reveal of a pass may have been (Lakens 2024 asks each
deviation to be reported with its kind: unforeseen event, error, missing information, violated
assumption, falsified auxiliary hypothesis). Events, in history order:

- ``amendment``: a declared re-scoring entered the plan (its optional ``category``; its rationale
  is in the report's amendments section);
- ``withdrawal``: a required rater dropped out (its ``category``);
- ``forced-reveal``: scores committed before every required rater had sealed;
- ``optional-rater-excluded``: an optional rater's seal violations left their sheets out;
- ``plan-edit``: any other plan change after the first seal; edits of descriptive text (names,
  question wording) carry ``descriptive: true`` and are listed apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from aoven_git.frozen_rules import plan_raw
from aoven_git.ledger import Ledger
from aoven_git.model import Plan, Violation
from aoven_git.withdrawal_rules import KEY as WITHDRAWALS
from aoven_git.withdrawal_rules import withdrawals

#: plan keys whose additions are events of their own, not plan edits
OWN_EVENTS = ("amendments", WITHDRAWALS)


def revealed_before(led: Ledger, node: int) -> list[str]:
    """The passes whose scores were readable in a commit `node` does not precede (a reveal, a
    content seal, a reconciliation, a blind key): an ancestor, or a parallel branch's commit (an
    event committed on a branch from an old commit and merged after a reveal is not proven to come
    before it), as `pass` or `pass/round` (amendments: `pass (amendment a)`)."""
    main = led.plan.main_round.id
    out: dict[str, None] = {}
    for pt in sorted(led.plaintext, key=lambda p: p.node):
        if not led.at_or_before(node, pt.node):
            label = pt.pass_id if pt.round_id == main else f"{pt.pass_id}/{pt.round_id}"
            out[label + (f" (amendment {pt.amendment})" if pt.amendment else "")] = None
    return list(out)


def when(passes: Sequence[str]) -> str:
    """Where an event lies relative to the reveals, in words."""
    if not passes:
        return "before any reveal"
    return "after the reveal of " + ("pass " if len(passes) == 1 else "passes ") + ", ".join(passes)


def _event(led: Ledger, node: int | None, kind: str, what: str, category: str | None,
           **extra: Any) -> dict[str, Any]:
    after = revealed_before(led, node) if node is not None else []
    return {"kind": kind, "what": what, "commit": led.nodes[node].sha if node is not None else None,
            "when": when(after), "after_reveal": after, "category": category, "descriptive": False,
            **extra, "_node": node}


def _first_listing(led: Ledger, listed: Any) -> int | None:
    """The first commit (history order) whose plan satisfies `listed(raw)`, with no parent that does."""
    for i in led.origins(led.plan_path, "add", "modify"):
        now = plan_raw(led, i)
        if now[0] == "ok" and listed(now[1]) and not any(
                (p := plan_raw(led, q))[0] == "ok" and listed(p[1]) for q in led.nodes[i].parents):
            return i
    return None


def _amendments(led: Ledger) -> Iterator[dict[str, Any]]:
    for a in led.plan.amendments:

        def listed(raw: Any, a_id: str = a.id) -> bool:
            return any(isinstance(x, dict) and x.get("id") == a_id for x in raw.get("amendments") or [])

        node = _first_listing(led, listed)
        entry = next((x for x in (plan_raw(led, node)[1].get("amendments") or [])
                      if isinstance(x, dict) and x.get("id") == a.id), {}) if node is not None else {}
        yield _event(led, node, "amendment", f"amendment {a.id}: {a.title}", entry.get("category"))


def _withdrawals(led: Ledger) -> Iterator[dict[str, Any]]:
    for rater, w in withdrawals(led).items():
        entry = w.entry if isinstance(w.entry, dict) else {}
        yield _event(led, w.node, "withdrawal", f"rater {rater} withdrawn", entry.get("category"),
                     reason=str(entry.get("reason") or ""), rater=rater)


def _forced(led: Ledger, forced: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    index = {n.sha: i for i, n in enumerate(led.nodes)}
    for f in forced:
        unsealed = ", ".join(f.get("unsealed") or [])
        yield _event(led, index.get(str(f.get("commit"))), "forced-reveal",
                     f"{f.get('rater')}'s {f.get('pass')}/{f.get('round')} scores revealed before "
                     f"{unsealed} had sealed", None, rater=f.get("rater"))


def _excluded(led: Ledger, excluded: Mapping[str, list[str]],
              violations: Sequence[Violation]) -> Iterator[dict[str, Any]]:
    index = {n.sha: i for i, n in enumerate(led.nodes)}
    for rater, codes in excluded.items():
        first = next((index.get(v.commit) for v in violations if v.rater == rater), None)
        yield _event(led, first, "optional-rater-excluded",
                     f"optional rater {rater} excluded for {', '.join(codes)}", "error", rater=rater)


def _plan_edits(led: Ledger) -> Iterator[dict[str, Any]]:
    """Every plan change after the first seal besides amendments and withdrawals, one event per
    changed key path (descriptive text marked)."""
    from aoven_git.plan_diff import descriptive, plan_differences  # not on the hook's path

    for i in led.origins(led.plan_path, "add", "modify"):
        parents = led.nodes[i].parents
        if not parents or not led.after_first_seal(parents[0]):
            continue
        old, new = plan_raw(led, parents[0]), plan_raw(led, i)
        if old[0] != "ok" or new[0] != "ok":
            continue
        keys = [k for k in (*old[1], *new[1]) if k not in OWN_EVENTS]
        for d in plan_differences(old[1], new[1], keys):
            yield {**_event(led, i, "plan-edit", str(d), None), "descriptive": descriptive(d.path),
                   "path": d.path}


def protocol_events(led: Ledger, forced: Iterable[Mapping[str, Any]], excluded: Mapping[str, list[str]],
                    violations: Sequence[Violation]) -> list[dict[str, Any]]:
    """Every protocol event of the judged history, in history order (events with no commit last)."""
    found = [*_amendments(led), *_withdrawals(led), *_forced(led, forced),
             *_excluded(led, excluded, violations), *_plan_edits(led)]
    found.sort(key=lambda e: (e["_node"] is None, e["_node"] or 0))
    return [{k: v for k, v in e.items() if k != "_node"} for e in found]


def declared_events(plan: Plan) -> list[dict[str, Any]]:
    """Without a verified history (outside git): the deviations the plan itself declares, with no
    commit and no place relative to the reveals."""
    raw = {a.get("id"): a for a in plan.raw.get("amendments") or [] if isinstance(a, dict)}
    base = {"commit": None, "when": "not verified (no history)", "after_reveal": [], "descriptive": False}
    out = [{"kind": "amendment", "what": f"amendment {a.id}: {a.title}", **base,
            "category": (raw.get(a.id) or {}).get("category")} for a in plan.amendments]
    return out + [{"kind": "withdrawal", "what": f"rater {w.rater} withdrawn", **base, "category": w.category,
                   "reason": w.reason, "rater": w.rater} for w in plan.withdrawals]


def deviations_part(plan: Plan, seals: Mapping[str, Any] | None) -> dict[str, Any]:
    """The report's `protocol_deviations`: protocol events, and descriptive edits apart."""
    events = (seals or {}).get("protocol_events")
    if not isinstance(events, list):
        events = declared_events(plan)
    found = [dict(e) for e in events if isinstance(e, Mapping)]
    return {"events": [e for e in found if not e.get("descriptive")],
            "descriptive": [e for e in found if e.get("descriptive")]}
