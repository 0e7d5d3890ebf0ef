"""The reporting checklist (GRRAS, Kottner et al. 2011; Hallgren 2012) and the headline sentence
on which rules were met, through the real CLI: on the bundled example outside git, without a
rater, without intervals, NOT-READY, and in a sealed git repository (docs/report.md,
"Reporting checklist")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aoven_git.render.tables import rules_sentence
from tests.conftest import run_cli
from tests.report_documents import checked_report
from tests.test_report_blind import BlindKey, BlindStudy, report, sealed  # noqa: F401  (fixture)

STUDY = "tests/phase2"


def _json(root: Path, *args: str) -> dict[str, Any]:
    res = run_cli("report", "--format", "json", *args, cwd=root)
    assert res.code == 0, res.output
    return checked_report(res.out)


def _items(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["item"]: e for e in doc["reporting_checklist"]}


def test_the_example_outside_git_reports_every_item_but_independence_sampling_and_training(
    example_study: Path,
) -> None:
    items = _items(_json(example_study, "--bootstrap", "20"))
    missing = sorted(i for i, e in items.items() if e["status"] == "missing")
    assert missing == ["independence", "rater training", "sampling of raters and items"]
    assert items["design"]["value"] == "fully crossed: every rater scored every item of every pass"
    raters = items["number of raters"]["value"]
    assert raters == "3 raters in the plan (3 in pass unblinded; 3 in pass blinded)"
    assert items["number of items"]["value"].startswith("10 questions × 2 conditions = 20 responses")
    assert "pass blinded: stripped (markers removed)" in items["blinding"]["value"]
    assert items["statistic and weights"]["value"].startswith(
        "Cohen's weighted κ per rater pair and dimension, quadratic weights, min over pairs, gate ≥ 0.6")
    assert "95% BCa bootstrap intervals (20 resamples" in items["estimates with intervals"]["value"]
    assert items["software and version"]["value"].startswith("aoven-git ")
    assert items["independence"]["value"].startswith("missing: run the report in the study's git repository")
    assert all(e["where"] and e["grras"] for e in items.values())


def test_the_checklist_is_a_section_of_markdown_and_html(example_study: Path) -> None:
    md = run_cli("report", "--bootstrap", "0", cwd=example_study).out
    section = md.split("## Reporting checklist\n", 1)[1]
    assert ("9 of 13 reported, missing: sampling of raters and items, rater training, independence, "
            "estimates with intervals.") in section
    assert "| independence | ⚠️ missing | missing: run the report" in section
    html = run_cli("report", "--bootstrap", "0", "--format", "html", cwd=example_study).out
    assert '<section id="checklist"><h2>Reporting checklist</h2>' in html
    assert '<a href="#checklist">Reporting checklist</a>' in html


def test_a_rater_without_sheets_makes_the_design_not_fully_crossed(example_study: Path) -> None:
    for path in (example_study / STUDY).glob("scores_redteam*.md"):
        path.unlink()
    doc = _json(example_study, "--bootstrap", "0")
    design = _items(doc)["design"]
    assert design["status"] == "reported"
    assert design["value"] == ("not fully crossed: redteam has no sheet for pass unblinded; "
                               "redteam has no sheet for pass blinded")
    raters = _items(doc)["number of raters"]["value"]
    assert raters == "3 raters in the plan (2 in pass unblinded; 2 in pass blinded)"


def test_without_bootstrap_the_estimates_are_named_missing(example_study: Path) -> None:
    item = _items(_json(example_study, "--bootstrap", "0"))["estimates with intervals"]
    assert item["status"] == "missing"
    assert item["value"].startswith("missing: agreement with bootstrap intervals (--bootstrap above 0")


def test_a_pending_required_rater_is_a_loss_and_the_rules_are_withheld(example_study: Path) -> None:
    for path in (example_study / STUDY).glob("scores_logician*.md"):
        path.unlink()
    doc = _json(example_study, "--bootstrap", "0")
    assert doc["verdict"] == "NOT-READY"
    losses = _items(doc)["losses"]["value"]
    assert losses == "logician (pass unblinded, pending); logician (pass blinded, pending)"
    sentence = "NOT-READY: the 17 rules are withheld until the verdict is ready."
    assert rules_sentence(doc) == sentence
    md = run_cli("report", "--bootstrap", "0", cwd=example_study).out
    assert f"**Rules:** {sentence}" in md
    html = run_cli("report", "--bootstrap", "0", "--format", "html", cwd=example_study).out
    assert f'<p class="rules-sentence"><strong>Rules:</strong> {sentence}</p>' in html


def test_the_headline_names_every_rule_family_of_the_example(example_study: Path) -> None:
    md = run_cli("report", "--bootstrap", "0", cwd=example_study).out
    heading = md.split("## 🟢 Verdict: **PASS**", 1)[1].split("**Improvement:**", 1)[0]
    assert ("**Rules:** PASS: pass rules: improvement ≥ 20% (40.2%) met; ≥ 6 questions improve (B \\< A) "
            "on ≥ 5 of 7 counted dimensions (8) met; D8 (Cognitive load): mean B − mean A ≤ 0.5 (0.30) met; "
            "regression on all 6 dimensions met. Fail rules: none of 8 met.") in heading


def _rule(rid: str, kind: str, outcome: str, value: float | None = 0.75) -> dict[str, Any]:
    return {"id": rid, "kind": kind, "text": f"{rid} holds", "value": value, "value_exact": None,
            "outcome": outcome}


def test_the_headline_says_which_dimensions_fail_and_which_fail_rule_is_met() -> None:
    doc = {"verdict": "FAIL", "rules": [
        _rule("pass.improvement", "pass", "not-met", 0.05),
        _rule("pass.regression.D1", "pass", "met"), _rule("pass.regression.D2", "pass", "not-met"),
        _rule("pass.regression.D3", "pass", "not-met"),
        _rule("fail.improvement", "fail", "met", 0.05), _rule("fail.regression.D1", "fail", "not-met"),
    ]}
    assert rules_sentence(doc) == (
        "FAIL: pass rules: pass.improvement holds (5.0%) not met; regression met on D1, not met on D2 D3. "
        "Fail rules: fail.improvement holds (5.0%) met.")
    assert rules_sentence({"verdict": "PASS", "rules": []}) is None


def test_in_a_sealed_repository_independence_is_the_seal_proof(
    sealed: tuple[BlindStudy, Path, BlindKey],  # noqa: F811
) -> None:
    s, key_file, _ = sealed
    assert s.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file)).code == 0
    items = _items(report(s))
    assert items["independence"] == {
        "item": "independence", "status": "reported", "where": "Seals", "grras": [9],
        "value": "verify-seal: complete (every seal verified from history)"}
    assert "pass hidden: fully blind (opaque ids, conditions hidden)" in items["blinding"]["value"]
