"""Review 4: the hook through the real pre-commit framework, against today's rules.

The framework installs aoven-git from a committed copy of this project (the session fixture of
`tests/sealing/test_pre_commit_framework.py`) and runs `aoven-git hook pre-commit` for every
`git commit`, including the commits `seal`, `reveal`, `unblind` make. The hook is meant to refuse
what verify-seal would flag at the staged commit, naming the code (docs/sealing.md, "The hook,
and what it cannot see"), and to let honest commits through. Each test ends, where it can, by
checking that verify-seal agrees with what the hook did.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from aoven_git.blinding import BlindKey, parse_key
from tests.adversarial.conftest import Lab, identity
from tests.adversarial.test_amendment_folder import FOLDER, PASS_PLAN, rescores, scores
from tests.conftest import run_cli
from tests.sealing.test_pre_commit_framework import hook_repo
from tests.test_blind_e2e import CORPUS, KEY_SEAL, PEOPLE, BlindStudy

__all__ = ["hook_repo"]

pytestmark = pytest.mark.slow

Blinded = tuple[BlindStudy, Path, BlindKey]
BOTH = ("cto", "logician")


def use_framework(repo: Path, hook: tuple[Path, str, Path], commit_as: tuple[str, str],
                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Replace the hook `install-hook` wrote by the pre-commit framework's."""
    src, rev, home = hook
    monkeypatch.setenv("PRE_COMMIT_HOME", str(home))
    (repo / ".git" / "hooks" / "pre-commit").unlink(missing_ok=True)
    subprocess.run(["git", "config", "--unset", "aoven-git.python"], cwd=repo, check=False)
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {src}\n    rev: {rev}\n    hooks:\n      - id: aoven-git\n", encoding="utf-8")
    git(repo, commit_as, "add", ".pre-commit-config.yaml")
    assert git(repo, commit_as, "commit", "-q", "--no-verify", "-m", "pre-commit config").returncode == 0
    proc = subprocess.run(["pre-commit", "install"], cwd=repo, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "pre-commit" in (repo / ".git" / "hooks" / "pre-commit").read_text()


def git(repo: Path, who: tuple[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    name, email = who
    env = {**os.environ, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env, check=False,
                          timeout=600)


def commit(repo: Path, who: tuple[str, str], message: str, *paths: str) -> subprocess.CompletedProcess[str]:
    """`git add -A paths` and a plain `git commit`: the framework's hook runs."""
    assert git(repo, who, "add", "-A", "--", *paths).returncode == 0
    return git(repo, who, "commit", "-q", "-m", message)


def refused(proc: subprocess.CompletedProcess[str], code: str) -> None:
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"commit was accepted: {out}"
    assert "aoven-git" in out and code in out, out
    assert "Traceback" not in out, out


def accepted(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stdout + proc.stderr


def head(repo: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


# --------------------------------------------------------------------------- a blind study


@pytest.fixture
def framed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hook_repo: tuple[Path, str, Path]) -> Blinded:
    """The blinded study of tests/test_blind_e2e.py, committing through the framework's hook."""
    s = BlindStudy(tmp_path / "repo", monkeypatch)
    s.start()
    use_framework(s.path, hook_repo, PEOPLE["lead"], monkeypatch)
    key_file = tmp_path / "keys" / "hidden.json"
    res = s.run("lead", "blind", "--pass", "hidden", "--key-out", str(key_file))
    assert res.code == 0, res.output
    key = parse_key(key_file.read_bytes(), pass_id="hidden")
    assert isinstance(key, BlindKey)
    return s, key_file, key


def verify(s: BlindStudy | Lab) -> tuple[int, list[tuple[str, str | None]]]:
    res = run_cli("verify-seal", "--format", "json", cwd=s.path)
    assert "Traceback" not in res.output, res.output
    data = json.loads(res.out)
    return res.code, sorted((v["code"], v["rater"]) for v in data["violations"])


def unblind_and_reveal(s: BlindStudy, key_file: Path) -> None:
    s.unblind_and_reveal(key_file, BOTH)


def test_an_honest_blind_study_commits_through_the_framework(framed: Blinded) -> None:
    """Seals, the unblinding and the reveals: every commit runs the framework's hook and passes."""
    s, key_file, key = framed
    for r in BOTH:
        s.seal_all(r, key)
    unblind_and_reveal(s, key_file)
    assert "Aoven-Unblind: hidden" in s.git("log", "--format=%B")
    assert verify(s) == (0, [])


@pytest.mark.parametrize("where", ["study/notes/hidden-key.json", "study/test_b/q9.md"])
def test_a_key_shaped_file_in_the_study_folder_before_the_seals_is_refused(
        framed: Blinded, where: str) -> None:
    """cto has sealed, logician has not; the lead commits a copy of the key in the study folder.
    verify-seal would count it as the key's plaintext (logician's later seal: visible-at-seal)."""
    s, key_file, key = framed
    s.seal_all("cto", key)
    s.write(where, key_file.read_bytes())
    before = head(s.path)
    refused(commit(s.path, PEOPLE["lead"], "notes", where), "unsealed-readers")
    assert head(s.path) == before


def test_a_key_copy_outside_the_study_folder_before_the_seals_is_refused(framed: Blinded) -> None:
    """The lead commits the key, byte for byte, at `keys/hidden.json` before logician seals.
    Once the key is committed, verify-seal reports that commit as `blind-key-leak` for logician; the
    hook, which sees the file's key shape (its format line and nonce) in the staged tree, should not
    let it in."""
    s, key_file, key = framed
    s.seal_all("cto", key)
    s.write("keys/hidden.json", key_file.read_bytes())
    proc = commit(s.path, PEOPLE["lead"], "keep the key with the repo", "keys/hidden.json")
    if proc.returncode == 0:  # let through: show that verify-seal flags it later
        s.seal_all("logician", key)
        unblind_and_reveal(s, key_file)
        _, found = verify(s)
        assert ("blind-key-leak", "logician") in found, found
    refused(proc, "logician")


@pytest.mark.parametrize("change", ["edit", "add", "delete", "key-digest"])
def test_changing_the_blind_corpus_after_blinding_is_refused(framed: Blinded, change: str) -> None:
    """Raters score the corpus the blinding commit fixed: any later change to it is
    `blind-corpus-changed`, before or after the seals."""
    s, _key_file, key = framed
    s.seal_all("cto", key)
    first = sorted(e.blind_id for e in key.entries)[0]
    item = s.path / CORPUS / f"{first}.md"
    if change == "edit":
        item.write_text(item.read_text(encoding="utf-8") + "\nOne more sentence.\n", encoding="utf-8")
    elif change == "add":
        s.write(f"{CORPUS}/zz0000000000.md", "## Question\n\nDo cats dream?\n\n## Response\n\nYes.\n")
    elif change == "delete":
        item.unlink()
    else:
        seal = s.path / KEY_SEAL
        seal.write_text(seal.read_text(encoding="utf-8").replace("# pass: hidden", "# pass: hidden\n# redo"),
                        encoding="utf-8")
    before = head(s.path)
    refused(commit(s.path, PEOPLE["lead"], f"corpus: {change}", "study"), "blind-corpus-changed")
    assert head(s.path) == before


def test_a_second_reconciliation_file_is_refused_and_a_rename_is_not(framed: Blinded) -> None:
    """After the reveals: `reconciliation.md` beside `reconciliation_main.md` is `duplicate-sheet`;
    renaming the one into the other is the same file."""
    s, key_file, key = framed
    for r in BOTH:
        s.seal_all(r, key)
    unblind_and_reveal(s, key_file)
    draft = "# Reconciliation\n\n| Cell | Rater | Justification | Consensus |\n|---|---|---|---|\n"
    s.write("study/reconciliation.md", draft)
    accepted(commit(s.path, PEOPLE["lead"], "draft", "study/reconciliation.md"))
    s.write("study/reconciliation_main.md", draft)
    refused(commit(s.path, PEOPLE["logician"], "my own file", "study/reconciliation_main.md"),
            "duplicate-sheet")
    git(s.path, PEOPLE["lead"], "reset", "-q")
    (s.path / "study/reconciliation_main.md").unlink()
    assert git(s.path, PEOPLE["lead"], "mv", "study/reconciliation.md",
               "study/reconciliation_main.md").returncode == 0
    accepted(git(s.path, PEOPLE["lead"], "commit", "-q", "-m", "rename the reconciliation"))
    assert verify(s) == (0, [])


def test_a_second_reconciliation_file_of_the_blind_pass_is_refused(framed: Blinded) -> None:
    s, key_file, key = framed
    for r in BOTH:
        s.seal_all(r, key)
    unblind_and_reveal(s, key_file)
    draft = "# Reconciliation\n\n| Cell | Rater | Justification | Consensus |\n|---|---|---|---|\n"
    s.write("study/reconciliation_hidden.md", draft)
    accepted(commit(s.path, PEOPLE["lead"], "draft", "study/reconciliation_hidden.md"))
    s.write("study/reconciliation_main_hidden.md", draft)
    second = commit(s.path, PEOPLE["lead"], "second", "study/reconciliation_main_hidden.md")
    refused(second, "duplicate-sheet")


# --------------------------------------------------------------------------- amendment re-scores


@pytest.fixture
def amended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hook_repo: tuple[Path, str, Path]) -> Lab:
    lab = Lab(tmp_path / "lab")
    lab.start(PASS_PLAN)
    use_framework(lab.path, hook_repo, identity("lead"), monkeypatch)
    return lab


def cli_seal(lab: Lab, rater: str, *extra: str) -> None:
    res = lab.cli(rater, "seal", "--rater", rater, *extra)
    assert res.code == 0, res.output


def cli_reveal(lab: Lab, rater: str, *extra: str) -> None:
    res = lab.cli(rater, "reveal", "--rater", rater, *extra)
    assert res.code == 0, res.output


def test_rescores_revealed_before_every_study_seal_are_refused(amended: Lab) -> None:
    """cto has sealed the study and both raters have sealed the re-scores, but logician has not
    sealed the study: cto's re-scores (B's D2) would be readable before logician fixes B."""
    lab = amended
    lab.write("study/scores_cto.md", scores("cto"))
    cli_seal(lab, "cto")
    for r in BOTH:
        lab.write(f"{FOLDER}/scores_{r}.md", rescores(r))
        cli_seal(lab, r, "--amendment", "d2-ruling")
    before = lab.head()
    refused(commit(lab.path, identity("cto"), "my re-scores", f"{FOLDER}/scores_cto.md"), "unsealed-readers")
    assert lab.head() == before
    res = lab.cli("cto", "reveal", "--rater", "cto", "--amendment", "d2-ruling")
    assert res.code != 0 and "logician" in res.output, res.output


def test_rescores_after_every_study_seal_commit_through_the_framework(amended: Lab) -> None:
    """The honest order: study seals, study reveals, re-score seals, re-score reveals."""
    lab = amended
    for r in BOTH:
        lab.write(f"study/scores_{r}.md", scores(r))
        cli_seal(lab, r)
    for r in BOTH:
        cli_reveal(lab, r)
    for r in BOTH:
        lab.write(f"{FOLDER}/scores_{r}.md", rescores(r))
        cli_seal(lab, r, "--amendment", "d2-ruling")
    for r in BOTH:
        cli_reveal(lab, r, "--amendment", "d2-ruling")
    assert [p for p in lab.git("ls-files", FOLDER).split() if p.endswith(".md")] == [
        f"{FOLDER}/scores_cto.md", f"{FOLDER}/scores_logician.md"]
    assert verify(lab) == (0, [])


def test_rescores_revealed_by_hand_after_every_seal_pass_the_framework(amended: Lab) -> None:
    """A plain `git commit` of a sealed re-score file (no `reveal`) once everyone has sealed both the
    study and the amendment: the hook lets the honest reveal through."""
    lab = amended
    for r in BOTH:
        lab.write(f"study/scores_{r}.md", scores(r))
        cli_seal(lab, r)
    for r in BOTH:
        cli_reveal(lab, r)
    for r in BOTH:
        lab.write(f"{FOLDER}/scores_{r}.md", rescores(r))
        cli_seal(lab, r, "--amendment", "d2-ruling")
    accepted(commit(lab.path, identity("cto"), "reveal my re-scores", f"{FOLDER}/scores_cto.md"))
    accepted(commit(lab.path, identity("logician"), "reveal my re-scores", f"{FOLDER}/scores_logician.md"))
    assert verify(lab) == (0, [])
