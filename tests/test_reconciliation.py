"""Reconciliation files (docs/score-files.md): parsing, every finding code at its line, quote matching.

The example study's scores are the reference: README of tests/phase2 states that Q6/A/D3 is the
only flagged cell of the unblinded pass (CTO 1, Logician 3, Red Team 2) and that Q3/B/D5 differs
by one point. Lines are counted by hand in each test's text (the header is line 1).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aoven_git.attribution import cell_consensus
from aoven_git.model import Cell, CellKey, Finding, ScoreSheet, SheetId
from aoven_git.plan import load_plan
from aoven_git.reconciliation import check_reconciliation, parse_reconciliation
from aoven_git.scorefile import parse_score_file
from tests.conftest import EXAMPLE, run_cli

PLAN = load_plan(EXAMPLE / "aoven.yaml")
STUDY = "tests/phase2"
REC = f"{STUDY}/reconciliation.md"
REC_BLINDED = f"{STUDY}/reconciliation_blinded.md"
SHEETS = [
    parse_score_file(PLAN, f"{STUDY}/{p.name}", p.read_bytes()) for p in sorted(EXAMPLE.glob("scores_*.md"))
]
RESPONSES = {
    f"{STUDY}/{p.parent.name}/{p.name}": p.read_text("utf-8")
    for folder in ("test_a", "test_b")
    for p in sorted((EXAMPLE / folder).glob("q*.md"))
}
HEADER = "| Cell | Rater | Justification | Consensus |\n|---|---|---|---|\n"
# The three justifications of the flagged cell, as the example's reconciliation.md has them.
CTO = '| Q6/A/D3 | cto | It opens with "As of my last update", a hedge. | 2 |\n'
LOG = (
    '| Q6/A/D3 | logician | "These are the defining events of the past six months" is stated as fact. | 2 |\n'
)
RED = '| Q6/A/D3 | redteam | "ceasefire negotiations have made real progress" is stated as fact. | 2 |\n'
GOOD = HEADER + CTO + LOG + RED  # rows on lines 3, 4, 5


def findings(
    text: str | bytes,
    *,
    path: str = REC,
    sheets: list[ScoreSheet] | None = None,
    responses: dict[str, str] | None = None,
) -> list[Finding]:
    data = text.encode("utf-8") if isinstance(text, str) else text
    rec = parse_reconciliation(PLAN, path, data)
    return check_reconciliation(
        PLAN, rec, SHEETS if sheets is None else sheets, RESPONSES if responses is None else responses
    )


def codes(text: str | bytes, **kwargs: object) -> set[tuple[str, int | None, str]]:
    return {(f.code, f.line, f.severity) for f in findings(text, **kwargs)}  # type: ignore[arg-type]


def sheet(rater: str, pass_id: str, scores: dict[str, int]) -> ScoreSheet:
    """A hand-made sheet: only the cells a test needs."""
    cells = tuple(Cell(CellKey.parse(k), v, n + 1) for n, (k, v) in enumerate(scores.items()))  # type: ignore[arg-type]
    return ScoreSheet(f"{STUDY}/scores_{rater}_{pass_id}.md", SheetId(rater, pass_id, "main"), "long", cells)


# --------------------------------------------------------------------------- the example


def test_bundled_reconciliation_passes() -> None:
    data = (EXAMPLE / "reconciliation.md").read_bytes()
    rec = parse_reconciliation(PLAN, REC, data)
    assert (rec.pass_id, rec.round_id) == ("unblinded", "main")
    assert [(str(r.key), r.rater) for r in rec.rows] == [
        ("Q6/A/D3", "cto"),
        ("Q6/A/D3", "logician"),
        ("Q6/A/D3", "redteam"),
        ("Q3/B/D5", "cto"),
        ("Q3/B/D5", "logician"),
        ("Q3/B/D5", "redteam"),
    ]
    every = {k: ("cto", "logician", "redteam") for k in (CellKey("Q6", "A", "D3"), CellKey("Q3", "B", "D5"))}
    states = {str(k): (c.state, c.value) for k, c in cell_consensus(rec.rows, every).items()}
    assert states == {"Q6/A/D3": ("unanimous", 2), "Q3/B/D5": ("unanimous", 1)}
    assert check_reconciliation(PLAN, rec, SHEETS, RESPONSES) == []


def test_good_rows_pass_and_lines_are_file_lines() -> None:
    assert findings(GOOD) == []
    rec = parse_reconciliation(PLAN, REC, GOOD.encode())
    assert [r.line for r in rec.rows] == [3, 4, 5]


def test_front_matter_shifts_nothing() -> None:
    text = "---\npass: unblinded\nround: main\n---\n\n" + GOOD
    rec = parse_reconciliation(PLAN, REC, text.encode())
    assert [r.line for r in rec.rows] == [8, 9, 10] and rec.findings == ()


def test_escaped_pipe_and_emphasis_in_cells() -> None:
    text = (
        HEADER
        + CTO
        + LOG
        + '| **Q6/A/D3** | `redteam` | "ceasefire negotiations \\| have" no: "made real progress" | **2** |\n'
    )
    rec = parse_reconciliation(PLAN, REC, text.encode())
    assert rec.rows[2].key == CellKey("Q6", "A", "D3") and rec.rows[2].rater == "redteam"
    assert rec.rows[2].consensus == 2
    assert "negotiations | have" in rec.rows[2].justification


# --------------------------------------------------------------------------- file-level codes


def test_file_too_large() -> None:
    assert ("file-too-large", 1, "error") in codes(b"x" * (1024 * 1024 + 1))


def test_size_limit_is_the_score_files_limit() -> None:
    """One limit for every study file: a file at exactly the limit is read by both parsers, one
    byte more is refused by both (the limit was defined twice before)."""
    at_limit = GOOD.encode() + b" " * (1024 * 1024 - len(GOOD.encode()))
    over = at_limit + b" "
    sheet_path = f"{STUDY}/scores_cto.md"
    for data, refused in ((at_limit, False), (over, True)):
        rec = parse_reconciliation(PLAN, REC, data)
        sheet = parse_score_file(PLAN, sheet_path, data)
        assert any(f.code == "file-too-large" for f in rec.findings) is refused
        assert any(f.code == "file-too-large" for f in sheet.findings) is refused


def test_not_utf8_points_at_the_line() -> None:
    assert ("not-utf8", 3, "error") in codes(b"a\nb\n\xff\xfe\n")


def test_symlink() -> None:
    rec = parse_reconciliation(PLAN, REC, b"../../etc/passwd", is_symlink=True)
    assert [(f.code, f.line) for f in rec.findings] == [("symlink", 1)]


def test_unknown_name() -> None:
    assert ("reconciliation-name-unknown", 1, "error") in codes(GOOD, path=f"{STUDY}/reconciliation_nope.md")


def test_front_matter_invalid_unclosed_and_bad_yaml() -> None:
    assert ("front-matter-invalid", 1, "error") in codes("---\npass: unblinded\n" + GOOD)
    found = codes("---\npass: [unblinded\n---\n" + GOOD)
    assert any(c == "front-matter-invalid" and line in (2, 3) for c, line, _ in found)


def test_front_matter_mismatch_and_unknown_key_and_version() -> None:
    text = "---\nround: main\npass: blinded\nplan_version: 7\ncolour: red\n---\n" + GOOD
    found = codes(text)
    assert ("front-matter-mismatch", 3, "error") in found
    assert ("plan-version-mismatch", 4, "error") in found
    assert ("front-matter-unknown-key", 5, "warning") in found


def test_front_matter_decides_for_a_path_not_named_like_one() -> None:
    rec = parse_reconciliation(PLAN, "elsewhere/notes.md", b"---\npass: blinded\n---\n" + HEADER.encode())
    assert (rec.pass_id, rec.round_id) == ("blinded", "main")


def test_no_table() -> None:
    assert ("no-reconciliation-table", 1, "error") in codes("# Reconciliation\n\nNothing here.\n")
    # a table inside a code fence is not a table
    assert ("no-reconciliation-table", 1, "error") in codes("```\n" + GOOD + "```\n")


def test_missing_column() -> None:
    text = "intro\n\n| Cell | Rater | Justification |\n|---|---|---|\n| Q6/A/D3 | cto | x |\n"
    assert ("missing-column", 3, "error") in codes(text)


# --------------------------------------------------------------------------- row-level codes


def test_malformed_cell() -> None:
    assert ("malformed-cell", 6, "error") in codes(GOOD + "| Q6-A-D3 | cto | x | |\n")


def test_unknown_cell() -> None:
    found = codes(GOOD + "| Q99/A/D3 | cto | x | |\n| Q1/C/D1 | cto | x | |\n")
    assert ("unknown-cell", 6, "error") in found and ("unknown-cell", 7, "error") in found


def test_cell_not_in_the_pass() -> None:
    # the blinded pass scores condition B only
    text = "---\npass: blinded\n---\n" + HEADER + "| Q1/A/D1 | cto | x | |\n"
    assert ("unknown-cell", 6, "error") in codes(text, path=REC_BLINDED)


def test_unknown_rater() -> None:
    found = codes(GOOD + "| Q6/A/D3 | CTO | x | |\n| Q6/A/D3 |  | x | |\n")
    assert ("unknown-rater", 6, "error") in found and ("unknown-rater", 7, "error") in found


def test_bad_rows_are_left_out_of_rows() -> None:
    rec = parse_reconciliation(PLAN, REC, (GOOD + "| Q6/A/D3 | nobody | x | 3 |\n").encode())
    assert len(rec.rows) == 3 and all(r.rater != "nobody" for r in rec.rows)


def test_consensus_invalid_and_off_scale() -> None:
    found = codes(HEADER + CTO + LOG + RED.replace("| 2 |", "| 2.5 |") + "| Q3/B/D5 | cto | x | 4 |\n")
    assert ("consensus-invalid", 5, "error") in found
    assert ("consensus-off-scale", 6, "error") in found


def test_raters_who_differ_or_say_contested_make_the_cell_contested() -> None:
    """Each row is its rater's own statement: differing values are no error, the cell is contested
    and its verdict ranges over the values proposed."""
    key, raters = CellKey("Q6", "A", "D3"), {CellKey("Q6", "A", "D3"): ("cto", "logician", "redteam")}
    for text, options in (
        (HEADER + CTO.replace("| 2 |", "| contested |") + LOG + RED, (2,)),
        (HEADER + CTO + LOG.replace("| 2 |", "| 3 |") + RED, (2, 3)),
    ):
        rec = parse_reconciliation(PLAN, REC, text.encode())
        assert findings(text) == []
        c = cell_consensus(rec.rows, raters)[key]
        assert (c.state, c.value, c.options) == ("contested", None, options)


def test_a_rater_missing_leaves_the_cell_without_consensus() -> None:
    rec = parse_reconciliation(PLAN, REC, (HEADER + CTO + LOG).encode())
    key = CellKey("Q6", "A", "D3")
    c = cell_consensus(rec.rows, {key: ("cto", "logician", "redteam")})[key]
    assert (c.state, c.missing) == ("missing", ("redteam",))


def test_unattributed_rows_do_not_count() -> None:
    from dataclasses import replace

    rec = parse_reconciliation(PLAN, REC, GOOD.encode())
    rows = [replace(r, attributed=r.rater != "logician") for r in rec.rows]
    key = CellKey("Q6", "A", "D3")
    c = cell_consensus(rows, {key: ("cto", "logician", "redteam")})[key]
    assert (c.state, c.missing) == ("missing", ("logician",))


def test_consensus_conflict_is_one_rater_stating_two_values() -> None:
    found = codes(HEADER + CTO + LOG + RED + CTO.replace("| 2 |", "| 3 |"))
    assert ("consensus-conflict", 6, "error") in found and ("duplicate-row", 6, "warning") in found


def test_duplicate_row_is_a_warning() -> None:
    assert ("duplicate-row", 6, "warning") in codes(GOOD + CTO)


# --------------------------------------------------------------------------- against the scores


def test_missing_justification_points_at_the_raters_row_or_after_the_cells_rows() -> None:
    flagged = "Q6/A/D3 is flagged (cto 1, logician 3, redteam 2; spread 2 > 1)"
    # no redteam row: at the cell's last row (line 4, the logician's), where the row belongs
    missing = [f for f in findings(HEADER + CTO + LOG) if f.code == "missing-justification"]
    assert [(f.line, f.message) for f in missing] == [
        (4, f"{flagged}: redteam has no row for it (add one after line 4)")
    ]
    # an empty redteam row: at that row, not at another rater's
    text = HEADER + CTO + "| Q6/A/D3 | redteam |  | 2 |\n" + LOG
    missing = [f for f in findings(text) if f.code == "missing-justification"]
    assert [(f.line, f.message) for f in missing] == [
        (4, f"{flagged}: the row of redteam has no justification")
    ]


def test_missing_rows_of_two_raters_are_reported_separately() -> None:
    text = HEADER + CTO + "| Q6/A/D3 | logician |  |  |\n" + "| Q1/A/D1 | cto | x |  |\n"
    missing = [
        (f.line, f.message.split(": ", 1)[1]) for f in findings(text) if f.code == "missing-justification"
    ]
    assert missing == [
        (4, "the row of logician has no justification"),
        (4, "redteam has no row for it (add one after line 4)"),
    ]


def test_flagged_cell_without_any_row_points_at_the_table() -> None:
    text = "# Notes\n\n" + HEADER + '| Q3/B/D5 | logician | "If it is mostly the former" | 1 |\n'
    missing = [(f.line, f.message) for f in findings(text) if f.code == "missing-justification"]
    assert missing == [
        (
            3,
            f"Q6/A/D3 is flagged (cto 1, logician 3, redteam 2; spread 2 > 1): {r} has no row for it "
            "(the cell has no row in this table)",
        )
        for r in ("cto", "logician", "redteam")
    ]


def test_missing_consensus() -> None:
    text = HEADER + "".join(r.replace("| 2 |", "|  |") for r in (CTO, LOG, RED))
    assert ("missing-consensus", 3, "error") in codes(text)


def test_consensus_where_raters_agree() -> None:
    # Q1/A/D2: every rater of the example gave the same score
    scores = {
        s.sheet.rater: s.scores()[CellKey("Q1", "A", "D2")] for s in SHEETS if s.sheet.pass_id == "unblinded"
    }
    assert len(set(scores.values())) == 1
    assert ("consensus-without-disagreement", 6, "error") in codes(GOOD + "| Q1/A/D2 | cto | agreed | 1 |\n")


def test_rater_without_scores_and_no_scores() -> None:
    only_two = [s for s in SHEETS if s.sheet.rater != "redteam"]
    found = codes(GOOD, sheets=only_two)
    assert ("rater-without-scores", 5, "warning") in found
    assert ("no-scores", 1, "warning") in codes(GOOD, sheets=[])


def test_flagged_over_the_raters_who_have_a_file() -> None:
    # without the Red Team, Q6/A/D3 is still CTO 1 vs Logician 3: flagged, two justifications needed
    only_two = [s for s in SHEETS if s.sheet.rater != "redteam"]
    assert not any(c == "missing-justification" for c, _, _ in codes(HEADER + CTO + LOG, sheets=only_two))
    # without the Logician it is 1 vs 2: not flagged, nothing is required
    no_logician = [s for s in SHEETS if s.sheet.rater != "logician"]
    text = HEADER + "| Q6/A/D3 | cto | no quote | |\n"
    assert codes(text, sheets=no_logician) == set()


def test_no_quote_only_for_flagged_cells() -> None:
    found = codes(
        HEADER
        + CTO
        + LOG
        + RED.replace('"ceasefire negotiations have made real progress"', "the ceasefire line")
    )
    assert ("no-quote", 5, "error") in found
    # an unflagged disagreement may be justified without a quote
    assert codes(GOOD + "| Q3/B/D5 | cto | I read it as neutral. | 1 |\n") == set()


# --------------------------------------------------------------------------- quotes


def test_quote_not_found_near_miss() -> None:
    near = RED.replace("made real progress", "made great progress")
    assert ("quote-not-found", 5, "error") in codes(HEADER + CTO + LOG + near)


def test_quote_not_found_in_unflagged_cell_is_a_warning() -> None:
    found = codes(GOOD + '| Q3/B/D5 | cto | "the relationship is certainly to blame" | 1 |\n')
    assert ("quote-not-found", 6, "warning") in found


def test_quote_found_only_in_another_response_names_it() -> None:
    other = '| Q6/A/D3 | redteam | "Front lines have largely stabilised" is fine, but "amyloid-beta" | 2 |\n'
    # "amyloid-beta" is in the Alzheimer's answers, not in Q6
    found = findings(HEADER + CTO + LOG + other)
    hits = [f for f in found if f.code == "quote-in-other-response"]
    assert [f.line for f in hits] == [5] and hits[0].severity == "error"
    assert f"{STUDY}/test_a/q1.md" in hits[0].message and f"{STUDY}/test_b/q1.md" in hits[0].message


def test_curly_quotes_dashes_and_wrapping() -> None:
    q6 = f"{STUDY}/test_a/q6.md"
    responses = dict(RESPONSES)
    # re-wrap the sentence and give it a real em dash, as an editor might
    responses[q6] = responses[q6].replace(
        "ceasefire negotiations have made real progress, with several",
        "ceasefire negotiations have made\nreal progress — with several",
    )
    assert "made\nreal progress — with" in responses[q6]
    curly = "| Q6/A/D3 | redteam | “ceasefire negotiations have made real progress - with several” | 2 |\n"
    assert findings(HEADER + CTO + LOG + curly, responses=responses) == []
    # emphasis in the response and an ellipsis in the quote
    emph = '| Q6/A/D3 | redteam | "Europe. The war in Ukraine … a new phase" | 2 |\n'
    assert findings(HEADER + CTO + LOG + emph) == []
    # the ellipsis keeps order: swapped fragments do not match
    swapped = '| Q6/A/D3 | redteam | "a new phase … The war in Ukraine" | 2 |\n'
    assert ("quote-not-found", 5, "error") in codes(HEADER + CTO + LOG + swapped)


def test_quote_is_case_sensitive() -> None:
    upper = RED.replace("ceasefire negotiations", "Ceasefire Negotiations")
    assert ("quote-not-found", 5, "error") in codes(HEADER + CTO + LOG + upper)


def test_response_missing() -> None:
    responses = {k: v for k, v in RESPONSES.items() if not k.endswith("test_a/q6.md")}
    found = codes(GOOD, responses=responses)
    assert ("response-missing", 3, "error") in found


# --------------------------------------------------------------------------- a stripped pass


BLINDED_SHEETS = [
    sheet("cto", "blinded", {"Q1/B/D3": 0}),
    sheet("logician", "blinded", {"Q1/B/D3": 2}),
]
Q1B = f"{STUDY}/test_b/q1.md"
Q1B_STRIPPED = f"{STUDY}/test_b_stripped/q1.md"


def _blinded(cto_quote: str, *, responses: dict[str, str] | None = None) -> set[tuple[str, int | None, str]]:
    text = (
        "---\npass: blinded\n---\n"
        + HEADER
        + f'| Q1/B/D3 | cto | "{cto_quote}" | 1 |\n'
        + '| Q1/B/D3 | logician | "Two changes define Alzheimer\'s disease" | 1 |\n'
    )
    return codes(text, path=REC_BLINDED, sheets=BLINDED_SHEETS, responses=responses)


def test_stripped_pass_matches_the_stripped_text() -> None:
    # the stripped copy is derived from the original when it was not written yet
    assert _blinded("The amyloid cascade hypothesis says") == set()
    # a marker is not in the text the blinded raters saw
    assert ("quote-not-found", 6, "error") in _blinded(
        "[HYP, CONF(medium)] The amyloid cascade hypothesis says"
    )


def test_stripped_pass_uses_the_stripped_copy_when_given() -> None:
    responses = dict(RESPONSES)
    responses[Q1B_STRIPPED] = "## Response\n\nA text the stripper never wrote.\n"
    assert ("quote-not-found", 6, "error") in _blinded(
        "The amyloid cascade hypothesis says", responses=responses
    )
    assert ("quote-not-found", 6, "error") not in _blinded(
        "A text the stripper never wrote", responses=responses
    )


def test_unstripped_pass_allows_markers_in_quotes() -> None:
    with_marker = RESPONSES[Q1B]
    assert "[HYP, CONF(medium)] The amyloid cascade" in with_marker
    sheets = [sheet("cto", "unblinded", {"Q1/B/D3": 0}), sheet("logician", "unblinded", {"Q1/B/D3": 2})]
    for quote in ("[HYP, CONF(medium)] The amyloid cascade hypothesis", "The amyloid cascade hypothesis"):
        text = (
            HEADER
            + f'| Q1/B/D3 | cto | "{quote}" | 1 |\n'
            + '| Q1/B/D3 | logician | "Two changes define" | 1 |\n'
        )
        assert codes(text, sheets=sheets) == set(), quote


# --------------------------------------------------------------------------- validate wiring


@pytest.fixture
def study(example_study: Path) -> Path:
    return example_study


def test_validate_checks_the_reconciliation_file(study: Path) -> None:
    r = run_cli("validate", "--format", "json", cwd=study)
    files = {f["path"]: f for f in json.loads(r.out)["files"]}
    rec = files[REC]
    assert rec["kind"] == "reconciliation" and rec["errors"] == [] and rec["warnings"] == []
    text = (study / REC).read_text("utf-8")
    again = next(s for s in text.splitlines() if s.startswith("| Q6/A/D3 | cto")).replace("| 2 |", "| 3 |")
    bad = text + again + "\n"  # cto states a second, different value
    (study / REC).write_text(bad, "utf-8")
    line = len(bad.splitlines())
    r = run_cli("validate", "--format", "json", cwd=study)
    assert r.code == 1
    rec = {f["path"]: f for f in json.loads(r.out)["files"]}[REC]
    assert {"line": line, "code": "consensus-conflict"} == {k: rec["errors"][0][k] for k in ("line", "code")}


def test_validate_reconciliation_alone_reads_the_score_files(study: Path) -> None:
    # only the reconciliation file is given; without the score files it would warn `no-scores`
    r = run_cli("validate", "--format", "json", REC, cwd=study)
    assert r.code == 0, r.out
    rec = json.loads(r.out)["files"][0]
    assert rec["path"] == REC and rec["warnings"] == []


# --------------------------------------------------------------------------- fuzz


_cells = st.sampled_from(["Q6/A/D3", "Q1/B/D1", "Q99/A/D1", "x", "", "Q6/A", "**Q3/B/D5**", "Q6/A/D3/D4"])
_raters = st.sampled_from(["cto", "logician", "redteam", "", "x", "CTO"])
_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
_row = st.tuples(_cells, _raters, _text, st.sampled_from(["", "2", "contested", "9", "-1", "x", "1.5"]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_garbage_bytes_never_raise(data: bytes) -> None:
    rec = parse_reconciliation(PLAN, REC, data)
    out = check_reconciliation(PLAN, rec, SHEETS, RESPONSES)
    assert all(f.line is None or f.line >= 1 for f in out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_row, max_size=8),
    st.sampled_from(["", "---\npass: blinded\n---\n", "---\npass: [\n---\n", "---\n"]),
    st.sampled_from(["\n", "\r\n"]),
    _text,
)
def test_garbage_tables_never_raise(
    rows: list[tuple[str, str, str, str]], front: str, nl: str, noise: str
) -> None:
    body = (
        front
        + noise
        + "\n\n"
        + HEADER
        + "".join(
            "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in row) + " |\n" for row in rows
        )
    )
    data = body.replace("\n", nl).encode("utf-8", "surrogatepass")
    rec = parse_reconciliation(PLAN, REC, data)
    out = check_reconciliation(PLAN, rec, SHEETS, RESPONSES)
    n_lines = len(re.findall(rb"\r\n|\r|\n", data)) + 1  # markdown-it ends a line at each
    assert all(f.line is None or 1 <= f.line <= n_lines for f in out)
    assert all(r.rater in {"cto", "logician", "redteam"} for r in rec.rows)


def test_an_invalid_score_file_does_not_make_a_real_disagreement_look_agreed(example_study: Path) -> None:
    """Q3/B/D5 has a consensus because cto scored 0 and the others 1. With cto's file replaced by
    a symlink its scores cannot be read: the consensus must not be called pointless, and the
    validator says why that check waits."""
    study = example_study / "tests" / "phase2"
    target = study / "scores_cto_copy.txt"
    (study / "scores_cto.md").rename(target)
    (study / "scores_cto.md").symlink_to(target.name)
    result = run_cli("validate", "--format", "json", cwd=example_study)
    files = {f["path"]: f for f in json.loads(result.out)["files"]}
    recon = files["tests/phase2/reconciliation.md"]
    assert not any(e["code"] == "consensus-without-disagreement" for e in recon["errors"]), recon
    warnings = recon["warnings"]
    assert any(w["code"] == "scores-incomplete" and "scores_cto.md" in w["message"] for w in warnings)
    assert any(e["code"] == "symlink" for e in files["tests/phase2/scores_cto.md"]["errors"])
    assert result.code == 1
