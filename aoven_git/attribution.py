"""Attributed consensus: every reconciliation row must be its rater's own (docs/design.md,
"Attributed consensus"). Pure: the caller reads history (blame, authors, signatures).

A consensus replaces the raters' scores for its cell, so whoever writes it can move the verdict.
The tool therefore never takes a row's word for whose statement it is: a row counts only when the
commit that last wrote its line was authored by the rater it names (an e-mail of that rater in the
plan as of the first seal; signed by them when the plan requires signatures). A cell has a
consensus only when every rater of the cell states, in an attributed row, the same integer.

============== =======================================================================
state          meaning
============== =======================================================================
unanimous      every rater of the cell has an attributed row with the same integer
contested      every rater has an attributed row, and some say `contested` or they differ
missing        some rater of the cell has no attributed row stating a value
============== =======================================================================
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from aoven_git.model import CellKey, Plan, Reconciliation, ReconciliationRow

State = Literal["unanimous", "contested", "missing"]


@dataclass(frozen=True)
class Author:
    """Who last wrote a line: the commit, its author e-mail, and its signature (`G` good, … as
    `git log %G?`; None when signatures are not required) with the signer."""

    commit: str
    email: str
    signature: str | None = None
    signer: str = ""


def row_author_ok(plan: Plan, rater_id: str, author: Author | None) -> tuple[bool, str]:
    """Whether `author` may speak for `rater_id`, and why not."""
    rater = plan.rater(rater_id)
    emails = {e.lower() for e in rater.emails} if rater else set()
    if author is None:
        return False, "the line has no commit (not committed)"
    if not emails:
        return False, f"{rater_id} has no e-mails in the plan, so no commit can be attributed to them"
    if author.email.lower() not in emails:
        return False, f"last written by {author.email or '(no email)'}, not by {rater_id}"
    if author.signature is not None and (author.signature != "G" or author.signer.lower() not in emails):
        return False, f"the commit {author.commit[:10]} carries no good signature by {rater_id}"
    return True, ""


def attribute(plan: Plan, rec: Reconciliation,
              authors: Mapping[int, Author]) -> tuple[Reconciliation, list[dict]]:
    """`rec` with each row marked attributed or not (by the author of its line), and one entry per
    unattributed row for the report (`unattributed-row`)."""
    rows, unattributed = [], []
    for row in rec.rows:
        author = authors.get(row.line)
        ok, why = row_author_ok(plan, row.rater, author)
        rows.append(replace(row, attributed=ok, author=author.email if author else None))
        if not ok:
            unattributed.append({"code": "unattributed-row", "path": rec.path, "line": row.line,
                                 "cell": str(row.key), "rater": row.rater,
                                 "author": author.email if author else None,
                                 "commit": author.commit if author else None, "message": why})
    return replace(rec, rows=tuple(rows)), unattributed


@dataclass(frozen=True)
class CellConsensus:
    key: CellKey
    state: State
    value: int | None  # the common value when unanimous
    proposals: tuple[ReconciliationRow, ...]  # the counted row of each rater of the cell
    missing: tuple[str, ...]  # raters of the cell without an attributed row stating a value

    @property
    def options(self) -> tuple[int, ...]:
        """The integers proposed (the range a contested cell's verdict is evaluated over)."""
        return tuple(sorted({r.consensus for r in self.proposals if isinstance(r.consensus, int)}))


def cell_consensus(rows: Sequence[ReconciliationRow],
                   raters_of: Mapping[CellKey, Collection[str]]) -> dict[CellKey, CellConsensus]:
    """The consensus state of every cell the rows talk about. `raters_of` maps a cell to the raters
    who scored it; rows of anyone else, and unattributed rows, do not count (the first counted row
    of a rater wins; a parser reports duplicates)."""
    by_cell: dict[CellKey, dict[str, ReconciliationRow]] = {}
    for row in rows:
        if row.attributed is not False and row.consensus is not None:
            by_cell.setdefault(row.key, {}).setdefault(row.rater, row)
    keys = dict.fromkeys(r.key for r in rows)
    out = {}
    for key in keys:
        raters = list(raters_of.get(key, ()))
        mine = by_cell.get(key, {})
        proposals = tuple(mine[r] for r in raters if r in mine)
        missing = tuple(r for r in raters if r not in mine)
        values = {p.consensus for p in proposals}
        if missing or not raters:
            out[key] = CellConsensus(key, "missing", None, proposals, missing)
        elif len(values) == 1 and "contested" not in values:
            out[key] = CellConsensus(key, "unanimous", int(values.pop()), proposals, ())  # type: ignore[arg-type]
        else:
            out[key] = CellConsensus(key, "contested", None, proposals, ())
    return out
