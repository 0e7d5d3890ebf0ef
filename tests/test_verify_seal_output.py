"""What `aoven-git verify-seal` prints about optional raters and reconciliation rows, on real
histories: an optional rater's violation is a warning that excludes that rater (exit 0), a row
someone else wrote is a warning at its file and line, and a required rater's violation stays an
error (exit 1) listed before the warnings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.sealing.conftest import Study

RECONCILIATION = ("---\npass: unblinded\nround: main\n---\n\n| Cell | Rater | Justification | Consensus |\n"
                  "|---|---|---|---|\n")
CTO_ROW = '| Q1/A/D1 | cto | "Response A" states it plainly | 2 |\n'
LOGICIAN_ROW = '| Q1/A/D1 | logician | "Response A" says so | 2 |\n'


def late_optional_rater(tmp: Path) -> Study:
    """cto and logician seal and reveal; the optional redteam commits plaintext afterwards
    (visible-at-seal); cto writes their row, the lead writes logician's."""
    study = Study(tmp / "repo")
    study.start()
    study.digest_seal("cto", (1, 2))
    study.digest_seal("logician", (2, 2))
    study.reveal("cto")
    study.reveal("logician")
    study.content_seal("redteam")
    study.write("study/reconciliation.md", RECONCILIATION + CTO_ROW)
    study.by("cto", "cto's row", "study/reconciliation.md")
    study.write("study/reconciliation.md", RECONCILIATION + CTO_ROW + LOGICIAN_ROW)
    study.by("lead", "the lead writes logician's row", "study/reconciliation.md")
    return study


@pytest.fixture
def study(tmp_path: Path) -> Study:
    return late_optional_rater(tmp_path)


def test_json_has_the_exclusion_and_the_row(study: Study) -> None:
    res = run_cli("verify-seal", "--format", "json", cwd=study.path)
    assert res.code == 0, res.output
    data = json.loads(res.out)
    assert data["ok"] is True and data["status"] == "complete"
    assert data["excluded_raters"] == [{"rater": "redteam", "codes": ["visible-at-seal"]}]
    (row,) = data["unattributed_rows"]
    assert (row["path"], row["line"], row["rater"], row["author"]) == (
        "study/reconciliation.md", 9, "logician", "lead@example.org")
    events = [(e["event"], e["rater"], e["author"]) for e in data["timeline"]]
    assert events[-2:] == [("reconciliation", None, "cto@example.org"),
                           ("reconciliation", None, "lead@example.org")]


def test_text_warns_and_exits_zero(study: Study) -> None:
    res = run_cli("verify-seal", cwd=study.path)
    assert res.code == 0, res.output
    lines = res.out.splitlines()
    assert lines[0].endswith(": complete")
    assert any(ln.startswith("  warning  visible-at-seal [redteam] in ") for ln in lines), res.out
    assert not any(ln.lstrip().startswith("error") for ln in lines)
    assert ("  excluded redteam: optional rater, visible-at-seal: their sheets are left out of agreement and "
            "consensus (the run does not fail)") in lines
    (row,) = [ln for ln in lines if "unattributed-row" in ln]
    assert row.startswith("  warning  unattributed-row study/reconciliation.md:9: Q1/A/D1 row for logician "
                          "ignored: not logician's own statement: logician never wrote it")
    assert row.endswith("the rater must write and commit their own row")
    assert lines[-2:] == ["1 violation(s) by optional raters: redteam excluded, the verdict is not blocked",
                          "1 reconciliation row(s) ignored: not written by their rater"]
    assert "the sealing promise does not hold" not in res.out


def test_github_annotates_warnings_at_file_and_line(study: Study) -> None:
    res = run_cli("verify-seal", "--format", "github", cwd=study.path)
    assert res.code == 0, res.output
    lines = res.out.splitlines()
    assert not [ln for ln in lines if ln.startswith("::error")]
    assert lines[0].startswith("::warning file=study/scores_redteam.md,"
                               "title=verify-seal%3A visible-at-seal::")
    assert lines[0].endswith("; optional rater redteam is excluded from agreement and consensus")
    assert lines[1].startswith("::warning file=study/reconciliation.md,line=9,"
                               "title=verify-seal%3A unattributed-row::Q1/A/D1 row for logician ignored")
    assert lines[-1] == "verify-seal: complete (redteam excluded)"


def test_a_required_raters_violation_is_an_error_listed_first(study: Study) -> None:
    study.write("study/scores_cto.md", "changed after the seal\n")
    study.by("cto", "cto edits a sealed file", "study/scores_cto.md")
    res = run_cli("verify-seal", "--format", "github", cwd=study.path)
    assert res.code == 1, res.output
    levels = [ln.split(" ", 1)[0] for ln in res.out.splitlines() if ln.startswith("::")]
    assert levels[0] == "::error" and "::warning" in levels
    assert levels.index("::warning") > max(i for i, lv in enumerate(levels) if lv == "::error")
    text = run_cli("verify-seal", cwd=study.path)
    assert text.code == 1
    assert "1 violation(s) by optional raters: redteam excluded, the verdict is not blocked" in text.out
    assert any(ln.endswith("violation(s): the sealing promise does not hold") for ln in text.out.splitlines())


def test_report_shows_the_same_history(study: Study) -> None:
    """The report of the same revision: redteam excluded, the row ignored, the timeline's authors."""
    res = run_cli("report", "--bootstrap", "0", cwd=study.path)
    assert res.code == 0, res.output
    text = res.out
    assert "**Excluded raters:** `redteam` (visible-at-seal)" in text
    assert "| `redteam` | Red Team | optional | ⛔ excluded |" in text
    assert "| `study/reconciliation.md:9` | `Q1/A/D1` | `logician` | lead@example.org |" in text
    assert "| `Q1/A/D1` | ❗ missing: logician | `cto` | 2 |" in text
    assert "✍️ reconciliation rows | — | `unblinded` | lead@example.org |" in text
