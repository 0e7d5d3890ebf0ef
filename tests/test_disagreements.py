"""`aoven-git disagreements [--pass] [--round] [--write]` on the example study.

Reference facts come from tests/phase2/README.md: 21 of the 160 unblinded cells differ between
raters, Q6/A/D3 (CTO 1, Logician 3, Red Team 2) is the only flagged cell, and the blinded pass
has none.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from aoven_git.plan import load_plan
from aoven_git.reconciliation import check_reconciliation, parse_reconciliation
from tests.conftest import EXAMPLE as EXAMPLE_ROOT
from tests.conftest import run_cli

STUDY = "tests/phase2"
REC = f"{STUDY}/reconciliation.md"


def _json(root: Path, *args: str) -> dict:
    r = run_cli("disagreements", "--format", "json", *args, cwd=root)
    assert r.code == 0, r.output
    return json.loads(r.out)


def test_lists_the_example_disagreements(example_study: Path) -> None:
    doc = _json(example_study)
    assert doc["pass"] == "unblinded" and doc["round"] == "main"
    assert doc["raters"] == ["cto", "logician", "redteam"] and doc["cells_scored"] == 160
    assert len(doc["cells"]) == 21
    assert all(c["spread"] == max(c["scores"].values()) - min(c["scores"].values()) > 0 for c in doc["cells"])
    assert doc["flagged"] == ["Q6/A/D3"]
    q6 = next(c for c in doc["cells"] if c["cell"] == "Q6/A/D3")
    assert q6 == {
        "cell": "Q6/A/D3",
        "scores": {"cto": 1, "logician": 3, "redteam": 2},
        "spread": 2,
        "flagged": True,
    }
    q3 = next(c for c in doc["cells"] if c["cell"] == "Q3/B/D5")
    assert q3["scores"] == {"cto": 0, "logician": 1, "redteam": 1} and not q3["flagged"]


def test_text_marks_flagged_cells(example_study: Path) -> None:
    r = run_cli("disagreements", cwd=example_study)
    assert r.code == 0
    flagged = [line for line in r.out.splitlines() if "FLAGGED" in line]
    assert len(flagged) == 1 and re.search(r"Q6/A/D3\s+cto 1\s+logician 3\s+redteam 2\s+spread 2", flagged[0])


def test_blinded_pass_has_no_flagged_cells_and_writes_nothing(example_study: Path) -> None:
    doc = _json(example_study, "--pass", "blinded", "--write", "--rater", "cto")
    assert doc["flagged"] == [] and doc["cells_scored"] == 80 and doc["rows_added"] == 0
    assert not (example_study / STUDY / "reconciliation_blinded.md").exists()


def test_flag_spread_comes_from_the_plan(example_study: Path) -> None:
    plan = example_study / "aoven.yaml"
    plan.write_text(plan.read_text("utf-8").replace("flag_spread: 1 ", "flag_spread: 0 "), "utf-8")
    doc = _json(example_study)
    assert len(doc["flagged"]) == 21 and doc["flag_spread"] == 0


def test_write_creates_a_template_and_second_run_changes_nothing(example_study: Path) -> None:
    path = example_study / REC
    path.unlink()
    for rater in ("cto", "logician", "redteam"):  # each rater writes their own row
        r = run_cli("disagreements", "--write", "--rater", rater, cwd=example_study)
        assert r.code == 0 and "wrote 1 row(s)" in r.out and "commit them yourself" in r.out
    first = path.read_bytes()
    text = first.decode("utf-8")
    rows = re.findall(r"^\| (Q\S+) \| (\w+) \|\s*\|\s*\|$", text, re.M)
    assert rows == [("Q6/A/D3", "cto"), ("Q6/A/D3", "logician"), ("Q6/A/D3", "redteam")]
    assert "a row last written by anyone\nelse is ignored" in text
    r = run_cli("disagreements", "--write", "--rater", "cto", cwd=example_study)
    assert r.code == 0 and "unchanged" in r.out
    assert path.read_bytes() == first
    # the template parses; validation asks for what is still missing
    plan = load_plan(example_study / "aoven.yaml")
    rec = parse_reconciliation(plan, REC, first)
    assert (rec.pass_id, rec.round_id) == ("unblinded", "main") and rec.findings == ()
    v = run_cli("validate", "--format", "json", cwd=example_study)
    assert v.code == 1
    errs = {f["path"]: f for f in json.loads(v.out)["files"]}[REC]["errors"]
    assert sorted(e["code"] for e in errs) == ["missing-justification"] * 3


def test_write_leaves_the_bundled_file_alone(example_study: Path) -> None:
    path = example_study / REC
    before = path.read_bytes()
    for rater in ("cto", "logician", "redteam"):
        doc = _json(example_study, "--write", "--rater", rater)
        assert doc["rows_added"] == 0 and path.read_bytes() == before


def test_write_appends_to_the_existing_table_only(example_study: Path) -> None:
    path = example_study / REC
    head = "---\npass: unblinded\n---\n\n# Notes\n\nKeep *this* text.\n\n"
    table = (
        "| Cell | Rater | Justification | Consensus |\n|:--|--|--|--:|\n"
        '| Q6/A/D3 | logician | "These are the defining events of the past six months" | 2 |\n'
        "| Q3/B/D5 | cto | fine | 1 |\n"
    )
    tail = "\nAfter the table.\n\n| Other | Table |\n|---|---|\n| a | b |\n"
    for nl in ("\n", "\r\n"):
        original = (head + table + tail).replace("\n", nl).encode("utf-8")
        path.write_bytes(original)
        for rater in ("cto", "logician", "redteam"):
            r = run_cli("disagreements", "--write", "--rater", rater, cwd=example_study)
            assert r.code == 0 and ("unchanged" if rater == "logician" else "wrote 1 row(s)") in r.out
        new = path.read_bytes()
        added = f"| Q6/A/D3 | cto |  |  |{nl}| Q6/A/D3 | redteam |  |  |{nl}".encode()
        cut = len((head + table).replace("\n", nl).encode())
        assert new == original[:cut] + added + original[cut:]
        run_cli("disagreements", "--write", "--rater", "cto", cwd=example_study)
        assert path.read_bytes() == new


def test_write_adds_a_table_to_a_file_without_one(example_study: Path) -> None:
    path = example_study / REC
    path.write_bytes(b"# Reconciliation\n\nTo do.")  # no final newline
    for rater in ("cto", "logician", "redteam"):
        assert run_cli("disagreements", "--write", "--rater", rater, cwd=example_study).code == 0
    text = path.read_text("utf-8")
    assert text.startswith("# Reconciliation\n\nTo do.\n\n| Cell | Rater | Justification | Consensus |\n")
    plan = load_plan(example_study / "aoven.yaml")
    rec = parse_reconciliation(plan, REC, text.encode())
    assert [(str(r.key), r.rater) for r in rec.rows] == [
        ("Q6/A/D3", "cto"),
        ("Q6/A/D3", "logician"),
        ("Q6/A/D3", "redteam"),
    ]
    assert check_reconciliation(plan, rec, [], None)[0].code == "no-scores"


def test_refuses_when_a_score_file_is_invalid(example_study: Path) -> None:
    path = example_study / REC
    path.unlink()
    cto = example_study / STUDY / "scores_cto.md"
    text = cto.read_text("utf-8")
    bad = re.sub(r"^(\| Q1[^|\n]*\| A \| )\d", r"\g<1>7", text, count=1, flags=re.M)
    assert bad != text
    cto.write_text(bad, "utf-8")
    r = run_cli("disagreements", "--write", "--rater", "cto", cwd=example_study)
    assert r.code == 1
    assert f"{STUDY}/scores_cto.md" in r.err and "score-off-scale" in r.err
    assert not path.exists()
    # a broken file of another pass does not block this one
    cto.write_text(text, "utf-8")
    blinded = example_study / STUDY / "scores_cto_blinded.md"
    btext = blinded.read_text("utf-8")
    assert "| Q1 Alzheimer's | B | 0 | 1 |" in btext
    blinded.write_text(
        btext.replace("| Q1 Alzheimer's | B | 0 | 1 |", "| Q1 Alzheimer's | B | 0 | 1.5 |"), "utf-8"
    )
    assert run_cli("disagreements", cwd=example_study).code == 0
    assert run_cli("disagreements", "--pass", "blinded", cwd=example_study).code == 1


def test_unknown_pass_or_round_is_exit_2(example_study: Path) -> None:
    r = run_cli("disagreements", "--pass", "nope", cwd=example_study)
    assert r.code == 2 and "unknown pass 'nope' (plan passes: unblinded, blinded)" in r.err
    r = run_cli("disagreements", "--round", "nope", cwd=example_study)
    assert r.code == 2 and "unknown round 'nope' (plan rounds: main" in r.err


def test_one_rater_only(example_study: Path) -> None:
    for name in ("scores_logician.md", "scores_redteam.md"):
        (example_study / STUDY / name).unlink()
    doc = _json(example_study, "--write", "--rater", "cto")
    assert doc["cells"] == [] and doc["raters"] == ["cto"]


def test_write_needs_to_know_whose_rows(example_study: Path) -> None:
    """Outside git, or when the git e-mail is no rater's, --write asks for --rater: one person must
    not write everyone's rows (they would be ignored as unattributed)."""
    r = run_cli("disagreements", "--write", cwd=example_study)
    assert r.code == 2 and "--write --rater ID" in r.err and "each rater writes and commits" in r.err
    r = run_cli("disagreements", "--write", "--rater", "alcie", cwd=example_study)
    assert r.code == 2 and "unknown rater 'alcie'" in r.err


def test_write_takes_the_rater_from_the_git_identity(tmp_path: Path) -> None:
    import shutil
    import subprocess

    root = tmp_path / "repo"
    shutil.copytree(EXAMPLE_ROOT, root / STUDY)
    shutil.copy(root / STUDY / "aoven.yaml", root / "aoven.yaml")
    (root / STUDY / "reconciliation.md").unlink()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "config", "user.email", "logician@example.org"], cwd=root, check=True)
    r = run_cli("disagreements", "--write", cwd=root)
    assert r.code == 0, r.output
    rows = re.findall(r"^\| (Q\S+) \| (\w+) \|", (root / REC).read_text("utf-8"), re.M)
    assert rows == [("Q6/A/D3", "logician")]


def test_validate_warns_about_rows_written_for_another_rater(tmp_path: Path) -> None:
    """In a repository, validate warns (exit 0) when the reconciliation holds rows, new since
    HEAD, for a rater whose e-mail is not yours: they would be ignored (unattributed-row)."""
    import shutil
    import subprocess

    root = tmp_path / "repo"
    shutil.copytree(EXAMPLE_ROOT, root / STUDY)
    shutil.copy(root / STUDY / "aoven.yaml", root / "aoven.yaml")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "config", "user.email", "cto@example.org"], cwd=root, check=True)
    res = run_cli("validate", "--format", "json", REC, cwd=root)
    assert res.code == 0, res.output
    warnings = json.loads(res.out)["files"][0]["warnings"]
    flagged = sorted((w["line"], w["code"]) for w in warnings)
    text = (root / REC).read_text("utf-8").splitlines()
    others = [n for n, line in enumerate(text, 1) if line.startswith("| Q") and "| cto |" not in line]
    assert flagged == [(n, "unattributed-row") for n in others]
    assert "is being written by cto@example.org, not by logician" in res.out


def test_the_listing_of_the_primary_pass_points_at_flagged_cells_of_the_other_pass(
        example_study: Path) -> None:
    """With flag_spread 0 the blinded pass has flagged cells too; listed without --pass, the primary
    pass's listing ends by pointing at them (each pass has its own reconciliation)."""
    plan = example_study / "aoven.yaml"
    plan.write_text(plan.read_text("utf-8").replace("flag_spread: 1 ", "flag_spread: 0 "), "utf-8")
    blinded = len(_json(example_study, "--pass", "blinded")["flagged"])
    assert blinded > 0
    out = run_cli("disagreements", cwd=example_study).out
    assert f"pass blinded also has {blinded} flagged cell(s): `aoven-git disagreements --pass blinded`" in out
    assert "also has" not in run_cli("disagreements", "--pass", "unblinded", cwd=example_study).out
    assert "also has" not in run_cli("disagreements", "--pass", "blinded", cwd=example_study).out
