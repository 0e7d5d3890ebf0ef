"""The blank (or, for the scoring page, filled) score sheet as Markdown: front matter, title,
instructions and one row per cell of the pass, in the wide or the long layout. Pure; `sheet`
writes it to a file and the scoring page writes a rater's cells through it, so there is one
writer of sheets (docs/score-files.md)."""

from __future__ import annotations

from collections.abc import Mapping

from aoven_git.model import Plan, SheetId


def sheet_scope(plan: Plan, sheet: SheetId) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(conditions, dimensions) the sheet scores: the pass's, or the amendment's within it."""
    p = plan.pass_(sheet.pass_id)
    assert p is not None
    a = plan.amendment(sheet.amendment) if sheet.amendment else None
    if a is None:
        return p.conditions, p.dimensions
    return (tuple(c for c in p.conditions if c in a.conditions),
            tuple(d for d in p.dimensions if d in a.dimensions))


def _head(plan: Plan, sheet: SheetId, layout: str, items: list[str] | None) -> list[str]:
    """Front matter, title and the instructions comment."""
    rater = plan.rater(sheet.rater)
    p = plan.pass_(sheet.pass_id)
    assert p is not None
    conditions, dims = sheet_scope(plan, sheet)
    a = plan.amendment(sheet.amendment) if sheet.amendment else None
    front = ["---", f"rater: {sheet.rater}", f"pass: {sheet.pass_id}", f"round: {sheet.round_id}"]
    front += [f"amendment: {a.id}"] if a else []
    title = f"# Scores — {rater.name if rater else sheet.rater}, pass {sheet.pass_id}, round {sheet.round_id}"
    lines = [*front, f"plan_version: {plan.version}", "---", "",
             title + (f", amendment {a.id}" if a else ""), "", "<!--"]
    scale = plan.scale
    if items is not None:
        lines.append(f"Score every cell with a whole number from {scale.min} to {scale.max}. Each item is a "
                     f"blinded response in {plan.study_dir}/blind/{p.id}/<item>.md; conditions stay hidden "
                     "until every rater has sealed.")
    else:
        lines.append(f"Score every cell with a whole number from {scale.min} to {scale.max}. "
                     f"Conditions: {', '.join(conditions)}"
                     + (" (scored on the marker-stripped responses)." if p.stripped else "."))
    if a is not None:
        lines.append(f"Amendment {a.id} ({a.title}): re-score only {', '.join(dims)} of condition "
                     f"{', '.join(conditions)}, under the ruling: {a.rationale}")
    lines += _annotation_help(plan, dims, layout)
    lines += [
        "Put a quoted phrase from the response in the citation to back a score.",
        "Only the first table that scores a cell counts; after sealing, change nothing here.",
        "-->",
        "",
    ]
    return lines


def _annotation_help(plan: Plan, dims: tuple[str, ...], layout: str) -> list[str]:
    out = []
    for d in plan.dimensions:
        if not d.annotate or d.id not in dims:
            continue
        refs = " or ".join(f"#{t}" for t in d.transitions)
        first = d.transitions[0]
        example = f"`2 #{first}`" if layout == "wide" else f"`#{first}` in the Transition column"
        out.append(f"{d.id} ({d.name}): a score above {plan.scale.min} must name its transition ({refs}), "
                   f"e.g. {example}.")
    return out


def _long_row(row: tuple[str, ...], dim: str, entries: Mapping[str, tuple[str, str]]) -> str:
    """One row of the long layout, filled from `entries` ("<row>/<dim>" → (score, citation))."""
    score, citation = entries.get("/".join((*row, dim)), ("", ""))
    return "| " + " | ".join([*row, dim, score, "", citation]) + " |"


def _table(plan: Plan, sheet: SheetId, layout: str, items: list[str] | None,
           entries: Mapping[str, tuple[str, str]] | None = None) -> list[str]:
    """The score table: rows of (question, condition), or of blind items; empty unless the long
    layout is given `entries` (the scoring page's cells, docs/score-files.md)."""
    rnd = plan.round_(sheet.round_id)
    assert rnd is not None
    conditions, dims = sheet_scope(plan, sheet)
    rows = ([(i,) for i in items] if items is not None
            else [(q, c) for q in rnd.questions for c in conditions])
    keys = ["Item"] if items is not None else ["Q", "Cond"]
    if layout == "wide":
        lines = ["| " + " | ".join([*keys, *dims, "Σ", "Notes"]) + " |",
                 "|" + "---|" * (len(keys) + len(dims) + 2)]
        lines += ["| " + " | ".join(row) + " |" + "  |" * (len(dims) + 2) for row in rows]
        return lines
    keys = ["Item"] if items is not None else ["Question", "Condition"]
    lines = ["| " + " | ".join([*keys, "Dimension", "Score", "Transition", "Citation"]) + " |",
             "|" + "---|" * (len(keys) + 4)]
    if entries:
        return lines + [_long_row(row, d, entries) for row in rows for d in dims]
    lines += ["| " + " | ".join([*row, d]) + " |  |  |  |" for row in rows for d in dims]
    return lines


def render_sheet(plan: Plan, sheet: SheetId, layout: str, items: list[str] | None = None,
                 entries: Mapping[str, tuple[str, str]] | None = None) -> str:
    """The blank sheet's Markdown (pure: tests fill it in and validate it). `items` are the blind
    ids of a blind pass's corpus: then the rows are those items, with no condition. `entries`
    ("Q1/A/D1" or "<item>/D1" → (score, citation), already escaped for a table cell) fill the long
    layout: the scoring page writes its sheet through this one writer."""
    body = _table(plan, sheet, layout, items, entries)
    return "\n".join([*_head(plan, sheet, layout, items), *body]) + "\n"
