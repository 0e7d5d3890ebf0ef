"""The NOT-READY reason for uncommitted study files, as a rater sees it in `report` and `status`
while scoring: a score sheet is sealed and revealed, never committed by hand, so the reason must
not tell the rater to commit it (found by the four-clone walkthrough, tests/test_four_clone_study.py).
Other study files still get "commit them"."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.sealing.conftest import Study, score_text


def dirty_reason(study: Study) -> str:
    res = run_cli("report", "--format", "json", "--bootstrap", "0", cwd=study.path)
    assert res.code == 0, res.output
    [reason] = [r for r in json.loads(res.out)["not_ready"] if r.startswith("uncommitted changes")]
    return reason


def test_an_unsealed_sheet_is_to_be_sealed_not_committed(tmp_path: Path) -> None:
    study = Study(tmp_path / "repo")
    study.start()
    study.write(study.score_path("cto"), score_text("cto"))
    reason = dirty_reason(study)
    assert "study/scores_cto.md (??)" in reason
    assert "seal score sheets (`aoven-git seal`; `aoven-git reveal` commits them once everyone has sealed, " \
           "never commit one by hand)" in reason
    assert "commit them," not in reason


def test_another_study_file_is_still_to_be_committed(tmp_path: Path) -> None:
    study = Study(tmp_path / "repo")
    study.start()
    study.write("study/test_a/q1.md", "# Q1\n\nResponse A, edited.\n")
    reason = dirty_reason(study)
    assert "study/test_a/q1.md (M)" in reason and "; commit them, or preview the work tree" in reason
    assert "aoven-git seal" not in reason
