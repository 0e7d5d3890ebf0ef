"""The statements of every version of a reconciliation file, each version read from the one
before it (docs/sealing.md, "How history is read").

verify-seal attributes reconciliation rows from the statements of *every* version of the file
(`attribution.written`). Parsing each version in full costs the Markdown parse of the whole file
each time: with a row added or re-worded per commit, verify grows with commits × rows (1.7 s for
500 commits, against 0.1 s for the two-commit study). Here a version that differs from an earlier
one only in rows of its one reconciliation table is read from it: the unchanged lines before and
after the change keep their rows, and only the changed lines are read, each distinct line once.

It is exact by construction, not by hope:

* the first version of a file (and any version that fails a condition below) is parsed in full by
  `reconciliation.parse_reconciliation`, and it is *incremental-ready* only when reading its table
  row by row here gives the very statements the full parse gave;
* a version is read from an incremental-ready one only when both are UTF-8 within the size limit,
  without carriage returns, NUL bytes (the Markdown parser rewrites both) or backslashes, with
  exactly one reconciliation table whose rows all have the header's number of cells, and every
  changed line lies inside that table's rows, starts with `|` (no block of CommonMark can start
  there, so the table goes on) and has the header's number of cells. Front matter, header and
  delimiter are in the unchanged prefix, so the pass, round and columns are the same.

Rows are read by `reconciliation._Rows.read`, the parser's own row reader: a line means the same
here as in a full parse.
"""

from __future__ import annotations

from dataclasses import dataclass

from aoven_git import mdtables
from aoven_git.model import Findings, Plan
from aoven_git.studyfile import MAX_BYTES

#: a statement: ((cell, rater), (justification, consensus)), or None for a line stating nothing
Row = tuple[tuple[str, str], tuple[str, object]] | None


class _Reader:
    """Reads the row lines of one table (its pass, round and columns), each distinct line once."""

    def __init__(self, rows: object, table: object, width: int) -> None:
        self.rows, self.table, self.width = rows, table, width
        self.memo: dict[str, Row] = {}

    def row(self, line: str) -> Row | bool:
        """The statement a table row line makes (None: none), or False when the line could end the
        table or change how its neighbours read (then the version is parsed in full)."""
        if line in self.memo:
            return self.memo[line]
        if not line.startswith("|"):
            return False
        cells = mdtables._split_row(line)
        if len(cells) != self.width:
            return False
        found = self.rows.rows  # type: ignore[attr-defined]
        before = len(found)
        self.rows.read(self.table, 0, [mdtables.inline_text(c) for c in cells])  # type: ignore[attr-defined]
        row: Row = None
        if len(found) > before:
            r = found.pop()
            row = ((str(r.key), r.rater), (r.justification, r.consensus))
        self.memo[line] = row
        return row

    def rows_of(self, lines: list[str]) -> list[Row] | None:
        """The statements of consecutive row lines, or None when one of them is no plain row."""
        out: list[Row] = []
        for line in lines:
            row = self.row(line)
            if row is False or row is True:
                return None
            out.append(row)
        return out


@dataclass
class _Version:
    """A version read row by row: its lines, where its table's rows are, each row's statement, and
    the reader of its table."""

    lines: list[str]
    start: int  # index of the first row line
    rows: list[Row]
    reader: _Reader


class StatementHistory:
    """Statements of the versions of one reconciliation file (path), by blob id."""

    def __init__(self, plan: Plan, path: str) -> None:
        self.plan, self.path = plan, path
        self.statements: dict[str, dict[tuple[str, str], tuple[str, object]]] = {}
        self._ready: dict[str, _Version] = {}
        self.full_parses = 0

    def read(self, blob: str, data: bytes, parent: str | None) -> dict[tuple[str, str], tuple[str, object]]:
        """The statements of `blob`, read from `parent`'s version when it can be (see module doc)."""
        if blob in self.statements:
            return self.statements[blob]
        lines = _lines(data)
        base = self._ready.get(parent) if parent is not None else None
        version = self._derive(base, lines) if base is not None and lines is not None else None
        if version is None:
            self.statements[blob] = self._full(blob, data, lines)
        else:
            self._ready[blob] = version
            self.statements[blob] = _collect(version.rows)
        return self.statements[blob]

    def _full(self, blob: str, data: bytes, lines: list[str] | None) -> dict:
        from aoven_git.attribution import statements
        from aoven_git.reconciliation import find_tables, parse_reconciliation

        self.full_parses += 1
        parsed = parse_reconciliation(self.plan, self.path, data)
        found = statements(parsed)
        if lines is None:
            return found
        tables = find_tables("\n".join(lines))
        if len(tables) != 1:
            return found
        from aoven_git.reconciliation import _Rows

        table = tables[0]
        width = len(mdtables._split_row(lines[table.header_line - 1]))
        reader = _Reader(_Rows(self.plan, parsed.pass_id, parsed.round_id, Findings(self.path)), table, width)
        start = table.header_line + 1
        rows = reader.rows_of(lines[start:table.end_line])
        if rows and _collect(rows) == found:
            self._ready[blob] = _Version(lines, start, rows, reader)
        return found

    def _derive(self, base: _Version, lines: list[str]) -> _Version | None:
        """`lines` read from `base` when they differ from it only inside its table's rows."""
        old = base.lines
        a = 0
        limit = min(len(old), len(lines))
        while a < limit and old[a] == lines[a]:
            a += 1
        b = 0
        while b < limit - a and old[-1 - b] == lines[-1 - b]:
            b += 1
        end = base.start + len(base.rows)
        if a < base.start or len(old) - b > end:
            return None
        new = base.reader.rows_of(lines[a:len(lines) - b])
        if new is None:
            return None
        rows = base.rows[:a - base.start] + new + base.rows[len(old) - b - base.start:]
        return _Version(lines, base.start, rows, base.reader) if rows else None


def _lines(data: bytes) -> list[str] | None:
    """The file's lines when a version may be read row by row (see module doc), else None."""
    if len(data) > MAX_BYTES or b"\r" in data or b"\\" in data or b"\0" in data:
        return None
    try:
        return data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return None


def _collect(rows: list[Row]) -> dict[tuple[str, str], tuple[str, object]]:
    """Statements by (cell, rater): the first row of a (cell, rater) wins (`attribution.statements`)."""
    out: dict[tuple[str, str], tuple[str, object]] = {}
    for row in rows:
        if row is not None:
            out.setdefault(row[0], row[1])
    return out
