"""Review: a lead who wants to write everyone's consensus (found by reading sealing.attribute_rows
and attribution.py when rows were attributed by `git blame`; today `sealing._versions` reads each
row's statements from the history).

A reconciliation row counts only when `git blame -M` at the verified revision names a commit
authored (and, with `require_signed`, signed) by the row's rater. Blame answers "which commit last
introduced this exact line, following the line back through merges and file renames"; that is
not "which statement is this rater's latest". The attacks below make a rater's *withdrawn* or
*other* statement count as their consensus without forging anything, signatures included:

* an evil merge re-instates a row the rater had since changed (blame passes the line to the old
  branch, so to the rater's old commit);
* the rater's rows of ANOTHER pass's reconciliation file become this pass's rows by a rename
  (blame follows renames);
* a rater's row is simply deleted by someone else: nothing reports it.

Each test asserts what the consensus rules (README, "Reconciliation"; docs/design.md "Attributed
consensus") should give: the row is not the rater's own, or the removal is reported. Honest
shapes that must keep attribution (rows sorted by the lead, a rater's branch merged, an alias
file renamed) close the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.adversarial.conftest import (
    PLAN,
    RECONCILIATION_DRAFT,
    TWO_PASS_PLAN,
    Lab,
    expect,
    needs_ssh,
    sheet_text,
    signed_lab,
)
from tests.sealing.conftest import CTO, LOGICIAN, plan

CELL = "Q1/A/D1"


def row(rater: str, consensus: int | str, cell: str = CELL, quote: str = "A response") -> str:
    return f'| {cell} | {rater} | The answer opens with "{quote}" and cites nothing | {consensus} |\n'


def revealed(lab: Lab, plan: str = PLAN, keys: dict[str, Path] | None = None) -> None:
    """Both raters sealed and revealed; they disagree by 3 on D1 (every D1 cell is flagged)."""
    if keys is None:
        lab.start(plan)
    for rater, scores in (("cto", (0, 2)), ("logician", (3, 2))):
        lab.seal(rater, scores, sign_key=keys[rater] if keys else None)
    for rater in ("cto", "logician"):
        lab.reveal(rater, sign_key=keys[rater] if keys else None)


def rows_at(data: dict, path: str = "study/reconciliation.md") -> dict[str, dict]:
    """verify-seal's attribution of each row of `path`, by rater (one row per rater here)."""
    return {r["rater"]: r for r in data["reconciliation_rows"] if r["path"] == path}


def cell_state(lab: Lab, cell: str = CELL, pass_id: str = "unblinded") -> dict:
    res = lab.cli("lead", "report", "--format", "json", "--bootstrap", "0")
    doc = json.loads(res.out)
    return next(c for c in doc["reconciliation"]["cells"] if c["cell"] == cell and c["pass"] == pass_id)


def reinstate_by_merge(lab: Lab, sign: dict[str, Path] | None = None) -> None:
    """cto states 2, then withdraws it (`contested`); the lead merges a stale branch and resolves
    the file with cto's withdrawn line."""
    kw = (lambda r: {"sign_key": sign[r]}) if sign else (lambda r: {})
    lab.file("cto", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2), "cto: 2", **kw("cto"))
    lab.branch("stale")
    lab.file("lead", "NOTES.md", "lead's notes\n", "notes")  # anything, so the merge is a real one
    lab.checkout("main")
    lab.file("cto", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", "contested"),
             "cto: on second thought, contested", **kw("cto"))
    lab.file("logician", "study/reconciliation.md",
             RECONCILIATION_DRAFT + row("cto", "contested") + row("logician", 2), "logician: 2",
             **kw("logician"))
    lab.git("merge", "-q", "--no-ff", "--no-commit", "stale")
    lab.write("study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2) + row("logician", 2))
    lab.put("lead", "merge stale", "study/reconciliation.md", no_verify=True)
    assert len(lab.git("rev-list", "--parents", "-n1", "HEAD").split()) == 3


def test_withdrawn_row_reinstated_by_an_evil_merge(lab: Lab) -> None:
    """cto's current statement is `contested`; after the lead's merge, the report counts cto's
    withdrawn `2` as cto's own, so the cell is unanimous 2."""
    revealed(lab)
    reinstate_by_merge(lab)
    data = expect(lab, [])
    assert rows_at(data)["cto"]["attributed"] is False, rows_at(data)["cto"]
    assert cell_state(lab)["state"] != "unanimous"


@needs_ssh
def test_withdrawn_row_reinstated_by_an_evil_merge_with_require_signed(
        lab: Lab, keys: dict[str, Path]) -> None:
    """The same with every rater commit ssh-signed and `require_signed`: the lead signs nothing,
    forges nothing, and still sets cto's consensus (blame names cto's own signed commit)."""
    signed_lab(lab, keys)
    revealed(lab, keys=keys)
    reinstate_by_merge(lab, sign=keys)
    data = expect(lab, [])
    assert rows_at(data)["logician"]["attributed"] is True  # the signatures do verify
    assert rows_at(data)["cto"]["attributed"] is False, rows_at(data)["cto"]


def test_rows_of_another_pass_renamed_into_this_pass(lab: Lab) -> None:
    """cto says `contested` for Q1/B/D1 of the unblinded pass and 2 for the same cell of the blinded
    pass. The lead deletes `reconciliation.md`, then renames `reconciliation_blinded.md` to it:
    blame follows the rename, so cto's blinded-pass statement becomes his unblinded consensus."""
    lab.start(TWO_PASS_PLAN)
    for rater, scores in (("cto", (0, 2)), ("logician", (3, 2))):
        lab.seal(rater, scores)
        lab.seal(rater, scores, pass_id="blinded")
    for rater in ("cto", "logician"):
        lab.reveal(rater)
        lab.reveal(rater, pass_id="blinded")
    lab.file("cto", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", "contested", "Q1/B/D1"))
    lab.file("cto", "study/reconciliation_blinded.md",
             RECONCILIATION_DRAFT + row("cto", 2, "Q1/B/D1", "A stripped response"))
    lab.git("rm", "-q", "study/reconciliation.md")
    lab.put("lead", "drop the unblinded reconciliation", no_verify=True)
    lab.git("mv", "study/reconciliation_blinded.md", "study/reconciliation.md")
    lab.put("lead", "tidy file names", no_verify=True)
    data = expect(lab, [])
    assert rows_at(data)["cto"]["attributed"] is False, rows_at(data)["cto"]


def test_raters_row_deleted_by_the_lead_is_not_reported(lab: Lab) -> None:
    """Deleting a row leaves no line to blame: cto's `contested` disappears and nothing says who
    removed it (the cell silently becomes "missing cto"; for an unflagged cell the `unflagged`
    rule then decides instead of the raters)."""
    revealed(lab)
    lab.file("cto", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", "contested"))
    lab.file("logician", "study/reconciliation.md",
             RECONCILIATION_DRAFT + row("cto", "contested") + row("logician", 2))
    lab.file("lead", "study/reconciliation.md", RECONCILIATION_DRAFT + row("logician", 2),
             "tidy the reconciliation", no_verify=True)
    data = expect(lab, [])
    removed = [u for u in data["unattributed_rows"] if u["rater"] == "cto" and u["cell"] == CELL]
    assert removed, data["unattributed_rows"]


def test_rater_without_emails_is_refused_before_the_first_seal(lab: Lab) -> None:
    """HONEST trap: the shipped template lists `redteam` with no e-mails ("any author"). Such a
    rater may seal and reveal, but `attribution.speaks_for` can never attribute their rows ("no
    e-mails in the plan"), so every flagged cell they took part in stays without consensus: the
    study is NOT-READY for good, because `raters` is frozen by the first seal. The trap must be
    refused while it can still be fixed: `seal` for a rater without e-mails."""
    no_email = plan(raters=[CTO, LOGICIAN, "{id: redteam, name: Red Team, required: false}"])
    assert no_email != PLAN
    lab.start(no_email)
    lab.write(lab.score_path("redteam"), sheet_text("redteam"))
    before = lab.snapshot()
    res = lab.cli("redteam", "seal", "--rater", "redteam")
    assert res.code == 1, res.output
    assert "emails" in res.output
    assert lab.snapshot() == before


# --------------------------------------------------------------------------- honest shapes


def test_rows_sorted_by_the_lead_keep_their_authors(lab: Lab) -> None:
    """HONEST: the lead reorders rows (moves lines only): `-M` keeps each row its rater's."""
    revealed(lab)
    lab.file("cto", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2))
    lab.file("logician", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2) + row("logician", 2))
    lab.file("lead", "study/reconciliation.md", RECONCILIATION_DRAFT + row("logician", 2) + row("cto", 2),
             "sort rows", no_verify=True)
    data = expect(lab, [])
    assert {r: v["attributed"] for r, v in rows_at(data).items()} == {"cto": True, "logician": True}
    assert cell_state(lab)["state"] == "unanimous"


def test_raters_reconciliation_branch_merged_by_the_lead(lab: Lab) -> None:
    """HONEST: logician writes their row on a branch; the lead merges it with a merge commit."""
    revealed(lab)
    lab.file("cto", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2))
    lab.branch("logician-rows")
    lab.file("logician", "study/reconciliation.md", RECONCILIATION_DRAFT + row("cto", 2) + row("logician", 2))
    lab.checkout("main")
    lab.file("lead", "NOTES.md", "x\n")
    lab.land("logician-rows")
    data = expect(lab, [])
    assert {r: v["attributed"] for r, v in rows_at(data).items()} == {"cto": True, "logician": True}


def test_reconciliation_renamed_to_an_alias_of_the_same_pass(lab: Lab) -> None:
    """HONEST: `reconciliation_main.md` renamed to `reconciliation.md` (the same pass and round):
    the rows are still their raters' (a fix for the rename attack must keep this)."""
    revealed(lab)
    lab.file("cto", "study/reconciliation_main.md", RECONCILIATION_DRAFT + row("cto", 2))
    lab.file("logician", "study/reconciliation_main.md",
             RECONCILIATION_DRAFT + row("cto", 2) + row("logician", 2))
    lab.git("mv", "study/reconciliation_main.md", "study/reconciliation.md")
    lab.put("lead", "canonical name", no_verify=True)
    data = expect(lab, [])
    assert {r: v["attributed"] for r, v in rows_at(data).items()} == {"cto": True, "logician": True}


def test_short_rows_sorted_by_the_lead_keep_their_authors(lab: Lab) -> None:
    """HONEST: the same sort with short justifications (a short quote is a fine justification):
    `git blame -M` only recognises a moved line of at least 20 alphanumeric characters, so a
    reordered `| Q1/A/D1 | cto | "A response" | 2 |` becomes the lead's and stops counting."""
    revealed(lab)
    short = {r: f'| {CELL} | {r} | "A response" | 2 |\n' for r in ("cto", "logician")}
    lab.file("cto", "study/reconciliation.md", RECONCILIATION_DRAFT + short["cto"])
    lab.file("logician", "study/reconciliation.md", RECONCILIATION_DRAFT + short["cto"] + short["logician"])
    lab.file("lead", "study/reconciliation.md", RECONCILIATION_DRAFT + short["logician"] + short["cto"],
             "sort rows", no_verify=True)
    data = expect(lab, [])
    assert {r: v["attributed"] for r, v in rows_at(data).items()} == {"cto": True, "logician": True}
