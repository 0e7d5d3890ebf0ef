"""Study-level validation: which files to check, checks across files, quotes, and the report.

`scorefile` judges one file on its own; this module knows about the study: every score file of
the study dir (work tree or git index), two files claiming the same rater/pass/round, and
citation quotes checked against the response each cell scores. The report is plain data that
the `validate` command renders as text, JSON or GitHub annotations (docs/score-files.md).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from aoven_git.model import Finding, Findings, Plan, Reconciliation, ScoreSheet, SheetId, sort_findings
from aoven_git.naming import AMENDMENTS_DIR, case_variant, classify
from aoven_git.quotes import ResponseTexts, extract_quotes, has_quote, shorten
from aoven_git.scorefile import BLIND_CONDITION, MAX_BYTES, Note, parse_score_file

STUDY_KINDS = ("score", "reconciliation")


def checked(plan: Plan, path: str) -> bool:
    """Whether validation reads `path`: a score or reconciliation file, or a score file's name in
    other letter case (reported as `name-case`, not silently skipped)."""
    return classify(plan, path).kind in STUDY_KINDS or case_variant(plan, path) is not None


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
    notes: tuple[Note, ...] = ()  # read but not used: ignored tables and columns (`--verbose`)
    amendment: str | None = None  # the amendment whose folder holds the file

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    def as_dict(self, *, verbose: bool = False) -> dict[str, Any]:
        out = {
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
        if self.amendment:
            out["amendment"] = self.amendment
        if verbose:
            out["notes"] = [{"line": n.line, "message": n.message} for n in self.notes]
        return out


@dataclass
class ValidationReport:
    """Everything `validate` found. `sheets` carry all their findings, cross-file ones included.

    `sheets` are the study's own score files, what the pre-registered verdict is computed from;
    the re-scores of amendments are kept apart in `amendment_sheets` (each with `sheet.amendment`
    set), so that no caller mixes them into the pre-registered scores by accident. `files` lists
    every checked file, amendment files included."""

    sheets: list[ScoreSheet]
    files: list[FileResult] = field(default_factory=list)
    amendment_sheets: list[ScoreSheet] = field(default_factory=list)

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

    def as_dict(self, *, verbose: bool = False) -> dict[str, Any]:
        """`validate` JSON: `ok` and `files[]` (with `notes[]` when verbose)."""
        return {
            "ok": self.ok,
            "files": [f.as_dict(verbose=verbose) for f in self.files],
            "summary": {"files": len(self.files), "errors": self.error_count, "warnings": self.warning_count},
        }


# --------------------------------------------------------------------------- sources


def read_limited(path: Path) -> bytes:
    """A file's bytes, but never more than one byte past the size limit: enough for the parser to
    say `file-too-large` without reading a multi-gigabyte file into memory."""
    with path.open("rb") as fh:
        return fh.read(MAX_BYTES + 1)


def work_tree_sources(
    root: Path, plan: Plan, *, amendments: bool = False
) -> tuple[dict[str, bytes], set[str]]:
    """All score and reconciliation files of the study dir in the work tree, and which are symlinks.

    Only the study dir itself is searched (seals/ and response folders hold no score files), and,
    with `amendments`, each amendment's folder `amendments/<id>/` (docs/amendments.md). A symlink
    is not followed; its target text stands in for its content.
    """
    files: dict[str, bytes] = {}
    links: set[str] = set()
    folders = [plan.study_dir]
    if amendments:
        base = root / plan.study_dir / AMENDMENTS_DIR
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            folders += sorted(f"{plan.study_dir}/{AMENDMENTS_DIR}/{e.name}" for e in os.scandir(base)
                              if e.is_dir(follow_symlinks=False))
    for folder in folders:
        _read_folder(root, plan, folder, files, links)
    return files, links


def _read_folder(root: Path, plan: Plan, folder: str, files: dict[str, bytes], links: set[str]) -> None:
    try:
        entries = sorted(os.scandir(root / folder), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        rel = f"{folder}/{entry.name}"
        if not checked(plan, rel):
            continue
        if entry.is_symlink():
            links.add(rel)
            files[rel] = os.readlink(entry.path).encode("utf-8", "surrogateescape")
        elif entry.is_file():
            files[rel] = read_limited(Path(entry.path))


def blind_corpus(
    plan: Plan, root: Path | None, responses: Mapping[str, str] | None
) -> dict[str, frozenset[str]] | None:
    """The item ids of every blind pass's corpus: from the given files (the index, a commit), else
    from the work tree; None when there is neither (then blind sheets are read leniently)."""
    from aoven_git.blind_corpus import corpus_ids, work_tree_corpus_ids

    if not any(p.blind for p in plan.passes) or (root is None and responses is None):
        return None
    found = corpus_ids(plan, responses or ())
    if root is not None:
        on_disk = work_tree_corpus_ids(root, plan)
        found = {p: found.get(p) or on_disk.get(p, frozenset()) for p in found}
    return found


# --------------------------------------------------------------------------- checks


def _check_reconciliation(
    plan: Plan,
    path: str,
    data: bytes,
    sheets: list[ScoreSheet],
    is_symlink: bool,
    responses: ResponseTexts,
) -> FileResult:
    """THE place reconciliation files are dispatched to their checker
    (`aoven_git.reconciliation`: parse, then check against the sheets and the responses).

    When none of the given sheets belongs to the file's pass and round (`validate
    reconciliation.md` alone) and the work tree is the source, the study's score files are read
    from it: a reconciliation means nothing without the scores it settles.
    """
    from aoven_git.reconciliation import check_reconciliation, parse_reconciliation

    rec = parse_reconciliation(plan, path, data, is_symlink=is_symlink)
    named = classify(plan, path).sheet
    amendment = named.amendment if named is not None else None
    # an amendment's reconciliation settles its re-scores; the study's settles the scores
    pool = [s for s in sheets if s.sheet.amendment == amendment]
    work_tree = responses.root is not None and responses.given is None
    if work_tree and responses.root is not None and not any(
        s.sheet.pass_id == rec.pass_id and s.sheet.round_id == rec.round_id for s in pool
    ):
        files, links = work_tree_sources(responses.root, plan, amendments=amendment is not None)
        more = [parse_score_file(plan, p, b, is_symlink=p in links) for p, b in files.items()
                if classify(plan, p).kind == "score"]
        pool += mapped_back(plan, [s for s in more if s.sheet.amendment == amendment], responses.root, None)
    findings = check_reconciliation(plan, rec, pool, responses if responses.available else None)
    return FileResult(
        path,
        "reconciliation",
        None,
        rec.pass_id,
        rec.round_id,
        len({row.key for row in rec.rows}),
        tuple(findings),
        amendment=amendment,
    )


def _quote_findings(
    plan: Plan, sheet: ScoreSheet, responses: ResponseTexts, corpus: Mapping[str, frozenset[str]] | None
) -> list[Finding]:
    """`quote-not-found` for each quoted phrase of a citation missing from the cell's response."""
    p = plan.pass_(sheet.sheet.pass_id)
    rnd = plan.round_(sheet.sheet.round_id)
    if p is None or rnd is None:
        return []
    if sheet.cells and sheet.cells[0].key.condition == BLIND_CONDITION:
        return _blind_quote_findings(plan, sheet, responses, (corpus or {}).get(p.id, frozenset()))
    found = Findings(sheet.path)
    reported: set[tuple[int, str]] = set()
    missing_files: set[str] = set()
    for cell in sheet.cells:
        if not has_quote(cell.citation):
            continue
        for quote in extract_quotes(cell.citation):
            if (cell.line, quote) in reported:
                continue
            reported.add((cell.line, quote))
            where = responses.check(quote, cell.key.question, cell.key.condition, p, rnd,
                                    replicate=cell.key.replicate)
            if where.missing and where.path not in missing_files:
                missing_files.add(where.path)
                found.warn(
                    cell.line,
                    "response-missing",
                    f"{cell.key}: cannot check quotes, the response {where.path} does not exist",
                )
            if where.missing or where.found:
                continue
            also = f"; it occurs in {', '.join(where.elsewhere)}" if where.elsewhere else ""
            message = f'{cell.key}: quote "{shorten(quote)}" is not in {where.path}{also}'
            found.warn(cell.line, "quote-not-found", message)
    return found.items


def _blind_quote_findings(
    plan: Plan, sheet: ScoreSheet, responses: ResponseTexts, items: frozenset[str]
) -> list[Finding]:
    """Quotes of a blind sheet are looked up in the blinded text the rater read, and when not
    there, in the other items of the corpus."""
    from aoven_git.blinding import file_name
    from aoven_git.naming import blind_dir
    from aoven_git.quotes import find_quote, quote_in

    folder = blind_dir(plan, sheet.sheet.pass_id)
    found = Findings(sheet.path)
    corpus: dict[str, str] | None = None
    for cell in sheet.cells:
        own = f"{folder}/{file_name(cell.key.question)}"
        text = responses.get(own) if has_quote(cell.citation) else None
        for quote in extract_quotes(cell.citation) if text is not None else ():
            if quote_in(quote, text or ""):
                continue
            if corpus is None:
                paths = (f"{folder}/{file_name(i)}" for i in sorted(items))
                corpus = {p: t for p in paths if p != own and (t := responses.get(p)) is not None}
            others = find_quote(quote, corpus)
            also = f"; it occurs in {', '.join(others)}" if others else ""
            message = f'{cell.key}: quote "{shorten(quote)}" is not in {own}{also}'
            found.warn(cell.line, "quote-not-found", message)
    return found.items


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


def _other(plan: Plan, path: str) -> FileResult:
    canonical = case_variant(plan, path)
    if canonical is not None:
        return _name_case(path, canonical)
    message = (
        "not a score or reconciliation file of the study (expected "
        f"{plan.study_dir}/scores_<rater>[_<round>][_<pass>].md or reconciliation[_<round>][_<pass>].md)"
    )
    return FileResult(path, "other", None, None, None, 0, (Finding(path, 1, "not-a-score-file", message),))


def _name_case(path: str, canonical: str) -> FileResult:
    """`name-case`: a sheet's name in other letter case. Not read as scores: renamed, it is."""
    name, right = Path(path).name, Path(canonical).name
    message = (f"{name} differs from the score file name {right} only in letter case: file names are "
               f"case-sensitive, so its scores are not read; rename it: git mv {path} {canonical}")
    return FileResult(path, "other", None, None, None, 0, (Finding(path, 1, "name-case", message),))


def _score_result(sheet: ScoreSheet) -> FileResult:
    known = bool(sheet.sheet.rater)
    return FileResult(
        sheet.path,
        "score",
        sheet.sheet.rater if known else None,
        sheet.sheet.pass_id if known else None,
        sheet.sheet.round_id if known else None,
        len(sheet.cells),
        sheet.findings,
        sheet.layout,
        getattr(sheet, "notes", ()),
        sheet.sheet.amendment,
    )


def _study_checks(
    plan: Plan, sheets: list[ScoreSheet], reader: ResponseTexts, corpus: Mapping[str, frozenset[str]] | None
) -> list[ScoreSheet]:
    """The sheets with the findings only the study can tell: duplicates, and quotes."""
    extra = _duplicate_findings(sheets)
    final: list[ScoreSheet] = []
    for sheet in sheets:
        added = extra.get(sheet.path, [])
        if sheet.cells and reader.available:
            added = [*added, *_quote_findings(plan, sheet, reader, corpus)]
        if added:
            sheet = replace(sheet, findings=sort_findings((*sheet.findings, *added)))
        final.append(sheet)
    return final


def validate_sources(
    plan: Plan,
    files: Mapping[str, bytes],
    *,
    root: Path | None,
    symlinks: Collection[str] = (),
    responses: Mapping[str, str] | None = None,
    keys: Mapping[str, bytes] | None = None,
) -> ValidationReport:
    """Check score (and reconciliation) files given as bytes by repository-relative path.

    `responses` maps repository paths to response texts for quote checks; None reads them from
    `root` (when given). `keys` (blind pass -> its committed key's bytes; None: read from `root`'s
    work tree) map a blind pass's sheets back to (question, condition) for its reconciliation,
    which settles cells by question and condition. Files are reported in path order.
    """
    links = set(symlinks)
    sheets: list[ScoreSheet] = []
    results: dict[str, FileResult] = {}
    recon: list[str] = []
    corpus = blind_corpus(plan, root, responses)
    for path in sorted(files):
        kind = classify(plan, path).kind
        if kind == "score":
            sheets.append(
                parse_score_file(plan, path, files[path], is_symlink=path in links, blind_items=corpus)
            )
        elif kind == "reconciliation":
            recon.append(path)
        else:
            results[path] = _other(plan, path)
    reader = ResponseTexts(plan, root=root, given=responses)
    final = _study_checks(plan, sheets, reader, corpus)
    results.update((sheet.path, _score_result(sheet)) for sheet in final)
    if recon:
        mapped = mapped_back(plan, final, root, keys)
        for path in recon:
            results[path] = _check_reconciliation(plan, path, files[path], mapped, path in links, reader)
    own = [s for s in final if not s.sheet.amendment]
    amended = [s for s in final if s.sheet.amendment]
    return ValidationReport(own, [results[p] for p in sorted(results)], amended)


def mapped_back(plan: Plan, sheets: list[ScoreSheet], root: Path | None,
                keys: Mapping[str, bytes] | None) -> list[ScoreSheet]:
    """`sheets` with blind passes mapped back through their committed keys (none: unchanged).
    `keys` None reads them from `root`'s work tree (a lone reconciliation file given to `validate`)."""
    if not any(p.blind for p in plan.passes):
        return sheets
    from aoven_git.blind_corpus import map_back, readable_keys

    found = keys if keys is not None else (work_tree_keys(root, plan) if root is not None else {})
    return map_back(plan, sheets, readable_keys(found))


# --------------------------------------------------------------------------- one reading of a study


@dataclass(frozen=True)
class StudyFiles:
    """A study as one source holds it — the work tree, the git index or a commit — with the keys of
    its blind passes read from that same source. A blind sheet's cells mean (question, condition)
    only through the key committed beside it, so the keys travel with the files: no reader can
    forget them (docs/design.md, "One reading of a study")."""

    plan: Plan
    files: Mapping[str, bytes]  # score and reconciliation files by repository path
    links: frozenset[str]  # which of them are symbolic links (their target text stands in)
    keys: Mapping[str, bytes]  # blind pass -> its key's bytes, from the same source as `files`
    root: Path | None  # the work tree: response texts and the blind corpus are read from it
    responses: Mapping[str, str] | None = None  # response texts by path (index, commit); None: from root

    def only(self, paths: Collection[str]) -> StudyFiles:
        """The same source narrowed to `paths` (`validate FILES --staged`); the keys stay."""
        return replace(self, files={p: self.files[p] for p in paths if p in self.files},
                       links=self.links & frozenset(paths))


@dataclass(frozen=True)
class StudyReading:
    """What every command reads from a study: validation, the study's own sheets with each blind
    pass mapped back through its key, and the reconciliation files (a link is not read as one)."""

    source: StudyFiles
    validation: ValidationReport
    sheets: tuple[ScoreSheet, ...]
    reconciliations: tuple[Reconciliation, ...]
    amendment_sheets: tuple[ScoreSheet, ...] = ()  # re-scores, mapped back the same way


def read_study(study: StudyFiles) -> StudyReading:
    """THE reading of a study, for the work tree, the index and a revision alike (`validate`,
    `disagreements`, the hook, `report`): the files are validated with the blind keys of their own
    source, the sheets are mapped back through the same keys, the reconciliations are parsed.
    One path, so that a reconciliation by question and condition means the same to every command."""
    from aoven_git.reconciliation import parse_reconciliation

    plan = study.plan
    report = validate_sources(plan, study.files, root=study.root, symlinks=study.links,
                              responses=study.responses, keys=study.keys)
    sheets = mapped_back(plan, report.sheets, None, study.keys)
    reconciliations = tuple(parse_reconciliation(plan, path, data)
                            for path, data in sorted(study.files.items())
                            if classify(plan, path).kind == "reconciliation" and path not in study.links)
    rescores = mapped_back(plan, report.amendment_sheets, None, study.keys)
    return StudyReading(study, report, tuple(sheets), reconciliations, tuple(rescores))


def blind_keys(plan: Plan, found: Mapping[str, bytes]) -> dict[str, bytes]:
    """The keys among `found` (repository path -> bytes) of the plan's blind passes, by pass."""
    from aoven_git.naming import blind_key_path

    paths = {blind_key_path(plan, p.id): p.id for p in plan.passes if p.blind}
    return {paths[path]: data for path, data in found.items() if path in paths}


def work_tree_keys(root: Path, plan: Plan) -> dict[str, bytes]:
    """The blind keys in the work tree (a regular file at `blind/<pass>/key.json`; a link is not
    a key)."""
    from aoven_git.naming import blind_key_path

    found = {}
    for p in (p for p in plan.passes if p.blind):
        path = root / blind_key_path(plan, p.id)
        if path.is_file() and not path.is_symlink():
            found[blind_key_path(plan, p.id)] = path.read_bytes()
    return blind_keys(plan, found)


def work_tree_study(root: Path, plan: Plan, *, amendments: bool = True) -> StudyFiles:
    """The study in the work tree: every score and reconciliation file (`work_tree_sources`) and
    the blind keys beside them."""
    files, links = work_tree_sources(root, plan, amendments=amendments)
    return StudyFiles(plan, files, frozenset(links), work_tree_keys(root, plan), root)


def index_study(root: Path, plan: Plan) -> StudyFiles:
    """The study as staged in the git index: its score and reconciliation files, the response texts
    (for quotes) and the staged blind keys (three git calls)."""
    from aoven_git import gitio

    blobs = gitio.staged_blobs(root, [plan.study_dir])
    links = gitio.staged_symlinks(root, [plan.study_dir])
    files = {p: b for p, b in blobs.items() if checked(plan, p)}
    responses = {p: b.decode("utf-8", "replace") for p, b in blobs.items()
                 if p.endswith(".md") and p not in files and p not in links}
    keys = blind_keys(plan, {p: b for p, b in blobs.items() if p not in links})  # keys lie in the study dir
    return StudyFiles(plan, files, frozenset(links & set(files)), keys, root, responses)


def revision_study(root: Path, plan: Plan, commit: str) -> StudyFiles:
    """The study as committed at `commit` (its own committed plan given): score and reconciliation
    files, response texts and blind keys, read from one tree walk (docs/design.md, "The report reads
    what was verified")."""
    from aoven_git import gitio

    tree, links = gitio.tree_files(root, commit, plan.study_dir, limit=MAX_BYTES)
    files = {p: d for p, d in tree.items() if classify(plan, p).kind in STUDY_KINDS}
    responses = {p: d.decode("utf-8", "replace") for p, d in tree.items() if p.endswith(".md")}
    keys = blind_keys(plan, {p: d for p, d in tree.items() if p not in links})
    return StudyFiles(plan, files, frozenset(links & set(files)), keys, None, responses)


def with_findings(report: ValidationReport, path: str, extra: Sequence[Finding]) -> ValidationReport:
    """`report` with `extra` findings added to the file at `path` (in the one finding order)."""
    if not extra:
        return report
    files = [replace(f, findings=sort_findings((*f.findings, *extra))) if f.path == path else f
             for f in report.files]
    return replace(report, files=files)
