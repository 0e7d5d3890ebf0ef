"""amendments.explore on hand-built sheets: the exploratory layer beside the pre-registered verdict.

What blocks an amendment (a pending rater, an invalid file, a seal violation in its folder) blocks
only that amendment and the ones built on it; amendments apply cumulatively in plan order; the
amendment's own reconciliation settles its scope; an optional rater who did not re-score has no
cells in the scope. Expected numbers are worked out here in exact fractions from the scores the
test builds, never read back from the code under test.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from aoven_git.amendments import explore
from aoven_git.analysis import ReportData, analyse
from aoven_git.model import (
    Cell,
    CellKey,
    Finding,
    Plan,
    Reconciliation,
    ReconciliationRow,
    ScoreSheet,
    SheetId,
)
from aoven_git.plan import load_plan
from aoven_git.render.markdown import render_markdown
from tests.test_analysis import DEFAULT_PLAN, DIMS, QS, truth

AMENDMENTS = """amendments:
  - {id: a1, title: First ruling, rationale: Markers are load., dimensions: [D8], conditions: [B],
     passes: [unblinded]}
  - {id: a2, title: Second ruling, rationale: Read again., dimensions: [D8], conditions: [B],
     passes: [unblinded]}
"""
COMPLETE = {"ok": True, "status": "complete", "seals": [], "violations": []}
ENTRY_KEYS = {"id", "title", "rationale", "label", "scope", "verdict", "summary", "reasons",
              "preregistered_verdict", "change", "improvement", "improvement_exact", "means", "means_exact",
              "counted_dimensions", "excluded_dimensions", "dimensions", "kappa", "raters", "pending_raters",
              "excluded_raters", "changed_cells", "consensus_changes", "rules_changed", "contested_cells",
              "not_ready"}


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> Plan:
    text = DEFAULT_PLAN.read_text(encoding="utf-8")
    assert "amendments: []\n" in text
    path = tmp_path_factory.mktemp("plan") / "aoven.yaml"
    path.write_text(text.replace("amendments: []\n", AMENDMENTS), encoding="utf-8")
    return load_plan(path)


def sheet(rater: str, pass_id: str, scores: dict[CellKey, int], amendment: str | None = None,
          errors: int = 0) -> ScoreSheet:
    folder = f"tests/phase2/amendments/{amendment}" if amendment else "tests/phase2"
    path = f"{folder}/scores_{rater}_{pass_id}.md"
    cells = tuple(Cell(k, v, i + 1) for i, (k, v) in enumerate(sorted(scores.items())))
    findings = tuple(Finding(path, 1, "score-out-of-scale", "bad") for _ in range(errors))
    return ScoreSheet(path, SheetId(rater, pass_id, "main", amendment), "long", cells, findings=findings)


def study_sheets(raters: tuple[str, ...] = ("cto", "logician")) -> list[ScoreSheet]:
    return ([sheet(r, "unblinded", truth()) for r in raters]
            + [sheet(r, "blinded", truth(conds=("B",))) for r in raters])


def d8b(values: dict[str, int] | int) -> dict[CellKey, int]:
    """B/D8 of every question: one value, or a value per question id."""
    return {CellKey(q, "B", "D8"): values if isinstance(values, int) else values[q] for q in QS}


def run(plan: Plan, amended: list[ScoreSheet], *, sheets: list[ScoreSheet] | None = None,
        **kw: Any) -> dict[str, Any]:
    kw.setdefault("seals", COMPLETE)
    data = analyse(plan, sheets=sheets if sheets is not None else study_sheets(), bootstrap=0, **kw)
    doc = explore(data, amended).as_dict()
    json.dumps(doc, allow_nan=False)
    return doc


def means(scores: dict[CellKey, Fraction]) -> dict[str, Fraction]:
    """Mean aggregate per condition over all eight dimensions (they all count here)."""
    return {c: sum((scores[CellKey(q, c, d)] for q in QS for d in DIMS), Fraction(0)) / len(QS) for c in "AB"}


# --------------------------------------------------------------------------- the layer


def test_amended_verdict_beside_the_preregistered_one(plan: Plan) -> None:
    both = ("cto", "logician")
    doc = run(plan, [sheet(r, "unblinded", d8b(3), "a1") for r in both]
              + [sheet(r, "unblinded", d8b(3), "a2") for r in both])
    assert doc["verdict"] == "PASS"
    first = doc["amendments"][0]
    assert set(first) == ENTRY_KEYS and first["label"] == "exploratory"
    assert first["preregistered_verdict"] == "PASS" and first["verdict"] == "FAIL"
    base = {k: Fraction(v) for k, v in truth().items()}
    after = {**base, **{k: Fraction(3) for k in d8b(3)}}
    expected = means(after)
    assert {c: Fraction(v) for c, v in first["means_exact"].items()} == expected
    assert Fraction(first["improvement_exact"]) == (expected["A"] - expected["B"]) / expected["A"]
    d8 = next(d for d in first["dimensions"] if d["id"] == "D8")
    delta = sum((after[CellKey(q, "B", "D8")] - after[CellKey(q, "A", "D8")] for q in QS), Fraction(0)) / 10
    assert Fraction(d8["delta_exact"]) == delta and delta > Fraction(1, 2)
    assert {r["id"] for r in first["rules_changed"]} == {"pass.load.D8", "fail.load.D8"}
    assert first["change"].startswith("PASS → FAIL: D8")
    changed = {(c["cell"], c["rater"], c["from"], c["to"]) for c in first["changed_cells"]}
    assert changed == {(str(k), r, truth()[k], 3) for k in d8b(3) for r in both if truth()[k] != 3}
    # cumulative: the second amendment starts from the first one's values, which it repeats
    second = doc["amendments"][1]
    assert second["changed_cells"] == [] and second["consensus_changes"] == []
    assert second["verdict"] == "FAIL" and second["improvement_exact"] == first["improvement_exact"]


def test_second_amendment_builds_on_the_first(plan: Plan) -> None:
    both = ("cto", "logician")
    doc = run(plan, [sheet(r, "unblinded", d8b(3), "a1") for r in both]
              + [sheet(r, "unblinded", d8b(0), "a2") for r in both])
    second = doc["amendments"][1]
    assert {c["from"] for c in second["changed_cells"]} == {3}  # from the first amendment's value
    assert {(c["from_exact"], c["to_exact"]) for c in second["consensus_changes"]} == {("3", "0")}
    assert second["verdict"] == "PASS"


def test_a_pending_required_rater_blocks_only_the_amendment(plan: Plan) -> None:
    doc = run(plan, [sheet("cto", "unblinded", d8b(3), "a1")])
    assert doc["verdict"] == "PASS" and doc["not_ready"] == []
    first, second = doc["amendments"]
    assert first["verdict"] == "NOT-READY" and first["improvement"] is None
    assert "required rater logician has not revealed the re-scores of amendment a1 for pass unblinded" \
        in first["not_ready"]
    assert first["pending_raters"] == {"unblinded": ["logician"]}
    assert first["rules_changed"] == []
    # κ is shown while NOT-READY, like the study's: logician has no cells in the scope (B) yet
    assert first["kappa"]["unblinded"]["D8"]["pair_n"] == {"cto~logician": 10}
    # the second builds on the first: what blocks the first blocks it too
    assert second["verdict"] == "NOT-READY"
    assert any("amendment a1" in r for r in second["not_ready"])
    assert any("amendment a2" in r for r in second["not_ready"])


def test_the_preregistered_verdict_not_ready_makes_every_amendment_not_ready(plan: Plan) -> None:
    sheets = study_sheets(("cto",))  # logician never revealed
    both = ("cto", "logician")
    doc = run(plan, [sheet(r, "unblinded", d8b(3), "a1") for r in both], sheets=sheets)
    assert doc["verdict"] == "NOT-READY"
    first = doc["amendments"][0]
    assert first["verdict"] == "NOT-READY" and first["means"] == {"A": None, "B": None}
    assert "required rater logician has not revealed scores for pass unblinded" in first["not_ready"]
    assert first["change"].startswith("not ready: ")


def test_an_invalid_amendment_file_blocks_only_its_amendment(plan: Plan) -> None:
    bad = "tests/phase2/amendments/a1/scores_cto_unblinded.md"
    validation = {"ok": False, "files": [
        {"path": bad, "round": "main", "amendment": "a1", "warnings": [],
         "errors": [{"line": 3, "code": "x", "message": "m"}]}]}
    both = ("cto", "logician")
    amended = [sheet("cto", "unblinded", d8b(3), "a1", errors=1),
               sheet("logician", "unblinded", d8b(3), "a1")]
    doc = run(plan, amended + [sheet(r, "unblinded", d8b(3), "a2") for r in both], validation=validation)
    assert doc["verdict"] == "PASS" and doc["not_ready"] == []
    assert doc["validation"]["errors"] == 1  # still listed under Validation
    first, second = doc["amendments"]
    assert first["not_ready"][0] == f"{bad} is invalid (1 error)"
    assert first["not_ready"].count(f"{bad} is invalid (1 error)") == 1
    assert second["verdict"] == "NOT-READY"  # built on an amendment that is not ready


def test_seal_violations_in_an_amendment_block_only_it(plan: Plan) -> None:
    both = ("cto", "logician")
    amended = [sheet(r, "unblinded", d8b(3), a) for r in both for a in ("a1", "a2")]
    seals = {"ok": False, "status": "violated", "seals": [], "violations": [
        {"code": "visible-at-seal", "rater": "logician", "commit": "c" * 40, "message": "saw cto's re-scores",
         "path": "tests/phase2/amendments/a2/seals/scores_logician.sha256", "amendment": "a2"},
        {"code": "plan-changed-after-seal", "rater": None, "commit": "d" * 40, "path": "aoven.yaml",
         "amendment": "a1",
         "message": "amendment a1 was edited after its first files were committed (dddddddddd); append a new "
                    "amendment instead"}]}
    doc = run(plan, amended, seals=seals)
    assert doc["verdict"] == "PASS" and doc["not_ready"] == []
    assert [v["code"] for v in doc["seals"]["violations"]] == ["visible-at-seal", "plan-changed-after-seal"]
    first, second = doc["amendments"]
    assert first["verdict"] == "NOT-READY" and any("amendment a1 was edited" in r for r in first["not_ready"])
    assert any("saw cto's re-scores" in r for r in second["not_ready"])
    assert not any("saw cto's re-scores" in r for r in first["not_ready"])
    assert [v["amendment"] for v in doc["seals"]["violations"]] == ["a2", "a1"]
    effects = render_markdown(doc)
    assert "| saw cto's re-scores | blocks amendment a2 only |" in effects
    assert "append a new amendment instead | blocks amendment a1 only |" in effects
    # the same violation on a study sheet blocks the pre-registered verdict
    seals["violations"][0]["path"] = "tests/phase2/seals/scores_logician.sha256"
    del seals["violations"][0]["amendment"]
    doc = run(plan, amended, seals=seals)
    assert doc["verdict"] == "NOT-READY" and any("saw cto's re-scores" in r for r in doc["not_ready"])
    # the folder alone decides nothing: a violation verify-seal does not attribute to the amendment
    # (a copy of study scores hidden in the amendment's folder) blocks the study
    seals["violations"][0]["path"] = "tests/phase2/amendments/a2/notes.md"
    doc = run(plan, amended, seals=seals)
    assert doc["verdict"] == "NOT-READY" and any("saw cto's re-scores" in r for r in doc["not_ready"])
    assert doc["seals"]["violations"][0]["amendment"] is None


def test_an_optional_rater_is_excluded_only_where_their_violation_is(plan: Plan) -> None:
    raters = ("cto", "logician", "redteam")
    seals = {"ok": True, "status": "complete", "seals": [], "violations": [
        {"code": "unproven-order", "rater": "redteam", "commit": "e" * 40, "message": "late",
         "path": "tests/phase2/amendments/a1/seals/scores_redteam.sha256", "amendment": "a1"}],
        "excluded_raters": [{"rater": "redteam", "codes": ["unproven-order"]}]}
    amended = [sheet(r, "unblinded", d8b(3), "a1") for r in raters]
    doc = run(plan, amended, sheets=study_sheets(raters), seals=seals)
    assert doc["raters"]["unblinded"] == list(raters)  # the study keeps the red team
    assert doc["excluded_raters"] == []
    first = doc["amendments"][0]
    assert first["excluded_raters"] == [{"rater": "redteam", "codes": ["unproven-order"]}]
    assert first["raters"] == {"unblinded": ["cto", "logician"]}
    # the red team's re-scores count nowhere; its study cells outside the scope (A) still do
    assert first["kappa"]["unblinded"]["D8"]["pair_n"] == {"cto~logician": 20, "cto~redteam": 10,
                                                           "logician~redteam": 10}
    assert {c["rater"] for c in first["changed_cells"]} == {"cto", "logician"}
    assert "| late | excludes redteam from amendment a1 |" in render_markdown(doc)
    assert first["not_ready"] == []


def test_an_optional_rater_who_did_not_rescore_has_no_cells_in_the_scope(plan: Plan) -> None:
    raters = ("cto", "logician", "redteam")
    both = ("cto", "logician")
    doc = run(plan, [sheet(r, "unblinded", d8b(2), "a1") for r in both], sheets=study_sheets(raters))
    first = doc["amendments"][0]
    assert first["not_ready"] == [] and first["pending_raters"] == {"unblinded": []}
    assert first["raters"] == {"unblinded": list(both)}
    k = first["kappa"]["unblinded"]["D8"]
    assert k["pair_n"] == {"cto~logician": 20, "cto~redteam": 10, "logician~redteam": 10}


def test_the_amendment_reconciliation_settles_its_flagged_cells(plan: Plan) -> None:
    values = {q: 1 for q in QS}
    cto = d8b(values)
    logician = d8b({**values, "Q1": 3})  # Q1/B/D8: 1 vs 3, flagged
    amended = [sheet("cto", "unblinded", cto, "a1"), sheet("logician", "unblinded", logician, "a1")]
    doc = run(plan, amended)
    first = doc["amendments"][0]
    assert first["verdict"] == "NOT-READY"
    assert any("Q1/B/D8" in r and "no consensus" in r for r in first["not_ready"])
    key = CellKey("Q1", "B", "D8")
    rows = tuple(ReconciliationRow(key, r, '"quote"', 2, line) for line, r in ((3, "cto"), (4, "logician")))
    path = "tests/phase2/amendments/a1/reconciliation.md"
    rec = Reconciliation(path, "unblinded", "main", rows, amendment="a1")
    doc = run(plan, amended, reconciliations=[rec])
    first = doc["amendments"][0]
    assert first["not_ready"] == [] and first["verdict"] != "NOT-READY"
    moved = {c["cell"]: c for c in first["consensus_changes"]}
    assert (moved["Q1/B/D8"]["to_exact"], moved["Q1/B/D8"]["to_resolution"]) == ("2", "consensus")
    # the study's own reconciliation of the same cell does not settle the re-scores
    study = Reconciliation("tests/phase2/reconciliation.md", "unblinded", "main", rows)
    doc = run(plan, amended, reconciliations=[study])
    assert doc["amendments"][0]["verdict"] == "NOT-READY"


def test_a_document_without_parts_gets_an_empty_list(plan: Plan) -> None:
    data = analyse(plan, sheets=study_sheets(), bootstrap=0, seals=COMPLETE)
    bare = ReportData(data.verdict, data.document)
    assert explore(bare, []).document["amendments"] == []
    assert "amendments" not in data.document  # the pre-registered analysis alone has no such key


def test_no_amendment_in_the_plan(tmp_path: Path) -> None:
    plain = load_plan(DEFAULT_PLAN)
    assert plain.amendments == ()
    data = analyse(plain, sheets=study_sheets(), bootstrap=0, seals=COMPLETE)
    assert explore(data, []).document["amendments"] == []
