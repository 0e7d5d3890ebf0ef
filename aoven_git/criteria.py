"""The plan's pre-registered criteria, evaluated on consensus cells in exact fractions.

docs/statistics.md ("Criteria") gives every formula; in short, with questions q, replicates
r = 1…N (N = 1 without replicates) and a pass's cells after consensus:

- ``delta`` (:func:`delta_values`): per dimension d, v_d = mean(of[0], d) − mean(of[1], d) (or
  mean(of[0], d) alone), a condition's mean being the mean over q of the mean over r; with
  ``per: sum`` one value, v = Σ_d v_d (the mean of each response's sum: means are linear);
- ``rate`` (:func:`rate_values`): per question q, v_q = share(of[0], q) − share(of[1], q) (or the
  share alone), share = (responses of q labelled ``label``) / N;
- ``seed`` (:func:`seed_result`): the seed's verdict (verdict.py) for ``treatment`` against the
  baseline, holding iff PASS.

A criterion holds when at least ``require`` of its values (all of them by default) meet its bound
(:func:`judge`). A value is unknown when its dimension does not count under the agreement gate (in
the pass it reads; ``gate: false`` opts out) or a cell it needs has no resolved score: the outcome
is ``undecided`` only when the unknown values could still change it. Contested cells are set at
both extremes (:func:`extremes`); different outcomes make the criterion ``contested``.

Pure: plain model data and ``verdict.CellResolution`` in, ``model.CriterionResult`` out.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from aoven_git.model import CellKey, Criterion, CriterionOutcome, CriterionResult, Plan
from aoven_git.verdict import CellResolution, ResolvedCell, Verdict, blinding_pass, decide, for_treatment

#: A cell's value at one extreme: (pass, key) → exact value, None when it has none.
Values = Callable[[str, CellKey], Fraction | None]
#: How much a cell's value moves v: +weight for of[0], −weight for of[1] (per option).
Pull = Callable[[CellKey, int | Fraction], Fraction]


@dataclass(frozen=True)
class Inputs:
    """What every criterion reads: each pass's cells after consensus (replicates kept), the
    dimensions each pass's agreement gate counts and why the others do not, and the round."""

    resolutions: Mapping[str, CellResolution]
    counted: Mapping[str, Collection[str]]
    round_id: str
    excluded: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Evaluated:
    """Every criterion's result, and the seed verdict behind each `seed` criterion."""

    results: tuple[CriterionResult, ...]
    seeds: Mapping[str, Verdict] = field(default_factory=dict)


def evaluate(
    plan: Plan,
    resolutions: Mapping[str, CellResolution],
    counted: Mapping[str, Collection[str]],
    *,
    round_id: str | None = None,
    excluded: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[CriterionResult, ...]:
    """Every criterion of the plan, in plan order (see the module docstring)."""
    return evaluate_all(plan, Inputs(resolutions, counted, round_id or plan.main_round.id,
                                     excluded or {})).results


def evaluate_all(plan: Plan, inputs: Inputs) -> Evaluated:
    """Every criterion, with the seed verdicts the report shows beside the `seed` ones."""
    results, seeds = [], {}
    for c in plan.criteria:
        if c.kind == "seed":
            verdict = seed_verdict(plan, c, inputs)
            seeds[c.id] = verdict
            results.append(seed_result(plan, c, verdict))
        else:
            results.append(measured(plan, c, inputs))
    return Evaluated(tuple(results), seeds)


# --------------------------------------------------------------------------- what a criterion reads


def pass_for(plan: Plan, criterion: Criterion, dimension: str) -> str | None:
    """The pass whose consensus cells a criterion reads for `dimension`: its `pass`, else the
    primary pass if it scores the dimension, else the one pass that does (None when none or
    several do: check-plan asks for `pass` then)."""
    if criterion.pass_id is not None:
        return criterion.pass_id
    if dimension in plan.primary_pass.dimensions:
        return plan.primary_pass.id
    scoring = [p.id for p in plan.passes if dimension in p.dimensions]
    return scoring[0] if len(scoring) == 1 else None


def dimensions_of(plan: Plan, criterion: Criterion) -> tuple[str, ...]:
    """The dimensions a criterion needs: a `rate` criterion's labelled dimension (its
    `dimension`, else the only one of its pass), a `delta` criterion's list (every dimension of
    the primary pass when it names none), the primary pass's for `seed`."""
    if criterion.kind == "rate":
        if criterion.dimension is not None:
            return (criterion.dimension,)
        p = plan.pass_(criterion.pass_id) if criterion.pass_id else plan.primary_pass
        return tuple(p.dimensions) if p is not None and len(p.dimensions) == 1 else ()
    return criterion.dimensions or plan.primary_pass.dimensions


def questions_of(plan: Plan, criterion: Criterion, round_id: str) -> tuple[str, ...]:
    """The questions a criterion reads: its own list, else every question of the round."""
    if criterion.questions:
        return criterion.questions
    rnd = plan.round_(round_id)
    return tuple(rnd.questions) if rnd is not None else ()


def passes_read(plan: Plan, criterion: Criterion) -> tuple[str, ...]:
    """Every pass a criterion reads, in plan order (the seed's: primary, and its stripped pass)."""
    if criterion.kind == "seed":
        stripped = blinding_pass(for_treatment(plan, criterion.treatment))
        return (plan.primary_pass.id, *((stripped.id,) if stripped else ()))
    wanted = {pass_for(plan, criterion, d) for d in dimensions_of(plan, criterion)}
    return tuple(p.id for p in plan.passes if p.id in wanted)


# --------------------------------------------------------------------------- formulas


def _mean(values: Sequence[Fraction | None]) -> Fraction | None:
    if not values or any(v is None for v in values):
        return None
    return sum((v for v in values if v is not None), Fraction(0)) / len(values)


def condition_mean(plan: Plan, value: Values, pass_id: str, condition: str, dimension: str,
                   questions: Sequence[str]) -> Fraction | None:
    """mean over q of (mean over r of the cell (q, condition, r, dimension)); None when a cell
    has no value or there is no question (docs/statistics.md, "Replicates")."""
    return _mean([
        _mean([value(pass_id, CellKey(q, condition, dimension, r)) for r in plan.replicate_ids])
        for q in questions
    ])


def delta_values(plan: Plan, criterion: Criterion, value: Values,
                 questions: Sequence[str]) -> dict[str, Fraction | None]:
    """`delta`: v_d = mean(of[0], d) − mean(of[1], d) per dimension, or {"sum": Σ_d v_d}."""
    out: dict[str, Fraction | None] = {}
    for d in dimensions_of(plan, criterion):
        p = pass_for(plan, criterion, d)
        out[d] = _difference([condition_mean(plan, value, p, c, d, questions) if p else None
                              for c in criterion.of])
    if criterion.per == "sum":
        parts = [v for v in out.values() if v is not None]
        return {"sum": sum(parts, Fraction(0)) if out and len(parts) == len(out) else None}
    return out


def rate_values(plan: Plan, criterion: Criterion, value: Values,
                questions: Sequence[str]) -> dict[str, Fraction | None]:
    """`rate`: v_q = share(of[0], q) − share(of[1], q), share = #{r: cell labelled `label`} / N."""
    dims = dimensions_of(plan, criterion)
    label = plan.scale.value_of(criterion.label or "")
    p = pass_for(plan, criterion, dims[0]) if dims else None
    out: dict[str, Fraction | None] = {}
    for q in questions:
        shares = []
        for c in criterion.of:
            cells = [value(p, CellKey(q, c, dims[0], r)) if p else None for r in plan.replicate_ids]
            known = None if label is None or any(v is None for v in cells) else cells
            shares.append(None if known is None else Fraction(sum(v == label for v in known), len(known)))
        out[q] = _difference(shares)
    return out


def _difference(values: Sequence[Fraction | None]) -> Fraction | None:
    """of[0]'s value minus of[1]'s (of[0]'s alone with one condition); None when one is None or
    the criterion names no condition."""
    if not values or any(v is None for v in values):
        return None
    first, *rest = (v for v in values if v is not None)
    return first - rest[0] if rest else first


# --------------------------------------------------------------------------- outcome


def judge(criterion: Criterion, values: Mapping[str, Fraction | None],
          unknown: Collection[str]) -> tuple[CriterionOutcome, dict[str, bool]]:
    """Holds when at least `require` values (all by default) meet the bound; fails when even
    every unknown value meeting it would not reach that; else undecided. A value is unknown when
    it is None or its key is in `unknown` (a dimension the gate does not count)."""
    if criterion.bound is None:  # check-plan refuses it; never a crash here
        return "undecided", {}
    satisfied = {k: criterion.bound.holds(v) for k, v in values.items() if v is not None}
    open_keys = [k for k, v in values.items() if v is None or k in unknown]
    good = sum(1 for k, ok in satisfied.items() if ok and k not in open_keys)
    need = len(values) if criterion.require is None else criterion.require
    if not values:
        return "undecided", satisfied
    if good >= need:
        return "holds", satisfied
    return ("fails" if good + len(open_keys) < need else "undecided"), satisfied


def _gated(plan: Plan, criterion: Criterion, inputs: Inputs) -> dict[str, str]:
    """Needed dimensions the gate does not count in the pass read, with why (none when `gate:
    false`); a dimension no pass can be read for is listed too."""
    out = {}
    for d in dimensions_of(plan, criterion):
        p = pass_for(plan, criterion, d)
        if p is None:
            out[d] = f"no single pass scores {d}: the criterion must name its pass"
        elif criterion.gate and d not in inputs.counted.get(p, ()):
            why = inputs.excluded.get(p, {}).get(d, "excluded by the agreement gate")
            out[d] = f"{d} does not count in pass {p} ({why})"
    return out


def _unknown_keys(plan: Plan, criterion: Criterion, gated: Collection[str],
                  questions: Sequence[str]) -> set[str]:
    """The value keys a gated dimension leaves unknown: itself (per dimension), "sum", or every
    question of a `rate` criterion."""
    if not gated:
        return set()
    if criterion.kind == "rate":
        return set(questions)
    return {"sum"} if criterion.per == "sum" else set(gated)


# --------------------------------------------------------------------------- contested extremes


def _open_options(cell: ResolvedCell, nominal: bool) -> tuple[int | Fraction, ...]:
    """The values a cell may still take: a contested cell's recorded values; on a nominal scale
    also an unflagged disagreement that a mean or median settled (labels have no mean), open
    between the labels the raters gave."""
    if cell.resolution == "contested":
        return cell.options
    if nominal and cell.resolution in ("mean", "median"):
        return tuple(sorted(set(cell.scores.values())))
    return ()


def _pull(plan: Plan, criterion: Criterion) -> Pull:
    """How a cell's option moves v: ± the score (`delta`) or ± [labelled `label`] (`rate`), + for
    of[0] and − for of[1]."""
    label = plan.scale.value_of(criterion.label or "") if criterion.kind == "rate" else None

    def pull(key: CellKey, option: int | Fraction) -> Fraction:
        sign = 1 if key.condition == criterion.of[0] else -1 if key.condition in criterion.of[1:] else 0
        amount = Fraction(option == label) if criterion.kind == "rate" else Fraction(option)
        return sign * amount

    return pull


def extreme_values(plan: Plan, criterion: Criterion, inputs: Inputs, *, high: bool,
                   touched: set[CellKey]) -> Values:
    """Cell values with every open cell at the option that makes v highest (`high`) or lowest;
    the open cells read are added to `touched`."""
    pull = _pull(plan, criterion)

    def value(pass_id: str, key: CellKey) -> Fraction | None:
        res = inputs.resolutions.get(pass_id)
        cell = res.cells.get(key) if res is not None else None
        if cell is None:
            return None
        options = _open_options(cell, plan.scale.nominal)
        if not options:
            return cell.value
        touched.add(key)
        pick = max if high else min
        return Fraction(pick(options, key=lambda o: pull(key, o)))

    return value


def extremes(outcomes: tuple[CriterionOutcome, CriterionOutcome]) -> CriterionOutcome:
    """One outcome from the best and worst extremes: the same one, undecided when either is,
    else contested."""
    best, worst = outcomes
    if best == worst:
        return best
    return "undecided" if "undecided" in outcomes else "contested"


# --------------------------------------------------------------------------- delta and rate


def measured(plan: Plan, criterion: Criterion, inputs: Inputs) -> CriterionResult:
    """A `delta` or `rate` criterion at both extremes of its open cells. Best for of[0] is v
    lowest for `delta` (lower scores are better) and highest for `rate` (more responses
    labelled `label`); values and satisfied are reported at the worst extreme."""
    questions = questions_of(plan, criterion, inputs.round_id)
    gated = _gated(plan, criterion, inputs)
    unknown = _unknown_keys(plan, criterion, gated, questions)
    formula = rate_values if criterion.kind == "rate" else delta_values
    touched: set[CellKey] = set()
    high = formula(plan, criterion, extreme_values(plan, criterion, inputs, high=True, touched=touched),
                   questions)
    low = formula(plan, criterion, extreme_values(plan, criterion, inputs, high=False, touched=touched),
                  questions)
    best_values, worst_values = (high, low) if criterion.kind == "rate" else (low, high)
    best, _ = judge(criterion, best_values, unknown)
    worst, satisfied = judge(criterion, worst_values, unknown)
    outcome = extremes((best, worst)) if touched else worst
    reasons = [*gated.values(), *_undefined_reasons(plan, criterion, worst_values)]
    if touched and best != worst:
        side = criterion.of[0] if criterion.of else "of[0]"
        reasons.append(f"{len(touched)} open cell{'s' if len(touched) != 1 else ''}: {best} with each at "
                       f"its best value for {side}, {worst} at its worst")
    reasons += _failing(criterion, worst_values, satisfied, unknown) if outcome == "fails" else []
    if not dimensions_of(plan, criterion):
        reasons.append(f"criterion {criterion.id} names no dimension and its pass scores several")
    if criterion.bound is None:
        reasons.append(f"criterion {criterion.id} has no bound")
    return CriterionResult(criterion.id, criterion.kind, outcome, worst_values, satisfied, tuple(reasons),
                           (best, worst) if touched else None, passes_read(plan, criterion))


def _undefined_reasons(plan: Plan, criterion: Criterion, values: Mapping[str, Fraction | None]) -> list[str]:
    if criterion.kind == "rate" and plan.scale.value_of(criterion.label or "") is None:
        return [f"{criterion.label!r} is not a label of the scale"]
    what = "share" if criterion.kind == "rate" else "mean"
    return [f"{k}: a {what} of {' or '.join(criterion.of)} is undefined (a cell without a resolved score)"
            for k, v in values.items() if v is None]


def _failing(criterion: Criterion, values: Mapping[str, Fraction | None], satisfied: Mapping[str, bool],
             unknown: Collection[str]) -> list[str]:
    """Why a criterion fails: each known value that misses the bound, and the count when
    `require` asks for fewer than all."""
    missed = [f"{k}: v = {values[k]} does not meet {criterion.bound}" for k, ok in satisfied.items()
              if not ok and k not in unknown]
    if criterion.require is not None:
        good = sum(1 for k, ok in satisfied.items() if ok and k not in unknown)
        missed.insert(0, f"{good} of {len(values)} meet {criterion.bound}; {criterion.require} required")
    return missed


# --------------------------------------------------------------------------- seed


def seed_verdict(plan: Plan, criterion: Criterion, inputs: Inputs) -> Verdict:
    """The seed's verdict (verdict.decide, unchanged) for the criterion's treatment against the
    baseline, on the primary pass's cells (and its stripped pass's) with that pass's gate."""
    target = for_treatment(plan, criterion.treatment)
    primary, stripped = target.primary_pass, blinding_pass(target)
    counted = inputs.counted.get(primary.id, ()) if criterion.gate else primary.dimensions
    empty = CellResolution({})
    return decide(
        target,
        primary=inputs.resolutions.get(primary.id, empty),
        blinded=inputs.resolutions.get(stripped.id, empty) if stripped else None,
        counted_dims=counted,
        excluded=inputs.excluded.get(primary.id, {}) if criterion.gate else {},
        round_id=inputs.round_id,
    )


_SEED_OUTCOME: dict[str, CriterionOutcome] = {
    "PASS": "holds", "FAIL": "fails", "INCONCLUSIVE": "fails", "NOT-READY": "undecided",
    "CONTESTED": "contested",
}


def seed_outcome(criterion: Criterion, verdict: Verdict) -> CriterionOutcome:
    """Holds iff the seed verdict is PASS; FAIL fails and NOT-READY is undecided. INCONCLUSIVE
    fails, except while a dimension of the verdict does not count under the agreement gate: then
    the seed rule could not be evaluated in full (§7: PASS is impossible, not disproved), so the
    criterion is undecided like every criterion that needs an ungated dimension (`gate: false`
    opts out: the rule as far as it can be evaluated decides)."""
    if verdict.verdict == "INCONCLUSIVE" and criterion.gate and verdict.excluded:
        return "undecided"
    return _SEED_OUTCOME[verdict.verdict]


def seed_result(plan: Plan, criterion: Criterion, verdict: Verdict) -> CriterionResult:
    """The seed criterion's outcome (`seed_outcome`); contested only when the verdict's extremes
    fall on both sides of PASS."""
    reasons = tuple(verdict.reasons)
    if seed_outcome(criterion, verdict) == "undecided" and verdict.verdict == "INCONCLUSIVE":
        gated = ", ".join(sorted(verdict.excluded))
        reasons = (f"{gated} do(es) not count under the agreement gate: the seed rule cannot be "
                   "evaluated in full", *reasons)
    result = CriterionResult(criterion.id, "seed", seed_outcome(criterion, verdict), {"verdict": None},
                             {"verdict": verdict.verdict == "PASS"}, reasons,
                             passes=passes_read(plan, criterion))
    if verdict.best is None or verdict.worst is None:
        return result
    pair = (_SEED_OUTCOME[verdict.best.verdict], _SEED_OUTCOME[verdict.worst.verdict])
    return replace(result, outcome=extremes(pair), extremes=pair)


# --------------------------------------------------------------------------- in words


def _ids(ids: Sequence[str], order: Sequence[str]) -> str:
    """Ids as people read them: a run of three or more consecutive in plan order as `D1–D6`."""
    positions = [order.index(i) if i in order else -1 for i in ids]
    run = list(range(positions[0], positions[0] + len(ids))) if ids else []
    if len(ids) >= 3 and -1 not in positions and positions == run:
        return f"{ids[0]}–{ids[-1]}"
    return ", ".join(ids)


def describe(plan: Plan, criterion: Criterion) -> str:
    """The criterion in one sentence, e.g. "mean B1 − mean B on each of D1–D6, |v| ≤ 1/2"."""
    dims = _ids(dimensions_of(plan, criterion), [d.id for d in plan.dimensions])
    of = criterion.of
    if criterion.kind == "seed":
        return f"the seed verdict for {criterion.treatment} against {plan.baseline.id} is PASS"
    if criterion.kind == "delta":
        what = " − ".join(f"mean {c}" for c in of)
        if criterion.per == "sum":
            return f"{what} of the sum {dims.replace(', ', ' + ')}, {_bound_text(criterion)}"
        return f"{what} on each of {dims}, {_bound_text(criterion)}"
    questions = questions_of(plan, criterion, plan.main_round.id)
    order = [q.id for q in (*plan.questions, *plan.holdout)]
    share = " − ".join(f"share {c}" for c in of)
    need = "each" if criterion.require is None else f"at least {criterion.require}"
    return (f"{share} labelled {criterion.label} on {dims}, on {need} of "
            f"{_ids(questions, order)}, {_bound_text(criterion)}")


def _bound_text(criterion: Criterion) -> str:
    text = str(criterion.bound)
    return text if text.startswith("|v|") else f"v {text}"
