"""The pre-registered verdict (SPEC §7), in exact fractions over plain data.

Nothing here reads files, talks to git or imports numpy: scores come in as ``rater -> cell ->
int`` mappings and every mean, delta and threshold comparison is a :class:`~fractions.Fraction`.
That is what lets "20 % means ≥ 1/5" hold literally — a study sitting exactly on a threshold
must land on the side the plan wrote down, not on the side a float rounding error picks.

The steps follow SPEC §7 in order: resolve each cell after consensus, choose which treatment
scores count (blinding), aggregate over the counted dimensions, evaluate the pass and fail
rules, re-evaluate at both extremes of the contested cells, and refuse a verdict (NOT-READY)
while anything the rules depend on is missing. Re-test rounds (§7.8) add their own checks.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Literal

from aoven_git.errors import UsageError
from aoven_git.model import CellKey, Pass, Plan

Resolution = Literal["agreed", "consensus", "mean", "median", "contested", "missing"]
Outcome = Literal["met", "not-met", "not-evaluable"]
DecidedVerdict = Literal["PASS", "FAIL", "INCONCLUSIVE"]
VerdictName = Literal["PASS", "FAIL", "INCONCLUSIVE", "CONTESTED", "NOT-READY"]

#: How many cell ids a NOT-READY sentence names before it says "and N more".
LIST_LIMIT = 20


# --------------------------------------------------------------------------- formatting


def fmt_num(x: Fraction | int | float) -> str:
    """A number as people read it in a reason: at most 4 decimals, no trailing zeros."""
    text = f"{float(x):.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def fmt_pct(x: Fraction) -> str:
    text = f"{float(x * 100):.2f}".rstrip("0").rstrip(".")
    return ("0" if text in ("-0", "") else text) + "%"


def fmt_signed(x: Fraction) -> str:
    return ("+" if x > 0 else "") + fmt_num(x)


def _fmt_near(value: Fraction, threshold: Fraction) -> str:
    """`value` with enough digits that it never prints equal to a threshold it differs from."""
    text, digits = fmt_num(value), 4
    while value != threshold and text == fmt_num(threshold) and digits < 17:
        digits += 2
        text = f"{float(value):.{digits}f}".rstrip("0").rstrip(".")
    return text


def _cell_list(keys: Iterable[CellKey]) -> str:
    items = [str(k) for k in keys]
    if len(items) > LIST_LIMIT:
        return ", ".join(items[:LIST_LIMIT]) + f" and {len(items) - LIST_LIMIT} more"
    return ", ".join(items)


def _cells_word(n: int) -> str:
    return f"{n} contested cell{'' if n == 1 else 's'}"


# --------------------------------------------------------------------------- step 1: cells


@dataclass(frozen=True)
class ResolvedCell:
    """One cell after consensus.

    ``value`` is the score the verdict uses (``None`` while open or missing); ``options`` are
    the recorded values of a contested cell (raters' scores and any consensus alternatives),
    which step 6 evaluates at both ends.
    """

    key: CellKey
    scores: Mapping[str, int]
    flagged: bool
    resolution: Resolution
    value: Fraction | None
    options: tuple[int, ...] = ()

    @property
    def disagreement(self) -> bool:
        return len(set(self.scores.values())) > 1


@dataclass(frozen=True)
class CellResolution:
    cells: Mapping[CellKey, ResolvedCell]

    @property
    def values(self) -> dict[CellKey, Fraction]:
        return {k: c.value for k, c in self.cells.items() if c.value is not None}

    @property
    def contested(self) -> dict[CellKey, tuple[int, ...]]:
        return {k: c.options for k, c in self.cells.items() if c.resolution == "contested"}

    @property
    def flagged(self) -> list[CellKey]:
        return [k for k, c in self.cells.items() if c.flagged]

    @property
    def flagged_without_consensus(self) -> list[CellKey]:
        return [k for k, c in self.cells.items() if c.resolution == "missing" and c.flagged]

    @property
    def needs_consensus(self) -> list[CellKey]:
        """Unflagged disagreements left open because the plan says ``unflagged: require``."""
        return [k for k, c in self.cells.items() if c.resolution == "missing" and not c.flagged]


def _median(values: Sequence[int]) -> Fraction:
    s = sorted(values)
    mid = len(s) // 2
    if len(s) % 2:
        return Fraction(s[mid])
    return Fraction(s[mid - 1] + s[mid], 2)


def resolve_cells(
    scores: Mapping[str, Mapping[CellKey, int]],
    consensus: Mapping[CellKey, int | str] | None = None,
    *,
    flag_spread: int = 1,
    unflagged: str = "mean",
    alternatives: Mapping[CellKey, Iterable[int]] | None = None,
) -> CellResolution:
    """SPEC §7.1 for every cell any rater scored.

    Unanimity wins over a consensus row (a consensus can only settle a disagreement); a
    contested cell is never split (mean/median apply only to unflagged cells without any
    reconciliation entry), so its recorded values stay open for step 6.
    """
    if unflagged not in ("mean", "median", "require"):
        raise ValueError(f"unflagged must be mean, median or require, got {unflagged!r}")
    consensus = consensus or {}
    alternatives = alternatives or {}
    keys = sorted({k for per_rater in scores.values() for k in per_rater})
    out: dict[CellKey, ResolvedCell] = {}
    for key in keys:
        given = {r: int(s[key]) for r, s in scores.items() if key in s}
        values = list(given.values())
        flagged = max(values) - min(values) > flag_spread
        if len(set(values)) == 1:
            out[key] = ResolvedCell(key, given, flagged, "agreed", Fraction(values[0]))
        elif key in consensus:
            c = consensus[key]
            if c == "contested":
                options = tuple(sorted(set(values) | {int(v) for v in alternatives.get(key, ())}))
                out[key] = ResolvedCell(key, given, flagged, "contested", None, options)
            else:
                out[key] = ResolvedCell(key, given, flagged, "consensus", Fraction(int(c)))
        elif flagged or unflagged == "require":
            out[key] = ResolvedCell(key, given, flagged, "missing", None)
        elif unflagged == "mean":
            out[key] = ResolvedCell(key, given, flagged, "mean", Fraction(sum(values), len(values)))
        else:
            out[key] = ResolvedCell(key, given, flagged, "median", _median(values))
    return CellResolution(out)


# --------------------------------------------------------------------------- κ gate (exact)


def _disagreement(i: int, j: int, weights: str) -> int:
    if weights == "none":
        return int(i != j)
    if weights == "linear":
        return abs(i - j)
    if weights == "quadratic":
        return (i - j) ** 2
    raise ValueError(f"weights must be none, linear or quadratic, got {weights!r}")


def exact_kappa(
    pairs: Sequence[tuple[int, int]], *, categories: Sequence[int], weights: str
) -> Fraction | None:
    """Weighted Cohen's κ as an exact fraction, ``None`` when undefined.

    The verdict gate compares κ with the threshold exactly; agreement.py's float κ of a study
    sitting on 0.6 can come out as 0.59999…, which would silently drop a dimension. Weights
    use ranks on the full category list (SPEC §6), as agreement.py does.
    """
    cats = sorted(categories)
    rank = {c: i for i, c in enumerate(cats)}
    k, n = len(cats), len(pairs)
    if n == 0 or k < 2:
        return None
    rows, cols = [0] * k, [0] * k
    observed = 0
    # count the k×k joint table first (C speed), then weigh its at most k² distinct entries:
    # a large study has ~1500 pair×dimension tables of 1000 items each
    for (a, b), count in Counter(pairs).items():
        i, j = rank[a], rank[b]
        rows[i] += count
        cols[j] += count
        observed += count * _disagreement(i, j, weights)
    expected = sum(rows[i] * cols[j] * _disagreement(i, j, weights) for i in range(k) for j in range(k))
    if expected == 0:
        return None
    return 1 - Fraction(n * observed, expected)


def exact_pairwise_kappa(
    ratings: Mapping[str, Mapping[Hashable, int]], *, categories: Sequence[int], weights: str
) -> dict[tuple[str, str], Fraction | None]:
    """Exact κ for every rater pair over the items both scored (pairs in input order)."""
    raters = list(ratings)
    out: dict[tuple[str, str], Fraction | None] = {}
    for i, a in enumerate(raters):
        ra = ratings[a]
        for b in raters[i + 1 :]:
            rb = ratings[b]
            common = list(ra) if ra.keys() == rb.keys() else [item for item in ra if item in rb]
            both = list(zip(map(ra.__getitem__, common), map(rb.__getitem__, common), strict=True))
            out[(a, b)] = exact_kappa(both, categories=categories, weights=weights)
    return out


@dataclass(frozen=True)
class KappaGate:
    counts: bool
    value: Fraction | None  # the plan's aggregate, exact
    reason: str | None  # why it does not count (or why it counts although undefined)


def kappa_gate(
    pairs: Mapping[tuple[str, str], Fraction | None],
    *,
    threshold: Fraction,
    aggregate: str = "min",
    undefined: str = "exclude",
) -> KappaGate:
    """Does a dimension count (SPEC §6)? Aggregate exactly, then compare with the threshold.

    ``undefined: exclude`` treats any undefined pair as below the threshold; ``include``
    ignores undefined pairs, and a dimension whose every pair is undefined (raters constant
    at the same score — agreement, not noise) counts. With no pair at all nothing was
    measured, so the dimension never counts.
    """
    if not pairs:
        return KappaGate(False, None, "kappa undefined: fewer than two raters scored this pass")
    bad = [p for p, v in pairs.items() if v is None]
    good = [v for v in pairs.values() if v is not None]
    if bad and undefined == "exclude":
        names = ", ".join(f"{a}~{b}" for a, b in bad)
        return KappaGate(False, None, f"kappa undefined for {names} (treated as below {fmt_num(threshold)})")
    if not good:
        return KappaGate(
            True, None, "kappa undefined for every pair; counted because rules.kappa.undefined is include"
        )
    value = min(good) if aggregate == "min" else sum(good, Fraction(0)) / len(good)
    if value >= threshold:
        return KappaGate(True, value, None)
    return KappaGate(False, value, f"kappa {_fmt_near(value, threshold)} below {fmt_num(threshold)}")


# --------------------------------------------------------------------------- step 2: blinding


def blinding_pass(plan: Plan) -> Pass | None:
    """The stripped pass over the treatment condition, if the plan has one (the first such)."""
    t = plan.treatment.id
    return next((p for p in plan.passes if p.stripped and not p.primary and t in p.conditions), None)


def blinding_divergence(
    unblinded: Mapping[tuple[str, str], Fraction], blinded: Mapping[tuple[str, str], Fraction]
) -> Fraction | None:
    """Mean |blinded − unblinded| over the (question, dimension) pairs both passes resolved."""
    common = [k for k in unblinded if k in blinded]
    if not common:
        return None
    return sum((abs(blinded[k] - unblinded[k]) for k in common), Fraction(0)) / len(common)


@dataclass(frozen=True)
class Blinding:
    pass_id: str
    divergence: Fraction | None
    threshold: Fraction
    used: str  # the pass whose treatment scores count
    compared: int  # (question, dimension) pairs in the mean
    skipped: int  # pairs left out because a side is contested or has no score


# --------------------------------------------------------------------------- self-bias (§6)


@dataclass(frozen=True)
class SelfBias:
    rater: str
    pass_id: str
    b_worse: int  # (question, dimension) pairs where the treatment scored worse (higher)
    compared: int
    flagged: bool


def self_bias(
    scores: Mapping[str, Mapping[CellKey, int]],
    *,
    pass_id: str,
    baseline: str,
    treatment: str,
    questions: Iterable[str] | None = None,
) -> list[SelfBias]:
    """Flag a rater whose pass never scores the treatment worse than the baseline.

    A rater who never once finds B worse than A across dozens of cells is more likely
    looking for the hypothesis than at the responses; the plan asks for a re-audit.
    """
    wanted = set(questions) if questions is not None else None
    out = []
    for rater, cells in scores.items():
        worse = compared = 0
        for key, score in cells.items():
            if key.condition != treatment or (wanted is not None and key.question not in wanted):
                continue
            base = cells.get(CellKey(key.question, baseline, key.dimension))
            if base is None:
                continue
            compared += 1
            worse += score > base
        out.append(SelfBias(rater, pass_id, worse, compared, compared > 0 and worse == 0))
    return out


# --------------------------------------------------------------------------- steps 3–5


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


def _mean(values: Sequence[Fraction]) -> Fraction:
    return sum(values, Fraction(0)) / len(values)


def evaluate(
    plan: Plan,
    values: Mapping[CellKey, Fraction],
    *,
    questions: Sequence[str],
    dimensions: Sequence[str],
    counted: Iterable[str],
    excluded: Mapping[str, str] | None = None,
) -> Evaluation:
    """Steps 3–5 for one fully resolved set of cells (no open cells).

    ``dimensions`` are the ones scored in the verdict pass (plan order); every
    (question, condition, counted dimension) must have a value.
    """
    excluded = excluded or {}
    a, b = plan.baseline.id, plan.treatment.id
    rules = plan.rules
    counted_set = set(counted)
    dims = [d for d in dimensions if plan.dimension(d) is not None]
    counted_dims = [d for d in dims if d in counted_set]

    # -- step 3: aggregates and means over the round's questions ---------------------------
    agg_a = {q: sum((values[CellKey(q, a, d)] for d in counted_dims), Fraction(0)) for q in questions}
    agg_b = {q: sum((values[CellKey(q, b, d)] for d in counted_dims), Fraction(0)) for q in questions}
    mean_a, mean_b = _mean(list(agg_a.values())), _mean(list(agg_b.values()))
    improvement = None if mean_a == 0 else (mean_a - mean_b) / mean_a

    dim_results = []
    for d in dims:
        dim = plan.dimension(d)
        assert dim is not None
        col_a = [values.get(CellKey(q, a, d)) for q in questions]
        col_b = [values.get(CellKey(q, b, d)) for q in questions]
        ma = _mean([x for x in col_a if x is not None]) if all(x is not None for x in col_a) else None
        mb = _mean([x for x in col_b if x is not None]) if all(x is not None for x in col_b) else None
        dim_results.append(
            DimensionResult(d, dim.name, dim.kind, d in plan.load_dimensions, d in counted_set, ma, mb)
        )
    by_id = {r.id: r for r in dim_results}

    need = math.ceil(rules.pass_.dims_fraction * len(counted_dims))
    q_results = []
    for q in questions:
        improved = sum(1 for d in counted_dims if values[CellKey(q, b, d)] < values[CellKey(q, a, d)])
        q_results.append(
            QuestionResult(q, agg_a[q], agg_b[q], improved, bool(counted_dims) and improved >= need)
        )
    improving = sum(1 for r in q_results if r.improves)

    # -- steps 4–5: rules --------------------------------------------------------------------
    out: list[RuleResult] = []
    thr_pass, thr_fail = rules.pass_.improvement, rules.fail.improvement
    if improvement is None:
        why = f"mean {a} aggregate is 0, so improvement is undefined"
        out.append(
            RuleResult(
                "pass.improvement",
                "pass",
                f"improvement ≥ {fmt_pct(thr_pass)}",
                None,
                thr_pass,
                "not-evaluable",
                why,
                f"PASS is impossible: {why}",
            )
        )
        out.append(
            RuleResult(
                "fail.improvement",
                "fail",
                f"improvement < {fmt_pct(thr_fail)}",
                None,
                thr_fail,
                "not-evaluable",
                why,
            )
        )
    else:
        ok = improvement >= thr_pass
        sentence = (
            None
            if ok
            else (
                f"improvement {_fmt_pct_near(improvement, thr_pass)} is below the "
                f"{fmt_pct(thr_pass)} needed to pass"
                + (f" (but not below the {fmt_pct(thr_fail)} fail line)" if improvement >= thr_fail else "")
            )
        )
        out.append(
            RuleResult(
                "pass.improvement",
                "pass",
                f"improvement ≥ {fmt_pct(thr_pass)}",
                improvement,
                thr_pass,
                "met" if ok else "not-met",
                None,
                sentence,
            )
        )
        failed = improvement < thr_fail
        out.append(
            RuleResult(
                "fail.improvement",
                "fail",
                f"improvement < {fmt_pct(thr_fail)}",
                improvement,
                thr_fail,
                "met" if failed else "not-met",
                None,
                f"improvement {_fmt_pct_near(improvement, thr_fail)} is below {fmt_pct(thr_fail)}"
                if failed
                else None,
            )
        )

    k = rules.pass_.questions
    q_text = f"≥ {k} questions improve ({b} < {a}) on ≥ {need} of {len(counted_dims)} counted dimensions"
    if not counted_dims:
        why = "no dimension counts toward the verdict"
        out.append(
            RuleResult(
                "pass.questions",
                "pass",
                q_text,
                None,
                Fraction(k),
                "not-evaluable",
                why,
                f"PASS is impossible: {why}",
            )
        )
    else:
        ok = improving >= k
        extra = f" (the round has only {len(questions)})" if len(questions) < k else ""
        out.append(
            RuleResult(
                "pass.questions",
                "pass",
                q_text,
                Fraction(improving),
                Fraction(k),
                "met" if ok else "not-met",
                None,
                None
                if ok
                else f"only {improving} of {len(questions)} questions improve on ≥ {need} "
                f"of {len(counted_dims)} counted dimensions; {k} needed{extra}",
            )
        )

    def per_dimension(dim_id: str, label: str, tol: Fraction, rid: str, what: str) -> None:
        dim = plan.dimension(dim_id)
        name = f"{dim_id} ({dim.name})" if dim else dim_id
        texts = (
            f"{name}: mean {b} − mean {a} ≤ {fmt_num(tol)}",
            f"{name}: mean {b} − mean {a} > {fmt_num(tol)}",
        )
        res = by_id.get(dim_id)
        delta = res.delta if res else None
        if res is None or not res.counted or delta is None:
            if res is None:
                why = f"{dim_id} is not scored in the verdict pass {plan.primary_pass.id}"
            elif not res.counted:
                why = f"{dim_id} does not count ({excluded.get(dim_id, 'excluded by the kappa gate')})"
            else:
                why = f"{dim_id} has cells without a resolved score"
            out.append(
                RuleResult(
                    f"pass.{rid}.{dim_id}",
                    "pass",
                    texts[0],
                    delta,
                    tol,
                    "not-evaluable",
                    why,
                    f"PASS is impossible: the {label} rule for {dim_id} cannot be evaluated: {why}",
                )
            )
            out.append(RuleResult(f"fail.{rid}.{dim_id}", "fail", texts[1], delta, tol, "not-evaluable", why))
            return
        ok = delta <= tol
        sentence = f"{name} {what} by {fmt_num(delta)} (> {fmt_num(tol)})"
        out.append(
            RuleResult(
                f"pass.{rid}.{dim_id}",
                "pass",
                texts[0],
                delta,
                tol,
                "met" if ok else "not-met",
                None,
                None if ok else sentence,
            )
        )
        out.append(
            RuleResult(
                f"fail.{rid}.{dim_id}",
                "fail",
                texts[1],
                delta,
                tol,
                "not-met" if ok else "met",
                None,
                None if ok else sentence,
            )
        )

    for d in plan.load_dimensions:
        per_dimension(d, "load", rules.pass_.load_tolerance, "load", "load rises")
    for dim in plan.dimensions:
        if dim.kind == "epistemic":
            per_dimension(dim.id, "regression", rules.pass_.regression_tolerance, "regression", "regresses")

    out.sort(key=lambda r: r.kind != "pass")  # pass rules first, each group in evaluation order
    fails = [r for r in out if r.kind == "fail" and r.outcome == "met"]
    pass_rules = [r for r in out if r.kind == "pass"]
    verdict: DecidedVerdict
    if fails:
        verdict = "FAIL"
        reasons = [r.sentence or r.text for r in fails]
    elif all(r.outcome == "met" for r in pass_rules):
        verdict = "PASS"
        reasons = [
            f"improvement {fmt_pct(improvement or Fraction(0))} (≥ {fmt_pct(thr_pass)}) and all "
            f"{len(pass_rules)} pass rules are met"
        ]
    else:
        verdict = "INCONCLUSIVE"
        reasons = [r.sentence or r.text for r in pass_rules if r.outcome != "met"]
    return Evaluation(
        verdict,
        mean_a,
        mean_b,
        improvement,
        need,
        tuple(dim_results),
        tuple(q_results),
        tuple(out),
        tuple(reasons),
    )


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


def _fmt_pct_near(value: Fraction, threshold: Fraction) -> str:
    text, digits = fmt_pct(value), 2
    while value != threshold and text == fmt_pct(threshold) and digits < 15:
        digits += 2
        text = f"{float(value * 100):.{digits}f}".rstrip("0").rstrip(".") + "%"
    return text


# --------------------------------------------------------------------------- step 8: re-tests


def _version_labels(study: str) -> tuple[str, str]:
    m = re.search(r"v(\d+)\.(\d+)$", study)
    if not m:
        return (f"study {study}", "the next version")
    major, minor = int(m.group(1)), int(m.group(2))
    return (f"v{major}.{minor}", f"v{major}.{minor + 1}")


def terminal_message(plan: Plan) -> str:
    this, nxt = _version_labels(plan.study)
    return (
        f"a second inconclusive round ends the study: {this} is terminated; "
        f"{nxt} needs structural changes, not parameter tweaks or another re-test"
    )


def retest_problems(
    plan: Plan, round_id: str, previous_verdicts: Mapping[str, str] | None = None
) -> list[str]:
    """Why a re-test round may not be judged (SPEC §7.8); empty for the first round.

    A re-test is the anti-p-hacking escape hatch of an INCONCLUSIVE result: hold-out
    questions only, refinements only from the locked list, at most ``retest_cap`` of them,
    and only directly after an inconclusive round of a study that is not already terminated.
    """
    ids = [r.id for r in plan.rounds]
    if round_id not in ids:
        raise UsageError(f"unknown round {round_id!r}; the plan has: {', '.join(ids)}")
    idx = ids.index(round_id)
    if idx == 0:
        return []
    rnd = plan.rounds[idx]
    problems = []
    holdout = {q.id for q in plan.holdout}
    outside = [q for q in rnd.questions if q not in holdout]
    if outside:
        problems.append(
            f"re-test round {round_id} uses questions outside the hold-out set: {', '.join(outside)}"
        )
    listed = {r.id for r in plan.refinements}
    unknown = [r for r in rnd.refinements if r not in listed]
    if unknown:
        problems.append(
            f"re-test round {round_id} uses refinements not listed in the plan: {', '.join(unknown)}"
        )
    if idx > plan.retest_cap:
        problems.append(
            f"round {round_id} is re-test number {idx}; the plan allows at most {plan.retest_cap}"
        )
    previous = previous_verdicts or {}
    before = ids[idx - 1]
    prev = previous.get(before)
    if prev is not None and prev != "INCONCLUSIVE":
        problems.append(
            f"re-test round {round_id} follows round {before} whose verdict is {prev}; "
            "a re-test is only allowed after an INCONCLUSIVE round"
        )
    if sum(1 for r in ids[:idx] if previous.get(r) == "INCONCLUSIVE") >= 2:
        problems.append(f"the study was already terminated by two inconclusive rounds before {round_id}")
    return problems


# --------------------------------------------------------------------------- steps 6–7: decide


@dataclass(frozen=True)
class Verdict:
    verdict: VerdictName
    summary: str
    reasons: tuple[str, ...]
    round_id: str
    terminal: bool = False
    evaluation: Evaluation | None = None  # headline numbers (worst case for B when cells are contested)
    best: Evaluation | None = None  # set when contested cells enter the counted dimensions
    worst: Evaluation | None = None
    contested: tuple[CellKey, ...] = ()  # contested cells in counted dimensions of the cells used
    not_ready: tuple[str, ...] = ()
    blinding: Blinding | None = None
    b_scores_from: str = ""
    retest_problems: tuple[str, ...] = ()
    counted: tuple[str, ...] = ()
    excluded: Mapping[str, str] = field(default_factory=dict)


def decide(
    plan: Plan,
    *,
    primary: CellResolution,
    blinded: CellResolution | None = None,
    counted_dims: Iterable[str],
    excluded: Mapping[str, str] | None = None,
    round_id: str | None = None,
    blockers: Sequence[str] = (),
    previous_verdicts: Mapping[str, str] | None = None,
) -> Verdict:
    """SPEC §7 from resolved cells to a verdict.

    ``primary`` holds the verdict pass's cells, ``blinded`` the stripped pass's (if the plan
    has one); ``blockers`` are NOT-READY reasons found outside the cells (seals, invalid
    files, pending raters); ``previous_verdicts`` maps earlier round ids to their verdicts.
    """
    round_id = round_id or plan.main_round.id
    problems = retest_problems(plan, round_id, previous_verdicts)
    rnd = plan.round_(round_id)
    assert rnd is not None  # retest_problems rejected unknown rounds
    questions = list(rnd.questions)
    excluded = dict(excluded or {})
    p = plan.primary_pass
    a, b = plan.baseline.id, plan.treatment.id
    dims = [d.id for d in plan.dimensions if d.id in p.dimensions]
    counted = tuple(d for d in dims if d in set(counted_dims))
    for d in dims:
        if d not in counted and d not in excluded:
            excluded[d] = "excluded by the kappa gate"
    not_ready = list(blockers) + problems
    if a not in p.conditions or b not in p.conditions:
        not_ready.append(f"the verdict pass {p.id} does not score both conditions {a} and {b}")
    if not questions:
        not_ready.append(f"round {round_id} has no questions")

    s = blinding_pass(plan)
    resolutions = [(p.id, primary)] + ([(s.id, blinded)] if s is not None and blinded is not None else [])
    for pass_id, res in resolutions:
        cells = res.flagged_without_consensus
        if cells:
            not_ready.append(
                f"flagged cells of pass {pass_id} have no consensus in the reconciliation: "
                f"{_cell_list(cells)}"
            )
        cells = res.needs_consensus
        if cells:
            not_ready.append(
                f"disagreeing cells of pass {pass_id} need an explicit consensus "
                f"(rules.unflagged is require): {_cell_list(cells)}"
            )

    # -- step 2: which treatment scores ------------------------------------------------------
    blinding = None
    b_from = p.id
    if s is not None:
        shared = [d for d in dims if d in s.dimensions]
        unbl, bl, skipped = {}, {}, 0
        for q in questions:
            for d in shared:
                u = primary.cells.get(CellKey(q, b, d))
                v = blinded.cells.get(CellKey(q, b, d)) if blinded is not None else None
                if u is None or v is None or u.value is None or v.value is None:
                    skipped += 1
                    continue
                unbl[(q, d)], bl[(q, d)] = u.value, v.value
        div = blinding_divergence(unbl, bl)
        thr = plan.rules.blinding_divergence
        if div is not None and div > thr:
            b_from = s.id
        blinding = Blinding(s.id, div, thr, b_from, len(unbl), skipped)

    # -- the cells the verdict uses ----------------------------------------------------------
    chosen: dict[CellKey, ResolvedCell] = {}
    absent: list[CellKey] = []
    for q in questions:
        for d in dims:
            for cond in (a, b):
                key = CellKey(q, cond, d)
                src = (
                    blinded
                    if (cond == b and b_from != p.id and s is not None and d in s.dimensions)
                    else primary
                )
                cell = src.cells.get(key) if src is not None else None
                if cell is None:
                    if d in counted:
                        absent.append(key)
                    continue
                chosen[key] = cell
    if absent:
        not_ready.append(f"no rater scored these cells: {_cell_list(absent)}")

    def result(verdict: VerdictName, summary: str, reasons: Sequence[str], **more: object) -> Verdict:
        return replace(
            Verdict(
                verdict,
                summary,
                tuple(reasons),
                round_id,
                not_ready=tuple(not_ready),
                blinding=blinding,
                b_scores_from=b_from,
                retest_problems=tuple(problems),
                counted=counted,
                excluded=excluded,
            ),
            **more,
        )

    if not_ready:
        return result("NOT-READY", f"NOT-READY: {not_ready[0]}", not_ready)

    # -- step 6: contested cells at both extremes --------------------------------------------
    fixed = {k: c.value for k, c in chosen.items() if c.value is not None}
    open_cells = {k: c.options for k, c in chosen.items() if c.resolution == "contested"}
    contested = tuple(sorted(k for k in open_cells if k.dimension in counted))

    def at(best_for_b: bool) -> dict[CellKey, Fraction]:
        vals = dict(fixed)
        for k, opts in open_cells.items():
            low = (k.condition == b) == best_for_b  # lower is better: B low / A high favours B
            vals[k] = Fraction(min(opts) if low else max(opts))
        return vals

    def run(vals: Mapping[CellKey, Fraction]) -> Evaluation:
        return evaluate(plan, vals, questions=questions, dimensions=dims, counted=counted, excluded=excluded)

    reasons: list[str] = []
    best = worst = None
    if contested:
        best, worst = run(at(True)), run(at(False))
        headline = worst
        if best.verdict == worst.verdict:
            verdict: VerdictName = best.verdict
            reasons.extend(worst.reasons)
            reasons.append(
                f"robust to {_cells_word(len(contested))}: "
                f"{verdict} with every contested cell at its best and at its worst value for {b}"
            )
            summary = f"{verdict}: {worst.reasons[0]} (robust to {_cells_word(len(contested))})"
        else:
            verdict = "CONTESTED"
            summary = (
                f"CONTESTED: {best.verdict} if every contested cell is resolved in {b}'s favour, "
                f"{worst.verdict} if against it ({_cells_word(len(contested))})"
            )
            reasons.append(
                f"with the {_cells_word(len(contested))} at their best value for {b}: "
                f"{best.verdict} — {best.reasons[0]}"
            )
            reasons.append(
                f"with the {_cells_word(len(contested))} at their worst value for {b}: "
                f"{worst.verdict} — {worst.reasons[0]}"
            )
    else:
        headline = run(at(False))
        verdict = headline.verdict
        reasons.extend(headline.reasons)
        summary = f"{verdict}: {headline.reasons[0]}"

    if blinding is not None:
        if blinding.divergence is None:
            reasons.append(f"no blinded {b} scores to compare, so pass {p.id}'s {b} scores are used")
        elif b_from == blinding.pass_id:
            reasons.append(
                f"blinded scores diverge by {fmt_num(blinding.divergence)} (> "
                f"{fmt_num(blinding.threshold)}): the {b} scores of pass {b_from} are used"
            )
        else:
            reasons.append(
                f"blinded scores diverge by {fmt_num(blinding.divergence)} (≤ "
                f"{fmt_num(blinding.threshold)}): the {b} scores of pass {b_from} are used"
            )
    for d, why in excluded.items():
        reasons.append(f"{d} does not count toward the verdict: {why}")

    terminal = False
    idx = [r.id for r in plan.rounds].index(round_id)
    if idx > 0:
        prev_id = plan.rounds[idx - 1].id
        prev = (previous_verdicts or {}).get(prev_id)
        if prev is None:
            reasons.append(
                f"the verdict of round {prev_id} is unknown, so the re-test rules were not fully checked"
            )
        elif verdict == "INCONCLUSIVE" and prev == "INCONCLUSIVE":
            terminal = True
            msg = terminal_message(plan)
            reasons.insert(0, msg)
            summary = f"INCONCLUSIVE, terminal: {msg}"
    return result(
        verdict,
        summary,
        reasons,
        terminal=terminal,
        evaluation=headline,
        best=best,
        worst=worst,
        contested=contested,
    )
