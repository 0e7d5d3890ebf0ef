"""Attacks on time anchors (docs/sealing.md, "Independent time anchors"): tokens that look like
anchors but prove nothing for the commit they are named for, and anchors whose clock contradicts
the order the seals claim. Each attack commits its token by hand (an attacker does not use
`aoven-git timestamp`) and asserts the exact violations; a real local authority signs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from aoven_git.timestamps import request_token
from tests.conftest import run_cli
from tests.sealing.conftest import Study, codes
from tests.timestamp_authority import Authorities, authority_pool, stamp, start_anchored


@pytest.fixture
def study(tmp_path: Path) -> Study:
    return Study(tmp_path / "study-repo")


@pytest.fixture
def authorities(tmp_path: Path) -> Iterator[Authorities]:
    yield from authority_pool(tmp_path)


def _commit_token(study: Study, commit: str, token: bytes, who: str = "cto") -> None:
    study.write(f"timestamps/{commit}.tsr", token)
    study.by(who, "time-stamp", "timestamps")


def _invalid(data: dict) -> dict:
    return next(v for v in data["violations"] if v["code"] == "timestamp-invalid")


def test_forged_token_signed_by_another_key_is_invalid(study: Study, authorities: Authorities) -> None:
    pinned = authorities.start("tsa")
    forger = authorities.start("forger", ca="forger")  # same names, another key
    start_anchored(study, [pinned])
    seal = study.digest_seal("cto")
    _commit_token(study, seal, request_token(forger.url, seal))
    res, data = study.verify()
    assert res.code == 1
    assert codes(data) == [("timestamp-invalid", None), ("timestamp-missing", "cto")]
    assert _invalid(data)["commit"] == seal and "certificate chain" in _invalid(data)["message"]


def test_token_of_an_expired_certificate_is_invalid(study: Study, authorities: Authorities) -> None:
    pinned = authorities.start("tsa")
    expired = authorities.start("expired", expired=True)  # issued by the pinned CA, expired
    start_anchored(study, [pinned])
    seal = study.digest_seal("cto")
    _commit_token(study, seal, request_token(expired.url, seal))
    _res, data = study.verify()
    assert codes(data) == [("timestamp-invalid", None), ("timestamp-missing", "cto")]
    assert "certificate has expired" in _invalid(data)["message"]


def test_timestamp_refuses_a_token_that_does_not_verify(study: Study, authorities: Authorities) -> None:
    pinned = authorities.start("tsa")
    expired = authorities.start("expired", expired=True)
    start_anchored(study, [pinned], urls=[expired.url])  # the plan's URL serves an expired key
    seal = study.digest_seal("cto")
    res = run_cli("timestamp", cwd=study.path)
    assert res.code == 1 and "does not verify" in res.err and "Nothing was committed" in res.err
    assert study.git("rev-parse", "HEAD") == seal and not (study.path / "timestamps").exists()


def test_token_over_other_data_is_invalid(study: Study, authorities: Authorities) -> None:
    pinned = authorities.start("tsa")
    start_anchored(study, [pinned])
    seal = study.digest_seal("cto")
    tree = study.git("rev-parse", f"{seal}^{{tree}}")
    _commit_token(study, seal, request_token(pinned.url, tree))  # the tree id, not the commit id
    _res, data = study.verify()
    assert codes(data) == [("timestamp-invalid", None), ("timestamp-missing", "cto")]
    assert "Mismatch between messages" in _invalid(data)["message"]


def test_token_of_an_authority_not_pinned_is_invalid(study: Study, authorities: Authorities) -> None:
    pinned = authorities.start("tsa")
    other = authorities.start("other", ca="other", subject="Other Root CA")  # honest, not in the plan
    start_anchored(study, [pinned])
    seal = study.digest_seal("cto")
    _commit_token(study, seal, request_token(other.url, seal))
    _res, data = study.verify()
    assert codes(data) == [("timestamp-invalid", None), ("timestamp-missing", "cto")]
    assert pinned.url in _invalid(data)["message"]


def test_seal_anchored_after_the_plaintext_it_must_precede_is_timestamp_order(
        study: Study, authorities: Authorities) -> None:
    start_anchored(study, [authorities.start("tsa")])
    cto = study.digest_seal("cto")
    logician = study.digest_seal("logician")
    stamp(study, logician)
    reveal = study.reveal("logician")
    stamp(study, reveal)
    time.sleep(1.1)  # tokens carry whole seconds
    stamp(study, cto)  # cto's seal is anchored only after logician's scores were public
    res, data = study.verify()
    assert res.code == 1
    assert codes(data) == [("timestamp-order", "cto")]
    assert data["violations"][0]["commit"] == cto


def test_tokens_in_order_are_not_timestamp_order(study: Study, authorities: Authorities) -> None:
    start_anchored(study, [authorities.start("tsa")])
    cto = study.digest_seal("cto")
    stamp(study, cto)
    logician = study.digest_seal("logician")
    stamp(study, logician)
    stamp(study, study.reveal("logician"))
    stamp(study, study.reveal("cto"))
    res, data = study.verify()
    assert codes(data) == [], res.output


def test_file_under_timestamps_that_is_not_a_token_is_invalid(study: Study,
                                                              authorities: Authorities) -> None:
    start_anchored(study, [authorities.start("tsa")])
    seal = study.digest_seal("cto")
    stamp(study, seal)
    _commit_token(study, "f" * 40, b"not a token")
    _, data = study.verify()
    assert codes(data) == [("timestamp-invalid", None)]
    assert "not a time-stamp response" in _invalid(data)["message"]


def test_hook_refuses_a_changed_token(study: Study, authorities: Authorities) -> None:
    start_anchored(study, [authorities.start("tsa")])
    seal = study.digest_seal("cto")
    stamp(study, seal)
    study.write(f"timestamps/{seal}.tsr", b"replaced")
    study.git("add", "timestamps")
    res = run_cli("hook", "pre-commit", cwd=study.path)
    assert res.code == 1
    assert f"timestamps/{seal}.tsr: timestamp-changed" in res.err and "(changed here)" in res.err


def test_hook_refuses_a_deleted_token(study: Study, authorities: Authorities) -> None:
    start_anchored(study, [authorities.start("tsa")])
    seal = study.digest_seal("cto")
    stamp(study, seal)
    study.git("rm", "-q", f"timestamps/{seal}.tsr")
    res = run_cli("hook", "pre-commit", cwd=study.path)
    assert res.code == 1 and "timestamp-changed" in res.err and "(deleted here)" in res.err


def test_hook_allows_a_new_token(study: Study, authorities: Authorities) -> None:
    authority = authorities.start("tsa")
    start_anchored(study, [authority])
    seal = study.digest_seal("cto")
    study.write(f"timestamps/{seal}.tsr", request_token(authority.url, seal))
    study.git("add", "timestamps")
    res = run_cli("hook", "pre-commit", cwd=study.path)
    assert res.code == 0, res.output


def test_a_rejection_committed_as_a_token_is_invalid(study: Study, authorities: Authorities) -> None:
    start_anchored(study, [authorities.start("tsa")])
    seal = study.digest_seal("cto")
    _commit_token(study, seal, bytes.fromhex("30053003020102"))  # PKIStatus rejection, no token
    _, data = study.verify()
    assert codes(data) == [("timestamp-invalid", None), ("timestamp-missing", "cto")]
    assert "no token in the response" in _invalid(data)["message"]
