"""What a copy of a sheet is, by content (docs/sealing.md, "Copies of scores"). Pure: no git.

Outside the study folder a file name proves nothing — a second study's sheets, a vendored copy of
this tool with its bundled example, an `analysis/scores_plot.py` all live there honestly — so a
file there is a copy of a sheet of this study only when its content says so:

* it is the very blob of a sheet's committed plaintext (a reveal or a content seal), or its bytes
  hash to the SHA-256 a seal fixed (a copy of a sealed, not yet revealed, file);
* or its score tables (Markdown, CSV or TSV) agree with a rater's revealed sheet on most of that
  sheet's cells: at least `AGREEMENT` of them, and at least `MIN_CELLS` (all of them for a
  smaller sheet), so a re-typed, re-formatted or partly edited copy counts, while a table that
  merely shares ids with the sheet does not.

A copy found this way is that rater's plaintext for the ordering rules, at the commit that made it
readable. Cells are compared against revealed sheets only: a re-typed copy of a sealed sheet is
recognised once the sheet is revealed (verify-seal re-reads the whole history every time).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from aoven_git.model import Plan, SheetId
from aoven_git.seals import sha256

#: the share of a revealed sheet's cells a table must state with the same score to be its copy
AGREEMENT = Fraction(3, 4)
#: and at least this many cells (every cell of a smaller sheet)
MIN_CELLS = 4

Cells = Mapping[tuple[str, str, str], int]


@dataclass(frozen=True)
class Original:
    """What a sheet's copies are recognised by: the blobs of its committed plaintext, the digests
    its seal points fixed, and the cells of its revealed file."""

    sheet: SheetId
    blobs: frozenset[str]
    digests: frozenset[str]
    cells: Cells


def agrees(table: Cells, cells: Cells) -> bool:
    """`table` states most of `cells` with the same scores (see the module docstring)."""
    if not cells:
        return False
    same = sum(1 for k, v in cells.items() if table.get(k) == v)
    return same >= min(len(cells), MIN_CELLS) and Fraction(same, len(cells)) >= AGREEMENT


def copied(plan: Plan, originals: list[Original], blob: str, data: bytes | None) -> list[SheetId]:
    """The sheets the file (`blob`, its bytes `data`, None when too large to read) copies."""
    digest = sha256(data) if data is not None else None
    exact = [o.sheet for o in originals if blob in o.blobs or digest in o.digests]
    if exact or data is None or not any(o.cells for o in originals):
        return exact
    from aoven_git.scorefile import table_scores

    table = table_scores(plan, data)
    return [o.sheet for o in originals if table and agrees(table, o.cells)]
