"""Amendment sheets in real git, through the CLI with the pre-commit hook installed: seal and
reveal `--amendment`, and what verify-seal catches (a seal after another rater's amendment was
readable, an order nothing proves, an amendment edited after its files were sealed)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from aoven_git.model import SheetId
from aoven_git.seals import format_seal, parse_seal, sha256
from tests.conftest import Result, run_cli
from tests.sealing.conftest import PEOPLE, PLAN, Study, codes, score_text

AMENDMENT = ("{id: d2-ruling, title: Calibration ruling, rationale: a hedge is not a calibration, "
             "dimensions: [D2], conditions: [B]}")
FOLDER = "study/amendments/d2-ruling"


def amended_plan(*entries: str) -> str:
    return PLAN + "amendments:\n" + "".join(f"  - {e}\n" for e in entries)


def amendment_text(rater: str, score: int = 1, *, nonce: str | None = None) -> str:
    """A valid amendment sheet: D2 of B for both questions."""
    fm = f"---\nrater: {rater}\npass: unblinded\nround: main\namendment: d2-ruling\n"
    fm += (f"nonce: {nonce}\n" if nonce else "") + "---\n"
    rows = "".join(f"| {q} | B | {score} |\n" for q in ("Q1", "Q2"))
    return f"{fm}\n# Re-scores of {rater}\n\n| Q | Cond | D2 |\n|---|---|---|\n{rows}"


def cli(study: Study, monkeypatch: pytest.MonkeyPatch, who: str, *args: str) -> Result:
    name, email = PEOPLE[who]
    for var, value in (("GIT_AUTHOR_NAME", name), ("GIT_AUTHOR_EMAIL", email),
                       ("GIT_COMMITTER_NAME", name), ("GIT_COMMITTER_EMAIL", email)):
        monkeypatch.setenv(var, value)
    return run_cli(*args, cwd=study.path)


def sneak(study: Study, who: str, message: str, *paths: str) -> str:
    """A commit past the hook (`--no-verify`): what verify-seal must catch on its own."""
    study.git("add", "--", *paths)
    study.git("commit", "-q", "--no-verify", "-m", message, author=PEOPLE[who])
    return study.git("rev-parse", "HEAD")


def hand_seal(study: Study, rater: str, score: int = 1) -> str:
    """A digest seal of an amendment sheet written without `aoven-git seal` (which would refuse)."""
    text = amendment_text(rater, score, nonce=f"nonce-{rater}")
    study.write(f"{FOLDER}/scores_{rater}.md", text)
    sheet = SheetId(rater, "unblinded", "main", "d2-ruling")
    seal = format_seal(sha256(text.encode()), f"scores_{rater}.md", sheet)
    study.write(f"{FOLDER}/seals/scores_{rater}.sha256", seal)
    return sneak(study, rater, f"seal {rater}'s amendment", f"{FOLDER}/seals/scores_{rater}.sha256")


@pytest.fixture
def revealed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Study:
    """Both required raters sealed and revealed their scores; then the lead appended the amendment."""
    study = Study(tmp_path / "study-repo")
    study.start()
    assert cli(study, monkeypatch, "lead", "install-hook").code == 0
    for rater, scores in (("cto", (1, 2)), ("logician", (2, 2))):
        study.write(study.score_path(rater), score_text(rater, scores))
        assert cli(study, monkeypatch, rater, "seal", "--rater", rater).code == 0
    for rater in ("cto", "logician"):
        res = cli(study, monkeypatch, rater, "reveal", "--rater", rater)
        assert res.code == 0, res.output
    study.write("aoven.yaml", amended_plan(AMENDMENT))
    study.by("lead", "declare amendment d2-ruling", "aoven.yaml")
    return study


def verify(study: Study) -> tuple[int, dict]:
    res = run_cli("verify-seal", "--format", "json", cwd=study.path)
    return res.code, json.loads(res.out)


def test_amendment_sheets_are_sealed_and_revealed_like_score_files(
    revealed: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = revealed
    for rater, score in (("cto", 1), ("logician", 2)):
        s.write(f"{FOLDER}/scores_{rater}.md", amendment_text(rater, score))
    res = cli(s, monkeypatch, "cto", "seal", "--rater", "cto", "--amendment", "d2-ruling")
    assert res.code == 0, res.output
    assert "aoven-git reveal --rater cto --amendment d2-ruling" in res.out
    assert s.git("show", "--name-only", "--format=", "HEAD") == f"{FOLDER}/seals/scores_cto.sha256"
    seal = parse_seal((s.path / FOLDER / "seals" / "scores_cto.sha256").read_bytes())
    assert not isinstance(seal, tuple) and seal.amendment == "d2-ruling"
    assert seal.digest == sha256((s.path / FOLDER / "scores_cto.md").read_bytes())

    res = cli(s, monkeypatch, "cto", "reveal", "--rater", "cto", "--amendment", "d2-ruling")
    assert res.code == 1 and "missing: logician" in res.err  # logician has not sealed the amendment
    assert cli(s, monkeypatch, "logician", "seal", f"{FOLDER}/scores_logician.md").code == 0
    for rater in ("cto", "logician"):
        res = cli(s, monkeypatch, rater, "reveal", "--rater", rater, "--amendment", "d2-ruling")
        assert res.code == 0, res.output
        assert s.git("show", "--name-only", "--format=", "HEAD") == f"{FOLDER}/scores_{rater}.md"
    code, data = verify(s)
    assert code == 0 and data["status"] == "complete" and codes(data) == []
    amended = sorted((x["rater"], x["revealed"] is not None) for x in data["seals"] if x.get("amendment"))
    assert amended == [("cto", True), ("logician", True)]
    # a second amendment may still be appended: it is no change of the plan
    s.write("aoven.yaml", amended_plan(AMENDMENT, AMENDMENT.replace("d2-ruling", "d1-later").replace(
        "[D2]", "[D1]")))
    s.by("lead", "declare another amendment", "aoven.yaml")
    code, data = verify(s)
    assert code == 0 and codes(data) == []


@pytest.mark.parametrize(("args", "message"), [
    (("--rater", "cto", "--amendment", "nope"), "unknown amendment 'nope'"),
    (("--rater", "cto", "--amendment", "d2-ruling", "--pass", "blinded"), "unknown pass 'blinded'"),
    (("study/scores_cto.md", "--amendment", "d2-ruling"), "is not a file of amendment d2-ruling"),
])
def test_seal_usage_errors_for_amendments(revealed: Study, monkeypatch: pytest.MonkeyPatch,
                                          args: tuple[str, ...], message: str) -> None:
    s = revealed
    s.write(f"{FOLDER}/scores_cto.md", amendment_text("cto"))
    head = s.git("rev-parse", "HEAD")
    res = cli(s, monkeypatch, "cto", "seal", *args)
    assert res.code == 2 and message in res.err, res.output
    assert s.git("rev-parse", "HEAD") == head and not (s.path / FOLDER / "seals").exists()


def test_an_amendment_sheet_scoring_outside_its_scope_is_not_sealed(
    revealed: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = revealed
    text = amendment_text("cto").replace("| Q | Cond | D2 |\n|---|---|---|\n", "| Q | Cond | D1 | D2 |\n"
                                         "|---|---|---|---|\n").replace("| B | 1 |", "| B | 0 | 1 |")
    s.write(f"{FOLDER}/scores_cto.md", text)
    head = s.git("rev-parse", "HEAD")
    res = cli(s, monkeypatch, "cto", "seal", "--rater", "cto", "--amendment", "d2-ruling")
    # the line in the file as the rater wrote it (not counting the nonce seal would add)
    line = text.splitlines().index(next(ln for ln in text.splitlines() if ln.startswith("| Q1 | B |"))) + 1
    assert res.code == 1, res.err
    assert f"{FOLDER}/scores_cto.md:{line}: cell-not-in-amendment: Q1/B/D1" in res.err
    assert s.git("rev-parse", "HEAD") == head
    assert (s.path / FOLDER / "scores_cto.md").read_text(encoding="utf-8") == text


def test_a_seal_after_another_raters_amendment_reveal_is_caught(
    revealed: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = revealed
    s.write(f"{FOLDER}/scores_cto.md", amendment_text("cto"))
    assert cli(s, monkeypatch, "cto", "seal", "--rater", "cto", "--amendment", "d2-ruling").code == 0
    res = cli(s, monkeypatch, "cto", "reveal", "--rater", "cto", "--amendment", "d2-ruling", "--force")
    assert res.code == 0, res.output
    # logician can now read cto's re-scores: `seal` refuses, so they write the seal by hand
    s.write(f"{FOLDER}/scores_logician.md", amendment_text("logician"))
    res = cli(s, monkeypatch, "logician", "seal", "--rater", "logician", "--amendment", "d2-ruling")
    assert res.code == 1 and "visible-at-seal" in res.err
    late = hand_seal(s, "logician")
    code, data = verify(s)
    assert code == 1
    assert codes(data) == [("visible-at-seal", "logician")]
    assert next(v for v in data["violations"] if v["code"] == "visible-at-seal")["commit"] == late
    # the main sheets are untouched by the amendment's problem
    assert all(x["rater"] == "logician" for x in data["violations"])


def test_an_amendment_seal_on_a_side_branch_is_unproven(
    revealed: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = revealed
    s.write(f"{FOLDER}/scores_cto.md", amendment_text("cto"))
    assert cli(s, monkeypatch, "cto", "seal", "--rater", "cto", "--amendment", "d2-ruling").code == 0
    trunk = s.git("rev-parse", "--abbrev-ref", "HEAD")
    s.branch("side")
    s.checkout(trunk)
    assert cli(s, monkeypatch, "cto", "reveal", "--rater", "cto", "--amendment", "d2-ruling",
               "--force").code == 0
    s.checkout("side")
    hand_seal(s, "logician")
    s.checkout(trunk)
    s.merge("side")
    code, data = verify(s)
    assert code == 1 and codes(data) == [("unproven-order", "logician")]


def test_editing_an_amendment_after_its_files_are_sealed_is_caught(
    revealed: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = revealed
    s.write(f"{FOLDER}/scores_cto.md", amendment_text("cto"))
    assert cli(s, monkeypatch, "cto", "seal", "--rater", "cto", "--amendment", "d2-ruling").code == 0
    widened = AMENDMENT.replace("dimensions: [D2]", "dimensions: [D1, D2]")
    s.write("aoven.yaml", amended_plan(widened))
    edit = sneak(s, "lead", "widen the amendment", "aoven.yaml")
    code, data = verify(s)
    assert code == 1
    assert codes(data) == [("plan-changed-after-seal", None)]
    assert data["violations"][0]["commit"] == edit and "d2-ruling" in data["violations"][0]["message"]
    assert data["violations"][0]["amendment"] == "d2-ruling"  # the report blocks that amendment only


def test_the_hook_refuses_an_amendment_reveal_before_everyone_sealed(
    revealed: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = revealed
    s.write(f"{FOLDER}/scores_cto.md", amendment_text("cto"))
    assert cli(s, monkeypatch, "cto", "seal", "--rater", "cto", "--amendment", "d2-ruling").code == 0
    s.git("add", f"{FOLDER}/scores_cto.md")
    proc = subprocess.run(["git", "commit", "-q", "-m", "cto plaintext"], cwd=s.path, capture_output=True,
                          text=True, check=False)
    assert proc.returncode != 0 and "logician" in proc.stderr


def test_amendment_disagreements_are_listed_and_written_into_its_own_reconciliation(
    revealed: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-scores 0 and 3 on D2 of B: `disagreements --amendment` lists the flagged cells of the
    re-scores only, `--write` starts the amendment's own reconciliation in its folder, and until the
    rows are in, the amendment's NOT-READY sentence names that file and the command."""
    s = revealed
    for rater, score in (("cto", 0), ("logician", 3)):
        s.write(f"{FOLDER}/scores_{rater}.md", amendment_text(rater, score))
        assert cli(s, monkeypatch, rater, "seal", "--rater", rater, "--amendment", "d2-ruling").code == 0
    for rater in ("cto", "logician"):
        assert cli(s, monkeypatch, rater, "reveal", "--rater", rater, "--amendment", "d2-ruling").code == 0
    res = cli(s, monkeypatch, "cto", "disagreements", "--amendment", "d2-ruling", "--format", "json")
    assert res.code == 0, res.output
    doc = json.loads(res.out)
    assert (doc["pass"], doc["amendment"]) == ("unblinded", "d2-ruling")
    assert doc["flagged"] == ["Q1/B/D2", "Q2/B/D2"]
    study_doc = json.loads(cli(s, monkeypatch, "cto", "disagreements", "--format", "json").out)
    assert all(c["cell"].endswith(("D1", "D2")) for c in study_doc["cells"])  # the study's own scores
    assert study_doc["amendment"] is None and "Q1/B/D2" not in study_doc["flagged"]

    report = json.loads(cli(s, monkeypatch, "lead", "report", "--format", "json", "--bootstrap", "0").out)
    reasons = report["amendments"][0]["not_ready"]
    assert any(f"{FOLDER}/reconciliation.md" in r and "--amendment d2-ruling --write" in r for r in reasons)

    res = cli(s, monkeypatch, "cto", "disagreements", "--amendment", "d2-ruling", "--write", "--rater", "cto")
    assert res.code == 0 and f"{FOLDER}/reconciliation.md" in res.out, res.output
    text = (s.path / FOLDER / "reconciliation.md").read_text()
    assert "amendment: d2-ruling" in text and "| Q1/B/D2 | cto |" in text and "| Q2/B/D2 | cto |" in text
    assert not (s.path / "study" / "reconciliation.md").exists()
    res = cli(s, monkeypatch, "cto", "disagreements", "--amendment", "nope")
    assert res.code == 2 and "unknown amendment 'nope'" in res.err
