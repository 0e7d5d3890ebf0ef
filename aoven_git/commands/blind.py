"""`aoven-git blind --pass P [--key-out PATH]`: blind a pass (study lead; docs/blinding.md).

Takes every (question, condition, replicate) of pass P in the verdict round from the committed
responses (every treatment from its stripped copy, the baseline as generated), normalises and scans them
(`blinding.build_corpus`), and, when nothing shows its condition, writes the corpus to
`<study_dir>/blind/P/<id>.md`, the key to a file that is never committed, and commits the corpus with
the key's digest only (`seals/blind_key_P.sha256`).

Refusals change nothing: an unknown or non-blind pass, a corpus or key digest that already exists,
or a key path that exists, or lies in the work tree without being git-ignored (exit 2); a source
response that is missing or has uncommitted changes, or a blinded text that still shows its
condition, every hit listed with file and line (exit 1).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from aoven_git.commands._common import Study, chosen_pass, study_options
from aoven_git.errors import CannotVerify, FindingsError, UsageError
from aoven_git.model import Pass, Plan

if TYPE_CHECKING:
    from aoven_git.blinding import Corpus, Item

BLIND_TRAILER = "Aoven-Blind"


def blind_pass(plan: Plan, pass_id: str) -> Pass:
    """The pass, which must be blind; a usage error otherwise."""
    p = chosen_pass(plan, pass_id)
    if not p.blind:
        blind = ", ".join(x.id for x in plan.passes if x.blind) or "none"
        raise UsageError(f"pass {pass_id} is not a blind pass (`blind: true` in the plan; blind passes: "
                         f"{blind})")
    return p


def _refuse_existing(study: Study, plan: Plan, p: Pass, head_paths: set[str]) -> None:
    from aoven_git import naming

    folder = naming.blind_dir(plan, p.id)
    seal = naming.blind_key_seal_path(plan, p.id)
    committed = sorted(x for x in head_paths if x.startswith(folder + "/") or x == seal)
    on_disk = (study.root / folder).exists() or (study.root / seal).exists()
    if committed or on_disk:
        where = ", ".join(committed[:3]) if committed else f"{folder}/ or {seal} in the work tree"
        raise UsageError(f"pass {p.id} is already blinded ({where}): a pass is blinded once; "
                         "the corpus and its key digest never change")


def _sources(study: Study, plan: Plan, p: Pass, head: str) -> list[Item]:
    """The pass's items from the committed sources; refuses missing or uncommitted ones."""
    from aoven_git import gitio
    from aoven_git.blind_corpus import items_of, read_at, source_refs

    refs = source_refs(plan, p.id)
    found = read_at(study.root, head)([r.path for r in refs])
    missing = [r for r in refs if r.path not in found]
    if missing:
        treatments = {c.id for c in plan.treatments}
        stripped = any(r.condition in treatments for r in missing)
        hint = " (run `aoven-git strip-markers` and commit the stripped copies)" if stripped else ""
        raise FindingsError(f"responses of pass {p.id} are not committed{hint}; nothing was written:\n  "
                            + "\n  ".join(r.path for r in missing))
    changed = {path for _, path in gitio.status_paths(study.root, plan.study_dir)}
    dirty = [r.path for r in refs if r.path in changed]
    if dirty:
        raise FindingsError("responses have uncommitted changes; commit them first (the corpus is built "
                            "from what is committed). Nothing was written:\n  " + "\n  ".join(dirty))
    return items_of(plan, refs, found)


def default_key_path(study: Study, pass_id: str) -> Path:
    """`$AOVEN_GIT_HOME/keys/<repository>-<pass>.json` (default `~/.aoven-git`): outside every work
    tree, in the one home aoven-git keeps outside repositories (beside the sealed copies)."""
    from aoven_git.sealed_copies import home

    return home() / "keys" / f"{study.root.name}-{pass_id}.json"


def check_key_path(study: Study, target: Path) -> None:
    """A key is never overwritten, and never written where git could pick it up: inside the work
    tree it must be git-ignored and neither tracked nor staged."""
    from aoven_git import gitio

    if target.exists() or target.is_symlink():
        raise UsageError(f"{target} exists: a key is never overwritten (choose another --key-out)")
    try:
        rel = (target.parent.resolve() / target.name).relative_to(study.root.resolve()).as_posix()
    except ValueError:
        return  # outside the work tree
    ignored = gitio.run_git(["check-ignore", "-q", "--no-index", "--", rel], study.root, check=False)
    tracked = gitio.run_git(["ls-files", "--error-unmatch", "--", f":(literal){rel}"], study.root,
                            check=False)
    if ignored.returncode != 0 or tracked.returncode == 0:
        raise UsageError(f"--key-out {rel} is inside the work tree but not git-ignored: anyone could commit "
                         "it. Add it to .gitignore, or keep the key outside the repository")


def _write(study: Study, plan: Plan, p: Pass, corpus: Corpus, key_out: Path) -> tuple[list[str], str]:
    """Write the key, the corpus and the key digest, and commit the last two; on any failure
    remove everything written and unstage it."""
    from aoven_git import gitio, naming
    from aoven_git.blinding import key_digest
    from aoven_git.seals import format_key_seal

    key_bytes = corpus.key.to_json()
    folder = naming.blind_dir(plan, p.id)
    paths = [f"{folder}/{name}" for name in corpus.files]
    seal = naming.blind_key_seal_path(plan, p.id)
    written: list[Path] = []
    try:
        key_out.parent.mkdir(parents=True, exist_ok=True)
        _write_private(key_out, key_bytes)
        written.append(key_out)
        for path, data in zip(paths, corpus.files.values(), strict=True):
            (study.root / path).parent.mkdir(parents=True, exist_ok=True)
            (study.root / path).write_bytes(data)
            written.append(study.root / path)
        (study.root / seal).parent.mkdir(parents=True, exist_ok=True)
        (study.root / seal).write_bytes(format_key_seal(key_digest(key_bytes), p.id))
        written.append(study.root / seal)
        gitio.add(study.root, [*paths, seal])
        message = (f"Blind pass {p.id}: {len(paths)} items; the key is sealed as its digest only\n\n"
                   f"{BLIND_TRAILER}: {p.id}\n")
        sha = gitio.commit_only(study.root, [*paths, seal], message)
    except BaseException:
        gitio.run_git(["reset", "-q", "--", *paths, seal], study.root, check=False)
        for f in written:
            f.unlink(missing_ok=True)
        _remove_empty(study.root / folder)
        raise
    return [*paths, seal], sha


def _write_private(path: Path, data: bytes) -> None:
    """Create the key file, readable by its owner only; never replace an existing one."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def _remove_empty(folder: Path) -> None:
    for d in (folder, folder.parent):
        try:
            d.rmdir()
        except OSError:
            return


@click.command("blind")
@study_options
@click.option("--pass", "pass_id", required=True, help="The blind pass to blind (`blind: true`).")
@click.option("--key-out", type=click.Path(dir_okay=False), default=None,
              help="Where to write the key (default: ~/.aoven-git/keys/<repository>-<pass>.json). "
                   "Outside the work tree, or git-ignored.")
def command(study: Study, pass_id: str, key_out: str | None) -> int:
    """Blind pass P: write its items under opaque ids, keep the key out of the repository and
    commit the corpus with the key's digest only."""
    from aoven_git import gitio
    from aoven_git.blinding import Corpus, build_corpus

    if not study.in_git:
        raise CannotVerify(f"{study.root} is not a git repository: blinding commits the corpus")
    plan = study.plan
    p = blind_pass(plan, pass_id)
    head = gitio.head_commit(study.root)
    if head is None:
        raise UsageError("the repository has no commit yet: commit the plan and the responses first")
    _refuse_existing(study, plan, p, {x for x, _, _ in gitio.tree_entries(study.root, head)})
    target = Path(key_out).expanduser() if key_out else default_key_path(study, p.id)
    target = target if target.is_absolute() else Path.cwd() / target
    check_key_path(study, target)
    built = build_corpus(_sources(study, plan, p, head), plan.markers, plan.leak_patterns, pass_id=p.id,
                         conditions=[c.id for c in plan.conditions])
    if not isinstance(built, Corpus):
        raise FindingsError(f"pass {p.id} cannot be blinded: {len(built)} blinded text(s) would still show "
                            "their condition (nothing was written):\n  " + "\n  ".join(map(str, built)))
    try:
        paths, sha = _write(study, plan, p, built, target)
    except OSError as exc:  # everything written was removed again
        raise UsageError(f"cannot write the key or the corpus ({exc.filename or target}): "
                         f"{exc.strerror or exc}; nothing was written") from None
    click.echo(f"blinded pass {p.id}: {len(paths) - 1} items committed in {sha[:10]} with the key's digest "
               f"({paths[-1]})")
    click.echo(f"key written to {target}. Keep it safe and private, byte for byte: it is the only record "
               f"of the mapping until `aoven-git unblind --pass {p.id} --key {target}`, once every "
               "required rater has sealed")
    return 0
