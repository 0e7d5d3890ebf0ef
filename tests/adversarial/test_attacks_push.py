"""Attacks on `--push` (docs/workflow.md, "A team without GitHub"): a pull that cannot complete must
leave the clone exactly as it was — commits, work tree and index. A real bare remote and the
raters' own clones (the fixtures of tests/test_push.py)."""

from __future__ import annotations

import pytest

from tests.sealing.conftest import Study
from tests.test_push import Team, as_, revealed, team  # noqa: F401 (fixtures)

REC = "study/reconciliation.md"


def clone_state(s: Study) -> tuple[str, str, str, bytes]:
    """HEAD, the work tree's status, the index and the reconciliation file's bytes."""
    return (s.git("rev-parse", "HEAD"), s.git("status", "--porcelain", "--untracked-files=all"),
            s.git("diff", "--cached", "--name-status"), (s.path / REC).read_bytes())


def test_a_failed_pull_leaves_a_staged_new_reconciliation_staged(revealed: Team,  # noqa: F811
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The logician wrote and `git add`ed their rows (workflow.md), and has an unpushed commit that
    conflicts with the remote: `disagreements --write --push` refuses, and the rows are still
    written and still staged, as before the command."""
    cto, logician = revealed.cto, revealed.logician
    assert as_(monkeypatch, "logician", logician, "disagreements", "--write").code == 0
    logician.git("add", REC)
    logician.write("notes.md", "meeting: friday\n")
    logician.git("commit", "-q", "-m", "notes: friday", "--", "notes.md")
    cto.write("notes.md", "meeting: tuesday\n")
    cto.by("cto", "notes: tuesday", "notes.md")
    cto.git("push", "-q")
    before = clone_state(logician)
    res = as_(monkeypatch, "logician", logician, "disagreements", "--write", "--push")
    assert res.code == 1 and "Nothing was committed" in res.err, res.output
    assert clone_state(logician) == before
