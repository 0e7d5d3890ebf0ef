"""Independent time anchors (docs/sealing.md, "Independent time anchors"): RFC 3161 tokens from a
real local authority (`openssl ts` behind HTTP on 127.0.0.1), committed by `aoven-git timestamp`
and by `seal`/`reveal --timestamp`, checked offline by verify-seal."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.sealing.conftest import Study, codes, score_text
from tests.timestamp_authority import (
    CERT_PATH,
    Authorities,
    anchored_plan,
    authority_pool,
    honest_anchored_study,
    rewrite_history,
    stamp,
    start_anchored,
)


@pytest.fixture
def study(tmp_path: Path) -> Study:
    return Study(tmp_path / "study-repo")


@pytest.fixture
def authorities(tmp_path: Path) -> Iterator[Authorities]:
    yield from authority_pool(tmp_path)


def test_sealed_study_with_required_tokens_verifies_clean(study: Study, authorities: Authorities) -> None:
    authority = authorities.start("tsa")
    commits = honest_anchored_study(study, authority)
    res, data = study.verify()
    assert res.code == 0, res.output
    assert codes(data) == []
    anchored = {a["commit"] for a in data["timestamps"] if a["error"] is None}
    assert {commits["seal-cto"], commits["seal-logician"], commits["reveal-cto"]} <= anchored
    assert all(a["authority"] == authority.url and a["time"] for a in data["timestamps"])


def test_token_file_is_named_for_the_commit(study: Study, authorities: Authorities) -> None:
    authority = authorities.start("tsa")
    start_anchored(study, [authority])
    seal = study.digest_seal("cto")
    stamp(study)
    committed = study.git("show", "--name-only", "--format=", "HEAD").split()
    assert committed == [f"timestamps/{seal}.tsr"]
    assert study.git("rev-parse", "HEAD^") == seal


def test_history_rewritten_after_the_seals_is_timestamp_missing(study: Study,
                                                               authorities: Authorities) -> None:
    honest_anchored_study(study, authorities.start("tsa"))
    rewrite_history(study)
    res, data = study.verify()
    assert res.code == 1
    # the tokens still verify for the commits they name, but those are no longer the seals
    assert codes(data) == [("timestamp-missing", "cto"), ("timestamp-missing", "logician")]


def test_token_moved_from_another_commit_is_timestamp_invalid(study: Study,
                                                             authorities: Authorities) -> None:
    start_anchored(study, [authorities.start("tsa")])
    cto = study.digest_seal("cto")
    stamp(study)
    logician = study.digest_seal("logician")
    study.write(f"timestamps/{logician}.tsr", (study.path / f"timestamps/{cto}.tsr").read_bytes())
    study.by("logician", "anchor (a copy)", "timestamps")
    res, data = study.verify()
    assert res.code == 1
    assert codes(data) == [("timestamp-invalid", None), ("timestamp-missing", "logician")]
    invalid = next(v for v in data["violations"] if v["code"] == "timestamp-invalid")
    assert invalid["commit"] == logician and "Mismatch between messages" in invalid["message"]


def test_unreachable_authority_is_a_clear_error_and_commits_nothing(study: Study,
                                                                   authorities: Authorities) -> None:
    authority = authorities.start("tsa")
    start_anchored(study, [authority], urls=["http://127.0.0.1:9/tsa"])
    seal = study.digest_seal("cto")
    res = run_cli("timestamp", cwd=study.path)
    assert res.code == 3
    assert "http://127.0.0.1:9/tsa gave no token" in res.err and "Nothing was committed" in res.err
    assert study.git("rev-parse", "HEAD") == seal
    assert not (study.path / "timestamps").exists()
    assert study.git("status", "--porcelain") == ""


def test_timestamp_twice_asks_no_authority_again(study: Study, authorities: Authorities) -> None:
    authority = authorities.start("tsa")
    start_anchored(study, [authority])
    seal = study.digest_seal("cto")
    token_commit = stamp(study, seal)
    res = run_cli("timestamp", seal, cwd=study.path)
    assert res.code == 0 and "already time-stamped" in res.out
    assert study.git("rev-parse", "HEAD") == token_commit
    assert authority.requests == 1


def test_timestamp_without_authorities_is_a_plan_error(study: Study) -> None:
    seal = study.start()
    res = run_cli("timestamp", seal, cwd=study.path)
    assert res.code == 2 and "security.timestamps lists no authority" in res.err


def test_seal_and_reveal_with_timestamp_anchor_their_commits(study: Study, authorities: Authorities) -> None:
    start_anchored(study, [authorities.start("tsa")])
    for rater in ("cto", "logician"):
        study.write(Study.score_path(rater), score_text(rater))
        study.git("config", "user.email", f"{rater}@example.org")
        res = run_cli("seal", "--rater", rater, "--timestamp", cwd=study.path)
        assert res.code == 0, res.output
        assert "time-stamped" in res.out
    study.git("config", "user.email", "cto@example.org")
    res = run_cli("reveal", "--rater", "cto", "--timestamp", cwd=study.path)
    assert res.code == 0, res.output
    reveal = study.git("rev-parse", "HEAD^")
    assert study.git("show", "--name-only", "--format=", "HEAD").split() == [f"timestamps/{reveal}.tsr"]
    res, data = study.verify()
    assert codes(data) == [], res.output


def test_seal_timestamp_with_no_commit_is_refused_before_anything_is_staged(study: Study,
                                                                           authorities: Authorities) -> None:
    start_anchored(study, [authorities.start("tsa")])
    study.write(Study.score_path("cto"), score_text("cto"))
    study.git("config", "user.email", "cto@example.org")
    res = run_cli("seal", "--rater", "cto", "--timestamp", "--no-commit", cwd=study.path)
    assert res.code == 2 and "--no-commit" in res.err
    assert study.git("diff", "--cached", "--name-only") == ""


def test_required_tokens_missing_for_an_unanchored_seal(study: Study, authorities: Authorities) -> None:
    start_anchored(study, [authorities.start("tsa")])
    seal = study.digest_seal("cto")
    _, data = study.verify()
    assert codes(data) == [("timestamp-missing", "cto")]
    assert data["violations"][0]["commit"] == seal


def test_optional_tokens_missing_is_clean(study: Study, authorities: Authorities) -> None:
    start_anchored(study, [authorities.start("tsa")], required=False)
    study.digest_seal("cto")
    _, data = study.verify()
    assert codes(data) == [] and data["timestamps"] == []


def test_timestamps_settings_are_locked_at_the_first_seal(study: Study, authorities: Authorities) -> None:
    authority = authorities.start("tsa")
    start_anchored(study, [authority])
    stamp(study, study.digest_seal("cto"))
    plan = (study.path / "aoven.yaml").read_text()
    study.write("aoven.yaml", plan.replace("required: true", "required: false"))
    study.by("lead", "relax the anchors", "aoven.yaml")
    _, data = study.verify()
    assert ("plan-changed-after-seal", None) in codes(data)


def test_required_without_authorities_is_a_plan_error(study: Study) -> None:
    plan = anchored_plan([], required=True)
    assert "authorities: []" in plan
    study.write("aoven.yaml", plan)
    res = run_cli("check-plan", cwd=study.path)
    assert res.code == 2 and "security.timestamps.required needs at least one authority" in res.err


def test_report_lists_each_anchor_with_its_authority_and_time(study: Study, authorities: Authorities) -> None:
    authority = authorities.start("tsa")
    commits = honest_anchored_study(study, authority)
    res = run_cli("report", "--format", "json", cwd=study.path)
    data = json.loads(res.out)
    anchors = data["seals"]["timestamps"]
    assert {a["commit"] for a in anchors} == {commits[k] for k in commits if k != "plan"}
    assert all(a["authority"] == authority.url and a["error"] is None for a in anchors)
    res = run_cli("report", "--format", "markdown", cwd=study.path)
    assert "**Time anchors** (RFC 3161 tokens):" in res.out
    assert f"| `{commits['seal-cto'][:7]}" in res.out or commits["seal-cto"][:7] in res.out
    assert authority.url in res.out


def test_html_report_shows_the_time_anchors(study: Study, authorities: Authorities, tmp_path: Path) -> None:
    authority = authorities.start("tsa")
    honest_anchored_study(study, authority)
    html = tmp_path / "report.html"
    res = run_cli("report", "--format", "html", "-o", str(html), cwd=study.path)
    assert html.exists(), res.output
    text = html.read_text(encoding="utf-8")
    assert "<h3>Time anchors</h3>" in text and authority.url in text


def test_sha256_repository_tokens_cover_the_64_digit_commit_id(tmp_path: Path,
                                                               authorities: Authorities) -> None:
    path = tmp_path / "sha256-study"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "--object-format=sha256"], cwd=path, check=True)
    study = Study(path)
    start_anchored(study, [authorities.start("tsa")])
    seal = study.digest_seal("cto")
    assert len(seal) == 64
    stamp(study, seal)
    _, data = study.verify()
    assert codes(data) == []
    assert [(a["path"], a["commit"], a["error"]) for a in data["timestamps"]] == [
        (f"timestamps/{seal}.tsr", seal, None)]


def _sealed_blind_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                        authorities: Authorities) -> tuple[Any, Path]:
    """The blind study of tests/test_blind_e2e.py with required anchors: blinded, every seal
    anchored, the hook installed; the study and the key file."""
    from aoven_git.blinding import parse_key
    from tests import test_blind_e2e as e2e

    authority = authorities.start("tsa")
    old = "security: {require_signed: false, allowed_signers: null}"
    monkeypatch.setattr(e2e, "PLAN", e2e.PLAN.replace(old, (
        "security: {require_signed: false, allowed_signers: null, timestamps: "
        f'{{authorities: [{{url: "{authority.url}", certificate: {CERT_PATH}}}], required: true}}}}')))
    s = e2e.BlindStudy(tmp_path / "repo", monkeypatch)
    s.write(CERT_PATH, authority.ca.cert.read_bytes())
    s.start()  # commits the plan and the certificate, installs the hook
    key_file = tmp_path / "keys" / "hidden.json"
    assert s.run("lead", "blind", "--pass", "hidden", "--key-out", str(key_file)).code == 0
    key = parse_key(key_file.read_bytes(), pass_id="hidden")
    for rater in ("cto", "logician"):
        s.seal_all(rater, key)
    for seal in s.git("log", "--format=%H", "--grep=^Aoven-Seal:").split():
        assert s.run("lead", "timestamp", seal).code == 0
    code, found, _ = s.verify()
    assert found == [] and code == 0
    return s, key_file


def test_unblind_with_timestamp_anchors_the_key_commit_through_the_hook(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, authorities: Authorities) -> None:
    s, key_file = _sealed_blind_study(tmp_path, monkeypatch, authorities)
    res = s.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file), "--timestamp")
    assert res.code == 0, res.output
    unblind = s.git("rev-parse", "HEAD^")
    assert s.git("show", "--name-only", "--format=", "HEAD") == f"timestamps/{unblind}.tsr"
    code, found, data = s.verify()
    assert (code, found) == (0, [])
    assert unblind in {a["commit"] for a in data["timestamps"] if a["error"] is None}


def test_unanchored_unblind_is_timestamp_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 authorities: Authorities) -> None:
    s, key_file = _sealed_blind_study(tmp_path, monkeypatch, authorities)
    assert s.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file)).code == 0
    code, found, data = s.verify()
    assert (code, found) == (1, [("timestamp-missing", None)])
    assert data["violations"][0]["commit"] == s.git("rev-parse", "HEAD")
    assert "unblinding of pass hidden" in data["violations"][0]["message"]


def test_seal_push_timestamp_anchors_the_pushed_seal_and_pushes_the_token(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, authorities: Authorities) -> None:
    from tests.test_push import as_, clone

    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    lead = Study(tmp_path / "lead")
    start_anchored(lead, [authorities.start("tsa")])
    lead.git("remote", "add", "origin", str(origin))
    lead.git("push", "-q", "-u", "origin", "main")
    cto = clone(origin, tmp_path / "cto")
    cto.write(cto.score_path("cto"), score_text("cto"))
    res = as_(monkeypatch, "cto", cto, "seal", "--rater", "cto", "--push", "--timestamp")
    assert res.code == 0, res.output
    seal = cto.git("rev-parse", "HEAD^")
    remote_head = subprocess.run(["git", "--git-dir", str(origin), "rev-parse", "main"], capture_output=True,
                                 text=True, check=True).stdout.strip()
    assert remote_head == cto.git("rev-parse", "HEAD")  # the token commit is on the remote too
    assert cto.git("show", "--name-only", "--format=", "HEAD") == f"timestamps/{seal}.tsr"
    _, data = cto.verify()
    assert codes(data) == []
