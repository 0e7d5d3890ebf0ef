"""A reconciliation merged by hand: the hook and verify-seal apply one attribution rule
(docs/sealing.md, "Attributed consensus"; `attribution.written`).

cto and logician each start `reconciliation.md` on their own branch from the same base (both run
`disagreements --write`); the lead merges both, the second merge conflicts, and the lead resolves
it by hand. Rows a rater wrote in their own commit and the merge keeps as they were count: the
hook does not warn about them and verify-seal attributes them. A row the lead re-types with other
words or another value is the lead's: the hook warns `unattributed-row` for it, verify-seal reports
it as `unattributed-row` and the report does not count it.
"""

from __future__ import annotations

import pytest

from tests.adversarial.conftest import Lab, expect
from tests.adversarial.test_honest_reconciliation import (
    RECONCILIATION,
    cells,
    conflicting_branches,
    report,
    resolve,
    validate,
)

pytestmark = pytest.mark.slow

def test_rows_kept_as_their_raters_wrote_them_count_for_the_hook_and_verify_seal(lab: Lab) -> None:
    cto, log = conflicting_branches(lab)
    rows = [ln for ln in log.splitlines() if "| logician |" in ln]
    assert rows
    proc = resolve(lab, cto, rows)
    assert proc.returncode == 0, proc.stderr
    assert "unattributed-row" not in proc.stderr and "will be ignored" not in proc.stderr, proc.stderr
    assert len(lab.git("rev-list", "--parents", "-n1", "HEAD").split()) == 3
    data = expect(lab, [])
    assert data["unattributed_rows"] == []
    assert {(r["rater"], r["attributed"]) for r in data["reconciliation_rows"]} == {
        ("cto", True), ("logician", True)}
    assert validate(lab) == (0, [])
    assert set(cells(report(lab), "unblinded").values()) == {"unanimous"}


def test_a_row_retyped_by_the_merger_is_the_mergers_for_the_hook_and_verify_seal(lab: Lab) -> None:
    """The lead re-types logician's first row with another value: the hook warns for exactly that
    row, verify-seal reports it as `unattributed-row` with the lead as author, the cell has no
    consensus; logician's rows kept as written stay attributed."""
    cto, log = conflicting_branches(lab)
    rows = [ln for ln in log.splitlines() if "| logician |" in ln]
    retyped = rows[0].replace("| 2 |", "| 3 |")
    assert retyped != rows[0]
    proc = resolve(lab, cto, [retyped, *rows[1:]])
    assert proc.returncode == 0, proc.stderr  # a warning, not a refusal
    cell = retyped.split("|")[1].strip()
    warned = [ln for ln in proc.stderr.splitlines() if "unattributed-row" in ln]
    assert len(warned) == 1 and f"the row of logician for {cell}" in warned[0], proc.stderr
    assert "lead@example.org" in warned[0]
    data = lab.verify()[1]
    flagged = [(u["cell"], u["rater"], u["author"]) for u in data["unattributed_rows"]]
    assert flagged == [(cell, "logician", "lead@example.org")], data["unattributed_rows"]
    attributed = {(r["cell"], r["rater"]): r["attributed"] for r in data["reconciliation_rows"]}
    assert attributed[(cell, "logician")] is False
    assert sum(1 for (_, rater), ok in attributed.items() if rater == "logician" and ok) == len(rows) - 1
    assert cells(report(lab), "unblinded")[cell] == "missing"


def test_validate_during_the_merge_agrees_with_the_hook(lab: Lab) -> None:
    """Before the lead commits, `validate` (which warns about rows you would write for another
    rater) reads the merge's parents too: no warning for logician's rows kept as written."""
    cto, log = conflicting_branches(lab)
    rows = [ln for ln in log.splitlines() if "| logician |" in ln]
    (lab.path / RECONCILIATION).write_text(cto.rstrip("\n") + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    res = lab.cli("lead", "validate", RECONCILIATION)
    assert res.code == 0, res.output
    assert "unattributed-row" not in res.out, res.out
    (lab.path / RECONCILIATION).write_text(cto.rstrip("\n") + "\n" + rows[0].replace("| 2 |", "| 0 |") + "\n"
                                           + "\n".join(rows[1:]) + "\n", encoding="utf-8")
    res = lab.cli("lead", "validate", RECONCILIATION)
    assert res.out.count("unattributed-row") == 1, res.out
