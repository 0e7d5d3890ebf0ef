"""From parsed score sheets to the report document.

Orchestration over plain data: the caller has already parsed the score files and
reconciliations, run ``validate`` and ``verify-seal``. :func:`analyse` runs the steps in order,
each a function of its own so a step can grow without touching the others:

0. :func:`~aoven_git.readiness.unblind_sheets` — a blind pass's cells mapped back through its
   committed key (before grouping, which keeps only the cells a pass expects);
1. :func:`group_sheets` — the round's sheets by pass and rater, and who is still pending;
2. :func:`pass_agreement` — κ (with bootstrap intervals), α, the coefficients beside κ
   (coefficients.py) and the exact gate of the plan's coefficient per pass;
3. :func:`~aoven_git.readiness.readiness` — blockers from validation, seals and pending raters;
4. :func:`resolve` — every pass's cells after the reconciliation's consensus;
5. :func:`~aoven_git.verdict.decide` — the verdict;
6. :func:`document` — the JSON document every renderer reads (with :func:`uncertainty`, the
   descriptive intervals over questions and each rater's means).

The exploratory layer of amendments (amendments.py) is built on top of these steps, from the
`ReportData.parts` of the pre-registered analysis; it never changes the verdict computed here.

The document carries full-precision floats (the correctly rounded value of each exact number)
and, wherever the verdict depends on a number, its exact ``"p/q"`` string next to it, so a JSON
consumer can recompute every gate and rule; rounding is left to the human formats (numfmt.py).
Never NaN. docs/statistics.md explains every number.

Agreement is reported whenever cells parse, even for a NOT-READY verdict: raters need the κ
table to see which dimensions are in trouble. The verdict numbers (means, improvement, rule
values) are withheld while NOT-READY, so a reconciliation can never be steered by watching a
provisional verdict move.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from aoven_git import __version__
from aoven_git.attribution import CellConsensus, cell_consensus
from aoven_git.design_report import (
    Design,
    condition_dimension_means,
    decide_design,
    design_headline,
    design_part,
    verdict_passes,
)
from aoven_git.errors import UsageError
from aoven_git.model import (
    CellKey,
    Pass,
    Plan,
    Reconciliation,
    ScoreSheet,
)
from aoven_git.plan_diff import deviations
from aoven_git.protocol_events import deviations_part
from aoven_git.readiness import (
    BlindState,
    Readiness,
    Scope,
    amendment_folders,
    attributed,
    attribution_note,
    exclusions,
    readiness,
    unblind_sheets,
    withdrawn_from,
    withdrawn_kept,
)
from aoven_git.reconciliation import consensus_files, flag_spread, flagged_keys, without_raters
from aoven_git.report_values import NO_MEANS, WITHHELD, exact_str, full, rule_entry
from aoven_git.verdict import (
    CellResolution,
    Verdict,
    blinding_pass,
    decide,
    resolve_cells,
    self_bias,
)
from aoven_git.verdict_rules import Evaluation, rules_template

SCHEMA = "aoven-git/report/1"
#: Small-sample caveats (docs/statistics.md, "Caveats"): a κ on fewer items than this, or a
#: bootstrap interval wider than this, is flagged in every format.
CAVEAT_MIN_ITEMS = 20
CAVEAT_MAX_WIDTH = Fraction(1, 2)
CONFIDENCE = 0.95


@dataclass(frozen=True)
class ReportData:
    """The analysed round: the verdict object for callers, the contract document for renderers."""

    verdict: Verdict
    document: Mapping[str, Any]
    #: what the document was written from, for the layers built on it (amendments.py)
    parts: Parts | None = field(default=None, repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        # A fresh copy per caller, so a renderer can never alter what another one reads. The
        # document is plain JSON by contract, and a JSON round trip copies a 20-rater study's
        # document several times faster than copy.deepcopy (it also refuses NaN on the way).
        return json.loads(json.dumps(self.document, allow_nan=False))


# --------------------------------------------------------------------------- 1. group


@dataclass(frozen=True)
class PassData:
    pass_: Pass
    sheets: dict[str, ScoreSheet]  # rater -> sheet, plan order
    scores: dict[str, dict[CellKey, int]]  # rater -> cell -> score (only cells the pass expects)
    pending: list[str]  # required raters without a sheet


def group_sheets(
    plan: Plan, sheets: Sequence[ScoreSheet], round_id: str
) -> tuple[dict[str, PassData], list[str]]:
    """The round's sheets by pass and rater (plan order), and problems that block the verdict."""
    problems: list[str] = []
    by_pass: dict[str, dict[str, ScoreSheet]] = {p.id: {} for p in plan.passes}
    for sheet in sheets:
        sid = sheet.sheet
        if sid.round_id != round_id:
            continue
        if sid.pass_id not in by_pass or plan.rater(sid.rater) is None:
            problems.append(f"score file {sheet.path} names a rater or pass that is not in the plan")
            continue
        if sid.rater in by_pass[sid.pass_id]:
            first = by_pass[sid.pass_id][sid.rater].path
            problems.append(
                f"rater {sid.rater} has two score files for pass {sid.pass_id}: {first} and {sheet.path}"
            )
            continue
        by_pass[sid.pass_id][sid.rater] = sheet
    out = {}
    for p in plan.passes:
        expected = set(plan.expected_cells(p.id, round_id))
        ordered = {r.id: by_pass[p.id][r.id] for r in plan.raters if r.id in by_pass[p.id]}
        scores = {
            rater: {c.key: c.score for c in sheet.cells if c.key in expected and c.score in plan.scale}
            for rater, sheet in ordered.items()
        }
        pending = [r.id for r in plan.waited_for if r.id not in ordered]
        out[p.id] = PassData(p, ordered, scores, pending)
    return out, problems


# --------------------------------------------------------------------------- 2. agreement


@dataclass(frozen=True)
class PassAgreement:
    """One pass's κ table (document form), the dimensions passing the exact gate, and why the
    others do not."""

    table: dict[str, Any]
    counted: set[str] = field(default_factory=set)
    excluded: dict[str, str] = field(default_factory=dict)


def pass_agreement(
    plan: Plan, passes: Mapping[str, PassData], *, bootstrap: int, seed: int, method: str,
    only: Collection[tuple[str, str]] | None = None,
) -> dict[str, PassAgreement]:
    """κ for every pass × dimension × rater pair (or only the (pass, dimension) groups in
    ``only``), with one bootstrap over all of them."""
    from aoven_git.agreement import pairwise_kappas, scale_weights

    weights = scale_weights(plan.scale.nominal, plan.rules.kappa.weights)
    groups = {
        (p.id, d): {
            rater: {k.item: v for k, v in cells.items() if k.dimension == d}
            for rater, cells in passes[p.id].scores.items()
        }
        for p in plan.passes
        for d in (dim.id for dim in plan.dimensions if dim.id in p.dimensions)
        if only is None or (p.id, d) in only
    }
    pairs = pairwise_kappas(groups, categories=plan.scale.values, weights=weights,
                            bootstrap=bootstrap, seed=seed, confidence=CONFIDENCE,
                            method=method)  # type: ignore[arg-type]
    out = {p.id: PassAgreement({}) for p in plan.passes}
    for (pass_id, d), by_pair in pairs.items():
        entry, gate = _dimension_agreement(plan, groups[(pass_id, d)], by_pair)
        out[pass_id].table[d] = entry
        if gate.counts:
            out[pass_id].counted.add(d)
        else:
            out[pass_id].excluded[d] = gate.reason or "kappa below threshold"
    return out


def _dimension_agreement(
    plan: Plan, ratings: Mapping[str, Any], pairs: Mapping[Any, Any]
) -> tuple[dict[str, Any], Any]:
    """The document entry of one dimension's κ, the coefficients beside it (docs/statistics.md,
    "When κ misleads"), and the gate of the plan's coefficient."""
    from aoven_git.agreement import (
        aggregate_kappa,
        alpha_level,
        krippendorff_alpha,
        pair_label,
        scale_weights,
    )
    from aoven_git.coefficients import all_coefficients, kappa_paradox

    rules = plan.rules.kappa
    weights = scale_weights(plan.scale.nominal, rules.weights)
    agg_min = aggregate_kappa(pairs, "min", undefined=rules.undefined)
    agg_mean = aggregate_kappa(pairs, "mean", undefined=rules.undefined)
    chosen = agg_min if rules.aggregate == "min" else agg_mean
    alpha = krippendorff_alpha(ratings, categories=plan.scale.values, level=alpha_level(plan.scale.nominal))
    several, by_pair = all_coefficients(ratings, categories=plan.scale.values, weights=weights)
    gate = dimension_gate(plan, pairs, by_pair, alpha)
    kappa = chosen.exact if chosen.value is not None else None
    paradox = kappa_paradox(kappa, several.percent_agreement.exact, threshold=rules.threshold,
                            prevalence=several.prevalence_index.exact)
    labels = {k: pair_label(*k) for k in pairs}
    entry = {
        "value": full(chosen.value),
        "value_exact": exact_str(chosen.exact),
        "reason": chosen.reason if chosen.value is None else gate.reason,
        "counts": gate.counts,
        "min": full(agg_min.value),
        "mean": full(agg_mean.value),
        "alpha": full(alpha.value),
        "pairs": {labels[k]: full(v.value) for k, v in pairs.items()},
        "pairs_exact": {labels[k]: exact_str(v.exact) for k, v in pairs.items()},
        "intervals": {labels[k]: (list(v.ci) if v.ci else None) for k, v in pairs.items()},
        "interval_methods": {labels[k]: v.ci_method for k, v in pairs.items()},
        "interval_reasons": {labels[k]: v.ci_reason for k, v in pairs.items()},
        "pair_n": {labels[k]: v.n for k, v in pairs.items()},
        "n": chosen.n,
        "gate": {"coefficient": rules.coefficient, "value": full(gate.value),
                 "value_exact": exact_str(gate.value), "reason": gate.reason},
        "coefficients": several.as_dict(),
        "pair_coefficients": {pair_label(*k): c.as_dict() for k, c in by_pair.items()},
        "paradox": {"flagged": paradox.flagged, "reason": paradox.reason},
    }
    return entry, gate


def dimension_gate(plan: Plan, pairs: Mapping[Any, Any], by_pair: Mapping[Any, Any], alpha: Any) -> Any:
    """The exact gate of the plan's coefficient (``rules.kappa.coefficient``, docs/plan.md):
    κ, Gwet's AC or Brennan–Prediger per pair, aggregated like κ (``aggregate``, ``undefined``),
    or Krippendorff's α over all raters — each against the same threshold."""
    from aoven_git.agreement import kappa_gate, scale_weights
    from aoven_git.coefficients import alpha_gate

    rules = plan.rules.kappa
    settings = {"threshold": rules.threshold, "aggregate": rules.aggregate, "undefined": rules.undefined}
    if rules.coefficient == "gwet":
        name = "AC1" if scale_weights(plan.scale.nominal, rules.weights) == "none" else "AC2"
        return kappa_gate({k: c.gwet.exact for k, c in by_pair.items()}, name=name, **settings)
    if rules.coefficient == "brennan-prediger":
        return kappa_gate({k: c.brennan_prediger.exact for k, c in by_pair.items()}, name="Brennan-Prediger",
                          **settings)
    if rules.coefficient == "krippendorff":
        return alpha_gate(alpha.value, alpha.reason, raters=len(by_pair) > 0, threshold=rules.threshold,
                          undefined=rules.undefined)
    return kappa_gate({k: v.exact for k, v in pairs.items()}, **settings)


# --------------------------------------------------------------------------- 3. readiness


def pending_blockers(
    plan: Plan, passes: Mapping[str, PassData], blind: Sequence[BlindState] = ()
) -> list[str]:
    """Required raters without a file in a pass the verdict uses, and such a pass that is blind
    and not unblinded yet."""
    used = verdict_passes(plan)
    out = [
        f"required rater {rater} has not revealed scores for pass {p.id}"
        for p in plan.passes if p.id in used
        for rater in passes[p.id].pending
    ]
    return out + [b for state in blind if state.pass_id in used for b in [state.blocker()] if b]


# --------------------------------------------------------------------------- 4. resolve


def resolve(
    plan: Plan, passes: Mapping[str, PassData], consensus: Mapping[str, Mapping[CellKey, CellConsensus]]
) -> dict[str, CellResolution]:
    """Every pass's cells after consensus (docs/statistics.md, "Cells after consensus"): a
    unanimous attributed consensus settles a cell, a contested one keeps the values proposed open."""
    out = {}
    for p in plan.passes:
        settled: dict[CellKey, int | str] = {}
        options: dict[CellKey, list[int]] = {}
        for key, c in consensus.get(p.id, {}).items():
            if c.state == "unanimous" and c.value is not None:
                settled[key] = c.value
            elif c.state == "contested":
                settled[key], options[key] = "contested", list(c.options)
        out[p.id] = resolve_cells(
            passes[p.id].scores, settled, flag_spread=flag_spread(plan),
            unflagged=plan.rules.unflagged, alternatives=options,
        )
    return out


def pass_consensus(plan: Plan, passes: Mapping[str, PassData], reconciliations: Sequence[Reconciliation],
                   round_id: str) -> dict[str, dict[CellKey, CellConsensus]]:
    """Per pass, each reconciled cell's consensus state from its raters' own (attributed) rows."""
    out: dict[str, dict[CellKey, CellConsensus]] = {}
    for p in plan.passes:
        raters_of: dict[CellKey, list[str]] = {}
        for rater, cells in passes[p.id].scores.items():
            for key in cells:
                raters_of.setdefault(key, []).append(rater)
        rows = [row for rec in reconciliations if (rec.pass_id, rec.round_id, rec.amendment) ==
                (p.id, round_id, None) for row in rec.rows]
        out[p.id] = cell_consensus(rows, raters_of, flagged_keys(passes[p.id].scores, flag_spread(plan)))
    return out



# --------------------------------------------------------------------------- analyse


def _checked(plan: Plan, round_id: str | None, bootstrap: int, method: str | None) -> tuple[str, str]:
    """The round to analyse and the interval method, or a usage error naming what is wrong."""
    from aoven_git import agreement

    round_id = round_id or plan.main_round.id
    round_ids = [r.id for r in plan.rounds]
    if round_id not in round_ids:
        raise UsageError(f"unknown round {round_id!r}; the plan has: {', '.join(round_ids)}")
    if bootstrap < 0:
        raise UsageError(f"bootstrap must be 0 or more resamples, got {bootstrap}")
    method = method or agreement.DEFAULT_CI_METHOD
    if method not in ("BCa", "percentile"):
        raise UsageError(f"interval method must be BCa or percentile, got {method!r}")
    return round_id, method


def analyse(
    plan: Plan,
    *,
    sheets: Sequence[ScoreSheet],
    reconciliations: Sequence[Reconciliation] = (),
    round_id: str | None = None,
    seals: Mapping[str, Any] | None = None,
    validation: Mapping[str, Any] | None = None,
    bootstrap: int = 1000,
    seed: int = 20260426,
    previous_verdicts: Mapping[str, str] | None = None,
    interval_method: str | None = None,
    source: Mapping[str, Any] | None = None,
    blockers: Sequence[str] = (),
    blind_keys: Mapping[str, bytes] | None = None,
) -> ReportData:
    """Analyse one round. ``seals`` is verify-seal's ``as_dict()`` (``None`` outside git),
    ``validation`` validate's ``as_dict()``; ``previous_verdicts`` maps earlier rounds to their
    verdicts — any not given is computed here from ``sheets`` (without bootstrap intervals).
    ``interval_method`` is ``"BCa"`` or ``"percentile"`` (default: agreement.DEFAULT_CI_METHOD).
    ``source`` says which revision the files come from (report_inputs.py); ``blockers`` are
    NOT-READY reasons found while gathering them (uncommitted study files). ``blind_keys`` maps
    each blind pass whose key is committed to the key's bytes (a blind pass without one is
    pending).
    """
    round_id, method = _checked(plan, round_id, bootstrap, interval_method)
    scoped = exclusions(seals, amendment_folders(plan))
    excluded = scoped.get(None, {})
    withdrawn = withdrawn_kept(seals)
    sheets = _counted_sheets(sheets, excluded, withdrawn)
    checked = attribution_note(seals, source) is None
    reconciliations = [attributed(_counted_rows(r, excluded, withdrawn), seals if checked else None)
                       for r in reconciliations]
    known = _earlier_verdicts(plan, round_id, previous_verdicts, sheets=sheets,
                              reconciliations=reconciliations, seals=seals, validation=validation, seed=seed,
                              blind_keys=blind_keys)
    sheets, blind = unblind_sheets(plan, sheets, blind_keys or {}, round_id)
    passes, problems = group_sheets(plan, sheets, round_id)
    kappas = pass_agreement(plan, passes, bootstrap=bootstrap, seed=seed, method=method)
    ready = readiness(round_id=round_id, used=verdict_passes(plan), seals=seals, validation=validation,
                      sheets=sheets, reconciliations=reconciliations, folders=amendment_folders(plan),
                      problems=[*blockers, *problems, *pending_blockers(plan, passes, blind)])
    consensus = pass_consensus(plan, passes, reconciliations, round_id)
    resolutions = resolve(plan, passes, consensus)
    verdict = decide_round(plan, resolutions, kappas, round_id, ready.blockers, known)
    design = None
    if plan.decisions:
        verdict, design = decide_design(plan, resolutions, kappas, round_id, ready.blockers, verdict, known)
    parts = Parts(plan, round_id, passes, kappas, ready, resolutions, verdict, bootstrap, seed, method,
                   dict(source or {}), excluded, consensus, attribution_note(seals, source),
                   [dict(u) for u in (seals or {}).get("unattributed_rows", []) or []],
                   tuple(reconciliations), known, tuple(blind), scoped, deviations_part(plan, seals),
                   withdrawn, design)
    return ReportData(verdict, document(parts), parts)


def _counted_sheets(sheets: Sequence[ScoreSheet], excluded: Collection[str],
                    withdrawn: Mapping[str, set[Scope]]) -> list[ScoreSheet]:
    """The sheets that count: not an excluded optional rater's, nor a withdrawn rater's sheet of a
    pass that was not complete at the withdrawal (docs/plan.md, "Withdrawals")."""
    return [s for s in sheets if s.sheet.rater not in excluded and not withdrawn_from(
        withdrawn, s.sheet.rater, (s.sheet.pass_id, s.sheet.round_id, s.sheet.amendment))]


def _counted_rows(rec: Reconciliation, excluded: Collection[str],
                  withdrawn: Mapping[str, set[Scope]]) -> Reconciliation:
    """`rec` without the rows of raters whose sheets of its pass do not count."""
    scope = (rec.pass_id, rec.round_id, rec.amendment)
    gone = {*excluded, *(r for r in withdrawn if withdrawn_from(withdrawn, r, scope))}
    return without_raters(rec, gone)


def _earlier_verdicts(
    plan: Plan, round_id: str, given: Mapping[str, str] | None, **inputs: Any
) -> dict[str, str]:
    """The verdicts of the rounds before `round_id` (a re-test is judged after them): the ones
    given, the others computed here from the same inputs, without bootstrap intervals."""
    known = dict(given or {})
    round_ids = [r.id for r in plan.rounds]
    for earlier in round_ids[: round_ids.index(round_id)]:
        if earlier not in known:
            known[earlier] = analyse(plan, round_id=earlier, bootstrap=0, previous_verdicts=known,
                                     **inputs).verdict.verdict
    return known


# --------------------------------------------------------------------------- 6. document


def decide_round(plan: Plan, resolutions: Mapping[str, Mapping[CellKey, CellResolution]],
                 kappas: Mapping[str, PassAgreement], round_id: str, blockers: Sequence[str],
                 previous: Mapping[str, Verdict], amendment: str | None = None) -> Verdict:
    """Steps 2–7 of the verdict over resolved cells, with the dimensions the primary pass's κ gate
    counts: one call for the study and for each amendment (`amendments.py`)."""
    primary, stripped = plan.primary_pass, blinding_pass(plan)
    return decide(
        plan,
        primary=resolutions[primary.id],
        blinded=resolutions[stripped.id] if stripped else None,
        counted_dims=kappas[primary.id].counted,
        excluded=kappas[primary.id].excluded,
        round_id=round_id,
        blockers=blockers,
        previous_verdicts=previous,
        consensus_files=consensus_files(plan, round_id, amendment),
    )


# --------------------------------------------------------------------------- 5b. designs


@dataclass(frozen=True)
class Parts:
    """Everything the document is written from."""

    plan: Plan
    round_id: str
    passes: Mapping[str, PassData]
    agreement: Mapping[str, PassAgreement]
    ready: Readiness
    resolutions: Mapping[str, CellResolution]
    verdict: Verdict
    bootstrap: int
    seed: int
    method: str
    source: dict[str, Any] = field(default_factory=dict)
    excluded: Mapping[str, list[str]] = field(default_factory=dict)
    consensus: Mapping[str, Mapping[CellKey, CellConsensus]] = field(default_factory=dict)
    attribution: str | None = None  # why rows were not attributed from history, or None when they were
    unattributed: list[dict[str, Any]] = field(default_factory=list)
    reconciliations: tuple[Reconciliation, ...] = ()  # attributed, excluded raters' rows removed
    previous: Mapping[str, str] = field(default_factory=dict)  # verdicts of the rounds before
    blind: tuple[BlindState, ...] = ()
    #: optional raters excluded for violations, by scope: None (the study) or an amendment id
    exclusions: Mapping[str | None, Mapping[str, list[str]]] = field(default_factory=dict)
    protocol: Mapping[str, Any] = field(default_factory=dict)  # protocol_events.deviations_part
    #: withdrawn raters, each with the (pass, round, amendment) complete at their withdrawal
    withdrawn: Mapping[str, set[Scope]] = field(default_factory=dict)
    design: Design | None = None  # the criteria and the decision, for a plan with `decisions`


def document(parts: Parts) -> dict[str, Any]:
    """The report document (schema ``aoven-git/report/1``): every existing key kept, new keys
    only added."""
    plan, verdict = parts.plan, parts.verdict
    ev = verdict.evaluation
    a, b = plan.baseline.id, plan.treatment.id
    pending_blind = {b.pass_id for b in parts.blind if b.state != "unblinded"}
    kappa = {p: {} if p in pending_blind else agreement.table for p, agreement in parts.agreement.items()}
    out = {
        "schema": SCHEMA,
        "study": plan.study,
        "plan_version": plan.version,
        "round": parts.round_id,
        "verdict": verdict.verdict,
        "summary": verdict.summary,
        "reasons": list(verdict.reasons),
        "terminal": verdict.terminal,
        **(design_headline(parts) if parts.design else headline(plan, ev)),
        "conditions": {"baseline": a, "treatment": b},
        "b_scores_from": verdict.b_scores_from,
        "blinding": _blinding(verdict),
        "verdict_pass": plan.primary_pass.id,
        "counted_dimensions": list(verdict.counted),
        "excluded_dimensions": dict(verdict.excluded),
        "dimensions": condition_dimension_means(parts, dimension_means(plan, ev, verdict.counted)),
        "questions": _questions(parts),
        "rules": [] if parts.design else _rules(parts),
        **(design_part(parts) if parts.design else {}),
        "kappa": kappa,
        "kappa_settings": _kappa_settings(plan, parts.bootstrap, parts.seed, parts.method),
        "caveats": caveats(kappa, parts.bootstrap),
        "raters": {p.id: list(parts.passes[p.id].sheets) for p in plan.passes},
        "pending_raters": {p.id: list(parts.passes[p.id].pending) for p in plan.passes},
        "rater_roster": [{"id": r.id, "name": r.name, "required": r.required} for r in plan.raters],
        **_cell_lists(parts.resolutions),
        "extremes": _extremes(verdict),
        "robust_to_contested": _robust_to(verdict),
        "self_bias": _self_bias(parts),
        "not_ready": list(verdict.not_ready),
        "seals": parts.ready.seals,
        "validation": parts.ready.validation,
        "retest": _retest(parts),
        "generated_by": f"aoven-git {__version__}",
        "source": parts.source or None,
        "excluded_raters": _excluded(parts),
        "deviations": [d.as_dict() for d in deviations(plan)],
        "protocol_deviations": dict(parts.protocol),
        "reconciliation": _reconciliation(parts),
        "blind_passes": [b.as_dict(b.pass_id in verdict_passes(plan)) for b in parts.blind],
        "uncertainty": uncertainty(parts),
    }
    return {**out, "reporting_checklist": checklist(parts, out)}


def checklist(parts: Parts, doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The reporting checklist (GRRAS; reporting_checklist.py) from the plan, the sheets and the
    document just written."""
    from aoven_git import reporting_checklist

    plan = parts.plan
    scores = {p: data.scores for p, data in parts.passes.items()}
    expected = {p.id: list(plan.expected_cells(p.id, parts.round_id)) for p in plan.passes}
    return reporting_checklist.build(plan, parts.round_id, doc, scores, expected)


def headline(plan: Plan, ev: Evaluation | None) -> dict[str, Any]:
    """The improvement and both conditions' mean aggregates (exact too); None while withheld."""
    a, b = plan.baseline.id, plan.treatment.id
    return {
        "improvement": full(ev.improvement) if ev else None,
        "improvement_exact": exact_str(ev.improvement) if ev else None,
        "means": {a: full(ev.mean_a) if ev else None, b: full(ev.mean_b) if ev else None},
        "means_exact": {a: exact_str(ev.mean_a) if ev else None, b: exact_str(ev.mean_b) if ev else None},
    }


def uncertainty(parts: Parts) -> dict[str, Any]:
    """Descriptive uncertainty beside the exact rules (docs/statistics.md, "Uncertainty a PI reads
    first"): bootstrap intervals over questions for each condition's mean and the improvement, and
    each rater's means per condition and dimension in the verdict pass. Withheld while NOT-READY,
    like the means themselves."""
    from aoven_git.uncertainty import question_intervals, rater_means

    plan, ev = parts.plan, parts.verdict.evaluation
    a, b = plan.baseline.id, plan.treatment.id
    settings = {"descriptive": True, "method": "percentile", "over": "questions",
                "confidence": CONFIDENCE, "bootstrap": parts.bootstrap, "seed": parts.seed}
    if plan.scale.nominal:
        return {**settings, "withheld": NO_MEANS, "intervals": None, "rater_means": None}
    if ev is None:
        return {**settings, "withheld": WITHHELD, "intervals": None, "rater_means": None}
    intervals = question_intervals([q.aggregate_a for q in ev.questions],
                                   [q.aggregate_b for q in ev.questions],
                                   n_resamples=parts.bootstrap, seed=parts.seed, confidence=CONFIDENCE)
    names = {"mean_A": f"mean_{a}", "mean_B": f"mean_{b}", "improvement": "improvement"}
    rnd = plan.round_(parts.round_id)
    primary = plan.primary_pass
    dims = [d.id for d in plan.dimensions if d.id in primary.dimensions]
    conditions = [c.id for c in plan.conditions] if parts.design else [a, b]
    means = rater_means(parts.passes[primary.id].scores, conditions=conditions, dimensions=dims,
                        questions=rnd.questions if rnd else ())
    return {
        **settings, "withheld": None,
        "intervals": {names[k]: v.as_dict() for k, v in intervals.items()},
        "rater_means": {r: {d: {c: full(m) for c, m in per_c.items()} for d, per_c in per_d.items()}
                        for r, per_d in means.items()},
        "rater_means_exact": {r: {d: {c: exact_str(m) for c, m in per_c.items()}
                                  for d, per_c in per_d.items()} for r, per_d in means.items()},
    }


def _reconciliation(parts: Parts) -> dict[str, Any]:
    """Per reconciled cell: each rater's proposal and quote, and whether the consensus is unanimous,
    contested or missing; the rows that were ignored because someone else wrote them."""
    cells = []
    for pass_id, by_cell in parts.consensus.items():
        for key, c in sorted(by_cell.items()):
            cells.append({
                "cell": str(key), "pass": pass_id, "state": c.state, "value": c.value,
                "proposals": [{"rater": r.rater, "consensus": r.consensus, "justification": r.justification,
                               "line": r.line, "author": r.author} for r in c.proposals],
                "missing": list(c.missing),
            })
    return {"attribution": "not-checked" if parts.attribution else "checked", "note": parts.attribution,
            "cells": cells, "unattributed": parts.unattributed}


def _excluded(parts: Parts) -> list[dict[str, Any]]:
    """Optional raters left out because of their seal violations, with the violations."""
    violations = (parts.ready.seals or {}).get("violations") or []
    return [{"rater": r, "codes": codes,
             "messages": [v.get("message") for v in violations if v.get("rater") == r]}
            for r, codes in parts.excluded.items()]


def _rules(parts: Parts) -> list[dict[str, Any]]:
    """Every rule with its value; while NOT-READY the same rules without values."""
    plan, verdict = parts.plan, parts.verdict
    if verdict.evaluation is not None:
        return [rule_entry(r) for r in verdict.evaluation.rules]
    rnd = plan.round_(parts.round_id)
    assert rnd is not None
    dims = [d.id for d in plan.dimensions if d.id in plan.primary_pass.dimensions]
    template = rules_template(plan, questions=rnd.questions, dimensions=dims, counted=verdict.counted,
                              excluded=verdict.excluded, reason=WITHHELD)
    return [rule_entry(r) for r in template]


def _questions(parts: Parts) -> list[dict[str, Any]]:
    """Per question: the plan's text, both aggregates (exact too) and whether it improves."""
    plan, ev = parts.plan, parts.verdict.evaluation
    a, b = plan.baseline.id, plan.treatment.id
    rnd = plan.round_(parts.round_id)
    assert rnd is not None
    results = {q.id: q for q in ev.questions} if ev else {}
    out = []
    for qid in rnd.questions:
        q, question = results.get(qid), plan.question(qid)
        out.append({
            "id": qid,
            f"aggregate_{a}": full(q.aggregate_a) if q else None,
            f"aggregate_{b}": full(q.aggregate_b) if q else None,
            "improved_dimensions": q.improved_dimensions if q else None,
            "improves": q.improves if q else None,
            f"aggregate_{a}_exact": exact_str(q.aggregate_a) if q else None,
            f"aggregate_{b}_exact": exact_str(q.aggregate_b) if q else None,
            "text": question.text if question else None,
        })
    return out


def dimension_means(plan: Plan, ev: Evaluation | None, counted: Sequence[str]) -> list[dict[str, Any]]:
    """Per dimension of the verdict pass: both means and Δ (exact too), and whether it counts."""
    by_id = {d.id: d for d in ev.dimensions} if ev else {}
    out = []
    for dim in plan.dimensions:
        if dim.id not in plan.primary_pass.dimensions:
            continue
        res = by_id.get(dim.id)
        ma, mb = (res.mean_a, res.mean_b) if res else (None, None)
        delta = res.delta if res else None
        out.append({
            "id": dim.id,
            "name": dim.name,
            "kind": dim.kind,
            "load": dim.id in plan.load_dimensions,
            "counted": dim.id in counted,
            "mean_A": full(ma),
            "mean_B": full(mb),
            "delta": full(delta),
            "mean_A_exact": exact_str(ma),
            "mean_B_exact": exact_str(mb),
            "delta_exact": exact_str(delta),
        })
    return out


def _kappa_settings(plan: Plan, bootstrap: int, seed: int, method: str) -> dict[str, Any]:
    from aoven_git.agreement import scale_weights

    k = plan.rules.kappa
    return {
        "weights": scale_weights(plan.scale.nominal, k.weights),
        "threshold": full(k.threshold),
        "aggregate": k.aggregate,
        "bootstrap": bootstrap,
        "seed": seed,
        "threshold_exact": exact_str(k.threshold),
        "undefined": k.undefined,
        "confidence": CONFIDENCE,
        "interval_method": method,
        "caveat_min_items": CAVEAT_MIN_ITEMS,
        "caveat_max_width": full(CAVEAT_MAX_WIDTH),
    }


def caveats(kappa: Mapping[str, Mapping[str, Any]], bootstrap: int) -> list[dict[str, Any]]:
    """Where a κ rests on few items or its interval is wide (docs/statistics.md, "Caveats"):
    one entry per pass, dimension and kind, naming the pairs concerned."""
    out: list[dict[str, Any]] = []
    for pass_id, per_dim in kappa.items():
        for dim, entry in per_dim.items():
            defined = [p for p, v in (entry.get("pairs") or {}).items() if v is not None]
            few = [p for p in defined if entry["pair_n"][p] < CAVEAT_MIN_ITEMS]
            if few:
                n = min(entry["pair_n"][p] for p in few)
                out.append({"kind": "few-items", "pass": pass_id, "dimension": dim, "pairs": few, "n": n,
                            "message": f"κ rests on {n} item{'s' if n != 1 else ''} (fewer than "
                                       f"{CAVEAT_MIN_ITEMS}): one item more or less can move it a lot"})
            wide = [p for p in defined if _wider(entry["intervals"].get(p))]
            if wide and bootstrap:
                out.append({"kind": "wide-interval", "pass": pass_id, "dimension": dim, "pairs": wide,
                            "message": f"the {int(CONFIDENCE * 100)}% interval of κ is wider than "
                                       f"{float(CAVEAT_MAX_WIDTH)} for {', '.join(wide)}"})
    return out


def _wider(interval: Sequence[float] | None) -> bool:
    return interval is not None and Fraction(interval[1]) - Fraction(interval[0]) > CAVEAT_MAX_WIDTH


def _blinding(verdict: Verdict) -> dict[str, Any] | None:
    bl = verdict.blinding
    if bl is None:
        return None
    return {
        "pass": bl.pass_id,
        "divergence": full(bl.divergence),
        "divergence_exact": exact_str(bl.divergence),
        "threshold": full(bl.threshold),
        "used": bl.used,
        "threshold_exact": exact_str(bl.threshold),
    }


def _extremes(verdict: Verdict) -> dict[str, Any] | None:
    if verdict.best is None or verdict.worst is None:
        return None
    return {
        case: {"verdict": ev.verdict, "improvement": full(ev.improvement),
               "improvement_exact": exact_str(ev.improvement)}
        for case, ev in (("best", verdict.best), ("worst", verdict.worst))
    }


def _robust_to(verdict: Verdict) -> int:
    """How many contested cells the verdict is robust to (0 unless both extremes agree)."""
    return len(verdict.contested) if verdict.best and verdict.verdict != "CONTESTED" else 0


def _cell_lists(resolutions: Mapping[str, CellResolution]) -> dict[str, Any]:
    flagged = [str(k) for pid in resolutions for k in sorted(resolutions[pid].flagged)]
    contested = [str(k) for pid in resolutions for k in sorted(resolutions[pid].contested)]
    cells = []
    for pass_id, res in resolutions.items():
        for key in sorted(res.cells):
            cell = res.cells[key]
            if cell.disagreement:
                cells.append({
                    "cell": str(key),
                    "pass": pass_id,
                    "scores": dict(cell.scores),
                    "flagged": cell.flagged,
                    "resolution": cell.resolution,
                    "value": full(cell.value),
                    "value_exact": exact_str(cell.value),
                })
    return {"flagged_cells": list(dict.fromkeys(flagged)), "contested_cells": list(dict.fromkeys(contested)),
            "cells": cells}


def _self_bias(parts: Parts) -> list[dict[str, Any]]:
    plan = parts.plan
    a, b = plan.baseline.id, plan.treatment.id
    rnd = plan.round_(parts.round_id)
    assert rnd is not None
    out = []
    for p in plan.passes:
        if a in p.conditions and b in p.conditions:
            for s in self_bias(parts.passes[p.id].scores, pass_id=p.id, baseline=a, treatment=b,
                               questions=rnd.questions):
                out.append({"rater": s.rater, "pass": s.pass_id, "flagged": s.flagged, "b_worse": s.b_worse})
    return out


def _retest(parts: Parts) -> dict[str, Any] | None:
    plan = parts.plan
    if [r.id for r in plan.rounds].index(parts.round_id) == 0:
        return None
    rnd = plan.round_(parts.round_id)
    assert rnd is not None
    return {"round": parts.round_id, "refinements": list(rnd.refinements),
            "problems": list(parts.verdict.retest_problems)}
