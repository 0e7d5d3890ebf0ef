"""`aoven-git verify-seal [--rev REV]`: prove from commit history that every rater sealed blind.

Exit 0 verified (status `complete`, or `pending` while a required rater has not sealed yet),
1 violations, 2 plan or usage error (unknown revision), 3 cannot verify (not a git repository,
shallow clone).
"""

from __future__ import annotations

import json

import click

from aoven_git.commands._common import Study, format_option, study_options
from aoven_git.errors import CannotVerify
from aoven_git.seal_report import SealReport


def exit_code(report: SealReport) -> int:
    if any(v.code == "shallow-history" for v in report.violations):
        return 3
    return 1 if report.violations else 0


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
    for v in report.violations:
        where = f" in {v.commit[:10]}" if v.commit else ""
        who = f" [{v.rater}]" if v.rater else ""
        out.append(f"  error    {v.code}{who}{where}: {v.message}")
    if report.violations:
        out.append(f"{len(report.violations)} violation(s): the sealing promise does not hold")
    return out


def render_github(report: SealReport) -> list[str]:
    from aoven_git.render.github import Annotation, annotation_lines

    notes = [Annotation("error", f"{v.message}" + (f" (commit {v.commit[:10]})" if v.commit else ""),
                        file=v.path, title=f"verify-seal: {v.code}") for v in report.violations]
    notes += [Annotation("warning", f"{p.rater} has not sealed {p.pass_id}/{p.round_id} yet",
                         title="verify-seal: pending") for p in report.pending]
    notes += [Annotation("notice", f"{f['rater']} revealed {f['pass']}/{f['round']} with --force in "
                         f"{f['commit'][:10]}", title="verify-seal: forced reveal")
              for f in report.forced_reveals]
    return [*annotation_lines(notes), f"verify-seal: {report.status}"]


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
