"""The report document of a plan with a decision table (docs/report.md; CONTRACT of issue 21):
`criteria[]`, `decision`, the verdict that summarises the decision, every condition's mean, and
the seed's document unchanged key for key.

The four-arm study is sealed, revealed and reported through the real CLI in a real git
repository; the mapping of every decision status to a verdict is pinned on `analysis.analyse`
over parsed sheets (tests/design_studies.py). Every document is checked against the schema."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from aoven_git.analysis import WITHHELD, analyse
from aoven_git.model import CellKey
from tests.conftest import EXAMPLE, GitRepo, run_cli
from tests.design_studies import (
    ARMS,
    DIMS,
    FOUR_ARM_CRITERIA,
    QS,
    arm_grid,
    four_arm,
    four_arm_text,
    lowered,
    probe_grid,
    probes,
    sheets,
)
from tests.report_documents import check_report, checked_report

EPISTEMIC = ["D1", "D2", "D3", "D4", "D5", "D6"]
SEED_KEYS = [
    "schema", "study", "plan_version", "round", "verdict", "summary", "reasons", "terminal", "improvement",
    "improvement_exact", "means", "means_exact", "conditions", "b_scores_from", "blinding", "verdict_pass",
    "counted_dimensions", "excluded_dimensions", "dimensions", "questions", "rules", "kappa",
    "kappa_settings",
    "caveats", "raters", "pending_raters", "rater_roster", "flagged_cells", "contested_cells", "cells",
    "extremes", "robust_to_contested", "self_bias", "not_ready", "seals", "validation", "retest",
    "generated_by", "source", "excluded_raters", "deviations", "protocol_deviations", "reconciliation",
    "blind_passes", "uncertainty", "reporting_checklist", "amendments",
]


def varied(grid: dict[CellKey, int]) -> dict[CellKey, int]:
    """`grid` with Q1–Q5 one point higher on every A cell, so no dimension is constant (κ defined)
    while B, B1 and B2 stay as written."""
    return {k: (v + 1 if k.condition == "A" and k.question in QS[:5] else v) for k, v in grid.items()}


def document(grid: Mapping[CellKey, int], other: Mapping[CellKey, int] | None = None,
             **kw: Any) -> dict[str, Any]:
    plan = kw.pop("plan", None) or four_arm()
    by_rater = {"cto": dict(grid), "logician": dict(other if other is not None else grid)}
    doc = analyse(plan, sheets=sheets(plan, by_rater), bootstrap=0, **kw).as_dict()
    check_report(doc)
    return doc


def adopt_both() -> dict[CellKey, int]:
    """A at 2 (3 on Q1–Q5); B, B1, B2 at 1 on D1–D6; B1 and B2 at 1 on D7, D8 (B at 2)."""
    return varied(arm_grid({**lowered("B", EPISTEMIC, 1), **lowered("B1", EPISTEMIC, 1),
                            **lowered("B2", EPISTEMIC, 1), **lowered("B1", ["D7", "D8"], 1),
                            **lowered("B2", ["D7", "D8"], 1)}))


def test_the_bundled_example_keeps_the_seed_document_key_for_key(example_study: Path) -> None:
    res = run_cli("report", "--format", "json", "--bootstrap", "0", cwd=example_study)
    assert res.code == 0, res.output
    doc = checked_report(res.out)
    assert list(doc) == SEED_KEYS
    assert "criteria" not in doc and "decision" not in doc
    assert (doc["verdict"], doc["improvement_exact"]) == ("PASS", "139/346")
    assert doc["means_exact"] == {"A": "173/15", "B": "69/10"}
    assert len(doc["rules"]) == 17


def test_a_row_with_if_taken_is_pass_and_every_criterion_is_shown() -> None:
    doc = document(adopt_both())
    assert doc["verdict"] == "PASS"
    assert doc["summary"] == "Decision: adopt P1+P2+P3 (row 1)"
    assert doc["decision"]["status"] == "decided" and doc["decision"]["row"] == 1
    assert [r["outcome"] for r in doc["decision"]["rows"]] == ["taken", "not-reached", "not-reached"]
    assert doc["rules"] == []
    by_id = {c["id"]: c for c in doc["criteria"]}
    assert list(by_id) == ["B1-same", "B1-lighter", "B1-seed", "B2-same", "B2-lighter", "B2-seed"]
    same = by_id["B1-same"]
    assert same["text"] == "mean B1 − mean B on each of D1–D6, |v| ≤ 1/2"
    assert same["bound"] == {"kind": "within", "value": 0.5, "value_exact": "1/2"}
    assert same["values_exact"] == {d: "0" for d in EPISTEMIC}
    assert same["of"] == ["B1", "B"] and same["passes"] == ["unblinded"] and same["require"] is None
    assert by_id["B1-lighter"]["values_exact"] == {"sum": "-2"}  # (1 + 1) − (2 + 2)
    seed = by_id["B1-seed"]
    assert seed["of"] == ["B1", "A"] and seed["bound"] is None
    assert seed["values"] == {"verdict": None} and seed["outcome"] == "holds"
    assert {r["id"] for r in seed["rules"]} >= {"pass.improvement", "fail.improvement"}


def test_every_condition_has_its_mean_and_the_improvement_is_the_seed_treatment() -> None:
    doc = document(adopt_both())
    # A: 8 dims × 2 = 16 per question, +8 on Q1–Q5 → (10·16 + 5·8)/10 = 20; B: 6·1 + 2·2 = 10;
    # B1 = B2 = 8 · 1 = 8. Improvement of B (rules.pass.treatment) = (20 − 10)/20 = 1/2.
    assert doc["means_exact"] == {"A": "20", "B": "10", "B1": "8", "B2": "8"}
    assert doc["means"] == {"A": 20.0, "B": 10.0, "B1": 8.0, "B2": 8.0}
    assert doc["improvement_exact"] == "1/2"


def test_otherwise_taken_is_fail() -> None:
    grid = adopt_both()
    grid.update({CellKey(q, "B2", "D7"): 2 for q in QS})  # B2 − B on D7+D8 = 1 + 1 − 4 … now −1
    grid.update({CellKey(q, "B1", "D3"): 3 for q in QS})  # B1 − B on D3 = 2: B1-same fails
    grid.update({CellKey(q, "B2", "D3"): 3 for q in QS})  # and B2-same
    doc = document(grid)
    assert (doc["verdict"], doc["summary"]) == ("FAIL", "Decision: defer R1 (row 3)")
    assert [r["outcome"] for r in doc["decision"]["rows"]] == ["fails", "fails", "taken"]


def test_an_undecided_row_in_the_way_is_inconclusive_naming_the_blocking_criteria() -> None:
    grid = adopt_both()
    grid.update({CellKey(q, "B2", "D4"): 3 for q in QS[:3]})  # B2 − B on D4 = 6/10 … within fails
    other = dict(grid)
    other.update({CellKey(q, "B2", "D4"): 1 for q in QS[:3]})  # … but the raters differ by 2: flagged
    consensus_free = document(grid, other)
    assert consensus_free["verdict"] == "NOT-READY"  # a flagged cell without consensus
    assert consensus_free["decision"]["status"] == "not-ready"
    # D5 at 1 on every cell for both raters: κ undefined, D5 does not count, so B1-same and
    # B2-same are undecided; the seed criteria are told `gate: false` and hold.
    ungated = FOUR_ARM_CRITERIA
    for arm in ("B1", "B2"):
        seed = f"kind: seed, treatment: {arm}"
        ungated = ungated.replace(seed + "}", seed + ", gate: false}")
    plan = four_arm(ungated)
    flat = {**adopt_both(), **{CellKey(q, c, "D5"): 1 for q in QS for c in ARMS}}
    doc = document(flat, plan=plan)
    assert doc["kappa"]["unblinded"]["D5"]["counts"] is False
    by_id = {c["id"]: c for c in doc["criteria"]}
    assert by_id["B1-same"]["outcome"] == "undecided"
    assert by_id["B1-same"]["reasons"][0].startswith("D5 does not count in pass unblinded (")
    assert by_id["B1-seed"]["outcome"] == "holds"
    assert doc["verdict"] == "INCONCLUSIVE"
    assert doc["decision"]["status"] == "undecided"
    assert doc["decision"]["blocking"] == ["B1-same", "B2-same"]
    assert doc["summary"] == "Decision undecided: blocked by B1-same, B2-same"
    assert [r["outcome"] for r in doc["decision"]["rows"]] == ["blocked", "not-reached", "not-reached"]


def test_contested_cells_in_the_way_make_the_verdict_contested() -> None:
    from aoven_git.model import Reconciliation, ReconciliationRow

    grid = adopt_both()
    other = {**grid, CellKey("Q1", "B2", "D2"): 3}  # 1 vs 3 … flagged, then contested by both raters
    key = CellKey("Q1", "B2", "D2")
    rows = tuple(ReconciliationRow(key, r, '"x"', "contested", 3) for r in ("cto", "logician"))
    rec = Reconciliation("study/reconciliation.md", "unblinded", "main", rows)
    many = {**grid, **{CellKey(q, "B2", "D2"): 3 for q in QS[:3]}}  # v(D2) = 0 … or 3·2/10 > 1/2
    recs = Reconciliation("study/reconciliation.md", "unblinded", "main", tuple(
        ReconciliationRow(CellKey(q, "B2", "D2"), r, '"x"', "contested", 3)
        for q in QS[:6] for r in ("cto", "logician")))
    doc = document(grid, many, reconciliations=[recs])
    same = next(c for c in doc["criteria"] if c["id"] == "B2-same")
    assert same["outcome"] == "contested"
    assert same["extremes"] == {"best": "holds", "worst": "fails"}
    assert doc["verdict"] == "CONTESTED"
    assert doc["decision"]["status"] == "contested"
    assert doc["decision"]["blocking"] == ["B2-same"]
    robust = document(grid, other, reconciliations=[rec])  # one contested cell: 2/10 ≤ 1/2 either way
    assert robust["verdict"] == "PASS"


def test_not_ready_withholds_every_criterion_value() -> None:
    plan = four_arm()
    doc = analyse(plan, sheets=sheets(plan, {"cto": adopt_both()}), bootstrap=0).as_dict()
    check_report(doc)
    assert doc["verdict"] == "NOT-READY"
    assert doc["summary"] == "NOT-READY: required rater logician has not revealed scores for pass unblinded"
    assert doc["decision"] == {
        "status": "not-ready", "then": None, "row": None, "blocking": [],
        "reasons": ["required rater logician has not revealed scores for pass unblinded"],
        "rows": [{"row": 1, "if": ["B1-same", "B1-lighter", "B1-seed", "B2-same", "B2-lighter", "B2-seed"],
                  "then": "adopt P1+P2+P3", "otherwise": False, "outcome": "not-reached"},
                 {"row": 2, "if": ["B1-same", "B1-lighter", "B1-seed"], "then": "adopt P1+P2",
                  "otherwise": False, "outcome": "not-reached"},
                 {"row": 3, "if": [], "then": "defer R1", "otherwise": True, "outcome": "not-reached"}],
    }
    for c in doc["criteria"]:
        assert c["outcome"] == "undecided" and c["reasons"] == [WITHHELD] and c["rules"] == []
        assert set(c["values"].values()) == {None}
    assert doc["means"] == {c: None for c in ARMS} and doc["improvement"] is None


# --------------------------------------------------------------------------- through the CLI


def four_arm_repo(root: Path, grid: Mapping[CellKey, int]) -> GitRepo:
    """The four-arm plan committed with responses for A, B, B1, B2 (copies of the example's),
    then both required raters' long-layout sheets sealed and revealed under their identities."""
    repo = GitRepo(root)
    plan = four_arm_text().replace("  require_annotations: true", "  require_annotations: false")
    repo.write("aoven.yaml", plan)
    for arm in ARMS:
        source = EXAMPLE / ("test_a" if arm == "A" else "test_b")
        shutil.copytree(source, root / "tests/phase2" / f"test_{arm.lower()}")
    repo.commit("Pre-register the four-arm plan; add the responses", author=("Lead", "lead@example.org"))
    rows = ["| Question | Condition | Dimension | Score |", "|---|---|---|---|"]
    rows += [f"| {k.question} | {k.condition} | {k.dimension} | {v} |" for k, v in grid.items()]
    for rater in ("cto", "logician"):
        repo.write(f"tests/phase2/scores_{rater}.md", "# Scores\n\n" + "\n".join(rows) + "\n")
        identity(repo, rater)
        res = run_cli("seal", "--rater", rater, "--pass", "unblinded", cwd=root)
        assert res.code == 0, res.output
    for rater in ("cto", "logician"):
        identity(repo, rater)
        res = run_cli("reveal", "--rater", rater, "--pass", "unblinded", cwd=root)
        assert res.code == 0, res.output
    return repo


def identity(repo: GitRepo, rater: str) -> None:
    repo.git("config", "user.name", rater)
    repo.git("config", "user.email", f"{rater}@example.org")


def test_four_arms_with_seven_constant_dimensions_report_undefined_kappa_and_a_decision(
    tmp_path: Path,
) -> None:
    """The issue's story: a four-arm study scored 0 on seven dimensions by everyone, where κ cannot
    be computed; the report says why, gives Gwet's AC2, Brennan–Prediger and percent agreement
    instead, and still reads its decision table (here: defer)."""
    grid = arm_grid(base=0)
    grid.update({CellKey(q, arm, "D8"): (1 if i % 2 else 0) for i, q in enumerate(QS) for arm in ARMS})
    repo = four_arm_repo(tmp_path / "study", grid)
    res = run_cli("report", "--format", "json", "--bootstrap", "0", cwd=repo.path)
    assert res.code == 0, res.output
    doc = checked_report(res.out)
    for d in DIMS[:7]:
        entry = doc["kappa"]["unblinded"][d]
        assert entry["value"] is None and entry["counts"] is False
        assert entry["reason"] == ("κ is undefined for cto~logician: both raters gave every item the same "
                                   "score (0), so chance agreement is total")
        coefficients = entry["coefficients"]
        assert coefficients["percent_agreement"]["value_exact"] == "1"
        assert coefficients["gwet"]["name"] == "AC2" and coefficients["gwet"]["value_exact"] == "1"
        assert coefficients["brennan_prediger"]["value_exact"] == "1"
    assert doc["kappa"]["unblinded"]["D8"]["value_exact"] == "1"
    assert doc["counted_dimensions"] == ["D8"]
    by_id = {c["id"]: c for c in doc["criteria"]}
    assert by_id["B1-same"]["outcome"] == "undecided"  # D1–D6 do not count
    assert by_id["B1-lighter"]["outcome"] == "undecided"  # D7 does not count
    assert by_id["B1-seed"]["outcome"] == "fails"  # mean A = 1/2 … improvement 0: FAIL
    assert doc["means_exact"] == {"A": "1/2", "B": "1/2", "B1": "1/2", "B2": "1/2"}
    assert doc["decision"]["rows"][0]["outcome"] == "fails"
    assert (doc["verdict"], doc["decision"]["status"]) == ("FAIL", "decided")
    assert doc["summary"] == "Decision: defer R1 (row 3)"
    for fmt in ("markdown", "html"):
        out = run_cli("report", "--format", fmt, "--bootstrap", "0", cwd=repo.path)
        assert out.code == 0, out.output
    assert Fraction(doc["improvement_exact"]) == 0


def test_the_probe_study_reports_label_rates_over_replicates_and_its_decision() -> None:
    plan = probes()
    # TRT: 3, 2, 2, 0, 1 PASS of 3 on L1–L5; CTRL: 1, 1, 2, 1, 0 → v = 2/3, 1/3, 0, −1/3, 1/3
    grid = probe_grid({("L1", "TRT"): 3, ("L2", "TRT"): 2, ("L3", "TRT"): 2, ("L5", "TRT"): 1,
                       ("L1", "CTRL"): 1, ("L2", "CTRL"): 1, ("L3", "CTRL"): 2, ("L4", "CTRL"): 1})
    doc = analyse(plan, sheets=sheets(plan, {"ann": grid, "bob": grid}), bootstrap=0).as_dict()
    check_report(doc)
    moved = next(c for c in doc["criteria"] if c["id"] == "L-moved")
    assert moved["values_exact"] == {"L1": "2/3", "L2": "1/3", "L3": "0", "L4": "-1/3", "L5": "1/3"}
    assert moved["satisfied"] == {"L1": True, "L2": True, "L3": False, "L4": False, "L5": True}
    assert moved["require"] == 3 and moved["outcome"] == "holds"
    assert moved["text"] == "share TRT − share CTRL labelled PASS on V, on at least 3 of L1–L5, v > 0"
    assert (doc["verdict"], doc["summary"]) == ("PASS", "Decision: ship the treatment (row 1)")
    assert doc["means"] == {} and doc["improvement"] is None and doc["rules"] == []
    assert doc["uncertainty"]["withheld"] == "a labelled scale has no means"
    assert doc["kappa_settings"]["weights"] == "none"
    statistic = next(i for i in doc["reporting_checklist"] if "none (labels) weights" in str(i))
    assert statistic


def test_the_example_documents_for_renderers_match_the_schema_and_decide_as_documented() -> None:
    from tests.design_studies import example_documents

    docs = example_documents()
    for doc in docs.values():
        check_report(doc)
    arms = docs["four-arm"]
    assert (arms["summary"], arms["decision"]["row"]) == ("Decision: adopt P1+P2 (row 2)", 2)
    assert [r["outcome"] for r in arms["decision"]["rows"]] == ["fails", "taken", "not-reached"]
    assert docs["probes"]["decision"]["then"] == "ship the treatment"


def test_a_second_undecided_round_ends_a_design_study_like_the_seed() -> None:
    table = """
criteria:
  - {id: B1-same, kind: delta, of: [B1, B], dimensions: [D1, D2, D3, D4, D5, D6], within: 0.5}
decisions:
  - {if: [B1-same], then: "adopt P1+P2"}
  - {otherwise: "defer R1"}
"""
    text = four_arm_text(table).replace("  # - {id: retest1, questions: holdout, refinements: [R1]}",
                                        "  - {id: retest1, questions: holdout, refinements: [R1]}")
    from aoven_git.plan import parse_plan

    plan = parse_plan(text.encode())
    holdout = [q.id for q in plan.holdout]
    grid = arm_grid({**lowered("B", EPISTEMIC, 1, holdout), **lowered("B1", EPISTEMIC, 1, holdout),
                     **lowered("B2", EPISTEMIC, 1, holdout), **lowered("B1", ["D7", "D8"], 1, holdout),
                     **lowered("B2", ["D7", "D8"], 1, holdout)}, questions=holdout)
    grid = {k: (v + 1 if k.condition == "A" and k.question in holdout[:2] else v) for k, v in grid.items()}
    grid.update({CellKey(q, c, "D5"): 1 for q in holdout for c in ARMS})  # κ undefined: D5 does not count
    doc = analyse(plan, sheets=sheets(plan, {"cto": grid, "logician": grid}, round_id="retest1"),
                  round_id="retest1", previous_verdicts={"main": "INCONCLUSIVE"}, bootstrap=0).as_dict()
    check_report(doc)
    assert doc["decision"]["status"] == "undecided"
    assert doc["verdict"] == "INCONCLUSIVE" and doc["terminal"] is True
    assert doc["summary"].startswith("INCONCLUSIVE, terminal: a second inconclusive round ends the study")
