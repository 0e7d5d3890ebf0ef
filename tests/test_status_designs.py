"""`aoven-git status` for designs beyond one A/B (SPEC §3.1, §5.6): a probe study with a labelled
scale (PASS/FAIL) and two sampled responses per (question, condition).

The study is replayed in a real git repository through the CLI — sheets written by the one sheet
writer, sealed and revealed by each rater under their own identity — and status is read at each
stage: nothing written, written, sealed, revealed with a flagged replicate cell whose rows are due
(`L1/TRT#2/V`, as every other command names it). Every JSON document is checked against
schemas/status.schema.json. The pure layout (`progress.py`) is checked on replicate cell ids
directly: the rows due and the reasons withheld from a rater still scoring.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoven_git.model import CellKey, Reconciliation, ReconciliationRow, SheetId
from aoven_git.plan import load_plan
from aoven_git.progress import (
    WITHHELD_UNTIL_SEALED,
    Person,
    SheetProgress,
    Verdict,
    rows_due,
    withheld_for,
)
from aoven_git.reconciliation import Disagreement
from aoven_git.schemas import validator
from aoven_git.sheet_writer import render_sheet
from tests.conftest import GitRepo, run_cli
from tests.test_blinding_designs import ArmsStudy, blind
from tests.test_score_page_designs import probe_study

FLAGGED = CellKey("L1", "TRT", "V", 2)
PEOPLE = {r: (r.title(), f"{r}@example.org") for r in ("cto", "logician", "lead")}


# --------------------------------------------------------------------------- the pure layout


def test_rows_due_name_a_replicate_cell_as_every_command_does() -> None:
    flagged = [Disagreement(FLAGGED, {"cto": 0, "logician": 1}, 1, True)]
    assert [(d.rater, d.cell, d.state) for d in rows_due(flagged, None)] == [
        ("cto", "L1/TRT#2/V", "missing"), ("logician", "L1/TRT#2/V", "missing")]
    rec = Reconciliation("study/reconciliation.md", "open", "main", (
        ReconciliationRow(FLAGGED, "cto", '"holds" — it passes', 0, 7, attributed=True),
        ReconciliationRow(CellKey("L1", "TRT", "V", 1), "logician", '"x" — y', 0, 8, attributed=True),
    ))
    # cto's row counts once committed; logician's row is about replicate 1, not this cell
    assert [(d.rater, d.cell, d.state) for d in rows_due(flagged, rec)] == [
        ("logician", "L1/TRT#2/V", "missing")]


def test_a_reason_naming_a_replicate_cell_is_withheld_from_a_rater_still_scoring() -> None:
    sheets = [SheetProgress(SheetId("cto", "open", "main"), True, "valid", "study/scores_cto.md"),
              SheetProgress(SheetId("logician", "open", "main"), True, "revealed",
                            "study/scores_logician.md")]
    reasons = ("cell L1/TRT#2/V is contested", "required rater cto has not sealed scores for pass open")
    verdicts = [Verdict("main", "NOT-READY", reasons)]
    cto = withheld_for(Person("cto", "cto@example.org", "git-email"), sheets, verdicts, ["V", "W"])
    assert cto[0].not_ready == (reasons[1], WITHHELD_UNTIL_SEALED)
    logician = withheld_for(Person("logician", None, "git-email"), sheets, verdicts, ["V", "W"])
    assert logician[0].not_ready == reasons


# --------------------------------------------------------------------------- the study


class Probes:
    def __init__(self, repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
        self.repo = repo
        self.root = repo.path
        self.monkeypatch = monkeypatch
        self.plan = load_plan(repo.path / "aoven.yaml")

    def as_(self, who: str) -> None:
        name, email = PEOPLE[who]
        for var, value in (("GIT_AUTHOR_NAME", name), ("GIT_AUTHOR_EMAIL", email),
                           ("GIT_COMMITTER_NAME", name), ("GIT_COMMITTER_EMAIL", email)):
            self.monkeypatch.setenv(var, value)
        self.repo.git("config", "user.email", email)

    def status(self, who: str, fmt: str = "json") -> dict:
        self.as_(who)
        res = run_cli("status", "--format", fmt, cwd=self.root)
        assert res.code == 0, res.output
        if fmt != "json":
            return {"text": res.out}
        doc = json.loads(res.out)
        assert [e.message for e in validator("status").iter_errors(doc)] == []
        return doc

    def write(self, rater: str, pass_id: str, fail: CellKey | None = None) -> str:
        """The rater's sheet of a pass through the one sheet writer: PASS everywhere, FAIL on
        `fail`."""
        sheet = SheetId(rater, pass_id, "main")
        cells = {str(k): ("FAIL" if k == fail else "PASS", "")
                 for k in self.plan.expected_cells(pass_id, "main")}
        path = f"study/scores_{rater}.md" if pass_id == "open" else f"study/scores_{rater}_{pass_id}.md"
        self.repo.write(path, render_sheet(self.plan, sheet, "long", None, cells))
        return path

    def run(self, who: str, *args: str) -> None:
        self.as_(who)
        res = run_cli(*args, cwd=self.root)
        assert res.code == 0, res.output


def table(doc: dict) -> dict[tuple[str, str], str]:
    return {(s["rater"], s["pass"]): s["state"] for s in doc["sheets"]}


def test_a_probe_study_with_labels_and_replicates_from_first_sheet_to_reconciliation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = Probes(probe_study(tmp_path), monkeypatch)
    first = s.status("cto")
    assert set(table(first).values()) == {"missing"}
    assert first["next"]["command"] == "aoven-git sheet --rater cto -o study/scores_cto.md"

    for rater in ("cto", "logician"):
        s.write(rater, "open", FLAGGED if rater == "logician" else None)
        s.write(rater, "quiet")
    written = s.status("cto")
    assert set(table(written).values()) == {"valid"}, [x["problem"] for x in written["sheets"]]
    assert written["next"]["command"] == "aoven-git seal --rater cto"

    for rater in ("cto", "logician"):
        s.run(rater, "seal", "--rater", rater)
        s.run(rater, "seal", "--rater", rater, "--pass", "quiet")
    assert set(table(s.status("cto")).values()) == {"sealed"}
    for rater in ("cto", "logician"):
        s.run(rater, "reveal", "--rater", rater)
        s.run(rater, "reveal", "--rater", rater, "--pass", "quiet")

    revealed = s.status("cto")
    assert set(table(revealed).values()) == {"revealed"}
    [rec] = revealed["reconciliation"]
    assert (rec["pass"], rec["flagged"], rec["file"]) == ("open", 1, "study/reconciliation.md")
    assert rec["rows_due"] == [{"rater": r, "cell": "L1/TRT#2/V", "state": "missing"}
                               for r in ("cto", "logician")]
    assert revealed["next"]["command"] == "aoven-git disagreements --pass open --write --rater cto"
    text = s.status("logician", "text")["text"]
    assert "cto L1/TRT#2/V (missing); logician L1/TRT#2/V (missing)" in text


# --------------------------------------------------------------------------- pass order

LAYERS = """\
version: 1
study: layers
study_dir: study
responses: "test_{condition}/{question}.md"
stripped_responses: "test_{condition}_stripped/{question}.md"
scale: {min: 0, max: 3}
conditions:
  - {id: A, name: Baseline, role: baseline}
  - {id: B, name: Treatment, role: treatment}
transitions:
  - {id: 1, name: "FACT→HYP"}
dimensions:
  - {id: D1, name: One, kind: epistemic, transitions: [1]}
  - {id: D2, name: Two, kind: quality}
questions:
  - {id: Q1, text: "Why is the sky blue?", expects: [1]}
raters:
  - {id: cto, name: CTO, emails: [cto@example.org]}
  - {id: logician, name: Logician, emails: [logician@example.org]}
passes:
  - {id: layer2, conditions: [A, B], dimensions: [D2], after: [layer1]}
  - {id: layer1, conditions: [A, B], dimensions: [D1], primary: true}
markers: [FACT, HYP]
security: {require_signed: false, allowed_signers: null}
locked: [study_dir, responses, scale, conditions, transitions, dimensions, questions, passes, markers, rules]
"""


def test_a_pass_ordered_after_another_waits_for_the_raters_earlier_seal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """layer2 is listed first but ordered after layer1: status sends the rater to layer1, says
    why layer2 waits, and offers layer2's seal only once layer1 is sealed (when `seal` takes it)."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("aoven.yaml", LAYERS)
    for c in "ab":
        repo.write(f"study/test_{c}/q1.md", "# Q1\n\n## Response\n\nBlue light scatters most.\n")
    repo.commit("plan and responses")
    s = Probes(repo, monkeypatch)
    waiting = ("layer2/main: seal your layer1 sheet first: the plan orders layer2 after layer1 (`after`), "
               "so `seal` refuses layer2 until then")
    first = s.status("cto")
    assert first["next"]["command"] == "aoven-git sheet --rater cto -o study/scores_cto.md"
    assert {"command": None, "why": waiting} in first["steps"]

    for pass_id, dim in (("layer1", "D1"), ("layer2", "D2")):
        name = "scores_cto.md" if pass_id == "layer1" else f"scores_cto_{pass_id}.md"
        repo.write(f"study/{name}", f"---\nrater: cto\npass: {pass_id}\n---\n\n| Q | Cond | {dim} |\n"
                                    "|---|---|---|\n| Q1 | A | 0 |\n| Q1 | B | 0 |\n")
    written = s.status("cto")
    assert table(written)[("cto", "layer2")] == "valid" and table(written)[("cto", "layer1")] == "valid"
    assert written["next"]["command"] == "aoven-git seal --rater cto"
    assert {"command": None, "why": waiting} in written["steps"]
    s.as_("cto")
    assert run_cli("seal", "--rater", "cto", "--pass", "layer2", cwd=repo.path).code != 0  # seal's own rule

    s.run("cto", "seal", "--rater", "cto")
    sealed = s.status("cto")
    assert sealed["next"]["command"] == "aoven-git seal --rater cto --pass layer2"
    assert all(step["why"] != waiting for step in sealed["steps"])
    s.run("cto", "seal", "--rater", "cto", "--pass", "layer2")


def test_a_blind_pass_over_three_conditions_and_replicates_before_and_after_blinding(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    arms = ArmsStudy(tmp_path / "repo", monkeypatch)
    arms.start()
    s = Probes(arms, monkeypatch)
    lead = s.status("lead")
    assert lead["blind_passes"] == [{"pass": "hidden", "state": "not-blinded", "unsealed": []}]
    assert lead["next"]["command"] == "aoven-git blind --pass hidden"
    blind(arms, tmp_path)
    lead = s.status("lead")
    assert lead["blind_passes"] == [{"pass": "hidden", "state": "blinded", "unsealed": ["cto", "logician"]}]
    cto = s.status("cto")
    commands = [step["command"] for step in cto["steps"]]
    assert "aoven-git sheet --rater cto --pass hidden -o study/scores_cto_hidden.md" in commands
