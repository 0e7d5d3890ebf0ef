"""The plan's self-audit (check-plan): coverage, probing per round, and rules that can never hold.

The original study published a coverage claim that was false; this makes such claims checkable
from the plan itself. Probing is judged per round, over the questions the round actually scores
(a shortened study drops questions there), and every pass rule is checked for reachability: a
plan can load cleanly and still make PASS impossible (docs/plan.md, "check-plan").

| code | severity | meaning |
|---|---|---|
| `uncovered-transition` | error | no dimension covers the transition |
| `multiply-covered` | error | several dimensions cover the transition |
| `unprobed-transition` | error; warning in a re-test round | no question of the round expects it |
| `false-claim` | error | a `claims.unique_probes` entry that is not a unique probe of the verdict round |
| `unreachable-rule` | error | no scores whatever could meet the rule: PASS is impossible by construction |
| `placeholder-question` | warning | a question text is still a placeholder |
| `bound-never-holds` | warning | a criterion's bound no value the scale allows can meet |
| `bound-always-holds` | warning | a criterion's bound every value the scale allows meets |
| `row-never-taken` | warning | a decision row asking for a criterion whose bound never holds |
| `unused-criterion` | warning | a criterion no decision row names |
| `no-verdict` | warning | a labelled scale without criteria: nothing decides |

With criteria, the seed's rule is audited only for the treatments of `seed` criteria (none: not at
all); the criteria themselves are audited in `aoven_git/design_audit.py`.

The verdict round is the first round: the pre-registered verdict is computed on it, so its gaps
are errors. A re-test round probes with a few hold-out questions and is only warned about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from aoven_git.design_audit import criteria_findings, design_summary, seed_treatments
from aoven_git.model import Finding, Findings, Plan, Round
from aoven_git.plan import fraction_text, line_of

PLACEHOLDER = re.compile(r"^\s*\(?\s*(to be written|tbd|todo)\b", re.IGNORECASE)


@dataclass(frozen=True)
class UnreachableRule:
    """A pass rule no scores could meet; `rule` is its plan key path, `round` set when the
    rule is unreachable in one round only."""

    rule: str
    message: str
    line: int | None
    round: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "round": self.round, "line": self.line, "message": self.message}


@dataclass(frozen=True)
class RoundCoverage:
    id: str
    source: str  # "main", "holdout" or "explicit", as the plan wrote the round
    questions: tuple[str, ...]
    verdict_round: bool
    probes: dict[str, list[str]]
    unprobed_transitions: list[int]
    unique_probes: dict[str, str]
    unreachable: tuple[UnreachableRule, ...]
    findings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "questions": list(self.questions),
            "verdict_round": self.verdict_round,
            "probes": self.probes,
            "unprobed_transitions": self.unprobed_transitions,
            "unique_probes": self.unique_probes,
            "unreachable_rules": [u.as_dict() for u in self.unreachable],
            "ok": self.ok,
        }


@dataclass(frozen=True)
class Coverage:
    """The audit. The flat keys (`unprobed_transitions`, `unique_probes`, `probes`,
    `false_claims`) describe the verdict round; `rounds` has every round."""

    uncovered_transitions: list[int]
    multiply_covered: dict[str, list[str]]
    unprobed_transitions: list[int]
    unique_probes: dict[str, str]
    probes: dict[str, list[str]]
    false_claims: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rounds: tuple[RoundCoverage, ...] = ()
    unreachable: tuple[UnreachableRule, ...] = ()  # plan-wide ones; per-round ones are in `rounds`
    findings: tuple[Finding, ...] = ()  # plan-wide findings; per-round ones are in `rounds`
    design: dict[str, Any] = field(default_factory=dict)  # design_audit.design_summary

    @property
    def all_findings(self) -> tuple[Finding, ...]:
        return (*self.findings, *(f for r in self.rounds for f in r.findings))

    @property
    def all_unreachable(self) -> tuple[UnreachableRule, ...]:
        return (*self.unreachable, *(u for r in self.rounds for u in r.unreachable))

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.all_findings)

    def as_dict(self) -> dict[str, Any]:
        tagged = [(None, f) for f in self.findings] + [(r.id, f) for r in self.rounds for f in r.findings]
        return {
            "ok": self.ok,
            "uncovered_transitions": self.uncovered_transitions,
            "multiply_covered": self.multiply_covered,
            "unprobed_transitions": self.unprobed_transitions,
            "unique_probes": self.unique_probes,
            "probes": self.probes,
            "false_claims": self.false_claims,
            "warnings": self.warnings,
            "rounds": [r.as_dict() for r in self.rounds],
            "unreachable_rules": [u.as_dict() for u in self.all_unreachable],
            "findings": [{**f.as_dict(), "severity": f.severity, "round": rid} for rid, f in tagged],
            "design": self.design,
        }


# --------------------------------------------------------------------------- coverage, probes


def _transition_line(plan: Plan, transition: int) -> int | None:
    index = next((i for i, t in enumerate(plan.transitions) if t.id == transition), None)
    return line_of(plan.lines, ["transitions", index]) if index is not None else None


def _label(plan: Plan, transition: int | str) -> str:
    names = {t.id: t.name for t in plan.transitions}
    return f"#{transition} {names.get(int(transition), '?')}"


def _coverage_findings(plan: Plan, covered: dict[int, list[str]], out: Findings) -> None:
    for t, dims in covered.items():
        if not dims:
            out.error(_transition_line(plan, t), "uncovered-transition",
                      f"{_label(plan, t)} is covered by no dimension")
        elif len(dims) > 1:
            out.error(_transition_line(plan, t), "multiply-covered",
                      f"{_label(plan, t)} is covered by several dimensions: {', '.join(dims)}")


def _probes(plan: Plan, question_ids: tuple[str, ...]) -> dict[int, list[str]]:
    probes: dict[int, list[str]] = {t.id: [] for t in plan.transitions}
    for q in question_ids:
        question = plan.question(q)
        for t in question.expects if question else ():
            probes.setdefault(t, []).append(q)
    return probes


def _false_claims(plan: Plan, probes: dict[int, list[str]]) -> list[dict[str, Any]]:
    out = []
    claims = (plan.claims or {}).get("unique_probes") or {}
    for t, q in sorted(claims.items(), key=lambda kv: int(kv[0])):
        actual = probes.get(int(t), [])
        if actual == [q]:
            continue
        if not actual:
            why = f"no question probes #{t}"
        elif q not in actual:
            why = f"{q} does not probe #{t} (probed by {', '.join(actual)})"
        else:
            why = f"#{t} is also probed by {', '.join(x for x in actual if x != q)}"
        out.append({"transition": t, "question": q, "probed_by": actual, "reason": why})
    return out


def _round_probe_findings(
    plan: Plan, rnd: Round, unprobed: list[int], verdict_round: bool, out: Findings
) -> None:
    if verdict_round:
        for t in unprobed:
            out.error(_transition_line(plan, t), "unprobed-transition",
                      f"{_label(plan, t)} is probed by no question of round {rnd.id}")
    elif unprobed:
        listed = ", ".join(f"#{t}" for t in unprobed)
        out.warn(line_of(plan.lines, ["rounds", plan.rounds.index(rnd)]), "unprobed-transition",
                 f"re-test round {rnd.id} probes no question for {listed}")


def _round_coverage(
    plan: Plan, rnd: Round, verdict_round: bool
) -> tuple[RoundCoverage, list[dict[str, Any]]]:
    """One round's probes, gaps, unreachable rules; for the verdict round also the false claims."""
    probes = _probes(plan, rnd.questions)
    unprobed = [t for t, qs in probes.items() if not qs]
    out = Findings(plan.path)
    _round_probe_findings(plan, rnd, unprobed, verdict_round, out)
    false_claims = _false_claims(plan, probes) if verdict_round else []
    for claim in false_claims:
        out.error(
            line_of(plan.lines, ["claims", "unique_probes", claim["transition"]]),
            "false-claim",
            f"false claim: {claim['question']} as the unique probe of "
            f"{_label(plan, claim['transition'])}: {claim['reason']}",
        )
    unreachable = tuple(_unreachable_in_round(plan, rnd))
    for u in unreachable:
        out.error(u.line, "unreachable-rule", u.message)
    coverage = RoundCoverage(
        rnd.id,
        rnd.source,
        rnd.questions,
        verdict_round,
        {str(t): qs for t, qs in probes.items()},
        unprobed,
        {str(t): qs[0] for t, qs in probes.items() if len(qs) == 1},
        unreachable,
        out.sorted(),
    )
    return coverage, false_claims


def _placeholders(plan: Plan, out: Findings) -> list[str]:
    """`init` writes placeholders for the hold-out questions; they must be real before scoring
    starts, because the plan (hold-out included) is locked at the first seal."""
    warnings = []
    for key, questions in (("questions", plan.questions), ("holdout", plan.holdout)):
        for i, q in enumerate(questions):
            if q.text.strip() and not PLACEHOLDER.search(q.text):
                continue
            fix = ("write it, or remove the hold-out list if no re-test is planned (the report then "
                   "lists it as a deviation from the defaults)") if key == "holdout" else "write it"
            text = f"question {q.id} has no real text yet ({q.text.strip() or 'empty'}): {fix} before the " \
                   "first seal"
            warnings.append(text)
            out.warn(line_of(plan.lines, [key, i]), "placeholder-question", text)
    return warnings


# --------------------------------------------------------------------------- reachability


def max_improvement(plan: Plan) -> Fraction:
    """The largest improvement (mean A − mean B) / mean A any scores can give: every baseline
    score at the scale's top and every treatment score at its bottom, (max − min) / max.
    The scale is non-negative (docs/plan.md, "scale"), so this is at most 1."""
    return Fraction(plan.scale.max - plan.scale.min, plan.scale.max)


def _rule_line(plan: Plan, *path: str) -> int | None:
    return line_of(plan.lines, path)


def _unreachable_in_round(plan: Plan, rnd: Round) -> list[UnreachableRule]:
    k, n = plan.rules.pass_.questions, len(rnd.questions)
    if k <= n or not seed_treatments(plan):
        return []
    line = _rule_line(plan, "rules", "pass", "questions") or line_of(
        plan.lines, ["rounds", plan.rounds.index(rnd)]
    )
    return [UnreachableRule(
        "rules.pass.questions",
        f"rules.pass.questions is {k} but round {rnd.id} has {n} question{'s' if n != 1 else ''}",
        line,
        rnd.id,
    )]


def _unreachable_primary(plan: Plan) -> list[UnreachableRule]:
    """Each pass rule is evaluated on the primary pass: it must score the baseline and every
    treatment the seed's rule judges, every load dimension and every epistemic dimension (their
    tolerance rules are PASS conditions)."""
    p = plan.primary_pass
    index = plan.passes.index(p)
    out = []
    for treatment in seed_treatments(plan):
        missing = [c for c in (plan.baseline.id, treatment) if c not in p.conditions]
        if missing:
            out.append(UnreachableRule(
                "rules.pass",
                f"the primary pass {p.id} does not score {', '.join(missing)}, so no verdict can compare "
                f"{plan.baseline.id} with {treatment}",
                line_of(plan.lines, ["passes", index, "conditions"]),
            ))
    for i, d in enumerate(plan.load_dimensions):
        if d not in p.dimensions:
            out.append(UnreachableRule(
                "rules.pass.load_tolerance",
                f"load dimension {d} is not scored by the primary pass {p.id}, so its load rule "
                "(rules.pass.load_tolerance) can never be evaluated",
                line_of(plan.lines, ["load_dimensions", i]),
            ))
    for i, dim in enumerate(plan.dimensions):
        if dim.kind == "epistemic" and dim.id not in p.dimensions:
            out.append(UnreachableRule(
                "rules.pass.regression_tolerance",
                f"epistemic dimension {dim.id} is not scored by the primary pass {p.id}, so its "
                "regression rule (rules.pass.regression_tolerance) can never be evaluated",
                line_of(plan.lines, ["dimensions", i]),
            ))
    return out


def _unreachable_thresholds(plan: Plan) -> list[UnreachableRule]:
    rules, best = plan.rules, max_improvement(plan)
    scale = f"{plan.scale.min}..{plan.scale.max}"
    why = f"the best possible on scale {scale} is {fraction_text(best)} (every baseline score " \
          f"{plan.scale.max}, every treatment score {plan.scale.min})"
    out = []
    if rules.pass_.improvement > best:
        out.append(UnreachableRule(
            "rules.pass.improvement",
            f"rules.pass.improvement is {fraction_text(rules.pass_.improvement)} but {why}",
            _rule_line(plan, "rules", "pass", "improvement"),
        ))
    if rules.fail.improvement > best:
        out.append(UnreachableRule(
            "rules.fail.improvement",
            f"rules.fail.improvement is {fraction_text(rules.fail.improvement)} but {why}: "
            "every verdict would be FAIL",
            _rule_line(plan, "rules", "fail", "improvement"),
        ))
    out += _unreachable_kappa(plan)
    return out


def _unreachable_kappa(plan: Plan) -> list[UnreachableRule]:
    """Kappa is at most 1. Above that only an undefined kappa can count (`undefined: include`),
    which needs every rater constant at one score: such a dimension cannot improve, so only a
    PASS that asks for no improvement at all (none overall, and none per question or no
    improving question) stays in reach."""
    kappa, rules = plan.rules.kappa, plan.rules.pass_
    asks_nothing = rules.improvement == 0 and (rules.dims_fraction == 0 or rules.questions == 0)
    if kappa.threshold <= 1 or (kappa.undefined == "include" and asks_nothing):
        return []
    why = "so no dimension can count toward the verdict"
    if kappa.undefined == "include":
        why = "so only a dimension every rater scores constantly can count, and it cannot improve"
    return [UnreachableRule(
        "rules.kappa.threshold",
        f"rules.kappa.threshold is {fraction_text(kappa.threshold)} but kappa is at most 1, {why}",
        _rule_line(plan, "rules", "kappa", "threshold"),
    )]


def _seed_rule_unreachable(plan: Plan) -> list[UnreachableRule]:
    """The plan-wide unreachable pass rules; none when no seed rule is applied (criteria
    without a `seed` criterion decide without it)."""
    if not seed_treatments(plan):
        return []
    return _unreachable_primary(plan) + _unreachable_thresholds(plan)


def unreachable_rules(plan: Plan) -> list[UnreachableRule]:
    """Every pass rule of the plan that no scores could meet, plan-wide and per round."""
    out = _seed_rule_unreachable(plan)
    for rnd in plan.rounds:
        out += _unreachable_in_round(plan, rnd)
    return out


# --------------------------------------------------------------------------- the audit


def audit(plan: Plan) -> Coverage:
    covered: dict[int, list[str]] = {t.id: [] for t in plan.transitions}
    for d in plan.dimensions:
        for t in d.transitions:
            covered.setdefault(t, []).append(d.id)
    plan_wide = Findings(plan.path)
    _coverage_findings(plan, covered, plan_wide)
    unreachable = tuple(_seed_rule_unreachable(plan))
    for u in unreachable:
        plan_wide.error(u.line, "unreachable-rule", u.message)
    warnings = _placeholders(plan, plan_wide)
    plan_wide.extend(criteria_findings(plan))
    rounds = [_round_coverage(plan, rnd, i == 0) for i, rnd in enumerate(plan.rounds)]
    verdict, false_claims = rounds[0]
    return Coverage(
        uncovered_transitions=[t for t, ds in covered.items() if not ds],
        multiply_covered={str(t): ds for t, ds in covered.items() if len(ds) > 1},
        unprobed_transitions=verdict.unprobed_transitions,
        unique_probes=verdict.unique_probes,
        probes=verdict.probes,
        false_claims=false_claims,
        warnings=warnings,
        rounds=tuple(r for r, _ in rounds),
        unreachable=unreachable,
        findings=plan_wide.sorted(),
        design=design_summary(plan),
    )
