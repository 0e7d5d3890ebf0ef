"""`status` after a required rater's withdrawal (docs/plan.md, "Withdrawals"): the rows of flagged
cells are due from the raters who stayed, without waiting for the withdrawn rater's sheet, as the
report already reads it. Found by the four-clone walkthrough (tests/test_four_clone_study.py),
where status said "nothing is yours to do now" while the report waited for those rows."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.sealing.conftest import PLAN, Study

WITHDRAW = "withdrawals:\n  - {rater: logician, reason: left the team, category: unforeseen}\n"


def status_of(study: Study, email: str) -> dict:
    study.git("config", "user.email", email)
    res = run_cli("status", "--format", "json", cwd=study.path)
    assert res.code == 0, res.output
    return json.loads(res.out)


def test_rows_are_due_from_those_who_stayed_after_a_withdrawal(tmp_path: Path) -> None:
    study = Study(tmp_path / "repo")
    study.start()
    study.digest_seal("cto", (0, 1))
    study.digest_seal("redteam", (3, 1))  # D1 differs by 3: flagged in every item
    study.write("aoven.yaml", PLAN + WITHDRAW)
    study.by("lead", "withdraw logician", "aoven.yaml")
    study.reveal("cto")
    study.reveal("redteam")

    cto = status_of(study, "cto@example.org")
    [due] = cto["reconciliation"]
    assert (due["pass"], due["flagged"]) == ("unblinded", 4)
    assert {row["rater"] for row in due["rows_due"]} == {"cto", "redteam"}  # not the withdrawn logician
    assert cto["next"]["command"] == "aoven-git disagreements --pass unblinded --write --rater cto"
    report = run_cli("report", "--format", "json", "--bootstrap", "0", cwd=study.path)
    assert any("no consensus" in reason for reason in json.loads(report.out)["not_ready"])


def test_nobody_is_told_to_wait_for_or_write_a_withdrawn_raters_sheets(tmp_path: Path) -> None:
    """Logician withdrew before sealing: the lead's steps no longer wait for them, and their own
    status names no sheet to write."""
    study = Study(tmp_path / "repo")
    study.start()
    study.digest_seal("cto", (1, 1))
    before = status_of(study, "lead@example.org")
    assert any(s["why"].startswith("waiting for logician:") for s in before["steps"])  # control
    study.write("aoven.yaml", PLAN + WITHDRAW)
    study.by("lead", "withdraw logician", "aoven.yaml")

    lead = status_of(study, "lead@example.org")
    assert not any("logician" in s["why"] for s in lead["steps"]), lead["steps"]
    assert any(s["why"].startswith("waiting for cto:") for s in lead["steps"])
    logician = status_of(study, "logician@example.org")
    assert not any(s["command"] and "logician" in s["command"] for s in logician["steps"]), logician["steps"]
