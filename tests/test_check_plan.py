"""check-plan: coverage audit and false unique-probe claims, through the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import DEFAULT_PLAN, run_cli

# The unique probes the original test plan asserted for its ten questions.
PUBLISHED_UNIQUE_PROBES = {"6": "Q3", "12": "Q5", "11": "Q8", "3": "Q9", "7": "Q10"}


def write_plan(tmp_path: Path, text: str) -> Path:
    (tmp_path / "aoven.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def default_text() -> str:
    return DEFAULT_PLAN.read_text(encoding="utf-8")


def test_default_plan_is_fully_covered(tmp_path: Path) -> None:
    shutil.copy(DEFAULT_PLAN, tmp_path / "aoven.yaml")
    result = run_cli("check-plan", "--repo", str(tmp_path), "--format", "json")
    assert result.code == 0, result.output
    data = json.loads(result.out)
    assert data["ok"] is True
    assert data["uncovered_transitions"] == [] and data["multiply_covered"] == {}
    assert data["unprobed_transitions"] == []
    # computed by hand from the questions' `expects` lists
    assert data["unique_probes"] == {"3": "Q9", "6": "Q3", "7": "Q10", "12": "Q5"}


def test_published_claims_contain_exactly_one_false_claim(tmp_path: Path) -> None:
    claims = ", ".join(f'"{t}": {q}' for t, q in PUBLISHED_UNIQUE_PROBES.items())
    text = default_text().replace("claims: {}", "claims: {unique_probes: {" + claims + "}}")
    result = run_cli("check-plan", "--repo", str(write_plan(tmp_path, text)), "--format", "json")
    assert result.code == 1
    data = json.loads(result.out)
    assert [(c["transition"], c["question"]) for c in data["false_claims"]] == [("11", "Q8")]
    assert data["false_claims"][0]["probed_by"] == ["Q8", "Q9"]
    text_out = run_cli("check-plan", "--repo", str(tmp_path)).out
    assert "false claim: Q8" in text_out and "also probed by Q9" in text_out


def test_uncovered_and_double_covered_transitions(tmp_path: Path) -> None:
    text = default_text().replace("transitions: [9, 10]}", "transitions: [9, 2]}")
    result = run_cli("check-plan", "--repo", str(write_plan(tmp_path, text)), "--format", "json")
    assert result.code == 1
    data = json.loads(result.out)
    assert data["uncovered_transitions"] == [10]
    assert data["multiply_covered"] == {"2": ["D2", "D6"]}


def test_unprobed_transition(tmp_path: Path) -> None:
    text = default_text().replace("expects: [3, 11]}", "expects: [11]}")
    result = run_cli("check-plan", "--repo", str(write_plan(tmp_path, text)), "--format", "json")
    assert result.code == 1
    assert json.loads(result.out)["unprobed_transitions"] == [3]


def test_claim_naming_unknown_question_is_a_plan_error(tmp_path: Path) -> None:
    text = default_text().replace("claims: {}", 'claims: {unique_probes: {"6": Q99}}')
    result = run_cli("check-plan", "--repo", str(write_plan(tmp_path, text)))
    assert result.code == 2
    assert "unknown question 'Q99'" in result.err and "aoven.yaml:" in result.err


def test_placeholder_hold_out_questions_are_warned_about(tmp_path: Path) -> None:
    shutil.copy(DEFAULT_PLAN, tmp_path / "aoven.yaml")
    result = run_cli("check-plan", "--repo", str(tmp_path), "--format", "json")
    assert result.code == 0  # a fresh plan is not broken, only unfinished
    warned = json.loads(result.out)["warnings"]
    assert [w.split()[1] for w in warned] == ["Q11", "Q12", "Q13", "Q14", "Q15"]
    text = default_text().replace('{id: Q11, text: "(to be written before scoring)"}',
                                  '{id: Q11, text: "Does sugar make children hyperactive?"}')
    out = run_cli("check-plan", "--repo", str(write_plan(tmp_path, text))).out
    assert "warning: question Q12" in out and "question Q11" not in out
