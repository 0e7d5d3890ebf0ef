"""`aoven-git seal`: digest-seal a rater's score file (docs/sealing.md, "Two ways to seal")."""

from __future__ import annotations

import click

from aoven_git.commands._common import Study, study_options
from aoven_git.commands._push import push_option
from aoven_git.errors import CannotVerify, FindingsError, UsageError
from aoven_git.model import SheetId


def reveal_args(study: Study, sheet: SheetId) -> str:
    plan = study.plan
    args = f"--rater {sheet.rater}"
    if sheet.amendment:
        args += f" --amendment {sheet.amendment}"
    if sheet.pass_id != plan.primary_pass.id:
        args += f" --pass {sheet.pass_id}"
    if sheet.round_id != plan.main_round.id:
        args += f" --round {sheet.round_id}"
    return args


def _refuse_after_key(study: Study, sheet: SheetId) -> None:
    """A committed key of a blind pass shows the condition of every item of that pass, so it is
    everyone's plaintext of every pass sharing a condition with it: a seal of such a pass now could
    only be a violation (docs/blinding.md, "What verify-seal proves")."""
    from aoven_git import gitio, naming
    from aoven_git.seal_rules import overlap

    plan = study.plan
    if sheet.amendment:
        return  # amendments come after the reveals, and are ordered among themselves
    keys = [naming.blind_key_path(plan, p.id) for p in plan.passes
            if p.blind and overlap(plan, p.id, sheet.pass_id)]
    committed = sorted(gitio.head_blobs(study.root, keys)) if keys else []
    if committed:
        raise FindingsError(f"the key of a blind pass is already committed ({', '.join(committed)}): it "
                            f"shows the condition of every item, so a seal of {sheet.pass_id} now could only "
                            "be a visible-at-seal violation. Nothing was changed.")


@click.command("seal")
@study_options
@click.option("--rater", default=None, help="Rater id (default: taken from FILE).")
@click.option("--pass", "pass_id", default=None, help="Pass id (default: the primary pass).")
@click.option("--round", "round_id", default=None, help="Round id (default: the first round).")
@click.option("--amendment", default=None,
              help="Seal the re-scores of this amendment (amendments/<ID>/scores_…md).")
@click.option("--no-commit", is_flag=True, help="Only stage the seal file; commit it yourself.")
@push_option
@click.option("--timestamp", is_flag=True,
              help="Then commit RFC 3161 tokens over the new commit (`aoven-git timestamp`).")
@click.argument("file", required=False)
def command(study: Study, rater: str | None, pass_id: str | None, round_id: str | None,
            amendment: str | None, no_commit: bool, push: bool, timestamp: bool, file: str | None) -> int:
    """Validate the score file, add a random nonce to its front matter and commit only
    seals/<stem>.sha256 (its SHA-256): nobody can read the scores, nobody can change them."""
    from aoven_git.commands import _push
    from aoven_git.sealing import refuse_uncommitted_plan, seal, target

    if not study.in_git:
        raise CannotVerify(f"{study.root} is not a git repository: sealing needs commits")
    if timestamp and no_commit:
        raise UsageError("--timestamp needs the seal commit: it cannot be combined with --no-commit")
    if push and no_commit:
        raise UsageError("--push commits and pushes the seal; --no-commit only stages it: choose one")
    plan_path = study.relpath(study.plan_file)
    if push:  # before the pull, which would otherwise refuse with a less precise message
        refuse_uncommitted_plan(study.root, plan_path)
    rel = study.relpath(file) if file else None
    tgt, up = _push.pulled(study, push, lambda: target(study.plan, rater, pass_id, round_id, rel, amendment))
    _refuse_after_key(study, tgt.sheet)
    result = seal(study.root, study.plan, tgt, commit=not no_commit, plan_path=plan_path)
    if result.commit:
        click.echo(f"sealed {tgt.sheet}: committed {tgt.seal} in {result.commit[:10]} "
                   f"(sha256 {result.digest}).")
    _keep_copy(study, tgt.sheet, result.digest, result.stored)
    if up is not None:
        click.echo(_push.push(study.root, up, lambda: _visible_now(study, tgt.sheet)))
    if result.commit:
        then = "once" if up else "push the seal, and once"
        click.echo(f"Keep {tgt.score} uncommitted and unchanged; {then} every rater has sealed every "
                   f"pass, run `aoven-git reveal {reveal_args(study, tgt.sheet)}`.")
    else:
        click.echo(f"sealed {tgt.sheet}: staged {tgt.seal} (sha256 {result.digest}), not committed; "
                   f"commit only that file: git commit -- {tgt.seal}")
    if result.unstaged:
        click.echo(f"note: {tgt.score} was staged (`git add`); it is unstaged again so that only the "
                   "seal is public and the file is revealed later with its nonce")
    if timestamp:
        from aoven_git import gitio
        from aoven_git.commands.timestamp import anchor_and_report

        anchor_and_report(study, gitio.head_commit(study.root) if up is not None else result.commit, up)
    return 0


def _keep_copy(study: Study, sheet: SheetId, digest: str, stored: bytes) -> None:
    """Keep the sealed bytes outside the work tree, so a lost or edited sheet can still be revealed
    (`reveal --restore`); the seal stands even when the copy cannot be written."""
    from aoven_git import sealed_copies

    path, problem = sealed_copies.keep(study.root, sheet, digest, stored)
    if problem:
        click.echo(f"warning: could not keep a copy of the sealed sheet at {path} ({problem}): keep the "
                   "file safe yourself; a lost or edited sheet could not be restored", err=True)
    else:
        click.echo(f"A copy of the sealed bytes is kept at {path} (outside the repository; "
                   "`aoven-git reveal --restore` writes it back if the file is lost or edited).")


def _visible_now(study: Study, sheet: SheetId) -> str | None:
    """After the seal was rebased onto what others pushed meanwhile: does its history now hold
    another rater's scores (the seal would be visible-at-seal)?"""
    from aoven_git.sealing import readable_before_seal

    seen = readable_before_seal(study.root, study.plan, study.relpath(study.plan_file), sheet)
    return (f"other raters' scores of an overlapping pass ({', '.join(seen[:3])}) are below your seal: "
            "pushed, it would be a visible-at-seal violation") if seen else None
