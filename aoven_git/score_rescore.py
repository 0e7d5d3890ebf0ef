"""Re-score tables: new values for scored cells after a rubric change, kept apart from the scores.

Real teams append re-derived scores to a score file when the rubric changes after the data were
seen: a table with primed dimensions (`| Q | D7' | D8' |`), fused item ids (`Q2B`), or
`| Q (Test B) | Original D7 | New D7 | … |`. Those values never replace the pre-registered ones
(the first table's values stand); each such table is the warning `amended-in-file`, whose hint
is to record them as a declared amendment (`aoven-git amend import FILE --amendment ID`), which
reads them through `Rescore` (docs/score-files.md, "Re-score tables").

Per re-score row and dimension: the new value must be a whole number on the scale and the cell
one of the pass (else the warning `rescore-invalid`: that value cannot be imported); an
`Original` value that contradicts the cell's score is the error `summary-mismatch`, as for a
summary; two re-scores of one cell with different values are the warning `rescore-conflict`
(the first one is the re-score).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from aoven_git.model import CellKey, Findings, Plan
from aoven_git.score_cells import REF_RE, Note, Parsed, Placed, Raw, parse_score
from aoven_git.score_ids import PlanIds

__all__ = ["Rescore", "read_rescores"]


@dataclass(frozen=True)
class Rescore:
    """A new value for one cell: `line` of the re-score row, `original` the value the table
    states for the cell before the change (None when it states none), `sealed` the value the
    file's score tables gave the cell (None when they gave none)."""

    key: CellKey
    new: int
    line: int
    original: int | None = None
    sealed: int | None = None
    transitions: tuple[int, ...] = ()
    citation: str = ""


@dataclass
class _Context:
    plan: Plan
    ids: PlanIds
    found: Findings
    parsed: Parsed
    in_pass: frozenset[tuple[str, str, str, int]] | None  # None: the sheet's pass is unknown
    default_condition: str | None


def _sealed(ctx: _Context, k: tuple[str, str, str, int]) -> tuple[int, int] | None:
    """(score, line) the file's score tables gave the cell, when it is a whole number."""
    raw = ctx.parsed.by_key.get(k)
    return (raw.score, raw.line) if raw is not None and isinstance(raw.score, int) else None


def _value(ctx: _Context, key: CellKey, text: str, line: int) -> tuple[int, list[int]] | None:
    """A re-score value and its `#N` refs; None (after a warning) when it cannot be used."""
    value, refs, _ = parse_score(text)
    if value is None:
        return None
    scale = ctx.plan.scale
    if type(value) is not int or value not in scale:
        ctx.found.warn(
            line,
            "rescore-invalid",
            f"{key}: re-score {value!r} is not a whole number on the scale {scale.min}–{scale.max}",
        )
        return None
    k = (key.question, key.condition, key.dimension, key.replicate)
    if ctx.in_pass is not None and k not in ctx.in_pass:
        ctx.found.warn(
            line, "rescore-invalid", f"{key}: re-scores a cell that is not part of this pass and round"
        )
        return None
    return value, refs


def _original(ctx: _Context, key: CellKey, text: str, line: int) -> int | None:
    """The value the table restates for the cell; a contradiction with its score is an error."""
    value = parse_score(text)[0]
    if type(value) is not int:
        return None
    sealed = _sealed(ctx, (key.question, key.condition, key.dimension, key.replicate))
    if sealed is not None and sealed[0] != value:
        ctx.found.error(
            line,
            "summary-mismatch",
            f"{key}: the re-score table gives the original score as {value}, but line {sealed[1]} "
            f"scores it {sealed[0]}",
        )
    return value


def _row_item(ctx: _Context, p: Placed, line: int, row: list[str]) -> tuple[str, str] | None:
    roles = p.cols.roles
    q, c = p.question, None
    if "question" in roles:
        text = row[roles["question"]] if roles["question"] < len(row) else ""
        if not text.strip():
            return None
        q, c = ctx.ids.item(text)
    if "condition" in roles and roles["condition"] < len(row) and row[roles["condition"]].strip():
        c = ctx.ids.condition_cell(row[roles["condition"]])
    c = c or p.cols.condition or p.condition or ctx.default_condition
    if q is None or c is None:
        ctx.found.warn(line, "rescore-invalid", "re-score row names no known question and condition")
        return None
    return q, c


def _row(ctx: _Context, p: Placed, line: int, row: list[str]) -> list[Rescore]:
    if not any(cell.strip() for cell in row):
        return []
    item = _row_item(ctx, p, line, row)
    if item is None:
        return []
    cols = p.cols
    originals = {d: row[i] for i, d in cols.original.items() if i < len(row)}
    cite = cols.roles.get("citation")
    citation = row[cite] if cite is not None and cite < len(row) else ""
    out: list[Rescore] = []
    for idx, d in cols.new.items():
        k = (item[0], item[1], d, 0)
        key = ctx.ids.key(k)
        got = _value(ctx, key, row[idx] if idx < len(row) else "", line)
        if got is None:
            continue
        original = _original(ctx, key, originals[d], line) if d in originals else None
        sealed = _sealed(ctx, k)
        refs = tuple(dict.fromkeys((*got[1], *(int(r) for r in REF_RE.findall(citation)))))
        out.append(Rescore(key, got[0], line, original, sealed[0] if sealed else None, refs, citation))
    return out


def _fused(ctx: _Context, raws: list[Raw]) -> list[Rescore]:
    """Rows of a plain score table that name their item fused (`Q2B`) and score a cell again."""
    out: list[Rescore] = []
    for raw in raws:
        got = _value(ctx, raw.key, str(raw.score), raw.line)
        if got is not None:
            sealed = _sealed(ctx, raw.k)
            score = sealed[0] if sealed else None
            out.append(Rescore(raw.key, got[0], raw.line, None, score, raw.transitions, raw.citation))
    return out


def _announce(ctx: _Context, table_line: int, rescores: list[Rescore], path: str) -> None:
    """One `amended-in-file` per table that re-scores cells."""
    shown = [f"{r.key} {'' if r.sealed is None else f'{r.sealed} '}→ {r.new}" for r in rescores[:4]]
    more = ", …" if len(rescores) > 4 else ""
    ctx.found.warn(
        table_line,
        "amended-in-file",
        f"re-score table: {len(rescores)} new value(s) ({', '.join(shown)}{more}); the first table's "
        f"values stand. Record them as an amendment: aoven-git amend import {path} --amendment ID",
    )
    ctx.parsed.notes.append(
        Note(table_line, f"re-score table: {len(rescores)} new value(s), not read as scores")
    )


def _first_per_cell(ctx: _Context, rescores: list[Rescore]) -> list[Rescore]:
    """The first re-score of each cell; a later one with another value is `rescore-conflict`, one
    with the same value may add the original value or citation the first did not state."""
    first: dict[CellKey, Rescore] = {}
    for r in rescores:
        earlier = first.get(r.key)
        if earlier is None:
            first[r.key] = r
        elif earlier.new != r.new:
            ctx.found.warn(
                r.line,
                "rescore-conflict",
                f"{r.key}: re-scored {r.new} here but {earlier.new} at line {earlier.line} (first kept)",
            )
        else:  # the same value again: keep what the first did not state
            first[r.key] = replace(
                earlier,
                original=r.original if earlier.original is None else earlier.original,
                citation=earlier.citation or r.citation,
                transitions=earlier.transitions or r.transitions,
            )
    return list(first.values())


def read_rescores(
    plan: Plan,
    ids: PlanIds,
    parsed: Parsed,
    found: Findings,
    *,
    path: str,
    in_pass: frozenset[tuple[str, str, str, int]] | None,
    default_condition: str | None,
) -> list[Rescore]:
    """Every re-score of the file, first per cell, in file order, with their findings."""
    ctx = _Context(plan, ids, found, parsed, in_pass, default_condition)
    tables: list[tuple[int, list[Rescore]]] = []
    for p in parsed.rescore_tables:
        if "question" not in p.cols.roles and p.question is None:
            parsed.notes.append(Note(p.table.line, "re-score table ignored: no question column or heading"))
            continue
        tables.append((p.table.line, [r for line, row in p.table.rows for r in _row(ctx, p, line, row)]))
    tables += [(line, _fused(ctx, raws)) for line, raws in parsed.fused_rescores.items()]
    tables.sort(key=lambda t: t[0])
    for line, rescores in tables:
        if rescores:
            _announce(ctx, line, rescores, path)
    return _first_per_cell(ctx, [r for _, rescores in tables for r in rescores])
