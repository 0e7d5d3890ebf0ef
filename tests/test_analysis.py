"""analysis.analyse: sheets in, the report document (docs/statistics.md) out.

κ values are checked against scikit-learn and α against the `krippendorff` package, computed
here from the same scores; verdict numbers against means worked out in the test.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import warnings
from fractions import Fraction
from itertools import combinations
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from aoven_git.analysis import analyse
from aoven_git.errors import UsageError
from aoven_git.model import (
    Cell,
    CellKey,
    Finding,
    Plan,
    Reconciliation,
    ReconciliationRow,
    Round,
    ScoreSheet,
    SheetId,
)
from aoven_git.plan import load_plan
from tests.report_documents import check_report

DEFAULT_PLAN = Path(__file__).resolve().parent.parent / "aoven_git" / "templates" / "aoven.yaml"
QS = [f"Q{i}" for i in range(1, 11)]
DIMS = [f"D{i}" for i in range(1, 9)]
HOLD = ["Q11", "Q12", "Q13", "Q14", "Q15"]

CONTRACT_KEYS = {
    "schema",
    "study",
    "plan_version",
    "round",
    "verdict",
    "summary",
    "reasons",
    "terminal",
    "improvement",
    "improvement_exact",
    "means",
    "means_exact",
    "conditions",
    "b_scores_from",
    "blinding",
    "verdict_pass",
    "counted_dimensions",
    "excluded_dimensions",
    "dimensions",
    "questions",
    "rules",
    "kappa",
    "kappa_settings",
    "raters",
    "pending_raters",
    "flagged_cells",
    "contested_cells",
    "cells",
    "extremes",
    "robust_to_contested",
    "self_bias",
    "not_ready",
    "seals",
    "validation",
    "retest",
    "generated_by",
    # added later: a consumer of the first keys never breaks
    "caveats",
    "rater_roster",
    "source",
    "excluded_raters",
    "deviations",
    "reconciliation",
    "blind_passes",
    "protocol_deviations",
    "uncertainty",
    "reporting_checklist",
}
COMPLETE = {"ok": True, "status": "complete", "seals": [], "violations": []}


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(DEFAULT_PLAN)


def sheet(
    rater: str, pass_id: str, scores: dict[CellKey, int], *, round_id: str = "main", errors: int = 0
) -> ScoreSheet:
    cells = tuple(Cell(k, v, i + 1) for i, (k, v) in enumerate(sorted(scores.items())))
    findings = tuple(Finding(f"scores_{rater}.md", 1, "score-out-of-scale", "bad") for _ in range(errors))
    return ScoreSheet(
        f"tests/phase2/scores_{rater}_{pass_id}.md",
        SheetId(rater, pass_id, round_id),
        "long",
        cells,
        findings=findings,
    )


def a_value(qi: int, di: int) -> int:
    return 1 + (qi + di) % 3  # 1, 2, 3 varying over questions and dimensions


def truth(questions=QS, conds=("A", "B")) -> dict[CellKey, int]:
    """A varies 1–3; B is A − 1 on every cell: a clear improvement, never worse."""
    out = {}
    for qi, q in enumerate(questions):
        for di, d in enumerate(DIMS):
            a = a_value(qi, di)
            if "A" in conds:
                out[CellKey(q, "A", d)] = a
            if "B" in conds:
                out[CellKey(q, "B", d)] = a - 1
    return out


def study(plan, *, unblinded=None, blinded=None, raters=("cto", "logician"), **kw):
    """Two raters with `truth()` scores unless told otherwise (blinded pass: truth's B)."""
    ub = unblinded or {r: truth() for r in raters}
    bl = blinded or {r: truth(conds=("B",)) for r in raters}
    sheets = [sheet(r, "unblinded", s) for r, s in ub.items()] + [
        sheet(r, "blinded", s) for r, s in bl.items()
    ]
    kw.setdefault("seals", COMPLETE)
    kw.setdefault("bootstrap", 200)
    return dict(check_report(analyse(plan, sheets=kw.pop("sheets", sheets), **kw).as_dict()))


def noisy(rng: random.Random, base: dict[CellKey, int], p: float) -> dict[CellKey, int]:
    """Each score moved by ±1 with probability p (kept on the scale)."""
    out = {}
    for k, v in base.items():
        if rng.random() < p:
            v = min(3, max(0, v + rng.choice((-1, 1))))
        out[k] = v
    return out


def sk(a, b, weights="quadratic"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = cohen_kappa_score(a, b, labels=list(range(4)), weights=weights)
    return None if math.isnan(v) else v


def no_nan(doc) -> str:
    check_report(doc)  # the report schema too (tests/report_documents.py)
    return json.dumps(doc, allow_nan=False)


# --------------------------------------------------------------------------- agreement


def test_kappa_matches_sklearn_and_alpha_matches_krippendorff(plan):
    rng = random.Random(7)
    raters = ("cto", "logician", "redteam")
    ub = {r: noisy(rng, truth(), 0.25) for r in raters}
    bl = {r: noisy(rng, truth(conds=("B",)), 0.3) for r in raters}
    doc = study(plan, unblinded=ub, blinded=bl, raters=raters)
    no_nan(doc)
    assert doc["kappa_settings"] == {
        "weights": "quadratic",
        "threshold": 0.6,
        "aggregate": "min",
        "bootstrap": 200,
        "seed": 20260426,
        "threshold_exact": "3/5",
        "undefined": "exclude",
        "confidence": 0.95,
        "interval_method": "BCa",
        "caveat_min_items": 20,
        "caveat_max_width": 0.5,
    }
    counted = []
    for pass_id, scores, conds in (("unblinded", ub, ("A", "B")), ("blinded", bl, ("B",))):
        items = [(q, c) for q in QS for c in conds]
        for d in DIMS:
            entry = doc["kappa"][pass_id][d]
            ref = {}
            for x, y in combinations(raters, 2):
                ref[f"{x}~{y}"] = sk(
                    [scores[x][CellKey(q, c, d)] for q, c in items],
                    [scores[y][CellKey(q, c, d)] for q, c in items],
                )
                assert entry["pairs"][f"{x}~{y}"] == pytest.approx(ref[f"{x}~{y}"], abs=1e-12)
                assert float(Fraction(entry["pairs_exact"][f"{x}~{y}"])) == entry["pairs"][f"{x}~{y}"]
                lo, hi = entry["intervals"][f"{x}~{y}"]
                assert lo <= hi and entry["interval_methods"][f"{x}~{y}"] in ("BCa", "percentile")
                assert entry["pair_n"][f"{x}~{y}"] == len(items)
            assert entry["min"] == pytest.approx(min(ref.values()), abs=1e-12)
            assert entry["mean"] == pytest.approx(sum(ref.values()) / 3, abs=1e-12)
            assert entry["value"] == entry["min"]
            assert entry["n"] == len(items)
            data = np.array([[scores[r][CellKey(q, c, d)] for q, c in items] for r in raters], dtype=float)
            alpha = krippendorff.alpha(
                reliability_data=data, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3]
            )
            assert entry["alpha"] == pytest.approx(alpha, abs=1e-12)
            assert entry["counts"] == (min(ref.values()) >= 0.6)
            if pass_id == "unblinded" and min(ref.values()) >= 0.6:
                counted.append(d)
    assert doc["counted_dimensions"] == counted
    assert 0 < len(counted) < 8  # the noise level leaves some dimensions on each side
    for d in set(DIMS) - set(counted):
        assert doc["excluded_dimensions"][d].startswith("kappa ")
    assert doc["raters"] == {"unblinded": list(raters), "blinded": list(raters)}


def test_bootstrap_is_reproducible(plan):
    rng = random.Random(3)
    ub = {r: noisy(rng, truth(), 0.2) for r in ("cto", "logician")}
    one = study(plan, unblinded=ub, bootstrap=300)
    two = study(plan, unblinded=ub, bootstrap=300)
    assert one["kappa"] == two["kappa"]
    other = study(plan, unblinded=ub, bootstrap=300, seed=1)
    assert other["kappa"]["unblinded"]["D1"]["pairs"] == one["kappa"]["unblinded"]["D1"]["pairs"]


def test_undefined_kappa_is_null_with_reason_and_excluded(plan):
    ub = {r: truth() for r in ("cto", "logician")}
    for r in ub:  # D7 constant at 2 for both raters: κ is 0/0
        for k in ub[r]:
            if k.dimension == "D7":
                ub[r][k] = 2
    doc = study(plan, unblinded=ub)
    no_nan(doc)
    d7 = doc["kappa"]["unblinded"]["D7"]
    assert d7["value"] is None and d7["counts"] is False and "same score" in d7["reason"]
    assert d7["pairs"] == {"cto~logician": None} and d7["intervals"] == {"cto~logician": None}
    assert "D7" in doc["excluded_dimensions"] and "undefined" in doc["excluded_dimensions"]["D7"]


# --------------------------------------------------------------------------- verdict through analysis


def test_pass_end_to_end(plan):
    doc = study(plan)
    no_nan(doc)
    assert set(doc) == CONTRACT_KEYS
    # A per question = Σ_d (1 + (q + d) % 3): the residues of 8 consecutive ints mod 3 are
    # three 0s, three 1s and two 2s or similar; sum them explicitly per question instead.
    a_totals = [sum(1 + (qi + di) % 3 for di in range(8)) for qi in range(10)]
    mean_a = Fraction(sum(a_totals), 10)
    mean_b = mean_a - 8  # B = A − 1 on all eight dimensions
    assert doc["means_exact"] == {"A": str(mean_a), "B": str(mean_b)}
    assert doc["improvement_exact"] == str(Fraction(8) / mean_a)
    assert doc["improvement"] == float(Fraction(8) / mean_a)  # full precision, not rounded
    assert doc["verdict"] == "PASS" and doc["not_ready"] == []
    assert doc["counted_dimensions"] == DIMS and doc["excluded_dimensions"] == {}
    assert all(k["value"] == 1.0 for k in doc["kappa"]["unblinded"].values())
    assert {r["id"]: r["outcome"] for r in doc["rules"]}["pass.improvement"] == "met"
    r = next(r for r in doc["rules"] if r["id"] == "pass.improvement")
    assert (r["threshold"], r["threshold_exact"]) == (0.2, "1/5")
    assert all(d["delta_exact"] == "-1" for d in doc["dimensions"])
    assert doc["questions"][0] == {
        "id": "Q1",
        "aggregate_A": float(a_totals[0]),
        "aggregate_B": float(a_totals[0] - 8),
        "improved_dimensions": 8,
        "improves": True,
        "aggregate_A_exact": str(a_totals[0]),
        "aggregate_B_exact": str(a_totals[0] - 8),
        "text": plan.question("Q1").text,  # the plan's wording next to the id
    }
    assert doc["blinding"] == {
        "pass": "blinded",
        "divergence": 0.0,
        "divergence_exact": "0",
        "threshold": 0.5,
        "used": "unblinded",
        "threshold_exact": "1/2",
    }
    assert doc["self_bias"] == [
        {"rater": "cto", "pass": "unblinded", "flagged": True, "b_worse": 0},
        {"rater": "logician", "pass": "unblinded", "flagged": True, "b_worse": 0},
    ]
    assert doc["seals"]["status"] == "complete" and doc["validation"]["ok"] is True
    assert doc["retest"] is None and doc["extremes"] is None and doc["cells"] == []


def test_low_kappa_dimension_excluded_and_load_rule_not_evaluable(plan):
    ub = {r: truth() for r in ("cto", "logician")}
    for k in ub["logician"]:  # logician reverses D8: κ far below 0.6
        if k.dimension == "D8":
            ub["logician"][k] = 3 - ub["cto"][k]
    # reversing creates flagged cells (spread up to 3): settle them by reconciliation
    rows = tuple(  # each rater's own row, both accepting cto's score
        ReconciliationRow(k, rater, '"x"', ub["cto"][k], 1)
        for k in ub["cto"]
        if k.dimension == "D8" and abs(ub["cto"][k] - ub["logician"][k]) > 1
        for rater in ("cto", "logician")
    )
    rec = Reconciliation("tests/phase2/reconciliation.md", "unblinded", "main", rows)
    doc = study(plan, unblinded=ub, reconciliations=[rec])
    no_nan(doc)
    assert "D8" not in doc["counted_dimensions"]
    assert doc["excluded_dimensions"]["D8"].startswith("kappa -")
    rule = next(r for r in doc["rules"] if r["id"] == "pass.load.D8")
    assert rule["outcome"] == "not-evaluable" and "D8 does not count" in rule["reason"]
    assert doc["verdict"] == "INCONCLUSIVE"
    assert any(c["resolution"] == "consensus" for c in doc["cells"])


def test_flagged_and_contested_cells_in_the_document(plan):
    ub = {r: truth() for r in ("cto", "logician")}
    ub["logician"][CellKey("Q1", "B", "D1")] = 3  # cto 0: flagged
    ub["cto"][CellKey("Q2", "A", "D2")] = 1  # logician keeps 3 (a_value(1, 1)): spread 2, flagged
    doc = study(plan, unblinded=ub)
    assert doc["verdict"] == "NOT-READY"
    assert doc["flagged_cells"] == ["Q1/B/D1", "Q2/A/D2"]
    assert any("Q1/B/D1, Q2/A/D2" in s for s in doc["not_ready"])
    assert doc["improvement"] is None and doc["means"] == {"A": None, "B": None}
    assert all(r["outcome"] == "not-evaluable" and r["value"] is None for r in doc["rules"])
    rows = (  # each rater's own row: Q1/B/D1 contested by cto, both accept 2 for Q2/A/D2
        ReconciliationRow(CellKey("Q1", "B", "D1"), "cto", '"a"', "contested", 3),
        ReconciliationRow(CellKey("Q1", "B", "D1"), "logician", '"b"', 3, 4),
        ReconciliationRow(CellKey("Q2", "A", "D2"), "cto", '"c"', 2, 5),
        ReconciliationRow(CellKey("Q2", "A", "D2"), "logician", '"d"', 2, 6),
    )
    rec = Reconciliation("tests/phase2/reconciliation.md", "unblinded", "main", rows)
    doc = study(plan, unblinded=ub, reconciliations=[rec])
    no_nan(doc)
    assert doc["contested_cells"] == ["Q1/B/D1"]
    assert doc["verdict"] == "PASS" and doc["robust_to_contested"] == 1
    assert doc["extremes"]["best"]["verdict"] == doc["extremes"]["worst"]["verdict"] == "PASS"
    cell = next(c for c in doc["cells"] if c["cell"] == "Q1/B/D1")
    assert cell == {
        "cell": "Q1/B/D1",
        "pass": "unblinded",
        "scores": {"cto": 0, "logician": 3},
        "flagged": True,
        "resolution": "contested",
        "value": None,
        "value_exact": None,
    }
    cell = next(c for c in doc["cells"] if c["cell"] == "Q2/A/D2")
    assert (cell["resolution"], cell["value_exact"]) == ("consensus", "2")


# --------------------------------------------------------------------------- NOT-READY


def test_pending_required_rater_keeps_kappa(plan):
    ub = {r: truth() for r in ("cto", "logician")}
    bl = {"cto": truth(conds=("B",))}  # logician has not revealed the blinded pass
    doc = study(plan, unblinded=ub, blinded=bl)
    no_nan(doc)
    assert doc["verdict"] == "NOT-READY"
    assert "required rater logician has not revealed scores for pass blinded" in doc["not_ready"]
    assert doc["pending_raters"] == {"unblinded": [], "blinded": ["logician"]}
    assert doc["kappa"]["unblinded"]["D1"]["value"] == 1.0
    assert doc["kappa"]["blinded"]["D1"]["value"] is None
    assert doc["improvement"] is None and doc["means_exact"] == {"A": None, "B": None}
    assert len(doc["rules"]) == 2 + 1 + 2 + 6 * 2  # improvement ×2, questions, load ×2, 6 epistemic ×2
    assert all(r["threshold_exact"] is not None for r in doc["rules"])


def test_optional_rater_missing_does_not_block(plan):
    doc = study(plan)
    assert "redteam" not in doc["pending_raters"]["unblinded"]
    assert doc["verdict"] == "PASS"


def test_invalid_sheet_blocks_but_agreement_is_shown(plan):
    sheets = [sheet("cto", "unblinded", truth(), errors=2), sheet("logician", "unblinded", truth())]
    sheets += [sheet(r, "blinded", truth(conds=("B",))) for r in ("cto", "logician")]
    doc = study(plan, sheets=sheets)
    no_nan(doc)
    assert doc["verdict"] == "NOT-READY"
    assert "tests/phase2/scores_cto_unblinded.md is invalid (2 errors)" in doc["not_ready"]
    assert doc["kappa"]["unblinded"]["D3"]["value"] == 1.0
    assert doc["validation"]["ok"] is False and doc["validation"]["errors"] == 2


def test_validation_summary_blocks_only_its_round(plan):
    validation = {
        "ok": False,
        "files": [
            {
                "path": "tests/phase2/scores_cto_retest1.md",
                "rater": "cto",
                "pass": "unblinded",
                "round": "retest1",
                "cells": 3,
                "errors": [{"line": 4, "code": "missing-cell", "message": "m"}],
                "warnings": [],
            },
        ],
    }
    doc = study(plan, validation=validation)
    assert doc["verdict"] == "PASS"
    assert doc["validation"]["errors"] == 1 and doc["validation"]["ok"] is False
    assert doc["validation"]["files"][0]["path"] == "tests/phase2/scores_cto_retest1.md"
    validation["files"][0]["round"] = "main"
    assert study(plan, validation=validation)["verdict"] == "NOT-READY"


@pytest.mark.parametrize(
    "seals,blocked,needle",
    [
        (None, False, None),
        (
            {
                "ok": False,
                "status": "violated",
                "seals": [],
                "violations": [
                    {
                        "code": "visible-at-seal",
                        "rater": "logician",
                        "commit": "abc123",
                        "message": "cto's scores were visible",
                    }
                ],
            },
            True,
            "seal violation visible-at-seal by logician: cto's scores were visible",
        ),
        ({"ok": False, "status": "pending", "seals": [], "violations": []}, True, "status pending"),
    ],
)
def test_seal_status(plan, seals, blocked, needle):
    doc = study(plan, seals=seals)
    no_nan(doc)
    assert (doc["verdict"] == "NOT-READY") is blocked
    if seals is None:
        assert doc["seals"] == {
            "verified": False,
            "status": "not-verified",
            "message": "not a git repository, so the sealing history was not checked",
            "violations": [],
            "forced_reveals": [],
        }
        assert doc["verdict"] == "PASS"
    else:
        assert doc["seals"]["status"] == seals["status"]
        assert any(needle in s for s in doc["not_ready"])
        assert doc["kappa"]["unblinded"]["D1"]["value"] == 1.0


def test_duplicate_sheet_blocks(plan):
    sheets = [
        sheet(r, p, truth() if p == "unblinded" else truth(conds=("B",)))
        for r in ("cto", "logician")
        for p in ("unblinded", "blinded")
    ]
    sheets.append(dataclasses.replace(sheets[0], path="tests/phase2/scores_cto_copy.md"))
    doc = study(plan, sheets=sheets)
    assert doc["verdict"] == "NOT-READY" and any("two score files" in s for s in doc["not_ready"])


# --------------------------------------------------------------------------- rounds


def test_retest_round_terminal_from_computed_main_verdict(plan):
    p = dataclasses.replace(plan, rounds=(plan.rounds[0], Round("retest1", tuple(HOLD), "holdout", ("R1",))))
    # main: B = A except Q1–Q3 one point lower on D1–D5 and Q4 on D1: 16 points off → inconclusive
    main = {k: v for k, v in truth().items() if k.condition == "A"}
    main |= {CellKey(k.question, "B", k.dimension): v for k, v in main.items()}
    for q in ("Q1", "Q2", "Q3"):
        for d in ("D1", "D2", "D3", "D4", "D5"):
            main[CellKey(q, "B", d)] = main[CellKey(q, "A", d)] - 1
    main[CellKey("Q4", "B", "D1")] -= 1
    mean_a = Fraction(sum(v for k, v in main.items() if k.condition == "A"), 10)
    assert Fraction(16, 10) / mean_a < Fraction(1, 5)  # below 20% …
    assert Fraction(16, 10) / mean_a >= Fraction(1, 10)  # … but not below 10%
    hold = {k: v for k, v in truth(questions=HOLD).items()}  # 5 questions: the questions rule cannot pass
    sheets = []
    for r in ("cto", "logician"):
        sheets += [
            sheet(r, "unblinded", main),
            sheet(r, "blinded", {k: v for k, v in main.items() if k.condition == "B"}),
        ]
        sheets += [
            sheet(r, "unblinded", hold, round_id="retest1"),
            sheet(r, "blinded", {k: v for k, v in hold.items() if k.condition == "B"}, round_id="retest1"),
        ]
    first = analyse(p, sheets=sheets, seals=COMPLETE, bootstrap=0).as_dict()
    assert first["verdict"] == "INCONCLUSIVE" and not first["terminal"] and first["retest"] is None
    doc = analyse(p, sheets=sheets, round_id="retest1", seals=COMPLETE, bootstrap=0).as_dict()
    no_nan(doc)
    assert doc["verdict"] == "INCONCLUSIVE" and doc["terminal"] is True
    assert "v0.1 is terminated" in doc["summary"] and "v0.2" in doc["summary"]
    assert doc["retest"] == {"round": "retest1", "refinements": ["R1"], "problems": []}
    assert [q["id"] for q in doc["questions"]] == HOLD
    after_pass = analyse(
        p, sheets=sheets, round_id="retest1", seals=COMPLETE, bootstrap=0, previous_verdicts={"main": "PASS"}
    ).as_dict()
    assert after_pass["verdict"] == "NOT-READY" and after_pass["retest"]["problems"]


def test_unknown_round_is_a_usage_error(plan):
    with pytest.raises(UsageError, match="unknown round 'nope'"):
        analyse(plan, sheets=[], round_id="nope")


def test_no_sheets_at_all(plan):
    doc = analyse(plan, sheets=[], bootstrap=0).as_dict()
    no_nan(doc)
    assert doc["verdict"] == "NOT-READY"
    assert doc["pending_raters"]["unblinded"] == ["cto", "logician"]
    assert doc["kappa"]["unblinded"]["D1"]["value"] is None
    assert doc["seals"]["status"] == "not-verified"


def test_seal_pending_detail_blocks_only_this_round_and_used_passes(plan):
    other = {
        "ok": True,
        "status": "pending",
        "seals": [],
        "violations": [],
        "pending": [{"rater": "logician", "pass": "unblinded", "round": "retest1"}],
    }
    assert study(plan, seals=other)["verdict"] == "PASS"
    here = {**other, "pending": [{"rater": "logician", "pass": "blinded", "round": "main"}]}
    doc = study(plan, seals=here)
    assert doc["verdict"] == "NOT-READY"
    assert "required rater logician has not sealed scores for pass blinded" in doc["not_ready"]


def test_as_dict_hands_every_caller_its_own_copy(plan) -> None:
    """Renderers may annotate what they get; the next renderer must still read the analysis."""
    sheets = [sheet(r, "unblinded", truth()) for r in ("cto", "logician")] + [
        sheet(r, "blinded", truth(conds=("B",))) for r in ("cto", "logician")
    ]
    data = analyse(plan, sheets=sheets, seals=COMPLETE, bootstrap=0)
    first = data.as_dict()
    pristine = json.dumps(first, sort_keys=True)
    first["rules"][0]["outcome"] = "tampered"
    first["kappa"]["unblinded"]["D1"]["pairs"].clear()
    first["means"]["A"] = -1
    assert json.dumps(data.as_dict(), sort_keys=True) == pristine


# --------------------------------------------------------------------------- the document as data


def _exact_pairs(node, path=""):
    """Every (float, "p/q") the document puts side by side: `x` next to `x_exact`, and the
    per-pair maps `pairs` next to `pairs_exact`."""
    if isinstance(node, dict):
        for key, value in node.items():
            exact = node.get(f"{key}_exact") if isinstance(key, str) else None
            if isinstance(exact, str | type(None)) and f"{key}_exact" in node and not isinstance(value, dict):
                yield f"{path}/{key}", value, exact
            if isinstance(exact, dict) and isinstance(value, dict):
                for sub in value:
                    yield f"{path}/{key}/{sub}", value[sub], exact[sub]
            yield from _exact_pairs(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _exact_pairs(item, f"{path}/{i}")


def test_floats_are_the_nearest_float_of_the_exact_values(plan):
    # full precision: not rounded to 4 decimals, but exactly float(p/q) wherever both are given
    rng = random.Random(11)
    ub = {r: noisy(rng, truth(), 0.3) for r in ("cto", "logician", "redteam")}
    doc = study(plan, unblinded=ub, raters=("cto", "logician", "redteam"))
    seen = 0
    for where, value, exact in _exact_pairs(doc):
        if isinstance(value, dict):  # means / means_exact are condition maps
            for cond in value:
                assert value[cond] == (None if exact[cond] is None else float(Fraction(exact[cond]))), where
                seen += 1
            continue
        assert value == (None if exact is None else float(Fraction(exact))), where
        seen += 1
    assert seen > 150  # rules, dimensions, questions, κ pairs, blinding, means
    assert any(len(str(v).split(".")[-1]) > 4 for _, v, _ in _exact_pairs(doc) if isinstance(v, float))


def test_a_json_consumer_can_recompute_every_gate_and_rule(plan):
    """From the document alone, in exact fractions: which dimensions count, every rule's outcome,
    the improvement and which treatment scores were used."""
    rng = random.Random(7)
    # one noisy rater against the truth, off by exactly one on D7 and D8: nothing is flagged (spread
    # 1), but those two dimensions fall below the κ threshold
    logician = noisy(rng, truth(), 0.3)
    for k, v in truth().items():
        if k.dimension in ("D7", "D8"):
            logician[k] = v + 1 if v in (0, 2) else v - 1
    doc = study(plan, unblinded={"cto": truth(), "logician": logician})
    assert doc["verdict"] != "NOT-READY" and doc["excluded_dimensions"]
    settings = doc["kappa_settings"]
    threshold = Fraction(settings["threshold_exact"])
    assert settings["aggregate"] == "min" and settings["undefined"] == "exclude"
    for dim, entry in doc["kappa"]["unblinded"].items():
        pairs = [Fraction(v) for v in entry["pairs_exact"].values()]
        assert Fraction(entry["value_exact"]) == min(pairs)
        assert entry["counts"] is (min(pairs) >= threshold) is (dim in doc["counted_dimensions"])
    means = {c: Fraction(v) for c, v in doc["means_exact"].items()}
    assert Fraction(doc["improvement_exact"]) == (means["A"] - means["B"]) / means["A"]
    holds = {"improvement": lambda v, t: v >= t, "questions": lambda v, t: v >= t,
             "load": lambda v, t: v <= t, "regression": lambda v, t: v <= t}
    for rule in doc["rules"]:
        if rule["outcome"] == "not-evaluable":
            assert rule["id"].split(".")[-1] in doc["excluded_dimensions"]
            continue
        kind, family = rule["id"].split(".")[:2]
        met = holds[family](Fraction(rule["value_exact"]), Fraction(rule["threshold_exact"]))
        assert rule["outcome"] == ("met" if met == (kind == "pass") else "not-met"), rule["id"]
    bl = doc["blinding"]
    used = bl["pass"] if Fraction(bl["divergence_exact"]) > Fraction(bl["threshold_exact"]) else "unblinded"
    assert bl["used"] == used == doc["b_scores_from"]


def test_caveats_name_small_samples_and_wide_intervals(plan):
    rng = random.Random(5)
    raters = ("cto", "logician")
    doc = study(plan, unblinded={r: noisy(rng, truth(), 0.35) for r in raters},
                blinded={r: noisy(rng, truth(conds=("B",)), 0.35) for r in raters}, bootstrap=300)
    no_nan(doc)
    few = {(c["pass"], c["dimension"]): c for c in doc["caveats"] if c["kind"] == "few-items"}
    # the blinded pass scores 10 items (B only), the unblinded pass 20: only the first is "few"
    defined_blinded = {d for d, k in doc["kappa"]["blinded"].items()
                       if k["pairs"]["cto~logician"] is not None}
    assert {d for p, d in few if p == "blinded"} == defined_blinded and defined_blinded
    assert not any(p == "unblinded" for p, _ in few)
    assert all(c["n"] == 10 and "10 items" in c["message"] for c in few.values())
    wide = {(c["pass"], c["dimension"]): c["pairs"] for c in doc["caveats"] if c["kind"] == "wide-interval"}
    for pass_id, per_dim in doc["kappa"].items():
        for dim, entry in per_dim.items():
            for pair, iv in entry["intervals"].items():
                is_wide = iv is not None and iv[1] - iv[0] > 0.5
                assert is_wide is (pair in wide.get((pass_id, dim), [])), (pass_id, dim, pair, iv)
    assert wide  # the noise leaves some intervals wide
    without = study(plan, unblinded={r: noisy(rng, truth(), 0.35) for r in raters}, bootstrap=0)
    assert {c["kind"] for c in without["caveats"]} == {"few-items"}  # no interval, nothing wide


def test_interval_method_and_reasons_in_the_document(plan):
    rng = random.Random(9)
    ub = {r: noisy(rng, truth(), 0.2) for r in ("cto", "logician")}
    for r in ub:  # D6 nearly constant: one disagreeing cell among 20, so some resamples are constant
        for k in ub[r]:
            if k.dimension == "D6":
                ub[r][k] = 1
    ub["logician"][CellKey("Q1", "A", "D6")] = 2
    doc = study(plan, unblinded=ub, bootstrap=200, interval_method="percentile")
    no_nan(doc)
    assert doc["kappa_settings"]["interval_method"] == "percentile"
    d6 = doc["kappa"]["unblinded"]["D6"]
    assert d6["pairs"]["cto~logician"] is not None and d6["intervals"]["cto~logician"] is None
    assert "bootstrap resamples" in d6["interval_reasons"]["cto~logician"]
    d1 = doc["kappa"]["unblinded"]["D1"]
    assert d1["interval_methods"] == {"cto~logician": "percentile"} and d1["interval_reasons"] == {
        "cto~logician": None}
    assert d1["pair_n"] == {"cto~logician": 20}
    with pytest.raises(UsageError, match="interval method"):
        study(plan, interval_method="basic")


def test_rater_roster_says_who_is_required(plan):
    doc = study(plan)
    assert doc["rater_roster"] == [
        {"id": r.id, "name": r.name, "required": r.required} for r in plan.raters
    ]
    assert any(not r["required"] for r in doc["rater_roster"])  # the default plan has an optional rater
