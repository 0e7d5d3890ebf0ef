"""`aoven-git unblind --pass P --key FILE`: commit the key of a blind pass (docs/blinding.md).

The key reveals the condition of every item of P, so it is everyone's plaintext of P and of every
pass sharing a condition with it: it may be committed only once every required rater has sealed all
of those passes (in HEAD). It must also be the very key whose digest `blind` committed. Then it is
committed, byte for byte, as `<study_dir>/blind/P/key.json`.

Refusals change nothing: an unknown or non-blind pass, a key file that cannot be read or is not a
key of P (exit 2); no key digest committed, a key that does not match it, a key already committed,
or a required rater who has not sealed (exit 1).
"""

from __future__ import annotations

from pathlib import Path

import click

from aoven_git.commands._common import Study, study_options
from aoven_git.commands._push import push_option
from aoven_git.errors import CannotVerify, FindingsError, UsageError
from aoven_git.model import Pass, Plan, SheetId

UNBLIND_TRAILER = "Aoven-Unblind"


def read_key(path: Path, pass_id: str) -> bytes:
    """The key file's bytes, once they parse as the canonical key of the pass."""
    from aoven_git.blinding import KeyProblem, parse_key

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"--key {path}: no such file") from None
    except OSError as exc:
        raise UsageError(f"--key {path}: cannot read it: {exc.strerror or exc}") from None
    key = parse_key(data, pass_id=pass_id)
    if isinstance(key, KeyProblem):
        raise UsageError(f"{path}:{key.line}: not the key of pass {pass_id}: {key.message}")
    return data


def check_digest(plan: Plan, pass_id: str, data: bytes, head: dict[str, bytes]) -> None:
    """The key must be the one whose digest `blind` committed for this pass."""
    from aoven_git import naming
    from aoven_git.blinding import key_digest
    from aoven_git.seals import parse_key_seal

    seal_path = naming.blind_key_seal_path(plan, pass_id)
    sealed = head.get(seal_path)
    if sealed is None:
        raise FindingsError(f"{seal_path} is not committed: pass {pass_id} was not blinded with `aoven-git "
                            f"blind --pass {pass_id}`, so there is no digest to check the key against")
    parsed = parse_key_seal(sealed)
    if isinstance(parsed[0], int):
        raise FindingsError(f"{seal_path}:{parsed[0]}: corrupt key digest: {parsed[1]}")
    digest, sealed_pass = parsed
    if sealed_pass != pass_id:
        raise FindingsError(f"{seal_path} seals the key of pass {sealed_pass}, not {pass_id}")
    got = key_digest(data)
    if got != digest:
        raise FindingsError(f"the key's SHA-256 {got[:12]}… differs from the digest committed in {seal_path} "
                            f"({str(digest)[:12]}…): this is not the key `blind` wrote, or it was edited")


def unsealed(plan: Plan, pass_id: str, head_paths: set[str]) -> tuple[str, ...]:
    """Required raters without a seal, in HEAD, of every pass sharing a condition with the pass."""
    from aoven_git.sealing import missing_seals  # the rule `reveal` applies, for a sheet of nobody

    return missing_seals(plan, SheetId("", pass_id, plan.main_round.id), head_paths)


def _commit(study: Study, plan: Plan, p: Pass, data: bytes) -> tuple[str, str]:
    from aoven_git import gitio, naming

    rel = naming.blind_key_path(plan, p.id)
    target = study.root / rel
    if target.exists() and target.read_bytes() != data:
        raise FindingsError(f"{rel} exists in the work tree with other bytes: remove it first")
    existed = target.exists()
    target.write_bytes(data)
    try:
        gitio.add(study.root, [rel])
        message = f"Unblind pass {p.id}: commit its key\n\n{UNBLIND_TRAILER}: {p.id}\n"
        sha = gitio.commit_only(study.root, [rel], message)
    except BaseException:
        gitio.run_git(["reset", "-q", "--", rel], study.root, check=False)
        if not existed:
            target.unlink(missing_ok=True)
        raise
    return rel, sha


@click.command("unblind")
@study_options
@click.option("--pass", "pass_id", required=True, help="The blind pass whose key to commit.")
@click.option("--key", "key_file", required=True, type=click.Path(dir_okay=False),
              help="The key file `aoven-git blind` wrote.")
@push_option
@click.option("--timestamp", is_flag=True,
              help="Then commit RFC 3161 tokens over the new commit (`aoven-git timestamp`).")
def command(study: Study, pass_id: str, key_file: str, push: bool, timestamp: bool) -> int:
    """Commit the key of blind pass P as blind/P/key.json, once every required rater has sealed."""
    from aoven_git import gitio, naming
    from aoven_git.commands import _push
    from aoven_git.commands.blind import blind_pass

    if not study.in_git:
        raise CannotVerify(f"{study.root} is not a git repository: unblinding commits the key")
    plan = study.plan
    p = blind_pass(plan, pass_id)
    data = read_key(Path(key_file), p.id)
    up = None
    if push:  # after the usage checks: the others' seals are what unblinding waits for
        up = _push.pull(study)
        plan = study.plan
        p = blind_pass(plan, pass_id)
    head = gitio.head_commit(study.root)
    head_paths = {x for x, _, _ in gitio.tree_entries(study.root, head)} if head else set()
    key_path = naming.blind_key_path(plan, p.id)
    if key_path in head_paths:
        raise FindingsError(f"{key_path} is already committed: pass {p.id} is unblinded")
    check_digest(plan, p.id, data, gitio.head_blobs(study.root, [naming.blind_key_seal_path(plan, p.id)]))
    missing = unsealed(plan, p.id, head_paths)
    if missing:
        raise FindingsError(f"not every required rater has sealed the passes sharing a condition with {p.id} "
                            f"in HEAD (missing: {', '.join(missing)}): the key would show them the condition "
                            "of every item. Wait for their seals; nothing was written")
    try:
        rel, sha = _commit(study, plan, p, data)
    except OSError as exc:
        raise UsageError(f"cannot write {naming.blind_key_path(plan, p.id)}: {exc.strerror or exc}") from None
    click.echo(f"unblinded pass {p.id}: {rel} committed in {sha[:10]}; raters can now reveal their sheets")
    if up is not None:
        click.echo(_push.push(study.root, up))
    if timestamp:
        from aoven_git.commands.timestamp import anchor_and_report

        anchor_and_report(study, gitio.head_commit(study.root) if up is not None else sha, up)
    return 0
