"""The attacker's workbench: real repositories, real `git`, the real CLI and the real hook.

Every attack in this folder is a short story told with these helpers: a study is started, raters
seal (digest or content), reveal, branch from old commits, merge in a chosen parent order, and
the test asserts exactly which violations `verify-seal` reports (code, rater, commit) and its exit
code. The rules the stories test are the sealing rules (README, "aoven-git verify-seal"): order
must be proven by ancestry, one seal point and one path per sheet, stray copies
are plaintext, and the history is judged by the plan as it was at the first seal.

Helpers sanity-check the shape they build (`is_ancestor` reads the real ancestry, with
replacement objects and grafts disabled), so a test that passes or fails does so because of the
rules, not because the history was built wrong.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from aoven_git.model import SheetId
from aoven_git.seals import format_seal, sha256
from tests.conftest import Result, run_cli
from tests.sealing.conftest import PEOPLE, PLAN, UNBLINDED_PASS, Study, codes, plan

Who = str | tuple[str, str]

UNBLINDED = "unblinded"
BLINDED = "blinded"

#: the test plan with a second pass: condition B again, markers stripped (in the docs: a blinded
#: pass that overlaps the unblinded one because both score condition B)
TWO_PASS_PLAN = plan(passes=[UNBLINDED_PASS,
                             "{id: blinded, conditions: [B], dimensions: [D1, D2], stripped: true}"])
assert TWO_PASS_PLAN != PLAN

#: two passes that share no condition: revealing one never contaminates the other
SPLIT_PASS_PLAN = plan(passes=["{id: first, conditions: [A], dimensions: [D1, D2], primary: true}",
                              "{id: second, conditions: [B], dimensions: [D1, D2]}"])
assert SPLIT_PASS_PLAN != PLAN

NO_SECURITY = "security: {require_signed: false, allowed_signers: null}"
SIGNED_SECURITY = "security: {require_signed: true, allowed_signers: keys/allowed_signers}"
SIGNED_PLAN = plan(security=SIGNED_SECURITY.removeprefix("security: "))
assert SIGNED_PLAN != PLAN

#: conditions each pass of the plans above scores
PASS_CONDITIONS = {UNBLINDED: ("A", "B"), BLINDED: ("B",), "first": ("A",), "second": ("B",)}

#: every response file the plans need, so `aoven-git seal` finds the plan ready to freeze
RESPONSES = {
    f"study/test_{c}/{q}.md": f"# {q.upper()} — condition {c.upper()}\n\nA response ({c}, {q}).\n"
    for c in ("a", "b") for q in ("q1", "q2")
} | {
    f"study/test_b_stripped/{q}.md": f"# {q.upper()}\n\nA stripped response ({q}).\n"
    for q in ("q1", "q2")
}

RECONCILIATION_DRAFT = "# Reconciliation\n\n| Cell | Rater | Justification | Consensus |\n|---|---|---|---|\n"


def sheet_text(rater: str, scores: tuple[int, int] = (1, 2), *, pass_id: str = UNBLINDED,
               nonce: str | None = None, front_matter: bool = True) -> str:
    """A valid wide score file of the test plans: every cell of the pass scored."""
    fm = ""
    if front_matter:
        fm = f"---\nrater: {rater}\npass: {pass_id}\nround: main\n"
        fm += (f"nonce: {nonce}\n" if nonce else "") + "---\n\n"
    rows = "".join(f"| {q} | {c} | {scores[0]} | {scores[1]} | {sum(scores)} |\n"
                   for q in ("Q1", "Q2") for c in PASS_CONDITIONS[pass_id])
    return f"{fm}# Scores of {rater}\n\n| Q | Cond | D1 | D2 | Σ |\n|---|---|---|---|---|\n{rows}"


def identity(who: Who) -> tuple[str, str]:
    return PEOPLE[who] if isinstance(who, str) else who


class Lab(Study):
    """A study repository under attack. Seals and reveals are written by hand (the exact bytes
    the CLI would commit) unless a test goes through `cli`, which runs the real commands."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.texts: dict[tuple[str, str], str] = {}  # (rater, pass) -> sealed plaintext
        self.primary = UNBLINDED

    # -- files and commits -----------------------------------------------------------------
    def start(self, plan: str = PLAN, *, responses: dict[str, str] | None = None) -> str:
        primary = re.search(r"\{id: ([a-z-]+), [^}]*primary: true", plan)
        self.primary = primary.group(1) if primary else UNBLINDED
        self.write("aoven.yaml", plan)
        for path, text in (RESPONSES if responses is None else responses).items():
            self.write(path, text)
        return self.put("lead", "plan and responses", "aoven.yaml", "study")

    def put(self, who: Who, message: str, *paths: str, no_verify: bool = False,
            sign_key: Path | None = None, env: dict[str, str] | None = None) -> str:
        """Stage `paths` (everything when none) and `git commit` as `who`: hooks run unless
        `no_verify`. Returns the new commit."""
        self.git("add", "-A", "--", *paths) if paths else self.git("add", "-A")
        args = ["commit", "-q", "--allow-empty", "-m", message]
        if no_verify:
            args.insert(1, "--no-verify")
        if sign_key is not None:
            args = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={sign_key}", *args, "-S"]
        self.git(*args, author=identity(who), env=env)
        return self.head()

    def file(self, who: Who, path: str, content: str | bytes, message: str = "", **kw: object) -> str:
        """Write one file and commit it as `who`."""
        self.write(path, content)
        return self.put(who, message or f"add {path}", path, **kw)  # type: ignore[arg-type]

    def head(self, rev: str = "HEAD") -> str:
        return self.head_commit() if rev == "HEAD" else self.git("rev-parse", rev)

    # -- sealing by hand ---------------------------------------------------------------------
    def score_path(self, rater: str, pass_id: str = UNBLINDED) -> str:  # type: ignore[override]
        """The canonical score file: the primary pass and the main round are left out."""
        return f"study/{self.stem(rater, pass_id)}.md"

    def seal_path(self, rater: str, pass_id: str = UNBLINDED) -> str:  # type: ignore[override]
        return f"study/seals/{self.stem(rater, pass_id)}.sha256"

    def stem(self, rater: str, pass_id: str) -> str:
        return f"scores_{rater}" if pass_id == self.primary else f"scores_{rater}_{pass_id}"

    def seal_bytes(self, rater: str, text: str, pass_id: str = UNBLINDED) -> bytes:
        name = self.score_path(rater, pass_id).rsplit("/", 1)[1]
        return format_seal(sha256(text.encode()), name, SheetId(rater, pass_id, "main"))

    def seal(self, rater: str, scores: tuple[int, int] = (1, 2), *, pass_id: str = UNBLINDED,
             who: Who | None = None, nonce: str | None = None, path: str | None = None,
             **kw: object) -> str:
        """Digest seal: commit only `seals/<stem>.sha256` (at `path` when given: an alias)."""
        text = sheet_text(rater, scores, pass_id=pass_id, nonce=nonce or f"nonce-{rater}-{pass_id}")
        self.texts[(rater, pass_id)] = text
        return self.file(who or rater, path or self.seal_path(rater, pass_id),
                         self.seal_bytes(rater, text, pass_id), f"seal {rater} {pass_id}", **kw)

    def content(self, rater: str, scores: tuple[int, int] = (1, 2), *, pass_id: str = UNBLINDED,
                who: Who | None = None, path: str | None = None, **kw: object) -> str:
        """Content seal: commit the plaintext score file itself."""
        text = sheet_text(rater, scores, pass_id=pass_id)
        return self.file(who or rater, path or self.score_path(rater, pass_id), text,
                         f"scores of {rater} {pass_id}", **kw)

    def reveal(self, rater: str, *, pass_id: str = UNBLINDED, who: Who | None = None,
               message: str = "", **kw: object) -> str:
        """Commit the exact sealed plaintext (a reveal)."""
        return self.file(who or rater, self.score_path(rater, pass_id), self.texts[(rater, pass_id)],
                         message or f"reveal {rater} {pass_id}", **kw)

    def recon(self, pass_id: str = UNBLINDED, who: Who = "lead") -> str:
        name = "reconciliation.md" if pass_id == UNBLINDED else f"reconciliation_{pass_id}.md"
        return self.file(who, f"study/{name}", RECONCILIATION_DRAFT, "reconciliation draft")

    # -- branches and merges -----------------------------------------------------------------
    def branch(self, name: str, start: str | None = None) -> None:
        self.git("checkout", "-q", "-b", name, *([start] if start else []))

    def land(self, branch: str, *, first_parent: str = "main", who: Who = "lead") -> str:
        """Merge `branch` into main (a real merge commit) with main as the first parent, or the
        other way round (`first_parent="branch"`: merge main into the branch, then fast-forward
        main). Either way main ends at the merge."""
        if first_parent == "main":
            self.checkout("main")
            self.git("merge", "-q", "--no-ff", "--no-edit", branch, author=identity(who))
        else:
            self.checkout(branch)
            self.git("merge", "-q", "--no-ff", "--no-edit", "main", author=identity(who))
            self.checkout("main")
            self.git("merge", "-q", "--ff-only", branch)
        merge = self.head()
        assert len(self.git("rev-list", "--parents", "-n1", merge).split()) == 3
        return merge

    def octopus(self, *branches: str, who: Who = "lead") -> str:
        self.checkout("main")
        self.git("merge", "-q", "--no-ff", "--no-edit", *branches, author=identity(who))
        merge = self.head()
        assert len(self.git("rev-list", "--parents", "-n1", merge).split()) == len(branches) + 2
        return merge

    def merge_taking(self, branch: str, take: str, *, who: Who = "lead") -> str:
        """Merge `branch` into the current branch, resolving every conflict with the version of
        the files in commit `take`."""
        self.git("merge", "-q", "--no-ff", "--no-commit", branch, check=False)
        conflicted = self.git("diff", "--name-only", "--diff-filter=U").split()
        for path in conflicted:
            self.git("checkout", take, "--", path)
            self.git("add", "--", path)
        self.git("commit", "-q", "--no-verify", "--no-edit", author=identity(who))
        return self.head()

    def is_ancestor(self, a: str, b: str) -> bool:
        """Real ancestry: replacement objects and grafts disabled."""
        proc = subprocess.run(["git", "--no-replace-objects", "merge-base", "--is-ancestor", a, b],
                              cwd=self.path, capture_output=True, check=False,
                              env={**os.environ, "GIT_GRAFT_FILE": os.devnull})
        assert proc.returncode in (0, 1), proc.stderr
        return proc.returncode == 0

    def unordered(self, a: str, b: str) -> bool:
        return not self.is_ancestor(a, b) and not self.is_ancestor(b, a)

    # -- the real CLI and the real hook ------------------------------------------------------
    def cli(self, who: Who, *args: str, cwd: Path | None = None) -> Result:
        """Run `aoven-git args` in-process as `who` (author and committer identity)."""
        with as_identity(identity(who)):
            return run_cli(*args, cwd=cwd or self.path)

    def install_hook(self) -> None:
        res = self.cli("lead", "install-hook")
        assert res.code == 0, res.output

    def git_commit(self, who: Who, message: str, *paths: str,
                   env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """A plain `git commit` (the installed hook runs) that may be refused."""
        if paths:
            self.git("add", "-A", "--", *paths)
        name, email = identity(who)
        full = {**os.environ, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
                "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email, **(env or {})}
        return subprocess.run(["git", "commit", "-q", "-m", message], cwd=self.path,
                              capture_output=True, text=True, env=full, check=False)

    def snapshot(self) -> tuple[str, str, str]:
        """HEAD, work-tree status and index: what a refused command must leave unchanged."""
        return (self.head(), self.git("status", "--porcelain", "--untracked-files=all"),
                self.git("diff", "--cached", "--name-status"))


@contextlib.contextmanager
def as_identity(ident: tuple[str, str]) -> Iterator[None]:
    name, email = ident
    new = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
    old = {k: os.environ.get(k) for k in new}
    os.environ.update(new)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# --------------------------------------------------------------------------- verdict checks


#: raters of the test plans with `required: false`
OPTIONAL_RATERS = frozenset({"redteam"})


def expect(lab: Lab, expected: list[tuple[str, str | None]], *, exit_code: int | None = None,
           args: tuple[str, ...] = ()) -> dict:
    """Run verify-seal (JSON) and assert exactly these (code, rater), sorted, and the exit code
    (1 when a violation blocks the verdict, else 0, unless given): the optional red team's
    violations only exclude its sheets (docs/sealing.md, "Violations")."""
    res, data = lab.verify(*args)
    assert "Traceback" not in res.output, res.output
    assert data, f"verify-seal gave no JSON (exit {res.code}): {res.output}"
    assert codes(data) == sorted(expected, key=lambda t: (t[0], t[1] or "")), data["violations"]
    blocking = [rater for _, rater in expected if rater not in OPTIONAL_RATERS]
    want = exit_code if exit_code is not None else (1 if blocking else 0)
    assert res.code == want, res.output
    return data


def at(data: dict, code: str, rater: str | None) -> dict:
    """The one violation with this code and rater."""
    found = [v for v in data["violations"] if v["code"] == code and v["rater"] == rater]
    assert len(found) == 1, data["violations"]
    return found[0]


def names(violation: dict, commit: str) -> bool:
    """The violation's message names `commit` (any abbreviation of at least 7 digits)."""
    return commit[:7] in violation["message"]


def refused(proc: subprocess.CompletedProcess[str], code: str) -> None:
    """The hook refused the commit and said which rule (its code) the commit would break."""
    assert proc.returncode != 0, f"commit was accepted: {proc.stdout}{proc.stderr}"
    assert code in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return Lab(tmp_path / "lab")


needs_ssh = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen not installed")


SIGNERS = ("cto", "logician", "mallory")


@pytest.fixture(scope="session")
def session_keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Throwaway ed25519 keys for cto, logician and an attacker, made once per session (per
    xdist worker) in a folder `keys` copies."""
    folder = tmp_path_factory.mktemp("ssh") / "keys"
    folder.mkdir()
    for who in SIGNERS:
        key = folder / f"key-{who}"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", who, "-f", str(key)],
                       check=True, stdin=subprocess.DEVNULL)
    return folder


@pytest.fixture
def keys(session_keys: Path, tmp_path: Path) -> dict[str, Path]:
    """This test's copy of the session's keys (file modes kept: ssh refuses a readable key)."""
    folder = shutil.copytree(session_keys, tmp_path / "keys")
    return {who: folder / f"key-{who}" for who in SIGNERS}


def signers_line(email: str, key: Path) -> str:
    kind, blob = key.with_suffix(".pub").read_text().split(" ")[:2]
    return f"{email} {kind} {blob}\n"


def signed_lab(lab: Lab, keys: dict[str, Path], plan: str = SIGNED_PLAN) -> Lab:
    """Start a study whose plan requires ssh-signed seals and reveals by cto and logician."""
    lines = [signers_line(PEOPLE[w][1], keys[w]) for w in ("cto", "logician")]
    lab.write("keys/allowed_signers", "".join(lines))
    lab.start(plan)
    lab.put("lead", "allowed signers", "keys")
    return lab
