"""Hiding a study offence in an amendment's folder.

Findings about an amendment's re-scores block only that amendment (docs/amendments.md, "When an
amendment is NOT-READY"). The attacker's idea: put the study offence where the re-scores
live — a leaked copy of study scores under `amendments/<id>/`, a commit that writes a study sheet
and a re-score sheet together — and hope the report routes it by folder, leaving the pre-registered
verdict PASS. The folder decides nothing: verify-seal names the amendment only when every sheet a
violation concerns is that amendment's, and the report routes by that name alone. And the honest
counterpart: an amendment-only offence must not block the study.
"""

from __future__ import annotations

import json

import pytest

from tests.adversarial.conftest import PLAN, Lab, sheet_text
from tests.conftest import Result

RULES = ("rules:\n  pass: {improvement: 0.20, questions: 2, dims_fraction: 0.625, load_tolerance: 0.5, "
         "regression_tolerance: 0.5}\n")
AMENDMENT = ("amendments:\n  - {id: d2-ruling, title: Ruling, rationale: why, dimensions: [D2], "
             "conditions: [B], passes: [unblinded]}\n")
#: a study whose honest seals give PASS (A scores 2, B scores 1), with one declared amendment
PASS_PLAN = PLAN + RULES + AMENDMENT
FOLDER = "study/amendments/d2-ruling"


def scores(rater: str, *, nonce: str | None = None) -> str:
    return sheet_text(rater, (1, 1), nonce=nonce).replace("| A | 1 | 1 | 2 |", "| A | 2 | 2 | 4 |")


def rescores(rater: str) -> str:
    rows = "".join(f"| {q} | B | 1 |\n" for q in ("Q1", "Q2"))
    return (f"---\nrater: {rater}\npass: unblinded\nround: main\namendment: d2-ruling\n---\n\n"
            f"# Re-scores of {rater}\n\n| Q | Cond | D2 |\n|---|---|---|\n{rows}")


def seal(lab: Lab, rater: str) -> str:
    text = scores(rater, nonce=f"n-{rater}")
    lab.texts[(rater, "unblinded")] = text
    return lab.file(rater, lab.seal_path(rater), lab.seal_bytes(rater, text), f"seal {rater}")


def report(lab: Lab) -> tuple[Result, dict]:
    res = lab.cli("lead", "report", "--format", "json", "--bootstrap", "0")
    assert "Traceback" not in res.output, res.output
    return res, json.loads(res.out)


def violation_scopes(doc: dict) -> list[tuple[str, str | None, str | None]]:
    return sorted((v["code"], v["rater"], v["amendment"]) for v in doc["seals"]["violations"])


@pytest.fixture
def lab(tmp_path) -> Lab:
    lab = Lab(tmp_path / "lab")
    lab.start(PASS_PLAN)
    return lab


def test_the_honest_study_passes(lab: Lab) -> None:
    """The baseline every attack below starts from: two digest seals, two reveals, PASS."""
    seal(lab, "cto"), seal(lab, "logician")
    lab.reveal("cto"), lab.reveal("logician")
    _, doc = report(lab)
    assert doc["verdict"] == "PASS" and doc["seals"]["violations"] == []


@pytest.mark.parametrize("name", ["notes.md", "study-copy.txt"])
def test_an_unattributed_copy_of_study_scores_in_the_amendment_folder_blocks_the_study(
        lab: Lab, name: str) -> None:
    """A score table with no front matter, committed in the amendment's folder before the seals:
    anyone could read it; it names no amendment, so it is the study's. Its cells are those of the
    revealed sheets (cto and logician scored alike), so it is their plaintext before both seals
    (docs/sealing.md, "Copies of scores")."""
    body = scores("logician").split("---\n\n", 1)[1]
    lab.file("logician", f"{FOLDER}/{name}", body, no_verify=True)
    seal(lab, "cto"), seal(lab, "logician")
    lab.reveal("cto"), lab.reveal("logician")
    _, doc = report(lab)
    assert violation_scopes(doc) == [("stray-scores", "cto", None), ("visible-at-seal", "cto", None),
                                     ("visible-at-seal", "logician", None)]
    assert doc["verdict"] == "NOT-READY"
    assert any(f"{FOLDER}/{name}" in r for r in doc["not_ready"])


def test_a_draft_copy_named_for_no_sheet_still_orders_its_rater(lab: Lab) -> None:
    """`scores_logician_draft.md` names no sheet of the plan; its front matter says whose scores
    it holds, so cto, sealing after it, saw logician's scores."""
    lab.file("logician", f"{FOLDER}/scores_logician_draft.md", scores("logician"), no_verify=True)
    seal(lab, "cto"), seal(lab, "logician")
    lab.reveal("cto"), lab.reveal("logician")
    _, doc = report(lab)
    assert ("visible-at-seal", "cto", None) in violation_scopes(doc)
    assert ("stray-scores", "logician", None) in violation_scopes(doc)
    assert doc["verdict"] == "NOT-READY"


def test_a_copy_claiming_the_amendment_still_orders_the_study_seals(lab: Lab) -> None:
    """The copy's front matter claims the amendment; the stray is the amendment's, but a study
    seal made after it still saw logician's scores, and that blocks the study."""
    lab.file("logician", f"{FOLDER}/draft.md", scores("logician").replace(
        "round: main\n", "round: main\namendment: d2-ruling\n"), no_verify=True)
    seal(lab, "cto"), seal(lab, "logician")
    lab.reveal("cto"), lab.reveal("logician")
    _, doc = report(lab)
    assert ("visible-at-seal", "cto", None) in violation_scopes(doc)
    assert ("stray-scores", "logician", "d2-ruling") in violation_scopes(doc)
    assert doc["verdict"] == "NOT-READY"


def test_the_lead_writing_a_study_sheet_with_a_rescore_sheet_blocks_the_study(lab: Lab) -> None:
    """The lead types in cto's study scores and cto's re-scores in one commit: the violation is
    about a study sheet too, so the amendment cannot absorb it."""
    seal(lab, "logician")
    lab.write("study/scores_cto.md", scores("cto"))
    lab.write(f"{FOLDER}/scores_cto.md", rescores("cto"))
    lab.put("lead", "cto's sheets, typed in by the lead", no_verify=True)
    lab.reveal("logician")
    _, doc = report(lab)
    assert ("unauthorized-author", "cto", None) in violation_scopes(doc)
    assert doc["verdict"] == "NOT-READY"
    assert any("unauthorized-author" in r or "changed by lead" in r for r in doc["not_ready"])


def test_rescores_landing_together_block_only_the_amendment(lab: Lab) -> None:
    """Honest study, then both raters' re-scores committed in one commit: `sealed-together`
    about re-scores only; the pre-registered PASS stands, the amendment is NOT-READY."""
    seal(lab, "cto"), seal(lab, "logician")
    lab.reveal("cto"), lab.reveal("logician")
    lab.write(f"{FOLDER}/scores_cto.md", rescores("cto"))
    lab.write(f"{FOLDER}/scores_logician.md", rescores("logician"))
    lab.put("cto", "both re-scores in one commit", no_verify=True)
    _, doc = report(lab)
    scopes = violation_scopes(doc)
    assert ("sealed-together", "cto", "d2-ruling") in scopes
    assert ("sealed-together", "logician", "d2-ruling") in scopes
    assert all(scope == "d2-ruling" for _, _, scope in scopes), scopes
    assert doc["verdict"] == "PASS" and doc["not_ready"] == []
    assert doc["amendments"][0]["verdict"] == "NOT-READY"
