"""Score files: Markdown written by hand → `ScoreSheet` with a line for every cell.

The reference for the format is docs/score-files.md. Raters write in whatever table shape they
like, so score tables are recognised by their header row (wide, long and sectioned layouts, or
mixtures of them); summary and re-score tables are recognised too, checked and kept apart from
the scores; every other table and all prose are ignored. Nothing here raises for bad content:
every problem becomes a `Finding` with a stable code and a line, so a rater fixing a file sees
all of its problems at once.

Per-file pipeline, one module per step:

- `studyfile`: symlink / size / UTF-8, front matter, identity from file name + front matter;
- `mdtables`: Markdown → headings and tables with line numbers (markdown-it);
- `score_columns`: what each header means (and so what kind of table it is);
- `score_cells`: score tables → cells (first table wins), headings giving question/condition;
- `score_summary`: summary tables checked against the cells;
- `score_rescore`: re-score tables → `Rescore` (what `amend import` turns into an amendment);
- `score_checks`: normalised document → `schemas/scores.schema.json` → checks against the plan.

Public API: `parse_score_file(plan, path, data)` → `ParsedSheet` (a `ScoreSheet` that also
carries `notes`: what was read but not used, for `validate --verbose`); `rescores(plan, path,
data)` → `list[Rescore]`: every re-score of the file, the first per cell, in file order, each
with its cell, new value, line, the original value when the table states it, and the value the
file's score tables gave the cell. Front matter helpers (`front_matter`, `set_front_matter`,
`simple_yaml`) and `MAX_BYTES` are re-exported from `studyfile`.

Finding codes (stable; `validation.py` adds the study-level ones marked *):

======================== ======== =======================================================
code                     severity meaning
======================== ======== =======================================================
file-too-large           error    larger than 1 MiB (nothing else is checked)
not-utf8                 error    not UTF-8; line of the first bad byte
symlink                  error    the score file is a symbolic link
unknown-rater            error    `scores_*.md` naming no rater/round/pass of the plan
front-matter-invalid     error    unclosed ``---``, bad YAML, wrong value type
front-matter-mismatch    error    front matter rater/pass/round disagrees with the file name, or
                                  `amendment` with the file's amendment folder
front-matter-unknown-key warning  a key other than rater/pass/round/amendment/nonce/plan_version
plan-version-mismatch    error    front matter `plan_version` is not the plan's `version`
no-score-table           error    no table whose header makes it a score table
unknown-column           error    a header that is a near miss of a column the table needs
                                  (`Conditon`, `Dim3`): named, with the closest known name
section-context-missing  error    a score table with no question or condition from a column,
                                  a heading or (for a pass of one condition) the pass; in a plan
                                  with replicates, or no replicate
unknown-replicate        error    a replicate outside 1…N, not a number or named twice
                                  differently (at the row); a Rep column in a plan without
                                  replicates (at the header)
unknown-question         error    question id not in the plan (questions or holdout)
unknown-condition        error    condition not in the plan
unknown-dimension        error    dimension not in the plan
cell-not-in-pass         error    known ids, but the cell is not part of this pass and round
cell-not-in-amendment    error    an amendment's file: a cell the amendment does not re-score, or
                                  (line 1) a file of a pass it does not re-score
unknown-item             error    a blind pass's sheet: a row naming no item of the corpus
no-blind-corpus          error    a blind pass's sheet while the pass has no blinded corpus
score-not-integer        error    score is not a whole number (``2.5``, ``x``)
score-off-scale          error    integer outside the plan's scale; on a nominal scale, a
                                  cell that is none of its labels (the message lists them)
duplicate-cell           error    the same cell twice in one table (the first row counts)
rescored-in-file         warning  a later plain table scores a cell again (ignored)
amended-in-file          warning  a re-score table (primed `D7'`, fused `Q2B`, Original/New):
                                  the first table's values stand; import it as an amendment
rescore-invalid          warning  a re-score value that cannot be imported (off the scale, not a
                                  cell of the pass, no known item)
rescore-conflict         warning  a cell re-scored twice with different values (first kept)
summary-mismatch         error    a summary value or total (or a re-score table's Original
                                  value) contradicts the scores; names the detail line
missing-cell             error    one finding per item (question, condition) listing missing
                                  dimensions (not reported while a header has unknown-column)
sum-mismatch             error    a Σ/Sum/Total cell differs from the row's sum (or is not a number)
missing-annotation       error*   annotate:true dimension, score above the minimum, no transition
                                  of that dimension named (warning when
                                  rules.require_annotations is false)
wrong-transition         error    a transition named for a dimension that does not cover it
duplicate-sheet*         error    two files resolve to the same rater/pass/round
quote-not-found*         warning  a quoted phrase of a citation is not in the cell's response
response-missing*        warning  the response file a citation refers to does not exist
invalid-cell             error    any other schema violation of a normalised cell (a safety net)
not-a-score-file*        error    a file given to validation that is no score/reconciliation file
======================== ======== =======================================================

File-level findings (size, encoding, symlink, identity, no table) point at line 1.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from aoven_git import mdtables
from aoven_git.model import Findings, Plan, ScoreSheet
from aoven_git.score_cells import BlindScope, Note, Parsed, place_tables, read_cells
from aoven_git.score_checks import cell_conforms, check_cells, document, schema_check
from aoven_git.score_ids import BLIND_CONDITION, ids_for
from aoven_git.score_rescore import Rescore, read_rescores
from aoven_git.score_summary import check_summaries
from aoven_git.studyfile import (
    MAX_BYTES,
    SCORE,
    Identity,
    front_matter,
    read_study_file,
    score_identity,
    set_front_matter,
    simple_yaml,
)

__all__ = [
    "BLIND_CONDITION",
    "MAX_BYTES",
    "Note",
    "ParsedSheet",
    "Rescore",
    "cell_conforms",
    "front_matter",
    "parse_score_file",
    "rescores",
    "scored_conditions",
    "set_front_matter",
    "simple_yaml",
]


@dataclass(frozen=True)
class ParsedSheet(ScoreSheet):
    """A `ScoreSheet` with what was read but not used (ignored tables and columns, summary and
    re-score tables), for `validate --verbose`."""

    notes: tuple[Note, ...] = ()


_NO_TABLE = (
    "no score table found: expected a table with a header like `| Q | Cond | D1 | … |`, "
    "`| Question | Condition | Dimension | Score |` or `| Dim | Score |` under "
    "question/condition headings"
)


def _sheet(path: str, ident: Identity, parsed: Parsed | None, cells: tuple, found: Findings) -> ParsedSheet:
    layouts = set(parsed.layouts) if parsed else set()
    layout = "none" if not layouts else (layouts.pop() if len(layouts) == 1 else "mixed")
    notes = tuple(sorted(parsed.notes, key=lambda n: n.line)) if parsed else ()
    return ParsedSheet(
        path, ident.sheet, layout, cells, ident.nonce, ident.plan_version, found.sorted(), notes
    )


def _single_condition(plan: Plan, ident: Identity) -> str | None:
    """The condition of a pass that has only one: its tables need no condition column."""
    p = plan.pass_(ident.sheet.pass_id) if ident.known else None
    return p.conditions[0] if p is not None and len(p.conditions) == 1 else None


def _blind_scope(
    plan: Plan, ident: Identity, blind_items: Mapping[str, Collection[str]] | None, found: Findings
) -> BlindScope | None:
    """The blind scope of a sheet of a blind pass in the verdict round (amendments re-score by
    question and condition: they come after the key is public), else None."""
    sheet = ident.sheet
    p = plan.pass_(sheet.pass_id) if ident.known else None
    if p is None or not p.blind or sheet.amendment or sheet.round_id != plan.main_round.id:
        return None
    if blind_items is None:
        return BlindScope(p.id, None)
    items = blind_items.get(p.id)
    if not items:
        found.error(1, "no-blind-corpus", f"pass {p.id} is blind, but {plan.study_dir}/blind/{p.id}/ holds "
                    f"no blinded items yet: the study lead runs `aoven-git blind --pass {p.id}` first")
        return BlindScope(p.id, None)
    return BlindScope(p.id, frozenset(items))


def _parse(
    plan: Plan, path: str, data: bytes, is_symlink: bool, blind_items: Mapping[str, Collection[str]] | None
) -> tuple[ParsedSheet, list[Rescore]]:
    found = Findings(path)
    sf = read_study_file(plan, path, data, SCORE, found, is_symlink=is_symlink)
    ident = score_identity(plan, sf, found)
    if sf.text is None:
        return _sheet(path, ident, None, (), found), []
    ids = ids_for(plan)
    single = _single_condition(plan, ident)
    blind = _blind_scope(plan, ident, blind_items, found)
    parsed = read_cells(place_tables(mdtables.blocks(sf.body), ids, found), ids, found, single, blind)
    in_pass = ids.expected(ident.sheet.pass_id, ident.sheet.round_id)[1] if ident.known else None
    found_rescores = read_rescores(
        plan, ids, parsed, found, path=path, in_pass=in_pass, default_condition=single
    )
    check_summaries(parsed, ids, found)
    if parsed.first_table is None:
        if not parsed.header_problem:
            found.error(1, "no-score-table", _NO_TABLE)
        return _sheet(path, ident, parsed, (), found), found_rescores
    bad = schema_check(document(ident, parsed.cells), parsed.cells, found, ident.known, plan.scale)
    cells = check_cells(plan, ident, parsed, bad, ids, found, blind)
    return _sheet(path, ident, parsed, cells, found), found_rescores


def parse_score_file(
    plan: Plan,
    path: str,
    data: bytes,
    *,
    is_symlink: bool = False,
    blind_items: Mapping[str, Collection[str]] | None = None,
) -> ParsedSheet:
    """Parse and check one score file. `path` is repository-relative (posix); never raises for
    bad content: every problem is a finding on the returned sheet.

    `blind_items` maps each blind pass to the ids of its corpus (`blind/<pass>/<id>.md`): a sheet
    of a blind pass must score exactly those items. Without it, any well-formed blind id is read
    and completeness is not checked (what the sealing rules need to recognise a score table)."""
    return _parse(plan, path, data, is_symlink, blind_items)[0]


def _score_tables(plan: Plan, data: bytes) -> Parsed | None:
    """The cells of `data`'s score tables, read as Markdown, or else as CSV/TSV; None when it
    holds none (summary and re-score tables count as score tables)."""
    text = data.decode("utf-8", "replace")
    ids = ids_for(plan)
    found = Findings("")
    for blocks in (mdtables.blocks(text), mdtables.delimited(text)):
        for default in (None, *(c.id for c in plan.conditions)):
            parsed = read_cells(place_tables(blocks, ids, found), ids, found, default)
            if parsed.cells or parsed.summaries or parsed.rescore_tables:
                return parsed
    return None


def scored_conditions(plan: Plan, data: bytes) -> set[str] | None:
    """The conditions whose scores `data` states in any score table of this plan — detail, summary
    or re-score tables, Markdown, CSV or TSV, in any letter case, at any size, whatever pass its
    front matter names — or None when it holds no score table. For the sealing rules, which must
    count every copy of scores as plaintext (docs/sealing.md, "Violations": `stray-scores`); never
    raises."""
    parsed = _score_tables(plan, data)
    if parsed is None:
        return None
    conditions = {raw.key.condition for raw in parsed.cells}
    if parsed.summaries or parsed.rescore_tables:
        conditions |= {c.id for c in plan.conditions}  # a summary states every condition
    return conditions & {c.id for c in plan.conditions} or {c.id for c in plan.conditions}


def table_scores(plan: Plan, data: bytes) -> dict[tuple[str, str, str], int]:
    """Every whole-number score `data`'s score tables state, by (question, condition, dimension),
    with the replicate appended in a plan with replicates (`("L1", "TRT", "V", 2)`): what a copy
    of a sheet is compared on (`ledger`, content copies). Never raises."""
    parsed = _score_tables(plan, data)
    if parsed is None:
        return {}
    out: dict[tuple[str, str, str], int] = {}
    for raw in parsed.cells:
        if isinstance(raw.score, int):
            out.setdefault(raw.k if raw.k[3] else raw.k[:3], raw.score)  # type: ignore[arg-type]
    return out


def rescores(plan: Plan, path: str, data: bytes) -> list[Rescore]:
    """The re-scores of a score file's re-score tables (see the module docstring); the file's
    findings about them are on `parse_score_file`'s sheet."""
    return _parse(plan, path, data, False, None)[1]
