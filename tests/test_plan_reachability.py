"""`unreachable-rule` agrees with the verdict engine: a plan has an unreachable pass rule exactly
when the best scores a study could produce still do not PASS.

The verdict engine (`verdict.evaluate`, with the κ gate on exact κ) is the oracle; the audit
never calls it. Which scores are "best" is argued here, not taken from the audit:
- with κ able to count (threshold ≤ 1), two raters in full agreement with every baseline cell at
  the scale's top and every treatment cell at its bottom maximise the improvement, make every
  question improve on every dimension and give every dimension a negative delta;
- with a threshold above 1 only an undefined κ can count (`undefined: include`), which needs
  every rater constant at one score: every cell at the scale's top is the best such study.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from io import StringIO
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from aoven_git.agreement import kappa_gate, pairwise_kappa
from aoven_git.coverage import unreachable_rules
from aoven_git.model import CellKey, Plan
from aoven_git.plan import parse_plan
from aoven_git.verdict_rules import evaluate
from tests.conftest import DEFAULT_PLAN

DEFAULT = YAML(typ="safe").load(DEFAULT_PLAN.read_text("utf-8"))
DIMS = [d["id"] for d in DEFAULT["dimensions"]]
QUESTIONS = [q["id"] for q in DEFAULT["questions"]]


def _plan(doc: dict[str, Any]) -> Plan:
    out = StringIO()
    YAML(typ="safe").dump(doc, out)
    return parse_plan(out.getvalue().encode())


def _best_verdict(plan: Plan, constant: bool) -> str:
    p, rnd = plan.primary_pass, plan.main_round
    dims = [d.id for d in plan.dimensions if d.id in p.dimensions]
    a, b = plan.baseline.id, plan.treatment.id
    top, bottom = plan.scale.max, plan.scale.min
    values = {
        CellKey(q, c, d): Fraction(top if constant or c == a else bottom)
        for q in rnd.questions for c in (a, b) for d in dims
    }
    counted = []
    for d in dims:
        ratings = {k: int(v) for k, v in values.items() if k.dimension == d}
        found = pairwise_kappa({"r1": ratings, "r2": ratings}, categories=plan.scale.values,
                               weights=plan.rules.kappa.weights)
        pairs = {pair: agreement.exact for pair, agreement in found.items()}
        gate = kappa_gate(pairs, threshold=plan.rules.kappa.threshold, aggregate=plan.rules.kappa.aggregate,
                          undefined=plan.rules.kappa.undefined)
        if gate.counts:
            counted.append(d)
    return evaluate(plan, values, questions=rnd.questions, dimensions=dims, counted=counted).verdict


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    low=st.integers(0, 3),
    span=st.integers(1, 10),
    improvement=st.integers(0, 150),
    fail_share=st.integers(0, 100),
    needed=st.integers(0, 12),
    round_len=st.integers(1, 10),
    dropped=st.sets(st.sampled_from(DIMS), max_size=7),
    threshold=st.sampled_from(["3/5", "1/1", "6/5"]),
    undefined=st.sampled_from(["exclude", "include"]),
    dims_fraction=st.sampled_from(["0/1", "5/8", "1/1"]),
)
# the corners only a study of constant raters reaches (threshold above 1, undefined κ included)
@example(low=1, span=2, improvement=0, fail_share=0, needed=6, round_len=10, dropped=set(),
         threshold="6/5", undefined="include", dims_fraction="5/8")
@example(low=1, span=2, improvement=0, fail_share=0, needed=0, round_len=10, dropped=set(),
         threshold="6/5", undefined="include", dims_fraction="5/8")
@example(low=1, span=2, improvement=0, fail_share=0, needed=6, round_len=10, dropped=set(),
         threshold="6/5", undefined="include", dims_fraction="0/1")
@example(low=1, span=2, improvement=1, fail_share=0, needed=0, round_len=10, dropped=set(),
         threshold="6/5", undefined="include", dims_fraction="0/1")
@example(low=0, span=3, improvement=100, fail_share=100, needed=10, round_len=10, dropped=set(),
         threshold="1/1", undefined="exclude", dims_fraction="1/1")
def test_unreachable_rule_iff_the_best_study_cannot_pass(
    low: int, span: int, improvement: int, fail_share: int, needed: int, round_len: int,
    dropped: set[str], threshold: str, undefined: str, dims_fraction: str,
) -> None:
    doc = copy.deepcopy(DEFAULT)
    doc["scale"] = {"min": low, "max": low + span}
    rules = doc["rules"]
    rules["pass"].update(improvement=f"{improvement}/100", questions=needed, dims_fraction=dims_fraction)
    rules["fail"]["improvement"] = f"{improvement * fail_share}/10000"
    rules["kappa"].update(threshold=threshold, undefined=undefined)
    doc["rounds"] = [{"id": "main", "questions": QUESTIONS[:round_len]}]
    doc["passes"][0]["dimensions"] = [d for d in DIMS if d not in dropped]
    plan = _plan(doc)

    found = unreachable_rules(plan)
    reachable = "PASS" in (_best_verdict(plan, constant=False), _best_verdict(plan, constant=True))
    assert reachable == (not found), [u.message for u in found]


def test_the_default_plan_can_pass_and_a_shortened_one_cannot() -> None:
    assert unreachable_rules(_plan(DEFAULT)) == []
    short = copy.deepcopy(DEFAULT)
    short["rounds"] = [{"id": "main", "questions": QUESTIONS[:4]}]
    plan = _plan(short)
    assert _best_verdict(plan, constant=False) == "INCONCLUSIVE"
    assert [u.rule for u in unreachable_rules(plan)] == ["rules.pass.questions"]
