"""Review 2: attribution of reconciliation rows by statements (attribution.py,
sealing.attribute_rows) and the command that writes rows (`disagreements --write`).

Each test tells one history and asserts whose statement each row is, and what the report makes
of the cell. Attacks: rows moved from an amendment's reconciliation into the study's, a row whose
rater column the lead edits, a rater's withdrawal reverted by the lead (all caught today), and a
rater's newer statement written into a second accepted name of the same reconciliation (shadowed
by his older one: a hole). Honest shapes: the lead re-pads a table, a conflict resolved by the
rater's own newer row, and `disagreements --write` when the team's file uses an accepted alias
name (it starts a second file instead: the setup of the shadowing hole).
"""

from __future__ import annotations

import json

from tests.adversarial.conftest import PLAN, RECONCILIATION_DRAFT, Lab, expect
from tests.adversarial.test_attacks_blame_attribution import cell_state, revealed, row, rows_at

AMENDMENT = ("{id: d1-ruling, title: Ruling, rationale: the anchors were read two ways, "
             "dimensions: [D1], conditions: [A]}")
FOLDER = "study/amendments/d1-ruling"


def attributed(data: dict, path: str = "study/reconciliation.md") -> dict[str, bool]:
    return {r: v["attributed"] for r, v in rows_at(data, path).items()}


def test_rows_moved_from_the_amendment_reconciliation_into_the_study(lab: Lab) -> None:
    """cto says `contested` in the study's reconciliation; under the amendment's ruling cto states
    2 for the same cell in the amendment's reconciliation. The lead copies both raters' amendment
    rows over the study's: a statement about re-scores is not cto's consensus on his sealed
    score, so the study's cell must not become unanimous."""
    revealed(lab, PLAN + "amendments:\n  - " + AMENDMENT + "\n")
    lab.file("cto", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", "contested"))
    lab.file("logician", "study/reconciliation.md",
             RECONCILIATION_DRAFT + row("cto", "contested") + row("logician", 2))
    amended = RECONCILIATION_DRAFT + row("cto", 2) + row("logician", 2)
    lab.file("cto", f"{FOLDER}/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2))
    lab.file("logician", f"{FOLDER}/reconciliation.md", amended)
    lab.file("lead", "study/reconciliation.md", amended, "align the study with the ruling", no_verify=True)
    res, data = lab.verify()
    assert "Traceback" not in res.output, res.output
    assert attributed(data)["cto"] is False, rows_at(data)
    assert cell_state(lab)["state"] != "unanimous"


def test_rater_column_edited_by_the_lead(lab: Lab) -> None:
    """logician states 2; the lead relabels logician's row as cto's (cto never wrote a row): the
    relabelled row is nobody's statement, so the cell lacks cto's."""
    revealed(lab)
    lab.file("logician", "study/reconciliation.md", RECONCILIATION_DRAFT + row("logician", 2))
    lab.file("lead", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2) + row("logician", 2),
             "fill in cto", no_verify=True)
    data = expect(lab, [])
    assert attributed(data) == {"cto": False, "logician": True}
    assert cell_state(lab)["state"] != "unanimous"


def test_raters_withdrawal_reverted_by_the_lead(lab: Lab) -> None:
    """cto states 2, then withdraws it (`contested`); the lead `git revert`s the withdrawal: the
    file is back to cto's old bytes, but cto's latest statement is `contested`."""
    revealed(lab)
    lab.file("cto", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2))
    lab.file("logician", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2) + row("logician", 2))
    withdrawal = lab.file("cto", "study/reconciliation.md",
                          RECONCILIATION_DRAFT + row("cto", "contested") + row("logician", 2))
    lab.git("revert", "--no-edit", withdrawal, author=("Lead", "lead@example.org"))
    data = expect(lab, [])
    assert attributed(data) == {"cto": False, "logician": True}
    assert cell_state(lab)["state"] != "unanimous"


def test_newer_statement_in_a_second_accepted_file_is_shadowed_by_the_older_one(lab: Lab) -> None:
    """cto states 2 in `reconciliation.md`; later he withdraws (`contested`) in
    `reconciliation_main.md`, an accepted name of the same sheet (say, the file the lead's
    notes point at). Both files stay. `sealing._versions` merges the two files' statements with
    the first path winning, so cto's withdrawal is no change at all: his stale 2 counts as his
    latest statement and the cell is unanimous 2 although cto's newest word is `contested`."""
    revealed(lab)
    lab.file("cto", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2))
    lab.file("logician", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2) + row("logician", 2))
    lab.file("cto", "study/reconciliation_main.md", RECONCILIATION_DRAFT + row("cto", "contested"),
             "cto: on second thought, contested")
    res, data = lab.verify()
    assert "Traceback" not in res.output, res.output
    duplicate = [v for v in data["violations"] if v["code"] == "duplicate-sheet"]
    assert duplicate or attributed(data)["cto"] is False, (data["violations"], rows_at(data))
    assert duplicate or cell_state(lab)["state"] != "unanimous"


# --------------------------------------------------------------------------- honest shapes


def test_lead_repads_the_table_without_touching_a_statement(lab: Lab) -> None:
    """HONEST: the lead re-aligns the columns (extra spaces around every cell): no statement
    changes, both rows stay their raters'."""
    revealed(lab)
    lab.file("cto", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2))
    lab.file("logician", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2) + row("logician", 2))
    padded = "".join("|  " + "  |  ".join(c.strip() for c in line.strip().strip("|").split("|")) + "  |\n"
                     for line in (row("cto", 2) + row("logician", 2)).splitlines())
    lab.file("lead", "study/reconciliation.md", RECONCILIATION_DRAFT + padded, "align", no_verify=True)
    data = expect(lab, [])
    assert attributed(data) == {"cto": True, "logician": True}
    assert cell_state(lab)["state"] == "unanimous"


def test_conflict_resolved_with_the_raters_own_newer_row(lab: Lab) -> None:
    """HONEST: cto changes his row on a branch while logician adds hers on main; the merge
    conflicts and the lead resolves it by keeping both raters' newest rows."""
    revealed(lab)
    lab.file("cto", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", "contested"))
    lab.branch("cto-rows")
    lab.file("cto", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2))
    lab.checkout("main")
    lab.file("logician", "study/reconciliation.md",
             RECONCILIATION_DRAFT + row("cto", "contested") + row("logician", 2))
    lab.git("merge", "-q", "--no-ff", "--no-commit", "cto-rows", check=False)
    lab.write("study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2) + row("logician", 2))
    lab.put("lead", "merge cto's rows", "study/reconciliation.md", no_verify=True)
    data = expect(lab, [])
    assert attributed(data) == {"cto": True, "logician": True}
    assert cell_state(lab)["state"] == "unanimous"


def test_disagreements_write_extends_the_alias_the_team_uses(lab: Lab) -> None:
    """HONEST: the team's reconciliation file is `reconciliation_main.md` (an accepted name).
    logician's `disagreements --write` must add her rows there, not start a second file for the
    same pass beside it (two files for one reconciliation sheet)."""
    revealed(lab)
    lab.file("cto", "study/reconciliation_main.md", RECONCILIATION_DRAFT + row("cto", 2))
    res = lab.cli("logician", "disagreements", "--write", "--rater", "logician")
    assert res.code == 0, res.output
    assert not (lab.path / "study/reconciliation.md").exists(), res.output
    assert "| logician |" in (lab.path / "study/reconciliation_main.md").read_text()


def test_report_counts_rows_of_both_alias_files(lab: Lab) -> None:
    """What two files for one reconciliation sheet give today: cto's rows in
    `reconciliation_main.md`, logician's in `reconciliation.md` (as `disagreements --write`
    makes them). Either one file is refused as a duplicate, or both raters' rows count; the
    cell must not silently lose a rater's statement."""
    revealed(lab)
    lab.file("cto", "study/reconciliation_main.md", RECONCILIATION_DRAFT + row("cto", 2))
    lab.file("logician", "study/reconciliation.md", RECONCILIATION_DRAFT + row("logician", 2))
    res, data = lab.verify()
    assert "Traceback" not in res.output, res.output
    doc = json.loads(lab.cli("lead", "report", "--format", "json", "--bootstrap", "0").out)
    duplicate = any(v["code"] == "duplicate-sheet" for v in data["violations"])
    assert duplicate or cell_state(lab)["state"] == "unanimous", (data["violations"], doc["verdict"])


def test_disagreements_write_refuses_two_files_for_one_reconciliation(lab: Lab) -> None:
    """Two accepted files already side by side: `--write` cannot know which holds the team's
    rows, so it refuses, names both, and writes nothing; verify-seal reports the second file."""
    revealed(lab)
    lab.file("cto", "study/reconciliation_main.md", RECONCILIATION_DRAFT + row("cto", 2))
    lab.file("logician", "study/reconciliation.md", RECONCILIATION_DRAFT + row("logician", 2))
    files = ("study/reconciliation.md", "study/reconciliation_main.md")
    before = {p: (lab.path / p).read_bytes() for p in files}
    res = lab.cli("logician", "disagreements", "--write", "--rater", "logician")
    assert res.code == 1
    assert "study/reconciliation.md and study/reconciliation_main.md" in res.err
    assert {p: (lab.path / p).read_bytes() for p in before} == before
    _, data = lab.verify()
    dup = [v for v in data["violations"] if v["code"] == "duplicate-sheet"]
    assert [(v["rater"], v["path"]) for v in dup] == [(None, "study/reconciliation_main.md")]
