"""Amendments and withdrawals in a four-arm design (SPEC §3.1; docs/amendments.md, docs/sealing.md
"Withdrawals"): baseline A, long form B and two compressed variants B1, B2 in one pass. An amendment
that re-scores `conditions: [B1]` only is written, sealed, revealed and verified through the real
CLI with the hook installed; a sheet that strays into another condition is refused; withdrawals
drop a rater from the four-arm study and from such an amendment alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adversarial.conftest import Lab, expect
from tests.sealing.conftest import plan

CONDITIONS = ["{id: A, name: Baseline, role: baseline}", "{id: B, name: Long form}",
              "{id: B1, name: \"B′ (P1+P2)\"}", "{id: B2, name: \"B″ (P1+P2+P3)\"}"]
ARMS = ("A", "B", "B1", "B2")
RULES = ("{pass: {improvement: 0.20, questions: 2, dims_fraction: 0.625, load_tolerance: 0.5, "
         "regression_tolerance: 0.5, treatment: B}}")
FOUR_ARMS = plan(conditions=CONDITIONS, rules=RULES,
                 passes=["{id: unblinded, conditions: [A, B, B1, B2], dimensions: [D1, D2], primary: true}"])
THREE_REQUIRED = FOUR_ARMS.replace(", required: false", "")
AMENDMENT = ("amendments:\n  - {id: b1-d2, title: B1 ruling, rationale: a compressed hedge still hedges, "
             "dimensions: [D2], conditions: [B1]}\n")
FOLDER = "study/amendments/b1-d2"
RESPONSES = {f"study/test_{c.lower()}/{q}.md": f"# {q.upper()}\n\nA response ({c}, {q}).\n"
             for c in ARMS for q in ("q1", "q2")}


def sheet(rater: str, d2: int = 1) -> str:
    """A full sheet of the four-arm pass: every condition, D1 and D2."""
    rows = "".join(f"| {q} | {c} | 1 | {d2} | {1 + d2} |\n" for q in ("Q1", "Q2") for c in ARMS)
    return (f"---\nrater: {rater}\npass: unblinded\nround: main\n---\n\n# Scores of {rater}\n\n"
            f"| Q | Cond | D1 | D2 | Σ |\n|---|---|---|---|---|\n{rows}")


def rescores(rater: str, score: int = 2, conditions: tuple[str, ...] = ("B1",)) -> str:
    """An amendment sheet: D2 of the listed conditions (the amendment's scope is B1 only)."""
    rows = "".join(f"| {q} | {c} | {score} |\n" for q in ("Q1", "Q2") for c in conditions)
    return (f"---\nrater: {rater}\npass: unblinded\nround: main\namendment: b1-d2\n---\n\n"
            f"# Re-scores of {rater}\n\n| Q | Cond | D2 |\n|---|---|---|\n{rows}")


def ok(res: object) -> None:
    assert res.code == 0 and "Traceback" not in res.output, res.output  # type: ignore[attr-defined]


def seal_and_reveal(lab: Lab, raters: tuple[str, ...], *, amendment: bool = False) -> None:
    """Every rater seals (CLI), then every rater reveals (CLI): the honest order."""
    extra = ("--amendment", "b1-d2") if amendment else ()
    for r in raters:
        path = f"{FOLDER}/scores_{r}.md" if amendment else f"study/scores_{r}.md"
        lab.write(path, rescores(r) if amendment else sheet(r, d2=1 if r == "cto" else 2))
        ok(lab.cli(r, "seal", "--rater", r, *extra))
    for r in raters:
        ok(lab.cli(r, "reveal", "--rater", r, *extra))


def four_arm_lab(tmp_path: Path, text: str) -> Lab:
    lab = Lab(tmp_path / "arms")
    lab.start(text, responses=RESPONSES)
    lab.install_hook()
    return lab


@pytest.fixture
def revealed(tmp_path: Path) -> Lab:
    """Both required raters sealed and revealed the four-arm pass; then the amendment of B1."""
    lab = four_arm_lab(tmp_path, FOUR_ARMS)
    seal_and_reveal(lab, ("cto", "logician"))
    lab.file("lead", "aoven.yaml", FOUR_ARMS + AMENDMENT, "declare amendment b1-d2")
    return lab


def test_an_amendment_of_one_arm_seals_reveals_and_verifies(revealed: Lab) -> None:
    seal_and_reveal(revealed, ("cto", "logician"), amendment=True)
    data = expect(revealed, [])
    assert data["status"] == "complete"
    sealed = sorted((s["rater"], s.get("amendment", "")) for s in data["seals"])
    assert sealed == [("cto", ""), ("cto", "b1-d2"), ("logician", ""), ("logician", "b1-d2")]
    assert all(s["revealed"] for s in data["seals"])
    ok(revealed.cli("lead", "validate"))


def test_the_report_shows_the_amended_b1_cells(revealed: Lab) -> None:
    seal_and_reveal(revealed, ("cto", "logician"), amendment=True)
    res = revealed.cli("lead", "report", "--format", "json", "--bootstrap", "0")
    ok(res)
    [entry] = json.loads(res.out)["amendments"]
    assert entry["id"] == "b1-d2"
    changed = sorted((c["cell"], c["rater"], c["from"], c["to"]) for c in entry["changed_cells"])
    assert changed == [(f"{q}/B1/D2", "cto", 1, 2) for q in ("Q1", "Q2")]


def test_an_amendment_sheet_scoring_another_arm_is_refused(revealed: Lab) -> None:
    path = f"{FOLDER}/scores_cto.md"
    revealed.write(path, rescores("cto", conditions=("B", "B1")))
    before = revealed.snapshot()
    res = revealed.cli("cto", "seal", "--rater", "cto", "--amendment", "b1-d2")
    assert res.code == 1 and "Traceback" not in res.output, res.output
    assert f"{path}:12: cell-not-in-amendment: Q1/B/D2" in res.err
    assert "re-scores only D2 of condition B1" in res.err
    assert revealed.snapshot() == before


def test_an_amendment_sheet_missing_the_arm_is_refused(revealed: Lab) -> None:
    revealed.write(f"{FOLDER}/scores_cto.md", rescores("cto", conditions=()))
    before = revealed.snapshot()
    res = revealed.cli("cto", "seal", "--rater", "cto", "--amendment", "b1-d2")
    assert res.code == 1 and "missing-cell: Q1/B1: no score for D2" in res.err, res.output
    assert "missing-cell: Q2/B1" in res.err
    assert revealed.snapshot() == before


def test_reveal_of_the_amendment_waits_for_the_other_rater(revealed: Lab) -> None:
    revealed.write(f"{FOLDER}/scores_cto.md", rescores("cto"))
    ok(revealed.cli("cto", "seal", "--rater", "cto", "--amendment", "b1-d2"))
    before = revealed.snapshot()
    res = revealed.cli("cto", "reveal", "--rater", "cto", "--amendment", "b1-d2")
    assert res.code == 1 and "logician" in res.err, res.output
    assert revealed.snapshot() == before
    assert expect(revealed, [])["status"] == "pending"


def test_a_withdrawal_in_the_four_arm_study_is_clean(tmp_path: Path) -> None:
    """Three required raters; the red team never seals and is withdrawn: the study completes."""
    lab = four_arm_lab(tmp_path, THREE_REQUIRED)
    for r in ("cto", "logician"):
        lab.write(f"study/scores_{r}.md", sheet(r))
        ok(lab.cli(r, "seal", "--rater", r))
    withdraw = "withdrawals:\n  - {rater: redteam, reason: left, category: unforeseen}\n"
    lab.file("lead", "aoven.yaml", THREE_REQUIRED + withdraw, "withdraw redteam")
    for r in ("cto", "logician"):
        ok(lab.cli(r, "reveal", "--rater", r))
    data = expect(lab, [])
    assert data["status"] == "complete" and data["withdrawals"][0]["rater"] == "redteam"
    assert data["withdrawals"][0]["excluded"] == []


def test_a_withdrawal_during_the_amendment_of_one_arm(revealed: Lab) -> None:
    """cto re-scored B1 and sealed; the logician withdraws before sealing theirs: the amendment is
    not complete there, so the logician's amendment sheet (none) is excluded and nobody waits."""
    revealed.write(f"{FOLDER}/scores_cto.md", rescores("cto"))
    ok(revealed.cli("cto", "seal", "--rater", "cto", "--amendment", "b1-d2"))
    withdraw = "withdrawals:\n  - {rater: logician, reason: left, category: unforeseen}\n"
    revealed.file("lead", "aoven.yaml", FOUR_ARMS + AMENDMENT + withdraw, "withdraw logician")
    ok(revealed.cli("cto", "reveal", "--rater", "cto", "--amendment", "b1-d2"))
    data = expect(revealed, [])
    assert data["status"] == "complete"
    [w] = data["withdrawals"]
    assert w["rater"] == "logician" and {"pass": "unblinded", "round": "main"} in w["kept"]
    assert data["forced_reveals"] == []
