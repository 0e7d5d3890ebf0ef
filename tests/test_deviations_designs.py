"""A design plan's deviations are counted from the `init --design` template it is closest to, not
from the seed's A/B (docs/report.md, "Deviations from the published defaults")."""

from __future__ import annotations

import pytest

from aoven_git.plan import DESIGN_TEMPLATES, parse_plan
from aoven_git.plan_diff import deviations


@pytest.mark.parametrize("design", sorted(DESIGN_TEMPLATES))
def test_each_template_departs_from_nothing(design: str) -> None:
    plan = parse_plan(DESIGN_TEMPLATES[design].read_bytes())
    assert deviations(plan) == []


def test_a_changed_bound_in_the_arms_template_is_one_deviation_at_its_line() -> None:
    text = DESIGN_TEMPLATES["arms"].read_text(encoding="utf-8")
    assert "within: 0.5" in text
    changed = text.replace("within: 0.5", "within: 0.75", 1)
    plan = parse_plan(changed.encode())
    found = deviations(plan)
    line = changed[: changed.index("within: 0.75")].count("\n") + 1
    assert [(d.path, d.line) for d in found] == [("criteria[B1-same].within", line)]
    assert (found[0].default, found[0].value) == ("0.5", "0.75")


def test_a_seed_plan_is_still_compared_with_the_seed_template() -> None:
    text = DESIGN_TEMPLATES["seed"].read_text(encoding="utf-8")
    plan = parse_plan(text.replace("threshold: 0.6", "threshold: 0.7", 1).encode())
    assert [d.path for d in deviations(plan)] == ["rules.kappa.threshold"]
