"""The pre-registered verdict, in exact fractions over plain data.

Nothing here reads files, talks to git or imports numpy: scores come in as ``rater -> cell ->
int`` mappings and every mean, delta and threshold comparison is a :class:`~fractions.Fraction`.
That is what lets "20 % means ≥ 1/5" hold literally — a study sitting exactly on a threshold
must land on the side the plan wrote down, not on the side a float rounding error picks.

The steps, in the order :func:`decide` runs them (docs/statistics.md, "The verdict, step by
step"), each with a function of its own:

1. :func:`resolve_cells` — each cell after consensus;
2. :func:`not_ready_reasons` — what blocks any verdict (seals, files, pending raters, open cells);
3. :func:`which_b_scores` — the blinding divergence and the pass whose treatment scores count;
4. :func:`cells_used` — the cells of the round the verdict reads;
5. :func:`~aoven_git.verdict_rules.evaluate` — aggregates, means and the rule families
   (verdict_rules.py: improvement, questions, load and regression tolerance);
6. :func:`at_extremes` — contested cells at their best and worst value for the treatment;
7. :func:`explain` — the verdict's reasons and summary, including the re-test ending (step 8,
   :func:`retest_problems`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Literal

from aoven_git.errors import UsageError
from aoven_git.model import CellKey, Pass, Plan
from aoven_git.numfmt import brief
from aoven_git.verdict_rules import Evaluation, evaluate

Resolution = Literal["agreed", "consensus", "mean", "median", "contested", "missing"]
VerdictName = Literal["PASS", "FAIL", "INCONCLUSIVE", "CONTESTED", "NOT-READY"]

#: How many cell ids a NOT-READY sentence names before it says "and N more".
LIST_LIMIT = 20


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
    #: recorded values of a contested cell (a replicate average's lowest and highest mean)
    options: tuple[int | Fraction, ...] = ()

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
    def contested(self) -> dict[CellKey, tuple[int | Fraction, ...]]:
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
    """Step 1 for every cell any rater scored (docs/statistics.md, "Cells after consensus").

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


def average_replicates(resolution: CellResolution) -> CellResolution:
    """Each (question, condition, dimension) as one cell: the mean of its replicates' values
    (docs/statistics.md, "Replicates"), so every step after this one reads `CellKey(q, c, d)`.

    A resolution without replicates (every key's replicate is 0) comes back unchanged. A
    contested replicate makes the average contested between its lowest and highest mean (every
    contested replicate at its lowest, then at its highest value); a missing one leaves the
    average missing (flagged when any replicate is)."""
    if _AVERAGED and _AVERAGED[0] is resolution:
        return _AVERAGED[1]
    if all(k.replicate == 0 for k in resolution.cells):
        return resolution
    groups: dict[tuple[str, str, str], list[ResolvedCell]] = {}
    for key, cell in resolution.cells.items():
        groups.setdefault((key.question, key.condition, key.dimension), []).append(cell)
    keys = {key: CellKey(*key) for key in groups}
    averaged = CellResolution({keys[key]: _average(keys[key], cells) for key, cells in groups.items()})
    _AVERAGED[:] = [resolution, averaged]
    return averaged


#: The last resolution averaged and its average: the verdict, every `seed` criterion and the
#: report's means all average the same primary resolution (a pure function of it; the
#: resolution is frozen and kept alive here, so identity cannot be reused).
_AVERAGED: list[CellResolution] = []


def _average(key: CellKey, cells: Sequence[ResolvedCell]) -> ResolvedCell:
    scores = {f"{r}#{c.key.replicate}": s for c in cells for r, s in c.scores.items()}
    flagged = any(c.flagged for c in cells)
    if any(c.resolution == "missing" for c in cells):
        return ResolvedCell(key, scores, flagged, "missing", None)
    n = len(cells)
    low = _mean([c.value if c.value is not None else min(c.options) for c in cells], n)
    if any(c.resolution == "contested" for c in cells):
        high = _mean([c.value if c.value is not None else max(c.options) for c in cells], n)
        return ResolvedCell(key, scores, flagged, "contested", None, (low, high))
    same = len({c.value for c in cells}) == 1 and all(c.resolution == "agreed" for c in cells)
    return ResolvedCell(key, scores, flagged, "agreed" if same else "mean", low)


def _mean(values: Sequence[int | Fraction], n: int) -> Fraction:
    """Σ values / n exactly; whole numbers (the usual replicate value) are added as ints, which
    gives the same Fraction as adding Fractions, without building one per term."""
    if all(type(v) is int or v.denominator == 1 for v in values):
        return Fraction(sum(int(v) for v in values), n)
    return sum((Fraction(v) for v in values), Fraction(0)) / n


def for_treatment(plan: Plan, treatment: str | None) -> Plan:
    """The plan whose seed verdict compares the baseline with `treatment` (None: the plan's own
    `Plan.treatment`): every step reads `Plan.treatment`, so a `seed` criterion naming another
    treatment runs the same steps on this plan (docs/statistics.md, "Criteria")."""
    if treatment is None or treatment == plan.treatment.id:
        return plan
    rules = replace(plan.rules, pass_=replace(plan.rules.pass_, treatment=treatment))
    return replace(plan, rules=rules)


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


# --------------------------------------------------------------------------- self-bias


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
            base = cells.get(replace(key, condition=baseline))
            if base is None:
                continue
            compared += 1
            worse += score > base
        out.append(SelfBias(rater, pass_id, worse, compared, compared > 0 and worse == 0))
    return out


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
    """Why a re-test round may not be judged (docs/statistics.md, "Re-tests"); empty for the
    first round.

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


# --------------------------------------------------------------------------- steps 2–7: decide


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


@dataclass(frozen=True)
class Scope:
    """What the verdict of a round looks at: its questions, the verdict pass's dimensions and
    which of them count (with why the others do not)."""

    round_id: str
    questions: tuple[str, ...]
    dimensions: tuple[str, ...]
    counted: tuple[str, ...]
    excluded: Mapping[str, str]

    @classmethod
    def of(cls, plan: Plan, round_id: str, counted: Iterable[str], excluded: Mapping[str, str]) -> Scope:
        rnd = plan.round_(round_id)
        assert rnd is not None  # retest_problems rejected unknown rounds
        dims = tuple(d.id for d in plan.dimensions if d.id in plan.primary_pass.dimensions)
        wanted = set(counted)
        why = dict(excluded)
        for d in dims:
            if d not in wanted:
                why.setdefault(d, "excluded by the kappa gate")
        return cls(round_id, tuple(rnd.questions), dims, tuple(d for d in dims if d in wanted), why)


def not_ready_reasons(
    plan: Plan, scope: Scope, resolutions: Sequence[tuple[str, CellResolution]],
    blockers: Sequence[str], problems: Sequence[str], where: Mapping[str, str] | None = None,
) -> list[str]:
    """Everything that withholds a verdict: the caller's blockers (seals, invalid files, pending
    raters), re-test problems, a verdict pass that cannot compare the conditions, and open cells
    in the passes the verdict uses. `where` says, per pass, where its consensus is written (the
    file and the command that adds a rater's rows), so the sentence tells the team what to do."""
    out = [*blockers, *problems]
    p, a, b = plan.primary_pass, plan.baseline.id, plan.treatment.id
    if a not in p.conditions or b not in p.conditions:
        out.append(f"the verdict pass {p.id} does not score both conditions {a} and {b}")
    if not scope.questions:
        out.append(f"round {scope.round_id} has no questions")
    for pass_id, res in resolutions:
        out += open_cell_reasons(pass_id, res, where)
    return out


def open_cell_reasons(pass_id: str, res: CellResolution, where: Mapping[str, str] | None) -> list[str]:
    """A pass's cells that withhold a verdict: flagged without consensus, or disagreeing where the
    plan requires an explicit consensus (with where the consensus is written)."""
    out = []
    if res.flagged_without_consensus:
        at = f" ({where[pass_id]})" if where and pass_id in where else ""
        out.append(f"flagged cells of pass {pass_id} have no consensus in the reconciliation{at}: "
                   f"{_cell_list(res.flagged_without_consensus)}")
    if res.needs_consensus:
        out.append(f"disagreeing cells of pass {pass_id} need an explicit consensus "
                   f"(rules.unflagged is require): {_cell_list(res.needs_consensus)}")
    return out


def which_b_scores(
    plan: Plan, scope: Scope, primary: CellResolution, blinded: CellResolution | None
) -> tuple[Blinding | None, str]:
    """The blinding divergence and the pass whose treatment scores the verdict uses.

    Without a stripped pass the primary pass's; otherwise the blinded scores when the mean
    |blinded − unblinded| over the (question, dimension) pairs both resolved exceeds the plan's
    ``blinding_divergence``.
    """
    p, s, b = plan.primary_pass, blinding_pass(plan), plan.treatment.id
    if s is None:
        return None, p.id
    unblinded: dict[tuple[str, str], Fraction] = {}
    blind: dict[tuple[str, str], Fraction] = {}
    skipped = 0
    for q in scope.questions:
        for d in (d for d in scope.dimensions if d in s.dimensions):
            u = primary.cells.get(CellKey(q, b, d))
            v = blinded.cells.get(CellKey(q, b, d)) if blinded is not None else None
            if u is None or v is None or u.value is None or v.value is None:
                skipped += 1
                continue
            unblinded[(q, d)], blind[(q, d)] = u.value, v.value
    divergence = blinding_divergence(unblinded, blind)
    threshold = plan.rules.blinding_divergence
    used = s.id if divergence is not None and divergence > threshold else p.id
    return Blinding(s.id, divergence, threshold, used, len(unblinded), skipped), used


def cells_used(
    plan: Plan, scope: Scope, primary: CellResolution, blinded: CellResolution | None, b_from: str
) -> tuple[dict[CellKey, ResolvedCell], list[CellKey]]:
    """The round's cells the verdict reads (treatment cells from ``b_from`` where that pass
    scores the dimension), and the counted cells nobody scored."""
    s, a, b = blinding_pass(plan), plan.baseline.id, plan.treatment.id
    chosen: dict[CellKey, ResolvedCell] = {}
    absent: list[CellKey] = []
    for q in scope.questions:
        for d in scope.dimensions:
            for cond in (a, b):
                key = CellKey(q, cond, d)
                from_blinded = cond == b and s is not None and b_from == s.id and d in s.dimensions
                source = blinded if from_blinded else primary
                cell = source.cells.get(key) if source is not None else None
                if cell is not None:
                    chosen[key] = cell
                elif d in scope.counted:
                    absent.append(key)
    return chosen, absent


@dataclass(frozen=True)
class Extremes:
    """The evaluation of the cells used: once when nothing counted is contested, else at both
    extremes. ``headline`` is the worst case for the treatment."""

    headline: Evaluation
    best: Evaluation | None = None
    worst: Evaluation | None = None
    contested: tuple[CellKey, ...] = ()


def at_extremes(plan: Plan, scope: Scope, chosen: Mapping[CellKey, ResolvedCell]) -> Extremes:
    """Every contested cell at its recorded value best for the treatment, then worst for it
    (lower scores are better: best for B is B low and A high)."""
    b = plan.treatment.id
    fixed = {k: c.value for k, c in chosen.items() if c.value is not None}
    open_cells = {k: c.options for k, c in chosen.items() if c.resolution == "contested"}
    contested = tuple(sorted(k for k in open_cells if k.dimension in scope.counted))

    def run(best_for_b: bool) -> Evaluation:
        values = dict(fixed)
        for k, options in open_cells.items():
            low = (k.condition == b) == best_for_b
            values[k] = Fraction(min(options) if low else max(options))
        return evaluate(plan, values, questions=scope.questions, dimensions=scope.dimensions,
                        counted=scope.counted, excluded=scope.excluded)

    if not contested:
        return Extremes(run(False))
    best, worst = run(True), run(False)
    return Extremes(worst, best, worst, contested)


def explain(
    plan: Plan, scope: Scope, extremes: Extremes, blinding: Blinding | None, b_from: str,
    previous_verdicts: Mapping[str, str] | None,
) -> tuple[VerdictName, str, list[str], bool]:
    """The verdict name, its one-line summary, the reasons in order, and whether it is terminal."""
    verdict, summary, reasons = _contest_outcome(plan, extremes)
    reasons += _blinding_reasons(plan, blinding, b_from)
    reasons += [f"{d} does not count toward the verdict: {why}" for d, why in scope.excluded.items()]
    idx = [r.id for r in plan.rounds].index(scope.round_id)
    if idx == 0:
        return verdict, summary, reasons, False
    before = plan.rounds[idx - 1].id
    prev = (previous_verdicts or {}).get(before)
    if prev is None:
        reasons.append(f"the verdict of round {before} is unknown, so the re-test rules were not fully "
                       "checked")
    elif verdict == "INCONCLUSIVE" and prev == "INCONCLUSIVE":
        message = terminal_message(plan)
        return verdict, f"INCONCLUSIVE, terminal: {message}", [message, *reasons], True
    return verdict, summary, reasons, False


def _contest_outcome(plan: Plan, extremes: Extremes) -> tuple[VerdictName, str, list[str]]:
    b, best, worst = plan.treatment.id, extremes.best, extremes.worst
    if best is None or worst is None:
        head = extremes.headline
        return head.verdict, f"{head.verdict}: {head.reasons[0]}", list(head.reasons)
    cells = _cells_word(len(extremes.contested))
    if best.verdict == worst.verdict:
        robust = (f"robust to {cells}: {best.verdict} with every contested cell at its best and at "
                  f"its worst value for {b}")
        summary = f"{best.verdict}: {worst.reasons[0]} (robust to {cells})"
        return best.verdict, summary, [*worst.reasons, robust]
    summary = (f"CONTESTED: {best.verdict} if every contested cell is resolved in {b}'s favour, "
               f"{worst.verdict} if against it ({cells})")
    return "CONTESTED", summary, [
        f"with the {cells} at their best value for {b}: {best.verdict} — {best.reasons[0]}",
        f"with the {cells} at their worst value for {b}: {worst.verdict} — {worst.reasons[0]}",
    ]


def _blinding_reasons(plan: Plan, blinding: Blinding | None, b_from: str) -> list[str]:
    b = plan.treatment.id
    if blinding is None:
        return []
    if blinding.divergence is None:
        return [f"no blinded {b} scores to compare, so pass {plan.primary_pass.id}'s {b} scores are used"]
    side = ">" if b_from == blinding.pass_id else "≤"
    return [f"blinded scores diverge by {brief(blinding.divergence)} ({side} {brief(blinding.threshold)}): "
            f"the {b} scores of pass {b_from} are used"]


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
    consensus_files: Mapping[str, str] | None = None,
    treatment: str | None = None,
) -> Verdict:
    """From resolved cells to a verdict, step by step (see the module docstring).

    ``primary`` holds the verdict pass's cells, ``blinded`` the stripped pass's (if the plan
    has one); ``blockers`` are NOT-READY reasons found outside the cells (seals, invalid
    files, pending raters); ``previous_verdicts`` maps earlier round ids to their verdicts;
    ``consensus_files`` says per pass where its consensus is written (for the NOT-READY sentence);
    ``treatment`` names the treatment compared with the baseline (default ``Plan.treatment``).
    Replicates are averaged (:func:`average_replicates`) after the open cells are listed.
    """
    plan = for_treatment(plan, treatment)
    round_id = round_id or plan.main_round.id
    problems = retest_problems(plan, round_id, previous_verdicts)
    scope = Scope.of(plan, round_id, counted_dims, excluded or {})
    stripped = blinding_pass(plan)
    resolutions = [(plan.primary_pass.id, primary)]
    if stripped is not None and blinded is not None:
        resolutions.append((stripped.id, blinded))
    not_ready = not_ready_reasons(plan, scope, resolutions, blockers, problems, consensus_files)
    primary = average_replicates(primary)
    blinded = average_replicates(blinded) if blinded is not None else None
    blinding, b_from = which_b_scores(plan, scope, primary, blinded)
    chosen, absent = cells_used(plan, scope, primary, blinded, b_from)
    if absent:
        not_ready.append(f"no rater scored these cells: {_cell_list(absent)}")
    base = Verdict("NOT-READY", "", (), round_id, not_ready=tuple(not_ready), blinding=blinding,
                   b_scores_from=b_from, retest_problems=tuple(problems), counted=scope.counted,
                   excluded=dict(scope.excluded))
    if not_ready:
        return replace(base, summary=f"NOT-READY: {not_ready[0]}", reasons=tuple(not_ready))
    extremes = at_extremes(plan, scope, chosen)
    verdict, summary, reasons, terminal = explain(plan, scope, extremes, blinding, b_from, previous_verdicts)
    return replace(base, verdict=verdict, summary=summary, reasons=tuple(reasons), terminal=terminal,
                   evaluation=extremes.headline, best=extremes.best, worst=extremes.worst,
                   contested=extremes.contested)
