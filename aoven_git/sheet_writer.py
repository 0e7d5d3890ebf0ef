"""The blank (or, for the scoring page, filled) score sheet as Markdown: front matter, title,
instructions and one row per cell of the pass, in the wide or the long layout. Pure; `sheet`
writes it to a file and the scoring page writes a rater's cells through it, so there is one
writer of sheets (docs/score-files.md). In a plan with replicates every row also carries its
`Rep` (1…N) right after the condition; on a nominal scale the instructions list the labels and
the wide layout has no Σ column."""

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
    how = _how_to_score(plan)
    if items is not None:
        lines.append(f"{how} Each item is a "
                     f"blinded response in {plan.study_dir}/blind/{p.id}/<item>.md; conditions stay hidden "
                     "until every rater has sealed.")
    else:
        lines.append(f"{how} "
                     f"Conditions: {', '.join(conditions)}"
                     + (" (scored on the marker-stripped responses)." if p.stripped else "."))
        if plan.replicates > 1:
            lines.append(f"Each question and condition has {plan.replicates} responses, one row each: "
                         f"the Rep column numbers them 1–{plan.replicates} "
                         f"({plan.study_dir}/{plan.responses}).")
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


def _how_to_score(plan: Plan) -> str:
    """The first instruction: the scale's whole numbers, or its labels on a nominal scale."""
    scale = plan.scale
    if scale.labels:
        return f"Score every cell with one of the labels {', '.join(scale.labels)} (any letter case)."
    return f"Score every cell with a whole number from {scale.min} to {scale.max}."


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


def _cell_id(row: tuple[str, ...], dim: str) -> str:
    """The id of a row's cell as `entries` key it: `Q1/A/D1`, `L1/TRT#2/V`, `<item>/D1`."""
    if len(row) == 3:
        return f"{row[0]}/{row[1]}#{row[2]}/{dim}"
    return "/".join((*row, dim))


def _long_row(row: tuple[str, ...], dim: str, entries: Mapping[str, tuple[str, str]]) -> str:
    """One row of the long layout, filled from `entries` (cell id → (score, citation))."""
    score, citation = entries.get(_cell_id(row, dim), ("", ""))
    return "| " + " | ".join([*row, dim, score, "", citation]) + " |"


def _table(plan: Plan, sheet: SheetId, layout: str, items: list[str] | None,
           entries: Mapping[str, tuple[str, str]] | None = None) -> list[str]:
    """The score table: rows of (question, condition), or of blind items; empty unless the long
    layout is given `entries` (the scoring page's cells, docs/score-files.md)."""
    rnd = plan.round_(sheet.round_id)
    assert rnd is not None
    conditions, dims = sheet_scope(plan, sheet)
    reps = [str(r) for r in plan.replicate_ids if r]
    rows: list[tuple[str, ...]] = (
        [(i,) for i in items] if items is not None
        else [(q, c, r) for q in rnd.questions for c in conditions for r in reps] if reps
        else [(q, c) for q in rnd.questions for c in conditions])
    rep = ["Rep"] if reps and items is None else []
    keys = ["Item"] if items is not None else ["Q", "Cond", *rep]
    if layout == "wide":
        extra = ["Notes"] if plan.scale.labels else ["Σ", "Notes"]
        lines = ["| " + " | ".join([*keys, *dims, *extra]) + " |",
                 "|" + "---|" * (len(keys) + len(dims) + len(extra))]
        lines += ["| " + " | ".join(row) + " |" + "  |" * (len(dims) + len(extra)) for row in rows]
        return lines
    keys = ["Item"] if items is not None else ["Question", "Condition", *rep]
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
    ("Q1/A/D1", "L1/TRT#2/V" or "<item>/D1" → (score, citation), already escaped for a table
    cell; a score is written as the rater writes it, a label on a nominal scale) fill the long
    layout: the scoring page writes its sheet through this one writer."""
    body = _table(plan, sheet, layout, items, entries)
    return "\n".join([*_head(plan, sheet, layout, items), *body]) + "\n"
