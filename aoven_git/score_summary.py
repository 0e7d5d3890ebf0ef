"""Summary tables: a restatement of the scores, checked against them and never read as scores.

Real score files end with an overview, one row per question and one column per (dimension,
condition), with per-condition totals: `| Q | D1 A | … | D8 A | A Total | D1 B | … | B Total |`.
It is redundant with the detail above it, and copying numbers by hand is where mistakes creep
in, so every value and total is compared with the cells the file's score tables gave: a
difference is the error `summary-mismatch` at the summary row, naming the line of the detail it
contradicts; agreement says nothing (docs/score-files.md, "Summary tables").

A total is compared with the sum of the cells of the dimensions the summary lists for that
condition; a value or total whose cells the detail lacks (missing, or not a whole number) is not
compared: those cells have findings of their own. Rows whose first cell names no question (a
`Mean` or `Total` row) are not compared either, nor is any summary in a plan with replicates (a
summary row is one per question and condition: it names no response).
"""

from __future__ import annotations

from aoven_git.model import Findings
from aoven_git.score_cells import Note, Parsed, Placed, parse_score
from aoven_git.score_ids import PlanIds

__all__ = ["check_summaries"]


def _lines(lines: list[int]) -> str:
    """`line 12`, `lines 12–19` or `lines 12, 30`."""
    ordered = sorted(set(lines))
    if len(ordered) == 1:
        return f"line {ordered[0]}"
    if ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"lines {ordered[0]}–{ordered[-1]}"
    return "lines " + ", ".join(map(str, ordered))


def _written(text: str, what: str, line: int, found: Findings) -> int | None:
    """The whole number a summary cell holds; None when empty or (after an error) not a number."""
    value = parse_score(text)[0]
    if value is None:
        return None
    if type(value) is not int:
        found.error(line, "summary-mismatch", f"summary: {what} is written {value!r}, not a whole number")
        return None
    return value


def _values(p: Placed, q: str, line: int, row: list[str], parsed: Parsed, found: Findings) -> None:
    for idx, (d, c) in p.cols.summary.items():
        value = _written(row[idx] if idx < len(row) else "", f"{q}/{c}/{d}", line, found)
        detail = parsed.by_key.get((q, c, d, 0))
        if value is None or detail is None or not isinstance(detail.score, int) or detail.score == value:
            continue
        found.error(
            line,
            "summary-mismatch",
            f"summary: {q}/{c}/{d} is written {value}, but line {detail.line} scores it {detail.score}",
        )


def _totals(p: Placed, q: str, line: int, row: list[str], parsed: Parsed, found: Findings) -> None:
    for idx, c in p.cols.totals.items():
        value = _written(row[idx] if idx < len(row) else "", f"the {c} total of {q}", line, found)
        dims = [d for d, c2 in p.cols.summary.values() if c2 == c]
        details = [parsed.by_key.get((q, c, d, 0)) for d in dims]
        if value is None or not dims:
            continue
        scores = [r.score for r in details if r is not None and isinstance(r.score, int)]
        if len(scores) != len(dims) or sum(scores) == value:
            continue
        where = _lines([r.line for r in details if r is not None])
        found.error(
            line,
            "summary-mismatch",
            f"summary: the {c} total of {q} is written {value}, but the scores of {q}/{c} ({where}) "
            f"add up to {sum(scores)}",
        )


def check_summaries(parsed: Parsed, ids: PlanIds, found: Findings) -> None:
    """Compare every summary table of the file with its cells."""
    for p in parsed.summaries:
        q_col = p.cols.roles["question"]
        for line, row in p.table.rows:
            q = ids.question(row[q_col]) if q_col < len(row) else None
            if q is None:
                continue
            _values(p, q, line, row, parsed, found)
            _totals(p, q, line, row, parsed, found)
        parsed.notes.append(Note(p.table.line, "summary table: compared with the scores, not read as scores"))
