"""Copies of sealed sheets kept outside the work tree, so a lost or edited sheet can still be
revealed (docs/sealing.md, "Lost or edited sheets").

A digest seal commits only the SHA-256 of the sheet: the plaintext lives in one untracked file on
the rater's machine until the reveal. An editor's "save", a `git clean -fdx` or a lost laptop
would otherwise leave a sealed sheet nobody can reveal. `seal` therefore keeps the exact sealed
bytes (as git stores them, so their SHA-256 *is* the seal's digest) under

    $AOVEN_GIT_HOME/sealed/<repository>/<rater>/<pass>_<round>[_<amendment>]/<sha256>.md

(`$AOVEN_GIT_HOME` defaults to `~/.aoven-git`), never in the repository: before the reveal the
scores are private. `<repository>` is the root commit, the same in every clone wherever it sits.
Folders are owner-only (0700), files owner-readable (0600).
"""

from __future__ import annotations

import difflib
import os
import stat
from pathlib import Path

from aoven_git import gitio
from aoven_git.model import SheetId
from aoven_git.seals import sha256
from aoven_git.studyfile import MAX_BYTES

HOME_ENV = "AOVEN_GIT_HOME"
#: At most this many lines of a difference are shown; the rest is counted.
DIFF_LINES = 24


def home() -> Path:
    """Where aoven-git keeps what must stay outside every repository (keys, sealed copies)."""
    env = os.environ.get(HOME_ENV)
    return Path(env).expanduser() if env else Path.home() / ".aoven-git"


def home_secret(name: str, *, create: bool) -> bytes | None:
    """A 32-byte secret of this user kept as `name` under `home()` (0600), made on first need when
    `create`: the key the local verification caches sign their entries with, so a planted or
    copied cache file is ignored (docs/sealing.md). None when there is none or it cannot be made."""
    path = home() / name
    try:
        data = path.read_bytes()
        if len(data) == 32:
            return data
    except OSError:
        pass
    if not create:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = os.urandom(32)
        tmp = path.with_name(f".{name}.{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
        return data
    except OSError:
        return None


def _sheet_folder(sheet: SheetId) -> str:
    return f"{sheet.pass_id}_{sheet.round_id}" + (f"_{sheet.amendment}" if sheet.amendment else "")


def copy_path(root: Path, sheet: SheetId, digest: str) -> Path:
    """Where the copy of `sheet` sealed with `digest` is kept for the repository at `root`."""
    repo = gitio.first_root_commit(root) or "no-commit"
    return home() / "sealed" / repo[:16] / sheet.rater / _sheet_folder(sheet) / f"{digest}.md"


def keep(root: Path, sheet: SheetId, digest: str, stored: bytes) -> tuple[Path, str | None]:
    """Write the sealed bytes to their copy path: (path, None), or (path, why not) when the copy
    could not be written; the seal itself stands either way."""
    path = copy_path(root, sheet, digest)
    try:
        _write_private(path, stored)
    except OSError as exc:
        return path, exc.strerror or str(exc)
    return path, None


def keep_edited(copy: Path, edited: bytes) -> Path:
    """Before `reveal --restore` overwrites an edited sheet, keep the edited bytes beside the copy
    (owner-only, never in the repository): restoring must not destroy anyone's work."""
    path = copy.with_name(f"{copy.stem}.edited-{sha256(edited)[:12]}.md")
    _write_private(path, edited)
    return path


def _write_private(path: Path, data: bytes) -> None:
    """Write `data` readable by its owner only, from the first byte (no window under the umask)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def find(root: Path, sheet: SheetId, digest: str) -> tuple[Path, bytes] | None:
    """The kept copy of `sheet` whose bytes hash to `digest`: first under this repository's
    identity, then under any (a history rewritten at its root changes the identity, not the
    digest, which is unguessable). A copy whose bytes do not match the digest is never returned."""
    first = copy_path(root, sheet, digest)
    base = home() / "sealed"
    others = sorted(base.glob(f"*/{sheet.rater}/{_sheet_folder(sheet)}/{digest}.md")) if base.is_dir() else []
    for path in [first, *others]:
        data = _read_copy(path)
        if data is not None and sha256(data) == digest:
            return path, data
    return None


def _read_copy(path: Path) -> bytes | None:
    """The bytes of a kept copy, or None for anything that cannot be one: a FIFO or a device (a
    link to `/dev/zero`, planted where a copy would be, would otherwise hang or exhaust memory
    before the digest could reject it) or a file larger than any study file may be."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        return path.read_bytes()
    except OSError:
        return None


def difference(sealed: bytes, current: bytes, name: str) -> str:
    """A short unified diff of the sealed sheet against the file now in the work tree."""
    old = sealed.decode("utf-8", "replace").splitlines(keepends=True)
    new = current.decode("utf-8", "replace").splitlines(keepends=True)
    lines = [line.rstrip("\r\n") for line in difflib.unified_diff(
        old, new, f"{name} (sealed)", f"{name} (now)", n=1)]
    if not lines:  # same text, different bytes (line endings, encoding)
        return "    (the text is the same; the bytes differ: line endings or encoding)"
    shown = [f"    {line}" for line in lines[:DIFF_LINES]]
    if len(lines) > DIFF_LINES:
        shown.append(f"    … {len(lines) - DIFF_LINES} more line(s) of difference")
    return "\n".join(shown)


def unrevealable(score: str, sheet: SheetId, current: bytes | None, copy: tuple[Path, bytes] | None,
                 reveal_args: str) -> str:
    """Why a sealed sheet cannot be revealed as it stands (lost, or edited since the seal), with
    the way out: `--restore` from the kept copy, or without one, a withdrawal."""
    what = (f"{score} is missing (lost or moved?)" if current is None
            else f"{score} changed since it was sealed")
    if copy is not None:
        shown = "" if current is None else ":\n" + difference(copy[1], current, score)
        return (f"{what}{shown}\nA copy of the sealed bytes was kept at {copy[0]} when it was sealed: "
                f"`aoven-git reveal {reveal_args} --restore` writes it back and reveals it "
                "(changes after a seal belong in an amendment). Nothing was changed.")
    return (f"{what}, and no copy of the sealed bytes was kept on this machine (under "
            f"{home() / 'sealed'}). Put the exact sealed file back (another machine, a backup) and "
            f"reveal again; otherwise the sealed sheet of {sheet} cannot be revealed and can only be "
            "withdrawn: the lead declares it under `withdrawals:` in the plan (docs/sealing.md, "
            "\"Lost or edited sheets\"). Changes after a seal belong in an amendment. Nothing was changed.")
