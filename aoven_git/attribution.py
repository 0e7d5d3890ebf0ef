"""Attributed consensus: every reconciliation row must be its rater's own (docs/sealing.md,
"Attributed consensus"). Pure: the caller reads history (statements, authors, signatures).

A consensus replaces the raters' scores for its cell, so whoever writes it can move the verdict.
The tool therefore never takes a row's word for whose statement it is: a row counts only when its
statement (justification and value) is the latest one its rater committed themselves — a commit
authored under an e-mail of that rater in the plan as of the first seal, signed by them when the
plan requires signatures — read from the file's history row by row, not line by line. A cell has
a consensus only when every rater of the cell states, in an attributed row, the same integer.

============== =======================================================================
state          meaning
============== =======================================================================
unanimous      every rater of the cell has an attributed row with the same integer
contested      every rater has an attributed row, and some say `contested` or they differ
missing        some rater of the cell has no attributed row stating a value
============== =======================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from aoven_git.model import CellKey, Plan, Reconciliation, ReconciliationRow

State = Literal["unanimous", "contested", "missing"]


@dataclass(frozen=True)
class Version:
    """One commit's version of a reconciliation file: its statements by (cell, rater) — the
    justification and the value that rater accepts — and who made the commit. `signed` is None
    when signatures are not required, else whether the commit carries a good signature by
    `signer`."""

    node: int
    parents: tuple[int, ...]
    email: str
    statements: Mapping[tuple[str, str], tuple[str, object]]  # `Statement`s by (cell, rater)
    signed: bool | None = None
    signer: str = ""


def speaks_for(plan: Plan, rater_id: str, version: Version) -> bool:
    """Whether the commit of `version` may speak for `rater_id`: authored under one of the rater's
    e-mails (as of the first seal), and signed by them when the plan requires signatures."""
    rater = plan.rater(rater_id)
    emails = {e.lower() for e in rater.emails} if rater else set()
    if version.email.lower() not in emails:
        return False
    return version.signed is None or (version.signed and version.signer.lower() in emails)


Statement = tuple[str, object]  # (justification, the value the rater accepts)


def statements(rec: Reconciliation) -> dict[tuple[str, str], Statement]:
    """A reconciliation file's statements by (cell, rater); the first row of a (cell, rater) wins
    (the parser reports duplicates)."""
    out: dict[tuple[str, str], Statement] = {}
    for r in rec.rows:
        out.setdefault((str(r.key), r.rater), (r.justification, r.consensus))
    return out


def written(version: Version, parents: Sequence[Version]) -> list[tuple[str, str]]:
    """THE attribution rule for one commit: the (cell, rater) statements it writes are those that
    differ from that statement in every parent version (no parent: in none). A merge writes nothing
    it carries from a parent — as git merged it, or as whoever resolved a conflict by hand kept it,
    byte for byte in statement — so such a row stays the statement of the rater who committed it on
    their branch; a row re-typed with any other justification or value is written by the merge.
    verify-seal applies it to every commit of the history, the hook to the staged commit over HEAD
    (and MERGE_HEAD while a merge is concluded): they agree by construction."""
    olds = [p.statements for p in parents] or [{}]
    return sorted(key for key in set(version.statements).union(*olds)
                  if all(o.get(key) != version.statements.get(key) for o in olds))


def _changes(versions: Sequence[Version]) -> dict[tuple[str, str], list[Version]]:
    """Per (cell, rater), the versions that write that statement (`written`)."""
    by_node = {v.node: v for v in versions}
    out: dict[tuple[str, str], list[Version]] = {}
    for v in versions:
        for key in written(v, [by_node[q] for q in v.parents if q in by_node]):
            out.setdefault(key, []).append(v)
    return out


def latest_own(plan: Plan, key: tuple[str, str], changes: Sequence[Version],
               before: Callable[[int, int], bool]) -> list[Version]:
    """The rater's own latest statements about a cell: their changes of the row that no later
    change of theirs supersedes (several only on parallel lines of history)."""
    own = [v for v in changes if speaks_for(plan, key[1], v)]
    return [v for v in own if not any(before(v.node, w.node) for w in own)]


def attribute(plan: Plan, rec: Reconciliation, versions: Sequence[Version],
              before: Callable[[int, int], bool]) -> tuple[Reconciliation, list[dict]]:
    """`rec` (the file at the verified revision) with each row marked attributed when its
    statement is its rater's own latest one, and one `unattributed-row` entry per row that is not
    (written, reinstated or edited by someone else) and per own row someone else removed.

    This reads statements, not lines (docs/sealing.md, "Attributed consensus"): reordering rows or
    re-aligning the table changes nobody's statement, while a stale row brought back by a merge, or
    rows renamed in from another file, are nobody's latest statement here."""
    changes = _changes(versions)
    rows, out = [], []
    present = {(str(r.key), r.rater): r for r in rec.rows}
    for row in rec.rows:
        key = (str(row.key), row.rater)
        latest = latest_own(plan, key, changes.get(key, []), before)
        mine = (row.justification, row.consensus)
        ok = any(v.statements.get(key) == mine for v in latest)
        author = _author(changes.get(key, []), key, mine)
        rows.append(replace(row, attributed=ok, author=author))
        if not ok:
            why = (f"not {row.rater}'s own statement: {row.rater} never wrote it"
                   if not latest else f"not {row.rater}'s latest statement (changed by {row.rater} in "
                                      f"{', '.join(str(v.node) for v in latest)})")
            out.append(_entry(rec.path, row.line, key, author, why))
    for key, chs in sorted(changes.items()):
        latest = latest_own(plan, key, chs, before)
        if key not in present and any(v.statements.get(key) is not None for v in latest):
            out.append(_entry(rec.path, None, key, None, f"{key[1]}'s row was removed by someone else"))
    return replace(rec, rows=tuple(rows)), out


def _author(changes: Sequence[Version], key: tuple[str, str], statement: tuple[str, object]) -> str | None:
    """Who last wrote this statement (the latest change producing it), for the report."""
    writers = [v for v in changes if v.statements.get(key) == statement]
    return writers[-1].email if writers else None


def _entry(path: str, line: int | None, key: tuple[str, str], author: str | None, why: str) -> dict:
    return {"code": "unattributed-row", "path": path, "line": line, "cell": key[0], "rater": key[1],
            "author": author, "message": why}


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


def cell_consensus(rows: Sequence[ReconciliationRow], raters_of: Mapping[CellKey, Collection[str]],
                   flagged: Collection[CellKey] = ()) -> dict[CellKey, CellConsensus]:
    """The consensus state of every cell the rows talk about. `raters_of` maps a cell to the raters
    who scored it; rows of anyone else, and unattributed rows, do not count (the first counted row
    of a rater wins; a parser reports duplicates); nor, on a `flagged` cell, a row with no
    justification: a flagged cell is settled by reasons, not by values alone."""
    by_cell: dict[CellKey, dict[str, ReconciliationRow]] = {}
    for row in rows:
        unreasoned = row.key in flagged and not (row.justification or "").strip()
        if row.attributed is not False and row.consensus is not None and not unreasoned:
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
