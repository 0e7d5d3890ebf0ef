"""Who did what, as tables for both renderers: each rater's own reconciliation proposal, rows
ignored because someone else wrote them, optional raters excluded for seal violations, and the
seal timeline (docs/report.md, "Reconciliation" and "Seals").

A consensus sets a cell's score, so the reader must see that every value is its rater's own: the
reconciliation table shows one line per rater of each reconciled cell, said once per cell, and a
cell where everyone agrees is folded away from the cells still open (contested or missing).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aoven_git.numfmt import DASH
from aoven_git.render.tables import Cell, Table, excluded_raters, pruned, short_commit

#: Past this many rows a long list is folded (Markdown and HTML `<details>`), its summary visible.
FOLD_AFTER = 12

STATES = ("contested", "missing", "unanimous")


def reconciliation(report: Mapping[str, Any]) -> Mapping[str, Any] | None:
    rec = report.get("reconciliation")
    return rec if isinstance(rec, Mapping) else None


def _cells(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [c for c in (reconciliation(report) or {}).get("cells") or [] if isinstance(c, Mapping)]


def state_counts(report: Mapping[str, Any]) -> dict[str, int]:
    counts = dict.fromkeys(STATES, 0)
    for c in _cells(report):
        state = str(c.get("state"))
        counts[state] = counts.get(state, 0) + 1
    return counts


def reconciliation_summary(report: Mapping[str, Any]) -> str:
    """``3 reconciled cells: 2 unanimous, 1 contested.`` (states with no cell left out)."""
    counts = state_counts(report)
    total = sum(counts.values())
    if not total:
        return "No reconciled cells."
    words = {"unanimous": "unanimous", "contested": "contested", "missing": "missing a rater's own value"}
    parts = [f"{n} {words.get(state, state)}" for state, n in counts.items() if n]
    return f"{total} reconciled cell{'s' if total != 1 else ''}: " + ", ".join(parts) + "."


def _proposed(value: Any) -> str:
    return DASH if value is None else str(value)


def _consensus(c: Mapping[str, Any]) -> Cell:
    state = str(c.get("state") or DASH)
    if state == "unanimous":
        return Cell(f"unanimous: {_proposed(c.get('value'))}", tone="good", mark="✅")
    if state == "contested":
        values = sorted({p.get("consensus") for p in c.get("proposals") or []
                         if isinstance(p.get("consensus"), int) and not isinstance(p.get("consensus"), bool)})
        shown = " or ".join(str(v) for v in values)
        return Cell(f"contested: {shown}" if shown else "contested", tone="warn", mark="⚖️")
    if state == "missing":
        return Cell("missing: " + ", ".join(str(r) for r in c.get("missing") or []), tone="bad", mark="❗")
    return Cell(state)


def _cell_rows(c: Mapping[str, Any], with_pass: bool) -> list[tuple[Cell, ...]]:
    """One row per rater of the cell (their proposal, or that they stated none); the cell, its
    pass and its consensus only on the first row."""
    lines: list[tuple[Cell, Cell, Cell, Cell]] = []
    for p in c.get("proposals") or []:
        value = p.get("consensus")
        lines.append((Cell(str(p.get("rater")), code=True),
                      Cell(_proposed(value), num=True, tone="warn" if value == "contested" else None),
                      Cell(" ".join(str(p.get("justification") or "").split())),
                      Cell(_proposed(p.get("line")), num=True)))
    for rater in c.get("missing") or []:
        lines.append((Cell(str(rater), code=True), Cell("not stated", num=True, tone="bad", mark="❗"),
                      Cell("no row of their own: the cell has no consensus", tone="muted"), Cell("")))
    rows = []
    for i, line in enumerate(lines or [(Cell(DASH),) * 3 + (Cell(""),)]):
        head = (Cell(str(c.get("cell")), code=True),
                *((Cell(str(c.get("pass") or DASH), code=True),) if with_pass else ()),
                _consensus(c))
        rows.append((head if i == 0 else tuple(Cell("") for _ in head)) + line)
    return rows


def reconciliation_tables(report: Mapping[str, Any]) -> tuple[Table, Table]:
    """(cells still open: contested or missing, unanimous cells), one row per rater of a cell."""
    cells = _cells(report)
    passes = {str(c.get("pass")) for c in cells}
    with_pass = len(passes) > 1
    notes = () if with_pass or not cells else (f"Every cell here is in pass {passes.pop()}.",)
    headers = ("cell", *(("pass",) if with_pass else ()), "consensus", "rater", "proposes",
               "justification and quote", "line")
    numeric = frozenset({len(headers) - 3, len(headers) - 1})

    def table(states: tuple[str, ...]) -> Table:
        rows = [row for c in cells if c.get("state") in states for row in _cell_rows(c, with_pass)]
        return pruned(Table(headers, tuple(rows), numeric, notes), keep=range(len(headers) - 1))

    return table(("contested", "missing")), table(("unanimous",))


def attribution_note(report: Mapping[str, Any]) -> str | None:
    """Why rows were counted without checking who wrote them, or None when that was checked."""
    rec = reconciliation(report)
    if rec is None or rec.get("attribution") != "not-checked":
        return None
    note = str(rec.get("note") or "who wrote each reconciliation row was not checked")
    return f"{note[:1].upper()}{note[1:]}; every row is counted as the statement of the rater it names."


def unattributed(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    rows = (reconciliation(report) or {}).get("unattributed") or []
    return [r for r in rows if isinstance(r, Mapping)]


def unattributed_table(report: Mapping[str, Any]) -> Table:
    """Rows ignored because the commit that last wrote them is not their rater's."""
    rows = []
    for r in unattributed(report):
        where = str(r.get("path") or DASH) + (f":{r['line']}" if r.get("line") is not None else "")
        rows.append((Cell(where, code=True), Cell(str(r.get("cell") or DASH), code=True),
                     Cell(str(r.get("rater") or DASH), code=True),
                     Cell(str(r.get("author") or "not committed"), tone=None if r.get("author") else "bad"),
                     Cell(short_commit(r.get("commit")) or DASH, code=bool(r.get("commit"))),
                     Cell(str(r.get("message") or ""))))
    notes = ("A row counts only when the rater it names wrote and committed it. Fix: the rater must write "
             "and commit their own row.",)
    return pruned(Table(("row", "cell", "named rater", "written by", "commit", "why ignored"), tuple(rows),
                        notes=notes), keep=range(5))


# --------------------------------------------------------------------------- seals


def excluded_sentence(report: Mapping[str, Any]) -> tuple[list[tuple[str, str]], str] | None:
    """((rater, their violation codes), what that means), or None when no rater is excluded."""
    found = excluded_raters(report)
    if not found:
        return None
    return ([(e["rater"], ", ".join(e["codes"])) for e in found],
            "optional raters whose seal violations leave their sheets out of agreement and consensus; "
            "they do not block the verdict")


_EVENTS = {"digest-seal": ("digest seal", "🔒"), "content-seal": ("content seal", "🔒"),
           "reveal": ("reveal", "🔓"), "reconciliation": ("reconciliation rows", "✍️")}


def timeline(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    events = (report.get("seals") or {}).get("timeline") or []
    return [e for e in events if isinstance(e, Mapping)]


def timeline_table(report: Mapping[str, Any]) -> Table:
    """Seals, reveals and reconciliation commits in history order, with who made each commit."""
    rows = []
    for e in timeline(report):
        text, mark = _EVENTS.get(str(e.get("event")), (str(e.get("event") or DASH), ""))
        rows.append((Cell(short_commit(e.get("commit")) or DASH, code=bool(e.get("commit"))),
                     Cell(text, mark=mark, tone="muted" if e.get("event") == "reconciliation" else None),
                     Cell(str(e.get("rater") or DASH), code=bool(e.get("rater"))),
                     Cell(str(e.get("pass") or DASH), code=bool(e.get("pass"))),
                     Cell(str(e.get("round") or DASH), code=bool(e.get("round"))),
                     Cell(str(e.get("amendment") or ""), code=bool(e.get("amendment"))),
                     Cell(str(e.get("author") or DASH))))
    table = Table(("commit", "event", "rater", "pass", "round", "amendment", "author"), tuple(rows))
    return pruned(table, sentences=[4], keep=(0, 1, 2, 3, 6))


def anchors_table(report: Mapping[str, Any]) -> Table:
    """Each time-stamp token verify-seal read: the commit it anchors, the authority and its time,
    or why it proves nothing (docs/sealing.md, "Independent time anchors")."""
    rows = []
    for a in (report.get("seals") or {}).get("timestamps") or []:
        if not isinstance(a, Mapping):
            continue
        error = a.get("error")
        rows.append((Cell(short_commit(a.get("commit")) or DASH, code=bool(a.get("commit"))),
                     Cell(str(a.get("authority") or DASH)),
                     Cell(str(a.get("time") or DASH)),
                     Cell(f"invalid: {error}" if error else "valid", tone="bad" if error else None)))
    return Table(("commit", "authority", "time (UTC)", "token"), tuple(rows))
