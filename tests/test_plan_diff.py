"""Plan differences (for sealing messages) and deviations from the init defaults (for the report).

Expected values are written out by hand from the YAML each test edits; lines are found in the
edited text, so every assertion names exactly what a user would read.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from aoven_git.model import Plan
from aoven_git.plan import parse_plan
from aoven_git.plan_diff import Deviation, PlanDifference, deviations, plan_differences, short_text
from tests.conftest import DEFAULT_PLAN

TEMPLATE = DEFAULT_PLAN.read_text("utf-8")
DEFAULT = parse_plan(TEMPLATE.encode())
ALL_KEYS = list(DEFAULT.raw)
MAIN_ROUND = "  - {id: main, questions: main}"


def plan_of(text: str) -> Plan:
    return parse_plan(text.encode())


def line_in(text: str, needle: str) -> int:
    hits = [i for i, line in enumerate(text.splitlines(), start=1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def differences(text: str, keys: list[str] | None = None) -> list[PlanDifference]:
    new = plan_of(text)
    return plan_differences(DEFAULT.raw, new.raw, keys or ALL_KEYS, new_lines=new.lines)


# --------------------------------------------------------------------------- plan_differences


def test_an_unchanged_plan_has_no_differences() -> None:
    edited = TEMPLATE.replace("# Check it with", "# Audit it with")  # comments are not the plan
    assert differences(edited) == []


def test_a_changed_threshold_reads_old_to_new_at_its_line() -> None:
    text = TEMPLATE.replace("questions: 6, dims_fraction", "questions: 4, dims_fraction")
    found = differences(text, ["rules"])
    assert found == [PlanDifference("rules.pass.questions", "6", "4", line_in(text, "  pass: {"))]
    assert str(found[0]) == "rules.pass.questions: 6 → 4"


def test_list_items_with_ids_are_addressed_by_id() -> None:
    text = (TEMPLATE
            .replace("{id: logician, name: Logician, emails: [logician@example.org]}",
                     "{id: logician, name: Logician, emails: [logician@example.org, l2@example.org], "
                     "required: false}")
            .replace('{id: 3, name: "INTUIT→FACT"}', '{id: 3, name: "INTUIT→FACT!"}'))
    logician = line_in(text, "{id: logician")
    assert differences(text) == [
        PlanDifference("transitions[#3].name", "INTUIT→FACT", "INTUIT→FACT!", line_in(text, "{id: 3, name")),
        PlanDifference("raters[logician].emails", "[logician@example.org]",
                       "[logician@example.org, l2@example.org]", logician, "added l2@example.org"),
        PlanDifference("raters[logician].required", None, "false", logician),
    ]
    assert str(differences(text)[2]) == "raters[logician].required: (absent) → false"


def test_removed_added_and_reordered_items() -> None:
    blinded = ("  - {id: blinded, conditions: [B], dimensions: [D1, D2, D3, D4, D5, D6, D7, D8], "
               "stripped: true}\n")
    cto = "  - {id: cto, name: CTO, emails: [cto@example.org]}\n"
    logician = "  - {id: logician, name: Logician, emails: [logician@example.org]}\n"
    text = TEMPLATE.replace(blinded, "").replace(cto + logician, logician + cto).replace(
        "UNCERTAIN, NOSRC", "NOSRC")
    found = differences(text, ["raters", "passes", "markers"])

    def cut(text: str) -> str:  # values longer than 80 characters are cut with "…"
        return text if len(text) <= 80 else text[:79] + "…"

    assert [(d.path, d.old, d.new, d.detail) for d in found] == [
        ("raters", "[cto, logician, redteam]", "[logician, cto, redteam]", "reordered"),
        ("passes[blinded]",
         cut("{id: blinded, conditions: [B], dimensions: [D1, D2, D3, D4, D5, D6, D7, D8], stripped: true}"),
         None, ""),
        ("markers",
         cut("[FACT, HYP, INTUIT, ANALOGY, BELIEF, EMOTION, MEMORY, INTERPRET, UNCERTAIN, NOSRC, CONF, REC, "
             "SPEC, LIMIT]"),
         cut("[FACT, HYP, INTUIT, ANALOGY, BELIEF, EMOTION, MEMORY, INTERPRET, NOSRC, CONF, REC, SPEC, "
             "LIMIT]"),
         "removed UNCERTAIN"),
    ]
    assert found[1].line == text.splitlines().index("passes:") + 1  # a removed item points at its list


def test_only_the_listed_keys_are_compared() -> None:
    text = TEMPLATE.replace("questions: 6, dims_fraction", "questions: 4, dims_fraction").replace(
        "retest_cap: 1", "retest_cap: 2")
    assert [d.path for d in differences(text, ["retest_cap"])] == ["retest_cap"]
    both = differences(text, ["rules", "retest_cap"])
    assert [d.path for d in both] == ["rules.pass.questions", "retest_cap"]


def test_items_without_ids_are_addressed_by_position_and_new_keys_appear_whole() -> None:
    old: dict[str, Any] = {"x": [{"a": 1}, {"a": 2}], "claims": {}}
    new: dict[str, Any] = {"x": [{"a": 1}, {"a": 3}, {"a": 4}], "claims": {"unique_probes": {"6": "Q3"}}}
    assert [str(d) for d in plan_differences(old, new, ["x", "claims", "absent"])] == [
        "x[1].a: 2 → 3",
        "x[2]: (absent) → {a: 4}",
        'claims.unique_probes: (absent) → {"6": Q3}',
    ]


def test_short_text_quotes_what_yaml_would_misread_and_cuts_long_values() -> None:
    assert short_text("Tighten the INTUIT definition") == "Tighten the INTUIT definition"
    assert short_text("a: b") == '"a: b"' and short_text("true") == '"true"' and short_text("") == '""'
    assert short_text("12") == '"12"' and short_text(12) == "12" and short_text(0.2) == "0.2"
    assert short_text(None) == "null" and short_text(False) == "false"
    long = short_text(list(range(100)))
    assert long is not None and len(long) == 80 and long.endswith("…")


json_like = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=5)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(st.fixed_dictionaries({"id": st.sampled_from(["a", "b", "c"]), "v": inner}), max_size=3),
        st.dictionaries(st.sampled_from(["id", "k", "m"]), inner, max_size=3),
    ),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(old=st.dictionaries(st.sampled_from(["p", "q", "r"]), json_like, max_size=3),
       new=st.dictionaries(st.sampled_from(["p", "q", "r"]), json_like, max_size=3))
def test_differences_are_empty_exactly_when_the_keys_are_equal(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    keys = ["p", "q", "r"]
    found = plan_differences(old, new, keys)
    assert (found == []) == all(old.get(k, "∅") == new.get(k, "∅") for k in keys)
    for d in found:
        assert d.path.split(".")[0].split("[")[0] in keys and (d.old, d.new) != (None, None)


# --------------------------------------------------------------------------- deviations


def test_the_init_defaults_have_no_deviations() -> None:
    assert deviations(DEFAULT) == []


def test_equal_values_written_differently_and_expected_edits_are_no_deviation() -> None:
    rules_block = TEMPLATE[TEMPLATE.index("rules:\n"):TEMPLATE.index("# Refinements")]
    text = (TEMPLATE.replace(rules_block, "rules: {pass: {improvement: \"1/5\"}}\n\n")  # all defaults
            .replace('{id: Q11, text: "(to be written before scoring)"}', '{id: Q11, text: "Is sugar bad?"}')
            .replace("study: aoven-v0.1", "study: our-study")
            .replace("{id: cto, name: CTO, emails: [cto@example.org]}",
                     "{id: cto, name: Chief, emails: [c@x.org]}"))
    assert deviations(plan_of(text)) == []


def test_a_shortened_study_lists_its_round_and_its_rule_in_plan_order() -> None:
    text = (TEMPLATE.replace(MAIN_ROUND, "  - {id: main, questions: [Q1, Q2, Q3, Q4]}")
            .replace("questions: 6, dims_fraction", "questions: 4, dims_fraction"))
    found = deviations(plan_of(text))
    assert found == [
        Deviation("rounds[main].questions", "[Q1, Q2, Q3, Q4, Q5, Q6, Q7, Q8, Q9, Q10]", "[Q1, Q2, Q3, Q4]",
                  line_in(text, "{id: main, questions"), "removed Q5, Q6, Q7, Q8, Q9, Q10"),
        Deviation("rules.pass.questions", "6", "4", line_in(text, "  pass: {")),
    ]
    assert str(found[1]) == "rules.pass.questions: 4 (default 6)"
    assert found[0].as_dict()["detail"] == "removed Q5, Q6, Q7, Q8, Q9, Q10"


def test_dropped_questions_raters_and_a_new_blind_pass_are_deviations() -> None:
    q10 = TEMPLATE[TEMPLATE.index("  - {id: Q10,"):TEMPLATE.index("\n", TEMPLATE.index("  - {id: Q10,")) + 1]
    blind = "  - {id: hidden, conditions: [A, B], dimensions: [D1], stripped: true, blind: true}\n"
    text = (TEMPLATE.replace(q10, "")
            .replace("{id: redteam, name: Red Team, emails: [redteam@example.org], required: false}",
                     "{id: auditor, required: false}")
            .replace("dimensions: [D1, D2, D3, D4, D5, D6, D7, D8], stripped: true}\n",
                     "dimensions: [D1, D2, D3, D4, D5, D6, D7, D8], stripped: true}\n" + blind))
    found = [(d.path, d.default is None, d.value is None) for d in deviations(plan_of(text))]
    assert found == [
        ("questions[Q10]", False, True),
        ("rounds[main].questions", False, False),
        ("raters[auditor]", True, False),
        ("raters[redteam]", False, True),
        ("passes[hidden]", True, False),
    ]


def test_deviations_can_be_taken_against_any_plan() -> None:
    base = plan_of(TEMPLATE.replace("retest_cap: 1", "retest_cap: 2"))
    assert [str(d) for d in deviations(DEFAULT, copy.copy(base))] == ["retest_cap: 1 (default 2)"]
