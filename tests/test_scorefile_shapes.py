"""Score files in the shapes real teams write: summaries after the detail, re-score tables after a
rubric change, a B-only second layer, and misspelt headers named in the message.

The fixtures in tests/fixtures/scorefiles/ are written for these tests (own text, scores drawn
once at random): `sectioned_summary.md` (sections per question and condition, then a
`D1 A … B Total` summary), `wide_rescored.md` (a wide table, then a primed `D7'`/`D8'` table with
fused item ids and two `Original/New` tables) and `scores_cto_layer2.md` (three dimensions scored
on condition B only, labelled headers, an extra column). Expected values are read from the
fixtures with plain string splitting, not with the parser under test.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aoven_git.model import CellKey, Plan
from aoven_git.plan import load_plan, parse_plan
from aoven_git.scorefile import parse_score_file, rescores
from tests.conftest import DEFAULT_PLAN, run_cli
from tests.test_scorefile import FM, line_of, long, scores, sectioned, wide

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "scorefiles"
CTO = "tests/phase2/scores_cto.md"
LOGICIAN = "tests/phase2/scores_logician.md"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(DEFAULT_PLAN)


def layer2_plan_text() -> str:
    """The default plan plus three dimensions scored on condition B only (pass `layer2`)."""
    text = DEFAULT_PLAN.read_text("utf-8")
    d8 = "  - {id: D8, name: Cognitive load, kind: quality}\n"
    extra = "".join(
        f"  - {{id: C{i}, name: {name}, kind: quality}}\n"
        for i, name in enumerate(("Marker accuracy", "Marker coverage", "Calibration drift"), start=1)
    )
    text = text.replace(d8, d8 + extra)
    return text.replace(
        "  - {id: blinded,", "  - {id: layer2, conditions: [B], dimensions: [C1, C2, C3]}\n  - {id: blinded,"
    )


@pytest.fixture(scope="module")
def layer2_plan() -> Plan:
    return parse_plan(layer2_plan_text().encode())


def read(name: str) -> str:
    return (FIXTURES / name).read_text("utf-8")


def parse(plan: Plan, text: str, path: str = CTO):
    return parse_score_file(plan, path, text.encode("utf-8"))


def found(sheet) -> list[tuple[int | None, str, str]]:
    return [(f.line, f.code, f.message) for f in sheet.findings]


def rows_after(text: str, header_start: str) -> list[tuple[int, list[str]]]:
    """(line, cells) of the body rows of the table whose header line starts with `header_start`."""
    lines = text.splitlines()
    start = next(i for i, t in enumerate(lines) if t.startswith(header_start))
    out = []
    for i in range(start + 2, len(lines)):
        if not lines[i].startswith("|"):
            break
        out.append((i + 1, [c.strip() for c in lines[i].strip("|").split("|")]))
    return out


def replace_line(text: str, line: int, old: str, new: str) -> str:
    lines = text.split("\n")
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return "\n".join(lines)


# --------------------------------------------------------------------------- summary tables


def detail_scores(text: str) -> dict[tuple[str, str, str], tuple[int, int]]:
    """(question, condition, dimension) → (score, line) of the sectioned fixture, by hand."""
    out = {}
    q = c = ""
    for n, t in enumerate(text.splitlines(), start=1):
        if t.startswith("## Q"):
            q = t.split()[1]
        elif t.startswith("### Test "):
            c = t.split()[2]
        elif t.startswith("| D") and q and c and t[3].isdigit():
            cells = [x.strip() for x in t.strip("|").split("|")]
            out[(q, c, cells[0])] = (int(cells[1]), n)
    return out


def test_sectioned_file_with_a_summary_is_valid(plan: Plan) -> None:
    text = read("sectioned_summary.md")
    sheet = parse(plan, text)
    assert sheet.findings == ()
    assert sheet.layout == "sectioned"
    expected = {k: v[0] for k, v in detail_scores(text).items()}
    assert len(expected) == 160
    assert {(c.key.question, c.key.condition, c.key.dimension): c.score for c in sheet.cells} == expected
    summary_line = line_of(text, "| Q | D1 A |")
    assert any(n.line == summary_line and "summary" in n.message for n in sheet.notes)


def test_a_summary_is_never_a_source_of_cells(plan: Plan) -> None:
    text = read("sectioned_summary.md")
    detail = detail_scores(text)
    _, line = detail[("Q3", "A", "D2")]
    lines = text.split("\n")
    del lines[line - 1]
    sheet = parse(plan, "\n".join(lines))
    assert [(f.code, f.message) for f in sheet.findings] == [("missing-cell", "Q3/A: no score for D2")]
    assert CellKey("Q3", "A", "D2") not in {c.key for c in sheet.cells}


def test_a_wrong_summary_value_is_an_error_at_its_line_naming_the_detail_line(plan: Plan) -> None:
    text = read("sectioned_summary.md")
    row_line, cells = next((n, c) for n, c in rows_after(text, "| Q | D1 A |") if c[0] == "Q4")
    written = int(cells[1 + 9 + 2])  # D3 B: after Q, eight A values and the A total, D1 B, D2 B
    score, detail_line = detail_scores(text)[("Q4", "B", "D3")]
    assert written == score
    wrong = (written + 1) % 4
    head = " | ".join(cells[:13])
    bad = replace_line(text, row_line, f"| {head} |", f"| {' | '.join([*cells[:12], str(wrong)])} |")
    sheet = parse(plan, bad)
    assert found(sheet) == [
        (
            row_line,
            "summary-mismatch",
            f"summary: Q4/B/D3 is written {wrong}, but line {detail_line} scores it {score}",
        )
    ]
    assert not sheet.ok and len(sheet.cells) == 160


def test_a_wrong_summary_total_names_the_detail_lines(plan: Plan) -> None:
    text = read("sectioned_summary.md")
    row_line, cells = next((n, c) for n, c in rows_after(text, "| Q | D1 A |") if c[0] == "Q7")
    total = int(cells[9].strip("*"))
    detail = detail_scores(text)
    assert total == sum(detail[("Q7", "A", f"D{d}")][0] for d in range(1, 9))
    first, last = detail[("Q7", "A", "D1")][1], detail[("Q7", "A", "D8")][1]
    bad = replace_line(text, row_line, f"| **{total}** |", f"| **{total + 2}** |")
    assert found(parse(plan, bad)) == [
        (
            row_line,
            "summary-mismatch",
            f"summary: the A total of Q7 is written {total + 2}, but the scores of Q7/A "
            f"(lines {first}–{last}) add up to {total}",
        )
    ]


def test_a_summary_after_a_wide_table_names_the_row(plan: Plan) -> None:
    s = scores(4)
    head = "| Q | " + " | ".join(f"D{d} {c}" for c in "AB" for d in range(1, 9)) + " | A Total | B Total |"
    rows = []
    for q in range(1, 11):
        vals = [s[(f"Q{q}", c, f"D{d}")] for c in "AB" for d in range(1, 9)]
        rows.append(f"| Q{q} | " + " | ".join(map(str, vals)) + f" | {sum(vals[:8])} | {sum(vals[8:])} |")
    summary = "\n## Overview\n\n" + head + "\n|" + "---|" * 19 + "\n" + "\n".join(rows) + "\n"
    text = wide(s) + summary
    assert parse(plan, text).findings == ()
    row_line = line_of(text, "| Q2 | ")
    bad = text.replace("| Q2 | ", "| Q2 | x", 1)
    assert found(parse(plan, bad)) == [
        (
            row_line,
            "summary-mismatch",
            f"summary: Q2/A/D1 is written 'x{s[('Q2', 'A', 'D1')]}', not a whole number",
        )
    ]
    bad = replace_line(text, row_line, f" | {sum(s[('Q2', 'B', f'D{d}')] for d in range(1, 9))} |", " | 99 |")
    detail_line = line_of(text, "| Q2 Label | B |")
    assert [(f.line, f.code) for f in parse(plan, bad).findings] == [(row_line, "summary-mismatch")]
    assert f"(line {detail_line})" in parse(plan, bad).findings[0].message


# --------------------------------------------------------------------------- re-score tables


def test_wide_file_with_rescore_tables_is_valid_with_one_warning_per_table(plan: Plan) -> None:
    text = read("wide_rescored.md")
    sheet = parse(plan, text, LOGICIAN)
    assert sheet.ok and sheet.layout == "wide" and len(sheet.cells) == 160
    headers = [
        line_of(text, "| Item | D7' |"),
        line_of(text, "| Q (Test B) | Original D7 |"),
        line_of(text, "| Q (Test B) | Original D8 |"),
    ]
    assert [(f.line, f.code, f.severity) for f in sheet.findings] == [
        (h, "amended-in-file", "warning") for h in headers
    ]
    hint = (
        "the first table's values stand. Record them as an amendment: "
        f"aoven-git amend import {LOGICIAN} --amendment ID"
    )
    assert all(f.message.endswith(hint) for f in sheet.findings)
    assert sheet.findings[0].message.startswith("re-score table: 20 new value(s) (Q1/B/D7 ")
    # the first table's values stand
    wide_rows = {(c[0].split()[0], c[1]): c for _, c in rows_after(text, "| Q | Cond |")}
    cells = {c.key: c.score for c in sheet.cells}
    for q in range(1, 11):
        for d in (7, 8):
            assert cells[CellKey(f"Q{q}", "B", f"D{d}")] == int(wide_rows[(f"Q{q}", "B")][1 + d])


def test_rescores_are_extracted_with_original_and_sealed_values(plan: Plan) -> None:
    text = read("wide_rescored.md")
    got = rescores(plan, LOGICIAN, text.encode())
    primed = rows_after(text, "| Item | D7' |")
    originals = {
        d: {c[0]: int(c[1]) for _, c in rows_after(text, f"| Q (Test B) | Original D{d} |")} for d in (7, 8)
    }
    expected = []
    for line, cells in primed:
        q = cells[0][:-1]
        for d, value in ((7, cells[1]), (8, cells[2])):
            expected.append((f"{q}/B/D{d}", int(value), line, originals[d][q]))
    assert [(str(r.key), r.new, r.line, r.original) for r in got] == expected
    assert all(r.sealed == r.original for r in got)  # the fixture's Original columns are right
    assert {r.citation for r in got} == {"the list at the end"}


def test_an_original_value_that_contradicts_the_cell_is_an_error(plan: Plan) -> None:
    text = read("wide_rescored.md")
    row_line, cells = rows_after(text, "| Q (Test B) | Original D7 |")[2]
    sealed_line = line_of(text, "| Q3 Layoffs | B |")
    wrong = (int(cells[1]) + 1) % 4
    bad = replace_line(text, row_line, f"| Q3 | {cells[1]} |", f"| Q3 | {wrong} |")
    errors = [(f.line, f.code, f.message) for f in parse(plan, bad, LOGICIAN).errors]
    assert errors == [
        (
            row_line,
            "summary-mismatch",
            f"Q3/B/D7: the re-score table gives the original score as {wrong}, but line {sealed_line} "
            f"scores it {cells[1]}",
        )
    ]


def test_conflicting_and_unusable_rescores_are_warnings(plan: Plan) -> None:
    text = read("wide_rescored.md")
    row_line, cells = rows_after(text, "| Q (Test B) | Original D8 |")[0]
    primed_line = rows_after(text, "| Item | D7' |")[0][0]
    other = (int(cells[2]) + 1) % 4
    bad = replace_line(text, row_line, f"| {cells[2]} | the list", f"| {other} | the list")
    sheet = parse(plan, bad, LOGICIAN)
    assert sheet.ok
    conflict = [(f.line, f.message) for f in sheet.findings if f.code == "rescore-conflict"]
    assert conflict == [
        (row_line, f"Q1/B/D8: re-scored {other} here but {cells[2]} at line {primed_line} (first kept)")
    ]
    bad = replace_line(text, row_line, f"| {cells[2]} | the list", "| 7 | the list")
    invalid = [
        (f.line, f.message) for f in parse(plan, bad, LOGICIAN).findings if f.code == "rescore-invalid"
    ]
    assert invalid == [(row_line, "Q1/B/D8: re-score 7 is not a whole number on the scale 0–3")]
    assert [r.new for r in rescores(plan, LOGICIAN, bad.encode()) if r.key == CellKey("Q1", "B", "D8")] == [
        int(cells[2])
    ]


def test_a_later_plain_table_stays_rescored_in_file_but_fused_ids_are_a_rescore(plan: Plan) -> None:
    s = scores(9)
    plain = "\n| Q | Cond | D7 |\n|---|---|---|\n| Q2 | B | 3 |\n"
    text = wide(s) + plain
    assert [(f.line, f.code) for f in parse(plan, text).findings] == [
        (len(text.splitlines()), "rescored-in-file")
    ]
    fused = "\n| Item | D7 |\n|---|---|\n| Q2B | 3 |\n"
    text = wide(s) + fused
    sheet = parse(plan, text)
    assert [(f.line, f.code) for f in sheet.findings] == [(line_of(text, "| Item | D7 |"), "amended-in-file")]
    assert [(str(r.key), r.new, r.sealed) for r in rescores(plan, CTO, text.encode())] == [
        ("Q2/B/D7", 3, s[("Q2", "B", "D7")])
    ]


def test_fused_item_ids_in_the_first_table_are_cells(plan: Plan) -> None:
    s = scores(3)
    lines = [FM, "| Item | " + " | ".join(f"D{d}" for d in range(1, 9)) + " |", "|---|" + "---|" * 8]
    for q in range(1, 11):
        for c in "AB":
            vals = [s[(f"Q{q}", c, f"D{d}")] for d in range(1, 9)]
            shown = [
                f"{v} #8" if d == 1 and v else f"{v} #5" if d == 5 and v else str(v)
                for d, v in enumerate(vals, 1)
            ]
            lines.append(f"| Q{q}{c} | " + " | ".join(shown) + " |")
    sheet = parse(plan, "\n".join(lines) + "\n")
    assert sheet.findings == ()
    assert {(c.key.question, c.key.condition, c.key.dimension): c.score for c in sheet.cells} == s


# --------------------------------------------------------------------------- second layer


def test_b_only_second_layer_table_reads_every_cell(layer2_plan: Plan) -> None:
    text = read("scores_cto_layer2.md")
    sheet = parse(layer2_plan, text, "tests/phase2/scores_cto_layer2.md")
    assert sheet.findings == ()
    expected = {}
    for _, cells in rows_after(text, "| Q | C1 marker accuracy |"):
        for d, value in zip(("C1", "C2", "C3"), cells[1:4], strict=True):
            expected[(cells[0].split()[0], "B", d)] = int(value)
    assert len(expected) == 30
    assert {(c.key.question, c.key.condition, c.key.dimension): c.score for c in sheet.cells} == expected
    header = line_of(text, "| Q | C1 marker accuracy |")
    assert [(n.line, n.message) for n in sheet.notes] == [
        (header, 'column "Time-sensitive" ignored: not a score column')
    ]


def test_second_layer_under_headings_that_name_the_condition(layer2_plan: Plan) -> None:
    out = ["# Layer 2", ""]
    for q in range(1, 11):
        out += [f"## Q{q} — Test B Layer 2", "", "| Dim | Score |", "|---|---|"]
        out += [f"| C{d} marker check | {(q + d) % 4} |" for d in (1, 2, 3)]
        out.append("")
    sheet = parse(layer2_plan, "\n".join(out), "tests/phase2/scores_cto_layer2.md")
    assert sheet.findings == ()
    assert len(sheet.cells) == 30 and {c.key.condition for c in sheet.cells} == {"B"}


def test_a_pass_with_one_condition_needs_no_condition_column(plan: Plan) -> None:
    s = scores(6)
    text = wide(s).replace("| Q | Cond |", "| Q |").replace("|---|---|", "|---|", 1)
    text = text.replace("| B | ", "| ").replace("pass: unblinded", "pass: blinded")
    text = "\n".join(t for t in text.split("\n") if "| A | " not in t)
    sheet = parse(plan, text, "tests/phase2/scores_cto_blinded.md")
    assert {c.key: c.score for c in sheet.cells} == {CellKey(*k): v for k, v in s.items() if k[1] == "B"}
    assert sheet.findings == () and len(sheet.cells) == 80
    # two conditions: without a condition column the table cannot be placed
    text = text.replace("pass: blinded", "pass: unblinded")
    header = line_of(text, "| Q | D1 |")
    assert (header, "section-context-missing") in [(f.line, f.code) for f in parse(plan, text).findings]


# --------------------------------------------------------------------------- misspelt headers


@pytest.mark.parametrize(
    ("layout", "old", "new", "message"),
    [
        (wide, "| Q | Cond |", "| Q | Conditon |", 'unknown column "Conditon" (did you mean "Condition"?)'),
        (wide, "| D3 |", "| Dim3 |", 'unknown column "Dim3" (did you mean "D3"?)'),
        (long, "| Condition |", "| Conditon |", 'unknown column "Conditon" (did you mean "Condition"?)'),
        (long, "| Dimension |", "| Dimenson |", 'unknown column "Dimenson" (did you mean "Dimension"?)'),
        (long, "| Score |", "| Scroe |", 'unknown column "Scroe" (did you mean "Score"?)'),
        (long, "| Question |", "| Qestion |", 'unknown column "Qestion" (did you mean "Question"?)'),
    ],
)
def test_a_misspelt_header_is_named_with_a_suggestion(
    plan: Plan, layout, old: str, new: str, message: str
) -> None:
    text = layout(scores()).replace(old, new, 1)
    assert found(parse(plan, text)) == [(line_of(text, new), "unknown-column", message)]


def test_sectioned_misspelt_header_is_reported_per_table(plan: Plan) -> None:
    text = sectioned(scores()).replace("| Dim | Score |", "| Dimm | Score |")
    sheet = parse(plan, text)
    assert {f.message for f in sheet.findings} == {'unknown column "Dimm" (did you mean "Dim"?)'}
    assert len(sheet.findings) == 20 and {f.code for f in sheet.findings} == {"unknown-column"}


def test_extra_columns_are_ignored_not_errors(plan: Plan) -> None:
    text = wide(scores()).replace("| Σ |", "| Σ | Time-sensitive | Mechanism | Totals |")
    text = text.replace("|---|\n", "|---|---|---|---|\n", 1)
    sheet = parse(plan, text)
    assert sheet.findings == () and len(sheet.cells) == 160
    assert [n.message for n in sheet.notes] == [
        f'column "{name}" ignored: not a score column' for name in ("Time-sensitive", "Mechanism", "Totals")
    ]


# --------------------------------------------------------------------------- validate --verbose


def test_validate_verbose_lists_ignored_columns_and_tables(tmp_path: Path) -> None:
    root = tmp_path / "study"
    (root / "tests" / "phase2").mkdir(parents=True)
    (root / "aoven.yaml").write_text(layer2_plan_text(), "utf-8")
    shutil.copy(FIXTURES / "scores_cto_layer2.md", root / "tests" / "phase2" / "scores_cto_layer2.md")
    shutil.copy(FIXTURES / "wide_rescored.md", root / "tests" / "phase2" / "scores_logician.md")
    r = run_cli("validate", "--verbose", cwd=root)
    assert r.code == 0, r.output
    layer2 = "tests/phase2/scores_cto_layer2.md"
    assert f"{layer2}: note: cto/layer2/main, wide layout, 30 cells" in r.out
    header = line_of(read("scores_cto_layer2.md"), "| Q | C1")
    assert f'{layer2}:{header}: note: column "Time-sensitive" ignored: not a score column' in r.out
    primed = line_of(read("wide_rescored.md"), "| Item |")
    assert f"scores_logician.md:{primed}: note: re-score table: 20 new value(s), not read" in r.out
    quiet = run_cli("validate", cwd=root)
    assert "note:" not in quiet.out and "amended-in-file" in quiet.out
    doc = json.loads(run_cli("validate", "--verbose", "--format", "json", cwd=root).out)
    notes = {f["path"]: f["notes"] for f in doc["files"]}
    assert notes[layer2] == [
        {"line": header, "message": 'column "Time-sensitive" ignored: not a score column'}
    ]
    plain = json.loads(run_cli("validate", "--format", "json", cwd=root).out)
    assert all("notes" not in f for f in plain["files"])


def test_validate_reports_a_wrong_summary_with_file_and_line(tmp_path: Path) -> None:
    root = tmp_path / "study"
    (root / "tests" / "phase2").mkdir(parents=True)
    shutil.copy(DEFAULT_PLAN, root / "aoven.yaml")
    text = read("sectioned_summary.md")
    target = root / "tests" / "phase2" / "scores_cto.md"
    target.write_text(text, "utf-8")
    assert run_cli("validate", cwd=root).code == 0
    row_line, cells = next((n, c) for n, c in rows_after(text, "| Q | D1 A |") if c[0] == "Q2")
    score, detail_line = detail_scores(text)[("Q2", "A", "D1")]
    target.write_text(
        replace_line(text, row_line, f"| Q2 | {cells[1]} |", f"| Q2 | {(score + 1) % 4} |"), "utf-8"
    )
    r = run_cli("validate", cwd=root)
    assert r.code == 1
    assert (
        f"tests/phase2/scores_cto.md:{row_line}: error[summary-mismatch]: summary: Q2/A/D1 is written "
        f"{(score + 1) % 4}, but line {detail_line} scores it {score}"
    ) in r.out
