"""Property tests of the cell forms the designs add (docs/score-files.md, "Replicates" and
"Labels"): a label in any letter case, with emphasis or spaces, is its position; the replicate
forms (`2`, `#2`, `R2`, `Rep 2`, `A#2`, `A # 2`) name the replicate; and any text at all in a
label or Rep cell is either read onto the scale and into 1…N or reported at its line — never a
crash, never a cell off the scale.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aoven_git.plan import parse_plan
from aoven_git.scorefile import parse_score_file
from tests.sheet_designs import PROBES, REPLICATES, VERDICTS

LABELS_PLAN = parse_plan(VERDICTS.encode())
REPLICATE_PLAN = parse_plan(REPLICATES.encode())
PROBES_PLAN = parse_plan(PROBES.encode())
PATH = "study/scores_ann.md"
FM = "---\nrater: ann\n---\n\n"
BAR = "|---|---|---|---|\n"


def _case(text: str, flips: list[bool]) -> str:
    flips = (flips + [False] * len(text))[: len(text)]
    return "".join(ch.swapcase() if flip else ch for ch, flip in zip(text, flips, strict=True))


@settings(max_examples=150, deadline=None)
@given(
    index=st.integers(0, 2),
    flips=st.lists(st.booleans(), max_size=6),
    emphasis=st.sampled_from(["", "**", "*", "_"]),
    pad=st.sampled_from(["", " ", "  "]),
)
def test_a_label_in_any_case_is_its_position(index: int, flips: list[bool], emphasis: str, pad: str) -> None:
    label = _case(LABELS_PLAN.scale.labels[index], flips)
    written = f"{pad}{emphasis}{label}{emphasis}{pad}"
    rows = "".join(f"| {q} | {c} | {written} | PASS |\n" for q in ("Q1", "Q2") for c in ("A", "B"))
    sheet = parse_score_file(LABELS_PLAN, PATH, f"{FM}| Q | Cond | V | W |\n{BAR}{rows}".encode())
    assert sheet.ok, (written, sheet.findings)
    assert {c.score for c in sheet.cells if c.key.dimension == "V"} == {index}


CELL_TEXT = st.characters(blacklist_categories=("Cs",), blacklist_characters="|\n\r\\`")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=CELL_TEXT, max_size=12))
def test_any_text_in_a_label_cell_is_a_label_or_off_the_scale(text: str) -> None:
    body = f"{FM}| Q | Cond | V | W |\n{BAR}| Q1 | A | {text} | PASS |\n"
    sheet = parse_score_file(LABELS_PLAN, PATH, body.encode())
    cell = [c for c in sheet.cells if c.key.dimension == "V"]
    off = [f for f in sheet.errors if f.code == "score-off-scale" and f.line == 7]
    if cell:
        assert cell[0].score in LABELS_PLAN.scale and not off
    else:  # not a label: off the scale; nothing a reader sees (blank, `-`, `<!-- -->`): missing
        codes = [f.code for f in sheet.errors if f.line == 7]
        assert off or codes == ["missing-cell"], (text, sheet.findings)


REP_FORMS = ["{r}", "#{r}", "R{r}", "r{r}", "Rep {r}", "rep. {r}", "Replicate {r}", "# {r}"]


@settings(max_examples=150, deadline=None)
@given(forms=st.lists(st.sampled_from(REP_FORMS), min_size=12, max_size=12))
def test_every_rep_form_names_its_replicate(forms: list[str]) -> None:
    items = [(q, c, r) for q in ("Q1", "Q2") for c in ("A", "B") for r in (1, 2, 3)]
    rows = "".join(f"| {q} | {c} | {f.format(r=r)} | 1 | 2 |\n"
                   for (q, c, r), f in zip(items, forms, strict=True))
    body = f"{FM}| Q | Cond | Rep | D1 | D2 |\n|---|---|---|---|---|\n{rows}"
    sheet = parse_score_file(REPLICATE_PLAN, PATH, body.encode())
    assert sheet.ok, (forms, sheet.findings)
    assert {c.key for c in sheet.cells} == set(REPLICATE_PLAN.expected_cells("open", "main"))


@settings(max_examples=100, deadline=None)
@given(space=st.sampled_from(["", " ", "  "]), after=st.sampled_from(["", " "]), rep=st.integers(1, 2))
def test_a_condition_suffix_names_the_replicate(space: str, after: str, rep: int) -> None:
    body = f"{FM}| Q | Cond | V |\n|---|---|---|\n| L1 | TRT{space}#{after}{rep} | pass |\n"
    sheet = parse_score_file(PROBES_PLAN, PATH, body.encode())
    assert [(c.key.condition, c.key.replicate, c.score) for c in sheet.cells] == [("TRT", rep, 0)]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=CELL_TEXT, max_size=10))
def test_any_text_in_a_rep_cell_is_a_replicate_or_an_error_at_its_line(text: str) -> None:
    body = f"{FM}| Q | Cond | Rep | V |\n{BAR}| L1 | TRT | {text} | PASS |\n"
    sheet = parse_score_file(PROBES_PLAN, PATH, body.encode())
    read = [c for c in sheet.cells if c.key.question == "L1" and c.key.condition == "TRT"]
    if read:
        assert read[0].key.replicate in (1, 2)
    elif text.strip():
        bad = [f for f in sheet.errors if f.line == 7 and f.code == "unknown-replicate"]
        assert bad, (text, sheet.findings)
