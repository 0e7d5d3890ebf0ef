"""Where `blind` writes its key by default: `$AOVEN_GIT_HOME/keys/` when that is set, the one home
aoven-git keeps outside repositories (docs/commands.md, "Environment"; docs/blinding.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aoven_git.blinding import BlindKey, parse_key
from tests.test_blind_e2e import BlindStudy


def test_blind_key_default_follows_aoven_git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AOVEN_GIT_HOME", str(tmp_path / "aoven-home"))
    study = BlindStudy(tmp_path / "repo", monkeypatch)
    study.start()
    res = study.run("lead", "blind", "--pass", "hidden")
    assert res.code == 0, res.output
    key_file = tmp_path / "aoven-home" / "keys" / "repo-hidden.json"
    assert str(key_file) in res.out
    assert isinstance(parse_key(key_file.read_bytes(), pass_id="hidden"), BlindKey)
    assert key_file.stat().st_mode & 0o077 == 0
    assert not (tmp_path / "home" / ".aoven-git").exists()  # nothing under HOME
