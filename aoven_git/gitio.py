"""Every call into git lives here (subprocess `git` for speed, GitPython where it is simpler).

Keeping git access in one module makes the number of git invocations per command visible and
testable (SPEC §5.2 asks for a constant number), and keeps the rest of the code free of git.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from aoven_git.errors import CannotVerify


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # Messages we parse must not be translated; pagers and prompts must never start.
    env.update({"LC_ALL": "C", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    return env


def run_git(args: list[str], cwd: str | Path, *, input: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run `git args` in `cwd`; raise CannotVerify with git's own message when it fails."""
    try:
        proc = subprocess.run(
            ["git", *args], cwd=str(cwd), input=input, capture_output=True, env=_env(), check=False
        )
    except FileNotFoundError:
        raise CannotVerify("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CannotVerify(f"git {args[0]} failed: {msg[-1] if msg else 'exit ' + str(proc.returncode)}")
    return proc


def find_root(start: str | Path) -> Path | None:
    """The work-tree root of the repository containing `start`, or None outside git."""
    path = Path(start)
    if not path.exists():
        return None
    proc = run_git(["rev-parse", "--show-toplevel"], path if path.is_dir() else path.parent, check=False)
    if proc.returncode != 0:
        return None
    return Path(proc.stdout.decode("utf-8", "surrogateescape").strip())


def staged_blobs(root: str | Path, paths: list[str] | None = None) -> dict[str, bytes]:
    """Contents of files as staged in the index (`git add`ed), keyed by repository-relative path.

    Two git calls whatever the number of files: `ls-files --stage` to list the blobs and one
    `cat-file --batch` to read them all. Symlinks (mode 120000) map to their target text and
    are reported by `staged_symlinks`.
    """
    listing = run_git(["ls-files", "--stage", "-z", "--", *(paths or [])], root).stdout
    entries: list[tuple[str, str, str]] = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, sha, _stage = meta.decode().split(" ")
        entries.append((name.decode("utf-8", "surrogateescape"), mode, sha))
    if not entries:
        return {}
    batch = run_git(["cat-file", "--batch"], root, input=b"".join(f"{sha}\n".encode() for _, _, sha in entries)).stdout
    out: dict[str, bytes] = {}
    pos = 0
    for name, _mode, _sha in entries:
        header_end = batch.index(b"\n", pos)
        size = int(batch[pos:header_end].split(b" ")[2])
        start = header_end + 1
        out[name] = batch[start : start + size]
        pos = start + size + 1
    return out


def staged_symlinks(root: str | Path, paths: list[str] | None = None) -> set[str]:
    listing = run_git(["ls-files", "--stage", "-z", "--", *(paths or [])], root).stdout
    links = set()
    for record in listing.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        if meta.startswith(b"120000 "):
            links.add(name.decode("utf-8", "surrogateescape"))
    return links
