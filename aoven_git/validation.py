"""Study-level validation: which files to check, checks across files, quotes, and the report.

`scorefile` judges one file on its own; this module knows about the study: every score file of
the study dir (work tree or git index), two files claiming the same rater/pass/round, and
citation quotes checked against the response each cell scores. The report is plain data that
the `validate` command renders as text, JSON (SPEC §8) or GitHub annotations.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from aoven_git.model import Finding, Plan, ScoreSheet, SheetId
from aoven_git.naming import classify
from aoven_git.scorefile import MAX_BYTES, parse_score_file

STUDY_KINDS = ("score", "reconciliation")


@dataclass(frozen=True)
class FileResult:
    """One checked file: a score sheet or a reconciliation file (then `sheet` is None)."""

    path: str
    kind: str  # "score" | "reconciliation" | "other"
    rater: str | None
    pass_id: str | None
    round_id: str | None
    cells: int
    findings: tuple[Finding, ...]
    layout: str | None = None

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "rater": self.rater,
            "pass": self.pass_id,
            "round": self.round_id,
            "layout": self.layout,
            "cells": self.cells,
            "errors": [f.as_dict() for f in self.errors],
            "warnings": [f.as_dict() for f in self.warnings],
        }


@dataclass
class ValidationReport:
    """Everything `validate` found. `sheets` carry all their findings, cross-file ones included."""

    sheets: list[ScoreSheet]
    files: list[FileResult] = field(default_factory=list)

    @property
    def findings(self) -> dict[str, list[Finding]]:
        """Findings by file path, in file order."""
        return {f.path: list(f.findings) for f in self.files}

    @property
    def ok(self) -> bool:
        return not any(f.errors for f in self.files)

    @property
    def error_count(self) -> int:
        return sum(len(f.errors) for f in self.files)

    @property
    def warning_count(self) -> int:
        return sum(len(f.warnings) for f in self.files)

    def as_dict(self) -> dict[str, Any]:
        """SPEC §8 `validate` JSON: `ok` and `files[]`."""
        return {
            "ok": self.ok,
            "files": [f.as_dict() for f in self.files],
            "summary": {"files": len(self.files), "errors": self.error_count, "warnings": self.warning_count},
        }


# --------------------------------------------------------------------------- sources


def read_limited(path: Path) -> bytes:
    """A file's bytes, but never more than one byte past the size limit: enough for the parser to
    say `file-too-large` without reading a multi-gigabyte file into memory."""
    with path.open("rb") as fh:
        return fh.read(MAX_BYTES + 1)


def work_tree_sources(root: Path, plan: Plan) -> tuple[dict[str, bytes], set[str]]:
    """All score and reconciliation files of the study dir in the work tree, and which are symlinks.

    Only the study dir itself is searched (not sub-folders: seals/ and response folders hold no
    score files). A symlink is not followed; its target text stands in for its content.
    """
    study = root / plan.study_dir
    files: dict[str, bytes] = {}
    links: set[str] = set()
    try:
        entries = sorted(os.scandir(study), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return files, links
    for entry in entries:
        rel = f"{plan.study_dir}/{entry.name}"
        if classify(plan, rel).kind not in STUDY_KINDS:
            continue
        if entry.is_symlink():
            links.add(rel)
            files[rel] = os.readlink(entry.path).encode("utf-8", "surrogateescape")
        elif entry.is_file():
            files[rel] = read_limited(Path(entry.path))
    return files, links


# --------------------------------------------------------------------------- checks


def _check_reconciliation(
    plan: Plan,
    path: str,
    data: bytes,
    sheets: list[ScoreSheet],
    is_symlink: bool,
    responses: _Responses | None = None,
) -> FileResult:
    """THE place reconciliation files are dispatched to their checker
    (`aoven_git.reconciliation`: parse, then check against the sheets and the responses).

    When none of the given sheets belongs to the file's pass and round (`validate
    reconciliation.md` alone) and the work tree is the source, the study's score files are read
    from it: a reconciliation means nothing without the scores it settles.
    """
    from aoven_git.reconciliation import check_reconciliation, parse_reconciliation

    rec = parse_reconciliation(plan, path, data, is_symlink=is_symlink)
    pool = list(sheets)
    reader = responses
    work_tree = reader is not None and reader.root is not None and reader.given is None
    if work_tree and reader is not None and reader.root is not None and not any(
        s.sheet.pass_id == rec.pass_id and s.sheet.round_id == rec.round_id for s in sheets
    ):
        files, links = work_tree_sources(reader.root, plan)
        pool += [
            parse_score_file(plan, p, b, is_symlink=p in links)
            for p, b in files.items()
            if classify(plan, p).kind == "score"
        ]
    texts: dict[str, str] | None = None
    p, rnd = plan.pass_(rec.pass_id), plan.round_(rec.round_id)
    if reader is not None and (reader.root is not None or reader.given is not None) and p and rnd:
        texts = {}
        for q in rnd.questions:
            for c in p.conditions:
                for stripped in dict.fromkeys((p.stripped, False)):
                    text = reader.get(reader.path(q, c, stripped))
                    if text is not None:
                        texts[reader.path(q, c, stripped)] = text
    findings = check_reconciliation(plan, rec, pool, texts)
    return FileResult(
        path,
        "reconciliation",
        None,
        rec.pass_id,
        rec.round_id,
        len({row.key for row in rec.rows}),
        tuple(findings),
    )


class _Responses:
    """Response texts by repository path, read lazily (each file at most once)."""

    def __init__(self, plan: Plan, root: Path | None, given: Mapping[str, str] | None) -> None:
        self.plan = plan
        self.root = root
        self.given = given
        self.cache: dict[str, str | None] = {}

    def get(self, path: str) -> str | None:
        if path in self.cache:
            return self.cache[path]
        text: str | None = None
        if self.given is not None:
            text = self.given.get(path)
        elif self.root is not None:
            try:
                text = read_limited(self.root / path).decode("utf-8", "replace")
            except OSError:
                text = None
        self.cache[path] = text
        return text

    def path(self, question: str, condition: str, stripped: bool) -> str:
        return f"{self.plan.study_dir}/{self.plan.response_path(condition, question, stripped=stripped)}"

    def text(self, question: str, condition: str, stripped: bool) -> str | None:
        """The response a cell was scored on. Before `strip-markers` has written the stripped
        copy, it is derived from the original exactly as `strip-markers` would write it."""
        text = self.get(self.path(question, condition, stripped))
        if text is None and stripped:
            original = self.get(self.path(question, condition, False))
            if original is not None:
                from aoven_git.markers import strip_response

                text = strip_response(original, self.plan.markers).text
                self.cache[self.path(question, condition, True)] = text
        return text


def _quote_findings(plan: Plan, sheet: ScoreSheet, responses: _Responses) -> list[Finding]:
    """`quote-not-found` for each quoted phrase of a citation missing from the cell's response."""
    try:
        from aoven_git.quotes import extract_quotes, find_quote, quote_in
    except ImportError:  # pragma: no cover - quotes.py ships with the package
        return []
    p = plan.pass_(sheet.sheet.pass_id)
    rnd = plan.round_(sheet.sheet.round_id)
    if p is None or rnd is None:
        return []
    markers = () if p.stripped else plan.markers
    out: list[Finding] = []
    reported: set[tuple[int, str]] = set()
    missing_files: set[str] = set()
    others: dict[str, str] | None = None
    for cell in sheet.cells:
        if (
            '"' not in cell.citation
            and "“" not in cell.citation
            and "„" not in cell.citation
            and "«" not in cell.citation
        ):
            continue
        own = responses.path(cell.key.question, cell.key.condition, p.stripped)
        text = responses.text(cell.key.question, cell.key.condition, p.stripped)
        for quote in extract_quotes(cell.citation):
            if (cell.line, quote) in reported:
                continue
            reported.add((cell.line, quote))
            if text is None:
                if own not in missing_files:
                    missing_files.add(own)
                    out.append(
                        Finding(
                            sheet.path,
                            cell.line,
                            "response-missing",
                            f"{cell.key}: cannot check quotes, the response {own} does not exist",
                            "warning",
                        )
                    )
                continue
            if quote_in(quote, text, markers=markers):
                continue
            if others is None:
                others = {}
                for q in rnd.questions:
                    for c in p.conditions:
                        other = responses.path(q, c, p.stripped)
                        other_text = responses.text(q, c, p.stripped)
                        if other != own and other_text is not None:
                            others[other] = other_text
            elsewhere = find_quote(quote, others, markers=markers)
            shown = quote if len(quote) <= 80 else quote[:77] + "..."
            where = f"; it occurs in {', '.join(elsewhere)}" if elsewhere else ""
            out.append(
                Finding(
                    sheet.path,
                    cell.line,
                    "quote-not-found",
                    f'{cell.key}: quote "{shown}" is not in {own}{where}',
                    "warning",
                )
            )
    return out


def _duplicate_findings(sheets: list[ScoreSheet]) -> dict[str, list[Finding]]:
    first: dict[SheetId, str] = {}
    out: dict[str, list[Finding]] = {}
    for sheet in sorted(sheets, key=lambda s: s.path):
        if not sheet.sheet.rater:
            continue
        if sheet.sheet in first:
            out.setdefault(sheet.path, []).append(
                Finding(
                    sheet.path,
                    1,
                    "duplicate-sheet",
                    f"{first[sheet.sheet]} already holds the scores of rater {sheet.sheet.rater}, pass "
                    f"{sheet.sheet.pass_id}, round {sheet.sheet.round_id}; keep one file per sheet",
                )
            )
        else:
            first[sheet.sheet] = sheet.path
    return out


def validate_sources(
    plan: Plan,
    files: Mapping[str, bytes],
    *,
    root: Path | None,
    symlinks: Collection[str] = (),
    responses: Mapping[str, str] | None = None,
) -> ValidationReport:
    """Check score (and reconciliation) files given as bytes by repository-relative path.

    `responses` maps repository paths to response texts for quote checks; None reads them from
    `root` (when given). Files are reported in path order.
    """
    links = set(symlinks)
    sheets: list[ScoreSheet] = []
    results: dict[str, FileResult] = {}
    recon: list[str] = []
    for path in sorted(files):
        kind = classify(plan, path).kind
        if kind == "score":
            sheets.append(parse_score_file(plan, path, files[path], is_symlink=path in links))
        elif kind == "reconciliation":
            recon.append(path)
        else:
            results[path] = FileResult(
                path,
                "other",
                None,
                None,
                None,
                0,
                (
                    Finding(
                        path,
                        1,
                        "not-a-score-file",
                        "not a score or reconciliation file of the study (expected "
                        f"{plan.study_dir}/scores_<rater>[_<round>][_<pass>].md or "
                        "reconciliation[_<round>][_<pass>].md)",
                    ),
                ),
            )
    extra = _duplicate_findings(sheets)
    reader = _Responses(plan, root, responses)
    final: list[ScoreSheet] = []
    for sheet in sheets:
        added = extra.get(sheet.path, [])
        if sheet.cells and (root is not None or responses is not None):
            added = [*added, *_quote_findings(plan, sheet, reader)]
        if added:
            ordered = sorted(
                (*sheet.findings, *added), key=lambda f: (f.line or 0, f.severity != "error", f.code)
            )
            sheet = replace(sheet, findings=tuple(ordered))
        final.append(sheet)
        known = bool(sheet.sheet.rater)
        results[sheet.path] = FileResult(
            sheet.path,
            "score",
            sheet.sheet.rater if known else None,
            sheet.sheet.pass_id if known else None,
            sheet.sheet.round_id if known else None,
            len(sheet.cells),
            sheet.findings,
            sheet.layout,
        )
    for path in recon:
        results[path] = _check_reconciliation(plan, path, files[path], final, path in links, reader)
    return ValidationReport(final, [results[p] for p in sorted(results)])
