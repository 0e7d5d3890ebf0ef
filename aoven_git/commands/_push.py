"""`--push` for `seal`, `reveal`, `unblind` and `disagreements --write`: pull with rebase, commit,
push (docs/workflow.md, "A team without GitHub").

Pulling comes first because what these commands may do depends on what the others have pushed:
`reveal` and `unblind` wait for every required seal, `seal` refuses once another rater's scores are
readable. Nothing is half-done: when the pull cannot run (no upstream, the remote unreachable,
uncommitted changes, a conflict) the command refuses before committing anything. A push the remote
rejects because someone pushed in between is retried once, after pulling again; after that the
commit stays here, and the message says what happened and what to run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from aoven_git import gitio
from aoven_git.commands._common import Study
from aoven_git.errors import FindingsError, UsageError

F = TypeVar("F", bound=Callable[..., Any])
NOTHING = "Nothing was committed."


def push_option(func: F) -> F:
    return click.option(
        "--push", is_flag=True,
        help="Pull with rebase first, then commit and push (a rejected push is retried once).")(func)


@dataclass(frozen=True)
class Upstream:
    remote: str
    branch: str  # the branch on the remote (refs/heads/…)
    ref: str  # the local remote-tracking ref

    @property
    def name(self) -> str:
        """As people write it: origin/main."""
        return f"{self.remote}/{self.branch.removeprefix('refs/heads/')}"


@dataclass(frozen=True)
class Carried:
    """A file the command edits itself, whose uncommitted version is merged with the upstream's:
    `base` stands for HEAD's version when HEAD has none (the empty file the command would write);
    when a line merge conflicts, both sides' lines are kept only if `check` finds nothing wrong
    with the result (it returns why not)."""

    path: str
    base: bytes
    check: Callable[[bytes], str | None]


@dataclass(frozen=True)
class Held:
    """A file the command itself edits (a reconciliation file), carried across the rebase."""

    path: str
    ours: bytes
    merged: bytes


def pull(study: Study, carry: tuple[Carried, ...] = ()) -> Upstream:
    """Fetch the upstream and rebase the branch onto it, before anything is committed; `carry`
    are files the command edits itself, merged with what the others pushed. The plan is read
    again afterwards: the pull may have brought a newer one."""
    up = _pull(study.root, carry)
    study.__dict__.pop("plan", None)  # the cached_property, read again on next use
    return up


T = TypeVar("T")


def pulled(study: Study, push: bool, resolve: Callable[[], T]) -> tuple[T, Upstream | None]:
    """What `resolve` names (the sheet a command acts on), resolved before the pull, so that usage
    errors come before anything is fetched, and again after it, from the plan and history the
    pull brought; without `push`, resolved once and nothing pulled."""
    found = resolve()
    if not push:
        return found, None
    up = pull(study)
    return resolve(), up


def _pull(root: Path, carry: tuple[Carried, ...]) -> Upstream:
    found = gitio.upstream(root)
    if found is None:
        raise UsageError("--push: the current branch has no upstream to pull from and push to: set "
                         "one (`git push -u <remote> <branch>` or `git branch --set-upstream-to="
                         f"<remote>/<branch>`) or leave out --push. {NOTHING}")
    up = Upstream(*found)
    err = gitio.fetch(root, up.remote)
    if err:
        raise UsageError(f"--push: could not fetch from {up.remote}: {err}. {NOTHING}")
    dirty = sorted(set(gitio.tracked_changes(root)) - {c.path for c in carry})
    if dirty:
        raise FindingsError(f"--push: uncommitted changes to {', '.join(dirty[:5])} would stop the pull "
                            f"with rebase: commit or stash them first. {NOTHING}")
    held = [h for c in carry if (h := _hold(root, c, up)) is not None]
    err = gitio.rebase_onto(root, up.ref)
    for h in held:
        (root / h.path).write_bytes(h.ours if err else h.merged)
    if err:
        raise FindingsError(f"--push: pulling {up.name} with rebase failed ({err}): your "
                            f"unpushed commits conflict with it. {NOTHING} Run `git pull --rebase`, "
                            "resolve, then run the command again.")
    return up


def _hold(root: Path, carried: Carried, up: Upstream) -> Held | None:
    """Merge our uncommitted version of a carried file with the upstream's in memory (three-way)
    and set the file back to HEAD's for the rebase; a conflict refuses, changing nothing. None
    when there is nothing of ours to carry."""
    path = carried.path
    full = root / path
    if not full.is_file():
        return None
    ours = full.read_bytes()
    base = gitio.head_blobs(root, [path]).get(path)
    theirs = gitio.head_blobs(root, [path], rev=up.ref).get(path)
    if ours == base or (base is None and theirs is None):
        return None  # unchanged, or a new file the rebase does not touch
    merged = ours if theirs == base else _merge(carried, ours, base, theirs or b"", up)
    if base is None:  # a new file, perhaps `git add`ed: out of the index and the work tree
        gitio.unstage_new(root, path)
        full.unlink()
    else:
        gitio.checkout_head(root, path)
    return Held(path, ours, merged)


def _merge(carried: Carried, ours: bytes, base: bytes | None, theirs: bytes, up: Upstream) -> bytes:
    """A line merge; where both sides added lines at the same place, both sides' lines when the
    command's own check accepts the result."""
    merged, clean = gitio.merge_three(ours, carried.base if base is None else base, theirs)
    if clean:
        return merged
    merged, _ = gitio.merge_three(ours, carried.base if base is None else base, theirs, union=True)
    why = carried.check(merged)
    if why is None:
        return merged
    raise FindingsError(f"--push: {carried.path} was changed on {up.name} too, and the two "
                        f"cannot be merged ({why}). {NOTHING} Run `git stash && git pull --rebase && git "
                        "stash pop`, resolve the file, then run the command again.")


def push(root: Path, up: Upstream, recheck: Callable[[], str | None] | None = None) -> str:
    """Push HEAD to the upstream; when rejected because someone pushed first, pull with rebase
    once more (then `recheck` may still refuse: it returns why) and push again. Returns what to
    tell the user; raises, with the commit kept here, when it could not push."""
    rejected, err = gitio.push(root, up.remote, up.branch)
    if err is None:
        return f"pushed {_head(root)} to {up.name}"
    kept = f"Your commit {_head(root)} is here, not pushed"
    if not rejected:
        raise FindingsError(f"--push: the push to {up.remote} failed: {err}. {kept}: run `git push` "
                            "once the remote can be reached.")
    err = gitio.fetch(root, up.remote) or gitio.rebase_onto(root, up.ref)
    if err:
        raise FindingsError(f"--push: someone pushed to {up.name} first, and pulling it "
                            f"with rebase failed ({err}). {kept}: run `git pull --rebase`, resolve, then "
                            "`git push`.")
    problem = recheck() if recheck else None
    if problem:
        raise FindingsError(f"--push: someone pushed to {up.name} first; after pulling it, "
                            f"{problem}. {kept}.")
    rejected, err = gitio.push(root, up.remote, up.branch)
    if err is not None:
        raise FindingsError(f"--push: the push to {up.name} was refused again ({err}). "
                            f"{kept}, on top of theirs: run `git pull --rebase && git push`.")
    return (f"pushed {_head(root)} to {up.name} (someone had pushed first: pulled with "
            "rebase and pushed again)")


def _head(root: Path) -> str:
    return (gitio.head_commit(root) or "")[:10]
