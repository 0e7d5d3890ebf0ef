"""The history model the sealing rules work on: the commits that touch the study, their ancestry,
and the state of every tracked path at each of them (docs/sealing.md, "How history is read").

`read_history` builds it from a constant number of git calls whatever the length of history: one
path-limited `git log` (commits, rewritten parents, author, raw diffs), one `cat-file --batch-check`
(sizes, so a huge blob is never read) and one `cat-file --batch` (commit messages and the blobs the
rules read). Commit dates are never read: order comes from parent pointers alone, so a forged date
changes nothing.

`staged_history` builds the same model for the pre-commit hook: two nodes, HEAD's tree and the
staged index on top of it, so the hook checks a commit with the very rules verify-seal applies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from aoven_git import gitio
from aoven_git.errors import CannotVerify

if TYPE_CHECKING:
    from aoven_git.verify_cache import Walk

#: the hook's prospective commit has no id yet
STAGED = gitio.NULL_SHA


@dataclass(frozen=True)
class Entry:
    """A file as stored at one commit: git mode and blob id."""

    mode: str
    blob: str

    @property
    def symlink(self) -> bool:
        return self.mode == "120000"


@dataclass
class Node:
    """One commit of the path-limited history. `parents` are indices of earlier nodes (the
    nearest ancestors that also touch the study); `state` maps each tracked path to its entry."""

    index: int
    sha: str
    parents: tuple[int, ...]
    email: str
    state: dict[str, Entry] = field(default_factory=dict)
    message: str = ""

    @property
    def short(self) -> str:
        return "(staged)" if self.sha == STAGED else self.sha[:10]


@dataclass
class History:
    commit: str
    nodes: list[Node]
    anc: list[int]  # anc[i]: bitmask of the nodes that are ancestors of node i, itself included
    blobs: dict[str, bytes]
    git_calls: int = 0
    #: in a staged history, HEAD's (and MERGE_HEAD's) tree stands for all of its history: given a
    #: node's commit and paths, the oldest commit there that added one of them (a git call, made only
    #: when a refusal names such a commit); None for a history read commit by commit
    origin: Callable[[str, list[str]], str | None] | None = None

    def is_ancestor(self, a: int, b: int) -> bool:
        """True when node a is node b or one of its ancestors."""
        return bool(self.anc[b] >> a & 1)

    def first_added(self, index: int, paths: list[str]) -> str:
        """The short id of the commit that first added one of `paths` at or before node `index`:
        the node itself when history was read commit by commit, or the commit found in the history
        a staged history's base node stands for (the node's own id when none is found)."""
        node = self.nodes[index]
        if self.origin is None or node.sha == STAGED or not paths:
            return node.short
        found = self.origin(node.sha, paths)
        return found[:10] if found else node.short

    def trailers(self, index: int, key: str) -> list[str]:
        """Values of `key:` lines in a commit message (informative only, never trusted)."""
        prefix = key.lower() + ":"
        return [line.split(":", 1)[1].strip() for line in self.nodes[index].message.splitlines()
                if line.lower().startswith(prefix)]


@dataclass
class _Raw:
    sha: str
    parents: tuple[str, ...]
    email: str
    changes: list[tuple[str, str, str]]  # (status, path, "mode blob" of the new side)


def parse_log(data: bytes) -> list[_Raw]:
    """Parse `git log -z --raw --format='%H %P%n%ae'` output.

    Tokens are NUL-separated: a commit header (optionally followed, after a newline, by its first
    raw diff line), then alternately a path and either the next raw line or an empty token that
    ends the commit. Paths never contain NUL, so arbitrary file names cannot desynchronise it.
    """
    out: list[_Raw] = []
    tokens = data.split(b"\0")
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        i += 1
        if not tok:
            continue
        head, _, rest = tok.partition(b"\n")
        email, _, meta = rest.partition(b"\n")
        ids = head.decode("ascii", "replace").split()
        if not ids or len(ids[0]) not in (40, 64):
            raise CannotVerify(f"cannot parse git log output near {head[:60]!r}")
        raw = _Raw(ids[0], tuple(ids[1:]), email.decode("utf-8", "replace").strip(), [])
        out.append(raw)
        while meta:
            fields = meta.decode("ascii", "replace").split(" ")
            if i >= n or not fields[0].startswith(":") or len(fields) < 5:
                raise CannotVerify(f"cannot parse git log raw diff line {meta[:80]!r}")
            path = tokens[i].decode("utf-8", "surrogateescape")
            i += 1
            # :old_mode new_mode old_sha new_sha status
            raw.changes.append((fields[4][0], path, f"{fields[1]} {fields[3]}"))
            meta = tokens[i] if i < n else b""
            i += 1
            if meta and not meta.startswith(b":"):
                # not a raw line: the empty token after the last path was missing; re-read it
                i -= 1
                meta = b""
    return out


def _topo(raws: list[_Raw]) -> list[_Raw]:
    """Parents before children, by parent pointers only (iterative DFS, stable in log order)."""
    by_sha = {r.sha: r for r in raws}
    done: set[str] = set()
    order: list[_Raw] = []
    for start in reversed(raws):
        if start.sha in done:
            continue
        stack: list[tuple[_Raw, int]] = [(start, 0)]
        while stack:
            node, k = stack.pop()
            if node.sha in done:
                continue
            parents = [p for p in node.parents if p in by_sha]
            while k < len(parents) and parents[k] in done:
                k += 1
            if k < len(parents):
                stack.append((node, k + 1))
                stack.append((by_sha[parents[k]], 0))
            else:
                done.add(node.sha)
                order.append(node)
    return order


#: path → the largest blob the rules want to read at that path (0: not wanted)
BlobWant = Callable[[str], int]


def _fetch(root: str, commits: list[str],
           blobs: dict[str, int]) -> tuple[dict[str, bytes], dict[str, bytes], int]:
    """Commit objects and the wanted blobs no larger than their limit: a size check, then one batch."""
    sizes = gitio.object_sizes(root, list(blobs)) if blobs else {}
    small = [b for b, limit in blobs.items() if sizes.get(b, limit + 1) <= limit]
    found = gitio.cat_file(root, [*commits, *small]) if commits or small else {}
    objects = {s: obj[1] for s in commits if (obj := found.get(s)) is not None}
    data = {b: obj[1] for b in small if (obj := found.get(b)) is not None}
    return objects, data, (1 if blobs else 0) + (1 if commits or small else 0)


def _ancestry(parents: Iterable[tuple[int, ...]]) -> list[int]:
    anc: list[int] = []
    for i, ps in enumerate(parents):
        mask = 1 << i
        for p in ps:
            mask |= anc[p]
        anc.append(mask)
    return anc


def read_history(root: str, commit: str, *, pathspecs: list[str], track: Callable[[str], bool],
                 want_blob: BlobWant, cache: Path | None = None) -> History:
    """Build the history model of `commit` for the tracked paths the pathspecs select. `cache`:
    the git dir whose history cache (`verify_cache`) may spare the walk of what it already holds."""
    raws, calls = _walk(root, commit, pathspecs, cache) if cache is not None else (
        _topo(parse_log(gitio.log_raw(root, commit, pathspecs))), 1)
    index = {r.sha: i for i, r in enumerate(raws)}
    wanted: dict[str, int] = {}
    for r in raws:
        for status, path, new in r.changes:
            if status != "D" and track(path) and (limit := want_blob(path)):
                wanted[new.split(" ")[1]] = max(limit, wanted.get(new.split(" ")[1], 0))
    objects, blobs, fetched = _fetch(root, [r.sha for r in raws], wanted)

    nodes: list[Node] = []
    for i, r in enumerate(raws):
        parents = tuple(index[p] for p in dict.fromkeys(r.parents) if p in index)
        # git diffs a listed commit against its first *rewritten* parent (for a merge that
        # simplification left with one parent, that is the kept parent, not the real first
        # one; for a commit with no listed parent, the empty tree): start from that state.
        state = dict(nodes[parents[0]].state) if parents else {}
        for status, path, new in r.changes:
            if not track(path):
                continue
            if status == "D":
                state.pop(path, None)
            else:
                mode, blob = new.split(" ")
                state[path] = Entry(mode, blob)
        obj = objects.get(r.sha)
        message = obj.partition(b"\n\n")[2].decode("utf-8", "replace") if obj else ""
        nodes.append(Node(i, r.sha, parents, r.email, state, message))
    return History(commit, nodes, _ancestry(n.parents for n in nodes), blobs, calls + fetched)


def _walk(root: str, commit: str, pathspecs: list[str], git_dir: Path) -> tuple[list[_Raw], int]:
    """The walk of `commit` (parents first), the part a cached walk of an ancestor holds taken from
    it (docs/sealing.md, "The history cache"); the walk is cached for the next run."""
    from aoven_git import verify_cache

    cache_key = verify_cache.key(git_dir, pathspecs)
    cached = verify_cache.load(git_dir, cache_key)
    raws, calls = _incremental(root, commit, pathspecs, cached) if cached is not None else (None, 0)
    if raws is None:
        raws, calls = parse_log(gitio.log_raw(root, commit, pathspecs)), calls + 1
    if cached is None or cached.commit != commit:
        alias, more = _alias(root, commit, raws, pathspecs)
        verify_cache.save(git_dir, cache_key, verify_cache.Walk(
            commit, [[r.sha, list(r.parents), r.email, [list(c) for c in r.changes]] for r in raws], alias))
        calls += more
    return _topo(raws), calls


def _incremental(root: str, commit: str, pathspecs: list[str],
                 cached: Walk) -> tuple[list[_Raw] | None, int]:
    """git's walk of `commit` from a cached walk of its ancestor C and a walk of `commit ^C`, or
    None when the two could differ from one full walk: C is no ancestor, a new commit does not
    descend from C (then git's order could interleave old and new), or a new commit's rewritten
    parent is neither listed nor C standing for a listed commit."""
    base, alias = cached.commit, cached.alias
    old = [_Raw(r[0], tuple(r[1]), r[2], [(c[0], c[1], c[2]) for c in r[3]]) for r in cached.raws]
    if base == commit:
        return old, 0
    if not gitio.is_ancestor(root, base, commit):
        return None, 1
    descends: dict[str, bool] = {}
    for sha, parents in reversed(gitio.new_commits(root, commit, base)):
        descends[sha] = any(p == base or descends.get(p, False) for p in parents)
    if not all(descends.values()):
        return None, 2
    new = parse_log(gitio.log_raw(root, commit, pathspecs, exclude=[base]))
    known = {r.sha for r in old} | {r.sha for r in new}
    for r in new:
        mapped = []
        for p in r.parents:
            if p not in known and (p != base or alias is None):
                return None, 3
            mapped += [p] if p in known else [alias] if alias else []
        r.parents = tuple(dict.fromkeys(mapped))
    return new + old, 3


def _alias(root: str, commit: str, raws: list[_Raw], pathspecs: list[str]) -> tuple[str | None, int]:
    """The listed commit an unlisted `commit` stands for in a walk of a descendant: the one listed
    commit no other one descends from, when `commit` holds the same tracked entries ("" when nothing
    is listed; None when that cannot be established)."""
    shas = {r.sha for r in raws}
    if commit in shas:
        return commit, 0
    if not raws:
        return "", 0
    heads = shas - {p for r in raws for p in r.parents}
    if len(heads) != 1:
        return None, 0
    head = next(iter(heads))
    return (head if gitio.same_paths(root, head, commit, pathspecs) else None), 1


def git_blob_id(data: bytes) -> str:
    """The id git gives a blob: SHA-1 of `blob <size>\\0` and the bytes (SHA-1 repositories)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


#: one commit given as plain data: its id, its parents' ids, its author's e-mail, its whole tree
#: (path → bytes, or (mode, bytes) for a symbolic link or an executable) and its message
PlainCommit = tuple[str, tuple[str, ...], str, Mapping[str, "bytes | tuple[str, bytes]"], str]


def from_commits(commits: Sequence[PlainCommit], *, track: Callable[[str], bool], want_blob: BlobWant,
                 commit: str | None = None) -> History:
    """The history model built from plain data instead of git, for the rules' tests: the same
    `History` `read_history` returns for those commits, without a repository (a scenario of the
    sealing rules is then a few dictionaries, not a few dozen git processes).

    Commits come as `git log` lists them (newest first) and are ordered by parents alone, as in
    `read_history`; only paths `track` keeps are in a node's state, only blobs `want_blob` wants
    (within its limit) are in `blobs`, and blob ids are git's own, so a fingerprint is the same
    either way. Every commit given becomes a node: the caller gives only what the path-limited
    `git log` lists (commits that change a tracked path, merges that bring something). `commit`
    is the revision read (by default the newest commit given)."""
    given = {sha: (email, tree, message) for sha, _parents, email, tree, message in commits}
    order = _topo([_Raw(sha, tuple(parents), email, []) for sha, parents, email, _tree, _m in commits])
    index = {r.sha: i for i, r in enumerate(order)}
    nodes: list[Node] = []
    blobs: dict[str, bytes] = {}
    for i, raw in enumerate(order):
        email, tree, message = given[raw.sha]
        state: dict[str, Entry] = {}
        for path, value in tree.items():
            if not track(path):
                continue
            mode, data = value if isinstance(value, tuple) else ("100644", value)
            blob = git_blob_id(data)
            state[path] = Entry(mode, blob)
            if (limit := want_blob(path)) and len(data) <= limit:
                blobs[blob] = data
        ids = tuple(index[p] for p in dict.fromkeys(raw.parents) if p in index)
        nodes.append(Node(i, raw.sha, ids, email, state, message))
    head = commit or (commits[0][0] if commits else gitio.NULL_SHA)
    return History(head, nodes, _ancestry(n.parents for n in nodes), blobs)


def staged_history(root: str, *, track: Callable[[str], bool], want_blob: BlobWant) -> History:
    """HEAD's tree and, on top of it, the staged index: the commit the hook is asked to allow.
    While a merge is being concluded, MERGE_HEAD's tree is the staged commit's second parent (what
    the merged branch brings is that branch's, not the merging author's)."""
    head = gitio.head_commit(root)
    merging = gitio.resolve_commit(root, "MERGE_HEAD") if head is not None else None
    states = [{p: Entry(m, s) for p, m, s in gitio.tree_entries(root, c) if track(p)}
              for c in (head, merging) if c is not None]
    states.append({p: Entry(m, s) for p, m, s in gitio.index_entries(root) if track(p)})
    wanted: dict[str, int] = {}
    for state in states:
        for path, e in state.items():
            if limit := want_blob(path):
                wanted[e.blob] = max(limit, wanted.get(e.blob, 0))
    _, blobs, calls = _fetch(root, [], wanted)
    email = gitio.user_email(root) or ""
    nodes = [Node(i, sha, (), "", state) for i, (sha, state) in
             enumerate(zip([c for c in (head, merging) if c is not None], states, strict=False))]
    nodes.append(Node(len(nodes), STAGED, tuple(range(len(nodes))), email, states[-1]))
    return History(STAGED, nodes, _ancestry(n.parents for n in nodes), blobs, 5 + calls,
                   origin=lambda sha, paths: gitio.first_adding_commit(root, sha, paths))


def distinct(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
