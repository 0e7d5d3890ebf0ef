"""Shared test fixtures: a real CLI runner and real git repositories.

Git runs with a throwaway global config (identity, default branch, no signing) so tests never
depend on, or change, the machine's configuration.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from filelock import FileLock

from aoven_git.cli import main
from aoven_git.plan import load_plan

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "tests" / "phase2"
DEFAULT_PLAN = ROOT / "aoven_git" / "templates" / "aoven.yaml"
#: The markers of the default plan, in plan order (read from it, so tests follow the plan).
PLAN_MARKERS: tuple[str, ...] = tuple(load_plan(DEFAULT_PLAN).markers)


#: session fixtures worth building once for the whole run (the demo's history, the team's history):
#: every test that uses one, directly or through another fixture, is sent to the same pytest-xdist
#: worker (`--dist loadgroup` in pyproject.toml), so each is built once, not once per worker. What
#: tests only read and may share across processes is built once per run by `built_once` instead,
#: and its tests spread over every worker (the pre-commit framework's environment)
SHARED_SESSION_FIXTURES = ("demo_history", "honest_lead")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups into the test ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for name in SHARED_SESSION_FIXTURES:
            if name in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.xdist_group(name))
                break


#: variables a test's git must not inherit from the machine (or from another test)
_GIT_IDENTITY_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
                      "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")


def isolate_git(monkeypatch: pytest.MonkeyPatch, factory: pytest.TempPathFactory) -> None:
    """Point git at a throwaway global config in this session's base temp directory. Under
    pytest-xdist every worker has its own base temp, so workers never share a file."""
    cfg = factory.getbasetemp() / "gitconfig"
    if not cfg.exists():
        cfg.write_text(
            "[user]\n\tname = Test Runner\n\temail = runner@example.org\n"
            "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
            "[advice]\n\tdetachedHead = false\n[protocol \"file\"]\n\tallow = always\n"
        )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    # reports state when they were generated; a fixed time keeps reruns (and goldens) identical
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1798761600")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # `seal` keeps copies of sealed sheets under $AOVEN_GIT_HOME: never in the real home directory
    monkeypatch.setenv("AOVEN_GIT_HOME", str(factory.getbasetemp() / "aoven-git-home"))
    for var in _GIT_IDENTITY_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(autouse=True)
def isolated_git_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path_factory)


@contextlib.contextmanager
def isolated_session(factory: pytest.TempPathFactory) -> Iterator[None]:
    """The isolation of `isolated_git_config` for a session- or module-scoped fixture, which is
    set up before any function-scoped (autouse) fixture of the first test that needs it."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate_git(monkeypatch, factory)
        yield


def copy_repo(source: Path, dest: Path) -> Path:
    """A private copy of a repository built once per session: `shutil.copytree` of the folder
    (work tree and `.git`) costs a few milliseconds where rebuilding it costs hundreds of git
    processes. Symbolic links are copied as links, so the copy is the same repository."""
    shutil.copytree(source, dest, symlinks=True)
    return dest


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder `name`, built by `build(folder)` once per test run, whatever the number of
    pytest-xdist workers: the first worker to ask builds it under a file lock in the run's shared
    temporary directory, the others wait and reuse it. For what tests only read (or what guards
    itself, like pre-commit's store). Without workers it lives in the session's own directory."""
    base = factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / f"built-once-{name}"
    with FileLock(str(folder) + ".lock"):
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / ".built").write_text("ok\n")
    return folder


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def output(self) -> str:
        return self.out + self.err


def run_cli(*args: str, cwd: Path | str | None = None) -> Result:
    """Run `aoven-git args` in-process through the real entry point (error handler included)."""
    runner = CliRunner()
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        with runner.isolation() as streams:
            try:
                code = main(list(args))
            finally:  # text written without click.echo may still sit in the wrapper's buffer
                sys.stdout.flush()
                sys.stderr.flush()
            out = streams[0].getvalue().decode("utf-8", "replace")
            err = streams[1].getvalue().decode("utf-8", "replace") if streams[1] is not None else ""
    finally:
        os.chdir(old)
    return Result(code, out, err)


def run_subprocess(*args: str, cwd: Path | str, env: dict[str, str] | None = None,
                   input: str | None = None) -> Result:
    """Run the installed CLI as a separate process, as users and hooks do."""
    proc = subprocess.run(
        [sys.executable, "-m", "aoven_git", *args], cwd=cwd, capture_output=True, text=True,
        env={**os.environ, **(env or {})}, input=input, check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli() -> type[Result]:
    return Result


class GitRepo:
    """A real repository in a temporary directory, with helpers for building histories."""

    def __init__(self, path: Path, *, init: bool = True) -> None:
        """`init=False` adopts an existing repository (a copy of a session template)."""
        self.path = path
        if init:
            path.mkdir(parents=True, exist_ok=True)
            self.git("init", "-q")

    def git(self, *args: str, author: tuple[str, str] | None = None, env: dict[str, str] | None = None,
            check: bool = True) -> str:
        full_env = dict(os.environ)
        if author is not None:
            name, email = author
            full_env.update({"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
                             "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email})
        full_env.update(env or {})
        proc = subprocess.run(["git", *args], cwd=self.path, capture_output=True, text=True,
                              env=full_env, check=False)
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout.strip()

    def write(self, rel: str, content: str | bytes) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        return target

    def commit(self, message: str, *paths: str, author: tuple[str, str] | None = None,
               env: dict[str, str] | None = None) -> str:
        """Stage `paths` (all changes when none) and commit; returns the commit id."""
        if paths:
            self.git("add", "-A", "--", *paths)
        else:
            self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message, author=author, env=env)
        return self.head_commit()

    def head_commit(self) -> str:
        """What `git rev-parse HEAD` prints, read from `.git` without starting a process (tests
        make thousands of commits and read HEAD after each): HEAD, then the branch's loose or
        packed ref. Anything unusual (a `.git` file, a missing ref) asks git."""
        git_dir = self.path / ".git"
        try:
            head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
            if not head.startswith("ref: "):
                return head if len(head) == 40 else self.git("rev-parse", "HEAD")
            ref = head[5:]
            loose = git_dir / ref
            if loose.is_file():
                return loose.read_text(encoding="utf-8").strip()
            for line in (git_dir / "packed-refs").read_text(encoding="utf-8").splitlines():
                if line.endswith(f" {ref}") and not line.startswith(("#", "^")):
                    return line.split(" ", 1)[0]
        except OSError:
            pass
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "repo")


@pytest.fixture
def example_study(tmp_path: Path) -> Iterator[Path]:
    """A plain folder (not a git repo) holding the plan at its root and the example study."""
    root = tmp_path / "study"
    shutil.copytree(EXAMPLE, root / "tests" / "phase2")
    shutil.copy(root / "tests" / "phase2" / "aoven.yaml", root / "aoven.yaml")
    yield root


@pytest.fixture(scope="session")
def demo_history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, Path]:
    """`aoven-git demo --keep` (the example study's whole honest history: pre-registration, every
    seal, every reveal, each rater's reconciliation rows, the amendment; about 340 git
    processes), replayed once per session, and under pytest-xdist once per worker. Tests that
    change the repository take `demo_repo`, a copy; tests that only read it may use it directly."""
    root = tmp_path_factory.mktemp("demo-history") / "study"
    with isolated_session(tmp_path_factory):
        res = run_cli("demo", "--keep", str(root))
    assert res.code == 0, res.output
    return res, root


@pytest.fixture
def demo_repo(demo_history: tuple[Result, Path], tmp_path: Path) -> Path:
    """This test's own copy of the demo's history (see `demo_history`), at `tmp_path/demo`."""
    return copy_repo(demo_history[1], tmp_path / "demo")


@pytest.fixture(scope="session")
def blinded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The blinded study of tests/test_blind_e2e.py, built once per session (per xdist worker):
    `strip-markers`, the first commit, `install-hook` and `blind` through the real CLI and the
    installed hook. Holds `repo/` and the key at `keys/hidden.json`, outside the work tree.
    `test_blind_e2e.blinded` gives each test its own copy of both."""
    from tests.test_blind_e2e import BlindStudy

    base = tmp_path_factory.mktemp("blinded")
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate_git(monkeypatch, tmp_path_factory)
        s = BlindStudy(base / "repo", monkeypatch)
        s.start()
        res = s.run("lead", "blind", "--pass", "hidden", "--key-out", str(base / "keys" / "hidden.json"))
    assert res.code == 0, res.output
    return base
