"""`aoven-git validate [FILES…] [--staged]`: check score and reconciliation files (docs/score-files.md).

Exit 0 when no file has an error (warnings allowed), 1 when one has, 2 for a plan or usage error
(a FILE outside the study dir, a file that does not exist), 3 when `--staged` is used outside a
git repository (there is no index to read: nothing can be verified).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from aoven_git.commands._common import Study, format_option, study_options
from aoven_git.errors import CannotVerify, UsageError
from aoven_git.model import Plan
from aoven_git.validation import (
    FileResult,
    StudyFiles,
    ValidationReport,
    checked,
    read_limited,
    read_study,
    work_tree_keys,
    work_tree_study,
)


def _relpath(study: Study, name: str) -> str:
    """Like `Study.relpath`, but a symlink is not followed: the link itself is the file checked."""
    p = Path(name)
    full = p if p.is_absolute() else Path.cwd() / p
    full = full.parent.resolve() / full.name
    try:
        return full.relative_to(study.root.resolve()).as_posix()
    except ValueError:
        raise UsageError(f"{name} is outside the repository {study.root}") from None


def _pick(study: Study, plan: Plan, files: tuple[str, ...]) -> list[str]:
    """Repository-relative paths of FILES, each a score/reconciliation file of the study dir."""
    out: list[str] = []
    bad: list[str] = []
    for name in files:
        rel = _relpath(study, name)
        if not checked(plan, rel):
            bad.append(f"{name} ({rel})" if rel != name else name)
            continue
        out.append(rel)
    if bad:
        raise UsageError(
            f"not a score or reconciliation file of the study dir {plan.study_dir}/: {', '.join(bad)} "
            "(expected scores_<rater>[_<round>][_<pass>].md or reconciliation[_<round>][_<pass>].md)"
        )
    return list(dict.fromkeys(out))


def _from_index(study: Study, plan: Plan, wanted: list[str] | None) -> StudyFiles:
    """The study as staged (`--staged` judges the index, blind keys included), narrowed to FILES."""
    from aoven_git.validation import index_study

    if not study.in_git:
        raise CannotVerify(f"--staged reads the git index, but {study.root} is not a git repository")
    staged = index_study(study.root, plan)
    if wanted is None:
        return staged
    absent = [p for p in wanted if p not in staged.files]
    if absent:
        raise UsageError(f"not in the git index (stage it with `git add` first): {', '.join(absent)}")
    return staged.only(wanted)


def _from_work_tree(study: Study, plan: Plan, wanted: list[str]) -> tuple[dict[str, bytes], set[str]]:
    files: dict[str, bytes] = {}
    links: set[str] = set()
    for rel in wanted:
        full = study.root / rel
        if full.is_symlink():
            links.add(rel)
            files[rel] = os.readlink(full).encode("utf-8", "surrogateescape")
            continue
        if not full.exists():
            raise UsageError(f"{rel}: no such file")
        if not full.is_file():
            raise UsageError(f"{rel}: not a regular file")
        try:
            files[rel] = read_limited(full)
        except OSError as exc:
            raise UsageError(f"{rel}: cannot read: {exc.strerror or exc}") from None
    return files, links


def _attribution_warnings(study: Study, plan: Plan, report: ValidationReport, sources: dict[str, bytes],
                          links: set[str]) -> ValidationReport:
    """Warn about reconciliation rows you would commit for another rater: they would be ignored
    (verify-seal and report judge rows from history). The commit's parents are HEAD and, while a
    merge is being concluded, MERGE_HEAD: rows the merge carries from either are not yours
    (`attribution.written`, the rule verify-seal and the hook apply)."""
    from aoven_git import gitio
    from aoven_git.naming import classify
    from aoven_git.reconciliation import rows_not_by
    from aoven_git.validation import with_findings

    paths = [p for p in sources if p not in links and classify(plan, p).kind == "reconciliation"]
    if not paths:
        return report
    parents = [gitio.head_blobs(study.root, paths, rev) for rev in ("HEAD", "MERGE_HEAD")
               if gitio.resolve_commit(study.root, rev) is not None]
    email = gitio.user_email(study.root) or ""
    for path in paths:
        found = rows_not_by(plan, path, sources[path], [p.get(path) for p in parents] or [None], email)
        report = with_findings(report, path, found)
    return report


def _text(report: ValidationReport, where: str, verbose: bool) -> None:
    for f in report.files:
        for finding in f.findings:
            loc = f"{finding.path}:{finding.line}" if finding.line else finding.path
            click.echo(f"{loc}: {finding.severity}[{finding.code}]: {finding.message}")
        if verbose:
            _verbose(f)
    n = len(report.files)
    if n == 0:
        click.echo(f"no score or reconciliation files {where}")
        return
    cells = sum(f.cells for f in report.files if f.kind == "score")
    status = "ok" if report.ok else "FAILED"
    click.echo(
        f"validate: {status}: {n} file(s), {cells} cells, {report.error_count} error(s), "
        f"{report.warning_count} warning(s)"
    )


def _verbose(f: FileResult) -> None:
    """What was read and what was left alone: the layout and cells, then every ignored table and
    column, summary and re-score table, by line."""
    if f.kind == "score":
        who = f"{f.rater}/{f.pass_id}/{f.round_id}" if f.rater else "unidentified"
        who += f" (amendment {f.amendment})" if f.amendment and f.rater else ""
        click.echo(f"{f.path}: note: {who}, {f.layout} layout, {f.cells} cells")
    for note in f.notes:
        click.echo(f"{f.path}:{note.line}: note: {note.message}")


def _github(report: ValidationReport) -> None:
    from aoven_git.render.github import Annotation, annotation_lines

    notes = [
        Annotation(f.severity, f"{f.code}: {f.message}", f.path, f.line, f"aoven-git {f.code}")
        for r in report.files
        for f in r.findings
    ]
    for line in annotation_lines(notes):
        click.echo(line)
    status = "ok" if report.ok else "failed"
    click.echo(
        f"validate {status}: {len(report.files)} file(s), {report.error_count} error(s), "
        f"{report.warning_count} warning(s)"
    )


@click.command("validate")
@study_options
@click.argument("files", nargs=-1, type=click.Path(dir_okay=True))
@click.option("--staged", is_flag=True, help="Check the files as staged in the git index, not the work tree.")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Also list what was read but not used: ignored tables and columns, summary and re-score tables.",
)
@format_option("text", "json", "github")
def command(study: Study, files: tuple[str, ...], staged: bool, verbose: bool, fmt: str) -> int:
    """Check score and reconciliation files: layout, ids, scale, completeness, annotations,
    front matter and quotes. Without FILES, every such file of the study dir and of its
    amendment folders (amendments/<id>/)."""
    plan = study.plan
    wanted = _pick(study, plan, files) if files else None
    if staged:
        source = _from_index(study, plan, wanted)
        where = f"staged in {plan.study_dir}/"
    elif wanted is not None:
        files, links = _from_work_tree(study, plan, wanted)
        source = StudyFiles(plan, files, frozenset(links), work_tree_keys(study.root, plan), study.root)
        where = "given"
    else:
        source = work_tree_study(study.root, plan)
        where = f"in {plan.study_dir}/"
    report = read_study(source).validation
    if study.in_git:
        report = _attribution_warnings(study, plan, report, dict(source.files), set(source.links))
    if fmt == "json":
        click.echo(json.dumps(report.as_dict(verbose=verbose), indent=2, ensure_ascii=False))
    elif fmt == "github":
        _github(report)
    else:
        _text(report, where, verbose)
    return 0 if report.ok else 1
