"""Score sheets of a plan with replicates (docs/score-files.md, "Replicates"): the `Rep` column
(`Replicate`, or `#` right after the condition), `A#2` and `Q1/A#2` in cells, headings
`## Q1 / A #2`, `### A #2` and `#### Rep 2`, in the wide, long and sectioned layouts and in CSV;
a missing replicate (`missing-cell` naming `Q1/A#2`), a replicate out of 1…N and a Rep column in a
plan without replicates (`unknown-replicate`). The seed's sheets do not change.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoven_git.model import CellKey, Plan, SheetId
from aoven_git.plan import load_plan, parse_plan
from aoven_git.scorefile import parse_score_file, table_scores
from aoven_git.sheet_writer import render_sheet
from tests.conftest import DEFAULT_PLAN, run_cli
from tests.sheet_designs import REPLICATES, fill_long, fill_wide, line_of, study

PATH = "study/scores_ann.md"
FM = "---\nrater: ann\n---\n"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return parse_plan(REPLICATES.encode())


def parse(plan: Plan, text: str, path: str = PATH):
    return parse_score_file(plan, path, text.encode("utf-8"))


def codes(sheet) -> list[tuple[int | None, str]]:
    return [(f.line, f.code) for f in sheet.findings]


def wide(rows: list[tuple[str, str, str, int, int]], header: str = "| Q | Cond | Rep | D1 | D2 |") -> str:
    body = "".join(f"| {q} | {c} | {r} | {d1} | {d2} |\n" for q, c, r, d1, d2 in rows)
    return f"{FM}\n{header}\n|---|---|---|---|---|\n{body}"


def every_row(score: int = 1) -> list[tuple[str, str, str, int, int]]:
    return [(q, c, str(r), score, score) for q in ("Q1", "Q2") for c in ("A", "B") for r in (1, 2, 3)]


# --------------------------------------------------------------------------- the parser


def test_wide_sheet_with_a_rep_column_reads_every_replicate(plan: Plan) -> None:
    sheet = parse(plan, wide(every_row(2)))
    assert sheet.ok, codes(sheet)
    assert len(sheet.cells) == 2 * 2 * 3 * 2
    assert {c.key for c in sheet.cells} == set(plan.expected_cells("open", "main"))
    assert CellKey("Q2", "B", "D1", 3) in sheet.scores()
    assert str(CellKey("Q2", "B", "D1", 3)) == "Q2/B#3/D1"


def test_replicate_header_aliases_and_hash_after_the_condition(plan: Plan) -> None:
    for rep in ("Replicate", "#", "rep"):
        header = f"| Q | Cond | {rep} | D1 | D2 |"
        sheet = parse(plan, wide(every_row(), header))
        assert sheet.ok and len(sheet.cells) == 24, (header, codes(sheet))


def test_rep_cells_written_as_hash_r_or_rep(plan: Plan) -> None:
    rows = [(q, c, form, 1, 0) for q in ("Q1", "Q2") for c in ("A", "B")
            for form in ("1", "#2", "Rep 3")]
    sheet = parse(plan, wide(rows))
    assert sheet.ok, codes(sheet)
    assert {c.key.replicate for c in sheet.cells} == {1, 2, 3}


def test_condition_and_item_carry_the_replicate(plan: Plan) -> None:
    text = FM + "\n| Q | Cond | D1 | D2 |\n|---|---|---|---|\n" + "".join(
        f"| {q} | {c}#{r} | 1 | 1 |\n" for q in ("Q1", "Q2") for c in ("A", "B") for r in (1, 2)
    ) + "".join(f"| {q}/{c}#3 | {c} | 1 | 1 |\n" for q in ("Q1", "Q2") for c in ("A", "B"))
    sheet = parse(plan, text)
    assert sheet.ok, codes(sheet)
    assert len(sheet.cells) == 24


def test_a_missing_replicate_is_a_missing_cell_at_its_item(plan: Plan) -> None:
    rows = [r for r in every_row() if (r[0], r[1], r[2]) != ("Q1", "B", "2")]
    text = wide(rows)
    sheet = parse(plan, text)
    found = [(f.code, f.message) for f in sheet.errors]
    assert found == [("missing-cell", "Q1/B#2: no score for any dimension")]
    assert sheet.errors[0].line == line_of(text, "| Q1 | B | 1 |")


def test_a_replicate_out_of_range_is_unknown_replicate(plan: Plan) -> None:
    rows = [*every_row(), ("Q1", "A", "4", 1, 1), ("Q2", "B", "0", 1, 1), ("Q2", "B", "two", 1, 1)]
    text = wide(rows)
    sheet = parse(plan, text)
    bad = [(f.line, f.code) for f in sheet.errors]
    assert bad == [(line_of(text, "| Q1 | A | 4 |"), "unknown-replicate"),
                   (line_of(text, "| Q2 | B | 0 |"), "unknown-replicate"),
                   (line_of(text, "| Q2 | B | two |"), "unknown-replicate")]
    assert "not in 1–3" in sheet.errors[0].message and "Q1/A" in sheet.errors[0].message
    assert len(sheet.cells) == 24


def test_a_replicate_named_twice_differently_is_refused(plan: Plan) -> None:
    text = wide([*every_row()[1:], ("Q1", "A#2", "1", 1, 1)])
    sheet = parse(plan, text)
    bad = next(f for f in sheet.errors if f.code == "unknown-replicate")
    assert "replicate #2 of Q1/A but the Rep column says 1" in bad.message
    assert bad.line == line_of(text, "| Q1 | A#2 | 1 |")


def test_a_table_that_names_no_replicate_needs_one(plan: Plan) -> None:
    text = FM + "\n| Q | Cond | D1 | D2 |\n|---|---|---|---|\n| Q1 | A | 1 | 1 |\n"
    sheet = parse(plan, text)
    assert (5, "section-context-missing") in codes(sheet)
    assert "Rep column" in next(f.message for f in sheet.errors if f.code == "section-context-missing")


def test_long_layout_with_rep_column_and_condition_suffix(plan: Plan) -> None:
    items = [(q, c, d) for q in ("Q1", "Q2") for c in ("A", "B") for d in ("D1", "D2")]
    rows = "".join(f"| {q} | {c} | {r} | {d} | 2 |\n" for q, c, d in items for r in (1, 2))
    rows += "".join(f"| {q} | {c} #3 | | {d} | 2 |\n" for q, c, d in items)
    text = FM + "\n| Question | Condition | Rep | Dimension | Score |\n|---|---|---|---|---|\n" + rows
    sheet = parse(plan, text)
    assert sheet.layout == "long" and sheet.ok, codes(sheet)
    assert len(sheet.cells) == 24


def _sectioned(plan: Plan) -> str:
    out = [FM]
    for q in ("Q1", "Q2"):
        out.append(f"## {q} / A #1\n\n| Dim | Score |\n|---|---|\n| D1 | 1 |\n| D2 | 1 |\n")
        out.append(f"## {q}\n\n### Test A #2\n\n| Dim | Score |\n|---|---|\n| D1 | 2 |\n| D2 | 2 |\n")
        out.append("### A #3\n\n| Dim | Score |\n|---|---|\n| D1 | 3 |\n| D2 | 3 |\n")
        out.append("### Condition B\n")
        for r in (1, 2, 3):
            out.append(f"#### Rep {r}\n\n| Dim | Score |\n|---|---|\n| D1 | {r} |\n| D2 | 0 |\n")
    return "\n".join(out)


def test_sectioned_headings_name_the_replicate(plan: Plan) -> None:
    sheet = parse(plan, _sectioned(plan))
    assert sheet.layout == "sectioned" and sheet.ok, codes(sheet)
    scores = sheet.scores()
    assert len(scores) == 24
    assert scores[CellKey("Q2", "A", "D1", 2)] == 2 and scores[CellKey("Q1", "A", "D2", 3)] == 3
    assert scores[CellKey("Q1", "B", "D1", 3)] == 3 and scores[CellKey("Q2", "B", "D2", 1)] == 0


def test_a_new_condition_heading_closes_the_replicate(plan: Plan) -> None:
    table = "| Dim | Score |\n|---|---|\n| D1 | 1 |\n"
    text = FM + f"## Q1\n### A\n#### Rep 1\n{table}### B\n{table}"
    sheet = parse(plan, text)
    assert (line_of(text, "### B") + 1, "section-context-missing") in codes(sheet)


def test_csv_copies_of_a_replicate_sheet_keep_the_replicate(plan: Plan) -> None:
    csv = "Q,Cond,Rep,D1,D2\n" + "".join(f"{q},{c},{r},1,2\n" for q, c, r, *_ in every_row())
    cells = table_scores(plan, csv.encode())
    assert len(cells) == 24 and cells[("Q2", "B", "D2", 3)] == 2


def test_the_normalised_document_carries_the_replicate(plan: Plan) -> None:
    from aoven_git import mdtables, schemas
    from aoven_git.model import Findings
    from aoven_git.score_cells import place_tables, read_cells
    from aoven_git.score_checks import cell_conforms, document
    from aoven_git.score_ids import ids_for
    from aoven_git.studyfile import Identity

    ids, found = ids_for(plan), Findings(PATH)
    parsed = read_cells(place_tables(mdtables.blocks(wide(every_row())), ids, found), ids, found, None)
    ident = Identity(SheetId("ann", "open", "main"), True)
    doc = document(ident, parsed.cells)
    assert {c["replicate"] for c in doc["cells"]} == {1, 2, 3}
    assert all(cell_conforms(c) for c in doc["cells"])
    assert schemas.validator("scores").is_valid(doc)


# --------------------------------------------------------------------------- the seed is unchanged


def test_rep_column_in_a_plan_without_replicates_is_refused() -> None:
    seed = load_plan(DEFAULT_PLAN)
    text = "| Q | Cond | Rep | D1 | D2 | D3 | D4 | D5 | D6 | D7 | D8 |\n" + "|---" * 11 + "|\n"
    text += "| Q1 | A | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |\n"
    sheet = parse_score_file(seed, "tests/phase2/scores_cto.md", text.encode())
    assert [(f.line, f.code) for f in sheet.errors] == [(1, "unknown-replicate")]
    assert "the plan has no replicates" in sheet.errors[0].message
    assert sheet.cells == ()


def test_seed_sheet_has_no_rep_column_and_hash_stays_the_transition() -> None:
    seed = load_plan(DEFAULT_PLAN)
    text = render_sheet(seed, SheetId("cto", "unblinded", "main"), "wide")
    assert "| Q | Cond | D1 | D2 | D3 | D4 | D5 | D6 | D7 | D8 | Σ | Notes |" in text and "Rep" not in text
    long = ("| Question | Condition | Dimension | Score | # |\n|---|---|---|---|---|\n"
            "| Q1 | A | D1 | 2 | 8 |\n")
    sheet = parse_score_file(seed, "tests/phase2/scores_cto.md", long.encode())
    assert sheet.cells[0].key == CellKey("Q1", "A", "D1") and sheet.cells[0].transitions == (8,)
    assert str(sheet.cells[0].key) == "Q1/A/D1"


# --------------------------------------------------------------------------- the CLI, in git


@pytest.fixture
def repo(tmp_path: Path):
    return study(tmp_path / "repo", REPLICATES)


@pytest.mark.parametrize("layout", ["wide", "long"])
def test_sheet_writes_the_rep_column_and_the_filled_sheet_validates(repo, layout: str) -> None:
    r = run_cli("sheet", "--rater", "ann", "--layout", layout, "-o", PATH, cwd=repo.path)
    assert r.code == 0, r.output
    blank = (repo.path / PATH).read_text("utf-8")
    head = "| Q | Cond | Rep | D1 | D2 | Σ | Notes |" if layout == "wide" else \
        "| Question | Condition | Rep | Dimension | Score | Transition | Citation |"
    assert head in blank
    assert "3 responses, one row each" in blank
    v = run_cli("validate", "--format", "json", PATH, cwd=repo.path)
    assert v.code == 1 and {e["code"] for e in json.loads(v.out)["files"][0]["errors"]} == {"missing-cell"}
    filled = fill_wide(blank, 2) if layout == "wide" else fill_long(blank, 2)
    repo.write(PATH, filled)
    v = run_cli("validate", "--format", "json", PATH, cwd=repo.path)
    assert v.code == 0, v.output
    assert json.loads(v.out)["files"][0]["cells"] == 24


def test_validate_names_the_missing_replicate_and_its_line(repo) -> None:
    run_cli("sheet", "--rater", "ann", "-o", PATH, cwd=repo.path)
    filled = fill_wide((repo.path / PATH).read_text("utf-8"), 1)
    lines = filled.splitlines(keepends=True)
    filled = "".join(line for line in lines if not line.startswith("| Q2 | A | 3 |"))
    repo.write(PATH, filled)
    v = run_cli("validate", PATH, cwd=repo.path)
    assert v.code == 1
    line = next(x for x in v.output.splitlines() if "missing-cell" in x)
    assert "Q2/A#3: no score for any dimension" in line
    assert f"{PATH}:{line_of(filled, '| Q2 | A | 1 |')}:" in line


def test_amend_import_refuses_a_plan_with_replicates(repo) -> None:
    repo.write(PATH, FM)
    r = run_cli("amend", "import", PATH, "--amendment", "x", cwd=repo.path)
    assert r.code == 2
    assert "plan has replicates" in r.output and "aoven-git sheet" in r.output
    assert not (repo.path / "study" / "amendments").exists()


def test_the_same_replicate_twice_is_a_duplicate_cell(plan: Plan) -> None:
    text = wide([*every_row(), ("Q1", "A", "2", 3, 3)])
    sheet = parse(plan, text)
    dup = [f for f in sheet.errors if f.code == "duplicate-cell"]
    assert [f.line for f in dup] == [len(text.splitlines())] * 2
    assert "Q1/A#2/D1 is scored twice" in dup[0].message
    assert sheet.scores()[CellKey("Q1", "A", "D1", 2)] == 1  # the first row counts


def test_hash_after_the_dimension_stays_the_transition_in_a_plan_with_replicates(plan: Plan) -> None:
    rows = "".join(f"| {q} | {c} | {r} | {d} | 1 | 1 |\n" for q in ("Q1", "Q2") for c in ("A", "B")
                   for r in (1, 2, 3) for d in ("D1", "D2"))
    text = FM + "\n| Question | Condition | # | Dimension | Score | # |\n|---|---|---|---|---|---|\n" + rows
    sheet = parse(plan, text)
    assert [f.code for f in sheet.errors] == ["wrong-transition"] * 24  # transition 1 is no dimension's
    assert {c.key.replicate for c in sheet.cells} == {1, 2, 3} and len(sheet.cells) == 24
