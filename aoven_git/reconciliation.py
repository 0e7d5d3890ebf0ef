"""Reconciliation files: parsing and checks against the scores and responses.

The format is described in docs/score-files.md ("Reconciliation files"). A flagged cell (raters
further apart than `rules.flag_spread`) may only be settled after every rater who scored it has
defended their score with words that are really in the response, so the checks here are about
evidence: a justification must quote the response, the quote must be found (in the stripped
text for a stripped pass), and a consensus may only settle a real disagreement. Reading the file
(symlink, size, encoding, front matter, identity) is `studyfile`'s, its tables `mdtables`'s.
Parsing never raises for bad content; every problem is a `Finding` with a stable code and a line.

Finding codes (stable). "Flagged" severity: an error when the cell is flagged, a warning otherwise
(quotes are only *required* for flagged cells; a wrong quote elsewhere is still worth a look).

============================== ======== ======================================================
code                           severity meaning
============================== ======== ======================================================
file-too-large                 error    larger than 1 MiB (nothing else is read)
not-utf8                       error    not UTF-8; line of the first bad byte
symlink                        error    the reconciliation file is a symbolic link
reconciliation-name-unknown    error    the file name names no known round/pass of the plan
front-matter-invalid           error    unclosed ``---``, bad YAML, a value of the wrong type
front-matter-mismatch          error    front matter `pass:`/`round:` disagrees with the file name
front-matter-unknown-key       warning  a key other than pass/round/plan_version
plan-version-mismatch          error    front matter `plan_version` is not the plan's `version`
no-reconciliation-table        error    no table with a header holding `Cell` and `Rater` columns
missing-column                 error    the table has no `Justification` or no `Consensus` column
malformed-cell                 error    a cell not written `Q6/A/D3`
unknown-cell                   error    unknown question/condition/dimension, or not in the pass/round
unknown-rater                  error    a rater id that is not in the plan (or an empty one)
consensus-invalid              error    consensus neither an integer nor `contested`
consensus-off-scale            error    an integer consensus outside the plan's scale
consensus-conflict             error    one rater accepts two different values for a cell (the later row)
duplicate-row                  warning  the same cell and rater twice (both rows are checked)
no-scores                      warning  no score file of this pass and round: nothing to check against
scores-incomplete              warning  a score file of the pass and round has errors
rater-without-scores           warning  a row for a rater who has no score for that cell
missing-justification          error    flagged cell: a rater who scored it has no row (at the
                                        cell's last row; at the table header when the cell has
                                        none) or an empty one (at that row)
missing-consensus              error    flagged cell: a rater's row states no value they accept
consensus-without-disagreement error    a consensus for a cell on which every rater agrees
unattributed-row               warning  (validate, in git) a row you are writing for another rater: it
                                        will not count (verify-seal and report judge rows from history)
no-quote                       error    flagged cell: a justification with no quoted phrase ("…")
quote-not-found                flagged  a quoted phrase is in no response of the pass and round
quote-in-other-response        flagged  a quoted phrase is not in the cell's response but in another
response-missing               flagged  the cell's response file does not exist: quotes unchecked
============================== ======== ======================================================

Rows with a malformed or unknown cell or an unknown rater are reported and left out of
`Reconciliation.rows`, so nothing downstream can use their consensus.

Designs (docs/score-files.md, "Replicates" and "Labels"): in a plan with replicates a cell is
written `L1/TRT#2/V`; on a nominal scale a consensus is a label (any letter case), stored as its
position, and shown as the label again in every message. A disagreement on a nominal scale has
no size: any two different labels flag the cell (`flag_spread` applies to ordinal scales only),
and its spread is the number of different labels minus one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from aoven_git import mdtables
from aoven_git.model import (
    CellKey,
    Finding,
    Findings,
    Pass,
    Plan,
    Reconciliation,
    ReconciliationRow,
    Round,
    ScoreSheet,
    Severity,
    sort_findings,
)
from aoven_git.quotes import ResponseTexts, extract_quotes, has_quote, shorten
from aoven_git.studyfile import RECONCILIATION, markdown_body, read_study_file, reconciliation_identity

__all__ = [
    "COLUMNS",
    "Disagreement",
    "ParsedReconciliation",
    "ReconTable",
    "check_reconciliation",
    "find_tables",
    "flag_spread",
    "flagged_cells",
    "parse_reconciliation",
    "response_key",
]

FRONT_MATTER_KEYS = RECONCILIATION.keys
COLUMNS = ("Cell", "Rater", "Justification", "Consensus")

# header text (lower case, no trailing ':') → column role
_ROLES: dict[str, str] = {
    "cell": "cell",
    "rater": "rater",
    "justification": "justification",
    "justifications": "justification",
    "rationale": "justification",
    "consensus": "consensus",
}
_INT_RE = re.compile(r"^[+-]?[0-9]{1,18}$")


@dataclass(frozen=True)
class ParsedReconciliation(Reconciliation):
    """A `Reconciliation` that also remembers where its table starts (for findings about cells
    that have no row at all). `check_reconciliation` accepts a plain `Reconciliation` too."""

    table_line: int | None = None


@dataclass(frozen=True)
class ReconTable:
    """Where a reconciliation table sits in the text: what `disagreements --write` appends to.

    `header_line` and `end_line` are 1-based; `end_line` is the last line of the table (header,
    delimiter or body row). `columns` maps each role to its column index."""

    header_line: int
    end_line: int
    columns: dict[str, int]
    width: int


def flag_spread(plan: Plan) -> int:
    """The spread above which a cell is flagged: `rules.flag_spread`, or 0 on a nominal scale
    (any two different labels are a disagreement to reconcile; a label has no distance)."""
    return 0 if plan.scale.labels else plan.rules.flag_spread


def shown(plan: Plan, value: int | str | None) -> str:
    """A score or consensus as raters write it: the label on a nominal scale."""
    return plan.scale.label(value) if isinstance(value, int) and plan.scale.labels else str(value)


def _allowed(plan: Plan) -> str:
    """What a consensus may be, for messages."""
    if plan.scale.labels:
        return f"one of the labels {', '.join(plan.scale.labels)}"
    return f"a whole number on the scale ({plan.scale.min}–{plan.scale.max})"


def response_key(plan: Plan, question: str, condition: str, *, stripped: bool) -> str:
    """Repository-relative path of a response, as the `responses` mapping is keyed."""
    return ResponseTexts(plan).path(question, condition, stripped)


# --------------------------------------------------------------------------- tables


def _roles(header: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for index, name in enumerate(header):
        role = _ROLES.get(name.lower().rstrip(":").strip())
        if role is not None and role not in out:
            out[role] = index
    return out


def _tables(body: str) -> list[tuple[ReconTable, mdtables.Table]]:
    """Reconciliation tables of the Markdown body (code fences and HTML are not tables)."""
    out = []
    for table in mdtables.tables(body):
        roles = _roles(table.header)
        if "cell" in roles and "rater" in roles:
            out.append((ReconTable(table.line, table.end_line, roles, len(table.header)), table))
    return out


def find_tables(text: str) -> list[ReconTable]:
    """The reconciliation tables of a file's text (front matter skipped), in file order."""
    return [t for t, _ in _tables(markdown_body(text))]


# --------------------------------------------------------------------------- parsing


def _consensus(text: str, plan: Plan, line: int, found: Findings) -> int | Literal["contested"] | None:
    s = text.strip()
    if not s:
        return None
    if s.lower() == "contested":
        return "contested"
    if plan.scale.labels:
        value = plan.scale.value_of(s)
        if value is None:
            found.error(line, "consensus-invalid",
                        f"consensus {s!r} is neither {_allowed(plan)} nor `contested`")
        return value
    scale = f"{plan.scale.min}–{plan.scale.max}"
    if not _INT_RE.match(s):
        found.error(
            line,
            "consensus-invalid",
            f"consensus {s!r} is neither a whole number on the scale ({scale}) nor `contested`",
        )
        return None
    if int(s) not in plan.scale:
        found.error(line, "consensus-off-scale", f"consensus {int(s)} is off the scale {scale}")
        return None
    return int(s)


class _Rows:
    """Reads the rows of a file's reconciliation tables, keeping what repeats across rows."""

    def __init__(self, plan: Plan, pass_id: str, round_id: str, found: Findings) -> None:
        self.plan, self.pass_id, self.round_id, self.found = plan, pass_id, round_id, found
        self.expected = frozenset(plan.expected_cells(pass_id, round_id))
        self.raters = {r.id for r in plan.raters}
        self.rows: list[ReconciliationRow] = []
        self.seen: dict[tuple[CellKey, str], int] = {}
        self.first_consensus: dict[tuple[CellKey, str], tuple[int | str, int]] = {}

    def cell_key(self, text: str, line: int) -> CellKey | None:
        key = CellKey.parse(text)
        if key is None:
            self.found.error(
                line,
                "malformed-cell",
                f"cell {text!r} is not written question/condition/dimension, e.g. Q6/A/D3",
            )
            return None
        problems = []
        if self.plan.question(key.question) is None:
            problems.append(f"question {key.question!r}")
        if key.condition not in {c.id for c in self.plan.conditions}:
            problems.append(f"condition {key.condition!r}")
        if self.plan.dimension(key.dimension) is None:
            problems.append(f"dimension {key.dimension!r}")
        if problems:
            self.found.error(line, "unknown-cell", f"cell {key}: unknown {', '.join(problems)}")
            return None
        if key not in self.expected:
            self.found.error(line, "unknown-cell", self._outside(key))
            return None
        return key

    def _outside(self, key: CellKey) -> str:
        """Why a cell of known ids is not one of the pass and round (a replicate to name?)."""
        why = f"cell {key} is not scored in pass {self.pass_id}, round {self.round_id}"
        n = self.plan.replicates
        if n > 1 and not key.replicate:
            return f"{why}: name its replicate, e.g. {replace(key, replicate=1)} (the plan has {n})"
        if key.replicate and (n == 1 or key.replicate > n):
            return f"{why}: replicate #{key.replicate} is not in the plan (replicates: {n})"
        return why

    def rater(self, text: str, line: int) -> bool:
        if text in self.raters:
            return True
        known = ", ".join(sorted(self.raters))
        self.found.error(
            line,
            "unknown-rater",
            f"rater {text!r} is not in the plan (known: {known})"
            if text
            else f"the row names no rater (known: {known})",
        )
        return False

    def repeats(self, key: CellKey, rater: str, consensus: int | str | None, line: int) -> None:
        """A rater speaks once per cell: a second row is a duplicate, and one stating another value
        than their first is a conflict (raters differing from each other is `contested`, not an
        error: each row is its rater's own statement)."""
        if (key, rater) in self.seen:
            self.found.warn(
                line, "duplicate-row", f"{key} already has a row for {rater} on line {self.seen[key, rater]}"
            )
        else:
            self.seen[key, rater] = line
        earlier = self.first_consensus.get((key, rater)) if consensus is not None else None
        if consensus is not None and earlier is None:
            self.first_consensus[key, rater] = (consensus, line)
        elif earlier is not None and earlier[0] != consensus:
            self.found.error(
                line,
                "consensus-conflict",
                f"{key}: {rater} accepts {shown(self.plan, consensus)} here but "
                f"{shown(self.plan, earlier[0])} on line {earlier[1]}",
            )

    def read(self, table: ReconTable, line: int, cells: list[str]) -> None:
        if not any(c.strip() for c in cells):
            return

        def col(role: str) -> str:
            index = table.columns.get(role)
            return cells[index].strip() if index is not None and index < len(cells) else ""

        key = self.cell_key(col("cell"), line)
        rater = col("rater")
        rater_ok = self.rater(rater, line)
        consensus = _consensus(col("consensus"), self.plan, line, self.found)
        if key is None or not rater_ok:
            return
        self.repeats(key, rater, consensus, line)
        self.rows.append(ReconciliationRow(key, rater, col("justification"), consensus, line))


def parse_reconciliation(
    plan: Plan, path: str, data: bytes, *, is_symlink: bool = False
) -> ParsedReconciliation:
    """Parse one reconciliation file. `path` is repository-relative (posix). Never raises for
    bad content: problems are the result's `findings` (file-level checks only: see
    `check_reconciliation` for the checks against scores and responses)."""
    found = Findings(path)
    sf = read_study_file(plan, path, data, RECONCILIATION, found, is_symlink=is_symlink)
    ident = reconciliation_identity(plan, sf, found)
    pass_id, round_id = ident.sheet.pass_id, ident.sheet.round_id
    tables = _tables(sf.body) if sf.text is not None else []
    if sf.text is not None and not tables:
        found.error(
            1,
            "no-reconciliation-table",
            "no reconciliation table found: expected a header `| Cell | Rater | Justification | Consensus |`",
        )
    rows = _Rows(plan, pass_id, round_id, found)
    for table, md in tables:
        for role in ("justification", "consensus"):
            if role not in table.columns:
                found.error(
                    table.header_line,
                    "missing-column",
                    f"the reconciliation table has no {role.capitalize()} column "
                    f"(expected | {' | '.join(COLUMNS)} |)",
                )
        for line, cells in md.rows:
            rows.read(table, line, cells)
    table_line = tables[0][0].header_line if tables else None
    return ParsedReconciliation(path, pass_id, round_id, tuple(rows.rows), found.sorted(),
                                amendment=ident.sheet.amendment, table_line=table_line)


def rows_not_by(plan: Plan, path: str, new: bytes, parents: Sequence[bytes | None],
                email: str) -> list[Finding]:
    """`unattributed-row` warnings for the rows a commit by `email` writes for another rater: they
    will not count (docs/sealing.md, "Attributed consensus"). `parents` are the file in each parent
    of the commit (HEAD, and MERGE_HEAD while a merge is concluded; None where it is absent). What
    a commit writes is decided by `attribution.written`, the rule verify-seal applies: reordered
    rows, and rows a merge carries unchanged from a parent, are not written anew."""
    from aoven_git.attribution import Version, speaks_for, statements, written

    def version(data: bytes | None) -> Version:
        found = statements(parse_reconciliation(plan, path, data)) if data is not None else {}
        return Version(0, (), email, found)

    rec = parse_reconciliation(plan, path, new)
    writes = set(written(Version(0, (), email, statements(rec)), [version(d) for d in parents]))
    out = []
    for row in rec.rows:
        if (str(row.key), row.rater) not in writes or speaks_for(plan, row.rater, Version(0, (), email, {})):
            continue
        who = email or "(no email)"
        out.append(Finding(path, row.line, "unattributed-row",
                           f"the row of {row.rater} for {row.key} is being written by {who}, not by "
                           f"{row.rater}: it will be ignored; {row.rater} writes and commits their "
                           "own row", "warning"))
    return out


def without_raters(rec: Reconciliation, raters: Collection[str]) -> Reconciliation:
    """`rec` without the rows of `raters` (optional raters excluded for seal violations)."""
    if not raters:
        return rec
    return replace(rec, rows=tuple(r for r in rec.rows if r.rater not in raters))


# --------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class Disagreement:
    """A cell on which raters differ: each scoring rater's score, and the spread."""

    key: CellKey
    scores: dict[str, int]
    spread: int
    flagged: bool


def _sheets_for(sheets: Sequence[ScoreSheet], pass_id: str, round_id: str) -> list[ScoreSheet]:
    """The sheets of one pass and round, one per rater (the first by path when duplicated)."""
    out: dict[str, ScoreSheet] = {}
    for s in sorted(sheets, key=lambda s: s.path):
        sid = s.sheet
        if sid.rater and sid.pass_id == pass_id and sid.round_id == round_id:
            out.setdefault(sid.rater, s)
    return list(out.values())


def flagged_cells(
    plan: Plan, sheets: Sequence[ScoreSheet], pass_id: str, round_id: str
) -> tuple[dict[CellKey, dict[str, int]], list[Disagreement]]:
    """Scores by cell and rater (raters in plan order) and the cells where raters differ.

    Flagged = max − min over the raters who have a score for the cell > `rules.flag_spread`; on
    a nominal scale any two different labels (spread = different labels − 1, `flag_spread`).
    """
    order = {r.id: k for k, r in enumerate(plan.raters)}
    picked = sorted(
        _sheets_for(sheets, pass_id, round_id), key=lambda s: order.get(s.sheet.rater, len(order))
    )
    by_cell: dict[CellKey, dict[str, int]] = {}
    for s in picked:
        for cell in s.cells:
            by_cell.setdefault(cell.key, {}).setdefault(s.sheet.rater, cell.score)
    cells_order = {k: i for i, k in enumerate(plan.expected_cells(pass_id, round_id))}
    out = []
    for key in sorted(by_cell, key=lambda k: (cells_order.get(k, len(cells_order)), k)):
        scores = by_cell[key]
        if len(scores) < 2:
            continue
        spread = _spread(plan, scores.values())
        if spread > 0:
            out.append(Disagreement(key, scores, spread, spread > flag_spread(plan)))
    return by_cell, out


def _spread(plan: Plan, scores: Collection[int]) -> int:
    """max − min, or on a nominal scale the number of different labels − 1."""
    return len(set(scores)) - 1 if plan.scale.labels else max(scores) - min(scores)


def flagged_keys(scores: Mapping[str, Mapping[CellKey, int]], flag_spread: int) -> set[CellKey]:
    """The flagged cells (as in `flagged_cells`) of scores given as rater -> cell -> score."""
    by_cell: dict[CellKey, list[int]] = {}
    for cells in scores.values():
        for key, score in cells.items():
            by_cell.setdefault(key, []).append(score)
    return {k for k, v in by_cell.items() if max(v) - min(v) > flag_spread}


@dataclass
class _Check:
    """What the checks of one reconciliation file share."""

    plan: Plan
    rec: Reconciliation
    p: Pass
    rnd: Round
    found: Findings
    table_line: int
    rows_by_cell: dict[CellKey, list[ReconciliationRow]]
    by_cell: dict[CellKey, dict[str, int]]
    differing: set[CellKey]
    flagged: dict[CellKey, Disagreement]


def _against_scores(ck: _Check, invalid: bool) -> None:
    """Rows for raters without a score, and consensus on cells where nobody disagrees."""
    for key, rows in ck.rows_by_cell.items():
        scored = ck.by_cell.get(key, {})
        for row in rows:
            if row.rater not in scored:
                ck.found.warn(
                    row.line,
                    "rater-without-scores",
                    f"{key}: {row.rater} has no score for this cell in pass {ck.p.id}, round {ck.rnd.id}",
                )
        settled = next((r for r in rows if r.consensus is not None), None)
        if settled is not None and key not in ck.differing and not invalid:
            values = sorted(set(scored.values()))
            agreed = f"all raters scored {shown(ck.plan, values[0])}" if values else "no rater scored it"
            ck.found.error(
                settled.line,
                "consensus-without-disagreement",
                f"{key}: consensus {shown(ck.plan, settled.consensus)} for a cell without disagreement "
                f"({agreed}); a consensus may only settle a disagreement",
            )


def _justifications(ck: _Check, d: Disagreement, rows: list[ReconciliationRow]) -> None:
    """Each rater of a flagged cell needs a row with a justification: the finding points at that
    rater's row, or (no row) at the cell's last row, or (the cell has none) at the table."""
    scores = ", ".join(f"{r} {shown(ck.plan, v)}" for r, v in d.scores.items())
    flagged = (f"{d.key} is flagged ({scores}; different labels)" if ck.plan.scale.labels
               else f"{d.key} is flagged ({scores}; spread {d.spread} > {ck.plan.rules.flag_spread})")
    for rater in d.scores:
        mine = [r for r in rows if r.rater == rater]
        if any(r.justification for r in mine):
            continue
        if mine:
            line, why = mine[0].line, f"the row of {rater} has no justification"
        elif rows:
            line = rows[-1].line
            why = f"{rater} has no row for it (add one after line {line})"
        else:
            line, why = ck.table_line, f"{rater} has no row for it (the cell has no row in this table)"
        ck.found.error(line, "missing-justification", f"{flagged}: {why}")


def _flagged(ck: _Check) -> None:
    """Each rater of a flagged cell justifies their score and states the value THEY accept."""
    for key, d in ck.flagged.items():
        rows = ck.rows_by_cell.get(key, [])
        _justifications(ck, d, rows)
        for row in rows:
            if row.rater in d.scores and row.consensus is None and row.justification:
                scale = ck.plan.scale
                accepts = _allowed(ck.plan) if scale.labels else f"an integer {scale.min}–{scale.max}"
                ck.found.error(
                    row.line,
                    "missing-consensus",
                    f"{key} is flagged: the row of {row.rater} states no consensus (the value {row.rater} "
                    f"accepts, {accepts}, or `contested`)",
                )


def _quotes(ck: _Check, texts: ResponseTexts) -> None:
    """Every quoted phrase of every justification, looked up in the cell's response."""
    missing_reported: set[CellKey] = set()
    for row in ck.rec.rows:
        if not row.justification:
            continue
        is_flagged = row.key in ck.flagged
        severity: Severity = "error" if is_flagged else "warning"
        quotes = extract_quotes(row.justification) if has_quote(row.justification) else []
        if not quotes and is_flagged:
            ck.found.error(
                row.line,
                "no-quote",
                f'{row.key}: the justification of {row.rater} quotes nothing; quote the response between "…"',
            )
        for quote in quotes:
            where = texts.check(quote, row.key.question, row.key.condition, ck.p, ck.rnd,
                                replicate=row.key.replicate)
            if where.missing:
                if row.key not in missing_reported:
                    missing_reported.add(row.key)
                    ck.found.add(
                        row.line,
                        "response-missing",
                        f"{row.key}: the response {where.path} does not exist, so its quotes "
                        "cannot be checked",
                        severity,
                    )
                break
            if where.found:
                continue
            shown = shorten(quote)
            if where.elsewhere:
                message = f'{row.key}: quote "{shown}" of {row.rater} is not in {where.path} but in '
                ck.found.add(
                    row.line, "quote-in-other-response", message + ", ".join(where.elsewhere), severity
                )
            else:
                stripped = " (the stripped text the blinded raters saw)" if ck.p.stripped else ""
                message = f'{row.key}: quote "{shown}" of {row.rater} is not in {where.path}{stripped}'
                ck.found.add(row.line, "quote-not-found", message, severity)


def _state(plan: Plan, rec: Reconciliation, sheets: Sequence[ScoreSheet], found: Findings) -> _Check | None:
    """What the checks need, with the warnings about the scores they rest on; None when the
    file's pass or round is not in the plan."""
    p, rnd = plan.pass_(rec.pass_id), plan.round_(rec.round_id)
    if p is None or rnd is None:
        return None
    table_line = getattr(rec, "table_line", None) or 1
    rows_by_cell: dict[CellKey, list[ReconciliationRow]] = {}
    for row in rec.rows:
        rows_by_cell.setdefault(row.key, []).append(row)
    by_cell, disagreements = flagged_cells(plan, sheets, p.id, rnd.id)
    flagged = {d.key: d for d in disagreements if d.flagged}
    differing = {d.key for d in disagreements}
    return _Check(plan, rec, p, rnd, found, table_line, rows_by_cell, by_cell, differing, flagged)


def check_reconciliation(
    plan: Plan,
    rec: Reconciliation,
    sheets: Sequence[ScoreSheet],
    responses: ResponseTexts | Mapping[str, str] | None,
) -> list[Finding]:
    """Every finding of the file: the parser's, plus the checks against the score sheets of the
    file's pass and round and against the response texts (`responses`: a `ResponseTexts`, or a
    mapping repository path → text, stripped copies included — a missing stripped copy is
    derived from its original exactly as `strip-markers` writes it; None when no response source
    exists: quotes are not checked). Sorted by line."""
    found = Findings(rec.path)
    found.extend(rec.findings)
    ck = _state(plan, rec, sheets, found)
    if ck is None:
        return list(found.sorted())
    mine = _sheets_for(sheets, ck.p.id, ck.rnd.id)
    # A rater whose score file is invalid (a symlink, unreadable, errors) may have scores that are
    # missing here: "all raters agree" cannot be judged then, so that check waits for the fix.
    invalid = [s.path for s in mine if not s.ok]
    if invalid:
        found.warn(
            ck.table_line,
            "scores-incomplete",
            f"score file(s) {', '.join(invalid)} of pass {ck.p.id}, round {ck.rnd.id} have errors: whether "
            "a consensus settles a real disagreement is checked once they are fixed",
        )
    if not mine:
        found.warn(
            ck.table_line,
            "no-scores",
            f"no score file of pass {ck.p.id}, round {ck.rnd.id} was given: flagged cells, consensus and "
            "justifications cannot be checked against the scores",
        )
    else:
        _against_scores(ck, bool(invalid))
        _flagged(ck)
    if responses is not None:
        texts = responses if isinstance(responses, ResponseTexts) else ResponseTexts(plan, given=responses)
        _quotes(ck, texts)
    return list(sort_findings(found))


def consensus_files(plan: Plan, round_id: str, amendment: str | None = None) -> dict[str, str]:
    """Per pass, where its consensus is written and how a rater adds their rows (for the
    NOT-READY sentence of a flagged cell without consensus)."""
    from aoven_git.naming import reconciliation_path

    also = f" --amendment {amendment}" if amendment else ""
    return {p.id: f"{reconciliation_path(plan, p.id, round_id, amendment)}: each rater adds their rows with "
                  f"`aoven-git disagreements --pass {p.id}{also} --write`" for p in plan.passes}
