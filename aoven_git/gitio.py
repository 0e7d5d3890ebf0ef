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


def run_git(args: list[str], cwd: str | Path, *, input: bytes | None = None,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
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
    request = b"".join(f"{sha}\n".encode() for _, _, sha in entries)
    batch = run_git(["cat-file", "--batch"], root, input=request).stdout
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


# --------------------------------------------------------------------------- history (verify-seal)

NULL_SHA = "0" * 40


def is_shallow(root: str | Path) -> bool:
    """A shallow clone hides the ancestry the seal rules depend on (SPEC §5.2, exit 3)."""
    proc = run_git(["rev-parse", "--is-shallow-repository"], root)
    return proc.stdout.strip() == b"true"


def resolve_commit(root: str | Path, rev: str) -> str | None:
    """The commit id `rev` names, or None when it names no commit (unknown rev, empty repo)."""
    if rev.startswith("-"):
        return None
    args = ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"]
    proc = run_git(args, root, check=False)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip()


def describe_non_commit(root: str | Path, rev: str) -> str | None:
    """What `rev` names when it names no commit (a tree, a blob), or None when it names nothing
    at all. Only called after resolution failed, so the usual path stays at a constant git count."""
    if not rev or rev.startswith("-"):
        return None
    proc = run_git(["rev-parse", "--verify", "--quiet", "--end-of-options", rev], root, check=False)
    if proc.returncode != 0:
        return None
    kind = run_git(["cat-file", "-t", proc.stdout.decode().strip()], root, check=False)
    return kind.stdout.decode().strip() or None


def log_raw(root: str | Path, commit: str, pathspecs: list[str]) -> bytes:
    """ONE path-limited `git log` over the study paths: every commit that touches them, with its
    (rewritten) parents, author email, and its raw diff (against the first parent for merges).

    `--full-history --simplify-merges` keeps every side branch that touched the paths (a branch
    that added a file and deleted it again is still listed) and drops only merges that bring
    nothing; ancestry among the listed commits is preserved by parent rewriting. Dates play no
    part: the caller orders commits by parents alone.
    """
    args = [
        "log", "-z", "--raw", "--no-abbrev", "--no-renames", "--no-ext-diff", "--no-textconv",
        "--full-history", "--simplify-merges", "--parents", "--root", "--diff-merges=first-parent",
        "--format=format:%H %P%n%ae", commit, "--", *[f":(literal){p}" for p in pathspecs],
    ]
    return run_git(args, root).stdout


def cat_file(root: str | Path, specs: list[str]) -> dict[str, tuple[str, bytes] | None]:
    """Read many objects (`<sha>` or `<rev>:<path>`) with ONE `git cat-file --batch`.

    Returns spec → (type, content), or None when the object does not exist.
    """
    unique = list(dict.fromkeys(specs))
    if not unique:
        return {}
    for spec in unique:
        if "\n" in spec:
            raise ValueError(f"object name with a newline: {spec!r}")
    data = run_git(["cat-file", "--batch"], root, input="".join(f"{s}\n" for s in unique).encode()).stdout
    out: dict[str, tuple[str, bytes] | None] = {}
    pos = 0
    for spec in unique:
        end = data.index(b"\n", pos)
        header = data[pos:end].decode("utf-8", "surrogateescape")
        pos = end + 1
        parts = header.split(" ")
        if len(parts) == 3 and parts[2].isdigit():
            size = int(parts[2])
            out[spec] = (parts[1], data[pos : pos + size])
            pos += size + 1
        else:  # "<spec> missing" / "<spec> ambiguous"
            out[spec] = None
    return out


def verify_commit(root: str | Path, commit: str, allowed_signers: str | Path | None) -> tuple[bool, str]:
    """`git verify-commit` of one commit (ssh or gpg). One call per commit: only used when the
    plan opts into `require_signed`, and only for seal and reveal commits."""
    args = []
    if allowed_signers is not None:
        args += ["-c", f"gpg.ssh.allowedSignersFile={allowed_signers}"]
    proc = run_git([*args, "verify-commit", "--raw", commit], root, check=False)
    text = (proc.stderr + proc.stdout).decode("utf-8", "replace").strip()
    return proc.returncode == 0, text


# ----------------------------------------------------------------- index and commits (seal, reveal, hook)


def head_commit(root: str | Path) -> str | None:
    return resolve_commit(root, "HEAD")


def head_blobs(root: str | Path, paths: list[str], rev: str = "HEAD") -> dict[str, bytes]:
    """Contents of `paths` in HEAD (or `rev`; missing paths are left out), with one `cat-file --batch`."""
    if resolve_commit(root, rev) is None:
        return {}
    found = cat_file(root, [f"{rev}:{p}" for p in paths])
    return {p: obj[1] for p in paths if (obj := found.get(f"{rev}:{p}")) is not None and obj[0] == "blob"}


def head_tree_paths(root: str | Path, directory: str) -> list[str]:
    """Every file under `directory` in HEAD (repository-relative), empty without commits."""
    if head_commit(root) is None:
        return []
    proc = run_git(["ls-tree", "-r", "-z", "--name-only", "HEAD", "--", f":(literal){directory}"], root)
    return [p.decode("utf-8", "surrogateescape") for p in proc.stdout.split(b"\0") if p]


def staged_changes(root: str | Path) -> list[tuple[str, str]]:
    """(status letter, path) of every change the index holds against HEAD (no rename detection,
    so a rename is a delete plus an add, as SPEC §5.2 counts it)."""
    base = ["diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev"]
    if head_commit(root) is None:
        base.append(_empty_tree(root))
    data = run_git(base, root).stdout.split(b"\0")
    out: list[tuple[str, str]] = []
    i = 0
    while i + 1 < len(data):
        meta = data[i].decode()
        if not meta.startswith(":"):
            i += 1
            continue
        out.append((meta.split(" ")[-1][0], data[i + 1].decode("utf-8", "surrogateescape")))
        i += 2
    return out


def _empty_tree(root: str | Path) -> str:
    return run_git(["hash-object", "-t", "tree", "--stdin"], root, input=b"").stdout.decode().strip()


def is_tracked_in_head(root: str | Path, path: str) -> bool:
    return bool(head_blobs(root, [path]))


def add(root: str | Path, paths: list[str]) -> None:
    run_git(["add", "--", *[f":(literal){p}" for p in paths]], root)


def commit_only(root: str | Path, paths: list[str], message: str) -> str:
    """Commit exactly `paths` (whatever else is staged stays staged) and return the new commit.

    `git commit --only` runs the repository's hooks, so an installed pre-commit hook checks the
    seal or reveal like any other commit.
    """
    proc = run_git(["commit", "-q", "--only", "-F", "-", "--", *[f":(literal){p}" for p in paths]],
                   root, input=message.encode(), check=False)
    if proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
        from aoven_git.errors import FindingsError

        raise FindingsError(f"git commit failed:\n{msg}")
    return resolve_commit(root, "HEAD") or ""


def hooks_dir(root: str | Path) -> Path:
    """The directory git runs hooks from, as git itself resolves it: core.hooksPath when set
    (relative to the work tree), else the hooks of the *common* git dir, which a linked work tree
    (`git worktree add`) shares with the main one; its own `.git/worktrees/<name>/hooks` is never run."""
    proc = run_git(["rev-parse", "--git-path", "hooks"], root)
    path = Path(proc.stdout.decode("utf-8", "surrogateescape").strip())
    return path if path.is_absolute() else Path(root) / path


def config_get(root: str | Path, key: str) -> str | None:
    proc = run_git(["config", "--get", key], root, check=False)
    return proc.stdout.decode("utf-8", "surrogateescape").strip() if proc.returncode == 0 else None


def user_email(root: str | Path) -> str | None:
    proc = run_git(["var", "GIT_AUTHOR_IDENT"], root, check=False)
    if proc.returncode != 0:
        return None
    ident = proc.stdout.decode("utf-8", "replace")
    return ident[ident.find("<") + 1 : ident.find(">")] if "<" in ident else None


def tree_files(root: str | Path, commit: str, directory: str) -> dict[str, bytes]:
    """Every file under `directory` at `commit`, by repository-relative path: one `ls-tree` and
    one `cat-file --batch`, whatever the number of files (report --rev)."""
    proc = run_git(["ls-tree", "-r", "-z", "--full-tree", commit, "--", f":(literal){directory}"], root)
    paths: list[str] = []
    for record in proc.stdout.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        if meta and meta.split(b" ")[1] == b"blob" and not meta.startswith(b"120000"):
            paths.append(name.decode("utf-8", "surrogateescape"))
    found = cat_file(root, [f"{commit}:{p}" for p in paths])
    return {p: obj[1] for p in paths if (obj := found.get(f"{commit}:{p}")) is not None and obj[0] == "blob"}
