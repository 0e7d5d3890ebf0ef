"""End to end, the way a team runs a study: one lead repository, one clone per rater.

The lead runs `aoven-git init`, commits the plan and the responses and installs the hook. Each
rater clones, installs the hook in their own clone, copies in their score files (the bundled
example's), digest-seals both passes on a branch and pushes it; the lead merges the branches in
some order. After every required seal is on main the raters reveal (again on branches the lead
merges), the lead commits the reconciliation, and verify-seal and report run on the result.

Everything goes through the real CLI and real `git commit`, so the installed pre-commit hook
(`.git/hooks/pre-commit`, a separate process) checks every commit made here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, GitRepo, Result, isolated_session, run_cli, run_subprocess

STUDY = "tests/phase2"
RATERS = ("cto", "logician", "redteam")
REQUIRED = ("cto", "logician")  # redteam is `required: false` in the plan init writes
PASSES = ("unblinded", "blinded")
LEAD = ("Study Lead", "lead@example.org")
PEOPLE = {
    "cto": ("CTO", "cto@example.org"),
    "logician": ("Logician", "logician@example.org"),
    "redteam": ("Red Team", "redteam@example.org"),
}


def score_names(rater: str) -> list[str]:
    return [f"scores_{rater}.md", f"scores_{rater}_blinded.md"]


def as_json(res: Result) -> dict:
    assert res.out.strip(), f"no JSON on stdout (exit {res.code}): {res.err}"
    return json.loads(res.out)


class Clone(GitRepo):
    """A rater's own clone of the lead repository (GitRepo's helpers, without `git init`)."""

    def __init__(self, path: Path) -> None:
        self.path = path


class Team:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.lead = GitRepo(tmp / "lead")
        self.clones: dict[str, Clone] = {}

    # -- the lead -------------------------------------------------------------------------------
    def start(self) -> None:
        res = run_cli("init", cwd=self.lead.path)
        assert res.code == 0, res.output
        study = self.lead.path / STUDY
        assert (self.lead.path / "aoven.yaml").is_file() and study.is_dir()
        for name in ("test_a", "test_b", "test_b_stripped"):
            shutil.copytree(EXAMPLE / name, study / name)
        self.lead.commit("Pre-register the plan; add the responses", author=LEAD)
        res = run_cli("install-hook", cwd=self.lead.path)
        assert res.code == 0, res.output
        hook = self.lead.path / ".git" / "hooks" / "pre-commit"
        assert hook.is_file() and os.access(hook, os.X_OK)
        for rater in RATERS:
            self.clones[rater] = self.clone(rater)

    def merge(self, branch: str) -> str:
        self.lead.git("merge", "-q", "--no-ff", "--no-edit", branch, author=LEAD)
        return self.lead.git("rev-parse", "HEAD")

    def reconcile(self) -> None:
        """Each rater commits their own rows (a row counts only when its rater wrote it), in their
        clone, with a plain `git commit` the installed hook checks; the lead merges each branch."""
        lines = (EXAMPLE / "reconciliation.md").read_text("utf-8").splitlines(keepends=True)
        delimiter = next(i for i, line in enumerate(lines) if line.startswith("|---"))
        for rater in RATERS:
            repo = self.clones[rater]
            repo.git("fetch", "-q", "origin")
            repo.git("checkout", "-q", "-B", f"reconcile/{rater}", "origin/main")
            target = repo.path / STUDY / "reconciliation.md"
            head = target.read_text("utf-8") if target.exists() else "".join(lines[: delimiter + 1])
            mine = [line for line in lines[delimiter + 1 :] if line.split("|")[2:3] == [f" {rater} "]]
            target.write_text(head + "".join(mine), "utf-8")
            repo.commit(f"{rater}'s reconciliation rows", f"{STUDY}/reconciliation.md", author=PEOPLE[rater])
            repo.git("push", "-q", "origin", f"reconcile/{rater}")
            self.merge(f"reconcile/{rater}")

    # -- a rater --------------------------------------------------------------------------------
    def clone(self, rater: str) -> Clone:
        path = self.tmp / rater
        subprocess.run(["git", "clone", "-q", str(self.lead.path), str(path)], check=True)
        repo = Clone(path)
        name, email = PEOPLE[rater]
        repo.git("config", "user.name", name)
        repo.git("config", "user.email", email)
        res = run_cli("install-hook", cwd=path)
        assert res.code == 0, res.output
        return repo

    def write_scores(self, rater: str) -> None:
        """The rater fills in their sheets locally; nobody else can see them."""
        for name in score_names(rater):
            shutil.copy(EXAMPLE / name, self.clones[rater].path / STUDY / name)

    def seal(self, rater: str, passes: tuple[str, ...] = PASSES, branch: str | None = None) -> str:
        repo = self.clones[rater]
        branch = branch or f"seal/{rater}"
        repo.git("fetch", "-q", "origin")
        repo.git("checkout", "-q", "-B", branch, "origin/main")
        for pass_id in passes:
            res = run_cli("seal", "--rater", rater, "--pass", pass_id, cwd=repo.path)
            assert res.code == 0, res.output
            assert "sha256" in res.out
        # sealing committed only the digests: the plaintext is still untracked in the clone
        assert repo.git("ls-files", f"{STUDY}/scores_{rater}*") == ""
        repo.git("push", "-q", "origin", branch)
        return branch

    def cheat_seal(self, rater: str, passes: tuple[str, ...] = PASSES) -> str:
        """What a rater does when `aoven-git seal` refuses: write the digest by hand and commit it
        past the hook (`--no-verify`)."""
        from aoven_git.model import SheetId
        from aoven_git.scorefile import set_front_matter
        from aoven_git.seals import format_seal, sha256

        repo = self.clones[rater]
        branch = f"hand-seal/{rater}"
        repo.git("fetch", "-q", "origin")
        repo.git("checkout", "-q", "-B", branch, "origin/main")
        for pass_id in passes:
            name = f"scores_{rater}.md" if pass_id == "unblinded" else f"scores_{rater}_{pass_id}.md"
            score = repo.path / STUDY / name
            score.write_bytes(set_front_matter(score.read_bytes(), nonce=f"cheat-{pass_id}"))
            seal = format_seal(sha256(score.read_bytes()), name, SheetId(rater, pass_id, "main"))
            repo.write(f"{STUDY}/seals/{name[:-3]}.sha256", seal)
            repo.git("add", "--", f"{STUDY}/seals/{name[:-3]}.sha256")
            repo.git("commit", "-q", "--no-verify", "-m", f"seal {rater} {pass_id}")
        repo.git("push", "-q", "origin", branch)
        return branch

    def reveal(self, rater: str, passes: tuple[str, ...] = PASSES, *, force: bool = False) -> str:
        repo = self.clones[rater]
        branch = f"reveal/{rater}/{'-'.join(passes)}"
        repo.git("fetch", "-q", "origin")
        repo.git("checkout", "-q", "-B", branch, "origin/main")
        for pass_id in passes:
            res = run_cli("reveal", "--rater", rater, "--pass", pass_id, *(["--force"] if force else []),
                          cwd=repo.path)
            assert res.code == 0, res.output
        repo.git("push", "-q", "origin", branch)
        return branch


def honest_history(tmp: Path, order: tuple[str, ...]) -> Team:
    team = Team(tmp)
    team.start()
    for rater in order:
        team.write_scores(rater)
        team.seal(rater)
    for rater in order:
        team.merge(f"seal/{rater}")
    for rater in order:
        team.merge(team.reveal(rater))
    team.reconcile()
    return team


ORDERS = [("cto", "logician", "redteam"), ("redteam", "logician", "cto"), ("logician", "redteam", "cto")]


@pytest.mark.parametrize("order", ORDERS, ids=lambda o: "-".join(o))
def test_honest_team_study_passes(tmp_path: Path, order: tuple[str, ...]) -> None:
    team = Team(tmp_path)
    team.start()
    lead = team.lead
    for rater in order:
        team.write_scores(rater)
        team.seal(rater)

    required_in_order = [r for r in order if r in REQUIRED]
    early, last = required_in_order[0], required_in_order[-1]
    for rater in order:
        if rater == last:
            # c. main has every seal merged so far but not `last`'s: `early` tries to publish
            _premature_reveal_is_refused(team, early, missing=last)
        team.merge(f"seal/{rater}")

    before = run_cli("verify-seal", "--format", "json", cwd=lead.path)
    assert before.code == 0 and as_json(before)["status"] == "complete", before.output

    for rater in order:
        team.merge(team.reveal(rater))
    team.reconcile()

    # d. the history is verified and the report is the example's
    res = run_cli("verify-seal", "--format", "json", cwd=lead.path)
    assert res.code == 0, res.output
    seals = as_json(res)
    assert seals["ok"] is True and seals["status"] == "complete"
    assert seals["violations"] == []
    got = sorted((s["rater"], s["pass"], s["round"], s["kind"]) for s in seals["seals"])
    assert got == sorted((r, p, "main", "digest") for r in RATERS for p in PASSES)
    # each rater acted under their own identity: every seal commit is authored by that rater
    for s in seals["seals"]:
        assert lead.git("show", "-s", "--format=%ae", s["commit"]) == PEOPLE[s["rater"]][1]

    res = run_cli("report", "--format", "json", cwd=lead.path)
    assert res.code == 0, res.output
    report = as_json(res)
    assert report["verdict"] == "PASS", report["reasons"]
    assert report["improvement_exact"] == "139/346"
    assert report["counted_dimensions"] == ["D1", "D2", "D3", "D4", "D5", "D6", "D8"]
    assert list(report["excluded_dimensions"]) == ["D7"]
    assert report["seals"]["verified"] is True and report["seals"]["status"] == "complete"
    assert report["validation"]["ok"] is True and report["not_ready"] == []

    html = tmp_path / "out" / "report.html"
    html.parent.mkdir()
    res = run_cli("report", "--format", "html", "-o", str(html), cwd=lead.path)
    assert res.code == 0, res.output
    text = html.read_text(encoding="utf-8")
    for chart in ("chart-means", "chart-kappa", "chart-questions"):
        assert f'id="{chart}"' in text, chart

    res = run_cli("report", "--format", "markdown", cwd=lead.path)
    assert res.code == 0, res.output
    assert "PASS" in res.out and "139/346" in res.out
    assert "NOT-READY" not in res.out
    # the lead's work tree is clean: no command left anything staged or modified
    assert lead.git("status", "--porcelain", "--untracked-files=no") == ""

    # control: the lead's hook is live too; it refuses a change to a revealed (sealed) file
    sealed = lead.path / STUDY / "scores_cto.md"
    sealed.write_text(sealed.read_text(encoding="utf-8").replace("nonce:", "nonce: x", 1), encoding="utf-8")
    proc = subprocess.run(["git", "commit", "-q", "-am", "fix a score"], cwd=lead.path, capture_output=True,
                          text=True, check=False)
    assert proc.returncode != 0 and "modified-after-seal" in proc.stderr, proc.stderr
    assert lead.git("log", "-1", "--format=%s") == "Merge branch 'reconcile/redteam'"


def _premature_reveal_is_refused(team: Team, rater: str, *, missing: str) -> None:
    repo = team.clones[rater]
    repo.git("fetch", "-q", "origin")
    repo.git("checkout", "-q", "-B", f"early/{rater}", "origin/main")
    head = repo.git("rev-parse", "HEAD")
    score = f"{STUDY}/scores_{rater}.md"

    # a plain `git add && git commit`, as a rater would type it: the installed hook refuses
    repo.git("add", "--", score)
    proc = subprocess.run(["git", "commit", "-q", "-m", "my scores"], cwd=repo.path, capture_output=True,
                          text=True, check=False)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "commit refused" in proc.stderr
    assert f"required rater(s) {missing} have not sealed an overlapping pass" in proc.stderr
    assert "then run `aoven-git reveal" in proc.stderr or "aoven-git seal" in proc.stderr
    assert repo.git("rev-parse", "HEAD") == head

    # the hook entry point itself, run as its own process on the same staged index
    hook = run_subprocess("hook", "pre-commit", cwd=repo.path)
    assert hook.code == 1, hook.output
    assert f"{score}: " in hook.err and f"required rater(s) {missing} have not sealed" in hook.err
    repo.git("reset", "-q")

    res = run_cli("reveal", "--rater", rater, cwd=repo.path)
    assert res.code == 1, res.output
    assert f"missing: {missing}" in res.err and "--force" in res.err
    assert "Traceback" not in res.output
    assert repo.git("rev-parse", "HEAD") == head
    assert repo.git("diff", "--cached", "--name-only") == ""
    assert repo.git("ls-files", f"{STUDY}/scores_*") == ""


@pytest.mark.parametrize("how", ["reveal-force", "commit-no-verify"])
def test_peeking_rater_is_caught(tmp_path: Path, how: str) -> None:
    """CTO publishes the unblinded scores before Logician has sealed; Logician seals afterwards,
    with CTO's scores readable. Everything else is honest, so exactly one violation is expected."""
    team = Team(tmp_path)
    team.start()
    lead = team.lead
    for rater in ("cto", "redteam"):
        team.write_scores(rater)
        team.merge(team.seal(rater))
    team.write_scores("logician")
    team.merge(team.seal("logician", ("blinded",)))  # only the primary pass is left to seal

    cto = team.clones["cto"]
    if how == "reveal-force":
        team.merge(team.reveal("cto", ("unblinded",), force=True))
    else:
        # what a cheater does: bypass the hook
        cto.git("fetch", "-q", "origin")
        cto.git("checkout", "-q", "-B", "cheat", "origin/main")
        cto.git("add", "--", f"{STUDY}/scores_cto.md")
        cto.git("commit", "-q", "--no-verify", "-m", "my scores")
        cto.git("push", "-q", "origin", "cheat")
        team.merge("cheat")
    assert lead.git("ls-files", f"{STUDY}/scores_cto.md") == f"{STUDY}/scores_cto.md"
    peek = lead.git("rev-parse", "HEAD")

    # `aoven-git seal` refuses: CTO's scores are readable, so a seal now proves nothing
    logician = team.clones["logician"]
    logician.git("fetch", "-q", "origin")
    logician.git("checkout", "-q", "-B", "try", "origin/main")
    refused = run_cli("seal", "--rater", "logician", cwd=logician.path)
    assert refused.code == 1 and "already in HEAD" in refused.err, refused.output
    assert logician.git("rev-parse", "HEAD") == lead.git("rev-parse", "HEAD")
    team.merge(team.cheat_seal("logician", ("unblinded",)))
    team.merge(team.reveal("cto", ("blinded",)))
    for rater in ("logician", "redteam"):
        team.merge(team.reveal(rater))
    team.reconcile()

    res = run_cli("verify-seal", "--format", "json", cwd=lead.path)
    assert res.code == 1, res.output
    seals = as_json(res)
    assert seals["ok"] is False and seals["status"] == "violated"
    assert sorted((v["code"], v["rater"]) for v in seals["violations"]) == [("visible-at-seal", "logician")]
    (violation,) = seals["violations"]
    logician_seal = next(s for s in seals["seals"] if s["rater"] == "logician" and s["pass"] == "unblinded")
    assert violation["commit"] == logician_seal["commit"]
    assert lead.git("merge-base", "--is-ancestor", peek, violation["commit"], check=False) == ""
    forced = [(f["rater"], f["pass"]) for f in seals.get("forced_reveals", [])]
    # the early reveal is read from ancestry, whether it was forced or committed past the hook
    assert forced == [("cto", "unblinded")]

    res = run_cli("verify-seal", "--format", "github", cwd=lead.path)
    assert res.code == 1, res.output
    errors = [ln for ln in res.out.splitlines() if ln.startswith("::error")]
    assert len(errors) == 1, res.out
    assert "visible-at-seal" in errors[0] and "logician" in errors[0]

    res = run_cli("report", "--format", "json", cwd=lead.path)
    assert res.code == 0, res.output
    report = as_json(res)
    assert report["verdict"] == "NOT-READY"
    assert report["seals"]["status"] == "violated"
    assert any("visible-at-seal" in r and "logician" in r for r in report["not_ready"]), report["not_ready"]

    assert run_cli("report", "--fail-on", "not-ready", cwd=lead.path).code == 1
    # NOT-READY is not a FAIL: the weaker levels let it through
    assert run_cli("report", "--fail-on", "fail", cwd=lead.path).code == 0
    assert run_cli("report", "--fail-on", "inconclusive", cwd=lead.path).code == 0


@pytest.fixture(scope="session")
def honest_lead(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lead repository of `honest_history` (clones, hooks, merges: ~340 git processes),
    built once per session (per xdist worker) for the tests that only read or clone it."""
    with isolated_session(tmp_path_factory):
        return honest_history(tmp_path_factory.mktemp("team"), ORDERS[0]).lead.path


def test_shallow_clone_cannot_be_verified_but_still_reports(tmp_path: Path, honest_lead: Path) -> None:
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{honest_lead}", str(shallow)],
                   check=True)
    assert subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=shallow, capture_output=True,
                          text=True, check=True).stdout.strip() == "true"

    res = run_cli("verify-seal", cwd=shallow)
    assert res.code == 3, res.output
    assert "fetch" in res.output and "Traceback" not in res.output
    res = run_cli("verify-seal", "--format", "json", cwd=shallow)
    assert res.code == 3, res.output
    assert [v["code"] for v in as_json(res)["violations"]] == ["shallow-history"]

    res = run_cli("report", "--format", "json", cwd=shallow)
    assert res.code == 0, res.output
    report = as_json(res)
    assert report["verdict"] == "NOT-READY"
    assert any("shallow" in r for r in report["not_ready"]), report["not_ready"]
    res = run_cli("report", "--format", "markdown", cwd=shallow)
    assert res.code == 0 and "NOT-READY" in res.out and "shallow" in res.out
    # the same files with full history: PASS (the shallow clone is the only reason)
    assert as_json(run_cli("report", "--format", "json", cwd=honest_lead))["verdict"] == "PASS"


def test_shallow_clone_report_says_not_verified_rather_than_violated(
        tmp_path: Path, demo_history: tuple[Result, Path]) -> None:
    honest = demo_history[1]  # the same honest history, built faster (`demo --keep`, once per session)
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{honest}", str(shallow)], check=True)
    report = as_json(run_cli("report", "--format", "json", cwd=shallow))
    assert report["verdict"] == "NOT-READY"
    assert report["seals"]["verified"] is False
    assert report["seals"]["status"] == "unverifiable"
    assert "violated" not in run_cli("report", cwd=shallow).out
