"""Score-file parser: the three layouts, every per-file error code with its line, front matter."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from aoven_git import schemas
from aoven_git.model import CellKey, Plan
from aoven_git.plan import load_plan, parse_plan
from aoven_git.scorefile import front_matter, parse_score_file, set_front_matter

ROOT = Path(__file__).resolve().parent.parent
PLAN_FILE = ROOT / "aoven_git" / "templates" / "aoven.yaml"
EXAMPLE = ROOT / "tests" / "phase2"
CTO = "tests/phase2/scores_cto.md"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(PLAN_FILE)


def scores(seed: int = 1) -> dict[tuple[str, str, str], int]:
    rng = random.Random(seed)
    return {(f"Q{q}", c, f"D{d}"): rng.randint(0, 3) for q in range(1, 11) for c in "AB" for d in range(1, 9)}


def note(dim: str, score: int) -> str:
    """Annotation for annotate:true dimensions (D1 → #8, D5 → #5) when the score is above 0."""
    if score == 0:
        return ""
    return {"D1": "#8", "D5": "#5"}.get(dim, "")


FM = "---\nrater: cto\npass: unblinded\nround: main\nplan_version: 1\n---\n"


def wide(s: dict[tuple[str, str, str], int], *, front: str = FM) -> str:
    out = [
        front,
        "# CTO",
        "",
        "| Q | Cond | D1 | D2 | D3 | D4 | D5 | D6 | D7 | D8 | Σ |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for q in range(1, 11):
        for c in "AB":
            vals = [s[(f"Q{q}", c, f"D{d}")] for d in range(1, 9)]
            cells = [f"{v} {note(f'D{d}', v)}".strip() for d, v in zip(range(1, 9), vals, strict=True)]
            out.append(f"| Q{q} Label | {c} | " + " | ".join(cells) + f" | {sum(vals)} |")
    return "\n".join(out) + "\n"


def long(s: dict[tuple[str, str, str], int], *, front: str = FM) -> str:
    out = [
        front,
        "Intro text.",
        "",
        "| Question | Condition | Dimension | Score | Transition | Citation |",
        "|---|---|---|---|---|---|",
    ]
    for (q, c, d), v in s.items():
        out.append(f"| {q} | {c} | {d} | {v} | {note(d, v)} |  |")
    return "\n".join(out) + "\n"


def sectioned(s: dict[tuple[str, str, str], int], *, front: str = FM) -> str:
    out = [front, "# Sections", ""]
    for q in range(1, 11):
        out += [f"## Q{q} — a question", ""]
        for c, title in (("A", "### Test A (baseline)"), ("B", "### Condition B")):
            out += [title, "", "| Dim | Score | Citation |", "|---|---|---|"]
            for d in range(1, 9):
                v = s[(f"Q{q}", c, f"D{d}")]
                out.append(f"| L1-D{d} | **{v}** | said {note(f'D{d}', v)} |  ")
            out.append("")
    return "\n".join(out) + "\n"


def set_row(text: str, q: str, c: str, d: str, rest: str) -> str:
    """Replace the long-layout row of a cell by `| q | c | d | rest`."""
    lines = text.splitlines()
    i = line_of(text, f"| {q} | {c} | {d} |") - 1
    lines[i] = f"| {q} | {c} | {d} | {rest}"
    return "\n".join(lines) + "\n"


def parse(plan: Plan, text: str | bytes, path: str = CTO, **kw: bool):
    data = text.encode("utf-8") if isinstance(text, str) else text
    return parse_score_file(plan, path, data, **kw)


def codes(sheet) -> list[str]:
    return [f.code for f in sheet.findings]


def at(sheet, code: str) -> list[int | None]:
    return [f.line for f in sheet.findings if f.code == code]


def line_of(text: str, needle: str) -> int:
    for i, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in text")


# --------------------------------------------------------------------------- layouts


@pytest.mark.parametrize("layout", [wide, long, sectioned])
def test_clean_file_of_each_layout_passes(plan: Plan, layout) -> None:
    s = scores()
    sheet = parse(plan, layout(s))
    assert sheet.findings == ()
    assert sheet.layout == layout.__name__
    assert {(c.key.question, c.key.condition, c.key.dimension): c.score for c in sheet.cells} == s


def test_three_layouts_normalise_to_identical_cells(plan: Plan) -> None:
    s = scores(seed=5)
    sheets = [parse(plan, f(s)) for f in (wide, long, sectioned)]

    def norm(sheet):
        return sorted((c.key, c.score, c.transitions) for c in sheet.cells)

    assert norm(sheets[0]) == norm(sheets[1]) == norm(sheets[2])
    assert len(sheets[0].cells) == 160


def test_cell_lines_are_file_lines(plan: Plan) -> None:
    s = scores()
    text = long(s)
    sheet = parse(plan, text)
    cell = next(c for c in sheet.cells if c.key == CellKey("Q4", "B", "D6"))
    assert text.splitlines()[cell.line - 1].startswith("| Q4 | B | D6 |")
    text = wide(s)
    cell = next(c for c in parse(plan, text).cells if c.key == CellKey("Q7", "A", "D3"))
    assert cell.line == line_of(text, "| Q7 Label | A |")


@pytest.mark.parametrize(
    "name",
    [
        "scores_cto.md",
        "scores_logician.md",
        "scores_redteam.md",
        "scores_cto_blinded.md",
        "scores_logician_blinded.md",
        "scores_redteam_blinded.md",
    ],
)
def test_example_study_files_are_clean(plan: Plan, name: str) -> None:
    path = EXAMPLE / name
    if not path.exists():
        pytest.skip("example score file not written yet")
    sheet = parse(plan, path.read_bytes(), f"tests/phase2/{name}")
    assert sheet.errors == ()
    expected = 160 if "blinded" not in name else 80
    assert len(sheet.cells) == expected


def test_wide_annotations_in_cell_and_notes_column(plan: Plan) -> None:
    s = scores()
    text = wide(s).replace("| Σ |", "| Σ | Notes |").replace("|---|\n", "|---|---|\n", 1)
    row = line_of(text, "| Q1 Label | A |")
    lines = text.splitlines()
    vals = [s[("Q1", "A", f"D{d}")] for d in range(1, 9)]
    vals[0], vals[4] = 2, 3
    lines[row - 1] = (
        "| Q1 Label | A | 2 | "
        + " | ".join(map(str, vals[1:4]))
        + " | 3 (#6, #5) | "
        + " | ".join(map(str, vals[5:]))
        + f' | {sum(vals)} | the "quote" #7 |'
    )
    sheet = parse(plan, "\n".join(lines) + "\n")
    assert sheet.errors == ()
    cells = {c.key: c for c in sheet.cells}
    assert cells[CellKey("Q1", "A", "D1")].transitions == (7,)  # from the Notes column
    assert cells[CellKey("Q1", "A", "D5")].transitions == (5, 6)
    assert "quote" in cells[CellKey("Q1", "A", "D1")].citation


def test_markdown_details(plan: Plan) -> None:
    """Tables in fences and HTML comments are not tables; escaped pipes, emphasis, trailing spaces."""
    s = scores()
    body = long(s)
    decoys = (
        "```\n| Question | Condition | Dimension | Score |\n|---|---|---|---|\n| Q1 | A | D1 | 9 |\n```\n\n"
        "<!--\n| Question | Condition | Dimension | Score |\n|---|---|---|---|\n| Q1 | A | D1 | 9 |\n-->\n\n"
        "| Score | Meaning |\n|---|---|\n| 0 | none |\n\n"
    )
    text = body.replace("Intro text.\n", "Intro text.\n\n" + decoys)
    text = text.replace("| Q1 | A | D2 | ", "| Q1 | A | *D2* | ")
    text = text.replace(
        "| Q1 | A | D3 | " + str(s[("Q1", "A", "D3")]) + " |  |  |",
        "| Q1 | A | D3 | __" + str(s[("Q1", "A", "D3")]) + '__   | | a \\| b "x" |   ',
    )
    sheet = parse(plan, text)
    assert sheet.findings == ()
    cells = {c.key: c for c in sheet.cells}
    assert cells[CellKey("Q1", "A", "D1")].score == s[("Q1", "A", "D1")]
    assert cells[CellKey("Q1", "A", "D3")].citation == 'a | b "x"'


def test_sectioned_headings_and_bare_condition(plan: Plan) -> None:
    s = scores()
    text = (
        sectioned(s).replace("### Test A (baseline)", "### A").replace("### Condition B", "### B — treated")
    )
    sheet = parse(plan, text)
    assert sheet.findings == ()
    assert len(sheet.cells) == 160


def test_condition_sections_around_question_sections(plan: Plan) -> None:
    s = scores()
    out = [FM]
    for c in "AB":
        out += [f"# Condition {c}", ""]
        for q in range(1, 11):
            out += [f"## Q{q}", "", "| Dim | Score |", "|---|---|"]
            out += [
                f"| D{d} | {s[(f'Q{q}', c, f'D{d}')]} {note(f'D{d}', s[(f'Q{q}', c, f'D{d}')])} |"
                for d in range(1, 9)
            ]
            out.append("")
    sheet = parse(plan, "\n".join(out))
    assert sheet.findings == ()
    assert {(c.key.question, c.key.condition, c.key.dimension): c.score for c in sheet.cells} == s


def test_heading_that_only_starts_with_a_condition_letter_is_prose(plan: Plan) -> None:
    text = FM + "## Q1\n\n### A note on method\n\n| Dim | Score |\n|---|---|\n| D1 | 1 #8 |\n"
    sheet = parse(plan, text)
    assert at(sheet, "section-context-missing") == [line_of(text, "| Dim | Score |")]


# --------------------------------------------------------------------------- error codes


def test_unknown_question(plan: Plan) -> None:
    text = long(scores()) + "| Q99 | A | D1 | 1 | #8 |  |\n"
    assert at(parse(plan, text), "unknown-question") == [line_of(text, "| Q99 |")]
    text = sectioned(scores()).replace("## Q3 — a question", "## Q16 — extra")
    sheet = parse(plan, text)
    assert at(sheet, "unknown-question") == [line_of(text, "## Q16")]


def test_unknown_condition(plan: Plan) -> None:
    text = long(scores()) + "| Q1 | C | D1 | 1 | #8 |  |\n"
    assert at(parse(plan, text), "unknown-condition") == [line_of(text, "| Q1 | C |")]
    text = sectioned(scores()).replace("### Condition B", "### Condition Z", 1)
    assert at(parse(plan, text), "unknown-condition") == [line_of(text, "### Condition Z")]


def test_unknown_dimension(plan: Plan) -> None:
    text = long(scores()) + "| Q1 | A | D9 | 1 |  |  |\n"
    assert at(parse(plan, text), "unknown-dimension") == [line_of(text, "| D9 |")]
    text = wide(scores()).replace("| D8 | Σ |", "| D8 | D9 | Σ |").replace("|---|\n", "|---|---|\n", 1)
    assert at(parse(plan, text), "unknown-dimension") == [line_of(text, "| D9 |")]


def test_cell_not_in_pass(plan: Plan) -> None:
    s = {k: v for k, v in scores().items() if k[1] == "B"}
    fm = FM.replace("unblinded", "blinded")
    text = long(s, front=fm) + "| Q2 | A | D4 | 1 |  |  |\n"
    sheet = parse(plan, text, "tests/phase2/scores_cto_blinded.md")
    assert at(sheet, "cell-not-in-pass") == [line_of(text, "| Q2 | A | D4 |")]
    assert len(sheet.cells) == 80


@pytest.mark.parametrize("bad", ["2.5", "x", "1/2", "#8"])
def test_score_not_integer(plan: Plan, bad: str) -> None:
    text = set_row(long(scores()), "Q2", "B", "D3", f"{bad} |  |  |")
    sheet = parse(plan, text)
    assert at(sheet, "score-not-integer") == [line_of(text, "| Q2 | B | D3 |")]
    assert CellKey("Q2", "B", "D3") not in {c.key for c in sheet.cells}
    assert "missing-cell" not in codes(sheet)  # present but wrong: one finding, not two


@pytest.mark.parametrize("bad", ["4", "-1", "99999999999"])
def test_score_off_scale(plan: Plan, bad: str) -> None:
    s = scores()
    s[("Q5", "A", "D7")] = 0
    text = set_row(long(s), "Q5", "A", "D7", f"{bad} |  |  |")
    assert at(parse(plan, text), "score-off-scale") == [line_of(text, "| Q5 | A | D7 |")]


def test_duplicate_cell_in_one_table(plan: Plan) -> None:
    text = long(scores()) + "| Q1 | A | D7 | 3 |  |  |\n"
    sheet = parse(plan, text)
    assert at(sheet, "duplicate-cell") == [len(text.splitlines())]
    assert {c.key: c.score for c in sheet.cells}[CellKey("Q1", "A", "D7")] == scores()[("Q1", "A", "D7")]


def test_rescored_in_file_is_a_warning_and_ignored(plan: Plan) -> None:
    s = scores()
    rescore = (
        "\n\nLater:\n\n| Question | Condition | Dimension | Score |\n|---|---|---|---|\n| Q1 | A | D7 | 3 |\n"
    )
    text = long(s) + rescore
    sheet = parse(plan, text)
    assert at(sheet, "rescored-in-file") == [len(text.splitlines())]
    assert sheet.ok
    assert {c.key: c.score for c in sheet.cells}[CellKey("Q1", "A", "D7")] == s[("Q1", "A", "D7")]


def test_missing_cells(plan: Plan) -> None:
    text = long(scores())
    lines = [
        ln
        for ln in text.splitlines()
        if not ln.startswith("| Q1 | A | D2 |") and not ln.startswith("| Q2 | B |")
    ]
    text = "\n".join(lines) + "\n"
    sheet = parse(plan, text)
    missing = {f.message.split(":")[0]: f for f in sheet.findings if f.code == "missing-cell"}
    assert set(missing) == {"Q1/A", "Q2/B"}
    assert missing["Q1/A"].line == line_of(text, "| Q1 | A | D1 |")  # the item's first row
    assert "D2" in missing["Q1/A"].message and "D1" not in missing["Q1/A"].message
    assert missing["Q2/B"].line == line_of(text, "| Question |")  # no row at all: the table


def test_blank_cells_are_missing(plan: Plan) -> None:
    text = wide(scores())
    i = line_of(text, "| Q3 Label | A |") - 1
    lines = text.splitlines()
    cells = lines[i].split("|")
    cells[3], cells[4], cells[-2] = " ", " - ", " "  # D1 blank, D2 a dash, no sum
    lines[i] = "|".join(cells)
    sheet = parse(plan, "\n".join(lines))
    assert at(sheet, "missing-cell") == [i + 1]
    assert "D1, D2" in sheet.findings[0].message


def test_sum_mismatch(plan: Plan) -> None:
    s = scores()
    text = wide(s)
    row = line_of(text, "| Q6 Label | B |")
    total = sum(s[("Q6", "B", f"D{d}")] for d in range(1, 9))
    lines = text.splitlines()
    lines[row - 1] = lines[row - 1].replace(f"| {total} |", f"| {total + 1} |")
    sheet = parse(plan, "\n".join(lines))
    assert at(sheet, "sum-mismatch") == [row]
    lines[row - 1] = lines[row - 1].replace(f"| {total + 1} |", "| ten |")
    assert at(parse(plan, "\n".join(lines)), "sum-mismatch") == [row]


def test_file_too_large(plan: Plan) -> None:
    data = long(scores()).encode() + b"x" * (1024 * 1024)
    sheet = parse(plan, data)
    assert codes(sheet) == ["file-too-large"] and at(sheet, "file-too-large") == [1]


def test_not_utf8_reports_the_line_of_the_bad_byte(plan: Plan) -> None:
    data = long(scores()).encode().replace(b"Intro text.", b"Intro \xff text.")
    sheet = parse(plan, data)
    assert at(sheet, "not-utf8") == [line_of(long(scores()), "Intro text.")]


def test_symlink(plan: Plan) -> None:
    sheet = parse(plan, b"scores_logician.md", is_symlink=True)
    assert codes(sheet) == ["symlink"] and at(sheet, "symlink") == [1]


def test_front_matter_mismatch(plan: Plan) -> None:
    text = long(scores(), front=FM.replace("rater: cto", "rater: logician"))
    sheet = parse(plan, text)
    assert at(sheet, "front-matter-mismatch") == [2]
    text = long(scores(), front=FM.replace("pass: unblinded", "pass: blinded"))
    assert at(parse(plan, text), "front-matter-mismatch") == [3]


def test_front_matter_invalid(plan: Plan) -> None:
    unclosed = "---\nrater: cto\n\n# no end\n\n" + long(scores(), front="")
    sheet = parse(plan, unclosed)
    assert at(sheet, "front-matter-invalid") == [1]
    bad_yaml = long(scores(), front="---\nrater: cto\npass: [unblinded\n---\n")
    assert at(parse(plan, bad_yaml), "front-matter-invalid") == [4]
    wrong_type = long(scores(), front="---\nrater: cto\nround: [main]\n---\n")
    assert at(parse(plan, wrong_type), "front-matter-invalid") == [3]
    not_a_map = long(scores(), front="---\n- a\n- b\n---\n")
    assert at(parse(plan, not_a_map), "front-matter-invalid") == [2]


def test_front_matter_values_yaml_cannot_hold_name_their_own_line(plan: Plan) -> None:
    # a date and a non-scalar key are refused after parsing, by the plain-data conversion; its
    # lines used to ignore the front matter's offset (date reported one line early, key at line 2)
    dated = long(scores(), front=FM.replace("round: main\n", "round: main\nnonce: 2024-01-01\n"))
    assert at(parse(plan, dated), "front-matter-invalid") == [5]
    keyed = long(scores(), front=FM.replace("round: main\n", "round: main\n? [a]\n: b\n"))
    assert at(parse(plan, keyed), "front-matter-invalid") == [5]


def test_front_matter_unknown_key_is_a_warning(plan: Plan) -> None:
    sheet = parse(plan, long(scores(), front=FM.replace("round: main\n", "round: main\ncolour: blue\n")))
    assert at(sheet, "front-matter-unknown-key") == [5]
    assert sheet.ok


def test_plan_version_mismatch(plan: Plan) -> None:
    text = long(scores(), front=FM.replace("plan_version: 1", "plan_version: 2"))
    sheet = parse(plan, text)
    assert at(sheet, "plan-version-mismatch") == [5]
    assert sheet.plan_version == 2


def test_unknown_rater(plan: Plan) -> None:
    sheet = parse(plan, long(scores(), front=""), "tests/phase2/scores_bob.md")
    assert at(sheet, "unknown-rater") == [1]
    assert "cto" in sheet.findings[0].message  # lists the known raters


def test_no_score_table(plan: Plan) -> None:
    sheet = parse(plan, FM + "\nJust prose.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert codes(sheet) == ["no-score-table"] and at(sheet, "no-score-table") == [1]


def test_missing_annotation(plan: Plan) -> None:
    s = scores()
    s[("Q2", "A", "D1")] = 2
    text = set_row(long(s), "Q2", "A", "D1", "2 |  |  |")
    sheet = parse(plan, text)
    assert at(sheet, "missing-annotation") == [line_of(text, "| Q2 | A | D1 |")]
    assert not sheet.ok
    lenient = parse_plan(
        PLAN_FILE.read_bytes().replace(b"require_annotations: true", b"require_annotations: false")
    )
    sheet = parse(lenient, text)
    assert [f.severity for f in sheet.findings if f.code == "missing-annotation"] == ["warning"]
    assert sheet.ok


def test_annotation_in_citation_counts(plan: Plan) -> None:
    s = scores()
    s[("Q2", "A", "D5")] = 1
    text = set_row(long(s), "Q2", "A", "D5", '1 |  | "it is what it is" #6 |')
    assert parse(plan, text).findings == ()


def test_wrong_transition(plan: Plan) -> None:
    s = scores()
    s[("Q3", "B", "D1")] = 2
    text = set_row(long(s), "Q3", "B", "D1", "2 | #3 |  |")
    sheet = parse(plan, text)
    assert at(sheet, "wrong-transition") == [line_of(text, "| Q3 | B | D1 |")]
    assert "D3" in next(f.message for f in sheet.findings if f.code == "wrong-transition")
    text = set_row(long(s), "Q3", "B", "D2", "1 #99 |  |  |")
    assert at(parse(plan, text), "wrong-transition") == [line_of(text, "| Q3 | B | D2 |")]
    text = set_row(long(s), "Q3", "B", "D3", '1 |  | "quote" #8 |')  # #8 belongs to D1
    assert at(parse(plan, text), "wrong-transition") == [line_of(text, "| Q3 | B | D3 |")]


def test_section_context_missing(plan: Plan) -> None:
    text = FM + "\n| Dim | Score |\n|---|---|\n| D1 | 0 |\n"
    assert at(parse(plan, text), "section-context-missing") == [8]


def test_section_headings_reset(plan: Plan) -> None:
    """A table after an unrelated heading of the question's level has no question any more."""
    s = scores()
    text = sectioned(s) + "\n## Appendix\n\n| Dim | Score |\n|---|---|\n| D1 | 3 |\n"
    sheet = parse(plan, text)
    assert at(sheet, "section-context-missing") == [line_of(text, "## Appendix") + 2]


def test_schema_is_2020_12_with_descriptions() -> None:
    schema = schemas.schema("scores")
    assert schema["$schema"].endswith("2020-12/schema")
    assert all("description" in p for p in schema["properties"].values())
    assert all("description" in p for p in schema["$defs"]["cell"]["properties"].values())


# --------------------------------------------------------------------------- front matter helpers


def test_set_front_matter_replaces_and_adds_keeping_other_bytes() -> None:
    data = b"---\nrater: cto   # me\npass: unblinded\n---\n\n# Body\r\nkept  \n"
    out = set_front_matter(data, nonce="3fa9e1")
    assert out == b'---\nrater: cto   # me\npass: unblinded\nnonce: "3fa9e1"\n---\n\n# Body\r\nkept  \n'
    out2 = set_front_matter(out, nonce="abc")
    assert out2 == out.replace(b'nonce: "3fa9e1"', b"nonce: abc")
    assert front_matter(out2) == {"rater": "cto", "pass": "unblinded", "nonce": "abc"}


def test_set_front_matter_creates_it_and_keeps_crlf() -> None:
    body = b"# Scores\r\n\r\n| a |\r\n"
    out = set_front_matter(body, nonce="1e5")
    assert out.endswith(body)
    assert front_matter(out) == {"nonce": "1e5"}  # quoted: YAML would read 1e5 as a number
    crlf = b"---\r\nrater: cto\r\n---\r\nbody\r\n"
    out = set_front_matter(crlf, nonce="n1")
    assert out == b"---\r\nrater: cto\r\nnonce: n1\r\n---\r\nbody\r\n"


def test_set_front_matter_replaces_multiline_value() -> None:
    data = b"---\nnonce: >\n  long\n  value\nrater: cto\n---\nbody\n"
    out = set_front_matter(data, nonce="new")
    assert out == b"---\nnonce: new\nrater: cto\n---\nbody\n"


def test_front_matter_absent_or_broken_is_empty() -> None:
    assert front_matter(b"# no front matter\n") == {}
    assert front_matter(b"---\nrater: cto\n") == {}
    assert front_matter(b"\xff\xfe") == {}


def test_nonce_and_plan_version_are_read(plan: Plan) -> None:
    data = set_front_matter(long(scores()).encode(), nonce="00ff")
    sheet = parse(plan, data)
    assert sheet.findings == () and sheet.nonce == "00ff" and sheet.plan_version == 1
