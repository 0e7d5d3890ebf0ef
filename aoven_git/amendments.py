"""The exploratory layer: each amendment of the plan recomputed beside the pre-registered verdict
(docs/amendments.md, "What the report shows").

A rubric ruling made after the data were seen may re-score cells, but it never changes the
verdict the plan pre-registered. :func:`explore` therefore starts from the finished pre-registered
analysis (``analysis.ReportData.parts``) and, for every amendment in plan order, builds a new
*layer* on top of the one before it (amendment 2 on top of amendment 1):

1. :func:`rescored_sheets` — the amendment's sheets by pass and rater, and who is pending;
2. :func:`rescore` — each rater's re-scores replace that rater's cells in the amendment's scope;
3. :func:`reconcile` — the scope's consensus from the amendment's own reconciliation, attributed
   exactly like the study's (attribution.cell_consensus); consensus outside the scope is kept;
4. :func:`agree` — κ of the amended dimensions in every pass of the scope, and the κ gate again;
5. :func:`~aoven_git.verdict.decide` — the verdict with the amended cells, labelled exploratory;
6. :func:`amendment_entry` — what changed: cells, consensus, κ, rules and verdict.

What blocks the pre-registered verdict blocks every amendment built on it; what blocks an
amendment (a pending rater, an invalid file, a seal violation in its folder) blocks that
amendment and the ones after it, never the pre-registered verdict. Pure: plain data in and out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from aoven_git.analysis import (
    Parts,
    PassAgreement,
    PassData,
    ReportData,
    decide_round,
    dimension_means,
    exact_str,
    full,
    headline,
    pass_agreement,
    resolve,
)
from aoven_git.attribution import CellConsensus, cell_consensus
from aoven_git.design_report import decide_design
from aoven_git.model import Amendment, CellKey, Plan, Reconciliation, ScoreSheet
from aoven_git.readiness import invalid_file, withdrawn_from
from aoven_git.reconciliation import flag_spread as plan_flag_spread
from aoven_git.reconciliation import flagged_keys
from aoven_git.verdict import CellResolution, Verdict

LABEL = "exploratory"


@dataclass(frozen=True)
class Layer:
    """The study as amended so far: every pass's scores, consensus, resolved cells and κ, the
    verdict, and what keeps it from being judged."""

    passes: Mapping[str, PassData]
    consensus: Mapping[str, Mapping[CellKey, CellConsensus]]
    resolutions: Mapping[str, CellResolution]
    agreement: Mapping[str, PassAgreement]
    verdict: Verdict
    blockers: tuple[str, ...]


def explore(data: ReportData, amendment_sheets: Sequence[ScoreSheet]) -> ReportData:
    """The report with ``amendments``: one entry per amendment of the plan, in plan order, each on
    top of the ones before it. The pre-registered verdict and the rest of the document are kept
    as they are."""
    parts = data.parts
    if parts is None:
        return ReportData(data.verdict, {**data.document, "amendments": []})
    layer = Layer(parts.passes, parts.consensus, parts.resolutions, parts.agreement, parts.verdict,
                  tuple(parts.ready.blockers))
    entries = []
    for a in parts.plan.amendments:
        out = {**parts.excluded, **parts.exclusions.get(a.id, {})}
        # a withdrawn rater's re-scores of a pass not complete at the withdrawal do not count
        own = [s for s in amendment_sheets if s.sheet.amendment == a.id
               and s.sheet.round_id == parts.round_id and s.sheet.rater not in out
               and not withdrawn_from(parts.withdrawn, s.sheet.rater,
                                      (s.sheet.pass_id, s.sheet.round_id, a.id))]
        layer, entry = amend(parts, layer, a, own, out)
        entries.append(entry)
    return ReportData(data.verdict, {**data.document, "amendments": entries}, parts)


def amend(parts: Parts, before: Layer, a: Amendment, sheets: Sequence[ScoreSheet],
          excluded: Mapping[str, list[str]]) -> tuple[Layer, dict[str, Any]]:
    """One amendment on top of `before`: the new layer, and the amendment's report entry."""
    plan = parts.plan
    scope = {p: plan.expected_cells(p, parts.round_id, amendment=a.id) for p in a.passes if plan.pass_(p)}
    found, problems = rescored_sheets(plan, a, sheets)
    passes, changed = rescore(plan, before.passes, scope, found)
    consensus = reconcile(parts.reconciliations, a, parts.round_id, passes, scope, before.consensus,
                          plan_flag_spread(plan))
    resolutions = resolve(plan, passes, consensus)
    agreement = agree(parts, passes, scope, before.agreement)
    blockers = tuple(dict.fromkeys([*problems, *parts.ready.amendments.get(a.id, []), *before.blockers]))
    verdict = decide_round(plan, resolutions, agreement, parts.round_id, blockers, parts.previous, a.id)
    if plan.decisions:  # a design's exploratory verdict summarises its decision, as the study's does
        verdict, _ = decide_design(plan, resolutions, agreement, parts.round_id, blockers, verdict,
                                   parts.previous)
    layer = Layer(passes, consensus, resolutions, agreement, verdict, blockers)
    change = Change(scope, found, changed, excluded)
    return layer, amendment_entry(parts, a, before, layer, change)


# --------------------------------------------------------------------------- 1. sheets


def rescored_sheets(
    plan: Plan, a: Amendment, sheets: Sequence[ScoreSheet]
) -> tuple[dict[tuple[str, str], ScoreSheet], list[str]]:
    """The amendment's sheets by (pass, rater), and what keeps the amendment NOT-READY: a rater
    with two files for one pass, an invalid file, a required rater without re-scores. A file of a
    pass the amendment does not re-score is left out (validation reports it at its line 1)."""
    found: dict[tuple[str, str], ScoreSheet] = {}
    problems: list[str] = []
    for s in sheets:
        sid = s.sheet
        if sid.pass_id not in a.passes or plan.rater(sid.rater) is None:
            continue
        first = found.get((sid.pass_id, sid.rater))
        if first is not None:
            problems.append(f"rater {sid.rater} has two files of amendment {a.id} for pass {sid.pass_id}: "
                            f"{first.path} and {s.path}")
            continue
        if not s.ok:
            problems.append(invalid_file(s.path, len(s.errors)))
        found[(sid.pass_id, sid.rater)] = s
    problems += [f"required rater {r.id} has not revealed the re-scores of amendment {a.id} for pass {p}"
                 for p in a.passes for r in plan.waited_for if (p, r.id) not in found]
    return found, problems


# --------------------------------------------------------------------------- 2. scores


def rescore(
    plan: Plan, passes: Mapping[str, PassData], scope: Mapping[str, Sequence[CellKey]],
    found: Mapping[tuple[str, str], ScoreSheet],
) -> tuple[dict[str, PassData], list[dict[str, Any]]]:
    """Every pass after the re-scores, and each cell a rater changed (``from`` is the rater's score
    before this amendment: the pre-registered one, or an earlier amendment's).

    In the scope a rater's re-scores replace their cells; a rater without re-scores (an optional
    rater who did not take part, or a pending one) has no cells there, because their scores were
    given under the reading the ruling replaced."""
    out = dict(passes)
    changed: list[dict[str, Any]] = []
    for pass_id, cells in scope.items():
        inside, old = set(cells), passes[pass_id]
        raters = [r.id for r in plan.raters if r.id in old.scores or (pass_id, r.id) in found]
        scores, sheets = {}, dict(old.sheets)
        for rater in raters:
            was = old.scores.get(rater, {})
            kept = {k: v for k, v in was.items() if k not in inside}
            sheet = found.get((pass_id, rater))
            if sheet is not None:
                new = {c.key: c.score for c in sheet.cells if c.key in inside and c.score in plan.scale}
                changed += [{"cell": str(k), "pass": pass_id, "rater": rater, "from": was.get(k),
                             "to": new[k]} for k in cells if k in new and was.get(k) != new[k]]
                kept.update(new)
                sheets.setdefault(rater, sheet)
            scores[rater] = kept
        out[pass_id] = replace(old, sheets=sheets, scores=scores)
    order = {k: i for cells in scope.values() for i, k in enumerate(map(str, cells))}
    rank = {r.id: i for i, r in enumerate(plan.raters)}
    changed.sort(key=lambda c: (list(scope).index(c["pass"]), order[c["cell"]], rank[c["rater"]]))
    return out, changed


# --------------------------------------------------------------------------- 3. consensus


def reconcile(
    reconciliations: Sequence[Reconciliation], a: Amendment, round_id: str, passes: Mapping[str, PassData],
    scope: Mapping[str, Sequence[CellKey]], before: Mapping[str, Mapping[CellKey, CellConsensus]],
    flag_spread: int,
) -> dict[str, dict[CellKey, CellConsensus]]:
    """Each pass's consensus after the amendment: in the scope, only the amendment's own
    reconciliation rows count (the study's consensus settled other scores), attributed and
    agreed by every rater of the cell as in the study; outside it, the consensus so far."""
    out = {p: dict(c) for p, c in before.items()}
    for pass_id, cells in scope.items():
        inside = set(cells)
        rows = [row for rec in reconciliations if (rec.amendment, rec.pass_id, rec.round_id) ==
                (a.id, pass_id, round_id) for row in rec.rows if row.key in inside]
        raters_of: dict[CellKey, list[str]] = {}
        for rater, scores in passes[pass_id].scores.items():
            for key in scores:
                if key in inside:
                    raters_of.setdefault(key, []).append(rater)
        kept = {k: c for k, c in out.get(pass_id, {}).items() if k not in inside}
        flagged = flagged_keys(passes[pass_id].scores, flag_spread) & inside
        out[pass_id] = {**kept, **cell_consensus(rows, raters_of, flagged)}
    return out


# --------------------------------------------------------------------------- 4. agreement


def agree(
    parts: Parts, passes: Mapping[str, PassData], scope: Mapping[str, Sequence[CellKey]],
    before: Mapping[str, PassAgreement],
) -> dict[str, PassAgreement]:
    """κ of the amended dimensions in each pass of the scope (same weights, bootstrap and seed
    as the study's), and whether each still passes the κ gate; every other κ as before."""
    only = {(p, k.dimension) for p, cells in scope.items() for k in cells}
    fresh = pass_agreement(parts.plan, passes, bootstrap=parts.bootstrap, seed=parts.seed,
                           method=parts.method, only=only)
    out = dict(before)
    for pass_id in scope:
        old, new = before[pass_id], fresh[pass_id]
        counted = (set(old.counted) - set(new.table)) | set(new.counted)
        excluded = {d: why for d, why in old.excluded.items() if d not in new.table} | dict(new.excluded)
        out[pass_id] = PassAgreement({**old.table, **new.table}, counted, excluded)
    return out


# --------------------------------------------------------------------------- 6. the entry


@dataclass(frozen=True)
class Change:
    """What one amendment did to the layer before it."""

    scope: Mapping[str, Sequence[CellKey]]
    found: Mapping[tuple[str, str], ScoreSheet]
    cells: list[dict[str, Any]]
    excluded: Mapping[str, list[str]]


def amendment_entry(
    parts: Parts, a: Amendment, before: Layer, after: Layer, change: Change
) -> dict[str, Any]:
    """The report entry of one amendment (docs/report.md, "Amendments"): its verdict beside the
    pre-registered one, κ of the amended dimensions, and every cell, consensus and rule that
    moved. Numbers at full precision with their exact strings; withheld while NOT-READY."""
    plan, verdict = parts.plan, after.verdict
    ev = verdict.evaluation
    dims = list(dict.fromkeys(k.dimension for cells in change.scope.values() for k in cells))
    return {
        "id": a.id,
        "title": a.title,
        "rationale": a.rationale,
        "label": LABEL,
        "scope": {"dimensions": list(a.dimensions), "conditions": list(a.conditions),
                  "passes": list(a.passes), "cells": {p: len(cells) for p, cells in change.scope.items()}},
        "verdict": verdict.verdict,
        "summary": verdict.summary,
        "reasons": list(verdict.reasons),
        "preregistered_verdict": parts.verdict.verdict,
        "change": verdict_change(parts.verdict, verdict),
        **headline(plan, ev),
        "counted_dimensions": list(verdict.counted),
        "excluded_dimensions": dict(verdict.excluded),
        "dimensions": dimension_means(plan, ev, verdict.counted),
        "kappa": {p: {d: after.agreement[p].table[d] for d in dims if d in after.agreement[p].table}
                  for p in change.scope},
        "raters": {p: [r for (q, r) in change.found if q == p] for p in change.scope},
        "pending_raters": {p: [r.id for r in plan.waited_for if (p, r.id) not in change.found]
                           for p in change.scope},
        "excluded_raters": [{"rater": r, "codes": list(c)} for r, c in change.excluded.items()],
        "changed_cells": change.cells,
        "consensus_changes": consensus_changes(change.scope, before.resolutions, after.resolutions),
        "rules_changed": rules_changed(parts.verdict, verdict),
        "contested_cells": [str(k) for k in verdict.contested],
        "not_ready": list(verdict.not_ready),
    }


def consensus_changes(
    scope: Mapping[str, Sequence[CellKey]], before: Mapping[str, CellResolution],
    after: Mapping[str, CellResolution],
) -> list[dict[str, Any]]:
    """Each cell of the scope whose score after consensus (docs/statistics.md, "Cells after
    consensus") moved: the value and how it was reached, before and after."""
    out = []
    for pass_id, cells in scope.items():
        for key in cells:
            old, new = before[pass_id].cells.get(key), after[pass_id].cells.get(key)
            was = (old.value, old.resolution) if old else (None, None)
            now = (new.value, new.resolution) if new else (None, None)
            if was != now:
                out.append({"cell": str(key), "pass": pass_id,
                            "from": full(was[0]), "from_exact": exact_str(was[0]), "from_resolution": was[1],
                            "to": full(now[0]), "to_exact": exact_str(now[0]), "to_resolution": now[1]})
    return out


def rules_changed(before: Verdict, after: Verdict) -> list[dict[str, Any]]:
    """The rules whose outcome moved from the pre-registered verdict to the amended one, with both
    values (none while either verdict is withheld)."""
    if before.evaluation is None or after.evaluation is None:
        return []
    old = {r.id: r for r in before.evaluation.rules}
    out = []
    for r in after.evaluation.rules:
        was = old.get(r.id)
        if was is not None and was.outcome == r.outcome:
            continue
        old_value = was.value if was else None
        out.append({
            "id": r.id, "kind": r.kind, "text": r.text,
            "from": was.outcome if was else None, "to": r.outcome,
            "value_from": full(old_value), "value_from_exact": exact_str(old_value),
            "value_to": full(r.value), "value_to_exact": exact_str(r.value),
            "threshold": full(r.threshold), "threshold_exact": exact_str(r.threshold),
            "reason": r.sentence or r.reason,
        })
    return out


def verdict_change(before: Verdict, after: Verdict) -> str:
    """One sentence: how the exploratory verdict relates to the pre-registered one, and why."""
    if after.verdict == "NOT-READY":
        return f"not ready: {after.not_ready[0]}" if after.not_ready else "not ready"
    if before.verdict == "NOT-READY":
        return f"{after.verdict}; the pre-registered verdict is NOT-READY"
    if after.verdict == before.verdict:
        return f"unchanged: {after.verdict}, as pre-registered"
    return f"{before.verdict} → {after.verdict}: {after.reasons[0] if after.reasons else after.summary}"
