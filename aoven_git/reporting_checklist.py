"""The reporting checklist of a reliability study (docs/report.md, "Reporting checklist").

Guidelines for reporting reliability and agreement studies (GRRAS: Kottner et al. 2011, J Clin
Epidemiol 64:96–106, 15 items) and Hallgren (2012, Tutor Quant Methods Psychol 8:23–34) ask a
report to state its design, who rated what, whether the ratings were blind and independent, which
statistic was used with which weights, the estimates with their uncertainty, and the software.
This module fills each such item from the plan and the report document already written (it
computes no statistic), or names it missing with what would fill it. Pure: no git, no files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aoven_git.model import CellKey, Plan

#: The plan keys and data each item is filled from: docs/statistics.md, "Reporting checklist".
GRRAS = "GRRAS (Kottner et al. 2011)"


def entry(item: str, value: str | None, where: str, fill: str, grras: Sequence[int]) -> dict[str, Any]:
    """One checklist row: reported with its value, or missing with what would fill it."""
    reported = value is not None
    return {"item": item, "value": value if reported else f"missing: {fill}",
            "status": "reported" if reported else "missing", "where": where, "grras": list(grras)}


def crossing(plan: Plan, scores: Mapping[str, Mapping[str, Mapping[CellKey, int]]],
             expected: Mapping[str, Sequence[CellKey]]) -> str | None:
    """Fully crossed (every rater scored every cell of each pass) or not, naming the gaps;
    None when no pass has a sheet yet."""
    gaps, seen = [], False
    for p in plan.passes:
        raters = scores.get(p.id) or {}
        seen = seen or bool(raters)
        for rater, cells in raters.items():
            missing = len([k for k in expected.get(p.id, ()) if k not in cells])
            if missing:
                gaps.append(f"{rater} left {missing} of {len(expected[p.id])} cells of pass {p.id}")
        gaps += [f"{r} has no sheet for pass {p.id}" for r in (x.id for x in plan.raters) if raters
                 and r not in raters]
    if not seen:
        return None
    if not gaps:
        return "fully crossed: every rater scored every item of every pass"
    return "not fully crossed: " + "; ".join(gaps)


def counts(plan: Plan, round_id: str, doc: Mapping[str, Any]) -> tuple[str, str, str]:
    """The numbers of raters (per pass), items and replicates."""
    raters = doc.get("raters") or {}
    per_pass = "; ".join(f"{len(rs)} in pass {p}" for p, rs in raters.items())
    rnd = plan.round_(round_id)
    questions = len(rnd.questions) if rnd else 0
    dims = len([d for d in plan.dimensions if d.id in plan.primary_pass.dimensions])
    conds = len(plan.primary_pass.conditions)
    items = (f"{questions} questions × {conds} conditions = {questions * conds} responses, each scored "
             f"on {dims} dimensions in the verdict pass (κ's items: the responses, per dimension)")
    return (f"{len(plan.raters)} raters in the plan ({per_pass})", items,
            "1 response per (question, condition): no replicates")


def losses(doc: Mapping[str, Any]) -> str:
    """Raters still pending and raters excluded for seal violations (GRRAS 11: reasons for losses)."""
    pending = [f"{r} (pass {p}, pending)" for p, rs in (doc.get("pending_raters") or {}).items() for r in rs]
    excluded = [f"{e.get('rater')} (excluded: {', '.join(e.get('codes') or [])})"
                for e in doc.get("excluded_raters") or []]
    return "; ".join(pending + excluded) or "none: every required rater's sheets count"


def blinding(plan: Plan, doc: Mapping[str, Any]) -> str:
    """Which passes showed raters stripped responses, which were fully blind (opaque ids)."""
    parts = []
    for p in plan.passes:
        kind = ("fully blind (opaque ids, conditions hidden)" if p.blind else
                "stripped (markers removed)" if p.stripped else "unblinded (conditions visible)")
        parts.append(f"pass {p.id}: {kind}")
    bl = doc.get("blinding")
    if isinstance(bl, Mapping) and bl.get("divergence") is not None:
        parts.append(f"blinded-vs-unblinded divergence {bl['divergence']:.4g} "
                     f"({'within' if bl.get('used') else 'beyond'} the plan's threshold)")
    return "; ".join(parts)


def independence(doc: Mapping[str, Any]) -> str | None:
    """The seal proof: each rater sealed before any other's scores were readable."""
    seals = doc.get("seals") or {}
    if not seals.get("verified") and seals.get("status") in (None, "not-verified", "unverifiable"):
        return None
    return f"verify-seal: {seals.get('status')} ({seals.get('message')})"


def statistic(plan: Plan) -> str:
    """The gating coefficient, its weights, aggregation and threshold (a labelled scale takes no
    weights and nominal α, docs/statistics.md, "Labels and replicates")."""
    k = plan.rules.kappa
    level, weights = ("nominal", "none (labels)") if plan.scale.nominal else ("ordinal", k.weights)
    name = {"cohen": "Cohen's weighted κ", "gwet": "Gwet's AC1/AC2", "brennan-prediger": "Brennan–Prediger",
            "krippendorff": f"Krippendorff's α ({level})"}[k.coefficient]
    return (f"{name} per rater pair and dimension, {weights} weights, {k.aggregate} over pairs, gate "
            f"≥ {float(k.threshold):g}; beside it α, AC1/AC2, Brennan–Prediger, prevalence and bias indices")


def estimates(doc: Mapping[str, Any]) -> str | None:
    """The agreement estimates with their intervals (None when no interval was computed)."""
    settings = doc.get("kappa_settings") or {}
    tables = [d for per_dim in (doc.get("kappa") or {}).values() for d in per_dim.values()]
    if not tables or not settings.get("bootstrap"):
        return None
    level = f"{float(settings.get('confidence') or 0.95):.0%}"
    return (f"{len(tables)} κ tables with {level} {settings.get('interval_method')} bootstrap intervals "
            f"({settings.get('bootstrap')} resamples, seed {settings.get('seed')}); AC1/AC2 and "
            "Brennan–Prediger with Gwet's standard errors")


def build(plan: Plan, round_id: str, doc: Mapping[str, Any],
          scores: Mapping[str, Mapping[str, Mapping[CellKey, int]]],
          expected: Mapping[str, Sequence[CellKey]]) -> list[dict[str, Any]]:
    """Every checklist item, in GRRAS order, filled from the plan and the document."""
    raters, items, replicates = counts(plan, round_id, doc)
    named = [r.name for r in plan.raters if r.name and r.name != r.id]
    return [
        entry("design", crossing(plan, scores, expected), "Raters; Agreement",
              "score sheets (no rater has one yet)", [8, 11]),
        entry("number of raters", raters, "Raters", "raters in the plan", [11]),
        entry("number of items", items, "Questions; Means per dimension", "questions in the plan", [3, 11]),
        entry("replicates", replicates, "plan", "replicates in the plan", [8]),
        entry("rater population", ("raters named in the plan: " + ", ".join(named)) if named else None,
              "plan (raters)", "the raters' names and roles in the plan's `raters`", [4]),
        entry("sampling of raters and items", None, "study protocol",
              "say how raters and questions were chosen (the plan has no key for it: write it in the "
              "study's protocol or README)", [6, 7]),
        entry("rater training", None, "study protocol",
              "say how raters were trained and calibrated on the rubric (the plan has no key for it)", [12]),
        entry("losses", losses(doc), "Raters; Seals", "pending and excluded raters", [11]),
        entry("blinding", blinding(plan, doc), "Blinding", "passes in the plan", [8]),
        entry("independence", independence(doc), "Seals",
              "run the report in the study's git repository so verify-seal proves each rater sealed "
              "before others' scores were readable", [9]),
        entry("statistic and weights", statistic(plan), "Agreement", "rules.kappa in the plan", [10]),
        entry("estimates with intervals", estimates(doc), "Agreement; Uncertainty",
              "agreement with bootstrap intervals (--bootstrap above 0, every sheet of a pass revealed)",
              [13]),
        entry("software and version", f"{doc.get('generated_by')} (exact fractions for the verdict; "
              "bootstrap with SciPy)", "footer", "the software", [10]),
    ]
