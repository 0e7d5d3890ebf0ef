"""Every call into git lives here (docs/design.md, "Plain git for history").

Two tools, each where it serves:

* plain ``git`` subprocesses for everything verify-seal and the hook read from history (one
  path-limited ``git log`` and one ``cat-file --batch``, whatever the history length: measured in
  ``bench/bench_verify.py``), and for the seal and reveal commits (``git commit --only`` runs the
  repository's hooks and signs when ``commit.gpgsign`` is set, which GitPython's index commit
  cannot do);
* GitPython for the persistent object reader the report uses to read a revision's study files,
  configuration reads outside the hook, and the demo's scripted commits (authors and committers
  set per commit instead of through the environment). The pre-commit hook never imports it: it
  runs on every commit and a subprocess is cheaper than the import (bench/bench_hook.py).

Git is always run with replacement objects and grafts switched off and with the user's display
settings neutralised (``log.showSignature``, colours, relative diffs, ``log.follow``, quoting, …):
what verify-seal reads must be the repository's real history, and a user's ``~/.gitconfig`` must
neither break the parsing nor change the answer (docs/sealing.md, "Git itself").
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aoven_git.errors import CannotVerify, FindingsError

NULL_SHA = "0" * 40

#: Configuration every git call runs with: display settings that would change what we parse.
READ_CONFIG: tuple[tuple[str, str], ...] = (
    ("log.showSignature", "false"),
    ("color.ui", "never"),
    ("diff.relative", "false"),
    ("log.follow", "false"),
    ("log.mailmap", "false"),
    ("core.quotePath", "true"),
    ("diff.noprefix", "false"),
    ("diff.external", ""),
    ("i18n.logOutputEncoding", "UTF-8"),
    ("blame.ignoreRevsFile", ""),
    ("blame.markIgnoredLines", "false"),
    ("blame.markUnblamableLines", "false"),
)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        # Messages we parse must not be translated; pagers and prompts must never start.
        "LC_ALL": "C", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0",
        # `git replace` objects and grafts rewrite what ancestry looks like: never honour them.
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_GRAFT_FILE": os.devnull + "/aoven-git-no-grafts",
        "GIT_OPTIONAL_LOCKS": "0",
    })
    return env


def _config_args() -> list[str]:
    out: list[str] = []
    for key, value in READ_CONFIG:
        out += ["-c", f"{key}={value}"]
    return out


def run_git(args: list[str], cwd: str | Path, *, input: bytes | None = None,
            check: bool = True, config: Iterable[tuple[str, str]] = ()) -> subprocess.CompletedProcess[bytes]:
    """Run `git args` in `cwd`; raise CannotVerify with git's own message when it fails."""
    extra = [a for key, value in config for a in ("-c", f"{key}={value}")]
    try:
        proc = subprocess.run(
            ["git", *_config_args(), *extra, *args], cwd=str(cwd), input=input, capture_output=True,
            env=_env(), check=False,
        )
    except FileNotFoundError:
        raise CannotVerify("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CannotVerify(f"git {args[0]} failed: {msg[-1] if msg else 'exit ' + str(proc.returncode)}")
    return proc


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------- discovery (GitPython)


def open_repo(start: str | Path) -> Any | None:
    """The GitPython repository containing `start` (searching upwards), or None outside git or in
    a bare repository. Its persistent git processes run with the same safe environment."""
    import git

    path = Path(start)
    if not path.exists():
        return None
    try:
        repo = git.Repo(path if path.is_dir() else path.parent, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    if repo.bare or repo.working_tree_dir is None:
        return None
    repo.git.update_environment(**{k: v for k, v in _env().items() if k.startswith(("GIT_", "LC_"))})
    return repo


def find_root(start: str | Path) -> Path | None:
    """The work-tree root of the repository containing `start`, or None outside git (or in a bare
    repository). One `rev-parse`: every command, the pre-commit hook included, starts here, and
    importing GitPython just for this would cost the hook more than the call itself."""
    path = Path(start)
    if not path.exists():
        return None
    proc = run_git(["rev-parse", "--show-toplevel"], path if path.is_dir() else path.parent, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        return None
    return Path(_decode(proc.stdout).strip())


def hooks_dir(root: str | Path) -> Path:
    """The directory git runs hooks from, as git itself resolves it: core.hooksPath when set
    (relative to the work tree), else the hooks of the *common* git dir, which a linked work tree
    (`git worktree add`) shares with the main one; its own `.git/worktrees/<name>/hooks` is never run."""
    proc = run_git(["rev-parse", "--git-path", "hooks"], root)
    path = Path(_decode(proc.stdout).strip())
    return path if path.is_absolute() else Path(root) / path


def config_get(root: str | Path, key: str, *, local: bool = False) -> str | None:
    """A configuration value as the repository sees it, or only its own `.git/config` with
    `local` (GitPython's reader; never used by the hook, which must stay light)."""
    repo = open_repo(root)
    if repo is None:
        return None
    import configparser

    section, _, option = key.rpartition(".")
    try:
        with repo.config_reader("repository" if local else None) as reader:
            return str(reader.get_value(section, option))
    except (configparser.NoSectionError, configparser.NoOptionError):
        return None
    finally:
        repo.close()


def config_set(root: str | Path, key: str, value: str) -> None:
    """Write `key = value` to the repository's own `.git/config` (GitPython's writer)."""
    repo = open_repo(root)
    if repo is None:
        raise CannotVerify(f"{root} is not a git repository")
    section, _, option = key.rpartition(".")
    try:
        with repo.config_writer("repository") as writer:
            writer.set_value(section, option, value)
    finally:
        repo.close()


def config_values(root: str | Path, key: str) -> list[str]:
    """Every value of a multi-valued key, as the repository sees it (plain git: the hook reads
    this, and must not import GitPython)."""
    proc = run_git(["config", "--get-all", key], root, check=False)
    return [v for v in _decode(proc.stdout).splitlines() if v] if proc.returncode == 0 else []


def config_add(root: str | Path, key: str, value: str) -> None:
    """Add one more value of `key` to the repository's own `.git/config`."""
    run_git(["config", "--local", "--add", key, value], root)


def user_email(root: str | Path) -> str | None:
    """The author e-mail the next commit will carry (environment first, then configuration),
    exactly as `git commit` resolves it."""
    proc = run_git(["var", "GIT_AUTHOR_IDENT"], root, check=False)
    if proc.returncode != 0:
        return None
    ident = proc.stdout.decode("utf-8", "replace")
    return ident[ident.find("<") + 1 : ident.find(">")] if "<" in ident else None


# --------------------------------------------------------------------------- revisions


def is_shallow(root: str | Path) -> bool:
    """A shallow clone hides the ancestry the seal rules depend on (exit 3)."""
    proc = run_git(["rev-parse", "--is-shallow-repository"], root)
    return proc.stdout.strip() == b"true"


def resolve_commit(root: str | Path, rev: str) -> str | None:
    """The commit id `rev` names, or None when it names no commit (unknown rev, empty repo)."""
    if rev.startswith("-") or has_control_chars(rev):
        return None
    args = ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"]
    proc = run_git(args, root, check=False)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip()


def head_commit(root: str | Path) -> str | None:
    return resolve_commit(root, "HEAD")


def describe_non_commit(root: str | Path, rev: str) -> str | None:
    """What `rev` names when it names no commit (a tree, a blob), or None when it names nothing
    at all. Only called after resolution failed, so the usual path stays at a constant git count."""
    if not rev or rev.startswith("-") or has_control_chars(rev):
        return None
    proc = run_git(["rev-parse", "--verify", "--quiet", "--end-of-options", rev], root, check=False)
    if proc.returncode != 0:
        return None
    kind = run_git(["cat-file", "-t", proc.stdout.decode().strip()], root, check=False)
    return kind.stdout.decode().strip() or None


def has_control_chars(text: str) -> bool:
    return any(ord(c) < 32 or ord(c) == 127 for c in text)


# --------------------------------------------------------------------------- history (verify-seal)


def log_raw(root: str | Path, commit: str, pathspecs: list[str], exclude: Iterable[str] = ()) -> bytes:
    """ONE path-limited `git log`: every commit that touches the pathspecs, with its (rewritten)
    parents, author e-mail (`%ae`: never the mailmap's) and its raw diff (against the first
    parent for merges). Pathspecs carry their own magic (`:(literal)…`, `:(glob,icase)…`).

    `--full-history --simplify-merges` keeps every side branch that touched the paths (a branch
    that added a file and deleted it again is still listed) and drops only merges that bring
    nothing; ancestry among the listed commits is preserved by parent rewriting. Dates play no
    part: the caller orders commits by parents alone. `exclude`: commits whose history is left
    out (`^C`: the walk of what a cached walk of C does not hold, docs/sealing.md).
    """
    args = [
        "log", "-z", "--raw", "--no-abbrev", "--no-renames", "--no-ext-diff", "--no-textconv",
        "--no-color", "--no-show-signature", "--no-notes", "--no-relative",
        "--full-history", "--simplify-merges", "--parents", "--root", "--diff-merges=first-parent",
        "--format=format:%H %P%n%ae", commit, *(f"^{c}" for c in exclude), "--", *pathspecs,
    ]
    return run_git(args, root).stdout


def is_ancestor(root: str | Path, ancestor: str, commit: str) -> bool:
    """Whether `ancestor` is `commit` or one of its ancestors (by parent pointers)."""
    proc = run_git(["merge-base", "--is-ancestor", ancestor, commit], root, check=False)
    if proc.returncode not in (0, 1):
        raise CannotVerify(f"git merge-base failed: {_last_line(proc)}")
    return proc.returncode == 0


def new_commits(root: str | Path, commit: str, base: str) -> list[tuple[str, tuple[str, ...]]]:
    """(commit, real parents) of every commit in the history of `commit` but not of `base`,
    children before parents: a walk of those commits only, no tree read."""
    out = run_git(["rev-list", "--topo-order", "--parents", commit, f"^{base}"], root).stdout
    return [(ids[0], tuple(ids[1:])) for line in _decode(out).splitlines() if (ids := line.split())]


def same_paths(root: str | Path, a: str, b: str, pathspecs: list[str]) -> bool:
    """Whether commits `a` and `b` hold the same entries for every path the pathspecs select."""
    proc = run_git(["diff-tree", "--quiet", "-r", "--no-renames", "--no-ext-diff", "--no-textconv",
                    a, b, "--", *pathspecs], root, check=False)
    if proc.returncode not in (0, 1):
        raise CannotVerify(f"git diff-tree failed: {_last_line(proc)}")
    return proc.returncode == 0


def first_adding_commit(root: str | Path, commit: str, paths: list[str]) -> str | None:
    """The oldest commit in the history of `commit` that adds one of `paths` (parents before
    children: `--topo-order --reverse`, never dates), or None: ONE `git log`. The hook names the
    commit of the first seal with it when it refuses (its own history is HEAD's tree alone)."""
    if not paths:
        return None
    args = ["log", "--format=%H", "--no-renames", "--diff-filter=A", "--full-history", "--topo-order",
            "--reverse", "--no-show-signature", "--no-notes", commit, "--",
            *[f":(literal){p}" for p in paths]]
    found = run_git(args, root, check=False)
    first = found.stdout.decode("ascii", "replace").split("\n", 1)[0].strip() if found.returncode == 0 else ""
    return first or None


def pickaxe_writes(root: str | Path, commit: str, needle: str) -> list[tuple[str, str, str]]:
    """(commit, path, blob) for every file written in the history of `commit` whose number of
    occurrences of the fixed string `needle` changed, anywhere in the tree: ONE `git log -S`
    (merges diffed against their first parent, so a file a merge itself introduces is seen too;
    a fixed string, as git searches it faster than a regular expression). Newest first;
    deletions are left out."""
    args = ["log", "-z", "--raw", "--no-abbrev", "--no-renames", "--no-ext-diff", "--no-textconv",
            "--no-color", "--no-show-signature", "--no-notes", "--no-relative", "--full-history",
            "--diff-merges=first-parent", f"-S{needle}", "--format=format:%x01%H", commit]
    out: list[tuple[str, str, str]] = []
    for chunk in _decode(run_git(args, root).stdout).split("\x01")[1:]:
        sha, _, raw = chunk.partition("\n")
        fields = raw.strip("\0\n").split("\0")
        for meta, path in zip(fields[::2], fields[1::2], strict=False):
            parts = meta.split()  # `:old-mode new-mode old-sha new-sha status`
            if len(parts) == 5 and parts[4] != "D" and parts[1] != "160000":
                out.append((sha, path, parts[3]))
    return out


def grep_messages(root: str | Path, commit: str, needles: list[str]) -> list[tuple[str, bytes]]:
    """(commit, message) of every commit in the history of `commit` whose message holds one of
    the fixed strings `needles`: ONE `git log -F --grep` (git filters, so an honest history prints
    nothing). Notes are not read here (`notes_entries`)."""
    if not needles:
        return []
    args = ["log", "--no-color", "--no-show-signature", "--no-notes", "--full-history", "-F",
            *(f"--grep={n}" for n in needles), "--format=format:%x00%x01%H%x00%B", commit]
    out = []
    for chunk in run_git(args, root).stdout.split(b"\0\x01")[1:]:
        sha, _, message = chunk.partition(b"\0")
        out.append((_decode(sha).strip(), message))
    return out


def refs_and_targets(root: str | Path) -> list[tuple[str, str, str, str, str, bytes]]:
    """Every ref with what it points at: (name, object type, object, peeled type, peeled object,
    tag message), ONE `git for-each-ref`; the peeled fields are empty unless the ref is an
    annotated tag, and so is the message."""
    fmt = ("%(refname)%00%(objecttype)%00%(objectname)%00%(*objecttype)%00%(*objectname)%00"
           "%(if:equals=tag)%(objecttype)%(then)%(contents)%(end)%00%01%00")
    out = []
    for record in run_git(["for-each-ref", f"--format={fmt}"], root).stdout.split(b"\0\x01\0"):
        fields = record.lstrip(b"\n").split(b"\0", 5)
        if len(fields) == 6:
            name, kind, sha, peeled_kind, peeled = (_decode(f) for f in fields[:5])
            out.append((name, kind, sha, peeled_kind, peeled, fields[5]))
    return out


def notes_entries(root: str | Path, ref: str) -> list[tuple[str, str]]:
    """(annotated object, note blob) of every note under the notes ref `ref` as it stands: ONE
    `git ls-tree -r` (a notes tree may fan its names out as `ab/cdef…`)."""
    raw = run_git(["ls-tree", "-r", "-z", "--full-tree", ref, "--"], root, check=False).stdout
    out = []
    for meta, _, path in (e.partition("\t") for e in _decode(raw).split("\0") if e):
        parts = meta.split()
        target = path.replace("/", "")
        if len(parts) == 3 and parts[1] == "blob" and re.fullmatch(r"[0-9a-f]{40,64}", target):
            out.append((target, parts[2]))
    return out


def ancestors(root: str | Path, commit: str) -> set[str]:
    """Every commit reachable from `commit`, itself included (one `git rev-list`)."""
    return set(_decode(run_git(["rev-list", commit], root).stdout).split())


def commit_ancestors(root: str | Path, obj: str) -> set[str]:
    """Every commit reachable from `obj`, itself included, or the empty set when `obj` is no
    commit (a note on a blob, a tag of a tree): ONE `git rev-list`."""
    proc = run_git(["rev-list", f"{obj}^{{commit}}", "--"], root, check=False)
    return set(_decode(proc.stdout).split()) if proc.returncode == 0 else set()


def cat_file(root: str | Path, specs: list[str]) -> dict[str, tuple[str, bytes] | None]:
    """Read many objects (`<sha>` or `<rev>:<path>`) with ONE `git cat-file --batch`.

    Returns spec → (type, content), or None when the object does not exist (or the spec cannot be
    asked for: a name with a newline, which the batch protocol cannot carry).
    """
    unique = [s for s in dict.fromkeys(specs) if "\n" not in s and "\r" not in s]
    out: dict[str, tuple[str, bytes] | None] = {s: None for s in specs}
    if not unique:
        return out
    data = run_git(["cat-file", "--batch"], root, input="".join(f"{s}\n" for s in unique).encode(
        "utf-8", "surrogateescape")).stdout
    pos = 0
    for spec in unique:
        end = data.index(b"\n", pos)
        parts = data[pos:end].split(b" ")
        pos = end + 1
        if len(parts) == 3 and parts[2].isdigit():
            size = int(parts[2])
            out[spec] = (parts[1].decode(), data[pos : pos + size])
            pos += size + 1
    return out


def read_small(root: str | Path, blobs: Iterable[str], limit: int) -> dict[str, bytes]:
    """The content of each of `blobs` no larger than `limit` bytes: a size check, then one batch
    (two git calls at most), so a huge blob is never read. Larger or missing blobs are absent."""
    unique = list(dict.fromkeys(blobs))
    sizes = object_sizes(root, unique)
    small = [b for b in unique if sizes.get(b, limit + 1) <= limit]
    found = cat_file(root, small) if small else {}
    return {b: obj[1] for b in small if (obj := found.get(b)) is not None}


def object_sizes(root: str | Path, shas: list[str]) -> dict[str, int]:
    """Sizes of many objects with ONE `cat-file --batch-check`, so that huge blobs are never read."""
    unique = list(dict.fromkeys(shas))
    if not unique:
        return {}
    data = run_git(["cat-file", "--batch-check"], root, input="".join(f"{s}\n" for s in unique).encode())
    out: dict[str, int] = {}
    for line in data.stdout.decode().splitlines():
        parts = line.split(" ")
        if len(parts) == 3 and parts[2].isdigit():
            out[parts[0]] = int(parts[2])
    return out


def signatures(root: str | Path, shas: list[str], signers_file: str | Path) -> dict[str, tuple[str, str]]:
    """Signature status (`%G?`: G good, U good but unknown key, N none, B bad, …) and signer
    principal of many commits with ONE `git log --no-walk`, under the given allowed-signers file."""
    unique = list(dict.fromkeys(shas))
    if not unique:
        return {}
    proc = run_git(["log", "--no-walk=unsorted", "-z", "--format=%H%x00%G?%x00%GS", *unique], root,
                   config=[("gpg.ssh.allowedSignersFile", str(signers_file))])
    fields = proc.stdout.decode("utf-8", "replace").split("\0")
    return {fields[i].strip(): (fields[i + 1], fields[i + 2]) for i in range(0, len(fields) - 2, 3)}


# ----------------------------------------------------------------- index, trees and commits


def _ls_entries(raw: bytes) -> list[tuple[str, str, str]]:
    """(path, mode, sha) of `ls-files --stage -z` / `ls-tree -r -z` output."""
    out = []
    for record in raw.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        fields = meta.decode().split(" ")
        sha = fields[2] if len(fields) > 2 and len(fields[1]) not in (40, 64) else fields[1]
        out.append((_decode(name), fields[0], sha))
    return out


def index_entries(root: str | Path) -> list[tuple[str, str, str]]:
    """(path, mode, blob) of every file staged in the index (one `ls-files --stage`); submodules
    (gitlinks) are left out, as `tree_entries` leaves them out of a commit."""
    return [(p, m, s) for p, m, s in _ls_entries(run_git(["ls-files", "--stage", "-z"], root).stdout)
            if m != "160000"]


def tree_entries(root: str | Path, commit: str) -> list[tuple[str, str, str]]:
    """(path, mode, blob) of every file of `commit`'s tree (one `ls-tree -r`)."""
    return [(p, m, s) for p, m, s in _ls_entries(run_git(["ls-tree", "-r", "-z", "--full-tree", commit],
                                                         root).stdout) if m != "160000"]


def folder_entries(root: str | Path, commit: str, directory: str) -> list[tuple[str, str, str]]:
    """(path, mode, blob) of every file under `directory` at `commit`, nothing read (one `ls-tree`)."""
    raw = run_git(["ls-tree", "-r", "-z", "--full-tree", commit, "--", f":(literal){directory}/"],
                  root).stdout
    return [(p, m, s) for p, m, s in _ls_entries(raw) if m != "160000"]


def flat_tree(directory: str, obj: tuple[str, bytes] | None,
              oid_bytes: int) -> list[tuple[str, str, str]] | None:
    """(path, mode, blob) of a tree object as `cat_file` returned it, when it holds only files
    (no sub-folder, no submodule): the listing of `folder_entries` without a git call of its own,
    for a folder read together with other objects. [] for no such folder; None when the object
    is something else (a file of that name, sub-folders): then ask `folder_entries`. `oid_bytes`
    is 20 (SHA-1) or 32 (SHA-256); a raw tree entry is `<mode> <name>\\0<oid bytes>`."""
    if obj is None:
        return []
    kind, raw = obj
    if kind != "tree":
        return None
    out, pos = [], 0
    while pos < len(raw):
        space, nul = raw.find(b" ", pos), raw.find(b"\0", pos)
        if space < 0 or nul < space or nul + 1 + oid_bytes > len(raw):
            return None
        mode = raw[pos:space].decode("ascii", "replace").rjust(6, "0")
        if mode not in ("100644", "100755", "120000"):
            return None
        out.append((f"{directory}/{_decode(raw[space + 1:nul])}", mode,
                    raw[nul + 1:nul + 1 + oid_bytes].hex()))
        pos = nul + 1 + oid_bytes
    return out


def git_dir(root: str | Path) -> Path:
    """The repository's own git directory (where git keeps what is not history, and aoven-git
    its time-stamp verification cache): `<root>/.git` when it is a folder and no `GIT_DIR` points
    elsewhere (no git call), else as `git rev-parse --absolute-git-dir` says (a linked work tree,
    a submodule, `GIT_DIR`)."""
    plain = Path(root) / ".git"
    if plain.is_dir() and not os.environ.get("GIT_DIR") and not os.environ.get("GIT_COMMON_DIR"):
        return plain
    return Path(_decode(run_git(["rev-parse", "--absolute-git-dir"], root).stdout).strip())


def staged_blobs(root: str | Path, paths: list[str] | None = None) -> dict[str, bytes]:
    """Contents of files as staged in the index, keyed by repository-relative path: two git
    calls whatever the number of files. Symlinks map to their target text."""
    listing = run_git(["ls-files", "--stage", "-z", "--", *[f":(literal){p}" for p in (paths or [])]],
                      root).stdout
    entries = _ls_entries(listing)
    found = cat_file(root, [sha for _, _, sha in entries])
    return {p: obj[1] for p, _, sha in entries if (obj := found.get(sha)) is not None}


def staged_symlinks(root: str | Path, paths: list[str] | None = None) -> set[str]:
    listing = run_git(["ls-files", "--stage", "-z", "--", *[f":(literal){p}" for p in (paths or [])]],
                      root).stdout
    return {p for p, mode, _ in _ls_entries(listing) if mode == "120000"}


def head_blobs(root: str | Path, paths: list[str], rev: str = "HEAD") -> dict[str, bytes]:
    """Contents of `paths` in HEAD (or `rev`; missing paths are left out), with one `cat-file --batch`."""
    if resolve_commit(root, rev) is None:
        return {}
    found = cat_file(root, [f"{rev}:{p}" for p in paths])
    return {p: obj[1] for p in paths if (obj := found.get(f"{rev}:{p}")) is not None and obj[0] == "blob"}


def tree_files(root: str | Path, commit: str, directory: str, *,
               limit: int) -> tuple[dict[str, bytes], set[str]]:
    """Every file under `directory` at `commit` (a symbolic link as its target text), and which
    are links, read through GitPython's persistent object reader (one `cat-file` process for all
    of them); at most `limit + 1` bytes of each, enough for a parser to say "too large" without
    holding a huge blob."""
    repo = open_repo(root)
    if repo is None:
        return {}, set()
    try:
        tree = repo.commit(commit).tree
        try:
            sub = tree / directory
        except KeyError:
            return {}, set()
        if sub.type != "tree":  # the study dir committed as a file or a link: no study files
            return {}, set()
        blobs = [item for item in sub.traverse() if item.type == "blob"]
        files = {item.path: item.data_stream.read(limit + 1) for item in blobs}
        return files, {item.path for item in blobs if item.mode == 0o120000}
    finally:
        repo.close()


def status_paths(root: str | Path, directory: str) -> list[tuple[str, str]]:
    """(status, path) of every uncommitted change under `directory` (staged, unstaged, untracked):
    what a report computed from the committed revision would silently leave out."""
    proc = run_git(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--",
                    f":(literal){directory}"], root)
    out = []
    for record in proc.stdout.split(b"\0"):
        if len(record) > 3:
            out.append((record[:2].decode().strip() or "?", _decode(record[3:])))
    return out


def staged_changes(root: str | Path) -> list[tuple[str, str]]:
    """(status letter, path) of every change the index holds against HEAD (no rename detection,
    so a rename is a delete plus an add)."""
    return [(status, path) for status, path, _ in staged_diff(root)]


def staged_diff(root: str | Path) -> list[tuple[str, str, str]]:
    """(status letter, path, new blob) of every change the index holds against HEAD (one
    `git diff --cached --raw`; the blob is all zeros for a deletion)."""
    base = ["diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev", "--no-relative"]
    if head_commit(root) is None:
        base.append(_empty_tree(root))
    data = run_git(base, root).stdout.split(b"\0")
    out: list[tuple[str, str, str]] = []
    i = 0
    while i + 1 < len(data):
        meta = data[i].decode()
        if not meta.startswith(":"):
            i += 1
            continue
        parts = meta.split(" ")
        out.append((parts[-1][0], _decode(data[i + 1]), parts[3] if len(parts) > 3 else ""))
        i += 2
    return out


def _empty_tree(root: str | Path) -> str:
    return run_git(["hash-object", "-t", "tree", "--stdin"], root, input=b"").stdout.decode().strip()


def stored_bytes(root: str | Path, path: str) -> bytes:
    """The bytes git will store for the work-tree file `path` (after end-of-line conversion and
    clean filters): digests are taken over these, so an editor saving CRLF under
    `core.autocrlf` does not break an honest reveal."""
    sha = run_git(["hash-object", "-w", "--", path], root).stdout.decode().strip()
    obj = cat_file(root, [sha]).get(sha)
    if obj is None:
        raise CannotVerify(f"git could not store {path}")
    return obj[1]


def add(root: str | Path, paths: list[str]) -> None:
    run_git(["add", "--", *[f":(literal){p}" for p in paths]], root)


def commit_only(root: str | Path, paths: list[str], message: str, *,
                env: dict[str, str] | None = None) -> str:
    """Commit exactly `paths` (whatever else is staged stays staged) and return the new commit.

    `git commit --only` runs the repository's hooks (an installed pre-commit hook checks the seal or
    reveal like any other commit) and signs when the user's configuration asks for it.
    """
    full_env = {**_env(), **(env or {})}
    proc = subprocess.run(
        ["git", *_config_args(), "commit", "-q", "--only", "-F", "-", "--",
         *[f":(literal){p}" for p in paths]],
        cwd=str(root), input=message.encode(), capture_output=True, env=full_env, check=False)
    if proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
        raise FindingsError(f"git commit failed:\n{msg}")
    return resolve_commit(root, "HEAD") or ""


def write_temp(data: bytes, prefix: str) -> Path:
    """A private temporary file (for an allowed-signers file read from history)."""
    fd, name = tempfile.mkstemp(prefix=prefix)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return Path(name)


# --------------------------------------------------------------------------- sharing (--push)
#
# `seal`, `reveal`, `unblind` and `disagreements --write` take `--push`
# (docs/workflow.md, "A team without GitHub"): fetch and rebase onto the upstream before
# committing, push after. Each helper
# returns git's own message on failure instead of raising, so the caller can say what happened,
# what was (not) committed and what to run.


def _last_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    lines = [x for x in (proc.stderr or proc.stdout).decode("utf-8", "replace").splitlines() if x.strip()]
    return lines[-1].strip() if lines else f"exit {proc.returncode}"


def upstream(root: str | Path) -> tuple[str, str, str] | None:
    """(remote, branch on the remote, local tracking ref) of the current branch, or None on a
    detached HEAD or a branch without an upstream (`git push -u` sets one)."""
    branch = run_git(["symbolic-ref", "-q", "HEAD"], root, check=False)
    if branch.returncode != 0:
        return None
    fmt = "--format=%(upstream:remotename)%00%(upstream:remoteref)%00%(upstream)"
    proc = run_git(["for-each-ref", fmt, _decode(branch.stdout).strip()], root, check=False)
    fields = _decode(proc.stdout).strip().split("\0")
    if proc.returncode != 0 or len(fields) != 3 or not all(fields):
        return None
    return fields[0], fields[1], fields[2]


def fetch(root: str | Path, remote: str) -> str | None:
    """`git fetch REMOTE` (only remote-tracking refs change); git's message when it fails."""
    proc = run_git(["fetch", "-q", "--", remote], root, check=False)
    return None if proc.returncode == 0 else _last_line(proc)


def rebase_onto(root: str | Path, ref: str) -> str | None:
    """Replay the branch's own commits onto `ref` (a fast-forward when there are none). On failure
    the rebase is aborted, so the branch and work tree are as before, and git's message returned."""
    proc = run_git(["rebase", "-q", "--no-autostash", ref], root, check=False)
    if proc.returncode == 0:
        return None
    run_git(["rebase", "--abort"], root, check=False)
    return _last_line(proc)


def push(root: str | Path, remote: str, branch: str) -> tuple[bool, str | None]:
    """Push HEAD to `branch` of `remote`: (rejected because the remote moved on, git's message or
    None when pushed)."""
    proc = run_git(["push", "-q", "--porcelain", "--", remote, f"HEAD:{branch}"], root, check=False)
    if proc.returncode == 0:
        return False, None
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    rejected = "[rejected]" in text or "non-fast-forward" in text or "fetch first" in text
    return rejected, _last_line(proc)


def tracked_changes(root: str | Path) -> list[str]:
    """Paths of tracked files with staged or unstaged changes against HEAD (untracked and ignored
    files left out): what a rebase would refuse to run over."""
    proc = run_git(["status", "--porcelain=v1", "-z", "--untracked-files=no", "--no-renames"], root)
    return [_decode(r[3:]) for r in proc.stdout.split(b"\0") if len(r) > 3]


def changed_against_head(root: str | Path, path: str, *, untracked: bool = False) -> bool:
    """Whether the tracked file `path` differs from HEAD in the index or the work tree (one
    `git status`); an untracked file counts only with `untracked`."""
    which = "all" if untracked else "no"
    args = ["status", "--porcelain=v1", "-z", f"--untracked-files={which}", "--", f":(literal){path}"]
    proc = run_git(args, root)
    return bool(proc.stdout.strip(b"\0"))


def merge_three(ours: bytes, base: bytes, theirs: bytes, *, union: bool = False) -> tuple[bytes, bool]:
    """A three-way merge of one file's contents (`git merge-file -p`): (merged bytes, clean).
    With `union`, conflicting hunks keep both sides' lines (ours first) instead of markers."""
    paths = [write_temp(data, "aoven-merge-") for data in (ours, base, theirs)]
    try:
        args = ["merge-file", "-p", "-q", *(["--union"] if union else []), *map(str, paths)]
        proc = run_git(args, paths[0].parent, check=False)
    finally:
        for p in paths:
            p.unlink(missing_ok=True)
    if proc.returncode < 0 or proc.returncode > 127:
        raise CannotVerify(f"git merge-file failed: {_last_line(proc)}")
    return proc.stdout, proc.returncode == 0


def checkout_head(root: str | Path, path: str) -> None:
    """Put `path` back as HEAD has it, in the index and the work tree."""
    run_git(["checkout", "-q", "HEAD", "--", f":(literal){path}"], root)


def unstage_new(root: str | Path, path: str) -> None:
    """Take a file HEAD does not have out of the index (the work-tree file is left alone)."""
    run_git(["rm", "-q", "--cached", "--ignore-unmatch", "--", f":(literal){path}"], root)


def first_root_commit(root: str | Path) -> str | None:
    """The root commit reached from HEAD along first parents: the same in every clone of a
    repository, whatever folder it sits in (the identity sealed-sheet copies are kept under)."""
    proc = run_git(["rev-list", "--max-parents=0", "--first-parent", "HEAD"], root, check=False)
    roots = _decode(proc.stdout).split()
    return roots[-1] if proc.returncode == 0 and roots else None
