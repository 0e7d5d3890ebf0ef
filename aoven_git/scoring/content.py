"""What the scoring page shows and what it writes (docs/score-files.md, "The scoring page").

The page is blind by construction: everything it sends is built here, from the pass's own view of
the study. A blind pass shows the committed opaque corpus under its opaque ids; a stripped pass
shows each response normalised exactly as `blind` would (the plan's question and the
marker-free response part: no title, prompt block or `[Aoven …]` header) under the question id
alone when the pass scores one condition; only an unblinded pass names conditions, as its sheet
does. With replicates every sampled response is an item of its own (`L1/TRT#2`, shown `L1 · TRT #2`;
a blind pass's corpus already has one opaque id per replicate). On a labelled (nominal) scale the
page shows one button per label and sends and receives labels, never positions. Nothing here reads
another rater's sheet, and validation messages are scrubbed of response paths before they reach
the page.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from aoven_git.model import CellKey, Plan, SheetId

#: the longest citation the page may send for one cell (a quote plus a transition)
MAX_NOTE = 2000


class BadRequest(ValueError):
    """A request the page (or anyone) sent that cannot be applied: a 400 with this message."""


@dataclass(frozen=True)
class PageItem:
    """One scored item: `id` as the page names it ("Q1/A", "Q1", "L1/TRT#2", "L1#2" or a blind
    id), `row` as the sheet writes it ((question, condition), (question, condition, replicate) or
    (blind id,)), `title` and the text shown."""

    id: str
    row: tuple[str, ...]
    title: str
    text: str


@dataclass(frozen=True)
class ScorePage:
    """One rater's sheet as the page serves it."""

    plan: Plan
    sheet: SheetId
    root: Path
    path: str  # the score file, repository-relative
    items: tuple[PageItem, ...]
    dimensions: tuple[str, ...]
    blind_items: tuple[str, ...] | None
    hidden: bool  # stripped or blind: conditions and response paths never reach the page

    def item(self, item_id: str) -> PageItem | None:
        return self.by_id.get(item_id)

    @cached_property
    def by_id(self) -> dict[str, PageItem]:
        """Items by page id (a save looks up every cell's item: 8 000 of them at 500 questions)."""
        return {i.id: i for i in self.items}


def _read_text(path: Path) -> str:
    from aoven_git.studyfile import MAX_BYTES

    try:
        with path.open("rb") as fh:
            return fh.read(MAX_BYTES + 1).decode("utf-8", "replace")
    except OSError:
        return ""


def _question_texts(plan: Plan) -> dict[str, str]:
    return {q.id: q.text for q in (*plan.questions, *plan.holdout)}


def row_id(row: tuple[str, ...]) -> str:
    """A sheet row as cell ids begin: `Q1/A`, `L1/TRT#2` (replicate 2) or a blind id."""
    return f"{row[0]}/{row[1]}#{row[2]}" if len(row) == 3 else "/".join(row)


def cell_id(row: tuple[str, ...], dimension: str) -> str:
    """A cell's id as the sheet writer's entries and validation name it (`L1/TRT#2/V`)."""
    return f"{row_id(row)}/{dimension}"


def _item(q: str, c: str, r: int, one_condition: bool) -> tuple[str, tuple[str, ...], str]:
    """(page id, sheet row, title) of a question's response under a condition (and replicate)
    on a pass that shows conditions; `one_condition`: a stripped pass of one condition, named by
    its question alone."""
    if not r:
        return (q, (q, c), q) if one_condition else (f"{q}/{c}", (q, c), f"{q} — {c}")
    if one_condition:
        return f"{q}#{r}", (q, c, str(r)), f"{q} #{r}"
    return f"{q}/{c}#{r}", (q, c, str(r)), f"{q} · {c} #{r}"


def build_items(plan: Plan, sheet: SheetId, root: Path, blind_items: list[str] | None,
                conditions: tuple[str, ...]) -> tuple[PageItem, ...]:
    """The items of the sheet in sheet order (question, condition, replicate), each with the
    text the pass may show."""
    from aoven_git.blinding import file_name, normalise
    from aoven_git.naming import blind_dir
    from aoven_git.quotes import ResponseTexts

    if blind_items is not None:
        folder = root / blind_dir(plan, sheet.pass_id)
        return tuple(PageItem(b, (b,), f"Item {n}", _read_text(folder / file_name(b)))
                     for n, b in enumerate(blind_items, start=1))
    p = plan.pass_(sheet.pass_id)
    rnd = plan.round_(sheet.round_id)
    assert p is not None and rnd is not None
    texts = ResponseTexts(plan, root=root)
    questions = _question_texts(plan)
    out = []
    for q in rnd.questions:
        for c in conditions:
            for r in plan.replicate_ids:
                raw = texts.text(q, c, p.stripped, r) or ""
                item_id, row, title = _item(q, c, r, p.stripped and len(conditions) == 1)
                if p.stripped:
                    raw = normalise(raw, plan.markers, questions.get(q) or q) if raw else ""
                    title = item_id if not r else title
                out.append(PageItem(item_id, row, title, raw))
    return tuple(out)


def load_page(plan: Plan, sheet: SheetId, root: Path, blind_items: list[str] | None) -> ScorePage:
    """The page of `sheet` (its scope as `sheet` computes it: the pass's, or the amendment's)."""
    from aoven_git.naming import score_path
    from aoven_git.sheet_writer import sheet_scope

    p = plan.pass_(sheet.pass_id)
    assert p is not None
    conditions, dims = sheet_scope(plan, sheet)
    items = build_items(plan, sheet, root, blind_items, conditions)
    hidden = p.stripped or blind_items is not None
    return ScorePage(plan, sheet, root, score_path(plan, sheet), items, dims,
                     tuple(blind_items) if blind_items is not None else None, hidden)


def current_cells(page: ScorePage) -> tuple[dict[str, int | str], dict[str, str]]:
    """(cells, notes) read back from the rater's own sheet in the work tree, keyed as the page
    names cells (a label on a nominal scale, else the number); nothing when there is no sheet
    yet."""
    from aoven_git.scorefile import parse_score_file
    from aoven_git.validation import read_limited

    full = page.root / page.path
    if full.is_symlink() or not full.is_file():
        return {}, {}
    corpus = {page.sheet.pass_id: page.blind_items} if page.blind_items is not None else None
    parsed = parse_score_file(page.plan, page.path, read_limited(full), blind_items=corpus)
    by_row = {i.row: i.id for i in page.items}
    cells: dict[str, int | str] = {}
    notes: dict[str, str] = {}
    scale = page.plan.scale
    for cell in parsed.cells:
        item = by_row.get(_row_of(page, cell.key))
        if item is None or cell.key.dimension not in page.dimensions:
            continue
        key = f"{item}/{cell.key.dimension}"
        cells[key] = scale.label(cell.score) if scale.nominal else cell.score
        note = " ".join([*(f"#{t}" for t in cell.transitions if f"#{t}" not in cell.citation), cell.citation])
        if note.strip():
            notes[key] = note.strip()
    return cells, notes


def _row_of(page: ScorePage, key: CellKey) -> tuple[str, ...]:
    if page.blind_items is not None:
        return (key.question,)
    row = (key.question, key.condition)
    return (*row, str(key.replicate)) if key.replicate else row


def payload(page: ScorePage, selftest: bool = False) -> dict[str, Any]:
    """`GET /api/sheet`: items, the rubric, the scale and the rater's current cells. `selftest`
    arms the page's test hook (it fills and saves a whole sheet: never on a rater's own run)."""
    plan = page.plan
    cells, notes = current_cells(page)
    names = {t.id: t.name for t in plan.transitions}
    dims = [d for d in plan.dimensions if d.id in page.dimensions]
    return {
        "rater": page.sheet.rater,
        "pass": page.sheet.pass_id,
        "round": page.sheet.round_id,
        "amendment": page.sheet.amendment,
        "sheet": page.path,
        "scale": _scale(plan),
        "require_annotations": plan.rules.require_annotations,
        "dimensions": [{"id": d.id, "name": d.name, "kind": d.kind, "annotate": d.annotate,
                        "transitions": [{"id": t, "name": names.get(t, str(t))} for t in d.transitions]}
                       for d in dims],
        "items": [{"id": i.id, "title": i.title, "text": i.text} for i in page.items],
        "cells": cells,
        "notes": notes,
        "selftest": selftest,
    }


def _scale(plan: Plan) -> dict[str, Any]:
    """The scale as the page reads it: min and max, and the labels on a nominal scale (one button
    each; the page then sends labels)."""
    out: dict[str, Any] = {"min": plan.scale.min, "max": plan.scale.max}
    return {**out, "labels": list(plan.scale.labels)} if plan.scale.nominal else out


def _score_text(page: ScorePage, key: str, value: object) -> str:
    """The score as the sheet writes it: a label on a nominal scale (as the plan spells it; any
    letter case accepted), else the whole number. BadRequest names the cell and the scale."""
    scale = page.plan.scale
    if scale.nominal:
        position = scale.value_of(value) if isinstance(value, str) else None
        if position is None:
            raise BadRequest(f"cell {key}: {value!r} is not one of the labels {', '.join(scale.labels)}")
        return scale.label(position)
    if value not in scale:
        raise BadRequest(f"cell {key}: {value!r} is not a whole number from {scale.min} to {scale.max}")
    return str(value)


def _split(page: ScorePage, key: object) -> tuple[PageItem, str]:
    if not isinstance(key, str) or "/" not in key:
        raise BadRequest(f"cell {key!r}: expected <item>/<dimension>, e.g. Q1/A/D1 or Q1/D1")
    item_id, dim = key.rsplit("/", 1)
    item = page.item(item_id)
    if item is None or dim not in page.dimensions:
        raise BadRequest(f"cell {key!r} is not a cell of this sheet")
    return item, dim


def _cell_text(note: str) -> str:
    """A citation made safe for one Markdown table cell: one line, pipes escaped."""
    return " ".join(note.split()).replace("\\", "\\\\").replace("|", "\\|")


def entries_of(page: ScorePage, body: object) -> dict[str, tuple[str, str]]:
    """`POST /api/sheet`'s body → the sheet writer's entries; BadRequest names the first problem."""
    if not isinstance(body, dict) or not isinstance(body.get("cells", {}), dict) \
            or not isinstance(body.get("notes", {}), dict):
        raise BadRequest('expected {"cells": {"<item>/<dimension>": score, …}, "notes": {…}}')
    unknown = sorted(set(body) - {"cells", "notes"})
    if unknown:
        raise BadRequest(f"unknown field(s): {', '.join(unknown)}")
    out: dict[str, tuple[str, str]] = {}
    for key, value in body.get("cells", {}).items():
        item, dim = _split(page, key)
        if value is None:
            continue
        out[cell_id(item.row, dim)] = (_score_text(page, key, value), "")
    for key, note in body.get("notes", {}).items():
        item, dim = _split(page, key)
        if not isinstance(note, str) or len(note) > MAX_NOTE:
            raise BadRequest(f"note {key}: expected text of at most {MAX_NOTE} characters")
        row_key = cell_id(item.row, dim)
        score = out.get(row_key, ("", ""))[0]
        out[row_key] = (score, _cell_text(note))
    return out


def write_sheet(page: ScorePage, entries: Mapping[str, tuple[str, str]]) -> None:
    """Write the sheet through `sheet`'s writer (long layout), atomically: a temporary file in the
    same folder, then `os.replace`, so a reader never sees half a sheet."""
    from aoven_git.sheet_writer import render_sheet

    items = list(page.blind_items) if page.blind_items is not None else None
    text = render_sheet(page.plan, page.sheet, "long", items, entries)
    target = page.root / page.path
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".score-", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def validation(page: ScorePage) -> dict[str, Any]:
    """`validate --format json` for the written sheet alone; for a hidden pass, response paths in
    messages become "another response" (a quote found elsewhere names the file it was found in),
    and items and cells are named as the page names them (`Q3/B/D1` → `Q3/D1`, `L2/TRT#2:` →
    `L2#2:` on a pass of one condition)."""
    from aoven_git.naming import response_patterns
    from aoven_git.validation import read_limited, validate_sources

    data = read_limited(page.root / page.path)
    report = validate_sources(page.plan, {page.path: data}, root=page.root).as_dict()
    if not page.hidden:
        return report
    text = json.dumps(report, ensure_ascii=False)
    for path in sorted(response_patterns(page.plan).paths, key=len, reverse=True):
        text = text.replace(path, "another response")
    result: dict[str, Any] = json.loads(_page_names(page, text))
    return result


def _page_names(page: ScorePage, text: str) -> str:
    """`text` with every item named as the sheet names it (`Q3/B`, `L2/TRT#2`) renamed as the page
    does, wherever it stands (before `/D1`, `:` or the end); `Q3/B` is not a part of `Q3/B1` or of
    `L2/TRT#21`. One pass over the text, whatever the number of items."""
    names = {row_id(i.row): i.id for i in page.items if len(i.row) >= 2 and row_id(i.row) != i.id}
    if not names:
        return text
    pattern = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.sub(rf"(?<![\w#/])(?:{pattern})(?![\w#])", lambda m: names[m.group(0)], text)
