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


# --------------------------------------------------------------------------- per round, reachability

MAIN_ROUND = "  - {id: main, questions: main}"


def line_in(text: str, needle: str) -> int:
    """1-based line of the one line containing `needle` (the expected line of a finding)."""
    hits = [i for i, line in enumerate(text.splitlines(), start=1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def check(tmp_path: Path, text: str) -> tuple[int, dict]:
    result = run_cli("check-plan", "--repo", str(write_plan(tmp_path, text)), "--format", "json")
    assert result.code in (0, 1), result.output
    return result.code, json.loads(result.out)


def test_the_default_plan_has_one_verdict_round_and_only_placeholder_warnings(tmp_path: Path) -> None:
    text = default_text()
    code, data = check(tmp_path, text)
    assert code == 0 and data["unreachable_rules"] == []
    assert [(r["id"], r["verdict_round"], r["source"], r["ok"]) for r in data["rounds"]] == [
        ("main", True, "main", True)]
    assert data["rounds"][0]["questions"] == [f"Q{i}" for i in range(1, 11)]
    assert data["rounds"][0]["unique_probes"] == data["unique_probes"]
    assert [(f["code"], f["severity"], f["line"]) for f in data["findings"]] == [
        ("placeholder-question", "warning", line_in(text, f"id: Q{i},")) for i in range(11, 16)]


def test_a_shortened_round_is_audited_over_its_own_questions(tmp_path: Path) -> None:
    text = default_text().replace(MAIN_ROUND, "  - {id: main, questions: [Q1, Q2, Q3, Q4]}")
    code, data = check(tmp_path, text)
    assert code == 1 and data["ok"] is False
    # by hand from `expects`: Q1 {1,8,2}, Q2 {2,9,13}, Q3 {5,6,4}, Q4 {4,5,10}
    assert data["unprobed_transitions"] == [3, 7, 11, 12]
    assert data["unique_probes"] == {"1": "Q1", "6": "Q3", "8": "Q1", "9": "Q2", "10": "Q4", "13": "Q2"}
    (main,) = data["rounds"]
    assert (main["source"], main["questions"], main["ok"]) == ("explicit", ["Q1", "Q2", "Q3", "Q4"], False)
    assert main["unprobed_transitions"] == [3, 7, 11, 12]
    rule = {"rule": "rules.pass.questions", "round": "main", "line": line_in(text, "  pass: {improvement"),
            "message": "rules.pass.questions is 6 but round main has 4 questions"}
    assert data["unreachable_rules"] == [rule] and main["unreachable_rules"] == [rule]
    errors = [(f["code"], f["line"], f["round"]) for f in data["findings"] if f["severity"] == "error"]
    assert errors == [
        ("unprobed-transition", line_in(text, '{id: 3, name'), "main"),
        ("unprobed-transition", line_in(text, '{id: 7, name'), "main"),
        ("unprobed-transition", line_in(text, '{id: 11, name'), "main"),
        ("unprobed-transition", line_in(text, '{id: 12, name'), "main"),
        ("unreachable-rule", rule["line"], "main"),
    ]
    out = run_cli("check-plan", "--repo", str(tmp_path)).out
    assert "round main (verdict round), 4 questions: Q1, Q2, Q3, Q4" in out
    assert "  error: unreachable rule: rules.pass.questions is 6 but round main has 4 questions" in out
    assert "  error: #3 INTUIT→FACT is probed by no question of round main" in out


def test_a_shortened_study_with_matching_rules_passes_the_audit(tmp_path: Path) -> None:
    """The example of docs/plan.md, "Shortening a study": seven questions that still probe
    every transition, and a questions rule the round can meet."""
    text = (default_text()
            .replace(MAIN_ROUND, "  - {id: main, questions: [Q1, Q2, Q3, Q4, Q5, Q9, Q10]}")
            .replace("questions: 6, dims_fraction", "questions: 4, dims_fraction"))
    code, data = check(tmp_path, text)
    assert code == 0, data["findings"]
    assert data["unprobed_transitions"] == [] and data["unreachable_rules"] == []


def test_a_claim_is_judged_on_the_round_actually_scored(tmp_path: Path) -> None:
    text = (default_text().replace(MAIN_ROUND, "  - {id: main, questions: [Q1, Q2, Q3, Q4, Q5, Q6, Q7, Q8]}")
            .replace("claims: {}", 'claims: {unique_probes: {"3": Q9}}'))
    code, data = check(tmp_path, text)
    assert code == 1
    assert data["false_claims"] == [
        {"transition": "3", "question": "Q9", "probed_by": [], "reason": "no question probes #3"}]


def test_a_retest_round_is_warned_about_gaps_and_its_unreachable_rule_is_an_error(tmp_path: Path) -> None:
    retest = "  - {id: retest1, questions: holdout, refinements: [R1]}"
    text = default_text().replace(MAIN_ROUND, MAIN_ROUND + "\n" + retest)
    code, data = check(tmp_path, text)
    assert code == 1
    assert [r["id"] for r in data["rounds"]] == ["main", "retest1"]
    assert data["rounds"][0]["ok"] is True and data["rounds"][1]["ok"] is False
    assert data["unprobed_transitions"] == []  # the flat keys describe the verdict round
    findings = [(f["severity"], f["code"], f["line"], f["message"]) for f in data["findings"] if f["round"]]
    assert findings == [
        ("warning", "unprobed-transition", line_in(text, retest),
         "re-test round retest1 probes no question for " + ", ".join(f"#{t}" for t in range(1, 14))),
        ("error", "unreachable-rule", line_in(text, "  pass: {improvement"),
         "rules.pass.questions is 6 but round retest1 has 5 questions"),
    ]


ALL_DIMS = "dimensions: [D1, D2, D3, D4, D5, D6, D7, D8], stripped: false, primary: true"


def _unreachable(tmp_path: Path, text: str) -> list[tuple[str, int | None, str]]:
    code, data = check(tmp_path, text)
    assert code == (1 if data["unreachable_rules"] else 0)
    return [(u["rule"], u["line"], u["message"]) for u in data["unreachable_rules"]]


def test_a_load_dimension_the_primary_pass_does_not_score_is_unreachable(tmp_path: Path) -> None:
    text = default_text().replace(ALL_DIMS, ALL_DIMS.replace(", D8]", "]"))
    assert _unreachable(tmp_path, text) == [(
        "rules.pass.load_tolerance", line_in(text, "load_dimensions: [D8]"),
        "load dimension D8 is not scored by the primary pass unblinded, so its load rule "
        "(rules.pass.load_tolerance) can never be evaluated")]


def test_an_epistemic_dimension_the_primary_pass_does_not_score_is_unreachable(tmp_path: Path) -> None:
    text = default_text().replace(ALL_DIMS, ALL_DIMS.replace(" D3,", ""))
    assert _unreachable(tmp_path, text) == [(
        "rules.pass.regression_tolerance", line_in(text, "{id: D3,"),
        "epistemic dimension D3 is not scored by the primary pass unblinded, so its regression rule "
        "(rules.pass.regression_tolerance) can never be evaluated")]


def test_a_primary_pass_without_the_baseline_is_unreachable(tmp_path: Path) -> None:
    text = default_text().replace("conditions: [A, B], " + ALL_DIMS, "conditions: [B], " + ALL_DIMS)
    assert _unreachable(tmp_path, text) == [(
        "rules.pass", line_in(text, "{id: unblinded,"),
        "the primary pass unblinded does not score A, so no verdict can compare A with B")]


def test_improvements_beyond_what_the_scale_allows_are_unreachable(tmp_path: Path) -> None:
    text = (default_text().replace("scale: {min: 0, max: 3}", "scale: {min: 1, max: 3}")
            .replace("pass: {improvement: 0.20", "pass: {improvement: 0.7")
            .replace("fail: {improvement: 0.10}", "fail: {improvement: 0.7}"))
    why = "the best possible on scale 1..3 is 2/3 (every baseline score 3, every treatment score 1)"
    assert _unreachable(tmp_path, text) == [
        ("rules.pass.improvement", line_in(text, "  pass: {improvement"),
         f"rules.pass.improvement is 0.7 but {why}"),
        ("rules.fail.improvement", line_in(text, "  fail: {improvement"),
         f"rules.fail.improvement is 0.7 but {why}: every verdict would be FAIL"),
    ]
    # 2/3 itself is reachable (every A at 3, every B at 1); on 0..3 even 100% is
    assert _unreachable(tmp_path, text.replace("0.7", '"2/3"')) == []
    whole = default_text().replace("pass: {improvement: 0.20", "pass: {improvement: 1")
    assert _unreachable(tmp_path, whole) == []


def test_a_kappa_threshold_above_one_is_unreachable(tmp_path: Path) -> None:
    text = default_text().replace("threshold: 0.6", "threshold: 1.2")
    assert _unreachable(tmp_path, text) == [(
        "rules.kappa.threshold", line_in(text, "  kappa: {"),
        "rules.kappa.threshold is 1.2 but kappa is at most 1, so no dimension can count toward the verdict")]
    assert _unreachable(tmp_path, default_text().replace("threshold: 0.6", "threshold: 1")) == []


def test_json_keeps_every_key_it_had(tmp_path: Path) -> None:
    _, data = check(tmp_path, default_text())
    old = {"ok", "uncovered_transitions", "multiply_covered", "unprobed_transitions", "unique_probes",
           "probes", "false_claims", "warnings"}
    assert old <= set(data) and {"rounds", "unreachable_rules", "findings"} <= set(data)
