"""Reconciliation files: parsing and checks against the scores and responses (SPEC §4.4, §4.5).

A flagged cell (raters further apart than `rules.flag_spread`) may only be settled after every
rater who scored it has defended their score with words that are really in the response, so the
checks here are about evidence: a justification must quote the response, the quote must be found
(in the stripped text for a stripped pass), and a consensus may only settle a real disagreement.
Parsing never raises for bad content; every problem is a `Finding` with a stable code and a line.

Finding codes (stable). "Flagged" severity: an error when the cell is flagged, a warning otherwise
(quotes are only *required* for flagged cells; a wrong quote elsewhere is still worth a look).

=========================== ======== ==========================================================
code                        severity meaning
=========================== ======== ==========================================================
file-too-large              error    larger than 1 MiB (nothing else is read)
not-utf8                    error    not UTF-8; line of the first bad byte
symlink                     error    the reconciliation file is a symbolic link
reconciliation-name-unknown error    the file name names no known round/pass of the plan
front-matter-invalid        error    unclosed ``---``, bad YAML, a value of the wrong type
front-matter-mismatch       error    front matter `pass:`/`round:` disagrees with the file name
front-matter-unknown-key    warning  a key other than pass/round/plan_version
plan-version-mismatch       error    front matter `plan_version` is not the plan's `version`
no-reconciliation-table     error    no table with a header holding `Cell` and `Rater` columns
missing-column              error    the table has no `Justification` or no `Consensus` column
malformed-cell              error    a cell not written `Q6/A/D3`
unknown-cell                error    unknown question/condition/dimension, or not in the pass/round
unknown-rater               error    a rater id that is not in the plan (or an empty one)
consensus-invalid           error    consensus neither an integer nor `contested`
consensus-off-scale         error    an integer consensus outside the plan's scale
consensus-conflict          error    a cell given two different consensus values (the later row)
duplicate-row               warning  the same cell and rater twice (both rows are checked)
no-scores                   warning  no score file of this pass and round: nothing to check against
rater-without-scores        warning  a row for a rater who has no score for that cell
missing-justification       error    flagged cell: a rater who scored it has no row / an empty one
missing-consensus           error    flagged cell with no consensus (integer or `contested`)
consensus-without-disagreement error a consensus for a cell on which every rater agrees
no-quote                    error    flagged cell: a justification with no quoted phrase ("…")
quote-not-found             flagged  a quoted phrase is in no response of the pass and round
quote-in-other-response     flagged  a quoted phrase is not in the cell's response but in another
response-missing            flagged  the cell's response file does not exist: quotes unchecked
=========================== ======== ==========================================================

Rows with a malformed or unknown cell or an unknown rater are reported and left out of
`Reconciliation.rows`, so nothing downstream can use their consensus.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from aoven_git.model import CellKey, Finding, Plan, Reconciliation, ReconciliationRow, ScoreSheet, Severity
from aoven_git.scorefile import MAX_BYTES, report_name_mismatches, simple_yaml

__all__ = [
    "COLUMNS",
    "Disagreement",
    "ParsedReconciliation",
    "ReconTable",
    "check_reconciliation",
    "find_tables",
    "flagged_cells",
    "parse_reconciliation",
    "response_key",
]

FRONT_MATTER_KEYS = ("pass", "round", "plan_version")
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
_EMPHASIS_RE = re.compile(r"^(\*\*|__|\*|_|`)(.*)\1$", re.S)
_QUOTE_OPENERS = ('"', "“", "„", "«")


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


# --------------------------------------------------------------------------- helpers


def response_key(plan: Plan, question: str, condition: str, *, stripped: bool) -> str:
    """Repository-relative path of a response, as the `responses` mapping is keyed."""
    return f"{plan.study_dir}/{plan.response_path(condition, question, stripped=stripped)}"


@functools.cache
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])


def _plain(text: str) -> str:
    """Cell text without surrounding emphasis/code marks: `**Q6/A/D3**` is `Q6/A/D3`."""
    s = text.strip()
    while True:
        m = _EMPHASIS_RE.match(s)
        if not m:
            return s
        s = m.group(2).strip()


def _roles(header: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for index, name in enumerate(header):
        role = _ROLES.get(_plain(name).lower().rstrip(":").strip())
        if role is not None and role not in out:
            out[role] = index
    return out


@dataclass(frozen=True)
class _Row:
    line: int
    cells: list[str]


def _tables(body: str) -> list[tuple[ReconTable, list[_Row]]]:
    """Reconciliation tables of the Markdown body (code fences and HTML are not tables)."""
    tokens = _markdown().parse(body)
    out: list[tuple[ReconTable, list[_Row]]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type != "table_open":
            i += 1
            continue
        start = tok.map[0] + 1 if tok.map else 1
        end = tok.map[1] if tok.map else start
        header: list[str] = []
        rows: list[_Row] = []
        current: list[str] | None = None
        line = start
        in_head = False
        i += 1
        while i < len(tokens) and tokens[i].type != "table_close":
            t = tokens[i]
            if t.type == "thead_open":
                in_head = True
            elif t.type == "thead_close":
                in_head = False
            elif t.type == "tr_open":
                current = []
                line = t.map[0] + 1 if t.map else line
            elif t.type == "tr_close" and current is not None:
                if in_head:
                    header = current
                else:
                    rows.append(_Row(line, current))
                current = None
            elif t.type == "inline" and current is not None:
                current.append(t.content)
            i += 1
        roles = _roles(header)
        if "cell" in roles and "rater" in roles:
            out.append((ReconTable(start, end, roles, len(header)), rows))
        i += 1
    return out


_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _lines(text: str) -> list[str]:
    return _LINE_RE.findall(text)


@dataclass
class _FrontMatter:
    present: bool
    closed: bool
    yaml_text: str = ""
    body_line: int = 1  # first line of the Markdown body


def _front_matter(lines: Sequence[str]) -> _FrontMatter:
    """`---` on the first line up to the next `---` or `...` line (as in score files)."""
    if not lines or lines[0].lstrip("\ufeff").rstrip("\r\n").rstrip() != "---":
        return _FrontMatter(False, True)
    for k in range(1, len(lines)):
        if lines[k].rstrip("\r\n").rstrip() in ("---", "..."):
            return _FrontMatter(True, True, "".join(lines[1:k]), k + 2)
    return _FrontMatter(True, False)


def _body(text: str) -> tuple[str, _FrontMatter]:
    """The Markdown body with the front matter blanked (not cut), so token lines are file lines."""
    lines = _lines(text)
    fm = _front_matter(lines)
    if fm.present and fm.closed:
        head = "\n" * (fm.body_line - 1)
        return head + "".join(lines[fm.body_line - 1 :]), fm
    return text.lstrip("\ufeff") if not fm.present else text, fm


def find_tables(text: str) -> list[ReconTable]:
    """The reconciliation tables of a file's text (front matter skipped), in file order."""
    body, _ = _body(text)
    return [t for t, _ in _tables(body)]


# --------------------------------------------------------------------------- parsing


Add = Callable[..., None]


def _identity(plan: Plan, path: str, fm: _FrontMatter, add: Add) -> tuple[str, str]:
    from aoven_git.naming import classify

    named = classify(plan, path)
    primary, main = plan.primary_pass.id, plan.main_round.id
    name_sheet = named.sheet if named.kind == "reconciliation" else None
    if named.kind == "reconciliation" and name_sheet is None:
        add(1, "reconciliation-name-unknown", named.problem or "the file name names no known round/pass")
    pass_id = name_sheet.pass_id if name_sheet else primary
    round_id = name_sheet.round_id if name_sheet else main
    if not fm.present:
        return pass_id, round_id
    if not fm.closed:
        add(
            1,
            "front-matter-invalid",
            "front matter opened with `---` on line 1 is never closed by a `---` line",
        )
        return pass_id, round_id
    from aoven_git.yamlio import YamlError, load_yaml

    try:
        simple = simple_yaml(fm.yaml_text, line_offset=1)  # the score files' fast path
        value, lines = simple if simple is not None else load_yaml(fm.yaml_text, line_offset=1)
    except YamlError as exc:
        add(exc.line or 1, "front-matter-invalid", f"front matter: {exc.message}")
        return pass_id, round_id
    if value is None:
        return pass_id, round_id
    if not isinstance(value, dict):
        add(2, "front-matter-invalid", "front matter must be a mapping of keys (pass:, round:)")
        return pass_id, round_id
    found: dict[str, str] = {}
    for key, val in value.items():
        line = lines.get(str(key), 2)
        if key not in FRONT_MATTER_KEYS:
            add(
                line,
                "front-matter-unknown-key",
                f"unknown front matter key {key!r} (known: {', '.join(FRONT_MATTER_KEYS)})",
                "warning",
            )
        elif key == "plan_version":
            if isinstance(val, bool) or not isinstance(val, int):
                add(line, "front-matter-invalid", f"plan_version must be a whole number, not {val!r}")
            elif val != plan.version:
                add(
                    line,
                    "plan-version-mismatch",
                    f"written under plan version {val}, the plan is version {plan.version}",
                )
        elif isinstance(val, (str, int)) and not isinstance(val, bool):
            found[key] = str(val)
        else:
            add(line, "front-matter-invalid", f"{key} must be an id (text), not {val!r}")
    known = {
        "pass": plan.pass_(found["pass"]) if "pass" in found else True,
        "round": plan.round_(found["round"]) if "round" in found else True,
    }
    for key, ok in known.items():
        if not ok:
            add(lines.get(key, 2), "front-matter-invalid", f"front matter names unknown {key} {found[key]!r}")
            found.pop(key)
    if name_sheet is not None:
        report_name_mismatches(path, found, {"pass": pass_id, "round": round_id}, lines, add)
        return pass_id, round_id
    # not named like a reconciliation file (an explicit path): the front matter decides
    return found.get("pass", pass_id), found.get("round", round_id)


def _consensus(text: str, plan: Plan, line: int, add: Add) -> int | Literal["contested"] | None:
    s = _plain(text)
    if not s:
        return None
    if s.lower() == "contested":
        return "contested"
    if not _INT_RE.match(s):
        add(
            line,
            "consensus-invalid",
            f"consensus {s!r} is neither a whole number on the scale "
            f"({plan.scale.min}–{plan.scale.max}) nor `contested`",
        )
        return None
    value = int(s)
    if value not in plan.scale:
        add(
            line,
            "consensus-off-scale",
            f"consensus {value} is off the scale {plan.scale.min}–{plan.scale.max}",
        )
        return None
    return value


def _cell_key(text: str, plan: Plan, pass_id: str, round_id: str, line: int, add: Add) -> CellKey | None:
    s = _plain(text)
    key = CellKey.parse(s)
    if key is None:
        add(line, "malformed-cell", f"cell {s!r} is not written question/condition/dimension, e.g. Q6/A/D3")
        return None
    problems = []
    if plan.question(key.question) is None:
        problems.append(f"question {key.question!r}")
    if key.condition not in {c.id for c in plan.conditions}:
        problems.append(f"condition {key.condition!r}")
    if plan.dimension(key.dimension) is None:
        problems.append(f"dimension {key.dimension!r}")
    if problems:
        add(line, "unknown-cell", f"cell {key}: unknown {', '.join(problems)}")
        return None
    if key not in set(plan.expected_cells(pass_id, round_id)):
        add(line, "unknown-cell", f"cell {key} is not scored in pass {pass_id}, round {round_id}")
        return None
    return key


def parse_reconciliation(plan: Plan, path: str, data: bytes, *, is_symlink: bool = False) -> Reconciliation:
    """Parse one reconciliation file. `path` is repository-relative (posix). Never raises for
    bad content: problems are the result's `findings` (file-level checks only: see
    `check_reconciliation` for the checks against scores and responses)."""
    findings: list[Finding] = []

    def add(line: int | None, code: str, message: str, severity: Severity = "error") -> None:
        findings.append(Finding(path, line, code, message, severity))

    def result(
        pass_id: str, round_id: str, rows: Sequence[ReconciliationRow] = (), table_line: int | None = None
    ) -> ParsedReconciliation:
        ordered = tuple(sorted(findings, key=lambda f: (f.line or 0, f.severity != "error", f.code)))
        return ParsedReconciliation(path, pass_id, round_id, tuple(rows), ordered, table_line)

    no_fm = _FrontMatter(False, True)
    if is_symlink:
        add(1, "symlink", "reconciliation files must be regular files, not symbolic links")
        return result(*_identity(plan, path, no_fm, add))
    if len(data) > MAX_BYTES:
        add(1, "file-too-large", f"file is {len(data)} bytes; the limit is {MAX_BYTES} bytes (1 MiB)")
        return result(*_identity(plan, path, no_fm, add))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        add(
            data[: exc.start].count(b"\n") + 1,
            "not-utf8",
            f"not valid UTF-8 (first bad byte at offset {exc.start}); save the file as UTF-8",
        )
        return result(*_identity(plan, path, no_fm, add))
    body, fm = _body(text)
    pass_id, round_id = _identity(plan, path, fm, add)
    tables = _tables(body)
    if not tables:
        add(
            1,
            "no-reconciliation-table",
            "no reconciliation table found: expected a header `| Cell | Rater | Justification | Consensus |`",
        )
        return result(pass_id, round_id)
    raters = {r.id for r in plan.raters}
    rows: list[ReconciliationRow] = []
    seen: dict[tuple[CellKey, str], int] = {}
    first_consensus: dict[CellKey, tuple[int | str, int]] = {}
    for table, table_rows in tables:
        cols = table.columns
        for role in ("justification", "consensus"):
            if role not in cols:
                add(
                    table.header_line,
                    "missing-column",
                    f"the reconciliation table has no {role.capitalize()} column "
                    f"(expected | {' | '.join(COLUMNS)} |)",
                )

        def col(cells: list[str], role: str, cols: dict[str, int] = cols) -> str:
            index = cols.get(role)
            return cells[index] if index is not None and index < len(cells) else ""

        for raw in table_rows:
            if not any(c.strip() for c in raw.cells):
                continue
            line = raw.line
            key = _cell_key(col(raw.cells, "cell"), plan, pass_id, round_id, line, add)
            rater = _plain(col(raw.cells, "rater"))
            rater_ok = rater in raters
            if not rater_ok:
                known = ", ".join(sorted(raters))
                add(
                    line,
                    "unknown-rater",
                    f"rater {rater!r} is not in the plan (known: {known})"
                    if rater
                    else f"the row names no rater (known: {known})",
                )
            consensus = _consensus(col(raw.cells, "consensus"), plan, line, add)
            if key is None or not rater_ok:
                continue
            if (key, rater) in seen:
                add(
                    line,
                    "duplicate-row",
                    f"{key} already has a row for {rater} on line {seen[key, rater]}",
                    "warning",
                )
            else:
                seen[key, rater] = line
            if consensus is not None:
                earlier = first_consensus.get(key)
                if earlier is None:
                    first_consensus[key] = (consensus, line)
                elif earlier[0] != consensus:
                    add(
                        line,
                        "consensus-conflict",
                        f"{key}: consensus {consensus} conflicts with {earlier[0]} on line {earlier[1]}",
                    )
            rows.append(
                ReconciliationRow(key, rater, col(raw.cells, "justification").strip(), consensus, line)
            )
    return result(pass_id, round_id, rows, tables[0][0].header_line)


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

    Flagged = max − min over the raters who have a score for the cell > `rules.flag_spread`.
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
        spread = max(scores.values()) - min(scores.values())
        if spread > 0:
            out.append(Disagreement(key, scores, spread, spread > plan.rules.flag_spread))
    return by_cell, out


def _has_quote(text: str) -> bool:
    return any(c in text for c in _QUOTE_OPENERS)


def check_reconciliation(
    plan: Plan,
    rec: Reconciliation,
    sheets: Sequence[ScoreSheet],
    responses: Mapping[str, str] | None,
) -> list[Finding]:
    """Every finding of the file: the parser's, plus the checks against the score sheets of the
    file's pass and round and against the response texts (`responses`: repository path → text,
    stripped copies included; a missing stripped copy is derived from its original exactly as
    `strip-markers` writes it; None when no response source exists: quotes are not checked).
    Sorted by line."""
    from aoven_git.quotes import extract_quotes, find_quote, quote_in

    out: list[Finding] = list(rec.findings)

    def add(line: int | None, code: str, message: str, severity: Severity = "error") -> None:
        out.append(Finding(rec.path, line, code, message, severity))

    p = plan.pass_(rec.pass_id)
    rnd = plan.round_(rec.round_id)
    if p is None or rnd is None:
        return _sorted(out)
    table_line = getattr(rec, "table_line", None) or 1
    rows_by_cell: dict[CellKey, list[ReconciliationRow]] = {}
    for row in rec.rows:
        rows_by_cell.setdefault(row.key, []).append(row)
    has_scores = bool(_sheets_for(sheets, p.id, rnd.id))
    by_cell, disagreements = flagged_cells(plan, sheets, p.id, rnd.id)
    flagged = {d.key: d for d in disagreements if d.flagged}
    differing = {d.key for d in disagreements}
    # A rater whose score file is invalid (a symlink, unreadable, errors) may have scores that are
    # missing here: "all raters agree" cannot be judged then, so that check waits for the fix.
    invalid = [s.path for s in _sheets_for(sheets, p.id, rnd.id) if not s.ok]
    if invalid:
        add(
            table_line,
            "scores-incomplete",
            f"score file(s) {', '.join(invalid)} of pass {p.id}, round {rnd.id} have errors: whether "
            "a consensus settles a real disagreement is checked once they are fixed",
            "warning",
        )
    if not has_scores:
        add(
            table_line,
            "no-scores",
            f"no score file of pass {p.id}, round {rnd.id} was given: flagged cells, consensus and "
            "justifications cannot be checked against the scores",
            "warning",
        )

    # -- rows against scores
    if has_scores:
        for key, rows in rows_by_cell.items():
            scored = by_cell.get(key, {})
            for row in rows:
                if row.rater not in scored:
                    add(
                        row.line,
                        "rater-without-scores",
                        f"{key}: {row.rater} has no score for this cell in pass {p.id}, round {rnd.id}",
                        "warning",
                    )
            with_consensus = next((r for r in rows if r.consensus is not None), None)
            if with_consensus is not None and key not in differing and not invalid:
                values = sorted(set(scored.values()))
                agreed = f"all raters scored {values[0]}" if values else "no rater scored it"
                add(
                    with_consensus.line,
                    "consensus-without-disagreement",
                    f"{key}: consensus {with_consensus.consensus} for a cell without disagreement "
                    f"({agreed}); a consensus may only settle a disagreement",
                )
        for key, d in flagged.items():
            rows = rows_by_cell.get(key, [])
            where = rows[0].line if rows else table_line
            scores = ", ".join(f"{r} {v}" for r, v in d.scores.items())
            for rater in d.scores:
                mine = [r for r in rows if r.rater == rater and r.justification]
                if not mine:
                    add(
                        where,
                        "missing-justification",
                        f"{key} is flagged ({scores}; spread {d.spread} > {plan.rules.flag_spread}): "
                        f"{rater} has no justification",
                    )
            if not any(r.consensus is not None for r in rows):
                add(
                    where,
                    "missing-consensus",
                    f"{key} is flagged ({scores}): give a consensus (an integer "
                    f"{plan.scale.min}–{plan.scale.max} or `contested`)",
                )

    # -- quotes
    if responses is None:
        return _sorted(out)
    source: Mapping[str, str] = responses
    markers = () if p.stripped else plan.markers
    texts: dict[str, str | None] = {}

    def text_of(question: str, condition: str) -> str | None:
        k = response_key(plan, question, condition, stripped=p.stripped)
        if k not in texts:
            t = source.get(k)
            if t is None and p.stripped:
                original = source.get(response_key(plan, question, condition, stripped=False))
                if original is not None:
                    from aoven_git.markers import strip_response

                    t = strip_response(original, plan.markers).text
            texts[k] = t
        return texts[k]

    others: dict[str, str] | None = None
    missing_reported: set[CellKey] = set()
    for row in rec.rows:
        if not row.justification:
            continue
        is_flagged = row.key in flagged
        severity: Severity = "error" if is_flagged else "warning"
        quotes = extract_quotes(row.justification) if _has_quote(row.justification) else []
        if not quotes:
            if is_flagged:
                add(
                    row.line,
                    "no-quote",
                    f"{row.key}: the justification of {row.rater} quotes nothing; quote the response "
                    'between "…"',
                )
            continue
        own = response_key(plan, row.key.question, row.key.condition, stripped=p.stripped)
        text = text_of(row.key.question, row.key.condition)
        if text is None:
            if row.key not in missing_reported:
                missing_reported.add(row.key)
                add(
                    row.line,
                    "response-missing",
                    f"{row.key}: the response {own} does not exist, so its quotes cannot be checked",
                    severity,
                )
            continue
        for quote in quotes:
            if quote_in(quote, text, markers=markers):
                continue
            if others is None:
                others = {}
                for q in rnd.questions:
                    for c in p.conditions:
                        k = response_key(plan, q, c, stripped=p.stripped)
                        t = text_of(q, c)
                        if t is not None:
                            others[k] = t
            elsewhere = find_quote(quote, {k: v for k, v in others.items() if k != own}, markers=markers)
            shown = quote if len(quote) <= 80 else quote[:77] + "..."
            if elsewhere:
                add(
                    row.line,
                    "quote-in-other-response",
                    f'{row.key}: quote "{shown}" of {row.rater} is not in {own} '
                    f"but in {', '.join(elsewhere)}",
                    severity,
                )
            else:
                add(
                    row.line,
                    "quote-not-found",
                    f'{row.key}: quote "{shown}" of {row.rater} is not in {own}'
                    + (" (the stripped text the blinded raters saw)" if p.stripped else ""),
                    severity,
                )
    return _sorted(out)


def _sorted(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.line or 0, f.severity != "error", f.code))
