"""What a copy of a sheet is by content (aoven_git/score_copies.py; docs/sealing.md, "Copies of
scores"): the same blob, a sealed digest, or a table agreeing on 3/4 of a revealed sheet's cells,
in Markdown, CSV or TSV."""

from __future__ import annotations

from aoven_git.model import SheetId
from aoven_git.plan import parse_plan
from aoven_git.score_copies import Original, agrees, copied
from aoven_git.seals import sha256
from tests.sealing.conftest import PLAN

CTO = SheetId("cto", "unblinded", "main")
CELLS = {(q, c, d): s for q in ("Q1", "Q2") for c in ("A", "B") for d, s in (("D1", 1), ("D2", 2))}


def csv(rows: dict[tuple[str, str, str], int], sep: str = ",") -> bytes:
    items = sorted({(q, c) for q, c, _ in rows})
    lines = [sep.join(("question", "condition", "D1", "D2"))]
    lines += [sep.join((q, c, str(rows[q, c, "D1"]), str(rows[q, c, "D2"]))) for q, c in items]
    return ("\n".join(lines) + "\n").encode()


def test_agreement_threshold() -> None:
    edited = dict(CELLS)
    edited["Q1", "A", "D1"] = 3
    edited["Q1", "B", "D1"] = 3
    assert agrees(CELLS, CELLS) and agrees(edited, CELLS)  # 6 of 8
    edited["Q2", "A", "D1"] = 3
    assert not agrees(edited, CELLS)  # 5 of 8
    assert not agrees({}, CELLS) and not agrees(CELLS, {})


def test_small_sheets_need_every_cell() -> None:
    three = dict(list(CELLS.items())[:3])
    assert agrees(three, three)
    assert not agrees(dict(list(three.items())[:2]), three)


def test_copies_by_blob_digest_and_cells() -> None:
    plan = parse_plan(PLAN.encode())
    sealed = b"---\nrater: cto\n---\n| Q | Cond | D1 | D2 |\n"
    original = Original(CTO, frozenset({"blob-1"}), frozenset({sha256(sealed)}), CELLS)
    assert copied(plan, [original], "blob-1", None) == [CTO]
    assert copied(plan, [original], "other", sealed) == [CTO]
    assert copied(plan, [original], "other", csv(CELLS)) == [CTO]
    assert copied(plan, [original], "other", csv(CELLS, "\t")) == [CTO]
    assert copied(plan, [original], "other", csv({k: 3 - v for k, v in CELLS.items()})) == []
    assert copied(plan, [original], "other", b"import csv  # plots D1\n") == []
