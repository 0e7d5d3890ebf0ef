"""`aoven-git timestamp [REV]`: anchor a commit in time with RFC 3161 tokens (docs/sealing.md,
"Independent time anchors").

Every authority of `security.timestamps` is asked for a token over the commit id; every token is
checked against the authority's pinned certificate before anything is written, then all of them
are committed together as `timestamps/<commit>.tsr` (`<commit>.<n>.tsr` for the n-th authority).
An authority that cannot be reached, or a token that does not verify, leaves the repository as it
was. `seal`, `reveal` and `unblind --timestamp` call `anchor` right after their own commit.
"""

from __future__ import annotations

from pathlib import Path

import click

from aoven_git.commands._common import Study, study_options
from aoven_git.errors import CannotVerify, FindingsError, PlanError, UsageError
from aoven_git.model import Plan

TIMESTAMP_TRAILER = "Aoven-Timestamp"


def pinned_certificates(root: Path, plan: Plan, rev: str = "HEAD") -> list[tuple[str, list[object]]]:
    """(url, certificates) of every authority, the PEM files read as committed at `rev`."""
    from aoven_git import gitio
    from aoven_git.timestamps import load_certificates

    stamps = plan.security.timestamps
    if stamps is None or not stamps.authorities:
        raise PlanError("security.timestamps lists no authority: add one (url and certificate) to "
                        "the plan to time-stamp commits", path=plan.path)
    blobs = gitio.head_blobs(root, [a.certificate for a in stamps.authorities], rev)
    out = []
    for a in stamps.authorities:
        if a.certificate not in blobs:
            raise PlanError(f"security.timestamps: the certificate {a.certificate} of {a.url} is not "
                            f"committed at {rev}; commit it with the plan", path=plan.path)
        try:
            out.append((a.url, load_certificates(blobs[a.certificate])))
        except ValueError as exc:
            raise PlanError(f"{a.certificate} holds no PEM certificate ({exc})", path=plan.path) from None
    return out


def _tokens(root: Path, plan: Plan, commit: str, present: set[str]) -> dict[str, bytes]:
    """A checked token from every authority whose token for `commit` is not committed yet."""
    from aoven_git.timestamps import TimestampError, request_token, token_path, verify_token

    pinned = pinned_certificates(root, plan)
    out: dict[str, bytes] = {}
    for i, (url, certs) in enumerate(pinned):
        path = token_path(commit, i)
        if path in present:
            continue
        try:
            data = request_token(url, commit)
        except TimestampError as exc:
            raise CannotVerify(f"{exc}. Nothing was committed; run `aoven-git timestamp {commit[:12]}` "
                               "again once the authority answers") from None
        judged = verify_token(path, data, commit, [(url, certs)])
        if not judged.valid:
            raise FindingsError(f"the token from {url} does not verify against its pinned certificate "
                                f"({judged.error}). Nothing was committed.")
        out[path] = data
    return out


def anchor(root: Path, plan: Plan, commit: str) -> tuple[list[str], str | None]:
    """Ask every authority for a token over `commit` and commit the new ones in one commit; the
    token files written and the new commit (None when every token was already committed). On any
    failure the files are removed and the index restored: nothing is half-written."""
    from aoven_git import gitio

    paths = [p for p in gitio.head_blobs(root, _candidates(plan, commit))]
    tokens = _tokens(root, plan, commit, set(paths))
    if not tokens:
        return [], None
    written = list(tokens)
    try:
        for path, data in tokens.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
        gitio.add(root, written)
        message = f"Time-stamp {commit[:10]} (RFC 3161)\n\n{TIMESTAMP_TRAILER}: {commit}\n"
        sha = gitio.commit_only(root, written, message)
    except Exception:
        gitio.run_git(["reset", "-q", "--", *written], root, check=False)
        for path in written:
            (root / path).unlink(missing_ok=True)
        raise
    return written, sha


def _candidates(plan: Plan, commit: str) -> list[str]:
    from aoven_git.timestamps import token_path

    stamps = plan.security.timestamps
    return [token_path(commit, i) for i in range(len(stamps.authorities) if stamps else 0)]


def anchor_and_report(study: Study, commit: str | None, up: object | None = None) -> None:
    """`--timestamp` of seal, reveal and unblind: anchor the commit just made and say so. With
    `--push` (`up`), the commit is anchored as pushed (a rebase changes commit ids) and the token
    commit is pushed after it."""
    if not commit:
        raise UsageError("--timestamp needs a commit: it cannot be combined with --no-commit")
    written, sha = anchor(study.root, study.plan, commit)
    if sha:
        click.echo(f"time-stamped {commit[:10]}: {', '.join(written)} committed in {sha[:10]}.")
        if up is not None:
            from aoven_git.commands import _push

            click.echo(_push.push(study.root, up))  # type: ignore[arg-type]


@click.command("timestamp")
@study_options
@click.argument("rev", default="HEAD")
def command(study: Study, rev: str) -> int:
    """Ask each authority of security.timestamps for an RFC 3161 token over REV's commit id
    (default HEAD) and commit the tokens as timestamps/<commit>.tsr."""
    from aoven_git import gitio

    if not study.in_git:
        raise CannotVerify(f"{study.root} is not a git repository: time-stamps anchor commits")
    commit = gitio.resolve_commit(study.root, rev)
    if commit is None:
        raise UsageError(f"unknown revision {rev!r} (no such commit, branch or tag)")
    written, sha = anchor(study.root, study.plan, commit)
    if sha is None:
        click.echo(f"{commit[:10]} is already time-stamped by every authority; nothing to do.")
    else:
        click.echo(f"time-stamped {commit[:10]}: {', '.join(written)} committed in {sha[:10]}.")
    return 0
