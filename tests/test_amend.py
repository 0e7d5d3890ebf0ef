"""Amendments without git: `sheet --amendment`, validation of amendment folders, `amend import`.

Expected values are read from the fixtures by plain regexes over their rows, never through the
parser under test. Sealing and verify-seal of amendment sheets are in tests/test_amend_sealing.py.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import DEFAULT_PLAN, EXAMPLE, run_cli

STUDY = "tests/phase2"
AMEND = f"{STUDY}/amendments/d8-marker-load"
FIXTURE = Path(__file__).parent / "fixtures" / "scorefiles" / "wide_rescored.md"

# --------------------------------------------------------------------------- helpers


def plan_with(root: Path, *entries: str) -> None:
    """The default plan with these amendment entries (YAML flow mappings)."""
    text = DEFAULT_PLAN.read_text(encoding="utf-8")
    assert "\namendments: []\n" in text
    block = "\namendments:\n" + "".join(f"  - {e}\n" for e in entries) if entries else "\n"
    (root / "aoven.yaml").write_text(text.replace("\namendments: []\n", block), encoding="utf-8")


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """A plain folder with the default plan and the real team's re-scored file as logician's."""
    root = tmp_path / "team"
    (root / STUDY).mkdir(parents=True)
    plan_with(
        root,
        "{id: v012-d7d8, title: Conditional rubric, rationale: markers are not clutter, "
        "dimensions: [D7, D8], conditions: [B], passes: [unblinded]}",
        "{id: both, title: Both conditions, rationale: r, dimensions: [D7, D8], passes: [unblinded]}",
        "{id: d8-only, title: Load only, rationale: r, dimensions: [D8], conditions: [B]}",
        "{id: d1-b, title: Sources, rationale: r, dimensions: [D1], conditions: [B]}",
    )
    shutil.copy(FIXTURE, root / STUDY / "scores_logician.md")
    return root


def first_table(text: str) -> dict[tuple[str, str, str], int]:
    """The wide table's scores, by (question, condition, dimension): rows `| Qn label | C | … |`."""
    header = ["D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8"]
    out = {}
    for m in re.finditer(r"^\| (Q\d+)[^|]*\| ([AB]) \|((?: [^|]+ \|){8})", text, re.M):
        values = [int(v.strip().split()[0]) for v in m.group(3).strip(" |").split("|")]
        out.update({(m.group(1), m.group(2), d): v for d, v in zip(header, values, strict=True)})
    return out


def primed(text: str) -> dict[tuple[str, str, str], int]:
    """The `| Item | D7' | D8' | Why |` rows: `| Q3B | 1 | 1 | … |`."""
    out = {}
    for m in re.finditer(r"^\| (Q\d+)B \| (\d) \| (\d) \|", text, re.M):
        out[(m.group(1), "B", "D7")] = int(m.group(2))
        out[(m.group(1), "B", "D8")] = int(m.group(3))
    return out


def long_cells(text: str) -> dict[tuple[str, str, str], int]:
    """`| Q | C | D | score | …` rows of a long table."""
    return {(q, c, d): int(s) for q, c, d, s in
            re.findall(r"^\| (Q\d+) \| ([AB]) \| (D\d) \| (\d) \|", text, re.M)}


def validate_json(root: Path, *files: str) -> tuple[int, dict]:
    r = run_cli("validate", "--format", "json", *files, cwd=root)
    return r.code, json.loads(r.out) if r.out.strip().startswith("{") else {}


# --------------------------------------------------------------------------- sheet


@pytest.mark.parametrize("layout", ["wide", "long"])
def test_sheet_of_an_amendment_holds_its_scope_and_validates_once_filled(
    example_study: Path, layout: str
) -> None:
    r = run_cli("sheet", "--rater", "cto", "--amendment", "d8-marker-load", "--layout", layout,
                cwd=example_study)
    assert r.code == 0, r.output
    assert r.out.startswith("---\nrater: cto\npass: unblinded\nround: main\namendment: d8-marker-load\n")
    rows = [line for line in r.out.splitlines() if re.match(r"^\| Q\d+ ", line)]
    if layout == "wide":
        assert "| Q | Cond | D8 | Σ | Notes |" in r.out
        assert [row.split("|")[1:3] for row in rows] == [[f" Q{i} ", " B "] for i in range(1, 11)]
    else:
        assert [tuple(c.strip() for c in row.split("|")[1:4]) for row in rows] == [
            (f"Q{i}", "B", "D8") for i in range(1, 11)]
    target = example_study / AMEND / "scores_cto.md"
    target.write_text(r.out, encoding="utf-8")
    code, doc = validate_json(example_study, str(target))
    assert code == 1
    errors = doc["files"][0]["errors"]
    assert [(e["code"], e["message"]) for e in errors] == [
        ("missing-cell", f"Q{i}/B: no score for D8") for i in range(1, 11)]
    if layout == "wide":
        filled = re.sub(r"^(\| Q\d+ \| B \|)  \|  \|", r"\1 2 | 2 |", r.out, flags=re.M)
    else:
        filled = re.sub(r"^(\| Q\d+ \| B \| D8 \|)  \|", r"\1 2 |", r.out, flags=re.M)
    target.write_text(filled, encoding="utf-8")
    code, doc = validate_json(example_study, str(target))
    assert code == 0, doc
    f = doc["files"][0]
    assert (f["rater"], f["pass"], f["amendment"], f["cells"]) == ("cto", "unblinded", "d8-marker-load", 10)


def test_sheet_refuses_an_unknown_amendment_or_pass_and_writes_nothing(example_study: Path) -> None:
    out = example_study / AMEND / "scores_logician.md"
    out.unlink()
    r = run_cli("sheet", "--rater", "logician", "--amendment", "d7", "-o", str(out), cwd=example_study)
    assert r.code == 2 and "unknown amendment 'd7'" in r.err and "d8-marker-load" in r.err
    assert not out.exists()
    r = run_cli("sheet", "--rater", "logician", "--amendment", "d8-marker-load", "--pass", "blinded",
                "-o", str(out), cwd=example_study)
    assert r.code == 2 and "does not re-score pass blinded" in r.err and "unblinded" in r.err
    assert not out.exists()
    plan_with(example_study)  # the default plan: no amendments at all
    r = run_cli("sheet", "--rater", "cto", "--amendment", "x", cwd=example_study)
    assert r.code == 2 and "none yet: append one to `amendments:`" in r.err


# --------------------------------------------------------------------------- validate


def test_a_cell_outside_the_amendment_is_an_error_at_its_line(example_study: Path) -> None:
    path = example_study / AMEND / "scores_cto.md"
    text = path.read_text(encoding="utf-8")
    text = text.replace("| Q | Cond | D8 |\n|---|---|---|\n", "| Q | Cond | D7 | D8 |\n|---|---|---|---|\n")
    text = re.sub(r"^(\| Q\d+ [^|]*\| B \|)", r"\1 1 |", text, flags=re.M)
    text += "| Q1 Alzheimer's | A | 0 | 1 |\n"
    path.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    code, doc = validate_json(example_study, str(path))
    assert code == 1
    got = [(e["line"], e["code"], e["message"]) for e in doc["files"][0]["errors"]]
    q1b = lines.index(next(x for x in lines if x.startswith("| Q1 Alzheimer's | B"))) + 1
    q1a = len(lines)
    assert (q1b, "cell-not-in-amendment",
            "Q1/B/D7 is outside amendment d8-marker-load, which re-scores only D8 of condition B: leave the "
            "cell out (its pre-registered score stands)") in got
    b_rows = {lines.index(x) + 1 for x in lines if re.match(r"^\| Q\d+ .*\| B \|", x)}
    assert {(line, code) for line, code, _ in got} == {(n, "cell-not-in-amendment") for n in {q1a, *b_rows}}
    assert sum("Q1/A/D8" in m for _, _, m in got) == 1 and sum("Q1/A/D7" in m for _, _, m in got) == 1


def test_amendment_file_identity_checks(example_study: Path) -> None:
    folder = example_study / AMEND
    cto = (folder / "scores_cto.md").read_text(encoding="utf-8")
    # front matter naming another amendment than the folder
    other = cto.replace("amendment: d8-marker-load", "amendment: other")
    (folder / "scores_cto.md").write_text(other, "utf-8")
    # a pass the amendment does not re-score
    (folder / "scores_logician_blinded.md").write_text(
        cto.replace("rater: cto", "rater: logician").replace("pass: unblinded", "pass: blinded"), "utf-8")
    # a folder that names no amendment of the plan
    (example_study / STUDY / "amendments" / "v2").mkdir()
    (example_study / STUDY / "amendments" / "v2" / "scores_cto.md").write_text(cto, "utf-8")
    code, doc = validate_json(example_study)
    assert code == 1
    errors = {f["path"]: [(e["line"], e["code"]) for e in f["errors"]] for f in doc["files"]}
    assert errors[f"{AMEND}/scores_cto.md"] == [(5, "front-matter-mismatch")]
    assert errors[f"{AMEND}/scores_logician_blinded.md"] == [(1, "cell-not-in-amendment")]
    assert (1, "unknown-rater") in errors[f"{STUDY}/amendments/v2/scores_cto.md"]
    messages = {f["path"]: " ".join(e["message"] for e in f["errors"]) for f in doc["files"]}
    assert "amendment 'v2' is not in the plan" in messages[f"{STUDY}/amendments/v2/scores_cto.md"]
    assert "does not re-score pass blinded" in messages[f"{AMEND}/scores_logician_blinded.md"]
    # the study's own files are untouched by all this
    assert all(not errors[p] for p in errors if "/amendments/" not in p)


def test_whole_study_validation_includes_amendment_folders(example_study: Path) -> None:
    code, doc = validate_json(example_study)
    assert code == 0
    paths = {f["path"] for f in doc["files"]}
    assert {f"{AMEND}/scores_{r}.md" for r in ("cto", "logician", "redteam")} <= paths
    (example_study / AMEND / "scores_redteam.md").write_text(
        (EXAMPLE / "amendments" / "d8-marker-load" / "scores_redteam.md").read_text("utf-8")
        .replace("| D8 | 2 |", "| D8 | 5 |", 1), "utf-8")
    r = run_cli("validate", cwd=example_study)
    assert r.code == 1
    assert re.search(rf"^{AMEND}/scores_redteam.md:\d+: error\[score-off-scale\]", r.out, re.M)


# --------------------------------------------------------------------------- amend import


def test_import_of_the_real_teams_file_takes_the_new_values(team: Path) -> None:
    r = run_cli("amend", "import", f"{STUDY}/scores_logician.md", "--amendment", "v012-d7d8", cwd=team)
    assert r.code == 0, r.output
    out = team / STUDY / "amendments" / "v012-d7d8" / "scores_logician.md"
    text = out.read_text(encoding="utf-8")
    assert long_cells(text) == primed(FIXTURE.read_text(encoding="utf-8"))
    assert len(long_cells(text)) == 20
    code, doc = validate_json(team, str(out))
    assert code == 0, doc
    assert doc["files"][0]["amendment"] == "v012-d7d8" and doc["files"][0]["warnings"] == []


def test_import_keeps_the_sealed_value_of_cells_the_tables_leave_alone(team: Path) -> None:
    r = run_cli("amend", "import", f"{STUDY}/scores_logician.md", "--amendment", "both", cwd=team)
    assert r.code == 0, r.output
    assert "20 re-scored, 20 kept as sealed" in r.out
    text = (team / STUDY / "amendments" / "both" / "scores_logician.md").read_text(encoding="utf-8")
    fixture = FIXTURE.read_text(encoding="utf-8")
    expected = {k: v for k, v in first_table(fixture).items() if k[1] == "A" and k[2] in ("D7", "D8")}
    expected.update(primed(fixture))
    assert long_cells(text) == expected
    assert run_cli("validate", str(team / STUDY / "amendments" / "both" / "scores_logician.md"),
                   cwd=team).code == 0


@pytest.mark.parametrize("shape", ["original-new", "fused"])
def test_import_reads_every_shape_of_re_score_table(team: Path, shape: str) -> None:
    fixture = FIXTURE.read_text(encoding="utf-8")
    head = fixture[: fixture.index("## Re-derived")]
    if shape == "original-new":  # only the `| Q (Test B) | Original D7 | New D7 | … |` tables
        text = head + fixture[fixture.index("### D7 changes"):]
        new = {(q, "B", d): int(v) for d, part in (("D7", text[text.index("### D7"):text.index("### D8")]),
                                                   ("D8", text[text.index("### D8"):]))
               for q, v in re.findall(r"^\| (Q\d+) \| \d \| (\d) \|", part, re.M)}
    else:  # a later plain table naming its items fused
        rows = "".join(f"| Q{i}B | {i % 4} | {(i + 1) % 4} |\n" for i in range(1, 11))
        text = head + "## Re-scored\n\n| Item | D7 | D8 |\n|---|---|---|\n" + rows
        new = {(f"Q{i}", "B", d): v for i in range(1, 11) for d, v in (("D7", i % 4), ("D8", (i + 1) % 4))}
    (team / STUDY / "scores_logician.md").write_text(text, encoding="utf-8")
    r = run_cli("amend", "import", f"{STUDY}/scores_logician.md", "--amendment", "v012-d7d8", cwd=team)
    assert r.code == 0, r.output
    out = (team / STUDY / "amendments" / "v012-d7d8" / "scores_logician.md").read_text(encoding="utf-8")
    assert long_cells(out) == new


def test_import_from_outside_the_study_reads_identity_from_front_matter(team: Path) -> None:
    r = run_cli("amend", "import", str(FIXTURE), "--amendment", "v012-d7d8", cwd=team)
    assert r.code == 0, r.output
    assert (team / STUDY / "amendments" / "v012-d7d8" / "scores_logician.md").is_file()


def refused(team: Path, *args: str) -> tuple[int, str]:
    r = run_cli("amend", "import", *args, cwd=team)
    assert not (team / STUDY / "amendments").exists(), "a refused import wrote something"
    return r.code, r.err


def test_import_refusals_write_nothing(team: Path) -> None:
    src = f"{STUDY}/scores_logician.md"
    code, err = refused(team, src, "--amendment", "d8-only")
    assert code == 1 and "outside amendment d8-only" in err
    assert re.findall(r"line (\d+): (Q\d+/B/D7)", err) == [(str(41 + i), f"Q{i + 1}/B/D7") for i in range(10)]
    code, err = refused(team, src, "--amendment", "nope")
    assert code == 2 and "unknown amendment 'nope'" in err
    shutil.copy(EXAMPLE / "scores_cto.md", team / STUDY / "scores_cto.md")
    code, err = refused(team, f"{STUDY}/scores_cto.md", "--amendment", "v012-d7d8")
    assert code == 1 and "has no re-score table" in err
    blinded = FIXTURE.read_text(encoding="utf-8").replace("pass: unblinded", "pass: blinded")
    (team / STUDY / "scores_logician_blinded.md").write_text(blinded, encoding="utf-8")
    code, err = refused(team, f"{STUDY}/scores_logician_blinded.md", "--amendment", "v012-d7d8")
    assert code == 2 and "does not re-score pass blinded" in err
    code, err = refused(team, f"{STUDY}/missing.md", "--amendment", "v012-d7d8")
    assert code == 2 and "no such file" in err


def test_import_refuses_values_it_cannot_import(team: Path) -> None:
    text = FIXTURE.read_text(encoding="utf-8").replace("| Q3B | 1 | 1 |", "| Q3B | 7 | 1 |")
    (team / STUDY / "scores_logician.md").write_text(text, encoding="utf-8")
    code, err = refused(team, f"{STUDY}/scores_logician.md", "--amendment", "v012-d7d8")
    assert code == 1 and "cannot be imported" in err and "Q3/B/D7" in err


def test_import_refuses_an_output_that_would_not_validate(team: Path) -> None:
    """D1 is annotated: a re-score above 0 without its transition cannot be a valid sheet."""
    head = FIXTURE.read_text(encoding="utf-8").split("## Re-derived")[0]
    rows = "".join(f"| Q{i}B | {1 if i == 4 else 0} |\n" for i in range(1, 11))
    (team / STUDY / "scores_logician.md").write_text(
        head + "| Item | D1' |\n|---|---|\n" + rows, encoding="utf-8")
    code, err = refused(team, f"{STUDY}/scores_logician.md", "--amendment", "d1-b")
    assert code == 1 and "would not validate" in err and "missing-annotation" in err and "Q4/B/D1" in err
    annotated = head + "| Item | D1' |\n|---|---|\n" + rows.replace("| Q4B | 1 |", "| Q4B | 1 #8 |")
    (team / STUDY / "scores_logician.md").write_text(annotated, "utf-8")
    r = run_cli("amend", "import", f"{STUDY}/scores_logician.md", "--amendment", "d1-b", cwd=team)
    assert r.code == 0, r.output
    out = (team / STUDY / "amendments" / "d1-b" / "scores_logician.md").read_text(encoding="utf-8")
    assert "| Q4 | B | D1 | 1 | #8 |" in out


def test_import_never_overwrites_without_force(team: Path) -> None:
    args = ("amend", "import", f"{STUDY}/scores_logician.md", "--amendment", "v012-d7d8")
    assert run_cli(*args, cwd=team).code == 0
    out = team / STUDY / "amendments" / "v012-d7d8" / "scores_logician.md"
    out.write_text("mine\n", encoding="utf-8")
    r = run_cli(*args, cwd=team)
    assert r.code == 2 and "--force" in r.err and out.read_text(encoding="utf-8") == "mine\n"
    r = run_cli(*args, "--force", cwd=team)
    assert r.code == 0 and out.read_text(encoding="utf-8").startswith("---\nrater: logician\n")
    other = team / "elsewhere.md"
    r = run_cli(*args, "-o", str(other), cwd=team)
    assert r.code == 0 and long_cells(other.read_text("utf-8")) == long_cells(out.read_text("utf-8"))
