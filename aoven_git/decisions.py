"""The plan's decision table read against its evaluated criteria (docs/statistics.md,
"Decisions").

Rows are read in order. A row is *taken* when every criterion it names holds; it *fails* when at
least one of them fails (definitely: the outcome cannot change); otherwise — some criterion
undecided or contested, none failing — it *blocks*: a later row may only be taken when every row
before it definitely fails, so the decision is then undecided (or contested, when every criterion
that blocks is contested) and names the blocking criteria. `otherwise` is the last row and is
taken when every row before it fails. A study that is not ready (the seed's readiness rules) has
no decision at all.

Pure: model data in, `model.Decision` out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from aoven_git.model import CriterionResult, Decision, DecisionRow, Plan

RowOutcome = Literal["taken", "fails", "blocked", "not-reached"]


def row_outcome(row: DecisionRow, results: Mapping[str, CriterionResult]) -> RowOutcome:
    """taken (every criterion holds; `otherwise` always), fails (one fails), else blocked.
    A criterion the results do not know counts as undecided."""
    if row.otherwise:
        return "taken"
    outcomes = [results[c].outcome if c in results else "undecided" for c in row.criteria]
    if any(o == "fails" for o in outcomes):
        return "fails"
    return "taken" if all(o == "holds" for o in outcomes) else "blocked"


def blocking(row: DecisionRow, results: Mapping[str, CriterionResult]) -> tuple[str, ...]:
    """The criteria of a blocked row that neither hold nor fail, in the row's order."""
    return tuple(c for c in row.criteria if c not in results or results[c].outcome not in ("holds", "fails"))


def decide(plan: Plan, results: Sequence[CriterionResult], ready: bool,
           reasons: Sequence[str] = ()) -> Decision:
    """The first row taken, provided every earlier row fails; `reasons` (when not `ready`) say
    why no decision is made."""
    if not ready:
        return Decision("not-ready", reasons=tuple(reasons),
                        rows=tuple("not-reached" for _ in plan.decisions))
    by_id = {r.id: r for r in results}
    outcomes: list[RowOutcome] = []
    for number, row in enumerate(plan.decisions, start=1):
        outcome = row_outcome(row, by_id)
        outcomes.append(outcome)
        if outcome == "fails":
            continue
        rest: list[RowOutcome] = ["not-reached"] * (len(plan.decisions) - number)
        if outcome == "taken":
            return Decision("decided", row.then, number, (), _taken_reasons(plan, by_id, number),
                            (*outcomes, *rest))
        stuck = blocking(row, by_id)
        contested = all(c in by_id and by_id[c].outcome == "contested" for c in stuck)
        states = [f"{c} is {by_id[c].outcome if c in by_id else 'unknown'}" for c in stuck]
        why = f"row {number} ({row.then}) can be neither taken nor passed over: {', '.join(states)}"
        return Decision("contested" if contested else "undecided", None, None, stuck, (why,),
                        (*outcomes, *rest))
    return Decision("undecided", reasons=("no row of the decision table can be taken",),
                    rows=tuple(outcomes))


def _taken_reasons(plan: Plan, by_id: Mapping[str, CriterionResult], number: int) -> tuple[str, ...]:
    """Each earlier row with the criteria that fail it, then the row taken."""
    out = []
    for i, row in enumerate(plan.decisions[: number - 1], start=1):
        failing = [c for c in row.criteria if c in by_id and by_id[c].outcome == "fails"]
        out.append(f"row {i} ({row.then}) fails: {', '.join(failing)} fail{'s' if len(failing) == 1 else ''}")
    row = plan.decisions[number - 1]
    if row.otherwise:
        out.append(f"row {number} (otherwise): {row.then}")
    else:
        out.append(f"row {number} ({row.then}): {', '.join(row.criteria)} hold")
    return tuple(out)
