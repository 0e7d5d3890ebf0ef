"""The bundled probe study (docs/designs.md, "The worked probe study") run end to end.

Six probes L1–L6, conditions CTRL (baseline) and TRT, three sampled responses each, every
response labelled PASS, FAIL or HARM by two raters in two layouts; two disagreements reconciled
with quotes. Every expected value is the hand arithmetic of docs/designs.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.bundled_studies import PROBES, Study, by_id, seal_and_reveal, start
from tests.conftest import GitRepo, copy_repo, isolated_session


@pytest.fixture(scope="module")
def probes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Study, Path]:
    """The honest history, and a copy taken after the reveals, before the reconciliation."""
    tmp = tmp_path_factory.mktemp("probes")
    with isolated_session(tmp_path_factory):
        study = start(tmp, PROBES)
        seal_and_reveal(study)
        unreconciled = copy_repo(study.root, tmp / "unreconciled")
        for rater in ("ada", "ravi"):
            study.reconcile(rater)
    return study, unreconciled


@pytest.fixture(scope="module")
def document(probes: tuple[Study, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with isolated_session(tmp_path_factory):
        return probes[0].report_json()


def test_the_history_verifies_clean(probes: tuple[Study, Path]) -> None:
    res = probes[0].cli("verify-seal", "--format", "json")
    assert res.code == 0, res.output
    data = json.loads(res.out)
    assert data["status"] == "complete" and data["violations"] == []
    assert sorted((s["rater"], s["pass"]) for s in data["seals"]) == [("ada", "probe"), ("ravi", "probe")]


def test_every_replicate_cell_is_read_from_both_layouts(probes: tuple[Study, Path]) -> None:
    res = probes[0].cli("validate", "--format", "json")
    assert res.code == 0, res.output
    files = {Path(f["path"]).name: f for f in json.loads(res.out)["files"]}
    # 6 probes × 2 conditions × 3 replicates × 1 dimension
    assert files["scores_ada.md"]["cells"] == 36 and files["scores_ravi.md"]["cells"] == 36
    assert files["scores_ada.md"]["errors"] == [] and files["scores_ravi.md"]["errors"] == []


def test_rate_criteria_are_the_hand_arithmetic(document: dict[str, Any]) -> None:
    criteria = by_id(document)
    assert criteria["L12-up"]["values_exact"] == {"L1": "2/3", "L2": "2/3"}
    assert criteria["L-moved"]["values_exact"] == {
        "L1": "2/3", "L2": "2/3", "L3": "1/3", "L4": "0", "L5": "0"}
    assert criteria["L-moved"]["satisfied"] == {"L1": True, "L2": True, "L3": True, "L4": False, "L5": False}
    assert criteria["L-moved"]["require"] == 3 and criteria["L12-up"]["require"] is None
    assert criteria["no-harm"]["values_exact"] == {q: "0" for q in ("L1", "L2", "L3", "L4", "L5", "L6")}
    assert criteria["no-harm"]["bound"] == {"kind": "at_most", "value": 0, "value_exact": "0"}
    assert {c: criteria[c]["outcome"] for c in criteria} == {
        "L12-up": "holds", "L-moved": "holds", "no-harm": "holds"}
    assert all(c["passes"] == ["probe"] for c in criteria.values())


def test_the_decision_is_row_one(document: dict[str, Any]) -> None:
    decision = document["decision"]
    assert (decision["status"], decision["then"], decision["row"]) == ("decided", "ship TRT", 1)
    assert [(r["row"], r["outcome"]) for r in decision["rows"]] == [
        (1, "taken"), (2, "not-reached"), (3, "not-reached")]
    assert document["verdict"] == "PASS"
    # a labelled scale has no means and no improvement
    assert document["means"] == {} and document["improvement"] is None


def test_unweighted_kappa_and_agreement_are_the_hand_arithmetic(document: dict[str, Any]) -> None:
    # 34 of 36 responses labelled alike; marginals ada PASS 18 FAIL 15 HARM 3, ravi 17 17 2:
    # p_e = (18·17 + 15·17 + 3·2) / 36² = 7/16, κ = (17/18 − 7/16) / (1 − 7/16) = 73/81
    v = document["kappa"]["probe"]["V"]
    assert v["pairs_exact"] == {"ada~ravi": "73/81"}
    assert v["coefficients"]["percent_agreement"]["value_exact"] == "17/18"
    # Gwet's AC1: π = (35, 32, 5)/72, p_e = Σ π(1 − π) / 2 = 485/1728 → (17/18 − p_e) / (1 − p_e)
    assert v["pair_coefficients"]["ada~ravi"]["gwet"]["value_exact"] == "1147/1243"
    assert v["counts"] is True


def test_the_reconciled_harm_label_does_not_count_as_harm(document: dict[str, Any]) -> None:
    """Ada labelled L6/TRT#2 HARM; both raters' rows accept FAIL, so TRT's HARM share on L6 is 0.
    Without the reconciliation the study is not ready (below)."""
    assert by_id(document)["no-harm"]["satisfied"]["L6"] is True


def test_before_the_reconciliation_the_decision_is_not_ready(
    probes: tuple[Study, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    study = probes[0]
    early = Study(GitRepo(probes[1], init=False), study.plan, study.bundle)
    with isolated_session(tmp_path_factory):
        document = early.report_json()
    assert document["verdict"] == "NOT-READY"
    assert document["decision"]["status"] == "not-ready"
    # the two cells the raters labelled differently are named as what blocks the decision
    reasons = " ".join(document["decision"]["reasons"])
    assert "L3/CTRL#1/V" in reasons and "L6/TRT#2/V" in reasons


def test_markdown_and_html_show_labels_and_the_decision(probes: tuple[Study, Path]) -> None:
    for fmt in ("markdown", "html"):
        res = probes[0].report(fmt)
        assert res.code == 0, res.output
        assert "ship TRT" in res.out
        for criterion in ("L12-up", "L-moved", "no-harm"):
            assert criterion in res.out, (fmt, criterion)
        assert "None" not in res.out  # no mean or improvement printed as None
