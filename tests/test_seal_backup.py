"""Lost or edited sheets: `seal` keeps a copy of the sealed bytes outside the work tree, `reveal`
says what happened to the sheet (with the difference) and `reveal --restore` writes the copy back
and reveals (docs/sealing.md, "Lost or edited sheets"). Real repositories, the real CLI, the hook
installed."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from aoven_git.seals import parse_seal, sha256
from tests.conftest import Result, run_cli
from tests.sealing.conftest import PEOPLE, Study, score_text

EDIT = ("| Q1 | A | 1 | 2 | 3 |", "| Q1 | A | 0 | 2 | 2 |")


def as_(monkeypatch: pytest.MonkeyPatch, who: str, s: Study, *args: str) -> Result:
    name, email = PEOPLE[who]
    for var, value in (("GIT_AUTHOR_NAME", name), ("GIT_AUTHOR_EMAIL", email),
                       ("GIT_COMMITTER_NAME", name), ("GIT_COMMITTER_EMAIL", email)):
        monkeypatch.setenv(var, value)
    return run_cli(*args, cwd=s.path)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "aoven-home"
    monkeypatch.setenv("AOVEN_GIT_HOME", str(path))
    return path


@pytest.fixture
def sealed(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Study:
    """cto and logician have both sealed with `aoven-git seal`, the hook installed."""
    s = Study(tmp_path / "study-repo")
    s.start()
    assert as_(monkeypatch, "lead", s, "install-hook").code == 0
    for rater, scores in (("cto", (1, 2)), ("logician", (2, 2))):
        s.write(s.score_path(rater), score_text(rater, scores))
        res = as_(monkeypatch, rater, s, "seal", "--rater", rater)
        assert res.code == 0, res.output
    return s


def snapshot(s: Study) -> tuple[str, str, bytes | None]:
    path = s.path / s.score_path("cto")
    return (s.git("rev-parse", "HEAD"), s.git("status", "--porcelain", "--untracked-files=all"),
            path.read_bytes() if path.exists() else None)


def digest_of(s: Study, rater: str) -> str:
    parsed = parse_seal((s.path / s.seal_path(rater)).read_bytes())
    assert not isinstance(parsed, tuple)
    return parsed.digest


def copies(home: Path, rater: str) -> list[Path]:
    return sorted(p for p in (home / "sealed").glob(f"*/{rater}/*/*.md") if ".edited-" not in p.name)


def test_seal_keeps_the_sealed_bytes_outside_the_repository(sealed: Study, home: Path) -> None:
    s = sealed
    [copy] = copies(home, "cto")
    root = s.git("rev-list", "--max-parents=0", "HEAD")
    assert copy == home / "sealed" / root[:16] / "cto" / "unblinded_main" / f"{digest_of(s, 'cto')}.md"
    assert copy.read_bytes() == (s.path / s.score_path("cto")).read_bytes()
    assert sha256(copy.read_bytes()) == digest_of(s, "cto")
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600 and stat.S_IMODE(copy.parent.stat().st_mode) == 0o700
    assert s.path not in copy.parents
    assert "aoven-home" not in s.git("ls-files")


def test_seal_says_where_the_copy_is(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = Study(tmp_path / "repo")
    s.start()
    s.write(s.score_path("cto"), score_text("cto"))
    res = as_(monkeypatch, "cto", s, "seal", "--rater", "cto")
    assert res.code == 0 and f"A copy of the sealed bytes is kept at {copies(home, 'cto')[0]}" in res.out


def test_seal_stands_when_the_copy_cannot_be_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the home folder should be")
    monkeypatch.setenv("AOVEN_GIT_HOME", str(blocked))
    s = Study(tmp_path / "repo")
    s.start()
    s.write(s.score_path("cto"), score_text("cto"))
    res = as_(monkeypatch, "cto", s, "seal", "--rater", "cto")
    assert res.code == 0, res.output
    assert "could not keep a copy of the sealed sheet" in res.err
    assert s.git("show", "--name-only", "--format=", "HEAD") == s.seal_path("cto")


def test_edited_sheet_reveal_refuses_with_the_difference(sealed: Study,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    s = sealed
    path = s.path / s.score_path("cto")
    path.write_text(path.read_text().replace(*EDIT))
    before = snapshot(s)
    res = as_(monkeypatch, "cto", s, "reveal", "--rater", "cto")
    assert res.code == 1
    assert "study/scores_cto.md changed since it was sealed" in res.err
    assert f"-{EDIT[0]}" in res.err and f"+{EDIT[1]}" in res.err
    assert "`aoven-git reveal --rater cto --restore`" in res.err
    assert snapshot(s) == before


def test_restore_writes_the_sealed_bytes_back_and_reveals(sealed: Study, home: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    s = sealed
    path = s.path / s.score_path("cto")
    original = path.read_bytes()
    edited = original.replace(EDIT[0].encode(), EDIT[1].encode())
    path.write_bytes(edited)
    res = as_(monkeypatch, "cto", s, "reveal", "--rater", "cto", "--restore")
    assert res.code == 0, res.output
    assert "restored study/scores_cto.md from the copy kept at seal" in res.out
    assert path.read_bytes() == original
    assert s.git("show", "--name-only", "--format=", "HEAD") == s.score_path("cto")
    assert sha256(s.git("show", f"HEAD:{s.score_path('cto')}").encode() + b"\n") == digest_of(s, "cto")
    [kept] = [p for p in (home / "sealed").glob("*/cto/*/*.md") if ".edited-" in p.name]
    assert kept.read_bytes() == edited and f"kept at {kept}" in res.out
    res, data = s.verify()
    assert data["violations"] == [], res.output


def test_lost_sheet_is_restored_and_revealed(sealed: Study, monkeypatch: pytest.MonkeyPatch) -> None:
    s = sealed
    path = s.path / s.score_path("cto")
    original = path.read_bytes()
    path.unlink()
    before = snapshot(s)
    res = as_(monkeypatch, "cto", s, "reveal", "--rater", "cto")
    assert res.code == 1 and "study/scores_cto.md is missing" in res.err and "--restore" in res.err
    assert snapshot(s) == before
    res = as_(monkeypatch, "cto", s, "reveal", "--rater", "cto", "--restore")
    assert res.code == 0, res.output
    assert path.read_bytes() == original
    assert s.git("show", "--name-only", "--format=", "HEAD") == s.score_path("cto")


def test_without_a_copy_the_sheet_can_only_be_withdrawn(sealed: Study, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    s = sealed
    monkeypatch.setenv("AOVEN_GIT_HOME", str(tmp_path / "another-machine"))
    path = s.path / s.score_path("cto")
    path.write_text(path.read_text().replace(*EDIT))
    before = snapshot(s)
    for args in ((), ("--restore",)):
        res = as_(monkeypatch, "cto", s, "reveal", "--rater", "cto", *args)
        assert res.code == 1
        assert "no copy of the sealed bytes was kept on this machine" in res.err
        assert "withdrawals:" in res.err and "withdrawn" in res.err
        assert snapshot(s) == before


def test_attack_an_edited_copy_is_never_restored(sealed: Study, home: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Changing the kept copy does not change the seal: a copy whose bytes miss the digest is no
    copy, so --restore cannot smuggle new scores into a reveal."""
    s = sealed
    [copy] = copies(home, "cto")
    copy.write_bytes(copy.read_bytes().replace(EDIT[0].encode(), EDIT[1].encode()))
    (s.path / s.score_path("cto")).unlink()
    before = snapshot(s)
    res = as_(monkeypatch, "cto", s, "reveal", "--rater", "cto", "--restore")
    assert res.code == 1 and "no copy of the sealed bytes was kept" in res.err
    assert snapshot(s) == before


def test_restore_still_waits_for_every_required_seal(tmp_path: Path, home: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    s = Study(tmp_path / "repo")
    s.start()
    s.write(s.score_path("cto"), score_text("cto"))
    assert as_(monkeypatch, "cto", s, "seal", "--rater", "cto").code == 0
    (s.path / s.score_path("cto")).unlink()
    before = snapshot(s)
    res = as_(monkeypatch, "cto", s, "reveal", "--rater", "cto", "--restore")
    assert res.code == 1 and "not every required rater has sealed" in res.err
    assert snapshot(s) == before  # nothing restored while the reveal is refused


def test_restore_of_an_intact_sheet_is_a_plain_reveal(sealed: Study, home: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    s = sealed
    res = as_(monkeypatch, "cto", s, "reveal", "--rater", "cto", "--restore")
    assert res.code == 0 and "restored" not in res.out
    assert not [p for p in (home / "sealed").rglob("*.edited-*")]
