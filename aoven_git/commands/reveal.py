"""`aoven-git reveal`: commit a digest-sealed score file once every required rater has sealed."""

from __future__ import annotations

import click

from aoven_git.commands._common import Study, study_options
from aoven_git.errors import CannotVerify


@click.command("reveal")
@study_options
@click.option("--rater", default=None, help="Rater id (default: taken from FILE).")
@click.option("--pass", "pass_id", default=None, help="Pass id (default: the primary pass).")
@click.option("--round", "round_id", default=None, help="Round id (default: the first round).")
@click.option("--amendment", default=None,
              help="Reveal the re-scores of this amendment (amendments/<ID>/scores_…md).")
@click.option("--force", is_flag=True,
              help="Reveal although a required rater has not sealed; recorded in the commit and the report.")
@click.option("--timestamp", is_flag=True,
              help="Then commit RFC 3161 tokens over the new commit (`aoven-git timestamp`).")
@click.argument("file", required=False)
def command(study: Study, rater: str | None, pass_id: str | None, round_id: str | None,
            amendment: str | None, force: bool, timestamp: bool, file: str | None) -> int:
    """Commit the plaintext score file after checking its digest against the committed seal."""
    from aoven_git.sealing import reveal, target

    if not study.in_git:
        raise CannotVerify(f"{study.root} is not a git repository: revealing needs commits")
    tgt = target(study.plan, rater, pass_id, round_id, study.relpath(file) if file else None, amendment)
    result = reveal(study.root, study.plan, tgt, force=force)
    click.echo(f"revealed {tgt.sheet}: {tgt.score} committed in {result.commit[:10]}")
    if result.forced:
        click.echo(f"warning: revealed before {', '.join(result.unsealed)} sealed (--force, recorded)",
                   err=True)
    if timestamp:
        from aoven_git.commands.timestamp import anchor_and_report

        anchor_and_report(study, result.commit)
    return 0
