"""The plan's self-audit (check-plan): transition coverage by dimensions and probing by questions.

The original study published a coverage claim that was false; this makes such claims checkable
from the plan itself. Only the main question set probes: hold-out questions exist to test
refinements and are written later.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from aoven_git.model import Plan

PLACEHOLDER = re.compile(r"^\s*\(?\s*(to be written|tbd|todo)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Coverage:
    uncovered_transitions: list[int]
    multiply_covered: dict[str, list[str]]
    unprobed_transitions: list[int]
    unique_probes: dict[str, str]
    probes: dict[str, list[str]]
    false_claims: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (
            self.uncovered_transitions
            or self.multiply_covered
            or self.unprobed_transitions
            or self.false_claims
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "uncovered_transitions": self.uncovered_transitions,
            "multiply_covered": self.multiply_covered,
            "unprobed_transitions": self.unprobed_transitions,
            "unique_probes": self.unique_probes,
            "probes": self.probes,
            "false_claims": self.false_claims,
            "warnings": self.warnings,
        }


def audit(plan: Plan) -> Coverage:
    covered: dict[int, list[str]] = {t.id: [] for t in plan.transitions}
    for d in plan.dimensions:
        for t in d.transitions:
            covered.setdefault(t, []).append(d.id)
    probes: dict[int, list[str]] = {t.id: [] for t in plan.transitions}
    for q in plan.questions:
        for t in q.expects:
            probes.setdefault(t, []).append(q.id)
    unique = {str(t): qs[0] for t, qs in probes.items() if len(qs) == 1}
    false_claims = []
    for t, q in sorted(((plan.claims or {}).get("unique_probes") or {}).items(), key=lambda kv: int(kv[0])):
        actual = probes.get(int(t), [])
        if actual != [q]:
            if not actual:
                why = f"no question probes #{t}"
            elif q not in actual:
                why = f"{q} does not probe #{t} (probed by {', '.join(actual)})"
            else:
                why = f"#{t} is also probed by {', '.join(x for x in actual if x != q)}"
            false_claims.append({"transition": t, "question": q, "probed_by": actual, "reason": why})
    # `init` writes placeholders for the hold-out questions; they must be real before scoring
    # starts, because the plan (hold-out included) is locked at the first seal.
    warnings = [
        f"question {q.id} has no real text yet ({q.text.strip() or 'empty'}): write it before the first seal"
        for q in (*plan.questions, *plan.holdout)
        if not q.text.strip() or PLACEHOLDER.search(q.text)
    ]
    return Coverage(
        uncovered_transitions=[t for t, ds in covered.items() if not ds],
        multiply_covered={str(t): ds for t, ds in covered.items() if len(ds) > 1},
        unprobed_transitions=[t for t, qs in probes.items() if not qs],
        unique_probes=unique,
        probes={str(t): qs for t, qs in probes.items()},
        false_claims=false_claims,
        warnings=warnings,
    )
