"""The time-anchor rules of verify-seal, one function per code (docs/sealing.md, "Independent time
anchors"). Pure: they read the tokens as `timestamps.verify_token` judged them and the seal
report's timeline; `anchors.py` gathers both.

timestamp-invalid  a committed token that proves nothing for the commit it is named for: not a
                   token, a bad signature, a chain that does not reach the pinned certificate (or
                   was not valid at the token's time), an imprint of another commit (a moved token)
timestamp-missing  `required: true` and a seal, unblind or plan-freeze commit has no valid token
timestamp-changed  (the hook only) a commit that changes or deletes a committed token: tokens
                   are write-once
timestamp-order    a seal whose earliest token is later than the earliest token of another rater's
                   plaintext that the seal must precede (ancestry says one order, the clock another)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aoven_git.model import Plan, Violation
from aoven_git.seal_rules import must_precede
from aoven_git.timestamps import Anchor


@dataclass(frozen=True)
class Due:
    """A commit that needs an anchor when tokens are required, and why."""

    commit: str
    rater: str | None
    what: str  # "seal of cto's unblinded/main", "unblind of pass blinded", "plan freeze"


@dataclass(frozen=True)
class AnchorFacts:
    plan: Plan
    anchors: tuple[Anchor, ...]
    due: tuple[Due, ...]
    timeline: tuple[dict[str, Any], ...]  # verify-seal's events (seals, reveals)

    def earliest(self, commit: str) -> Anchor | None:
        """The valid anchor of `commit` with the earliest time (what the commit is proven by)."""
        valid = [a for a in self.anchors if a.valid and a.commit == commit and a.time is not None]
        return min(valid, key=lambda a: a.time or datetime.max) if valid else None


def timestamp_invalid(facts: AnchorFacts) -> list[Violation]:
    return [Violation("timestamp-invalid", None, a.commit or None,
                      f"{a.path} proves nothing for {a.commit[:10] if a.commit else 'any commit'}: {a.error}",
                      a.path)
            for a in facts.anchors if not a.valid]


def timestamp_missing(facts: AnchorFacts) -> list[Violation]:
    stamps = facts.plan.security.timestamps
    if stamps is None or not stamps.required:
        return []
    seen: set[str] = set()
    out = []
    for due in facts.due:
        if due.commit in seen or facts.earliest(due.commit) is not None:
            continue
        seen.add(due.commit)
        out.append(Violation("timestamp-missing", due.rater, due.commit,
                             f"{due.what} ({due.commit[:10]}) has no valid time-stamp token: "
                             f"run `aoven-git timestamp {due.commit[:12]}` (security.timestamps.required)"))
    return out


def _plaintext(event: dict[str, Any]) -> bool:
    return event["event"] in ("reveal", "content-seal") and bool(event["rater"])


def timestamp_order(facts: AnchorFacts) -> list[Violation]:
    out = []
    seals = [e for e in facts.timeline if e["event"].endswith("-seal") and e["rater"]]
    for pt in (e for e in facts.timeline if _plaintext(e)):
        later = facts.earliest(pt["commit"])
        if later is None or later.time is None:
            continue
        for seal in seals:
            if seal["rater"] == pt["rater"] or not _precedes(facts.plan, seal, pt):
                continue
            first = facts.earliest(seal["commit"])
            if first is not None and first.time is not None and first.time > later.time:
                out.append(Violation(
                    "timestamp-order", seal["rater"], seal["commit"],
                    f"{seal['rater']}'s seal of {seal['pass']}/{seal['round']} is anchored at "
                    f"{first.time.isoformat()}, later than {pt['rater']}'s plaintext {pt['commit'][:10]} "
                    f"(anchored at {later.time.isoformat()}) that it must precede"))
    return out


def _precedes(plan: Plan, seal: dict[str, Any], pt: dict[str, Any]) -> bool:
    from aoven_git.model import SheetId

    sid = SheetId(seal["rater"], seal["pass"], seal["round"], seal.get("amendment"))
    return sid in must_precede(plan, seal["rater"], pt["pass"], pt["round"], pt.get("amendment"))


def timestamp_changed(changes: list[tuple[str, str]]) -> list[Violation]:
    """The hook's rule over (status letter, path) of a staged commit: a token under `timestamps/`
    may be added, never modified, re-typed or deleted (a new token for the commit is another
    file; an old one proves what it proved when it was committed)."""
    from aoven_git.timestamps import TOKEN_DIR

    return [Violation("timestamp-changed", None, None,
                      f"{path} is a committed time-stamp token: tokens are write-once "
                      f"({'deleted' if status == 'D' else 'changed'} here). Restore it with "
                      f"`git checkout HEAD -- {path}`", path)
            for status, path in changes if path.startswith(f"{TOKEN_DIR}/") and status in "MDT"]


RULES: dict[str, Callable[[AnchorFacts], list[Violation]]] = {
    "timestamp-invalid": timestamp_invalid,
    "timestamp-missing": timestamp_missing,
    "timestamp-order": timestamp_order,
}


def findings(facts: AnchorFacts) -> list[Violation]:
    """Every time-anchor violation, rule by rule."""
    return [v for rule in RULES.values() for v in rule(facts)]
