"""Checks of the cells read from a score file: the JSON schema, then the plan.

Validation is parse → normalise → `schemas/scores.schema.json` → checks against the plan (ids of
the pass, scale, annotations, completeness), with every finding at the line of the cell it is
about (docs/score-files.md, "Finding codes").
"""

from __future__ import annotations

from typing import Any

from aoven_git.model import Cell, CellKey, Findings, Plan, Scale
from aoven_git.score_cells import BlindScope, Parsed, Raw
from aoven_git.score_ids import BLIND_CONDITION, PlanIds
from aoven_git.studyfile import Identity

_CELL_KEYS = frozenset(("question", "condition", "dimension", "score", "line", "transitions", "citation"))
_REPLICATE_CELL_KEYS = _CELL_KEYS | {"replicate"}  # a cell of a plan with replicates


def cell_conforms(cell: dict[str, Any]) -> bool:
    """Fast equivalent of validating one cell against `$defs/cell` of the scores schema.

    jsonschema costs ~0.2 ms per cell, which made `validate` on a study of 100 files take
    seconds; this check accepts only cells the schema accepts (it may reject more: exact types
    are required), and the schema itself is consulted for every cell it rejects, so messages
    still come from the schema. A property test keeps the two in agreement.
    """
    keys = cell.keys()
    if keys != _CELL_KEYS and keys != _REPLICATE_CELL_KEYS:
        return False
    q, c, d = cell["question"], cell["condition"], cell["dimension"]
    line, trans, r = cell["line"], cell["transitions"], cell.get("replicate", 0)
    if type(q) is not str or type(c) is not str or type(d) is not str or not (q and c and d):
        return False
    if type(r) is not int or r < 0:
        return False
    if (
        type(cell["score"]) is not int
        or type(line) is not int
        or line < 1
        or type(cell["citation"]) is not str
    ):
        return False
    if type(trans) is not list:
        return False
    return not trans or (all(type(t) is int and t >= 1 for t in trans) and len(set(trans)) == len(trans))


def document(ident: Identity, cells: list[Raw]) -> dict[str, Any]:
    """The normalised document the schema describes."""
    doc: dict[str, Any] = {
        "rater": ident.sheet.rater,
        "pass": ident.sheet.pass_id,
        "round": ident.sheet.round_id,
    }
    if ident.nonce is not None:
        doc["nonce"] = ident.nonce
    if ident.plan_version is not None:
        doc["plan_version"] = ident.plan_version
    doc["cells"] = [_cell_document(r) for r in cells]
    return doc


def _not_on_scale(raw: Raw, scale: Scale) -> tuple[str, str]:
    """(code, message) for a score that is no whole number (ordinal) or no label (nominal)."""
    if scale.labels:
        return "score-off-scale", (f"{raw.key}: {raw.score!r} is not a label of the scale "
                                   f"({', '.join(scale.labels)})")
    return "score-not-integer", (f"{raw.key}: score {raw.score!r} is not a whole number on the scale "
                                 f"{scale.min}–{scale.max}")


def _cell_document(r: Raw) -> dict[str, Any]:
    """One normalised cell; `replicate` only in a plan with replicates (0 is left out)."""
    cell: dict[str, Any] = {
        "question": r.key.question,
        "condition": r.key.condition,
        "dimension": r.key.dimension,
        "score": r.score,
        "line": r.line,
        "transitions": list(r.transitions),
        "citation": r.citation,
    }
    if r.key.replicate:
        cell["replicate"] = r.key.replicate
    return cell


def schema_check(
    doc: dict[str, Any], raws: list[Raw], found: Findings, report_top: bool, scale: Scale
) -> set[int]:
    """Validate the normalised document; returns the indexes of the cells the schema rejects.

    The sheet fields are validated as a whole; cells are validated one by one (see
    `cell_conforms`), so an error's cell index maps straight back to its Markdown line. A label
    the scale does not have reaches the schema as the text written, so it is reported here too
    (`score-off-scale`, listing the labels).
    """
    from aoven_git import schemas

    validator = schemas.validator("scores")
    head = {k: v for k, v in doc.items() if k != "cells"}
    if report_top:
        for err in validator.iter_errors({**head, "cells": []}):
            where = "/".join(str(p) for p in err.absolute_path) or "document"
            found.error(1, "front-matter-invalid", f"{where}: {err.message}")
    bad: set[int] = set()
    for index, cell in enumerate(doc["cells"]):
        if cell_conforms(cell):
            continue
        raw = raws[index]
        for err in validator.iter_errors({**head, "cells": [cell]}):
            path = list(err.absolute_path)
            if path[:1] != ["cells"]:
                continue
            bad.add(index)
            if path[2:3] == ["score"]:
                found.error(raw.line, *_not_on_scale(raw, scale))
            elif path[2:3] == ["transitions"]:
                found.error(raw.line, "wrong-transition", f"{raw.key}: transitions: {err.message}")
            else:
                found.error(
                    raw.line, "invalid-cell", f"{raw.key}: {'/'.join(map(str, path[2:]))}: {err.message}"
                )
    return bad


def _check_transitions(plan: Plan, raw: Raw, covers: set[int], ids: PlanIds, found: Findings) -> None:
    key = raw.key
    for t in raw.transitions:
        if t not in ids.transitions:
            found.error(raw.line, "wrong-transition", f"{key}: #{t} is not a transition of the plan")
        elif t not in covers:
            owner = next((d.id for d in plan.dimensions if t in d.transitions), None)
            listed = ", ".join(f"#{x}" for x in sorted(covers))
            found.error(
                raw.line,
                "wrong-transition",
                f"{key}: #{t} is not covered by {key.dimension}"
                + (f" (it belongs to {owner})" if owner else "")
                + (f"; {key.dimension} covers {listed}" if covers else ""),
            )


def _cell(plan: Plan, raw: Raw, ids: PlanIds, found: Findings) -> Cell | None:
    """The checked cell of a raw one the schema accepted; None when it is off the scale."""
    key, score, lo, hi = raw.key, raw.score, plan.scale.min, plan.scale.max
    assert isinstance(score, int)
    if not lo <= score <= hi:
        found.error(raw.line, "score-off-scale", f"{key}: score {score} is outside the scale {lo}–{hi}")
        return None
    dim = ids.dimension_of[key.dimension]
    covers = ids.covers[key.dimension]
    if raw.transitions:
        _check_transitions(plan, raw, covers, ids, found)
    if dim.annotate and score > lo and not covers.intersection(raw.transitions):
        found.add(
            raw.line,
            "missing-annotation",
            f"{key}: score {score} must name the transition behind it "
            f"({' or '.join(f'#{x}' for x in dim.transitions)}), e.g. `{score} #{dim.transitions[0]}` "
            "or in the Transition column",
            "error" if plan.rules.require_annotations else "warning",
        )
    trans = raw.transitions if len(raw.transitions) < 2 else tuple(sorted(raw.transitions))
    return Cell(key, score, raw.line, trans, raw.citation)


def check_cells(
    plan: Plan,
    ident: Identity,
    parsed: Parsed,
    bad: set[int],
    ids: PlanIds,
    found: Findings,
    blind: BlindScope | None = None,
) -> tuple[Cell, ...]:
    """The cells that pass every check against the plan, and a finding for each that does not."""
    if ident.known and not _amendment_covers(plan, ident, found):
        return ()
    expected, expected_set = _expected(plan, ident, ids, blind)
    cells: list[Cell] = []
    for index, raw in enumerate(parsed.cells):
        if index in bad:
            continue
        if expected_set is not None and raw.k not in expected_set:
            found.error(raw.line, *_outside(plan, ident, raw, ids))
            continue
        cell = _cell(plan, raw, ids, found)
        if cell is not None:
            cells.append(cell)
    if ident.known and not parsed.header_problem and expected_set is not None:
        _missing(plan, ident, parsed, expected, found)
    return tuple(cells)


def _expected(
    plan: Plan, ident: Identity, ids: PlanIds, blind: BlindScope | None
) -> tuple[tuple[CellKey, ...], frozenset[tuple[str, str, str, int]] | None]:
    """The cells the sheet must score, and as id triples; None: any cell it reads is accepted (a
    blind sheet whose corpus the caller did not give, or a file of unknown identity)."""
    if not ident.known:
        return (), None
    sheet = ident.sheet
    if blind is None:
        return ids.expected(sheet.pass_id, sheet.round_id, sheet.amendment)
    p = plan.pass_(sheet.pass_id)
    if blind.items is None or p is None:
        return (), None
    cells = tuple(ids.key((i, BLIND_CONDITION, d, 0)) for i in sorted(blind.items) for d in p.dimensions)
    return cells, frozenset((c.question, c.condition, c.dimension, c.replicate) for c in cells)


def _amendment_covers(plan: Plan, ident: Identity, found: Findings) -> bool:
    """An amendment file of a pass its amendment does not re-score has no cell to give."""
    sheet = ident.sheet
    a = plan.amendment(sheet.amendment) if sheet.amendment else None
    if a is None or sheet.pass_id in a.passes:
        return True
    found.error(1, "cell-not-in-amendment", f"amendment {a.id} does not re-score pass {sheet.pass_id} "
                f"(it re-scores {', '.join(a.passes)}): this file has nothing to score")
    return False


def _outside(plan: Plan, ident: Identity, raw: Raw, ids: PlanIds) -> tuple[str, str]:
    """(code, message) for a cell the sheet must not score."""
    sheet = ident.sheet
    a = plan.amendment(sheet.amendment) if sheet.amendment else None
    if a is None or raw.k not in ids.expected(sheet.pass_id, sheet.round_id)[1]:
        return "cell-not-in-pass", f"{raw.key} is not scored in pass {sheet.pass_id}, round {sheet.round_id}"
    return "cell-not-in-amendment", (
        f"{raw.key} is outside amendment {a.id}, which re-scores only {', '.join(a.dimensions)} of "
        f"condition {', '.join(a.conditions)}: leave the cell out (its pre-registered score stands)")


def _missing(plan: Plan, ident: Identity, parsed: Parsed, expected: tuple[Any, ...], found: Findings) -> None:
    """One `missing-cell` per item, listing its dimensions with no score (an invalid score is
    reported once, as itself, not as missing too)."""
    missing: dict[tuple[str, str, int], list[str]] = {}
    for key in expected:
        if (key.question, key.condition, key.dimension, key.replicate) not in parsed.by_key:
            missing.setdefault(key.item, []).append(key.dimension)
    p = plan.pass_(ident.sheet.pass_id)
    default_line = parsed.first_table or 1
    whole = p is not None and not ident.sheet.amendment  # an amendment's files list what they lack
    for (q, c, r), dims in missing.items():
        what = "any dimension" if whole and len(dims) == len(p.dimensions) else ", ".join(dims)  # type: ignore[union-attr]
        line = parsed.item_lines.get((q, c, r))
        if line is None and r:  # the replicate has no row: point at the first row of its item
            line = next((n for (q2, c2, _), n in parsed.item_lines.items() if (q2, c2) == (q, c)), None)
        item = f"{q}/{c}#{r}" if r else f"{q}/{c}"
        found.error(line or default_line, "missing-cell", f"{item}: no score for {what}")
