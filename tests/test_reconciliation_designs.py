"""Reconciliation of the designs beyond one A/B (docs/score-files.md, "Reconciliation files"):
cells written `L1/TRT#2/V`, a consensus that is a label, any two different labels flagging a
cell on a nominal scale (`flag_spread` is for ordinal scales), quotes looked up in the response
of the cell's own replicate; `disagreements` lists and writes labels and replicate ids.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoven_git.model import CellKey
from aoven_git.plan import parse_plan
from aoven_git.reconciliation import parse_reconciliation
from tests.conftest import GitRepo, run_cli
from tests.sheet_designs import PROBES, REPLICATES, fill_wide, line_of, response_text, study

REC = "study/reconciliation.md"
OWN = response_text("L1", "TRT", 2).splitlines()[2]  # "The answer of trt to l1 sample 2 is here."
OTHER = response_text("L1", "TRT", 1).splitlines()[2]
HEAD = (
    "---\npass: probe\nround: main\n---\n\n"
    "| Cell | Rater | Justification | Consensus |\n|---|---|---|---|\n"
)


def _sheet(repo: GitRepo, rater: str, fill: str | int, changes: dict[str, str]) -> None:
    path = f"study/scores_{rater}.md"
    r = run_cli("sheet", "--rater", rater, "-o", path, cwd=repo.path)
    assert r.code == 0, r.output
    text = fill_wide((repo.path / path).read_text("utf-8"), fill)
    for old, new in changes.items():
        assert old in text
        text = text.replace(old, new)
    repo.write(path, text)


@pytest.fixture
def probes(tmp_path: Path) -> GitRepo:
    """ann labels everything PASS; bob says FAIL on L1/TRT#2 only."""
    repo = study(tmp_path / "repo", PROBES)
    _sheet(repo, "ann", "PASS", {})
    _sheet(repo, "bob", "PASS", {"| L1 | TRT | 2 | PASS |": "| L1 | TRT | 2 | fail |"})
    return repo


def _validate_rec(repo: GitRepo) -> list[dict]:
    v = run_cli("validate", "--format", "json", cwd=repo.path)
    files = {f["path"]: f for f in json.loads(v.out)["files"]}
    assert all(not f["errors"] for p, f in files.items() if p != REC), v.out
    # rows written here by the test's git identity are `unattributed-row` warnings (as they should)
    return [f for f in files[REC]["errors"] + files[REC]["warnings"] if f["code"] != "unattributed-row"]


def test_disagreements_lists_labels_and_replicate_ids(probes: GitRepo) -> None:
    r = run_cli("disagreements", "--format", "json", cwd=probes.path)
    assert r.code == 0, r.output
    doc = json.loads(r.out)
    assert doc["flag_spread"] == 0 and doc["cells_scored"] == 8
    assert doc["cells"] == [{"cell": "L1/TRT#2/V", "scores": {"ann": "PASS", "bob": "FAIL"}, "spread": 1,
                             "flagged": True}]
    assert doc["flagged"] == ["L1/TRT#2/V"]
    text = run_cli("disagreements", cwd=probes.path).out
    assert "1 flagged (any two different labels)" in text
    assert "L1/TRT#2/V  ann PASS  bob FAIL  spread 1  FLAGGED" in text


def test_write_adds_rows_with_replicate_ids_and_the_labels(probes: GitRepo) -> None:
    r = run_cli("disagreements", "--write", "--rater", "ann", cwd=probes.path)
    assert r.code == 0, r.output
    text = (probes.path / REC).read_text("utf-8")
    assert "| L1/TRT#2/V | ann |  |  |" in text
    assert "the value they accept (Consensus): one of the labels PASS, FAIL" in text
    assert "or `contested`. Commit your own rows yourself" in text


def _reconcile(repo: GitRepo, ann: tuple[str, str], bob: tuple[str, str], cell: str = "L1/TRT#2/V") -> str:
    text = (HEAD + f'| {cell} | ann | "{ann[0]}" | {ann[1]} |\n| {cell} | bob | "{bob[0]}" | {bob[1]} |\n')
    repo.write(REC, text)
    return text


def test_a_label_consensus_in_any_case_settles_the_cell(probes: GitRepo) -> None:
    text = _reconcile(probes, (OWN, "fail"), (OWN, "FAIL"))
    assert _validate_rec(probes) == []
    rec = parse_reconciliation(parse_plan(PROBES.encode()), REC, text.encode())
    assert [(r.key, r.rater, r.consensus) for r in rec.rows] == [
        (CellKey("L1", "TRT", "V", 2), "ann", 1), (CellKey("L1", "TRT", "V", 2), "bob", 1)]


def test_a_number_or_an_unknown_word_is_no_consensus_on_labels(probes: GitRepo) -> None:
    text = _reconcile(probes, (OWN, "1"), (OWN, "failed"))
    found = [(f["line"], f["code"]) for f in _validate_rec(probes)]
    assert (line_of(text, "| ann |"), "consensus-invalid") in found
    assert (line_of(text, "| bob |"), "consensus-invalid") in found
    message = next(f["message"] for f in _validate_rec(probes) if f["code"] == "consensus-invalid")
    assert message == "consensus '1' is neither one of the labels PASS, FAIL nor `contested`"


def test_a_quote_from_another_replicate_is_named(probes: GitRepo) -> None:
    text = _reconcile(probes, (OTHER, "PASS"), (OWN, "PASS"))
    found = _validate_rec(probes)
    other = [f for f in found if f["code"] == "quote-in-other-response"]
    assert [f["line"] for f in other] == [line_of(text, "| ann |")]
    assert "not in study/test_trt/l1_2.md but in study/test_trt/l1_1.md" in other[0]["message"]


def test_a_cell_without_its_replicate_is_unknown(probes: GitRepo) -> None:
    text = _reconcile(probes, (OWN, "PASS"), (OWN, "PASS"), cell="L1/TRT/V")
    found = [f for f in _validate_rec(probes) if f["code"] == "unknown-cell"]
    assert [f["line"] for f in found] == [line_of(text, "| ann |"), line_of(text, "| bob |")]
    assert "name its replicate, e.g. L1/TRT#1/V (the plan has 2)" in found[0]["message"]


def test_consensus_on_agreeing_labels_names_the_label(probes: GitRepo) -> None:
    _reconcile(probes, (OWN, "PASS"), (OWN, "PASS"), cell="L2/CTRL#1/V")
    found = [f for f in _validate_rec(probes) if f["code"] == "consensus-without-disagreement"]
    assert found and "(all raters scored PASS)" in found[0]["message"]


def test_flagged_label_cell_names_the_labels_when_a_row_is_missing(probes: GitRepo) -> None:
    text = HEAD + f'| L1/TRT#2/V | ann | "{OWN}" | PASS |\n'
    probes.write(REC, text)
    found = [f for f in _validate_rec(probes) if f["code"] == "missing-justification"]
    assert len(found) == 1
    flagged = "L1/TRT#2/V is flagged (ann PASS, bob FAIL; different labels): bob has no row"
    assert flagged in found[0]["message"]


def test_ordinal_replicates_keep_the_flag_spread(tmp_path: Path) -> None:
    repo = study(tmp_path / "repo", REPLICATES)
    _sheet(repo, "ann", 1, {})
    _sheet(repo, "bob", 1, {"| Q1 | A | 2 | 1 | 1 | 2 |": "| Q1 | A | 2 | 2 | 1 | 3 |",
                            "| Q2 | B | 3 | 1 | 1 | 2 |": "| Q2 | B | 3 | 3 | 1 | 4 |"})
    doc = json.loads(run_cli("disagreements", "--format", "json", cwd=repo.path).out)
    assert doc["flag_spread"] == 1
    cells = {c["cell"]: (c["scores"], c["spread"], c["flagged"]) for c in doc["cells"]}
    assert cells == {"Q1/A#2/D1": ({"ann": 1, "bob": 2}, 1, False),
                     "Q2/B#3/D1": ({"ann": 1, "bob": 3}, 2, True)}
