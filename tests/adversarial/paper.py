"""A study on paper: the attacker's workbench (`Lab`) without git, for the stories whose subject
is a sealing rule and not git itself.

`PaperLab` keeps `Lab`'s story-telling API (start, seal, content, reveal, file, branch, checkout,
land, merge_taking, octopus, a few `git` verbs), and `PaperStudy` that of `Study` (tests/sealing),
but both hold the commits as dictionaries: each commit is its parents, its author and its whole
tree. `verify` lists the commits `git log --full-history --simplify-merges -- <study paths>` would
list (`listed`), builds the history model from them with `history.from_commits` and runs the very
rules verify-seal runs (`seal_report.check`). A story of a dozen commits then costs a few
milliseconds instead of a few dozen git processes.

What needs git stays with `Lab`: the real CLI and the hook, signatures, time anchors, blind passes
(their corpus checks read git), git's own object model (replace refs, grafts, eol filters,
symbolic links on disk). `PaperLab` refuses those loudly rather than pretend. `shadow=True` replays
every step on a real `Lab` as well and checks, at each `verify`, that both give the same report:
how `tests/test_rules_pure_paper.py` proves the paper faithful (and how to check a new story:
`AOVEN_PAPER_SHADOW=1`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest

from aoven_git import ledger
from aoven_git.commands.verify_seal import exit_code
from aoven_git.history import History, from_commits, read_history
from aoven_git.plan import MAX_PLAN_BYTES, parse_plan
from aoven_git.seal_report import check
from tests.adversarial.conftest import Lab, Who, identity
from tests.conftest import Result
from tests.sealing.conftest import Study

PLAN_PATH = "aoven.yaml"
#: the identity of a commit made without an author (the tests' global git config)
RUNNER = ("Test Runner", "runner@example.org")
Tree = dict[str, bytes]


@dataclass
class Commit:
    sha: str
    parents: tuple[str, ...]
    email: str
    tree: Tree
    message: str


@dataclass
class Paper:
    """The repository: commits in the order they were made (parents first), branches, HEAD's
    branch, the index and the work tree."""

    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    current: str = "main"
    index: Tree = field(default_factory=dict)
    work: Tree = field(default_factory=dict)

    def head(self) -> str | None:
        return self.branches.get(self.current)

    def resolve(self, rev: str) -> str:
        sha = self.branches.get(rev, rev)
        assert sha in self.commits, f"paper: no commit or branch {rev!r}"
        return sha

    def ancestors(self, sha: str) -> set[str]:
        """`sha` and every commit it descends from."""
        seen: set[str] = set()
        todo = [sha]
        while todo:
            c = todo.pop()
            if c not in seen:
                seen.add(c)
                todo.extend(self.commits[c].parents)
        return seen

    def commit(self, parents: tuple[str, ...], who: Who, message: str, tree: Tree) -> str:
        digest = hashlib.sha1(f"paper {len(self.commits)} {message}".encode()).hexdigest()
        self.commits[digest] = Commit(digest, parents, identity(who)[1], dict(tree), message)
        self.branches[self.current] = digest
        self.index, self.work = dict(tree), dict(tree)
        return digest

    def merged_tree(self, tree: Tree, ours: str, theirs: str, take: str | None = None) -> Tree:
        """`tree` (at or after commit `ours`) merged with commit `theirs`, three-way over whole
        files from their merge base; a conflict takes `take`'s version, or fails the story."""
        common = self.ancestors(ours) & self.ancestors(theirs)
        bases = [c for c in common if not any(c != o and c in self.ancestors(o) for o in common)]
        base = self.commits[bases[0]].tree if bases else {}
        other = self.commits[theirs].tree
        out: Tree = {}
        for path in sorted({*tree, *other, *base}):
            x, y, o = tree.get(path), other.get(path), base.get(path)
            if x == y or y == o:
                value = x
            elif x == o:
                value = y
            else:
                assert take is not None, f"paper: merge conflict at {path}"
                value = self.commits[take].tree.get(path)
            if value is not None:
                out[path] = value
        return out


def listed(paper: Paper, head: str, track: Any) -> list[Commit]:
    """The commits `git log --full-history --simplify-merges --parents -- <tracked paths>` lists
    for `head`, with their rewritten parents: a commit whose tracked tree equals its only
    (rewritten) parent's is replaced by that parent; a parent that is an ancestor of another
    parent is dropped; a root commit that tracks nothing is left out; merges that keep two parents
    stay."""
    keep = paper.ancestors(head)
    tracked = {sha: {p: v for p, v in c.tree.items() if track(p)} for sha, c in paper.commits.items()}
    simple: dict[str, str | None] = {}  # commit -> what stands for it in the listed history
    out: list[Commit] = []
    for sha, c in paper.commits.items():
        if sha not in keep:
            continue
        parents = list(dict.fromkeys(s for p in c.parents if (s := simple[p]) is not None))
        parents = [p for p in parents
                   if not any(p != q and p in paper.ancestors(q) for q in parents)]
        same = len(parents) == 1 and tracked[sha] == tracked[parents[0]]
        if same or (not parents and not tracked[sha]):
            simple[sha] = parents[0] if parents else None
            continue
        simple[sha] = sha
        out.append(Commit(sha, tuple(parents), c.email, c.tree, c.message))
    return log_order(out)


def log_order(commits: list[Commit]) -> list[Commit]:
    """The order `git log --simplify-merges` prints (it implies `--topo-order`): children before
    parents, by a stack: a commit is pushed once its last child is printed, parents in order, so a
    merge's last parent is followed first (checked against git by tests/test_rules_pure_paper.py)."""
    by_sha = {c.sha: c for c in commits}
    children = dict.fromkeys(by_sha, 0)
    for c in commits:
        for p in c.parents:
            children[p] += 1
    stack = [c.sha for c in reversed(commits) if not children[c.sha]]
    out: list[Commit] = []
    while stack:
        c = by_sha[stack.pop()]
        out.append(c)
        for p in c.parents:
            children[p] -= 1
            if not children[p]:
                stack.append(p)
    return out


def paper_history(paper: Paper, plan_bytes: bytes) -> tuple[Any, History]:
    """The plan at HEAD and the history model verify-seal would read, from paper."""
    plan = parse_plan(plan_bytes, display=PLAN_PATH)
    head = paper.head()
    assert head is not None, "paper: nothing committed"
    track = (lambda p: ledger.tracked(plan, PLAN_PATH, p))  # noqa: E731 - read_history's own shape
    commits = [(c.sha, c.parents, c.email, c.tree, c.message) for c in listed(paper, head, track)]
    want = ledger.want_blob(plan, PLAN_PATH, MAX_PLAN_BYTES)
    return plan, from_commits(commits, track=track, want_blob=want, commit=head)  # type: ignore[arg-type]


def matches(path: str, specs: Iterable[str]) -> bool:
    return any(path == s or path.startswith(s.rstrip("/") + "/") for s in specs)


class PaperRepo:
    """`GitRepo` on paper, for `Study` and `Lab` (see the module docstring). With `shadow`, a real
    repository follows every step and each `verify` asserts both reports agree."""

    shadow: Any

    def __init__(self, path: Path, shadow: Any = None) -> None:  # no `git init`
        self.path = path
        self.sealed: dict[str, str] = {}
        self.paper = Paper()
        self.shadow = shadow
        self.shas: dict[str, str] = {}  # paper commit -> the shadow's commit
        self.clock = 0

    # -- the work tree, the index and commits -------------------------------------------------
    def write(self, rel: str, content: str | bytes) -> Path:
        self.paper.work[rel] = content.encode() if isinstance(content, str) else bytes(content)
        if self.shadow is not None:
            self.shadow.write(rel, content)
        return self.path / rel

    def stage(self, paths: tuple[str, ...]) -> None:
        p = self.paper
        for path in {*p.work, *p.index}:
            if not paths or matches(path, paths):
                if path in p.work:
                    p.index[path] = p.work[path]
                else:
                    p.index.pop(path, None)

    def commit(self, message: str, *paths: str, author: tuple[str, str] | None = None,
               env: dict[str, str] | None = None) -> str:
        """`GitRepo.commit`: stage `paths` (everything when none) and commit, empty or not."""
        if env:
            self.needs_git("a commit's environment (dates, identities)")
        self.stage(paths)
        head = self.paper.head()
        sha = self.paper.commit((head,) if head else (), author or RUNNER, message, self.paper.index)
        if self.shadow is not None:
            with self.dated():
                self.shas[sha] = self.shadow.commit(message, *paths, author=author)
        return sha

    def head(self, rev: str = "HEAD") -> str:
        return self.paper.resolve(self.paper.current if rev == "HEAD" else rev)

    def head_commit(self) -> str:
        return self.head()

    # -- branches and merges ------------------------------------------------------------------
    def branch(self, name: str, start: str | None = None) -> None:
        assert name not in self.paper.branches, f"paper: branch {name} exists"
        self.paper.branches[name] = self.paper.resolve(start) if start else self.head()
        self.checkout(name, _shadow=False)
        if self.shadow is not None:
            self.shadow.branch(name, self.shas.get(start, start) if start else None)

    def checkout(self, name: str, *, _shadow: bool = True) -> None:
        """Switch branches; a story commits (or drops) its changes first, as git would carry them."""
        p = self.paper
        head = p.head()
        assert head is None or p.work == p.index == p.commits[head].tree, "paper: uncommitted changes"
        p.current = name
        p.index, p.work = dict(p.commits[p.resolve(name)].tree), dict(p.commits[p.resolve(name)].tree)
        if _shadow and self.shadow is not None:
            self.shadow.checkout(name)

    def merged(self, others: list[str], who: Who, take: str | None = None, message: str = "merge") -> str:
        """A merge commit of HEAD and `others` (in that parent order) on the current branch."""
        p = self.paper
        ours = self.head()
        theirs = [p.resolve(o) for o in others]
        assert all(t not in p.ancestors(ours) for t in theirs), "paper: already up to date"
        tree = p.commits[ours].tree
        for t in theirs:
            tree = p.merged_tree(tree, ours, t, take)
        return p.commit((ours, *theirs), who, message, tree)

    def merge(self, branch: str, who: str = "lead") -> str:
        """`Study.merge`: merge `branch` into the current branch (a merge commit)."""
        merge = self.merged([branch], who)
        if self.shadow is not None:
            with self.dated():
                self.shas[merge] = self.shadow.merge(branch, who)
        return merge

    @contextlib.contextmanager
    def dated(self) -> Iterator[None]:
        """The shadow's next commit one second after its last: `git log` then lists commits newest
        first, the order the paper gives `history.from_commits`."""
        self.clock += 1
        stamp = f"@{1_790_000_000 + self.clock} +0000"
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("GIT_AUTHOR_DATE", stamp)
            mp.setenv("GIT_COMMITTER_DATE", stamp)
            yield

    def is_ancestor(self, a: str, b: str) -> bool:
        return self.paper.resolve(a) in self.paper.ancestors(self.paper.resolve(b))

    # -- the few git verbs stories use --------------------------------------------------------
    def git(self, *args: str, author: tuple[str, str] | None = None, env: dict[str, str] | None = None,
            check: bool = True) -> str:
        words = [a for a in args if a not in ("-q", "--quiet")]
        p = self.paper
        if words[0] == "rm" and author is None:
            for path in words[1:]:
                p.work.pop(path, None), p.index.pop(path, None)
        elif words[0] == "mv" and len(words) == 3 and author is None:
            p.work[words[2]] = p.work.pop(words[1])
            p.index.pop(words[1], None)
            p.index[words[2]] = p.work[words[2]]
        elif words[:2] == ["merge", "--ff-only"] and len(words) == 3:
            target = p.resolve(words[2])
            assert self.head() in p.ancestors(target), "paper: not a fast-forward"
            self.checkout(p.current, _shadow=False)  # (a clean work tree)
            p.branches[p.current] = target
            p.index, p.work = dict(p.commits[target].tree), dict(p.commits[target].tree)
        elif words[0] == "checkout" and len(words) == 2:
            self.checkout(words[1], _shadow=False)
        elif words[0] == "rev-parse" and len(words) == 2:
            return p.resolve(words[1])
        else:
            self.needs_git(f"`git {' '.join(args)}`")
        if self.shadow is not None:
            with self.dated():
                self.shadow.git(*(self.shas.get(a, a) for a in args), author=author, env=env, check=check)
        return ""

    # -- what only git (or the CLI) can show ----------------------------------------------------
    def needs_git(self, what: str) -> NoReturn:
        raise AssertionError(f"PaperLab cannot show {what}: tell this story with a real repository "
                             "(`@pytest.mark.git`)")

    # -- checking -----------------------------------------------------------------------------
    def verify(self, *args: str) -> tuple[Result, dict]:
        """verify-seal's JSON report and exit code for HEAD, from the rules alone."""
        if args:
            self.needs_git(f"verify-seal {' '.join(args)}")
        plan, hist = paper_history(self.paper, self.paper.commits[self.head()].tree[PLAN_PATH])
        if plan.security.require_signed or plan.security.timestamps is not None or \
                any(p.blind for p in plan.passes):
            self.needs_git("signatures, time anchors or a blind pass")
        report = check(plan, hist, PLAN_PATH)
        data = json.loads(json.dumps(report.as_dict()))
        if report.reconciliation_paths:  # rows are attributed from the files at HEAD: git's part
            del data["reconciliation_rows"], data["unattributed_rows"]
        res = Result(exit_code(report), json.dumps(data), "")
        if self.shadow is not None:
            self.compare_history(plan, hist)
            self.compare(res, data)
        return res, data

    def compare_history(self, plan: Any, hist: History) -> None:
        """The paper's history model is the one `read_history` reads from the shadow repository:
        the same nodes in the same order, parents, authors, states, messages and blobs."""
        assert self.shadow is not None
        track = (lambda p: ledger.tracked(plan, PLAN_PATH, p))  # noqa: E731
        real = read_history(str(self.shadow.path), self.shadow.head_commit(), track=track,
                            pathspecs=ledger.pathspecs(plan, PLAN_PATH),
                            want_blob=ledger.want_blob(plan, PLAN_PATH, MAX_PLAN_BYTES))  # type: ignore[arg-type]
        back = {v: k for k, v in self.shas.items()}

        def shape(h: History, sha: Any) -> list[tuple[Any, ...]]:
            """Each node; a merge's message is git's own wording, never read by a rule."""
            return [(sha(n.sha), n.parents, n.email, n.state, n.message.strip() if len(n.parents) < 2 else "")
                    for n in h.nodes]

        ours, theirs = shape(hist, str), shape(real, lambda x: back.get(x, x))
        assert ours == theirs, "\n".join(f"paper {a}\ngit   {b}" for a, b in zip(ours, theirs, strict=False)
                                          if a != b) or f"{len(ours)} nodes on paper, {len(theirs)} in git"
        assert hist.blobs == real.blobs
        assert back[real.commit] == hist.commit

    def compare(self, res: Result, data: dict) -> None:
        """The shadow's verify-seal gives the same exit code and violations (commit ids mapped)."""
        real_res, real = self.shadow.verify()  # type: ignore[union-attr]
        assert res.code == real_res.code, (res.out, real_res.output)
        back = {v: k for k, v in self.shas.items()}

        def text(v: Mapping[str, Any]) -> tuple[str, str | None, str | None, str]:
            message = v["message"]
            for real_sha, paper_sha in back.items():
                message = message.replace(real_sha[:10], paper_sha[:10]).replace(real_sha[:7], paper_sha[:7])
            return v["code"], v["rater"], back.get(v["commit"], v["commit"]), message

        got = sorted((v["code"], v["rater"], v["commit"], v["message"]) for v in data["violations"])
        want = sorted(map(text, real["violations"]))
        assert got == want, f"paper:\n{got}\ngit:\n{want}"


class PaperLab(PaperRepo, Lab):
    """`Lab` on paper: its stories' helpers (seal, content, reveal, file, recon) are `Lab`'s own."""

    def __init__(self, path: Path, shadow: Lab | None = None) -> None:
        super().__init__(path, shadow)
        self.texts: dict[tuple[str, str], str] = {}
        self.primary = "unblinded"

    def put(self, who: Who, message: str, *paths: str, no_verify: bool = False,
            sign_key: Path | None = None, env: dict[str, str] | None = None) -> str:
        if sign_key is not None:
            self.needs_git("a signed commit")
        return self.commit(message, *paths, author=identity(who), env=env)

    def land(self, branch: str, *, first_parent: str = "main", who: Who = "lead") -> str:
        if first_parent == "main":
            self.checkout("main", _shadow=False)
            merge = self.merged([branch], who)
        else:
            self.checkout(branch, _shadow=False)
            merge = self.merged(["main"], who)
            self.paper.branches["main"] = merge
            self.checkout("main", _shadow=False)
        if self.shadow is not None:
            with self.dated():
                self.shas[merge] = self.shadow.land(branch, first_parent=first_parent, who=who)
        return merge

    def octopus(self, *branches: str, who: Who = "lead") -> str:
        self.checkout("main", _shadow=False)
        merge = self.merged(list(branches), who)
        if self.shadow is not None:
            with self.dated():
                self.shas[merge] = self.shadow.octopus(*branches, who=who)
        return merge

    def merge_taking(self, branch: str, take: str, *, who: Who = "lead") -> str:
        merge = self.merged([branch], who, take=take)
        if self.shadow is not None:
            with self.dated():
                self.shas[merge] = self.shadow.merge_taking(self.shas.get(branch, branch),
                                                            self.shas[take], who=who)
        return merge

    def cli(self, who: Who, *args: str, cwd: Path | None = None) -> Result:
        self.needs_git("the CLI")

    def install_hook(self) -> None:
        self.needs_git("the hook")

    def snapshot(self) -> tuple[str, str, str]:
        self.needs_git("a work tree on disk")



class PaperStudy(PaperRepo, Study):
    """`Study` (tests/sealing/conftest.py) on paper."""


def shadowing() -> bool:
    """`AOVEN_PAPER_SHADOW=1`: every paper story is replayed on git as well and compared."""
    return os.environ.get("AOVEN_PAPER_SHADOW", "") not in ("", "0")


@pytest.fixture
def paper_lab(request: pytest.FixtureRequest, tmp_path: Path) -> Lab:
    """A `PaperLab` (shadowed by a real `Lab` under `AOVEN_PAPER_SHADOW=1`), or the real `Lab` for
    a story marked `@pytest.mark.git` (its subject is git, or it runs the CLI or the hook). A module
    whose stories test the rules takes it as its `lab`: `lab = paper_lab`."""
    if request.node.get_closest_marker("git"):
        return Lab(tmp_path / "lab")
    return PaperLab(tmp_path / "lab", Lab(tmp_path / "lab") if shadowing() else None)


@pytest.fixture
def paper_study(request: pytest.FixtureRequest, tmp_path: Path) -> Study:
    """`paper_lab` for `Study` (tests/sealing): a module whose stories test the rules takes it as
    its `study`: `study = paper_study`."""
    if request.node.get_closest_marker("git"):
        return Study(tmp_path / "study-repo")
    return PaperStudy(tmp_path / "study-repo", Study(tmp_path / "study-repo") if shadowing() else None)
