"""`security.require_signed`: seal and reveal commits need a good ssh signature by the rater."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from aoven_git.model import SheetId
from aoven_git.seals import format_seal, sha256
from tests.sealing.conftest import PEOPLE, Study, codes, plan, score_text

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen not installed")

SIGNED_PLAN = plan(security="{require_signed: true, allowed_signers: keys/allowed_signers}")


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for who in ("cto", "logician"):
        key = tmp_path / f"key-{who}"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", who, "-f", str(key)], check=True)
        out[who] = key
    return out


def signed_study(study: Study, keys: dict[str, Path]) -> Study:
    lines = [f"{PEOPLE[w][1]} {keys[w].with_suffix('.pub').read_text().split(' ')[0]} "
             f"{keys[w].with_suffix('.pub').read_text().split(' ')[1]}" for w in keys]
    study.write("keys/allowed_signers", "\n".join(lines) + "\n")
    study.start(SIGNED_PLAN)
    study.by("lead", "signers", "keys")
    return study


def signed_commit(study: Study, who: str, key: Path | None, message: str, path: str, content: str) -> str:
    study.write(path, content)
    study.git("add", path)
    sign = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit", "-S"] if key else ["commit"]
    study.git(*sign, "-q", "-m", message, author=PEOPLE[who])
    return study.git("rev-parse", "HEAD")


def seal_text(rater: str) -> tuple[str, str]:
    text = score_text(rater, nonce=f"n-{rater}")
    return text, format_seal(sha256(text.encode()), f"scores_{rater}.md",
                             SheetId(rater, "unblinded", "main")).decode()


def test_signed_seals_and_reveals_verify(study: Study, keys: dict[str, Path]) -> None:
    s = signed_study(study, keys)
    texts = {}
    for r in ("cto", "logician"):
        texts[r], seal = seal_text(r)
        signed_commit(s, r, keys[r], f"seal {r}", s.seal_path(r), seal)
    for r in ("cto", "logician"):
        signed_commit(s, r, keys[r], f"reveal {r}", s.score_path(r), texts[r])
    res, data = s.verify()
    assert res.code == 0, res.output
    assert codes(data) == [] and data["status"] == "complete"


def test_unsigned_and_wrongly_signed_commits(study: Study, keys: dict[str, Path]) -> None:
    s = signed_study(study, keys)
    _cto_text, cto_seal = seal_text("cto")
    unsigned = signed_commit(s, "cto", None, "seal cto unsigned", s.seal_path("cto"), cto_seal)
    _log_text, log_seal = seal_text("logician")
    # logician's seal signed with cto's key: a good signature, by the wrong person
    wrong = signed_commit(s, "logician", keys["cto"], "seal logician", s.seal_path("logician"), log_seal)
    res, data = s.verify()
    assert res.code == 1
    assert codes(data) == [("unsigned-commit", "cto"), ("unsigned-commit", "logician")]
    by_rater = {v["rater"]: v for v in data["violations"]}
    assert by_rater["cto"]["commit"] == unsigned
    assert by_rater["logician"]["commit"] == wrong
    assert "signed by cto@example.org" in by_rater["logician"]["message"]


def test_missing_allowed_signers_file_is_a_plan_error(study: Study) -> None:
    study.start(SIGNED_PLAN)
    res, _ = study.verify()
    assert res.code == 2 and "allowed_signers" in res.err
