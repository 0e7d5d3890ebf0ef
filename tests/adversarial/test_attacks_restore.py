"""Attacks on `reveal --restore` (docs/sealing.md, "Lost or edited sheets"): files planted where
`seal` keeps its copies under `$AOVEN_GIT_HOME`. A copy is used only when its bytes are exactly
what the seal fixed, and nothing planted there can hang or crash `reveal`. Real repositories, the
real CLI as a separate process (so a hang is a failed test, not a stuck suite)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aoven_git.model import SheetId
from aoven_git.sealed_copies import copy_path
from aoven_git.seals import parse_seal
from tests.conftest import ROOT, run_cli
from tests.sealing.conftest import PEOPLE, Study, score_text


def as_(who: str, s: Study, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """`aoven-git args` as `who` in its own process, killed after 120 s."""
    name, email = PEOPLE[who]
    env = {**os.environ, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name,
           "GIT_COMMITTER_EMAIL": email, "AOVEN_GIT_HOME": str(home),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "aoven_git", *args], cwd=s.path, env=env, text=True,
                          capture_output=True, timeout=120, check=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "aoven-home"


@pytest.fixture
def sealed(tmp_path: Path, home: Path) -> Study:
    """cto and logician sealed with `aoven-git seal`; cto's sheet then lost from the work tree."""
    s = Study(tmp_path / "study-repo")
    s.start()
    for rater, scores in (("cto", (1, 2)), ("logician", (2, 2))):
        s.write(s.score_path(rater), score_text(rater, scores))
        proc = as_(rater, s, "seal", "--rater", rater, home=home)
        assert proc.returncode == 0, proc.stderr
    return s


def kept_copy(s: Study, rater: str) -> Path:
    parsed = parse_seal((s.path / s.seal_path(rater)).read_bytes())
    assert not isinstance(parsed, tuple)
    path = copy_path(s.path, SheetId(rater, "unblinded", "main"), parsed.digest)
    assert path.is_file()
    return path


def snapshot(s: Study) -> tuple[str, str]:
    return s.git("rev-parse", "HEAD"), s.git("status", "--porcelain", "--untracked-files=all")


@pytest.fixture(autouse=True)
def _home_env(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AOVEN_GIT_HOME", str(home))


def test_a_fifo_planted_as_the_copy_neither_hangs_nor_restores(sealed: Study, home: Path) -> None:
    s = sealed
    copy = kept_copy(s, "cto")
    copy.unlink()
    os.mkfifo(copy)
    (s.path / s.score_path("cto")).unlink()
    before = snapshot(s)
    proc = as_("cto", s, "reveal", "--rater", "cto", "--restore", home=home)
    assert proc.returncode == 1 and "no copy of the sealed bytes was kept" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and snapshot(s) == before


def test_a_link_to_a_device_planted_as_the_copy_is_no_copy(sealed: Study, home: Path) -> None:
    """A link to an endless device would be read forever before its digest could reject it."""
    s = sealed
    copy = kept_copy(s, "cto")
    copy.unlink()
    copy.symlink_to("/dev/zero")
    (s.path / s.score_path("cto")).unlink()
    before = snapshot(s)
    proc = as_("cto", s, "reveal", "--rater", "cto", "--restore", home=home)
    assert proc.returncode == 1 and "no copy of the sealed bytes was kept" in proc.stderr, proc.stderr
    assert snapshot(s) == before


def test_another_raters_copy_planted_under_my_digest_is_never_restored(sealed: Study, home: Path) -> None:
    """The logician's sealed sheet planted where cto's copy lives: its bytes miss cto's digest."""
    s = sealed
    copy = kept_copy(s, "cto")
    copy.write_bytes(kept_copy(s, "logician").read_bytes())
    (s.path / s.score_path("cto")).unlink()
    before = snapshot(s)
    proc = as_("cto", s, "reveal", "--rater", "cto", "--restore", home=home)
    assert proc.returncode == 1 and "no copy of the sealed bytes was kept" in proc.stderr
    assert snapshot(s) == before


def test_a_copy_kept_under_another_repository_identity_is_restored(sealed: Study, home: Path) -> None:
    """Honest: the copy sits under another study folder of the home (the clone's root was
    rewritten); its bytes are the sealed ones, so it is restored and the reveal verifies."""
    s = sealed
    copy = kept_copy(s, "cto")
    moved = home / "sealed" / "0123456789abcdef" / copy.relative_to(copy.parents[2])
    moved.parent.mkdir(parents=True)
    copy.rename(moved)
    (s.path / s.score_path("cto")).unlink()
    proc = as_("cto", s, "reveal", "--rater", "cto", "--restore", home=home)
    assert proc.returncode == 0, proc.stderr
    assert str(moved) in proc.stdout
    res = run_cli("verify-seal", cwd=s.path)
    assert res.code == 0, res.output


def test_a_symlinked_copy_of_the_exact_bytes_is_restored(sealed: Study, home: Path, tmp_path: Path) -> None:
    """Honest: the home folder's copy is a link to a backup holding the exact sealed bytes."""
    s = sealed
    copy = kept_copy(s, "cto")
    backup = tmp_path / "backup.md"
    backup.write_bytes(copy.read_bytes())
    copy.unlink()
    copy.symlink_to(backup)
    (s.path / s.score_path("cto")).unlink()
    proc = as_("cto", s, "reveal", "--rater", "cto", "--restore", home=home)
    assert proc.returncode == 0, proc.stderr
    assert (s.path / s.score_path("cto")).read_bytes() == backup.read_bytes()
