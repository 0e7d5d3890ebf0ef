"""`aoven-git verify-seal [--rev REV]`: prove from commit history that every rater sealed blind.

Exit 0 verified (status `complete`, or `pending` while a required rater has not sealed yet, or
only optional raters' violations, which exclude those raters instead of failing the run),
1 violations by required raters (or by no rater), 2 plan or usage error (unknown revision),
3 cannot verify (not a git repository, shallow clone).

Warnings, not errors: an optional rater's violations (their sheets are left out of agreement
and consensus), and reconciliation rows that someone other than their rater wrote (they are
ignored); see docs/report.md, "Seals".
"""

from __future__ import annotations

import json
from typing import Any

import click

from aoven_git.commands._common import Study, format_option, study_options
from aoven_git.errors import CannotVerify
from aoven_git.model import Violation
from aoven_git.seal_report import SealReport

FIX_ROW = "the rater must write and commit their own row"


def exit_code(report: SealReport) -> int:
    if any(v.code == "shallow-history" for v in report.violations):
        return 3
    return 1 if report.blocking else 0


def _excludes(report: SealReport, v: Violation) -> bool:
    """True when `v` only excludes an optional rater (a warning), False when it blocks."""
    return v.rater is not None and v.rater in report.optional


def _row_place(row: dict[str, Any]) -> str:
    return f"{row.get('path')}:{row.get('line')}" if row.get("line") is not None else str(row.get("path"))


def _row_text(row: dict[str, Any]) -> str:
    commit = f" (commit {str(row['commit'])[:10]})" if row.get("commit") else ""
    return (f"{row.get('cell')} row for {row.get('rater')} ignored: {row.get('message')}{commit}; "
            f"{FIX_ROW}")


def render_text(report: SealReport) -> list[str]:
    out = [f"verify-seal at {report.commit[:10] if report.commit else '?'}: {report.status}"]
    for s in report.seals:
        seal = s.seal
        revealed = f", revealed in {s.revealed[:10]}" if s.revealed else (
            ", not revealed yet" if seal.kind == "digest" else "")
        out.append(f"  sealed   {seal.rater} {seal.pass_id}/{seal.round_id}: {seal.kind} seal in "
                   f"{seal.commit[:10]} ({seal.path}){revealed}")
    for p in report.pending:
        out.append(f"  pending  {p.rater} {p.pass_id}/{p.round_id}: no seal yet")
    for f in report.forced_reveals:
        out.append(f"  forced   {f['rater']} {f['pass']}/{f['round']}: revealed with --force in "
                   f"{f['commit'][:10]}")
    for w in report.withdrawals:
        late = " (after a reveal)" if w["after_reveal"] else ""
        out.append(f"  withdrawn {w['rater']} in {w['commit'][:10]}{late}: {w['category']}, {w['reason']}; "
                   "no longer waited for, sheets of passes not complete then are left out")
    for v in report.violations:
        where = f" in {v.commit[:10]}" if v.commit else ""
        who = f" [{v.rater}]" if v.rater else ""
        level = "warning" if _excludes(report, v) else "error  "
        out.append(f"  {level}  {v.code}{who}{where}: {v.message}")
    for rater, codes in report.excluded.items():
        out.append(f"  excluded {rater}: optional rater, {', '.join(codes)}: their sheets are left out of "
                   "agreement and consensus (the run does not fail)")
    for row in report.unattributed:
        out.append(f"  warning  unattributed-row {_row_place(row)}: {_row_text(row)}")
    return out + _text_summary(report)


def _text_summary(report: SealReport) -> list[str]:
    out = []
    blocking, optional = len(report.blocking), len(report.violations) - len(report.blocking)
    if blocking:
        out.append(f"{blocking} violation(s): the sealing promise does not hold")
    if optional:
        out.append(f"{optional} violation(s) by optional raters: "
                   f"{', '.join(report.excluded)} excluded, the verdict is not blocked")
    if report.unattributed:
        out.append(f"{len(report.unattributed)} reconciliation row(s) ignored: not written by their rater")
    return out


def render_github(report: SealReport) -> list[str]:
    """Annotations, most serious first (GitHub shows only the first few of each kind)."""
    from aoven_git.render.github import Annotation, annotation_lines

    def violation(v: Violation) -> Annotation:
        excluded = _excludes(report, v)
        tail = (f" (commit {v.commit[:10]})" if v.commit else "") + (
            f"; optional rater {v.rater} is excluded from agreement and consensus" if excluded else "")
        return Annotation("warning" if excluded else "error", f"{v.message}{tail}", file=v.path,
                          title=f"verify-seal: {v.code}")

    notes = [violation(v) for v in report.violations if not _excludes(report, v)]
    notes += [violation(v) for v in report.violations if _excludes(report, v)]
    notes += [Annotation("warning", _row_text(row), file=row.get("path"),
                         line=row.get("line") if isinstance(row.get("line"), int) else None,
                         title="verify-seal: unattributed-row") for row in report.unattributed]
    notes += [Annotation("warning", f"{p.rater} has not sealed {p.pass_id}/{p.round_id} yet",
                         title="verify-seal: pending") for p in report.pending]
    notes += [Annotation("notice", f"{f['rater']} revealed {f['pass']}/{f['round']} with --force in "
                         f"{f['commit'][:10]}", title="verify-seal: forced reveal")
              for f in report.forced_reveals]
    tail = f" ({', '.join(report.excluded)} excluded)" if report.excluded else ""
    return [*annotation_lines(notes), f"verify-seal: {report.status}{tail}"]


@click.command("verify-seal")
@study_options
@click.option("--rev", default="HEAD", show_default=True, help="Commit whose history is verified.")
@format_option("text", "json", "github")
def command(study: Study, rev: str, fmt: str) -> int:
    """Check the history of REV: every rater sealed before others' scores were readable, sealed
    files never changed, the locked plan never changed after the first seal, authors and signatures."""
    from aoven_git.sealing import verify

    if not study.in_git:
        raise CannotVerify(f"{study.root} is not a git repository: verify-seal reads commit history")
    report = verify(study.root, study.relpath(study.plan_file), rev)
    if fmt == "json":
        click.echo(json.dumps(report.as_dict(), indent=2))
    elif fmt == "github":
        click.echo("\n".join(render_github(report)))
    else:
        click.echo("\n".join(render_text(report)))
        if exit_code(report) == 3:
            click.echo("aoven-git: error: cannot verify: " + report.violations[0].message, err=True)
    return exit_code(report)
