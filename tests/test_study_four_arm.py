"""The bundled four-arm study (docs/designs.md, "The worked four-arm study") run end to end.

A baseline A, the long form B and two compressed variants B1 (P1+P2) and B2 (P1+P2+P3), five
questions, three raters with three layouts, layer 1 (D1–D6) sealed before layer 2 (D7–D8). Every
expected value below is the hand arithmetic of docs/designs.md, from the consensus tables there;
none is the tool's output pasted back.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.bundled_studies import ARMS, Study, by_id, run_study, seal_and_reveal, start
from tests.conftest import GitRepo, copy_repo, isolated_session

RATERS = ("mara", "tomas", "ines")


@pytest.fixture(scope="module")
def arms(tmp_path_factory: pytest.TempPathFactory) -> tuple[Study, Path]:
    """The honest history, and a copy taken after the reveals but before any reconciliation."""
    tmp = tmp_path_factory.mktemp("arms")
    with isolated_session(tmp_path_factory):
        study = start(tmp, ARMS)
        seal_and_reveal(study)
        unreconciled = copy_repo(study.root, tmp / "unreconciled")
        for rater in RATERS:
            study.reconcile(rater)
    return study, unreconciled


@pytest.fixture(scope="module")
def document(arms: tuple[Study, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with isolated_session(tmp_path_factory):
        return arms[0].report_json()


def test_the_history_verifies_clean_with_every_pass_digest_sealed(arms: tuple[Study, Path]) -> None:
    study = arms[0]
    res = study.cli("verify-seal", "--format", "json")
    assert res.code == 0, res.output
    data = json.loads(res.out)
    assert data["status"] == "complete" and data["violations"] == []
    assert sorted((s["rater"], s["pass"], s["kind"]) for s in data["seals"]) == sorted(
        (r, p, "digest") for r in RATERS for p in ("layer1", "layer2"))


def test_every_rater_sealed_layer_one_before_their_layer_two(arms: tuple[Study, Path]) -> None:
    study = arms[0]
    for rater in RATERS:
        seals = "arms/seals/scores_"
        first = study.repo.git("log", "--format=%H", "--", f"{seals}{rater}.sha256").split()
        second = study.repo.git("log", "--format=%H", "--", f"{seals}{rater}_layer2.sha256").split()
        assert first and second
        study.repo.git("merge-base", "--is-ancestor", first[-1], second[-1])  # raises if not


def test_criteria_values_are_the_hand_arithmetic(document: dict[str, Any]) -> None:
    criteria = by_id(document)
    assert list(criteria) == ["B1-same", "B1-lighter", "B1-seed", "B2-same", "B2-lighter", "B2-seed"]
    assert criteria["B1-same"]["values_exact"] == {
        "D1": "1/5", "D2": "0", "D3": "0", "D4": "1/5", "D5": "0", "D6": "0"}
    assert criteria["B2-same"]["values_exact"] == {
        "D1": "0", "D2": "1/5", "D3": "1/5", "D4": "3/5", "D5": "0", "D6": "0"}
    assert criteria["B2-same"]["satisfied"] == {
        "D1": True, "D2": True, "D3": True, "D4": False, "D5": True, "D6": True}
    assert criteria["B1-lighter"]["values_exact"] == {"sum": "-1"}
    assert criteria["B2-lighter"]["values_exact"] == {"sum": "-8/5"}
    assert criteria["B1-same"]["bound"] == {"kind": "within", "value": 0.5, "value_exact": "1/2"}
    assert criteria["B1-lighter"]["bound"] == {"kind": "below", "value": 0, "value_exact": "0"}
    assert criteria["B1-seed"]["bound"] is None
    assert {c: criteria[c]["outcome"] for c in criteria} == {
        "B1-same": "holds", "B1-lighter": "holds", "B1-seed": "holds",
        "B2-same": "fails", "B2-lighter": "holds", "B2-seed": "holds"}
    assert criteria["B1-same"]["passes"] == ["layer1"] and criteria["B1-lighter"]["passes"] == ["layer2"]


def test_seed_criteria_apply_the_seed_rule_to_each_variant(document: dict[str, Any]) -> None:
    criteria = by_id(document)
    b1 = {r["id"]: r for r in criteria["B1-seed"]["rules"]}
    b2 = {r["id"]: r for r in criteria["B2-seed"]["rules"]}
    # the seed rule on the primary pass (D1–D6): mean aggregates A 52/5, B1 17/5, B2 20/5
    assert b1["pass.improvement"]["value_exact"] == "35/52" and b1["pass.improvement"]["outcome"] == "met"
    assert b2["pass.improvement"]["value_exact"] == "8/13"
    # questions improving on at least ⌈5/8 × 6⌉ = 4 dimensions: all five for B1, four for B2 (not Q5)
    assert b1["pass.questions"]["value_exact"] == "5" and b2["pass.questions"]["value_exact"] == "4"
    assert b2["pass.regression.D4"]["value_exact"] == "-4/5" and b2["pass.regression.D4"]["outcome"] == "met"
    assert not any(".load." in r for r in b1)  # no load dimension in this plan
    assert criteria["B1-seed"]["values"] == {"verdict": None}
    assert criteria["B1-seed"]["passes"] == ["layer1"]


def test_the_decision_is_row_two_because_row_one_definitely_fails(document: dict[str, Any]) -> None:
    decision = document["decision"]
    assert (decision["status"], decision["then"], decision["row"]) == ("decided", "adopt P1+P2", 2)
    assert decision["blocking"] == []
    assert [(r["row"], r["outcome"], r["otherwise"]) for r in decision["rows"]] == [
        (1, "fails", False), (2, "taken", False), (3, "not-reached", True)]
    assert document["verdict"] == "PASS" and document["rules"] == []
    assert "Decision: adopt P1+P2 (row 2)" in document["summary"]


def test_the_all_zero_dimension_has_no_kappa_but_counts_under_gwet(document: dict[str, Any]) -> None:
    d6 = document["kappa"]["layer1"]["D6"]
    assert d6["value"] is None and d6["pairs"] == {"mara~tomas": None, "mara~ines": None, "tomas~ines": None}
    assert "chance agreement is total" in d6["reason"]
    assert d6["coefficients"]["percent_agreement"]["value_exact"] == "1"
    assert d6["gate"] == {"coefficient": "gwet", "value": 1.0, "value_exact": "1", "reason": None}
    assert d6["counts"] is True


def test_percent_agreement_counts_rater_pairs_per_item(document: dict[str, Any]) -> None:
    # D7: 19 of 20 responses unanimous, one scored 1, 1, 2 — that item agrees 25/27 (quadratic
    # weights), so p_a = (19 + 25/27) / 20 = 269/270
    d7 = document["kappa"]["layer2"]["D7"]
    assert d7["coefficients"]["percent_agreement"]["value_exact"] == "269/270"
    assert d7["pairs_exact"]["mara~ines"] == "1"


def test_markdown_and_html_show_the_decision(arms: tuple[Study, Path]) -> None:
    study = arms[0]
    for fmt in ("markdown", "html"):
        res = study.report(fmt)
        assert res.code == 0, res.output
        assert "adopt P1+P2" in res.out and "adopt P1+P2+P3" in res.out
        for criterion in ("B1-same", "B1-lighter", "B1-seed", "B2-same", "B2-lighter", "B2-seed"):
            assert criterion in res.out, (fmt, criterion)


def test_before_the_reconciliation_the_decision_is_not_ready(
    arms: tuple[Study, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    study = arms[0]
    early = Study(GitRepo(arms[1], init=False), study.plan, study.bundle)
    with isolated_session(tmp_path_factory):
        document = early.report_json()
    assert document["verdict"] == "NOT-READY"
    assert document["decision"]["status"] == "not-ready" and document["decision"]["then"] is None
    assert "Q2/A/D1" in json.dumps(document["flagged_cells"])


def test_sealing_layer_two_before_layer_one_is_refused(tmp_path: Path) -> None:
    study = start(tmp_path, ARMS)
    study.write_sheet("tomas", "layer2")
    head = study.repo.head_commit()
    res = study.seal("tomas", "layer2")
    assert res.code == 1, res.output
    assert "layer1" in res.output and "Traceback" not in res.output
    assert study.repo.head_commit() == head



def test_with_cohens_kappa_as_the_gate_the_all_zero_dimension_blocks_adoption(tmp_path: Path) -> None:
    """The real team's situation: κ cannot be computed on D6 (and D8's κ is 18/43 at high
    agreement), so under the default gate neither dimension counts and P1+P2 cannot be adopted,
    although every value is the same as under the pre-registered Gwet gate."""
    bundle = tmp_path / "bundle"
    shutil.copytree(ARMS, bundle)
    plan = (bundle / "aoven.yaml").read_text(encoding="utf-8")
    assert ", coefficient: gwet}" in plan
    (bundle / "aoven.yaml").write_text(plan.replace(", coefficient: gwet}", "}"), encoding="utf-8")
    document = run_study(tmp_path, bundle).report_json()
    assert document["kappa"]["layer1"]["D6"]["counts"] is False
    assert document["kappa"]["layer2"]["D8"]["value_exact"] == "18/43"
    assert document["kappa"]["layer2"]["D8"]["counts"] is False
    criteria = by_id(document)
    assert criteria["B1-same"]["outcome"] == "undecided" and "D6" in " ".join(criteria["B1-same"]["reasons"])
    assert criteria["B1-same"]["values_exact"]["D1"] == "1/5"  # the values do not move
    assert criteria["B1-lighter"]["outcome"] == "undecided"
    assert criteria["B1-lighter"]["values_exact"] == {"sum": "-1"}
    assert criteria["B1-seed"]["outcome"] != "holds"
    assert document["decision"]["then"] != "adopt P1+P2" and document["verdict"] != "PASS"
