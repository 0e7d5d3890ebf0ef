"""A design's part of the report (docs/designs.md; docs/statistics.md, "Criteria", "Decisions"): the
criteria evaluated on the consensus cells, the decision table read against them, the verdict that
summarises the decision, and the document's `criteria[]`, `decision` and per-condition means.
A seed plan (no decision table) never reaches this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from aoven_git.criteria import Evaluated, Inputs, describe, evaluate_all, passes_read
from aoven_git.decisions import decide as decide_table
from aoven_git.model import CellKey, Criterion, CriterionResult, Decision, Plan
from aoven_git.reconciliation import consensus_files
from aoven_git.report_values import WITHHELD, exact_str, full, rule_entry
from aoven_git.verdict import (
    CellResolution,
    Verdict,
    VerdictName,
    average_replicates,
    blinding_pass,
    open_cell_reasons,
    retest_problems,
    terminal_message,
)

if TYPE_CHECKING:
    from aoven_git.analysis import Parts, PassAgreement


def verdict_passes(plan: Plan) -> set[str]:
    """The passes the verdict reads: the primary and its stripped pass, and with a decision
    table every pass a criterion reads."""

    stripped = blinding_pass(plan)
    read = {p for c in plan.criteria for p in passes_read(plan, c)} if plan.decisions else set()
    return {plan.primary_pass.id} | ({stripped.id} if stripped else set()) | read


@dataclass(frozen=True)
class Design:
    """A plan with a decision table (docs/statistics.md, "Criteria", "Decisions"): every
    criterion evaluated, the seed verdict behind each `seed` one, and the decision."""

    evaluated: Evaluated
    decision: Decision


def design_blockers(plan: Plan, resolutions: Mapping[str, CellResolution], round_id: str,
                    blockers: Sequence[str], previous: Mapping[str, str]) -> list[str]:
    """What withholds a decision: the seed's readiness (seals, files, pending raters, re-test
    rules) and open cells in any pass a criterion reads."""

    out = [*blockers, *retest_problems(plan, round_id, previous)]
    where = consensus_files(plan, round_id, None)
    for pass_id in (p.id for p in plan.passes if p.id in verdict_passes(plan)):
        out += open_cell_reasons(pass_id, resolutions[pass_id], where)
    return out


def decide_design(plan: Plan, resolutions: Mapping[str, CellResolution], kappas: Mapping[str, PassAgreement],
                  round_id: str, blockers: Sequence[str], seed: Verdict,
                  previous: Mapping[str, str]) -> tuple[Verdict, Design]:
    """The criteria, the decision, and the verdict that summarises it (CONTRACT of the report:
    not-ready → NOT-READY, contested → CONTESTED, undecided → INCONCLUSIVE, a row with `if:` →
    PASS, `otherwise` → FAIL). The seed evaluation of `Plan.treatment` stays for the improvement
    on an ordinal scale; the seed's extremes move into each `seed` criterion."""

    inputs = Inputs(resolutions, {p: a.counted for p, a in kappas.items()}, round_id,
                    {p: a.excluded for p, a in kappas.items()})
    evaluated = evaluate_all(plan, inputs)
    not_ready = design_blockers(plan, resolutions, round_id, blockers, previous)
    decision = decide_table(plan, evaluated.results, not not_ready, not_ready)
    name, summary = design_summary(plan, decision, not_ready)
    reasons, terminal = list(decision.reasons), False
    rounds = [r.id for r in plan.rounds]
    before = rounds[rounds.index(round_id) - 1] if rounds.index(round_id) > 0 else None
    if name == "INCONCLUSIVE" and before is not None and previous.get(before) == "INCONCLUSIVE":
        message = terminal_message(plan)
        summary, reasons, terminal = f"INCONCLUSIVE, terminal: {message}", [message, *reasons], True
    keep = seed.evaluation if not plan.scale.nominal and not not_ready else None
    verdict = replace(seed, verdict=name, summary=summary, reasons=tuple(reasons), terminal=terminal,
                      evaluation=keep, best=None, worst=None, contested=(), not_ready=tuple(not_ready))
    return verdict, Design(evaluated, decision)


def design_summary(plan: Plan, decision: Decision, not_ready: Sequence[str]) -> tuple[VerdictName, str]:
    """The verdict that summarises a decision, and the one-line summary ("Decision: adopt P1+P2
    (row 2)")."""
    if decision.status == "not-ready":
        return "NOT-READY", f"NOT-READY: {not_ready[0]}"
    if decision.status != "decided":
        name: VerdictName = "CONTESTED" if decision.status == "contested" else "INCONCLUSIVE"
        return name, f"Decision {decision.status}: blocked by {', '.join(decision.blocking)}"
    row = plan.decisions[(decision.row or 1) - 1]
    return ("FAIL" if row.otherwise else "PASS"), f"Decision: {decision.then} (row {decision.row})"


def _question_mean(cells: Mapping[CellKey, Fraction], questions: Sequence[str], condition: str,
                   dimensions: Sequence[str]) -> Fraction | None:
    """Σ over the dimensions of a question's (replicate-averaged) cells, averaged over the
    questions; None without questions or with any cell open."""
    keys = [CellKey(q, condition, d) for q in questions for d in dimensions]
    if not questions or not all(k in cells for k in keys):
        return None
    return sum((cells[k] for k in keys), Fraction(0)) / len(questions)


def condition_means(parts: Parts) -> dict[str, Fraction | None]:
    """Every condition's mean aggregate over the round's questions: the sum over the counted
    dimensions of the primary pass, a question's replicates averaged first (docs/statistics.md,
    "Replicates"); None for a condition the pass does not score or with an open cell."""
    plan, verdict = parts.plan, parts.verdict
    rnd = plan.round_(parts.round_id)
    questions = rnd.questions if rnd else ()
    cells = average_replicates(parts.resolutions[plan.primary_pass.id]).values
    return {c.id: _question_mean(cells, questions, c.id, verdict.counted)
            if c.id in plan.primary_pass.conditions and verdict.counted else None
            for c in plan.conditions}


def condition_dimension_means(parts: Parts, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For a design on an ordinal scale, each dimension row gains `mean_<condition>` (and its
    exact twin) for every condition: the mean over the round's questions of the primary pass's
    cells, replicates averaged first; None for an open cell or while withheld. A seed plan's rows
    are returned as they are (its `mean_A`/`mean_B` keys never move)."""
    plan = parts.plan
    if parts.design is None or plan.scale.nominal:
        return rows
    rnd = plan.round_(parts.round_id)
    questions = rnd.questions if rnd else ()
    ready = parts.verdict.evaluation is not None
    cells = average_replicates(parts.resolutions[plan.primary_pass.id]).values if ready else {}
    for row in rows:
        for c in (c.id for c in plan.conditions):
            mean = _question_mean(cells, questions, c, (row["id"],))
            row[f"mean_{c}"], row[f"mean_{c}_exact"] = full(mean), exact_str(mean)
    return rows


def design_headline(parts: Parts) -> dict[str, Any]:
    """`improvement` (the seed improvement of `Plan.treatment`, ordinal scales only) and every
    condition's mean; `{}` on a nominal scale, nulls while withheld."""
    plan, ev = parts.plan, parts.verdict.evaluation
    if plan.scale.nominal:
        return {"improvement": None, "improvement_exact": None, "means": {}, "means_exact": {}}
    means = condition_means(parts) if ev is not None else {c.id: None for c in plan.conditions}
    return {
        "improvement": full(ev.improvement) if ev else None,
        "improvement_exact": exact_str(ev.improvement) if ev else None,
        "means": {c: full(m) for c, m in means.items()},
        "means_exact": {c: exact_str(m) for c, m in means.items()},
    }


def design_part(parts: Parts) -> dict[str, Any]:
    """`criteria[]` and `decision` of a plan with a decision table (docs/report.md)."""
    plan, design = parts.plan, parts.design
    assert design is not None
    withheld = design.decision.status == "not-ready"
    entries = []
    for result in design.evaluated.results:
        criterion = plan.criterion(result.id)
        assert criterion is not None
        seed = design.evaluated.seeds.get(result.id)
        entries.append(criterion_entry(plan, criterion, result, seed, withheld))
    return {"criteria": entries, "decision": decision_entry(plan, design.decision)}


def criterion_entry(plan: Plan, criterion: Criterion, result: CriterionResult, seed: Verdict | None,
                    withheld: bool) -> dict[str, Any]:
    """One criterion as the document carries it; while NOT-READY its values are withheld (null)
    and its outcome is `undecided`, like the seed's rules. A `seed` criterion's `of` is its
    treatment and the baseline."""

    bound = criterion.bound
    values = {k: None for k in result.values} if withheld else result.values
    evaluation = seed.evaluation if seed is not None and not withheld else None
    rules = [rule_entry(r) for r in evaluation.rules] if evaluation is not None else []
    return {
        "id": criterion.id,
        "kind": criterion.kind,
        "text": describe(plan, criterion),
        "of": list(criterion.of) if criterion.kind != "seed" else [criterion.treatment or plan.treatment.id,
                                                                    plan.baseline.id],
        "bound": {"kind": bound.kind, "value": full(bound.value), "value_exact": exact_str(bound.value)}
        if bound else None,
        "outcome": "undecided" if withheld else result.outcome,
        "values": {k: full(v) for k, v in values.items()},
        "values_exact": {k: exact_str(v) for k, v in values.items()},
        "satisfied": {} if withheld else dict(result.satisfied),
        "require": criterion.require,
        "passes": list(result.passes),
        "reasons": [WITHHELD] if withheld else list(result.reasons),
        "extremes": {"best": result.extremes[0], "worst": result.extremes[1]}
        if result.extremes and not withheld else None,
        "rules": rules,
    }


def decision_entry(plan: Plan, decision: Decision) -> dict[str, Any]:
    """The decision and every row's outcome (1-based rows)."""
    return {
        "status": decision.status,
        "then": decision.then,
        "row": decision.row,
        "blocking": list(decision.blocking),
        "reasons": list(decision.reasons),
        "rows": [{"row": i, "if": list(row.criteria), "then": row.then, "otherwise": row.otherwise,
                  "outcome": outcome}
                 for i, (row, outcome) in enumerate(zip(plan.decisions, decision.rows, strict=True), 1)],
    }
