"""`aoven-git status` at every stage of a study, for two people at the keyboard.

The bundled example study is replayed in a real git repository with the demo's own steps (the
seal and reveal of `aoven-git seal`/`reveal`, each rater under their own identity), stopped at each
stage: nothing written, a sheet written but invalid, valid, sealed by some, sealed by all,
revealed, a flagged cell without rows, rows written but not committed, reconciled, an amendment
declared; and a blind pass before blinding, before and after unblinding. At each stage the state
table and the next command are asserted for a rater and for the lead (a git e-mail that is no
rater's), every JSON document is validated against schemas/status.schema.json, and the NOT-READY
reasons are asserted to be the report's own.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aoven_git.commands import demo
from aoven_git.model import SheetId
from aoven_git.schemas import validator
from tests.conftest import EXAMPLE, Result, run_cli

STUDY = "tests/phase2"
LEAD_EMAIL = "lead@example.org"
MAIN = "main"
AMENDMENT = "d8-marker-load"


def status(root: Path, email: str, *args: str) -> dict:
    """`status --format json` as the person whose git e-mail is `email`; exit 0 and a document
    the schema accepts."""
    demo.gitio.run_git(["config", "user.email", email], root)
    return document(run_cli("status", "--format", "json", *args, cwd=root))


def document(res: Result) -> dict:
    """The JSON of a status run that exited 0, once the schema accepts it."""
    assert res.code == 0, res.output
    doc = json.loads(res.out)
    errors = [e.message for e in validator("status").iter_errors(doc)]
    assert errors == [], errors
    return doc


def table(doc: dict, amendment: str | None = None) -> dict[tuple[str, str], str]:
    """(rater, pass) -> state, for the main round (of `amendment`)."""
    return {(s["rater"], s["pass"]): s["state"] for s in doc["sheets"]
            if s["round"] == MAIN and s["amendment"] == amendment}


def everyone(state: str, *, passes: tuple[str, ...] = ("unblinded", "blinded")) -> dict[tuple[str, str], str]:
    return {(r, p): state for r in ("cto", "logician", "redteam") for p in passes}


def next_command(doc: dict) -> str | None:
    return doc["next"]["command"] if doc["next"] else None


def report_not_ready(root: Path) -> list[str]:
    res = run_cli("report", "--format", "json", "--bootstrap", "0", cwd=root)
    assert res.code == 0, res.output
    return json.loads(res.out)["not_ready"]


def sheet(rater: str, pass_id: str = "unblinded", amendment: str | None = None) -> SheetId:
    return SheetId(rater, pass_id, MAIN, amendment)


@pytest.fixture
def study(tmp_path: Path) -> demo.Replay:
    """The example as pre-registered by the lead: plan and responses committed, no sheet."""
    return demo.prepare(tmp_path / "study")


def seal(replay: demo.Replay, *sheets: SheetId) -> None:
    for s in sheets:
        demo.seal_as(replay, s)


def reveal(replay: demo.Replay, *sheets: SheetId) -> None:
    for s in sheets:
        demo.reveal_as(replay, s)


ALL = [sheet(r, p) for p in ("unblinded", "blinded") for r in ("cto", "logician", "redteam")]


# --------------------------------------------------------------------------- before any seal


def test_nothing_written_every_sheet_is_missing_and_the_rater_starts_a_sheet(study: demo.Replay) -> None:
    cto = status(study.root, "cto@example.org")
    assert cto["person"] == {"rater": "cto", "role": "rater", "email": "cto@example.org",
                             "chosen_by": "git-email"}
    assert table(cto) == everyone("missing")
    assert table(cto, AMENDMENT) == {}  # nothing declared yet
    assert next_command(cto) == f"aoven-git sheet --rater cto -o {STUDY}/scores_cto.md"
    assert [s["command"] for s in cto["steps"]][:2] == [
        f"aoven-git sheet --rater cto -o {STUDY}/scores_cto.md",
        f"aoven-git sheet --rater cto --pass blinded -o {STUDY}/scores_cto_blinded.md"]

    lead = status(study.root, LEAD_EMAIL)
    assert lead["person"]["role"] == "lead" and lead["person"]["rater"] is None
    assert table(lead) == table(cto)
    waits = [s["why"] for s in lead["steps"] if s["command"] is None]
    assert [w.split(":")[0] for w in waits] == ["waiting for cto", "waiting for logician",
                                                "waiting for redteam (optional)"]
    assert next_command(lead) == "aoven-git report"
    verdict = lead["verdicts"][0]
    assert verdict["round"] == MAIN and verdict["verdict"] == "NOT-READY"
    assert verdict["not_ready"] == report_not_ready(study.root) != []


def test_the_next_command_it_names_runs(study: demo.Replay) -> None:
    """The step is runnable as printed: `sheet … -o FILE` writes the blank sheet status then sees."""
    command = next_command(status(study.root, "logician@example.org"))
    assert command is not None and command.startswith("aoven-git sheet --rater logician -o ")
    res = run_cli(*command.split()[1:], cwd=study.root)
    assert res.code == 0, res.output
    assert (study.root / STUDY / "scores_logician.md").is_file()
    after = status(study.root, "logician@example.org")
    assert table(after)[("logician", "unblinded")] == "written"  # blank: not valid yet
    assert next_command(after) == f"aoven-git validate {STUDY}/scores_logician.md"


def test_a_sheet_written_but_invalid_then_valid(study: demo.Replay) -> None:
    target = study.root / STUDY / "scores_cto.md"
    good = (EXAMPLE / "scores_cto.md").read_text("utf-8")
    target.write_text(good.replace("| Q1 Alzheimer's | A | 2 #8 | 2 |", "| Q1 Alzheimer's | A | 2 #8 | 7 |"),
                      "utf-8")
    cto = status(study.root, "cto@example.org")
    row = next(s for s in cto["sheets"] if (s["rater"], s["pass"]) == ("cto", "unblinded"))
    assert row["state"] == "written" and row["path"] == f"{STUDY}/scores_cto.md"
    assert row["problem"] == "line 16: score-off-scale: Q1/A/D2: score 7 is outside the scale 0–3"
    assert next_command(cto) == f"aoven-git validate {STUDY}/scores_cto.md"
    lead = status(study.root, LEAD_EMAIL)
    assert lead["steps"][0]["why"].startswith("waiting for cto: unblinded/main: ")
    assert "is not valid yet" in lead["steps"][0]["why"]
    # the report reads the committed revision: it names the uncommitted file, status shows why
    assert lead["verdicts"][0]["not_ready"] == report_not_ready(study.root)

    target.write_text(good, "utf-8")
    cto = status(study.root, "cto@example.org")
    assert table(cto)[("cto", "unblinded")] == "valid"
    assert next_command(cto) == "aoven-git seal --rater cto"
    # another rater's view of the same work tree: their own sheets come first
    assert next_command(status(study.root, "cto@example.org", "--rater", "logician")) == \
        f"aoven-git sheet --rater logician -o {STUDY}/scores_logician.md"


# --------------------------------------------------------------------------- seals and reveals


def test_sealed_by_some_the_sealer_waits_and_the_others_seal(study: demo.Replay) -> None:
    seal(study, sheet("cto"), sheet("cto", "blinded"))
    cto = status(study.root, "cto@example.org")
    assert table(cto) == {**everyone("missing"), ("cto", "unblinded"): "sealed", ("cto", "blinded"): "sealed"}
    mine = next(s for s in cto["sheets"] if (s["rater"], s["pass"]) == ("cto", "unblinded"))
    assert mine["reveal_waits_for"] == ["logician"]  # redteam is optional: reveal does not wait for them
    assert cto["steps"][0] == {"command": None, "why": "unblinded/main: sealed; reveal once logician has "
                                                       "sealed (pull their seals)"}
    assert next_command(cto) == "aoven-git report"  # nothing of theirs to run

    logician = status(study.root, "logician@example.org")
    assert next_command(logician) == f"aoven-git sheet --rater logician -o {STUDY}/scores_logician.md"
    lead = status(study.root, LEAD_EMAIL)
    assert [w["why"].split(":")[0] for w in lead["steps"][:2]] == ["waiting for logician",
                                                                   "waiting for redteam (optional)"]
    assert lead["verdicts"][0]["not_ready"] == report_not_ready(study.root)
    assert any("logician has not sealed" in r for r in lead["verdicts"][0]["not_ready"])

    # logician seals one pass: sealing the other comes before revealing any
    seal(study, sheet("logician"))
    logician = status(study.root, "logician@example.org")
    assert [s["command"] for s in logician["steps"]] == [
        f"aoven-git sheet --rater logician --pass blinded -o {STUDY}/scores_logician_blinded.md",
        "aoven-git reveal --rater logician"]


def test_all_required_sealed_each_rater_reveals(study: demo.Replay) -> None:
    seal(study, *[s for s in ALL if s.rater != "redteam"])
    cto = status(study.root, "cto@example.org")
    assert {k: v for k, v in table(cto).items() if k[0] != "redteam"} == {
        (r, p): "sealed" for r in ("cto", "logician") for p in ("unblinded", "blinded")}
    assert next_command(cto) == "aoven-git reveal --rater cto"
    assert [s["command"] for s in cto["steps"]] [:2] == ["aoven-git reveal --rater cto",
                                                         "aoven-git reveal --rater cto --pass blinded"]
    redteam = status(study.root, "redteam@example.org")
    assert next_command(redteam) == f"aoven-git sheet --rater redteam -o {STUDY}/scores_redteam.md"
    # a clone without the sealed file (the rater sealed elsewhere): reveal must run where it is
    moved = study.root / STUDY / "scores_logician.md"
    kept = moved.read_bytes()
    moved.unlink()
    logician = status(study.root, "logician@example.org")
    row = next(s for s in logician["sheets"] if (s["rater"], s["pass"]) == ("logician", "unblinded"))
    assert (row["state"], row["problem"]) == (
        "sealed", f"the sealed file {STUDY}/scores_logician.md is not in this work tree")
    assert logician["next"] == {
        "command": "aoven-git reveal --rater logician",
        "why": f"unblinded/main: sealed, and everyone it waits for has sealed: reveal it (the sealed file "
               f"{STUDY}/scores_logician.md is not in this work tree: run it in the clone that sealed it)"}
    moved.write_bytes(kept)
    # the command printed is the one that works, run by cto
    command = next_command(status(study.root, "cto@example.org"))
    res = run_cli(*command.split()[1:], cwd=study.root)
    assert res.code == 0, res.output
    assert table(status(study.root, LEAD_EMAIL))[("cto", "unblinded")] == "revealed"


def test_revealed_a_flagged_cell_without_rows_then_reconciled(study: demo.Replay) -> None:
    seal(study, *ALL)
    reveal(study, *ALL)
    cto = status(study.root, "cto@example.org")
    assert table(cto) == everyone("revealed")
    assert {s["path"] for s in cto["sheets"] if s["rater"] == "cto"} == {
        f"{STUDY}/scores_cto.md", f"{STUDY}/scores_cto_blinded.md"}
    [rec] = cto["reconciliation"]
    assert (rec["pass"], rec["round"], rec["amendment"], rec["file"], rec["flagged"]) == (
        "unblinded", MAIN, None, f"{STUDY}/reconciliation.md", 1)
    assert rec["rows_due"] == [{"rater": r, "cell": "Q6/A/D3", "state": "missing"}
                               for r in ("cto", "logician", "redteam")]
    assert next_command(cto) == "aoven-git disagreements --pass unblinded --write --rater cto"
    lead = status(study.root, LEAD_EMAIL)
    assert lead["verdicts"][0]["not_ready"] == report_not_ready(study.root)
    assert next_command(lead) == "aoven-git report"

    # cto writes the template rows (empty), then fills them without committing
    res = run_cli(*next_command(cto).split()[1:], cwd=study.root)
    assert res.code == 0, res.output
    due = status(study.root, "cto@example.org")["reconciliation"][0]["rows_due"]
    rows = {r["rater"]: r["state"] for r in due}
    assert rows == {"cto": "incomplete", "logician": "missing", "redteam": "missing"}
    path = study.root / STUDY / "reconciliation.md"
    mine = next(line for line in (EXAMPLE / "reconciliation.md").read_text("utf-8").splitlines()
                if line.startswith("| Q6/A/D3 | cto |"))
    path.write_text(path.read_text("utf-8").replace("| Q6/A/D3 | cto |  |  |", mine), "utf-8")
    cto = status(study.root, "cto@example.org")
    rows = {r["rater"]: r["state"] for r in cto["reconciliation"][0]["rows_due"]}
    assert rows["cto"] == "uncommitted"  # complete, but history does not attribute it to cto yet
    assert next_command(cto) == (f'git add {STUDY}/reconciliation.md && git commit -m "Reconciliation: '
                                 f'cto\'s own rows" -- {STUDY}/reconciliation.md')

    path.unlink()
    for rater in ("cto", "logician", "redteam"):
        demo.reconcile_as(study, rater)
    for email in ("cto@example.org", LEAD_EMAIL):
        done = status(study.root, email)
        assert done["reconciliation"][0]["rows_due"] == []
        assert done["verdicts"][0]["verdict"] == "PASS" and done["verdicts"][0]["not_ready"] == []
        assert done["steps"] == [{"command": "aoven-git report",
                                  "why": "every sheet is in and the report gives a verdict"}]


def test_amendment_declared_each_rater_writes_their_re_scores(study: demo.Replay) -> None:
    seal(study, *ALL)
    reveal(study, *ALL)
    for rater in ("cto", "logician", "redteam"):
        demo.reconcile_as(study, rater)
    shutil.copy(demo.EXAMPLE / "aoven.yaml", study.root / "aoven.yaml")
    demo.commit_files(study.root, ["aoven.yaml"], "Declare amendment", demo.LEAD)
    cto = status(study.root, "cto@example.org")
    assert table(cto, AMENDMENT) == everyone("missing", passes=("unblinded",))
    path = f"{STUDY}/amendments/{AMENDMENT}/scores_cto.md"
    assert next_command(cto) == f"aoven-git sheet --rater cto --amendment {AMENDMENT} -o {path}"
    lead = status(study.root, LEAD_EMAIL)
    assert lead["verdicts"][0]["verdict"] == "PASS"
    report = json.loads(run_cli("report", "--format", "json", "--bootstrap", "0", cwd=study.root).out)
    assert lead["verdicts"][0]["amendments"] == [
        {"id": a["id"], "verdict": a["verdict"], "not_ready": a.get("not_ready") or []}
        for a in report["amendments"]]
    assert lead["steps"][0]["why"].startswith("waiting for cto: unblinded/main of amendment")

    demo.replay_amendments(study)  # every rater seals and reveals their re-scores
    assert table(status(study.root, LEAD_EMAIL), AMENDMENT) == everyone("revealed", passes=("unblinded",))


# --------------------------------------------------------------------------- a blind pass


def test_blind_pass_before_blinding_before_and_after_unblinding(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_blind_e2e import BlindStudy, parse_key

    s = BlindStudy(tmp_path / "repo", monkeypatch)
    s.start()
    lead = document(s.run("lead", "status", "--format", "json"))
    assert lead["blind_passes"] == [{"pass": "hidden", "state": "not-blinded", "unsealed": []}]
    assert next_command(lead) == "aoven-git blind --pass hidden"
    cto = document(s.run("cto", "status", "--format", "json"))
    hidden = next(st for st in cto["steps"] if "hidden" in st["why"])
    assert hidden == {"command": None,
                      "why": "hidden/main: the lead must blind pass hidden before anyone can score it"}

    key_file = tmp_path / "keys" / "hidden.json"
    assert s.run("lead", "blind", "--pass", "hidden", "--key-out", str(key_file)).code == 0
    key = parse_key(key_file.read_bytes(), pass_id="hidden")
    s.seal_all("cto", key)
    lead = document(s.run("lead", "status", "--format", "json"))
    assert lead["blind_passes"] == [{"pass": "hidden", "state": "blinded", "unsealed": ["logician"]}]
    assert lead["steps"][0] == {"command": None, "why": "blind pass hidden: unblind once logician has sealed"}
    assert any("blind pass hidden is pending" in r for r in lead["verdicts"][0]["not_ready"])
    assert lead["verdicts"][0]["not_ready"] == report_not_ready(s.path)

    s.seal_all("logician", key)
    lead = document(s.run("lead", "status", "--format", "json"))
    assert next_command(lead).startswith("aoven-git unblind --pass hidden --key ")
    cto = document(s.run("cto", "status", "--format", "json"))
    assert table(cto)[("cto", "hidden")] == "sealed"
    assert next_command(cto) == "aoven-git reveal --rater cto"

    s.unblind_and_reveal(key_file)
    lead = document(s.run("lead", "status", "--format", "json"))
    assert lead["blind_passes"] == [{"pass": "hidden", "state": "unblinded", "unsealed": []}]
    assert table(lead)[("cto", "hidden")] == "revealed"


# --------------------------------------------------------------------------- text, errors


def test_text_shows_the_table_the_verdict_and_the_next_command(study: demo.Replay) -> None:
    seal(study, sheet("cto"))
    demo.gitio.run_git(["config", "user.email", "cto@example.org"], study.root)
    res = run_cli("status", cwd=study.root)
    assert res.code == 0, res.output
    lines = res.out.splitlines()
    assert lines[1] == "You are cto <cto@example.org> (your git e-mail)"
    assert "  cto                 sealed        missing" in lines
    assert "  redteam (optional)  missing       missing" in lines
    assert "Verdict, round main: NOT-READY" in lines
    assert f"Next for cto: aoven-git sheet --rater cto --pass blinded -o {STUDY}/scores_cto_blinded.md" \
        in lines


def test_usage_and_plan_errors_exit_2_and_change_nothing(study: demo.Replay) -> None:
    before = demo.gitio.run_git(["status", "--porcelain"], study.root).stdout
    res: Result = run_cli("status", "--rater", "nobody", cwd=study.root)
    assert res.code == 2 and "unknown rater 'nobody'" in res.err
    (study.root / "aoven.yaml").write_text("version: [\n", "utf-8")
    res = run_cli("status", cwd=study.root)
    assert res.code == 2 and "aoven.yaml" in res.err and "Traceback" not in res.output
    after = demo.gitio.run_git(["status", "--porcelain"], study.root).stdout
    assert before == b"" and after == b" M aoven.yaml\n"  # only the plan we broke
    assert not (study.root / STUDY / "scores_cto.md").exists()


def test_outside_git_the_work_tree_is_still_shown(example_study: Path) -> None:
    res = run_cli("status", "--format", "json", cwd=example_study)
    assert res.code == 0, res.output
    doc = json.loads(res.out)
    assert [e.message for e in validator("status").iter_errors(doc)] == []
    assert doc["git"] is False and doc["head"] is None and doc["person"]["role"] == "lead"
    assert table(doc)[("cto", "unblinded")] == "valid"
    assert next_command(doc) == "git init"


def test_plan_not_committed_the_lead_commits_it_and_raters_wait(example_study: Path) -> None:
    demo.gitio.run_git(["init", "-q"], example_study)
    lead = status(example_study, LEAD_EMAIL)
    assert lead["git"] is True and lead["head"] is None and lead["plan_committed"] is False
    assert next_command(lead) == f'git add aoven.yaml {STUDY} && git commit -m "Pre-register the plan"'
    assert table(lead)[("cto", "unblinded")] == "valid"  # the example's sheets are in the work tree
    cto = status(example_study, "cto@example.org")
    assert cto["next"] is None
    assert cto["steps"] == [{"command": None,
                             "why": "the lead must commit the plan and the responses before anyone seals"}]
    assert cto["verdicts"][0]["verdict"] == "NOT-READY"
    assert cto["verdicts"][0]["not_ready"] == report_not_ready(example_study)


def test_a_row_committed_by_someone_else_counts_for_nobody(study: demo.Replay) -> None:
    """The lead fills in and commits cto's row: status says it is not cto's (verify-seal's
    attribution), the report still lacks cto's consensus, and cto is told to commit it themselves."""
    seal(study, *ALL)
    reveal(study, *ALL)
    mine = next(line for line in (EXAMPLE / "reconciliation.md").read_text("utf-8").splitlines()
                if line.startswith("| Q6/A/D3 | cto |"))
    head = (EXAMPLE / "reconciliation.md").read_text("utf-8").split("| Q6/A/D3 |", 1)[0]
    (study.root / STUDY / "reconciliation.md").write_text(head + mine + "\n", "utf-8")
    demo.commit_files(study.root, [f"{STUDY}/reconciliation.md"], "cto's row, by the lead", demo.LEAD)
    cto = status(study.root, "cto@example.org")
    due = {r["rater"]: r["state"] for r in cto["reconciliation"][0]["rows_due"]}
    assert due == {"cto": "not-theirs", "logician": "missing", "redteam": "missing"}
    step = cto["steps"][0]
    assert "committed by someone else and count for nobody" in step["why"]
    assert step["command"] == (f'git add {STUDY}/reconciliation.md && git commit -m "Reconciliation: '
                               f'cto\'s own rows" -- {STUDY}/reconciliation.md')
    assert cto["verdicts"][0]["verdict"] == "NOT-READY"
    assert cto["verdicts"][0]["not_ready"] == report_not_ready(study.root)
    verify = json.loads(run_cli("verify-seal", "--format", "json", cwd=study.root).out)
    assert [(r["code"], r["rater"], r["cell"]) for r in verify["unattributed_rows"]] == [
        ("unattributed-row", "cto", "Q6/A/D3")]


def test_an_unreadable_or_doubled_reconciliation_file_is_named_first(study: demo.Replay) -> None:
    """Bad input: rows cannot be added to a file that is not UTF-8, nor to one of two files for one
    reconciliation; status names the problem (validate's words) instead of sending the rater to a
    `disagreements --write` that would refuse, and still exits 0."""
    seal(study, *ALL)
    reveal(study, *ALL)
    path = study.root / STUDY / "reconciliation.md"
    path.write_bytes(b"\xff\xfe not text")
    cto = status(study.root, "cto@example.org")
    [rec] = cto["reconciliation"]
    assert rec["problem"] == (f"{STUDY}/reconciliation.md:1: not-utf8: not valid UTF-8 (first bad byte at "
                              "offset 0); save the file as UTF-8")
    assert cto["next"] == {"command": f"aoven-git validate {STUDY}/reconciliation.md",
                           "why": f"flagged cell(s) Q6/A/D3 need your row, but {rec['problem']}: fix that "
                                  "first"}
    path.write_text("", "utf-8")
    shutil.copy(path, study.root / STUDY / "reconciliation_main.md")
    lead = status(study.root, LEAD_EMAIL)
    [rec] = lead["reconciliation"]
    assert rec["problem"].startswith(f"{STUDY}/reconciliation.md and {STUDY}/reconciliation_main.md are two "
                                     "files for one reconciliation")
    assert lead["steps"][0]["why"].startswith("waiting for cto: flagged cell(s) Q6/A/D3 need your row, but ")


def test_a_round_someone_started_is_in_play(study: demo.Replay) -> None:
    """A re-test round declared before scoring appears once someone writes a sheet of it, with its
    own rows in the table, its own steps (`--round`) and the report's verdict for that round."""
    plan = study.root / "aoven.yaml"
    plan.write_text(plan.read_text("utf-8").replace("  # - {id: retest1,", "  - {id: retest1,"), "utf-8")
    demo.commit_files(study.root, ["aoven.yaml"], "Declare the re-test round before scoring", demo.LEAD)
    assert {s["round"] for s in status(study.root, "cto@example.org")["sheets"]} == {MAIN}
    res = run_cli("sheet", "--rater", "cto", "--round", "retest1", "-o", f"{STUDY}/scores_cto_retest1.md",
                  cwd=study.root)
    assert res.code == 0, res.output
    cto = status(study.root, "cto@example.org")
    retest = {(s["rater"], s["pass"]): s["state"] for s in cto["sheets"] if s["round"] == "retest1"}
    assert retest == {**everyone("missing"), ("cto", "unblinded"): "written"}
    commands = [s["command"] for s in cto["steps"]]
    assert f"aoven-git validate {STUDY}/scores_cto_retest1.md" in commands
    blank = f"{STUDY}/scores_cto_retest1_blinded.md"
    assert f"aoven-git sheet --rater cto --pass blinded --round retest1 -o {blank}" in commands
    assert [v["round"] for v in cto["verdicts"]] == [MAIN, "retest1"]
    for v in cto["verdicts"]:
        res = run_cli("report", "--format", "json", "--bootstrap", "0", "--round", v["round"], cwd=study.root)
        assert v["not_ready"] == json.loads(res.out)["not_ready"]
