"""`aoven-git reveal`: commit a digest-sealed score file once every required rater has sealed."""

from __future__ import annotations

import click

from aoven_git.commands._common import Study, study_options
from aoven_git.commands._push import push_option
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
@click.option("--restore", is_flag=True,
              help="Write a lost or edited sheet back from the copy `seal` kept, then reveal it.")
@push_option
@click.option("--timestamp", is_flag=True,
              help="Then commit RFC 3161 tokens over the new commit (`aoven-git timestamp`).")
@click.argument("file", required=False)
def command(study: Study, rater: str | None, pass_id: str | None, round_id: str | None,
            amendment: str | None, force: bool, restore: bool, push: bool, timestamp: bool,
            file: str | None) -> int:
    """Commit the plaintext score file after checking its digest against the committed seal."""
    from aoven_git.commands import _push
    from aoven_git.commands.seal import reveal_args
    from aoven_git.sealing import reveal, target

    if not study.in_git:
        raise CannotVerify(f"{study.root} is not a git repository: revealing needs commits")
    rel = study.relpath(file) if file else None
    tgt, up = _push.pulled(study, push, lambda: target(study.plan, rater, pass_id, round_id, rel, amendment))
    result = reveal(study.root, study.plan, tgt, force=force, restore=restore,
                    args=reveal_args(study, tgt.sheet))
    if result.restored_from is not None:
        click.echo(f"restored {tgt.score} from the copy kept at seal ({result.restored_from})")
    if result.edited_kept is not None:
        click.echo(f"the edited file it replaced is kept at {result.edited_kept}")
    click.echo(f"revealed {tgt.sheet}: {tgt.score} committed in {result.commit[:10]}")
    if result.forced:
        click.echo(f"warning: revealed before {', '.join(result.unsealed)} sealed (--force, recorded)",
                   err=True)
    if up is not None:
        click.echo(_push.push(study.root, up))
    if timestamp:
        from aoven_git import gitio
        from aoven_git.commands.timestamp import anchor_and_report

        anchor_and_report(study, gitio.head_commit(study.root) if up is not None else result.commit, up)
    return 0
