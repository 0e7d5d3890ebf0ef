"""A study run the way a team runs it (docs/workflow.md): several clones, pull requests, hooks.

Everything travels through a bare "origin": the lead's clone, three raters' clones (each with its
own identity and its own installed hook) and a "GitHub" clone that merges pull requests the way
the merge button does (a merge commit by the maintainer, pushed to origin). Nobody shares a work
tree and nobody merges a local branch of someone else. Every commit is a real `git commit`, so
the installed hook script runs as its own process, with a PATH that holds git and nothing else:
no `aoven-git`, no `python3`, no active virtual environment. The hook finds aoven-git through the
Python that `aoven-git install-hook` recorded.

The first half tests the hook script and `install-hook` on their own: the recorded Python, the
fallbacks (PATH, python3), the message when nothing works, and re-installing from another real
virtual environment.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from aoven_git.commands.install_hook import HOOK_SCRIPT, PYTHON_KEY
from tests.conftest import EXAMPLE, ROOT, GitRepo, Result, run_cli, run_subprocess

STUDY = "tests/phase2"
RATERS = ("cto", "logician", "redteam")
PASSES = ("unblinded", "blinded")
LEAD = ("Study Lead", "lead@example.org")
PEOPLE = {
    "lead": LEAD,
    "cto": ("CTO", "cto@example.org"),
    "logician": ("Logician", "logician@example.org"),
    "redteam": ("Red Team", "redteam@example.org"),
}
GIT = shutil.which("git") or "git"
#: the PATH of the machine running the tests: CI's runner has its own environment
RUNNER_PATH = os.environ["PATH"]
#: the hook script as it was before it looked up a recorded Python (an "aoven-git hook it wrote")
OLD_HOOK = """\
#!/bin/sh
# aoven-git pre-commit hook: checks the staged index (validation, seals, locked plan).
# Installed by `aoven-git install-hook`; see `aoven-git hook pre-commit --help`.
if command -v aoven-git >/dev/null 2>&1; then
    exec aoven-git hook pre-commit
fi
exec python3 -m aoven_git hook pre-commit
"""
NOT_FOUND = "aoven-git pre-commit: commit refused: aoven-git is not installed where this hook can find it"
FIX = ("  Fix: activate the environment that has aoven-git and commit again, or run\n"
       "  `aoven-git install-hook` once from that environment (it records its Python for this hook).")


def score_names(rater: str) -> list[str]:
    return [f"scores_{rater}.md", f"scores_{rater}_blinded.md"]


def as_json(res: Result) -> dict:
    assert res.out.strip(), f"no JSON on stdout (exit {res.code}): {res.err}"
    return json.loads(res.out)


# --------------------------------------------------------------------------- environments


def git_only_bin(tmp: Path) -> Path:
    """A PATH directory holding git and nothing else."""
    bin_dir = tmp / "git-only-bin"
    bin_dir.mkdir(exist_ok=True)
    if not (bin_dir / "git").exists():
        (bin_dir / "git").symlink_to(GIT)
    return bin_dir


@pytest.fixture
def bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """PATH is git only, no virtual environment is active: what a commit from a plain terminal
    (or an editor started from the desktop) sees."""
    path = str(git_only_bin(tmp_path))
    monkeypatch.setenv("PATH", path)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    for name in ("aoven-git", "python3", "python", "pre-commit"):
        assert shutil.which(name) is None, name
    return path


def make_venv(where: Path, *, with_aoven_git: bool) -> Path:
    """A real virtual environment (no pip, to stay fast). With aoven-git: it sees the packages of
    the interpreter running the tests (aoven-git and its dependencies are installed there);
    without: a bare Python.

    `system_site_packages` alone is not enough: when the tests themselves run inside a virtual
    environment (what the README's install commands make), it would give the new environment the
    *base* interpreter's packages, which need not hold click, GitPython or aoven-git. So the
    running interpreter's own site directories are added by a `.pth` file (processed like
    site-packages, so an editable install's own `.pth` works too)."""
    venv.EnvBuilder(system_site_packages=False, with_pip=False, symlinks=True).create(where)
    python = where / "bin" / "python"
    assert python.exists()
    if with_aoven_git:
        site_dirs = [*site.getsitepackages()]
        if site.ENABLE_USER_SITE:
            site_dirs.append(site.getusersitepackages())
        ask = "import sysconfig; print(sysconfig.get_path('purelib'))"
        purelib = subprocess.run([str(python), "-c", ask], capture_output=True, text=True,
                                 check=True).stdout.strip()
        Path(purelib, "_tests_parent_site.pth").write_text(
            f"import site; list(map(site.addsitedir, {site_dirs!r}))\n")
    return python


def shim(bin_dir: Path, name: str, command: str) -> None:
    """An executable on PATH, as pip's console scripts are."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / name
    script.write_text(f"#!/bin/sh\n{command}\n")
    script.chmod(0o755)


# --------------------------------------------------------------------------- one repository


def study_repo(tmp: Path) -> GitRepo:
    """A study repository as the lead leaves it: plan and responses committed (hook not installed)."""
    repo = GitRepo(tmp / "study")
    assert run_cli("init", cwd=repo.path).code == 0
    for name in ("test_a", "test_b", "test_b_stripped"):
        shutil.copytree(EXAMPLE / name, repo.path / STUDY / name)
    repo.commit("plan and responses", author=LEAD)
    return repo


def commit(repo: GitRepo, message: str, *paths: str, who: str = "cto",
           env: dict[str, str] | None = None, no_verify: bool = False) -> subprocess.CompletedProcess[str]:
    """A real `git commit` (the installed hook runs unless no_verify) as `who`."""
    name, email = PEOPLE[who]
    full = {**os.environ, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email, **(env or {})}
    if paths:
        subprocess.run(["git", "add", "-A", "--", *paths], cwd=repo.path, check=True, env=full)
    args = ["git", "commit", "-q", *(["--no-verify"] if no_verify else []), "-m", message]
    return subprocess.run(args, cwd=repo.path, capture_output=True, text=True, env=full, check=False)


def premature_score(repo: GitRepo) -> str:
    """Stage CTO's plaintext while no one has sealed: a commit the hook must refuse, which proves
    that aoven-git really ran."""
    shutil.copy(EXAMPLE / "scores_cto.md", repo.path / STUDY / "scores_cto.md")
    return f"{STUDY}/scores_cto.md"


def assert_checked_and_refused(proc: subprocess.CompletedProcess[str], repo: GitRepo, head: str) -> None:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "aoven-git pre-commit: commit refused:" in proc.stderr
    assert "required rater(s) logician have not sealed an overlapping pass in HEAD" in proc.stderr
    assert repo.git("rev-parse", "HEAD") == head


def test_hook_runs_with_the_recorded_python_on_a_path_without_aoven_git(
        tmp_path: Path, bare_path: str) -> None:
    repo = study_repo(tmp_path)
    res = run_cli("install-hook", cwd=repo.path)
    assert res.code == 0, res.output
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    assert hook.read_text() == HOOK_SCRIPT == (ROOT / "hooks" / "pre-commit").read_text()
    assert repo.git("config", "--get", PYTHON_KEY) == sys.executable
    assert f"the hook runs aoven-git with {sys.executable}, recorded as git config {PYTHON_KEY}" in res.out

    head = repo.git("rev-parse", "HEAD")
    path = premature_score(repo)
    assert_checked_and_refused(commit(repo, "cto scores", path), repo, head)
    repo.git("reset", "-q")
    (repo.path / path).unlink()
    # control: a commit the rules allow goes through the same hook
    repo.write("notes.txt", "kick-off on Monday\n")
    proc = commit(repo, "notes", "notes.txt", who="lead")
    assert proc.returncode == 0, proc.stderr
    assert repo.git("log", "-1", "--format=%s") == "notes"


def test_hook_without_any_aoven_git_refuses_and_names_the_fix(tmp_path: Path, bare_path: str) -> None:
    """The recorded environment was deleted, and the only python3 on PATH is a bare virtual
    environment without aoven-git: the commit is refused with the fix, not `No module named`."""
    repo = study_repo(tmp_path)
    gone = make_venv(tmp_path / "deleted-env", with_aoven_git=True)
    proc = subprocess.run([str(gone), "-m", "aoven_git", "install-hook"], cwd=repo.path, capture_output=True,
                          text=True, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert repo.git("config", "--get", PYTHON_KEY) == str(gone)
    shutil.rmtree(tmp_path / "deleted-env")
    bare = make_venv(tmp_path / "bare-env", with_aoven_git=False)
    env = {"PATH": f"{bare.parent}{os.pathsep}{bare_path}", "PYTHONPATH": ""}
    check = subprocess.run(["python3", "-c", "import aoven_git"], env={**os.environ, **env}, cwd=tmp_path,
                           capture_output=True, text=True, check=False)
    assert check.returncode == 1 and "No module named 'aoven_git'" in check.stderr  # a real python3, without

    head = repo.git("rev-parse", "HEAD")
    repo.write("notes.txt", "x\n")
    proc = commit(repo, "notes", "notes.txt", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.startswith(NOT_FOUND), proc.stderr
    assert f"recorded by `aoven-git install-hook` ({gone}) cannot run aoven-git any more." in proc.stderr
    assert FIX in proc.stderr
    assert "No module named" not in proc.stderr and "Traceback" not in proc.stderr
    assert repo.git("rev-parse", "HEAD") == head

    # the fix as the message says it: install-hook from an environment that has aoven-git
    assert run_cli("install-hook", cwd=repo.path).code == 0
    proc = commit(repo, "notes", env={"PATH": env["PATH"]})
    assert proc.returncode == 0, proc.stderr


def test_hook_falls_back_to_aoven_git_on_path_then_python3(tmp_path: Path, bare_path: str) -> None:
    """No recorded Python (the hooksPath copy, or a hook installed by hand): the script finds
    `aoven-git` on PATH, else a python3 that has aoven-git; both really check the commit."""
    repo = study_repo(tmp_path)
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    shutil.copy(ROOT / "hooks" / "pre-commit", hook)
    assert os.access(hook, os.X_OK)
    assert repo.git("config", "--get", PYTHON_KEY, check=False) == ""
    head = repo.git("rev-parse", "HEAD")
    path = premature_score(repo)

    with_console_script = tmp_path / "console-bin"
    shim(with_console_script, "aoven-git", f'exec "{sys.executable}" -m aoven_git "$@"')
    proc = commit(repo, "cto scores", path, env={"PATH": f"{with_console_script}{os.pathsep}{bare_path}"})
    assert_checked_and_refused(proc, repo, head)

    env_python = make_venv(tmp_path / "env", with_aoven_git=True)
    assert not (env_python.parent / "aoven-git").exists()  # only python3 there
    proc = commit(repo, "cto scores", path, env={"PATH": f"{env_python.parent}{os.pathsep}{bare_path}"})
    assert_checked_and_refused(proc, repo, head)

    proc = commit(repo, "cto scores", path)  # neither: the clear message, no recorded Python named
    assert proc.returncode == 1 and proc.stderr.startswith(NOT_FOUND) and FIX in proc.stderr
    assert "recorded by" not in proc.stderr
    assert repo.git("rev-parse", "HEAD") == head


def test_install_hook_again_from_another_environment_updates_what_it_wrote(tmp_path: Path) -> None:
    repo = study_repo(tmp_path)
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(OLD_HOOK)  # written by an earlier aoven-git: its own, so replaced without --force
    res = run_cli("install-hook", cwd=repo.path)
    assert res.code == 0 and res.out.startswith(f"updated {hook}\n"), res.output
    assert hook.read_text() == HOOK_SCRIPT

    other = make_venv(tmp_path / "other env", with_aoven_git=True)  # a space in the path, too
    proc = subprocess.run([str(other), "-m", "aoven_git", "install-hook"], cwd=repo.path, capture_output=True,
                          text=True, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"already installed {hook}\n")
    # the environment's own python, as named: resolving the link would name the base interpreter
    assert repo.git("config", "--get", PYTHON_KEY) == str(other)
    assert f"the hook runs aoven-git with {other} (was {sys.executable})" in proc.stdout
    again = run_cli("install-hook", cwd=repo.path)
    assert again.code == 0 and repo.git("config", "--get", PYTHON_KEY) == sys.executable
    assert f"(was {other})" in again.out
    assert hook.read_text() == HOOK_SCRIPT


def test_shipped_hook_script_is_generic_and_passes_shellcheck(tmp_path: Path) -> None:
    text = (ROOT / "hooks" / "pre-commit").read_text()
    assert text == HOOK_SCRIPT
    assert text.startswith("#!/bin/sh\n")
    assert sys.executable not in text and str(ROOT) not in text and "/home/" not in text
    assert "aoven-git hook pre-commit" in text  # what install-hook recognises as its own
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (Debian package `shellcheck`; .ci/run installs it)")
    result = subprocess.run([shellcheck, "-s", "sh", str(ROOT / "hooks" / "pre-commit")], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stdout


def test_hook_never_imports_aoven_git_from_the_repository_folder(tmp_path: Path, bare_path: str) -> None:
    """A study repository holding a folder named aoven_git cannot take over the hook."""
    repo = study_repo(tmp_path)
    assert run_cli("install-hook", cwd=repo.path).code == 0
    repo.write("aoven_git/__init__.py", "raise SystemExit('repository code ran')\n")
    repo.write("aoven_git/cli.py", "raise SystemExit('repository code ran')\n")
    head = repo.git("rev-parse", "HEAD")
    path = premature_score(repo)
    proc = commit(repo, "cto scores", path)
    assert "repository code ran" not in proc.stderr
    assert_checked_and_refused(proc, repo, head)


# --------------------------------------------------------------------------- the team


class Clone(GitRepo):
    """Someone's own clone of origin (GitRepo's helpers, without `git init`)."""

    def __init__(self, path: Path, who: str) -> None:
        self.path = path
        self.who = who

    def commit_files(self, message: str, *paths: str,
                     no_verify: bool = False) -> subprocess.CompletedProcess[str]:
        return commit(self, message, *paths, who=self.who, no_verify=no_verify)

    def start_branch(self, name: str, base: str = "origin/main") -> None:
        self.git("fetch", "-q", "origin")
        self.git("checkout", "-q", "-B", name, base)

    def pull_main(self) -> None:
        self.git("checkout", "-q", "main")
        self.git("pull", "-q", "--ff-only", "origin", "main")

    def push(self, branch: str) -> None:
        self.git("push", "-q", "origin", branch)


class Team:
    """origin (bare), the lead's clone, one clone per rater and the "GitHub" clone that merges."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.origin = tmp / "origin.git"
        subprocess.run(["git", "init", "-q", "--bare", str(self.origin)], check=True)
        self.clones: dict[str, Clone] = {}

    def clone(self, who: str, *, hook: bool = True) -> Clone:
        path = self.tmp / who
        subprocess.run(["git", "clone", "-q", str(self.origin), str(path)], check=True, capture_output=True)
        repo = Clone(path, who)
        name, email = PEOPLE.get(who, LEAD)
        repo.git("config", "user.name", name)
        repo.git("config", "user.email", email)
        if hook:  # hooks are not cloned: every clone installs its own
            res = run_cli("install-hook", cwd=path)
            assert res.code == 0, res.output
            assert (path / ".git" / "hooks" / "pre-commit").read_text() == HOOK_SCRIPT
        self.clones[who] = repo
        return repo

    def lead_starts(self) -> None:
        lead = self.clone("lead")
        res = run_cli("init", cwd=lead.path)
        assert res.code == 0, res.output
        for name in ("test_a", "test_b"):
            shutil.copytree(EXAMPLE / name, lead.path / STUDY / name)
        res = run_cli("strip-markers", cwd=lead.path)
        assert res.code == 0, res.output
        for copy in sorted((EXAMPLE / "test_b_stripped").iterdir()):  # the tool's copies are the example's
            assert (lead.path / STUDY / "test_b_stripped" / copy.name).read_bytes() == copy.read_bytes()
        proc = lead.commit_files("Pre-register the plan; add the responses", ".")
        assert proc.returncode == 0, proc.stderr
        lead.git("push", "-q", "-u", "origin", "main")
        self.clone("github", hook=False)  # merges pull requests: no hook runs on GitHub

    def rater_seals(self, rater: str) -> Clone:
        """Clone, fill in both sheets, validate, seal every pass on a branch and push it."""
        repo = self.clone(rater)
        for name in score_names(rater):
            shutil.copy(EXAMPLE / name, repo.path / STUDY / name)
        res = run_cli("validate", *(f"{STUDY}/{n}" for n in score_names(rater)), cwd=repo.path)
        assert res.code == 0, res.output
        repo.start_branch(f"seal/{rater}")
        for pass_id in PASSES:
            res = run_cli("seal", "--rater", rater, "--pass", pass_id, cwd=repo.path)
            assert res.code == 0, res.output
        assert repo.git("ls-files", f"{STUDY}/scores_*") == ""  # only digests are committed
        repo.push(f"seal/{rater}")
        return repo

    def merge_pull_request(self, branch: str, *, ci: int = 0) -> str:
        """The merge button: a merge commit by the maintainer on top of origin's main, checked by
        CI (validate, verify-seal: exit `ci`) before it lands, then pushed; the branch is deleted."""
        gh = self.clones["github"]
        gh.start_branch("main")
        gh.git("merge", "-q", "--no-ff", "--no-edit", f"origin/{branch}", author=LEAD)
        assert run_cli("validate", cwd=gh.path).code == 0
        res = run_cli("verify-seal", "--format", "json", cwd=gh.path)
        assert res.code == ci, f"CI on the pull request of {branch}: {res.output}"
        gh.git("push", "-q", "origin", "main", f":{branch}")
        return gh.git("rev-parse", "HEAD")


def reconciliation_by(raters: tuple[str, ...]) -> bytes:
    """The example's reconciliation as the first `raters` leave it: everything but the table rows
    is written by the first of them; each row by its own rater."""
    out = []
    for line in (EXAMPLE / "reconciliation.md").read_bytes().splitlines(keepends=True):
        cells = [c.strip() for c in line.decode().split("|")]
        owner = cells[2] if len(cells) > 3 and cells[2] in RATERS else None
        if owner is None or owner in raters:
            out.append(line)
    return b"".join(out)


def reconcile(team: Team) -> None:
    """One shared branch; each rater pulls it, adds their own rows, commits and pushes; CI
    validates the finished file on the pull request."""
    branch = "reconcile/unblinded"
    target = f"{STUDY}/reconciliation.md"
    for k, rater in enumerate(RATERS):
        repo = team.clones[rater]
        repo.start_branch(branch, "origin/main" if k == 0 else f"origin/{branch}")
        (repo.path / target).write_bytes(reconciliation_by(RATERS[: k + 1]))
        proc = repo.commit_files(f"Reconciliation: {rater}'s rows", target)  # through the hook
        assert proc.returncode == 0, proc.stderr
        repo.push(branch)
        if k == 0:  # CI on the branch stays red until every rater of a flagged cell has a row
            res = run_cli("validate", cwd=repo.path)
            assert res.code == 1 and "logician has no row for it" in res.out, res.output
    team.merge_pull_request(branch)


def test_a_team_of_clones_runs_the_study_through_pull_requests(
        tmp_path: Path, bare_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    team = Team(tmp_path)
    team.lead_starts()
    for rater in RATERS:  # every pass of every rater sealed, pull requests open side by side
        team.rater_seals(rater)
    seal_merges = [team.merge_pull_request(f"seal/{rater}") for rater in RATERS]

    # still on their seal branch, CTO's HEAD lacks the others' seals: pull first
    cto = team.clones["cto"]
    res = run_cli("reveal", "--rater", "cto", cwd=cto.path)
    assert res.code == 1 and "(missing: logician (logician/" in res.err, res.output
    assert "pull their seals" in res.err
    for rater in RATERS:
        repo = team.clones[rater]
        repo.pull_main()
        repo.start_branch(f"reveal/{rater}")
        for pass_id in PASSES:
            res = run_cli("reveal", "--rater", rater, "--pass", pass_id, cwd=repo.path)
            assert res.code == 0, res.output
        repo.push(f"reveal/{rater}")
        team.merge_pull_request(f"reveal/{rater}")
    reconcile(team)

    # CI on a fresh clone of what was merged, on a runner with its own PATH
    monkeypatch.setenv("PATH", RUNNER_PATH)
    fresh = tmp_path / "ci"
    subprocess.run(["git", "clone", "-q", str(team.origin), str(fresh)], check=True)
    assert run_cli("validate", "--format", "github", cwd=fresh).code == 0
    verified = run_cli("verify-seal", "--format", "json", cwd=fresh)
    assert verified.code == 0, verified.output
    seals = as_json(verified)
    assert seals["status"] == "complete" and seals["violations"] == []
    assert sorted((s["rater"], s["pass"], s["kind"]) for s in seals["seals"]) == sorted(
        (r, p, "digest") for r in RATERS for p in PASSES)
    # every seal was made in its rater's clone and reached main through its own merge
    for s in seals["seals"]:
        author = subprocess.run(["git", "show", "-s", "--format=%ae", s["commit"]], cwd=fresh, text=True,
                                capture_output=True, check=True).stdout.strip()
        assert author == PEOPLE[s["rater"]][1]
        assert any(subprocess.run(["git", "merge-base", "--is-ancestor", s["commit"], m], cwd=fresh,
                                  check=False).returncode == 0 for m in seal_merges)
    report = run_cli("report", "--format", "json", "--fail-on", "inconclusive", cwd=fresh)
    assert report.code == 0, report.output
    data = as_json(report)
    assert data["verdict"] == "PASS" and data["improvement_exact"] == "139/346", data.get("reasons")
    assert data["seals"]["verified"] is True and data["not_ready"] == []
    # each reconciliation row was last written by its own rater (what attribution reads)
    blame = subprocess.run(["git", "blame", "--line-porcelain", "HEAD", "--", f"{STUDY}/reconciliation.md"],
                           cwd=fresh, text=True, capture_output=True, check=True).stdout
    rows = _blamed_rows(blame)
    assert rows and all(PEOPLE[rater][1] == email for rater, email in rows), rows
    assert {r for r, _ in rows} == set(RATERS)


def _blamed_rows(porcelain: str) -> list[tuple[str, str]]:
    """(rater named in the row, author e-mail of the commit that last wrote it) per table row."""
    out, email = [], ""
    for line in porcelain.splitlines():
        if line.startswith("author-mail "):
            email = line.split(" ", 1)[1].strip("<>")
        elif line.startswith("\t"):
            cells = [c.strip() for c in line[1:].split("|")]
            if len(cells) > 3 and cells[2] in RATERS:
                out.append((cells[2], email))
    return out


def test_a_reveal_pushed_before_a_seal_is_on_origin_is_caught(
        tmp_path: Path, bare_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Logician has sealed in their clone but not pushed yet. CTO's hook refuses the early reveal;
    forced past it with --no-verify and merged, the order can no longer be proven: verify-seal on
    origin fails as soon as Logician's seal lands."""
    team = Team(tmp_path)
    team.lead_starts()
    for rater in ("cto", "redteam"):
        team.rater_seals(rater)
        team.merge_pull_request(f"seal/{rater}")
    logician = team.clone("logician")
    for name in score_names("logician"):
        shutil.copy(EXAMPLE / name, logician.path / STUDY / name)
    logician.start_branch("seal/logician")
    for pass_id in PASSES:
        assert run_cli("seal", "--rater", "logician", "--pass", pass_id, cwd=logician.path).code == 0

    cto = team.clones["cto"]
    cto.pull_main()
    cto.start_branch("reveal/cto")
    head = cto.git("rev-parse", "HEAD")
    score = f"{STUDY}/scores_cto.md"
    proc = cto.commit_files("my scores", score)
    assert proc.returncode == 1 and "aoven-git pre-commit: commit refused:" in proc.stderr
    assert f"{score}: unsealed-readers:" in proc.stderr
    assert "required rater(s) logician have not sealed an overlapping pass in HEAD" in proc.stderr
    assert cto.git("rev-parse", "HEAD") == head
    proc = cto.commit_files("my scores", score, no_verify=True)
    assert proc.returncode == 0, proc.stderr
    early = cto.git("rev-parse", "HEAD")
    cto.push("reveal/cto")
    team.merge_pull_request("reveal/cto")  # CI: nothing is violated yet, Logician is still pending
    on_main = team.clones["github"].path
    assert as_json(run_cli("verify-seal", "--format", "json", cwd=on_main))["status"] == "pending"
    assert as_json(run_cli("report", "--format", "json", cwd=on_main))["verdict"] == "NOT-READY"

    logician.push("seal/logician")
    team.merge_pull_request("seal/logician", ci=1)  # CI fails on this pull request: red, merged anyway

    monkeypatch.setenv("PATH", RUNNER_PATH)
    fresh = tmp_path / "ci"
    subprocess.run(["git", "clone", "-q", str(team.origin), str(fresh)], check=True)
    res = run_subprocess("verify-seal", "--format", "json", cwd=fresh)
    assert res.code == 1, res.output
    found = as_json(res)
    assert found["status"] == "violated"
    assert {(v["code"], v["rater"]) for v in found["violations"]} == {("unproven-order", "logician")}
    assert all(early[:7] in v["message"] for v in found["violations"]), found["violations"]
    report = as_json(run_cli("report", "--format", "json", cwd=fresh))
    assert report["verdict"] == "NOT-READY"
    assert any("unproven-order" in r for r in report["not_ready"]), report["not_ready"]


# --------------------------------------------------------------------------- what the hook cannot see


def as_rater(repo: GitRepo, who: str) -> None:
    repo.git("config", "user.name", PEOPLE[who][0])
    repo.git("config", "user.email", PEOPLE[who][1])


def sealed_by_both(repo: GitRepo) -> None:
    """CTO and Logician seal both passes in `repo` (a single clone, for brevity)."""
    for rater in ("cto", "logician"):
        as_rater(repo, rater)
        for name, pass_id in zip(score_names(rater), PASSES, strict=True):
            shutil.copy(EXAMPLE / name, repo.path / STUDY / name)
            assert run_cli("seal", "--rater", rater, "--pass", pass_id, cwd=repo.path).code == 0


def violations(repo: GitRepo) -> set[tuple[str, str]]:
    found = as_json(run_cli("verify-seal", "--format", "json", cwd=repo.path))
    return {(v["code"], v["rater"]) for v in found["violations"]}


def test_merge_commits_and_rebases_keep_authors_a_squash_by_someone_else_does_not(tmp_path: Path) -> None:
    """A reveal merged three ways, as GitHub's merge button offers: a merge commit and a rebase keep
    CTO as the author of the commit that adds the score file; a squash committed by the lead makes
    it the lead's, which verify-seal reports as unauthorized-author."""
    repo = study_repo(tmp_path)
    sealed_by_both(repo)
    as_rater(repo, "cto")
    repo.git("checkout", "-q", "-b", "reveal/cto")
    assert run_cli("reveal", "--rater", "cto", cwd=repo.path).code == 0
    base = repo.git("rev-parse", "main")
    repo.git("checkout", "-q", "main")
    repo.write("notes.txt", "agenda\n")
    repo.commit("notes", "notes.txt", author=LEAD)  # main moved on meanwhile
    moved = repo.git("rev-parse", "HEAD")
    assert moved != base

    for way in ("merge", "rebase", "squash"):
        repo.git("checkout", "-q", "-B", "main", moved)
        if way == "merge":
            repo.git("merge", "-q", "--no-ff", "--no-edit", "reveal/cto", author=LEAD)
        elif way == "rebase":  # re-created on top of main: committer the lead, author kept
            repo.git("checkout", "-q", "-B", "rebased", "reveal/cto")
            repo.git("rebase", "-q", "main", author=LEAD)
            repo.git("checkout", "-q", "main")
            repo.git("merge", "-q", "--ff-only", "rebased")
        else:
            repo.git("merge", "-q", "--squash", "reveal/cto")
            repo.git("commit", "-q", "--no-verify", "-m", "Reveal (#3)", author=LEAD)
        added_by = repo.git("log", "-1", "--format=%ae", "--diff-filter=A", "--", f"{STUDY}/scores_cto.md")
        got = violations(repo)
        if way == "squash":
            assert added_by == LEAD[1] and got == {("unauthorized-author", "cto")}, got
        else:
            assert added_by == PEOPLE["cto"][1] and got == set(), (way, got)


def test_commits_made_without_the_hook_are_caught_by_verify_seal(tmp_path: Path) -> None:
    """merge, cherry-pick, revert, rebase and am make commits without running pre-commit: the
    installed hook never sees them, verify-seal does (docs/workflow.md, "What the hook cannot see")."""
    repo = study_repo(tmp_path)
    assert run_cli("install-hook", cwd=repo.path).code == 0
    sealed_by_both(repo)
    as_rater(repo, "cto")
    assert run_cli("reveal", "--rater", "cto", cwd=repo.path).code == 0
    base = repo.git("rev-parse", "HEAD")
    score = f"{STUDY}/scores_cto.md"
    edited = (repo.path / score).read_text().replace("| Q1 ", "| Q1  ", 1)

    # control: committed directly, the change is refused by the hook
    (repo.path / score).write_text(edited)
    proc = commit(repo, "fix a score", score)
    assert proc.returncode == 1 and f"{score}: modified-after-seal" in proc.stderr, proc.stderr
    repo.git("reset", "-q", "--hard", base)

    # the same change, made somewhere else without the hook
    repo.git("checkout", "-q", "-b", "edit")
    (repo.path / score).write_text(edited)
    assert commit(repo, "fix a score", score, no_verify=True).returncode == 0
    patch = tmp_path / "fix.patch"
    patch.write_text(repo.git("format-patch", "-1", "--stdout", "edit") + "\n")
    repo.git("checkout", "-q", "main")

    def lands(*args: str) -> None:
        repo.git("reset", "-q", "--hard", base)
        repo.git(*args)
        assert repo.git("rev-parse", "HEAD") != base  # a new commit, and no hook stopped it

    ways = {
        "merge": ("merge", "-q", "--no-ff", "--no-edit", "edit"),
        "cherry-pick": ("cherry-pick", "edit"),
        "am": ("am", "-q", str(patch)),
        "revert": ("revert", "--no-edit", base),  # takes the revealed file out again
    }
    for way, args in ways.items():
        lands(*args)
        code = "deleted-after-seal" if way == "revert" else "modified-after-seal"
        assert (code, "cto") in violations(repo), way

    repo.git("reset", "-q", "--hard", base)
    repo.write("notes.txt", "agenda\n")
    assert commit(repo, "notes", "notes.txt", who="lead").returncode == 0  # main moves on
    repo.git("checkout", "-q", "edit")
    repo.git("rebase", "-q", "main")  # replays the edit on top, again without the hook
    assert ("modified-after-seal", "cto") in violations(repo)
