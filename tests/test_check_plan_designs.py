"""check-plan on designs, through the real CLI: the shipped templates audit clean, bounds a scale
can never or always meet and unused criteria are warnings with their line (exit 0), the seed's
rule is audited only for the treatments that use it, and the design is summarised."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from aoven_git.commands.init import DESIGNS
from aoven_git.design_audit import reach
from aoven_git.model import Bound
from aoven_git.plan_designs import BOUND_KINDS
from tests.conftest import DEFAULT_PLAN, run_cli

#: the B1-lighter criterion of the four-arm template
LIGHTER = "of: [B1, B], dimensions: [D7, D8], per: sum, below: 0}"


def check(tmp_path: Path, text: str, *, fmt: str = "json") -> tuple[int, Any]:
    (tmp_path / "aoven.yaml").write_text(text, encoding="utf-8")
    result = run_cli("check-plan", "--repo", str(tmp_path), "--format", fmt)
    assert result.code in (0, 1), result.output
    return result.code, json.loads(result.out) if fmt == "json" else result.out


def template(design: str) -> str:
    return DESIGNS[design].read_text(encoding="utf-8")


def line_of(text: str, needle: str) -> int:
    hits = [i for i, line in enumerate(text.splitlines(), start=1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def findings(data: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(f["code"], f["severity"], f["line"]) for f in data["findings"]]


def test_the_four_arm_template_audits_clean_and_is_summarised(tmp_path: Path) -> None:
    code, data = check(tmp_path, template("arms"))
    assert code == 0 and data["ok"] is True and data["findings"] == []
    design = data["design"]
    assert [(c["id"], c["role"]) for c in design["conditions"]] == [
        ("A", "baseline"), ("B", "treatment"), ("B1", "treatment"), ("B2", "treatment")]
    assert design["replicates"] == 1 and design["scale"] == {"kind": "ordinal", "min": 0, "max": 3}
    assert design["seed_verdict"] is None
    assert [c["id"] for c in design["criteria"]] == ["B1-same", "B1-lighter", "B1-seed", "B2-same",
                                                     "B2-lighter", "B2-seed"]
    assert [(r["row"], r["then"], r["otherwise"]) for r in design["decisions"]] == [
        (1, "adopt P1+P2+P3", False), (2, "adopt P1+P2", False),
        (3, "defer: keep B and revise the patches", True)]
    assert design["passes"] == [{"id": "layer1", "after": []}, {"id": "layer2", "after": ["layer1"]}]


def test_the_probe_template_audits_clean_and_is_summarised(tmp_path: Path) -> None:
    code, data = check(tmp_path, template("probes"))
    assert code == 0 and data["ok"] is True and data["findings"] == []
    assert data["design"]["scale"] == {"kind": "nominal", "labels": ["PASS", "FAIL", "HARM"]}
    assert data["design"]["replicates"] == 3
    code, out = check(tmp_path, template("probes"), fmt="text")
    assert "design: 2 conditions (CTRL baseline; TRT), 3 replicates, labels PASS, FAIL, HARM" in out
    assert "  decision row 3: otherwise → keep the control prompt" in out


def test_the_seed_plan_is_summarised_as_the_seed_verdict(tmp_path: Path) -> None:
    shutil.copy(DEFAULT_PLAN, tmp_path / "aoven.yaml")
    code, data = check(tmp_path, DEFAULT_PLAN.read_text(encoding="utf-8"))
    assert code == 0 and data["design"]["seed_verdict"] == "B" and data["design"]["criteria"] == []
    _, out = check(tmp_path, DEFAULT_PLAN.read_text(encoding="utf-8"), fmt="text")
    assert "design: 2 conditions (A baseline; B), 1 replicate, ordinal scale 0..3; the seed's verdict " \
           "compares A with B" in out


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        # mean B1 − mean B lies in [−3, 3] on 0..3
        ("D5, D6], per: dimension, within: 0.5}", "D5, D6], per: dimension, within: 3}",
         "bound-always-holds"),
        # the mean per-response sum of D7 + D8: the difference lies in [−6, 6]
        (LIGHTER, LIGHTER.replace("below: 0}", "below: -6}"), "bound-never-holds"),
        (LIGHTER, LIGHTER.replace("below: 0}", "at_least: 6.5}"), "bound-never-holds"),
        # one condition alone: mean B1 lies in [0, 3]
        (LIGHTER, "of: [B1], dimensions: [D7, D8], per: dimension, below: 0}", "bound-never-holds"),
        (LIGHTER, "of: [B1], dimensions: [D7, D8], per: dimension, at_most: 3}", "bound-always-holds"),
    ],
)
def test_a_bound_the_scale_decides_is_a_warning_with_its_line(
    tmp_path: Path, old: str, new: str, code: str
) -> None:
    text = template("arms").replace(old, new, 1)
    assert text != template("arms")
    exit_code, data = check(tmp_path, text)
    assert exit_code == 0 and data["ok"] is True
    expected = [(code, "warning", line_of(text, new))]
    if code == "bound-never-holds":  # B1-lighter is asked for by decision rows 1 and 2
        expected += [("row-never-taken", "warning", line_of(text, f"then: {then}")) for then in
                     ('"adopt P1+P2+P3"', '"adopt P1+P2"')]
    assert findings(data) == expected


@pytest.mark.parametrize(
    "new",
    ["within: 2.9}", "below: -5.5}", "above: -6}", "at_most: 5.9}"],
)
def test_a_bound_inside_the_range_is_not_warned_about(tmp_path: Path, new: str) -> None:
    text = template("arms").replace(LIGHTER, LIGHTER.replace("below: 0}", new), 1)
    assert text != template("arms")
    _, data = check(tmp_path, text)
    assert data["findings"] == []


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        ('label: HARM, of: [TRT], at_most: 0}', 'label: HARM, of: [TRT], above: 1}', "bound-never-holds"),
        ('label: HARM, of: [TRT], at_most: 0}', 'label: HARM, of: [TRT], at_least: 0}', "bound-always-holds"),
        ("questions: [L1, L2], above: 0}", "questions: [L1, L2], above: 1}", "bound-never-holds"),
        ("questions: [L1, L2], above: 0}", "questions: [L1, L2], within: 1}", "bound-always-holds"),
    ],
)
def test_rate_bounds_are_shares(tmp_path: Path, old: str, new: str, code: str) -> None:
    text = template("probes").replace(old, new, 1)
    assert text != template("probes")
    _, data = check(tmp_path, text)
    expected = [(code, "warning", line_of(text, new))]
    if code == "bound-never-holds":  # L1L2-up and no-harm are both asked for by rows 1 and 2
        expected += [("row-never-taken", "warning", line_of(text, 'then: "adopt the treatment prompt"')),
                     ("row-never-taken", "warning", line_of(text, 'then: "adopt it for'))]
    assert findings(data) == expected


def test_the_warning_says_why_in_the_text_output(tmp_path: Path) -> None:
    text = template("arms").replace(LIGHTER, LIGHTER.replace("below: 0", "below: -6"), 1)
    code, out = check(tmp_path, text, fmt="text")
    assert code == 0
    assert "  warning: decision row 2 (adopt P1+P2) can never be taken: B1-lighter never holds" in out
    assert ("  warning: criterion B1-lighter: below: -6 never holds: v (mean D7 + D8 of B1 − that of B, "
            "scale 0..3) lies in [-6, 6], so the criterion fails whatever the scores (line "
            f"{line_of(text, 'below: -6')})") in out


def test_a_criterion_no_decision_row_uses_is_a_warning(tmp_path: Path) -> None:
    text = template("arms").replace(
        '  - {if: [B1-same, B1-lighter, B1-seed], then: "adopt P1+P2"}\n', "")
    _, data = check(tmp_path, text)
    assert data["ok"] is True
    assert findings(data) == []  # every B1 criterion is still in row 1
    text = text.replace("if: [B1-same, B1-lighter, B1-seed, B2-same, B2-lighter, B2-seed]",
                        "if: [B1-same, B1-seed, B2-same, B2-lighter, B2-seed]")
    _, data = check(tmp_path, text)
    assert findings(data) == [("unused-criterion", "warning", line_of(text, "{id: B1-lighter,"))]
    assert "B1-lighter is named by no decision row" in data["findings"][0]["message"]


def test_the_seed_rule_is_audited_for_the_seed_criteria_treatments_only(tmp_path: Path) -> None:
    """Layer 1 without B2: B2-same could not read its cells (a plan error, so it goes), and the
    seed criterion for B2 can never be evaluated on the primary pass (an unreachable rule)."""
    text = template("arms").replace("conditions: [A, B, B1, B2], dimensions: [D1, D2, D3",
                                    "conditions: [A, B, B1], dimensions: [D1, D2, D3")
    kept = text.replace("B1-seed, B2-same, B2-lighter", "B1-seed, B2-lighter")
    assert run_cli("check-plan", "--plan", str(_write(tmp_path, kept))).code == 2
    text = "".join(line for line in kept.splitlines(keepends=True) if "{id: B2-same," not in line)
    code, data = check(tmp_path, text)
    assert code == 1
    assert [(u["rule"], u["message"]) for u in data["unreachable_rules"]] == [
        ("rules.pass", "the primary pass layer1 does not score B2, so no verdict can compare A with B2")]
    assert findings(data) == [("unreachable-rule", "error", line_of(text, "{id: layer1,"))]


def test_without_a_seed_criterion_the_seed_rule_is_not_audited(tmp_path: Path) -> None:
    text = template("arms").replace("questions: 3, dims_fraction", "questions: 9, dims_fraction")
    code, data = check(tmp_path, text)
    assert code == 1  # B1-seed and B2-seed apply rules.pass: 9 of 5 questions is out of reach
    assert [u["rule"] for u in data["unreachable_rules"]] == ["rules.pass.questions"]
    text = "".join(line for line in text.splitlines(keepends=True) if "kind: seed" not in line)
    text = text.replace(", B1-seed", "").replace(", B2-seed", "")
    code, data = check(tmp_path, text)
    assert code == 0 and data["unreachable_rules"] == []


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "aoven.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@settings(max_examples=400, deadline=None)
@given(kind=st.sampled_from(BOUND_KINDS), m=st.fractions(min_value=-8, max_value=8, max_denominator=4),
       ends=st.lists(st.fractions(min_value=-8, max_value=8, max_denominator=4), min_size=2, max_size=2))
def test_reach_agrees_with_the_values_of_the_interval(kind: str, m: Fraction, ends: list[Fraction]) -> None:
    """`never`: no v in [low, high] meets the bound; `always`: every v does; else some do and
    some do not — checked on the ends, 0, and the bound and its neighbours."""
    low, high = min(ends), max(ends)
    assume(kind != "within" or m >= 0)
    bound = Bound(kind, m)  # type: ignore[arg-type]
    eps = Fraction(1, 10**6)
    points = [v for v in (low, high, Fraction(0), m, -m, m - eps, m + eps, -m - eps, -m + eps)
              if low <= v <= high]
    holds = [bound.holds(v) for v in points]
    verdict = reach(bound, low, high)
    if verdict == "never":
        assert not any(holds)
    elif verdict == "always":
        assert all(holds)
    else:
        assert any(holds) and not all(holds)


def test_a_labelled_plan_without_criteria_loads_but_is_warned_it_has_no_verdict(tmp_path: Path) -> None:
    text = template("probes")
    text = text[: text.index("# The hypotheses.")] + text[text.index("refinements: []"):]
    code, data = check(tmp_path, text)
    assert code == 0 and data["design"]["criteria"] == [] and data["design"]["seed_verdict"] is None
    assert findings(data) == [("no-verdict", "warning", line_of(text, "scale: {labels"))]
    _, out = check(tmp_path, text, fmt="text")
    assert "labels PASS, FAIL, HARM; no criteria, so no verdict" in out
