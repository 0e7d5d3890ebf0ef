"""The verification cache of time-stamp tokens (docs/sealing.md, "The verification cache"): a
warm verify-seal verifies no token again and says exactly what a cold one says, and nothing a
change could affect is ever answered from the cache — another token blob, another commit, other
certificates, another secret (a cache planted or copied in), a corrupt file. Real repositories,
the real local authority; a spy on `verify_token` counts what was verified."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from aoven_git import anchors
from aoven_git.gitio import git_dir
from aoven_git.sealing import verify
from aoven_git.timestamp_cache import FILE, FORMAT, TimestampCache, pinned_digest
from aoven_git.timestamps import request_token
from tests.conftest import run_cli
from tests.sealing.conftest import Study, codes
from tests.timestamp_authority import (
    CERT_PATH,
    Authorities,
    Authority,
    authority_pool,
    honest_anchored_study,
    start_anchored,
)


@pytest.fixture
def study(tmp_path: Path) -> Study:
    return Study(tmp_path / "study-repo")


@pytest.fixture
def authorities(tmp_path: Path) -> Iterator[Authorities]:
    yield from authority_pool(tmp_path)


@pytest.fixture
def verified(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the tokens verify-seal verified in full (not answered from the cache)."""
    seen: list[str] = []
    real = anchors.verify_token

    def spy(path: str, *args: Any) -> Any:
        seen.append(path)
        return real(path, *args)

    monkeypatch.setattr(anchors, "verify_token", spy)
    return seen


def _cache_file(study: Study) -> Path:
    return study.path / ".git" / FILE


def _tokens(data: dict) -> list[str]:
    return sorted(a["path"] for a in data["timestamps"])


def _stable(data: dict) -> dict:
    return {k: v for k, v in data.items() if k != "git_calls"}


def test_warm_verify_verifies_no_token_again_and_says_the_same(
        study: Study, authorities: Authorities, verified: list[str]) -> None:
    honest_anchored_study(study, authorities.start("tsa"))
    res, cold = study.verify()
    assert res.code == 0 and codes(cold) == []
    assert sorted(verified) == _tokens(cold) and len(verified) == 4
    verified.clear()
    res, warm = study.verify()
    assert res.code == 0 and verified == []
    assert _stable(warm) == _stable(cold)  # the same anchors, authorities and times


def test_cache_lives_in_the_git_dir_not_the_work_tree(study: Study, authorities: Authorities) -> None:
    honest_anchored_study(study, authorities.start("tsa"))
    study.verify()
    assert git_dir(study.path) == study.path / ".git"
    doc = json.loads(_cache_file(study).read_text())
    assert doc["format"] == FORMAT and len(doc["entries"]) == 4
    assert study.git("status", "--porcelain", "--ignored") == ""


def _forged(study: Study, authorities: Authorities) -> tuple[Authority, str, str]:
    """A study pinning `tsa` whose cto seal carries a token signed by a forger's key: (the pinned
    authority, the seal, the forged token's blob id)."""
    pinned = authorities.start("tsa")
    forger = authorities.start("forger", ca="forger")
    start_anchored(study, [pinned])
    seal = study.digest_seal("cto")
    study.write(f"timestamps/{seal}.tsr", request_token(forger.url, seal))
    study.by("cto", "time-stamp", "timestamps")
    return pinned, seal, study.git("rev-parse", f"HEAD:timestamps/{seal}.tsr")


def test_planted_entry_claiming_a_forged_token_valid_is_still_timestamp_invalid(
        study: Study, authorities: Authorities, verified: list[str]) -> None:
    pinned, seal, blob = _forged(study, authorities)
    # the attacker knows the key (blob, commit, certificates, version) but not this user's secret
    cache = TimestampCache(_cache_file(study), os.urandom(32))
    cache.stamp = TimestampCache.open(study.path / ".git").stamp
    digest = pinned_digest([(pinned.url, (study.path / CERT_PATH).read_bytes())])
    cache.put(cache.key(blob, seal, digest), pinned.url, datetime(2020, 1, 1, tzinfo=UTC))
    cache.save()
    assert len(json.loads(_cache_file(study).read_text())["entries"]) == 1
    res, data = study.verify()
    assert res.code == 1
    assert codes(data) == [("timestamp-invalid", None), ("timestamp-missing", "cto")]
    assert verified == [f"timestamps/{seal}.tsr"]  # verified in full, not answered by the entry


def test_invalid_verdicts_are_never_cached(study: Study, authorities: Authorities,
                                           verified: list[str]) -> None:
    _forged(study, authorities)
    study.verify()
    study.verify()
    assert len(verified) == 2  # verified on every run
    assert not _cache_file(study).exists() or json.loads(_cache_file(study).read_text())["entries"] == {}


def test_same_token_blob_named_for_another_commit_misses_the_cache(
        study: Study, authorities: Authorities) -> None:
    commits = honest_anchored_study(study, authorities.start("tsa"))
    study.verify()  # the token of cto's seal is now cached as valid for that commit
    token = (study.path / "timestamps" / f"{commits['seal-cto']}.tsr").read_bytes()
    study.write(f"timestamps/{commits['reveal-cto']}.2.tsr", token)  # same blob, another name
    study.by("lead", "moved token", "timestamps")
    res, data = study.verify()
    assert res.code == 1 and codes(data) == [("timestamp-invalid", None)]
    bad = [a for a in data["timestamps"] if a["error"]]
    assert [a["path"] for a in bad] == [f"timestamps/{commits['reveal-cto']}.2.tsr"]


def test_other_pinned_certificates_miss_the_cache(study: Study, authorities: Authorities) -> None:
    commits = honest_anchored_study(study, authorities.start("tsa"))
    res, _ = study.verify()
    assert res.code == 0
    other = authorities.ca("other", "Other Root CA")
    study.write(CERT_PATH, other.cert.read_bytes())  # what the plan pins, at a later commit
    at = study.by("lead", "another certificate", "keys")
    report = verify(study.path, "aoven.yaml")
    assert report.plan is not None
    cache = TimestampCache.open(study.path / ".git")
    judged = anchors.read_anchors(study.path, report.plan, study.git("rev-parse", "HEAD"), at, cache)
    assert judged and all(a.error and "certificate chain" in a.error for a in judged)
    assert commits["seal-cto"] in {a.commit for a in judged}


def test_cache_of_another_user_or_version_is_not_trusted(
        study: Study, authorities: Authorities, verified: list[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    honest_anchored_study(study, authorities.start("tsa"))
    study.verify()
    verified.clear()
    monkeypatch.setenv("AOVEN_GIT_HOME", str(tmp_path / "another-user"))  # another secret
    res, _ = study.verify()
    assert res.code == 0 and len(verified) == 4
    verified.clear()
    monkeypatch.setattr("aoven_git.timestamp_cache.__version__", "999.0")  # another aoven-git
    res, _ = study.verify()
    assert res.code == 0 and len(verified) == 4


@pytest.mark.parametrize("content", [
    b"\x00\xffnot json", b'{"format": "x", "entries": {}}', b"[]",
    b'{"format": "aoven-git timestamp cache 1", "entries": {"k": 7, "j": ["a", "b", "c"]}}'])
def test_corrupt_or_foreign_cache_file_is_ignored_and_rewritten(
        study: Study, authorities: Authorities, verified: list[str], content: bytes) -> None:
    honest_anchored_study(study, authorities.start("tsa"))
    _cache_file(study).parent.mkdir(parents=True, exist_ok=True)
    _cache_file(study).write_bytes(content)
    res, data = study.verify()
    assert res.code == 0 and codes(data) == [] and len(verified) == 4
    doc = json.loads(_cache_file(study).read_text())
    assert doc["format"] == FORMAT and len(doc["entries"]) == 4


def test_cache_that_cannot_be_written_still_verifies(study: Study, authorities: Authorities,
                                                     verified: list[str]) -> None:
    honest_anchored_study(study, authorities.start("tsa"))
    (study.path / ".git" / "aoven-git").write_text("a file where the cache folder would be\n")
    for _ in range(2):
        res, data = study.verify()
        assert res.code == 0 and codes(data) == []
    assert len(verified) == 8


def test_linked_work_tree_finds_its_git_dir(study: Study, authorities: Authorities,
                                            tmp_path: Path) -> None:
    honest_anchored_study(study, authorities.start("tsa"))
    linked = tmp_path / "linked"
    study.git("worktree", "add", "--detach", str(linked), "HEAD")
    found = git_dir(linked)
    assert found.is_dir() and found != linked / ".git" and (found / "HEAD").is_file()
    res = run_cli("verify-seal", cwd=linked)
    assert res.code == 0, res.output
    assert (found / FILE).is_file() and not (linked / "aoven-git").exists()


def test_sub_folder_link_and_oversized_file_are_judged_as_before(
        study: Study, authorities: Authorities) -> None:
    """The token folder is read as one tree object; a sub-folder makes it an `ls-tree` instead.
    Either way a link and a file over the size limit are unread, a sub-folder's file no token."""
    commits = honest_anchored_study(study, authorities.start("tsa"))
    seal = commits["seal-cto"]
    os.symlink(f"{seal}.tsr", study.path / "timestamps" / f"{commits['plan']}.tsr")
    study.write(f"timestamps/{commits['reveal-cto']}.2.tsr", b"\0" * (64 * 1024 + 1))
    study.by("lead", "odd files", "timestamps")
    res, flat = study.verify()
    assert res.code == 1 and codes(flat) == [("timestamp-invalid", None), ("timestamp-invalid", None)]
    odd = {a["path"]: a["error"] for a in flat["timestamps"] if a["error"]}
    assert set(odd) == {f"timestamps/{commits['plan']}.tsr", f"timestamps/{commits['reveal-cto']}.2.tsr"}
    assert all("symbolic link or larger" in e for e in odd.values())
    study.write("timestamps/old/note.tsr", b"x")
    study.by("lead", "a sub-folder", "timestamps")
    _, nested = study.verify()
    assert [a for a in nested["timestamps"] if a["path"] != "timestamps/old/note.tsr"] == flat["timestamps"]
    assert next(a["error"] for a in nested["timestamps"] if a["path"] == "timestamps/old/note.tsr") == (
        "not a token file (timestamps/<commit>.tsr)")
