"""The pre-registered rules of the verdict, evaluated on one fully resolved set of cells.

Steps 3–5 of docs/statistics.md ("The verdict, step by step"): the aggregate of each response
over the counted dimensions, the per-condition means and the improvement, then the rule
families — :func:`improvement_rules`, :func:`questions_rules` and :func:`tolerance_rules` (load
and regression) — every one built by :func:`rule_pair`, the single constructor of a pass rule and
its mirrored failing twin. :func:`evaluate` ties them together; verdict.py decides which cells it
is given (blinding, consensus, contested extremes) and when no verdict may be given at all.

Exact fractions throughout and no numpy, like verdict.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Literal

from aoven_git.model import CellKey, Plan
from aoven_git.numfmt import brief, brief_percent, brief_percent_near

Outcome = Literal["met", "not-met", "not-evaluable"]
DecidedVerdict = Literal["PASS", "FAIL", "INCONCLUSIVE"]


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class DimensionResult:
    id: str
    name: str
    kind: str
    load: bool
    counted: bool
    mean_a: Fraction | None
    mean_b: Fraction | None

    @property
    def delta(self) -> Fraction | None:
        if self.mean_a is None or self.mean_b is None:
            return None
        return self.mean_b - self.mean_a


@dataclass(frozen=True)
class QuestionResult:
    id: str
    aggregate_a: Fraction
    aggregate_b: Fraction
    improved_dimensions: int
    improves: bool


@dataclass(frozen=True)
class Evaluation:
    verdict: DecidedVerdict
    mean_a: Fraction
    mean_b: Fraction
    improvement: Fraction | None
    needed_dimensions: int
    dimensions: tuple[DimensionResult, ...]
    questions: tuple[QuestionResult, ...]
    rules: tuple[RuleResult, ...]
    reasons: tuple[str, ...]


# --------------------------------------------------------------------------- rule families


@dataclass(frozen=True)
class RuleResult:
    id: str
    kind: Literal["pass", "fail"]
    text: str
    value: Fraction | None
    threshold: Fraction
    outcome: Outcome  # for a fail rule, "met" means the failing condition holds
    reason: str | None = None
    sentence: str | None = None  # why it matters for the verdict, when it does


def at_least(value: Fraction, threshold: Fraction) -> bool:
    return value >= threshold


def at_most(value: Fraction, threshold: Fraction) -> bool:
    return value <= threshold


def rule_pair(
    *,
    id: str,
    value: Fraction | None,
    threshold: Fraction,
    holds: Callable[[Fraction, Fraction], bool],
    texts: tuple[str, str | None],
    sentences: tuple[str, str] = ("", ""),
    fail_threshold: Fraction | None = None,
    not_evaluable: str | None = None,
    impossible: str | None = None,
) -> list[RuleResult]:
    """A pass rule ``pass.<id>`` and its failing twin ``fail.<id>``, mirrored.

    The pass rule is met when ``holds(value, threshold)``; the twin is the same condition negated
    at ``fail_threshold`` (default: the same threshold), so its "met" means the failing
    condition holds — improvement ≥ 20 % mirrors to improvement < 10 %, Δ ≤ 0.5 to Δ > 0.5.
    ``texts`` are the two rules' wording (no twin when the second is ``None``); ``sentences`` say
    why PASS is missed and why FAIL holds, and are kept only when that happens. A rule that
    ``not_evaluable`` (with the reason) makes PASS impossible, with ``impossible`` as the
    sentence's detail (default: the reason); its twin is not evaluable either.
    """
    fail_at = threshold if fail_threshold is None else fail_threshold
    pass_text, fail_text = texts
    if not_evaluable is not None or value is None:
        why = not_evaluable or "the rule has no value"
        out = [RuleResult(f"pass.{id}", "pass", pass_text, value, threshold, "not-evaluable", why,
                          f"PASS is impossible: {impossible or why}")]
        if fail_text is not None:
            out.append(RuleResult(f"fail.{id}", "fail", fail_text, value, fail_at, "not-evaluable", why))
        return out
    met = holds(value, threshold)
    out = [RuleResult(f"pass.{id}", "pass", pass_text, value, threshold, "met" if met else "not-met",
                      None, None if met else sentences[0])]
    if fail_text is not None:
        failing = not holds(value, fail_at)
        out.append(RuleResult(f"fail.{id}", "fail", fail_text, value, fail_at,
                              "met" if failing else "not-met", None, sentences[1] if failing else None))
    return out


def improvement_rules(plan: Plan, improvement: Fraction | None) -> list[RuleResult]:
    """Improvement ≥ the pass line, mirrored by improvement < the fail line."""
    pass_at, fail_at = plan.rules.pass_.improvement, plan.rules.fail.improvement
    texts = (f"improvement ≥ {brief_percent(pass_at)}", f"improvement < {brief_percent(fail_at)}")
    if improvement is None:
        why = f"mean {plan.baseline.id} aggregate is 0, so improvement is undefined"
        return rule_pair(id="improvement", value=None, threshold=pass_at, fail_threshold=fail_at,
                         holds=at_least, texts=texts, not_evaluable=why)
    missed = (
        f"improvement {brief_percent_near(improvement, pass_at)} is below the "
        f"{brief_percent(pass_at)} needed to pass"
        + (f" (but not below the {brief_percent(fail_at)} fail line)" if improvement >= fail_at else "")
    )
    failing = f"improvement {brief_percent_near(improvement, fail_at)} is below {brief_percent(fail_at)}"
    return rule_pair(id="improvement", value=improvement, threshold=pass_at, fail_threshold=fail_at,
                     holds=at_least, texts=texts, sentences=(missed, failing))


def questions_rules(
    plan: Plan, questions: Sequence[QuestionResult], need: int, counted: int
) -> list[RuleResult]:
    """Enough questions improve on enough counted dimensions (a pass rule without a twin)."""
    a, b, k = plan.baseline.id, plan.treatment.id, plan.rules.pass_.questions
    text = f"≥ {k} questions improve ({b} < {a}) on ≥ {need} of {counted} counted dimensions"
    if not counted:
        return rule_pair(id="questions", value=None, threshold=Fraction(k), holds=at_least,
                         texts=(text, None), not_evaluable="no dimension counts toward the verdict")
    improving = sum(1 for q in questions if q.improves)
    extra = f" (the round has only {len(questions)})" if len(questions) < k else ""
    missed = (f"only {improving} of {len(questions)} questions improve on ≥ {need} "
              f"of {counted} counted dimensions; {k} needed{extra}")
    return rule_pair(id="questions", value=Fraction(improving), threshold=Fraction(k), holds=at_least,
                     texts=(text, None), sentences=(missed, ""))


def tolerance_rules(
    plan: Plan, dimensions: Sequence[DimensionResult], excluded: Mapping[str, str]
) -> list[RuleResult]:
    """Mean B − mean A ≤ the tolerance, mirrored by > it: for every load dimension, then for
    every epistemic dimension (regression)."""
    by_id = {r.id: r for r in dimensions}
    rules = plan.rules.pass_
    out: list[RuleResult] = []
    for d in plan.load_dimensions:
        out += _tolerance_pair(plan, d, by_id.get(d), excluded, "load", rules.load_tolerance)
    for dim in plan.dimensions:
        if dim.kind == "epistemic":
            out += _tolerance_pair(plan, dim.id, by_id.get(dim.id), excluded, "regression",
                                   rules.regression_tolerance)
    return out


def _tolerance_pair(
    plan: Plan, dim_id: str, result: DimensionResult | None, excluded: Mapping[str, str],
    family: Literal["load", "regression"], tolerance: Fraction,
) -> list[RuleResult]:
    dim = plan.dimension(dim_id)
    name = f"{dim_id} ({dim.name})" if dim else dim_id
    a, b = plan.baseline.id, plan.treatment.id
    texts = (f"{name}: mean {b} − mean {a} ≤ {brief(tolerance)}",
             f"{name}: mean {b} − mean {a} > {brief(tolerance)}")
    delta = result.delta if result else None
    why = None
    if result is None:
        why = f"{dim_id} is not scored in the verdict pass {plan.primary_pass.id}"
    elif not result.counted:
        why = f"{dim_id} does not count ({excluded.get(dim_id, 'excluded by the kappa gate')})"
    elif delta is None:
        why = f"{dim_id} has cells without a resolved score"
    what = "load rises" if family == "load" else "regresses"
    sentence = f"{name} {what} by {brief(delta)} (> {brief(tolerance)})" if delta is not None else ""
    return rule_pair(
        id=f"{family}.{dim_id}", value=delta, threshold=tolerance, holds=at_most, texts=texts,
        sentences=(sentence, sentence), not_evaluable=why,
        impossible=f"the {family} rule for {dim_id} cannot be evaluated: {why}",
    )


# --------------------------------------------------------------------------- evaluate


def _mean(values: Sequence[Fraction]) -> Fraction:
    return sum(values, Fraction(0)) / len(values)


def _column_mean(values: Mapping[CellKey, Fraction], keys: Sequence[CellKey]) -> Fraction | None:
    """Mean over ``keys``, or ``None`` when any of them has no value."""
    column = [values.get(k) for k in keys]
    return _mean([x for x in column if x is not None]) if all(x is not None for x in column) else None


def dimension_results(
    plan: Plan, values: Mapping[CellKey, Fraction], questions: Sequence[str], dims: Sequence[str],
    counted: set[str],
) -> list[DimensionResult]:
    """Per-dimension means of both conditions over the round's questions."""
    a, b = plan.baseline.id, plan.treatment.id
    out = []
    for d in dims:
        dim = plan.dimension(d)
        assert dim is not None
        mean_a = _column_mean(values, [CellKey(q, a, d) for q in questions])
        mean_b = _column_mean(values, [CellKey(q, b, d) for q in questions])
        out.append(DimensionResult(d, dim.name, dim.kind, d in plan.load_dimensions, d in counted,
                                   mean_a, mean_b))
    return out


def question_results(
    plan: Plan, values: Mapping[CellKey, Fraction], questions: Sequence[str],
    counted_dims: Sequence[str], need: int,
) -> list[QuestionResult]:
    """Aggregate of each response (sum over counted dimensions) and whether the question improves:
    the treatment lower than the baseline on at least ``need`` counted dimensions."""
    a, b = plan.baseline.id, plan.treatment.id
    out = []
    for q in questions:
        agg_a = sum((values[CellKey(q, a, d)] for d in counted_dims), Fraction(0))
        agg_b = sum((values[CellKey(q, b, d)] for d in counted_dims), Fraction(0))
        improved = sum(1 for d in counted_dims if values[CellKey(q, b, d)] < values[CellKey(q, a, d)])
        out.append(QuestionResult(q, agg_a, agg_b, improved, bool(counted_dims) and improved >= need))
    return out


def _outcome(
    plan: Plan, rules: Sequence[RuleResult], improvement: Fraction | None
) -> tuple[DecidedVerdict, list[str]]:
    """FAIL if any fail rule holds, PASS if every pass rule is met, else INCONCLUSIVE; with why."""
    fails = [r for r in rules if r.kind == "fail" and r.outcome == "met"]
    pass_rules = [r for r in rules if r.kind == "pass"]
    if fails:
        return "FAIL", [r.sentence or r.text for r in fails]
    if all(r.outcome == "met" for r in pass_rules):
        line = plan.rules.pass_.improvement
        return "PASS", [f"improvement {brief_percent(improvement or Fraction(0))} (≥ {brief_percent(line)}) "
                        f"and all {len(pass_rules)} pass rules are met"]
    return "INCONCLUSIVE", [r.sentence or r.text for r in pass_rules if r.outcome != "met"]


def evaluate(
    plan: Plan,
    values: Mapping[CellKey, Fraction],
    *,
    questions: Sequence[str],
    dimensions: Sequence[str],
    counted: Iterable[str],
    excluded: Mapping[str, str] | None = None,
) -> Evaluation:
    """Aggregates, means and every rule for one fully resolved set of cells (no open cells).

    ``dimensions`` are the ones scored in the verdict pass (plan order); every
    (question, condition, counted dimension) must have a value. Pass rules come first, each
    family in evaluation order.
    """
    counted_set = set(counted)
    dims = [d for d in dimensions if plan.dimension(d) is not None]
    counted_dims = [d for d in dims if d in counted_set]
    need = math.ceil(plan.rules.pass_.dims_fraction * len(counted_dims))
    q_results = question_results(plan, values, questions, counted_dims, need)
    mean_a = _mean([q.aggregate_a for q in q_results])
    mean_b = _mean([q.aggregate_b for q in q_results])
    improvement = None if mean_a == 0 else (mean_a - mean_b) / mean_a
    dim_results = dimension_results(plan, values, questions, dims, counted_set)
    rules = [
        *improvement_rules(plan, improvement),
        *questions_rules(plan, q_results, need, len(counted_dims)),
        *tolerance_rules(plan, dim_results, excluded or {}),
    ]
    rules.sort(key=lambda r: r.kind != "pass")
    verdict, reasons = _outcome(plan, rules, improvement)
    return Evaluation(verdict, mean_a, mean_b, improvement, need, tuple(dim_results), tuple(q_results),
                      tuple(rules), tuple(reasons))


def rules_template(
    plan: Plan,
    *,
    questions: Sequence[str],
    dimensions: Sequence[str],
    counted: Iterable[str],
    excluded: Mapping[str, str] | None = None,
    reason: str,
) -> tuple[RuleResult, ...]:
    """Every rule with its text and threshold but no value, for a verdict that is withheld.

    Built by evaluating placeholder zeros and blanking the results, so the list can never
    drift from the rules :func:`evaluate` actually applies.
    """
    if not questions:
        return ()
    zeros = {
        CellKey(q, c, d): Fraction(0)
        for q in questions
        for c in (plan.baseline.id, plan.treatment.id)
        for d in dimensions
    }
    ev = evaluate(plan, zeros, questions=questions, dimensions=dimensions, counted=counted, excluded=excluded)
    return tuple(
        replace(r, value=None, outcome="not-evaluable", reason=reason, sentence=None) for r in ev.rules
    )


