"""One reading of a study (docs/design.md): every command reads score and reconciliation files
through `validation.read_study`, with the blind keys of the same source, so no command can pair a
blind pass's sheets with keys from elsewhere or none (the committed report once did, and a
reconciled blind pass stayed NOT-READY for good: tests/test_blind_report_committed.py)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "aoven_git"
#: reading one file on its own (a candidate score file for `seal`, a re-score for `amend import`)
SINGLE_FILE = {"sealing.py", "commands/amend.py", "scoring/content.py"}


def test_commands_read_a_study_only_through_read_study() -> None:
    """`validate_sources` and `mapped_back` are the building blocks of `read_study`: outside
    validation.py they are used only to check one file on its own."""
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "validation.py":
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"\bmapped_back\(", text) or (re.search(r"\bvalidate_sources\(", text)
                                                   and rel not in SINGLE_FILE):
            offenders.append(rel)
    assert offenders == []
    for rel in ("commands/validate.py", "commands/disagreements.py", "commands/hook.py",
                "commands/report.py"):
        assert "read_study(" in (ROOT / rel).read_text(encoding="utf-8"), rel
