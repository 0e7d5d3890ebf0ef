"""Withdrawal of a required rater (docs/plan.md, "Withdrawals"; docs/sealing.md, "Withdrawals") and
the report's protocol deviations (docs/report.md, "Protocol deviations").

Each story is a real repository of the small test plan with all three raters required: two seal,
the third drops out, the lead withdraws them in a commit of its own, and the study finishes —
verify-seal clean, reveal allowed, a verdict from the two raters who stayed, the withdrawal shown.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoven_git.plan import DEFAULT_PLAN_TEMPLATE, parse_plan
from aoven_git.plan_diff import deviations
from aoven_git.render import provenance
from tests.adversarial.conftest import PLAN, SPLIT_PASS_PLAN, Lab, as_identity, identity
from tests.conftest import Result, run_cli

#: the test plan with the red team required too: three required raters
THREE = PLAN.replace(", required: false", "")
assert THREE != PLAN
WITHDRAW_REDTEAM = "withdrawals:\n  - {rater: redteam, reason: left the company, category: unforeseen}\n"


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return Lab(tmp_path / "lab")


def withdraw(lab: Lab, plan: str, entries: str = WITHDRAW_REDTEAM) -> str:
    """The lead's withdrawal commit: the plan with `entries` appended, nothing else."""
    return lab.file("lead", "aoven.yaml", plan + entries, "withdraw a rater")


def put_sheet(lab: Lab, rater: str, pass_id: str = "unblinded") -> None:
    """The sealed plaintext back in the work tree, where `reveal` reads it."""
    lab.write(lab.score_path(rater, pass_id), lab.texts[(rater, pass_id)])


def reveal(lab: Lab, rater: str, *args: str) -> Result:
    return lab.cli(rater, "reveal", "--rater", rater, *args)


def report(lab: Lab, fmt: str = "json") -> tuple[int, str]:
    with as_identity(identity("lead")):
        res = run_cli("report", "--format", fmt, "--bootstrap", "0", cwd=lab.path)
    assert "Traceback" not in res.output, res.output
    return res.code, res.out


def report_json(lab: Lab) -> dict:
    code, out = report(lab)
    assert code == 0, out
    return json.loads(out)


# --------------------------------------------------------------------------- the study finishes


def test_a_study_whose_required_rater_withdraws_after_the_others_sealed_completes(lab: Lab) -> None:
    lab.start(THREE)
    lab.seal("cto", (1, 2))
    lab.seal("logician", (2, 2))
    put_sheet(lab, "cto")
    put_sheet(lab, "logician")
    refused = reveal(lab, "cto")
    assert refused.code == 1 and "redteam" in refused.output, refused.output  # waited for, before
    res, data = lab.verify()
    assert data["status"] == "pending" and {p["rater"] for p in data["pending"]} == {"redteam"}

    commit = withdraw(lab, THREE)
    first = reveal(lab, "cto")
    assert first.code == 0, first.output
    assert "redteam" not in first.output
    assert reveal(lab, "logician").code == 0

    res, data = lab.verify()
    assert res.code == 0, res.output
    assert (data["status"], data["violations"], data["pending"], data["forced_reveals"]) == \
        ("complete", [], [], [])
    [w] = data["withdrawals"]
    assert (w["rater"], w["category"], w["reason"], w["commit"]) == \
        ("redteam", "unforeseen", "left the company", commit)
    assert (w["excluded"], w["kept"], w["after_reveal"]) == ([], [], [])

    text = run_cli("verify-seal", cwd=lab.path)
    assert f"  withdrawn redteam in {commit[:10]}: unforeseen, left the company; no longer waited for" \
        in text.out
    doc = report_json(lab)
    assert doc["verdict"] != "NOT-READY", doc["not_ready"]
    assert doc["raters"] == {"unblinded": ["cto", "logician"]}
    assert doc["pending_raters"] == {"unblinded": []}
    [event] = doc["protocol_deviations"]["events"]
    assert (event["kind"], event["commit"], event["when"], event["category"]) == \
        ("withdrawal", commit, "before any reveal", "unforeseen")
    assert doc["seals"]["withdrawals"][0]["rater"] == "redteam"


def test_the_withdrawal_is_shown_in_markdown_and_html(lab: Lab) -> None:
    lab.start(THREE)
    lab.seal("cto")
    lab.seal("logician")
    commit = withdraw(lab, THREE)
    for rater in ("cto", "logician"):
        put_sheet(lab, rater)
        assert reveal(lab, rater).code == 0
    code, md = report(lab, "markdown")
    assert code == 0
    section = md.split("## Protocol deviations", 1)[1].split("\n## ", 1)[0]
    assert "| withdrawal | rater redteam withdrawn — left the company |" in section
    assert f"`{commit[:7]}`" in section and "before any reveal" in section and "unforeseen event" in section
    code, html = report(lab, "html")
    assert code == 0
    assert 'id="protocol"' in html and "rater redteam withdrawn — left the company" in html


def test_a_sealed_sheet_of_a_pass_not_complete_at_the_withdrawal_leaves_agreement(lab: Lab) -> None:
    """The red team sealed, but the logician had not: the pass was not complete at the withdrawal,
    so the red team's sheet (even revealed later) counts nowhere."""
    lab.start(THREE)
    lab.seal("cto", (1, 2))
    lab.seal("redteam", (3, 3))
    withdraw(lab, THREE)
    lab.seal("logician", (1, 2))
    for rater in ("cto", "logician", "redteam"):
        put_sheet(lab, rater)
        assert reveal(lab, rater).code == 0, rater
    res, data = lab.verify()
    assert (res.code, data["violations"]) == (0, [])
    assert data["withdrawals"][0]["excluded"] == [{"pass": "unblinded", "round": "main"}]
    doc = report_json(lab)
    assert doc["raters"] == {"unblinded": ["cto", "logician"]}
    assert doc["verdict"] != "NOT-READY", doc["not_ready"]


def test_a_pass_complete_at_the_withdrawal_keeps_the_raters_scores(lab: Lab) -> None:
    """Two passes that share no condition: everyone sealed the first, then the red team dropped
    out; the first pass keeps their scores, the second goes on without them."""
    plan = SPLIT_PASS_PLAN.replace(", required: false", "")
    lab.start(plan)
    for rater in ("cto", "logician", "redteam"):
        lab.seal(rater, pass_id="first")
    withdraw(lab, plan)
    for rater in ("cto", "logician"):
        lab.seal(rater, pass_id="second")
    for rater in ("cto", "logician", "redteam"):
        put_sheet(lab, rater, "first")
        assert reveal(lab, rater, "--pass", "first").code == 0, rater
    for rater in ("cto", "logician"):
        put_sheet(lab, rater, "second")
        assert reveal(lab, rater, "--pass", "second").code == 0, rater
    res, data = lab.verify()
    assert (res.code, data["status"], data["violations"]) == (0, "complete", [])
    w = data["withdrawals"][0]
    assert (w["kept"], w["excluded"]) == ([{"pass": "first", "round": "main"}], [])
    doc = report_json(lab)
    assert doc["raters"] == {"first": ["cto", "logician", "redteam"], "second": ["cto", "logician"]}


def test_reveal_still_waits_for_the_others_but_no_longer_names_the_withdrawn_rater(lab: Lab) -> None:
    lab.start(THREE)
    lab.seal("cto")
    withdraw(lab, THREE)
    put_sheet(lab, "cto")
    before = lab.snapshot()
    refused = reveal(lab, "cto")
    assert refused.code == 1, refused.output
    assert "missing: logician (logician/unblinded/main)" in refused.output
    assert "redteam" not in refused.output
    assert lab.snapshot() == before
    res, data = lab.verify()
    assert (res.code, data["status"]) == (0, "pending")
    assert [p["rater"] for p in data["pending"]] == ["logician"]


def test_a_seal_made_after_the_withdrawal_counts_nowhere(lab: Lab) -> None:
    """The optional red team is withdrawn while the pass is complete without them, then seals
    anyway: nothing they seal after their withdrawal enters the study."""
    lab.start(PLAN)
    lab.seal("cto", (1, 2))
    lab.seal("logician", (1, 2))
    withdraw(lab, PLAN)
    lab.seal("redteam", (3, 3))
    for rater in ("cto", "logician", "redteam"):
        put_sheet(lab, rater)
        assert reveal(lab, rater).code == 0, rater
    res, data = lab.verify()
    assert (res.code, data["violations"]) == (0, [])
    w = data["withdrawals"][0]
    assert (w["excluded"], w["kept"]) == ([{"pass": "unblinded", "round": "main"}], [])
    assert report_json(lab)["raters"] == {"unblinded": ["cto", "logician"]}


def test_the_hook_accepts_the_withdrawal_commit_and_the_reveals_after_it(lab: Lab) -> None:
    lab.start(THREE)
    lab.install_hook()
    lab.seal("cto")
    lab.seal("logician")
    lab.write("aoven.yaml", THREE + WITHDRAW_REDTEAM)
    proc = lab.git_commit("lead", "withdraw redteam", "aoven.yaml")
    assert proc.returncode == 0, proc.stderr
    put_sheet(lab, "cto")
    proc = lab.git_commit("cto", "reveal cto", lab.score_path("cto"))
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------- the plan


@pytest.mark.parametrize(("entries", "line", "message"), [
    ("  - {rater: nobody, reason: gone, category: unforeseen}\n", 1, "withdrawals: unknown rater 'nobody'"),
    ("  - {rater: redteam, reason: gone, category: bored}\n", 1,
     "withdrawals/0/category: 'bored' is not one of"),
    ("  - {rater: redteam, reason: gone, category: error}\n"
     "  - {rater: redteam, reason: again, category: error}\n",
     2, "withdrawals: rater 'redteam' is withdrawn twice (also item 1)"),
    ("  - {rater: redteam, category: error}\n", 1, "withdrawals/0: 'reason' is a required property"),
])
def test_check_plan_names_the_key_and_line_of_a_bad_withdrawal(tmp_path: Path, entries: str, line: int,
                                                               message: str) -> None:
    plan = tmp_path / "aoven.yaml"
    plan.write_text(THREE + "withdrawals:\n" + entries, encoding="utf-8")
    before = plan.read_bytes()
    res = run_cli("check-plan", "--plan", str(plan), cwd=tmp_path)
    assert res.code == 2, res.output
    where = THREE.count("\n") + 1 + line
    assert f"aoven.yaml:{where}: {message}" in res.output
    assert "Traceback" not in res.output
    assert plan.read_bytes() == before


def test_withdrawals_may_not_be_locked(tmp_path: Path) -> None:
    plan = tmp_path / "aoven.yaml"
    locked = THREE.replace("locked: [study_dir,", "locked: [withdrawals, study_dir,")
    plan.write_text(locked, encoding="utf-8")
    res = run_cli("check-plan", "--plan", str(plan), cwd=tmp_path)
    assert res.code == 2
    assert "locked: withdrawals may not be locked" in res.output


def test_a_valid_withdrawal_is_in_the_model() -> None:
    plan = parse_plan((THREE + WITHDRAW_REDTEAM).encode())
    assert plan.withdrawal("redteam") is not None and plan.withdrawal("redteam").category == "unforeseen"
    assert [r.id for r in plan.waited_for] == ["cto", "logician"]
    assert [r.id for r in plan.required_raters] == ["cto", "logician", "redteam"]


# --------------------------------------------------------------------------- protocol deviations


def test_plan_edits_after_the_first_seal_are_protocol_events_and_descriptive_edits_apart(lab: Lab) -> None:
    """With `questions` and `retest_cap` not locked, rewording a question is a descriptive edit and
    raising the re-test cap a protocol event, each placed relative to the reveals."""
    plan = THREE.replace("dimensions, questions, passes,", "dimensions, passes,")
    assert plan != THREE
    lab.start(plan)
    lab.seal("cto")
    reworded = plan.replace('text: "First?"', 'text: "The first question?"')
    lab.file("lead", "aoven.yaml", reworded, "reword Q1")
    lab.seal("logician")
    lab.seal("redteam")
    put_sheet(lab, "cto")
    assert reveal(lab, "cto").code == 0
    edit = lab.file("lead", "aoven.yaml", reworded + "retest_cap: 2\n", "allow a second re-test")
    res, data = lab.verify()
    assert (res.code, data["violations"]) == (0, [])
    doc = report_json(lab)
    [event] = doc["protocol_deviations"]["events"]
    assert (event["kind"], event["commit"], event["after_reveal"]) == ("plan-edit", edit, ["unblinded"])
    assert event["what"] == "retest_cap: (absent) → 2"
    assert event["when"] == "after the reveal of pass unblinded"
    [text] = doc["protocol_deviations"]["descriptive"]
    assert (text["path"], text["when"]) == ("questions[Q1].text", "before any reveal")
    _, md = report(lab, "markdown")
    section = md.split("## Protocol deviations", 1)[1].split("\n## ", 1)[0]
    row = f"| plan edit | retest\\_cap: (absent) → 2 | `{edit[:7]}` | ⚠️ after the reveal of pass unblinded |"
    assert row in section
    assert "Descriptive text edited after the first seal (1 edit, no rule or score changed): " \
           "questions\\[Q1\\].text." in section


def test_a_study_without_deviations_says_so(lab: Lab) -> None:
    lab.start(THREE)
    for rater in ("cto", "logician", "redteam"):
        lab.seal(rater)
    doc = report_json(lab)
    assert doc["protocol_deviations"] == {"events": [], "descriptive": []}
    _, md = report(lab, "markdown")
    assert "No protocol deviation: no amendment, withdrawal, forced reveal, excluded rater or plan edit." \
        in md


def test_descriptive_departures_from_the_defaults_are_listed_apart() -> None:
    """Rewording every question of the default plan is no change of protocol: the deviations
    carry `descriptive`, and the protocol list stays empty."""
    text = DEFAULT_PLAN_TEMPLATE.read_text(encoding="utf-8")
    reworded = text.replace('text: "', 'text: "Reworded: ')
    assert reworded != text
    found = deviations(parse_plan(reworded.encode()))
    assert found and all(d.as_dict()["descriptive"] for d in found)
    doc = {"deviations": [d.as_dict() for d in found]}
    lines = provenance.deviations(doc) or []
    assert provenance.deviation_summary(doc) is None
    line = provenance.descriptive_defaults(lines)
    assert line is not None
    assert line.startswith(f"Descriptive text differs from the defaults in {len(found)} places: ")
    assert provenance.deviations_intro(0, len(found)).startswith("The plan keeps the protocol")
