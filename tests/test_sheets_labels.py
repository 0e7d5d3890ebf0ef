"""Score sheets on a nominal scale (docs/score-files.md, "Labels"): a score cell holds a label
(`PASS`, any letter case), stored as its position; a number or an unknown word is
`score-off-scale`, listing the labels; `sheet` lists the labels and leaves out the Σ column.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoven_git.model import CellKey, Plan, SheetId
from aoven_git.plan import parse_plan
from aoven_git.scorefile import parse_score_file
from aoven_git.sheet_writer import render_sheet
from tests.conftest import run_cli
from tests.sheet_designs import PROBES, VERDICTS, fill_long, fill_wide, line_of, study

PATH = "study/scores_ann.md"
FM = "---\nrater: ann\n---\n"


@pytest.fixture(scope="module")
def verdicts() -> Plan:
    return parse_plan(VERDICTS.encode())


@pytest.fixture(scope="module")
def probes() -> Plan:
    return parse_plan(PROBES.encode())


def parse(plan: Plan, text: str):
    return parse_score_file(plan, PATH, text.encode("utf-8"))


def wide(cells: dict[tuple[str, str], tuple[str, str]]) -> str:
    rows = "".join(f"| {q} | {c} | {v} | {w} |\n" for (q, c), (v, w) in cells.items())
    return f"{FM}\n| Q | Cond | V | W |\n|---|---|---|---|\n{rows}"


ITEMS = [(q, c) for q in ("Q1", "Q2") for c in ("A", "B")]


def test_labels_in_any_case_are_stored_as_their_position(verdicts: Plan) -> None:
    written = [("PASS", "fail"), ("Fail", "unsure"), ("**UNSURE**", "pass"), ("pass", "PASS")]
    text = wide(dict(zip(ITEMS, written, strict=True)))
    sheet = parse(verdicts, text)
    assert sheet.ok, sheet.findings
    scores = sheet.scores()
    assert scores[CellKey("Q1", "A", "V")] == 0 and scores[CellKey("Q1", "A", "W")] == 1
    assert scores[CellKey("Q1", "B", "W")] == 2 and scores[CellKey("Q2", "A", "V")] == 2
    assert [verdicts.scale.label(scores[k]) for k in sorted(scores)][:2] == ["PASS", "FAIL"]


def test_a_number_or_an_unknown_label_is_off_the_scale(verdicts: Plan) -> None:
    written = [("1", "PASS"), ("maybe", "PASS"), ("PASS", "PASS"), ("PASS", "PAS")]
    cells = dict(zip(ITEMS, written, strict=True))
    text = wide(cells)
    sheet = parse(verdicts, text)
    found = [(f.line, f.code) for f in sheet.errors]
    lines = [line_of(text, f"| {q} | {c} |") for q, c in (("Q1", "A"), ("Q1", "B"), ("Q2", "B"))]
    assert found == [(n, "score-off-scale") for n in lines]
    assert sheet.errors[0].message == "Q1/A/V: '1' is not a label of the scale (PASS, FAIL, UNSURE)"
    assert "'maybe'" in sheet.errors[1].message and "'PAS'" in sheet.errors[2].message
    assert len(sheet.cells) == 8 - 3


def test_a_sum_column_is_not_checked_on_labels(verdicts: Plan) -> None:
    rows = "".join(f"| {q} | {c} | PASS | FAIL | 7 |\n" for q, c in ITEMS)
    sheet = parse(verdicts, f"{FM}\n| Q | Cond | V | W | Σ |\n|---|---|---|---|---|\n{rows}")
    assert sheet.ok and len(sheet.cells) == 8


def test_labels_in_the_long_and_sectioned_layouts(verdicts: Plan) -> None:
    long = FM + "\n| Question | Condition | Dimension | Score | Citation |\n|---|---|---|---|---|\n"
    long += "".join(f'| {q} | {c} | {d} | fail | "the answer" |\n' for q, c in ITEMS for d in ("V", "W"))
    sheet = parse(verdicts, long)
    assert sheet.layout == "long" and sheet.ok, sheet.findings
    assert set(sheet.scores().values()) == {1} and sheet.cells[0].citation == '"the answer"'
    table = "| Dim | Score |\n|---|---|\n| V | Unsure |\n| W | PASS |\n"
    sectioned = FM + "".join(f"## {q}\n### Condition {c}\n{table}" for q, c in ITEMS)
    sheet = parse(verdicts, sectioned)
    assert sheet.layout == "sectioned" and sheet.ok, sheet.findings
    assert sheet.scores()[CellKey("Q2", "B", "V")] == 2


def test_labels_with_replicates(probes: Plan) -> None:
    rows = "".join(f"| {q} | {c} | {r} | {'PASS' if r == 1 else 'fail'} |\n"
                   for q in ("L1", "L2") for c in ("CTRL", "TRT") for r in (1, 2))
    sheet = parse(probes, f"{FM}\n| Q | Cond | Rep | V |\n|---|---|---|---|\n{rows}")
    assert sheet.ok, sheet.findings
    assert sheet.scores()[CellKey("L2", "TRT", "V", 2)] == 1
    assert sheet.scores()[CellKey("L2", "TRT", "V", 1)] == 0


def test_the_blank_sheet_lists_the_labels_and_has_no_sum(verdicts: Plan) -> None:
    text = render_sheet(verdicts, SheetId("ann", "open", "main"), "wide")
    assert "Score every cell with one of the labels PASS, FAIL, UNSURE (any letter case)." in text
    assert "whole number" not in text
    assert "| Q | Cond | V | W | Notes |" in text and "Σ" not in text


@pytest.fixture
def repo(tmp_path: Path):
    return study(tmp_path / "repo", PROBES)


@pytest.mark.parametrize("layout", ["wide", "long"])
def test_sheet_then_validate_a_label_sheet_in_git(repo, layout: str) -> None:
    r = run_cli("sheet", "--rater", "ann", "--layout", layout, "-o", PATH, cwd=repo.path)
    assert r.code == 0, r.output
    blank = (repo.path / PATH).read_text("utf-8")
    assert "one of the labels PASS, FAIL" in blank and "| Rep |" in blank
    filled = fill_wide(blank, "FAIL") if layout == "wide" else fill_long(blank, "Pass")
    repo.write(PATH, filled)
    v = run_cli("validate", "--format", "json", PATH, cwd=repo.path)
    assert v.code == 0, v.output
    assert json.loads(v.out)["files"][0]["cells"] == 8


def test_validate_rejects_a_number_on_a_label_sheet(repo) -> None:
    run_cli("sheet", "--rater", "ann", "-o", PATH, cwd=repo.path)
    blank = (repo.path / PATH).read_text("utf-8")
    filled = blank.replace("| L1 | CTRL | 1 |  |", "| L1 | CTRL | 1 | 0 |")
    for rep in ("| L1 | CTRL | 2 |", "| L1 | TRT | 1 |", "| L1 | TRT | 2 |", "| L2 | CTRL | 1 |",
                "| L2 | CTRL | 2 |", "| L2 | TRT | 1 |", "| L2 | TRT | 2 |"):
        filled = filled.replace(f"{rep}  |", f"{rep} PASS |")
    repo.write(PATH, filled)
    v = run_cli("validate", "--format", "json", PATH, cwd=repo.path)
    assert v.code == 1
    errors = json.loads(v.out)["files"][0]["errors"]
    assert errors == [{"line": line_of(filled, "| L1 | CTRL | 1 |"), "code": "score-off-scale",
                       "message": "L1/CTRL#1/V: '0' is not a label of the scale (PASS, FAIL)"}]


def test_amend_import_refuses_a_nominal_scale(tmp_path: Path) -> None:
    repo = study(tmp_path / "repo", VERDICTS)
    repo.write(PATH, FM)
    r = run_cli("amend", "import", PATH, "--amendment", "x", cwd=repo.path)
    assert r.code == 2 and "scale is nominal" in r.output
