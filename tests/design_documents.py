"""Hand-made report documents of designs (SPEC §3.1), in the shape /work/shared CONTRACT gives
for `criteria[]` and `decision`, for the renderer tests: the four-arm comparison (baseline A, long
form B, two compressed variants B1 and B2 judged against B) and the probe study (labels PASS/FAIL,
no means).

`design_document(**overrides)` is the four-arm study decided on row 2 ("adopt P1+P2"); the other
builders change what the decision depends on. Every value is written as an exact fraction first,
and the document's float, exact string and `satisfied` flag are derived from it, so a document
cannot disagree with itself.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

SAMPLE = Path(__file__).resolve().parent / "fixtures" / "report_sample.json"
EPISTEMIC = ("D1", "D2", "D3", "D4", "D5", "D6")
F = Fraction


def _holds(kind: str, bound: Fraction, v: Fraction) -> bool:
    return {"within": abs(v) <= bound, "at_most": v <= bound, "below": v < bound,
            "at_least": v >= bound, "above": v > bound}[kind]


def _bound(kind: str, value: Fraction) -> dict[str, Any]:
    return {"kind": kind, "value": float(value), "value_exact": str(value)}


def criterion(cid: str, kind: str, text: str, values: dict[str, Fraction | None], *,
              bound: tuple[str, Fraction], of: list[str], outcome: str | None = None,
              require: int | None = None, passes: tuple[str, ...] = ("unblinded",),
              **extra: Any) -> dict[str, Any]:
    """A `delta` or `rate` criterion; its outcome follows from its values unless given."""
    satisfied = {k: _holds(bound[0], bound[1], v) for k, v in values.items() if v is not None}
    if outcome is None:  # every value defined: the bound decides (require: at least that many)
        outcome = "holds" if sum(satisfied.values()) >= (require or len(values)) else "fails"
    entry = {"id": cid, "kind": kind, "text": text, "of": of, "bound": _bound(*bound), "outcome": outcome,
             "values": {k: None if v is None else float(v) for k, v in values.items()},
             "values_exact": {k: None if v is None else str(v) for k, v in values.items()},
             "satisfied": satisfied, "require": require, "passes": list(passes), "reasons": [],
             "extremes": None, "rules": []}
    entry.update(extra)
    return entry


def seed_rule(rid: str, kind: str, text: str, value: Fraction, threshold: Fraction,
              outcome: str) -> dict[str, Any]:
    return {"id": rid, "kind": kind, "text": text, "value": float(value), "value_exact": str(value),
            "threshold": float(threshold), "threshold_exact": str(threshold), "outcome": outcome,
            "reason": None}


def seed_criterion(cid: str, treatment: str, outcome: str, improvement: Fraction) -> dict[str, Any]:
    """A `seed` criterion: the seed's rules for `treatment` against A, holding iff they PASS."""
    met = "met" if improvement >= F(1, 5) else "not-met"
    rules = [seed_rule(f"{cid}.pass.improvement", "pass", "improvement ≥ 20%", improvement, F(1, 5), met),
             seed_rule(f"{cid}.pass.questions", "pass", "at least 6 questions improve", F(7), F(6), "met"),
             seed_rule(f"{cid}.fail.improvement", "fail", "improvement < 10%", improvement, F(1, 10),
                       "not-met")]
    return {"id": cid, "kind": "seed", "text": f"the seed rule for {treatment} against A: holds iff PASS",
            "of": [treatment, "A"], "bound": None, "outcome": outcome, "values": {"verdict": None},
            "values_exact": {"verdict": None}, "satisfied": {}, "require": None, "passes": ["unblinded"],
            "reasons": [], "extremes": None, "rules": rules}


def arm_criteria(arm: str, same: dict[str, Fraction | None], lighter: Fraction,
                 seed: str) -> list[dict[str, Any]]:
    """The three criteria of one compressed arm against B (and A for the seed rule)."""
    return [
        criterion(f"{arm}-same", "delta", f"mean {arm} − mean B on each of D1–D6, |v| ≤ 1/2", same,
                  bound=("within", F(1, 2)), of=[arm, "B"]),
        lighter_criterion(arm, lighter),
        seed_criterion(f"{arm}-seed", arm, seed, F(143, 333) if seed == "holds" else F(1, 20)),
    ]


def lighter_criterion(arm: str, value: Fraction) -> dict[str, Any]:
    return criterion(f"{arm}-lighter", "delta", f"mean {arm} − mean B of the sum D7 + D8, v < 0",
                     {"sum": value}, bound=("below", F(0)), of=[arm, "B"])


B1_SAME = dict(zip(EPISTEMIC, (F(-1, 10), F(0), F(1, 3), F(-1, 2), F(1, 5), F(0)), strict=True))
B2_SAME = dict(zip(EPISTEMIC, (F(0), F(2, 3), F(1, 10), F(-1, 5), F(0), F(1, 4)), strict=True))


def rows(*outcomes: str) -> list[dict[str, Any]]:
    """The three decision rows of the four-arm plan with the given outcomes."""
    both = [f"{arm}-{c}" for arm in ("B1", "B2") for c in ("same", "lighter", "seed")]
    return [{"row": 1, "if": both, "then": "adopt P1+P2+P3", "otherwise": False, "outcome": outcomes[0]},
            {"row": 2, "if": both[:3], "then": "adopt P1+P2", "otherwise": False, "outcome": outcomes[1]},
            {"row": 3, "if": [], "then": "defer R1", "otherwise": True, "outcome": outcomes[2]}]


def design_document(**overrides: Any) -> dict[str, Any]:
    """The four-arm study, decided on row 2: every B1 criterion holds, B2-same fails (D2 moves
    by 2/3), so row 1 definitely fails and row 2 is taken."""
    doc: dict[str, Any] = json.loads(SAMPLE.read_text(encoding="utf-8"))
    doc.update(
        verdict="PASS", summary="Decision: adopt P1+P2 (row 2)", rules=[],
        reasons=["row 1 fails: B2-same fails", "row 2: B1-same, B1-lighter, B1-seed hold"],
        means={"A": 11.1, "B": 6.3333, "B1": 6.1, "B2": 6.9},
        means_exact={"A": "111/10", "B": "19/3", "B1": "61/10", "B2": "69/10"},
        criteria=[*arm_criteria("B1", B1_SAME, F(-3, 10), "holds"),
                  *arm_criteria("B2", B2_SAME, F(-1, 10), "holds")],
        decision={"status": "decided", "then": "adopt P1+P2", "row": 2, "blocking": [], "reasons": [],
                  "rows": rows("fails", "taken", "not-reached")},
    )
    for dim, b1, b2 in zip(doc["dimensions"], ARM_MEANS["B1"], ARM_MEANS["B2"], strict=True):
        for arm, q in (("B1", b1), ("B2", b2)):
            dim[f"mean_{arm}"], dim[f"mean_{arm}_exact"] = float(q), str(q)
    doc.update(overrides)
    return doc


#: the compressed arms' mean per dimension D1–D8
ARM_MEANS = {"B1": [F(9, 10), F(6, 5), F(3, 4), F(3, 5), F(3, 5), F(9, 10), F(4, 5), F(7, 10)],
             "B2": [F(1), F(19, 10), F(4, 5), F(9, 10), F(2, 5), F(23, 20), F(9, 10), F(1)]}


def by_id(doc: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(c for c in doc["criteria"] if c["id"] == cid)


def undecided_document() -> dict[str, Any]:
    """B2's seed criterion cannot be evaluated (D7 does not count): row 1 is not definitely
    failing, so it blocks row 2 although row 2's criteria hold."""
    doc = design_document()
    same = by_id(doc, "B2-same")
    same.update(criterion("B2-same", "delta", same["text"], {**B2_SAME, "D2": F(1, 3)},
                          bound=("within", F(1, 2)), of=["B2", "B"]))
    seed = by_id(doc, "B2-seed")
    seed.update(outcome="undecided", reasons=["D7 does not count under the agreement gate (κ 0.412 < 0.6)"])
    reason = "row 1 is not definitely failing: B2-seed is undecided"
    doc.update(verdict="INCONCLUSIVE", summary="Decision: undecided (B2-seed blocks row 1)", reasons=[reason],
               decision={"status": "undecided", "then": None, "row": None, "blocking": ["B2-seed"],
                         "reasons": [reason], "rows": rows("blocked", "not-reached", "not-reached")})
    return doc


def contested_document() -> dict[str, Any]:
    """B2-same depends on contested cells: it holds at their best and fails at their worst."""
    doc = undecided_document()
    by_id(doc, "B2-seed").update(outcome="holds", reasons=[])
    by_id(doc, "B2-same").update(outcome="contested", extremes={"best": "holds", "worst": "fails"},
                                 reasons=["2 contested cells (Q2/B2/D2, Q5/B2/D2) decide it"])
    reason = "row 1 is contested: B2-same holds at the best extreme and fails at the worst"
    doc.update(verdict="CONTESTED", summary="Decision: contested (B2-same)", reasons=[reason],
               decision={"status": "contested", "then": None, "row": None, "blocking": ["B2-same"],
                         "reasons": [reason], "rows": rows("blocked", "not-reached", "not-reached")})
    return doc


def otherwise_document() -> dict[str, Any]:
    """Neither arm is lighter: rows 1 and 2 fail, the otherwise row is taken."""
    doc = design_document()
    for arm in ("B1", "B2"):
        by_id(doc, f"{arm}-lighter").update(lighter_criterion(arm, F(2, 5)))
    doc.update(verdict="FAIL", summary="Decision: defer R1 (row 3)", reasons=["rows 1 and 2 fail"],
               decision={"status": "decided", "then": "defer R1", "row": 3, "blocking": [], "reasons": [],
                         "rows": rows("fails", "fails", "taken")})
    return doc


def not_ready_document() -> dict[str, Any]:
    """A pending rater: the criteria are withheld, the decision is not-ready."""
    doc = design_document()
    for c in doc["criteria"]:
        c.update(outcome="undecided", values={k: None for k in c["values"]},
                 values_exact={k: None for k in c["values"]}, satisfied={})
    pending = "required rater logician has not revealed scores for pass unblinded"
    doc.update(verdict="NOT-READY", summary=f"NOT-READY: {pending}", reasons=[pending], not_ready=[pending],
               improvement=None, improvement_exact=None, means={c: None for c in doc["means"]},
               means_exact={c: None for c in doc["means"]}, pending_raters={"unblinded": ["logician"]},
               decision={"status": "not-ready", "then": None, "row": None, "blocking": [],
                         "reasons": [pending], "rows": rows("not-reached", "not-reached", "not-reached")})
    for d in doc["dimensions"]:
        d.update({k: None for k in d if k.startswith(("mean_", "delta"))})
    for q in doc["questions"]:
        q.update(aggregate_A=None, aggregate_B=None, aggregate_A_exact=None, aggregate_B_exact=None,
                 improved_dimensions=None, improves=None)
    return doc


PROBES = ("L1", "L2", "L3", "L4", "L5", "L6")


def probe_document(**overrides: Any) -> dict[str, Any]:
    """The probe study: six probes × TRT/CTRL × three responses, labelled PASS or FAIL. A
    nominal scale: no means, no improvement, no seed verdict."""
    doc = copy.deepcopy(design_document())
    moved = {"L1": F(2, 3), "L2": F(1, 3), "L3": F(0), "L4": F(1, 3), "L5": F(-1, 3)}
    kappa = copy.deepcopy(doc["kappa"]["unblinded"]["D1"])
    doc.update(
        study="probes-v1", verdict="PASS", summary="Decision: ship the probe prompt (row 1)",
        reasons=["row 1: L-moved, L-top hold"],
        conditions={"baseline": "CTRL", "treatment": "TRT"}, means={}, means_exact={}, improvement=None,
        improvement_exact=None, counted_dimensions=["V"], excluded_dimensions={},
        dimensions=[{"id": "V", "name": "Verdict label", "kind": "label", "load": False, "counted": True}],
        questions=[{"id": q, "text": f"probe {q}"} for q in PROBES],
        kappa={"unblinded": {"V": kappa}}, raters={"unblinded": ["cto", "logician", "redteam"]},
        pending_raters={"unblinded": []}, kappa_settings={**doc["kappa_settings"], "weights": "none"},
        caveats=[], cells=[], flagged_cells=[], contested_cells=[], self_bias=[], blinding=None,
        b_scores_from="unblinded",
        criteria=[
            criterion("L-moved", "rate", "share labelled PASS in TRT − in CTRL on each of L1–L5, v > 0, "
                      "at least 3", moved, bound=("above", F(0)), of=["TRT", "CTRL"], require=3),
            criterion("L-top", "rate", "share labelled PASS in TRT − in CTRL on L1 and L2, v > 0",
                      {k: moved[k] for k in ("L1", "L2")}, bound=("above", F(0)), of=["TRT", "CTRL"]),
        ],
        decision={"status": "decided", "then": "ship the probe prompt", "row": 1, "blocking": [],
                  "reasons": [],
                  "rows": [{"row": 1, "if": ["L-moved", "L-top"], "then": "ship the probe prompt",
                            "otherwise": False, "outcome": "taken"},
                           {"row": 2, "if": [], "then": "keep the control prompt", "otherwise": True,
                            "outcome": "not-reached"}]},
    )
    doc.pop("uncertainty", None)
    doc.update(overrides)
    return doc


DESIGN_VARIANTS = {
    "decided": design_document,
    "undecided": undecided_document,
    "contested": contested_document,
    "otherwise": otherwise_document,
    "not_ready": not_ready_document,
    "probes": probe_document,
}
