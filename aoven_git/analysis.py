"""From parsed score sheets to the report document (SPEC §6–§7, helper-notes/report-json.md).

Orchestration over plain data only: the caller has already parsed the score files and
reconciliations, run ``validate`` and ``verify-seal``; this module groups the sheets by pass,
computes agreement (agreement.py, floats for display), decides which dimensions count with an
exact κ gate, resolves cells and asks verdict.py for the verdict. The result's ``as_dict()`` is
the one document every renderer reads, so every number in it is a rounded float or ``None``
plus an exact ``"p/q"`` string where the verdict depends on it — never NaN.

Agreement is reported whenever cells parse, even for a NOT-READY verdict: raters need the κ
table to see which dimensions are in trouble. The verdict numbers themselves (means,
improvement, rule values) are withheld while NOT-READY, so a reconciliation can never be
steered by watching a provisional verdict move.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from aoven_git import __version__
from aoven_git.errors import UsageError
from aoven_git.model import CellKey, Pass, Plan, Reconciliation, ScoreSheet
from aoven_git.verdict import (
    CellResolution,
    Evaluation,
    RuleResult,
    Verdict,
    blinding_pass,
    decide,
    exact_pairwise_kappa,
    kappa_gate,
    resolve_cells,
    rules_template,
    self_bias,
)

SCHEMA = "aoven-git/report/1"
NOT_VERIFIED = "not a git repository, so the sealing history was not checked"
WITHHELD = "withheld while the verdict is NOT-READY"


@dataclass(frozen=True)
class ReportData:
    """The analysed round: the verdict object for callers, the contract document for renderers."""

    verdict: Verdict
    document: Mapping[str, Any]

    def as_dict(self) -> dict[str, Any]:
        # A fresh copy per caller, so a renderer can never alter what another one reads. The
        # document is plain JSON by contract, and a JSON round trip copies a 20-rater study's
        # document several times faster than copy.deepcopy (it also refuses NaN on the way).
        return json.loads(json.dumps(self.document, allow_nan=False))


# --------------------------------------------------------------------------- number helpers


def _r(x: Fraction | float | int | None) -> float | None:
    return None if x is None else round(float(x), 4)


def _x(x: Fraction | None) -> str | None:
    return None if x is None else str(x)


# --------------------------------------------------------------------------- grouping


@dataclass(frozen=True)
class _PassData:
    pass_: Pass
    sheets: dict[str, ScoreSheet]  # rater -> sheet, plan order
    scores: dict[str, dict[CellKey, int]]  # rater -> cell -> score (only cells the pass expects)
    pending: list[str]  # required raters without a sheet


def _group(plan: Plan, sheets: Sequence[ScoreSheet], round_id: str) -> tuple[dict[str, _PassData], list[str]]:
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
        pending = [r.id for r in plan.required_raters if r.id not in ordered]
        out[p.id] = _PassData(p, ordered, scores, pending)
    return out, problems


# --------------------------------------------------------------------------- agreement


def _kappa(plan: Plan, data: _PassData, bootstrap: int, seed: int) -> tuple[dict, set[str], dict]:
    """κ table of one pass, plus the dimensions that pass the exact gate and why others do not."""
    from aoven_git.agreement import aggregate_kappa, krippendorff_alpha, pair_label, pairwise_kappa

    rules = plan.rules.kappa
    cats = plan.scale.values
    table: dict[str, Any] = {}
    counts: set[str] = set()
    why: dict[str, str] = {}
    for d in (dim.id for dim in plan.dimensions if dim.id in data.pass_.dimensions):
        ratings = {
            rater: {k.item: v for k, v in cells.items() if k.dimension == d}
            for rater, cells in data.scores.items()
        }
        pairs = pairwise_kappa(
            ratings, categories=cats, weights=rules.weights, bootstrap=bootstrap, seed=seed
        )
        agg_min = aggregate_kappa(pairs, "min", undefined=rules.undefined)
        agg_mean = aggregate_kappa(pairs, "mean", undefined=rules.undefined)
        chosen = agg_min if rules.aggregate == "min" else agg_mean
        alpha = krippendorff_alpha(ratings, categories=cats, level="ordinal")
        gate = kappa_gate(
            exact_pairwise_kappa(ratings, categories=cats, weights=rules.weights),
            threshold=rules.threshold,
            aggregate=rules.aggregate,
            undefined=rules.undefined,
        )
        if gate.counts:
            counts.add(d)
        else:
            why[d] = gate.reason or "kappa below threshold"
        table[d] = {
            "value": _r(chosen.value),
            "reason": chosen.reason if chosen.value is None else gate.reason,
            "counts": gate.counts,
            "min": _r(agg_min.value),
            "mean": _r(agg_mean.value),
            "alpha": _r(alpha.value),
            "pairs": {pair_label(*k): _r(v.value) for k, v in pairs.items()},
            "intervals": {
                pair_label(*k): ([_r(v.ci[0]), _r(v.ci[1])] if v.ci else None) for k, v in pairs.items()
            },
            "n": chosen.n,
        }
    return table, counts, why


# --------------------------------------------------------------------------- seals, validation


def _seals(
    seals: Mapping[str, Any] | None, round_id: str, used: set[str]
) -> tuple[dict[str, Any], list[str]]:
    if seals is None:
        doc = {
            "verified": False,
            "status": "not-verified",
            "message": NOT_VERIFIED,
            "violations": [],
            "forced_reveals": [],
        }
        return doc, []
    violations = [
        {k: v.get(k) for k in ("code", "rater", "commit", "message")}
        for v in seals.get("violations", []) or []
    ]
    status = seals.get("status") or (
        "violated" if violations else "complete" if seals.get("ok") else "pending"
    )
    if status == "unverifiable":
        message = str(seals.get("message") or "verify-seal could not run")
        doc = {"verified": False, "status": status, "message": message, "violations": [],
               "forced_reveals": []}
        return doc, [f"the seals could not be verified: {message}"]
    blockers = [
        f"seal violation {v['code']}" + (f" by {v['rater']}" if v.get("rater") else "") + f": {v['message']}"
        for v in violations
    ]
    if status == "violated" and not violations:
        blockers.append("verify-seal reports violated seals")
    if status == "pending":
        detail = seals.get("pending")
        if isinstance(detail, list) and all(isinstance(p, Mapping) for p in detail):
            for p in detail:
                if p.get("round", round_id) == round_id and p.get("pass") in used | {None}:
                    who, where = p.get("rater", "?"), p.get("pass", "?")
                    blockers.append(f"required rater {who} has not sealed scores for pass {where}")
        else:
            blockers.append("verify-seal reports required raters that have not sealed yet (status pending)")
    elif status not in ("complete", "violated"):
        blockers.append(f"verify-seal reports an unknown status {status!r}")
    message = seals.get("message") or {
        "complete": "every seal verified from history",
        "pending": "some required raters have not sealed yet",
        "violated": f"{len(violations)} seal violation(s)",
    }.get(status, str(status))
    doc = {
        "verified": True,
        "status": status,
        "message": message,
        "violations": violations,
        "forced_reveals": list(seals.get("forced_reveals", []) or []),
    }
    return doc, blockers


def _validation(
    validation: Mapping[str, Any] | None,
    sheets: Sequence[ScoreSheet],
    reconciliations: Sequence[Reconciliation],
    round_id: str,
) -> tuple[dict[str, Any], list[str]]:
    if validation is not None:
        files = [
            {
                "path": f.get("path"),
                "errors": list(f.get("errors", []) or []),
                "warnings": list(f.get("warnings", []) or []),
                "round": f.get("round"),
            }
            for f in validation.get("files", []) or []
        ]
    else:
        files = [
            {
                "path": s.path,
                "errors": [f.as_dict() for f in s.errors],
                "warnings": [f.as_dict() for f in s.warnings],
                "round": s.sheet.round_id,
            }
            for s in sheets
        ]
    files += [
        {
            "path": r.path,
            "errors": [f.as_dict() for f in r.findings if f.severity == "error"],
            "warnings": [f.as_dict() for f in r.findings if f.severity == "warning"],
            "round": r.round_id,
        }
        for r in reconciliations
        if not any(f["path"] == r.path for f in files)
    ]
    bad: dict[str, int] = {}
    for f in files:
        if f["errors"] and f["round"] in (None, round_id):
            bad[f["path"]] = len(f["errors"])
    for s in sheets:  # a sheet handed over invalid blocks even if the summary missed it
        if not s.ok and s.sheet.round_id == round_id:
            bad.setdefault(s.path, len(s.errors))
    errors = sum(len(f["errors"]) for f in files)
    warnings = sum(len(f["warnings"]) for f in files)
    ok = bool(validation.get("ok", errors == 0)) if validation is not None else errors == 0
    doc = {
        "ok": ok and errors == 0,
        "errors": errors,
        "warnings": warnings,
        "files": [{k: f[k] for k in ("path", "errors", "warnings")} for f in files],
    }
    blockers = [f"{path} is invalid ({n} error{'s' if n != 1 else ''})" for path, n in bad.items()]
    return doc, blockers


# --------------------------------------------------------------------------- reconciliation


def _consensus(
    reconciliations: Sequence[Reconciliation], pass_id: str, round_id: str
) -> tuple[dict[CellKey, int | str], dict[CellKey, list[int]]]:
    consensus: dict[CellKey, int | str] = {}
    alternatives: dict[CellKey, list[int]] = {}
    for rec in reconciliations:
        if rec.pass_id != pass_id or rec.round_id != round_id:
            continue
        for key, value in rec.consensus().items():
            consensus.setdefault(key, value)
        for row in rec.rows:
            if isinstance(row.consensus, int) and not isinstance(row.consensus, bool):
                alternatives.setdefault(row.key, []).append(row.consensus)
    return consensus, alternatives


# --------------------------------------------------------------------------- document parts


def _rule(r: RuleResult) -> dict[str, Any]:
    return {
        "id": r.id,
        "kind": r.kind,
        "text": r.text,
        "value": _r(r.value),
        "value_exact": _x(r.value),
        "threshold": _r(r.threshold),
        "threshold_exact": _x(r.threshold),
        "outcome": r.outcome,
        "reason": r.reason,
    }


def _dimensions(plan: Plan, ev: Evaluation | None, counted: Sequence[str]) -> list[dict[str, Any]]:
    by_id = {d.id: d for d in ev.dimensions} if ev else {}
    out = []
    for dim in plan.dimensions:
        if dim.id not in plan.primary_pass.dimensions:
            continue
        res = by_id.get(dim.id)
        ma, mb = (res.mean_a, res.mean_b) if res else (None, None)
        delta = res.delta if res else None
        out.append(
            {
                "id": dim.id,
                "name": dim.name,
                "kind": dim.kind,
                "load": dim.id in plan.load_dimensions,
                "counted": dim.id in counted,
                "mean_A": _r(ma),
                "mean_B": _r(mb),
                "delta": _r(delta),
                "mean_A_exact": _x(ma),
                "mean_B_exact": _x(mb),
                "delta_exact": _x(delta),
            }
        )
    return out


def _cells(resolutions: Mapping[str, CellResolution]) -> list[dict[str, Any]]:
    out = []
    for pass_id, res in resolutions.items():
        for key in sorted(res.cells):
            cell = res.cells[key]
            if not cell.disagreement:
                continue
            out.append(
                {
                    "cell": str(key),
                    "pass": pass_id,
                    "scores": dict(cell.scores),
                    "flagged": cell.flagged,
                    "resolution": cell.resolution,
                    "value": _r(cell.value),
                    "value_exact": _x(cell.value),
                }
            )
    return out


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --------------------------------------------------------------------------- analyse


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
) -> ReportData:
    """Analyse one round. ``seals`` is verify-seal's ``as_dict()`` (``None`` outside git),
    ``validation`` validate's ``as_dict()``; ``previous_verdicts`` maps earlier rounds to their
    verdicts — any not given is computed here from ``sheets`` (without bootstrap intervals).
    """
    round_id = round_id or plan.main_round.id
    round_ids = [r.id for r in plan.rounds]
    if round_id not in round_ids:
        raise UsageError(f"unknown round {round_id!r}; the plan has: {', '.join(round_ids)}")
    if bootstrap < 0:
        raise UsageError(f"bootstrap must be 0 or more resamples, got {bootstrap}")

    known = dict(previous_verdicts or {})
    for earlier in round_ids[: round_ids.index(round_id)]:
        if earlier not in known:
            known[earlier] = analyse(
                plan,
                sheets=sheets,
                reconciliations=reconciliations,
                round_id=earlier,
                seals=seals,
                validation=validation,
                bootstrap=0,
                seed=seed,
                previous_verdicts=known,
            ).verdict.verdict

    primary = plan.primary_pass
    stripped = blinding_pass(plan)
    used = {primary.id} | ({stripped.id} if stripped else set())
    passes, blockers = _group(plan, sheets, round_id)

    # -- agreement, per pass ------------------------------------------------------------------
    kappa: dict[str, Any] = {}
    counted: set[str] = set()
    excluded: dict[str, str] = {}
    for p in plan.passes:
        table, counts, why = _kappa(plan, passes[p.id], bootstrap, seed)
        kappa[p.id] = table
        if p.id == primary.id:
            counted, excluded = counts, why

    # -- blockers outside the cells -----------------------------------------------------------
    for pass_id in (p.id for p in plan.passes if p.id in used):
        for rater in passes[pass_id].pending:
            blockers.append(f"required rater {rater} has not revealed scores for pass {pass_id}")
    seals_doc, seal_blockers = _seals(seals, round_id, used)
    validation_doc, invalid = _validation(validation, sheets, reconciliations, round_id)
    blockers = invalid + seal_blockers + blockers

    # -- cells ---------------------------------------------------------------------------------
    resolutions: dict[str, CellResolution] = {}
    for p in plan.passes:
        consensus, alternatives = _consensus(reconciliations, p.id, round_id)
        resolutions[p.id] = resolve_cells(
            passes[p.id].scores,
            consensus,
            flag_spread=plan.rules.flag_spread,
            unflagged=plan.rules.unflagged,
            alternatives=alternatives,
        )

    verdict = decide(
        plan,
        primary=resolutions[primary.id],
        blinded=resolutions[stripped.id] if stripped else None,
        counted_dims=counted,
        excluded=excluded,
        round_id=round_id,
        blockers=blockers,
        previous_verdicts=known,
    )

    # -- self-bias -------------------------------------------------------------------------------
    rnd = plan.round_(round_id)
    assert rnd is not None
    a, b = plan.baseline.id, plan.treatment.id
    bias = []
    for p in plan.passes:
        if a in p.conditions and b in p.conditions:
            for s in self_bias(
                passes[p.id].scores, pass_id=p.id, baseline=a, treatment=b, questions=rnd.questions
            ):
                bias.append({"rater": s.rater, "pass": s.pass_id, "flagged": s.flagged, "b_worse": s.b_worse})

    # -- the document ------------------------------------------------------------------------
    ev = verdict.evaluation
    dims = [d.id for d in plan.dimensions if d.id in primary.dimensions]
    if ev is not None:
        rules = [_rule(r) for r in ev.rules]
        questions = [
            {
                "id": q.id,
                "aggregate_A": _r(q.aggregate_a),
                "aggregate_B": _r(q.aggregate_b),
                "improved_dimensions": q.improved_dimensions,
                "improves": q.improves,
            }
            for q in ev.questions
        ]
    else:
        template = rules_template(
            plan,
            questions=rnd.questions,
            dimensions=dims,
            counted=verdict.counted,
            excluded=verdict.excluded,
            reason=WITHHELD,
        )
        rules = [_rule(r) for r in template]
        questions = [
            {"id": q, "aggregate_A": None, "aggregate_B": None, "improved_dimensions": None, "improves": None}
            for q in rnd.questions
        ]
    blinding = None
    if verdict.blinding is not None:
        bl = verdict.blinding
        blinding = {
            "pass": bl.pass_id,
            "divergence": _r(bl.divergence),
            "divergence_exact": _x(bl.divergence),
            "threshold": _r(bl.threshold),
            "used": bl.used,
        }
    extremes = None
    if verdict.best is not None and verdict.worst is not None:
        extremes = {
            "best": {"verdict": verdict.best.verdict, "improvement": _r(verdict.best.improvement)},
            "worst": {"verdict": verdict.worst.verdict, "improvement": _r(verdict.worst.improvement)},
        }
    flagged = [str(k) for pid in resolutions for k in sorted(resolutions[pid].flagged)]
    contested = [str(k) for pid in resolutions for k in sorted(resolutions[pid].contested)]
    retest = None
    if round_ids.index(round_id) > 0:
        retest = {
            "round": round_id,
            "refinements": list(rnd.refinements),
            "problems": list(verdict.retest_problems),
        }

    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "study": plan.study,
        "plan_version": plan.version,
        "round": round_id,
        "verdict": verdict.verdict,
        "summary": verdict.summary,
        "reasons": list(verdict.reasons),
        "terminal": verdict.terminal,
        "improvement": _r(ev.improvement) if ev else None,
        "improvement_exact": _x(ev.improvement) if ev else None,
        "means": {a: _r(ev.mean_a) if ev else None, b: _r(ev.mean_b) if ev else None},
        "means_exact": {a: _x(ev.mean_a) if ev else None, b: _x(ev.mean_b) if ev else None},
        "conditions": {"baseline": a, "treatment": b},
        "b_scores_from": verdict.b_scores_from,
        "blinding": blinding,
        "verdict_pass": primary.id,
        "counted_dimensions": list(verdict.counted),
        "excluded_dimensions": dict(verdict.excluded),
        "dimensions": _dimensions(plan, ev, verdict.counted),
        "questions": questions,
        "rules": rules,
        "kappa": kappa,
        "kappa_settings": {
            "weights": plan.rules.kappa.weights,
            "threshold": _r(plan.rules.kappa.threshold),
            "aggregate": plan.rules.kappa.aggregate,
            "bootstrap": bootstrap,
            "seed": seed,
        },
        "raters": {p.id: list(passes[p.id].sheets) for p in plan.passes},
        "pending_raters": {p.id: list(passes[p.id].pending) for p in plan.passes},
        "flagged_cells": _unique(flagged),
        "contested_cells": _unique(contested),
        "cells": _cells(resolutions),
        "extremes": extremes,
        "robust_to_contested": len(verdict.contested) if extremes and verdict.verdict != "CONTESTED" else 0,
        "self_bias": bias,
        "not_ready": list(verdict.not_ready),
        "seals": seals_doc,
        "validation": validation_doc,
        "retest": retest,
        "generated_by": f"aoven-git {__version__}",
    }
    return ReportData(verdict, doc)
