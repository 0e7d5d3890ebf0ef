"""Full blinding, bad input: every refusal of `blind` and `unblind` is a clear message with the
right exit code and changes nothing; blind sheets are validated against the committed corpus."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from aoven_git.blinding import BlindKey, KeyEntry, parse_key
from tests.test_blind_e2e import CORPUS, KEY_SEAL, RESPONSES, BlindStudy


@pytest.fixture
def study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> BlindStudy:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the default key path is under HOME
    return BlindStudy(tmp_path / "repo", monkeypatch)


def refused(s: BlindStudy, code: int, *args: str, who: str = "lead") -> str:
    """Run a command that must fail with `code` and leave HEAD, the index and the work tree as
    they were; its error output."""
    before = s.state()
    res = s.run(who, *args)
    assert res.code == code, res.output
    assert "Traceback" not in res.output
    assert s.state() == before
    return res.err


def no_key_anywhere(tmp: Path) -> bool:
    return not [p for p in tmp.rglob("*.json") if "aoven.yaml" not in p.name]


def test_blind_refuses_a_pass_without_stripped_copies(study: BlindStudy, tmp_path: Path) -> None:
    study.start(strip=False)
    err = refused(study, 1, "blind", "--pass", "hidden")
    assert "study/test_b_stripped/q1.md" in err and "strip-markers" in err
    assert not (study.path / CORPUS).exists() and no_key_anywhere(tmp_path / "home")


def test_blind_refuses_a_missing_response(study: BlindStudy, tmp_path: Path) -> None:
    study.start()
    study.git("rm", "-q", "study/test_a/q2.md")
    study.sneak("lead", "lose a response", "study")
    err = refused(study, 1, "blind", "--pass", "hidden")
    assert "study/test_a/q2.md" in err and "strip-markers" not in err
    assert no_key_anywhere(tmp_path / "home")


def test_blind_refuses_uncommitted_changes_to_a_source(study: BlindStudy) -> None:
    study.start()
    study.write("study/test_a/q1.md", RESPONSES["study/test_a/q1.md"] + "\nOne more line.\n")
    err = refused(study, 1, "blind", "--pass", "hidden")
    assert "uncommitted changes" in err and "study/test_a/q1.md" in err


def test_blind_refuses_a_text_that_shows_its_condition(study: BlindStudy, tmp_path: Path) -> None:
    tell = RESPONSES["study/test_a/q1.md"] + "\nUnlike Condition B, this answer has no labels.\n"
    study.start(responses={**RESPONSES, "study/test_a/q1.md": tell})
    err = refused(study, 1, "blind", "--pass", "hidden")
    line = tell.splitlines().index("Unlike Condition B, this answer has no labels.") + 1
    assert f"study/test_a/q1.md:{line}: Q1/A would show condition-word 'Condition B'" in err
    assert not (study.path / CORPUS).exists() and no_key_anywhere(tmp_path / "home")


@pytest.mark.parametrize(("args", "message"), [
    (("--pass", "unblinded"), "is not a blind pass"),
    (("--pass", "nope"), "unknown pass 'nope'"),
])
def test_blind_refuses_a_pass_that_is_not_blind(
    study: BlindStudy, args: tuple[str, ...], message: str
) -> None:
    study.start()
    assert message in refused(study, 2, "blind", *args)


def test_blind_writes_the_key_under_home_by_default_and_never_twice(
    study: BlindStudy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AOVEN_GIT_HOME")  # the default of the default: ~/.aoven-git
    study.start()
    res = study.run("lead", "blind", "--pass", "hidden")
    assert res.code == 0, res.output
    key_file = tmp_path / "home" / ".aoven-git" / "keys" / "repo-hidden.json"
    assert str(key_file) in res.out
    assert isinstance(parse_key(key_file.read_bytes(), pass_id="hidden"), BlindKey)
    assert key_file.stat().st_mode & 0o077 == 0  # readable by its owner only
    assert "already blinded" in refused(study, 2, "blind", "--pass", "hidden", "--key-out",
                                        str(tmp_path / "other.json"))
    assert not (tmp_path / "other.json").exists()


def test_key_out_inside_the_work_tree_must_be_git_ignored(study: BlindStudy) -> None:
    study.start()
    err = refused(study, 2, "blind", "--pass", "hidden", "--key-out", "keys/hidden.json")
    assert "not git-ignored" in err and not (study.path / "keys").exists()
    study.write(".gitignore", "keys/\n")
    study.commit("ignore keys", ".gitignore", author=("Lead", "lead@example.org"))
    inside = study.path / "keys" / "hidden.json"
    res = study.run("lead", "blind", "--pass", "hidden", "--key-out", str(inside))
    assert res.code == 0, res.output
    assert (study.path / "keys" / "hidden.json").is_file()
    assert study.git("ls-files", "keys") == "" and study.git("status", "--porcelain") == ""
    assert "keys/hidden.json" not in study.git("log", "--all", "--name-only", "--format=")


def test_key_out_never_overwrites(study: BlindStudy, tmp_path: Path) -> None:
    study.start()
    (tmp_path / "mine.json").write_text("precious\n", encoding="utf-8")
    err = refused(study, 2, "blind", "--pass", "hidden", "--key-out", str(tmp_path / "mine.json"))
    assert "never overwritten" in err
    assert (tmp_path / "mine.json").read_text(encoding="utf-8") == "precious\n"


def test_a_key_path_that_cannot_be_written_leaves_nothing_behind(study: BlindStudy, tmp_path: Path) -> None:
    study.start()
    (tmp_path / "afile").write_text("a file, not a folder\n", encoding="utf-8")
    err = refused(study, 2, "blind", "--pass", "hidden", "--key-out", str(tmp_path / "afile" / "k.json"))
    assert "cannot write the key or the corpus" in err and "nothing was written" in err
    assert not (study.path / CORPUS).exists() and not (study.path / KEY_SEAL).exists()


# --------------------------------------------------------------------------- unblind


@pytest.fixture
def blinded(study: BlindStudy, tmp_path: Path) -> tuple[BlindStudy, Path, BlindKey]:
    study.start()
    key_file = tmp_path / "key.json"
    assert study.run("lead", "blind", "--pass", "hidden", "--key-out", str(key_file)).code == 0
    key = parse_key(key_file.read_bytes(), pass_id="hidden")
    assert isinstance(key, BlindKey)
    return study, key_file, key


def test_unblind_refuses_a_key_of_another_pass_or_not_a_key(
    blinded: tuple[BlindStudy, Path, BlindKey], tmp_path: Path
) -> None:
    s, key_file, key = blinded
    s.seal_all("cto", key)
    s.seal_all("logician", key)
    other = tmp_path / "other.json"
    other.write_bytes(BlindKey("unblinded", key.nonce, key.entries).to_json())
    err = refused(s, 2, "unblind", "--pass", "hidden", "--key", str(other))
    assert f"{other}:" in err and "this key is for pass 'unblinded', not 'hidden'" in err
    resaved = tmp_path / "resaved.json"
    resaved.write_text(json.dumps(json.loads(key_file.read_text("utf-8"))) + "\n", encoding="utf-8")
    assert "canonical form" in refused(s, 2, "unblind", "--pass", "hidden", "--key", str(resaved))
    assert "no such file" in refused(s, 2, "unblind", "--pass", "hidden", "--key", str(tmp_path / "none"))
    assert "is not a blind pass" in refused(s, 2, "unblind", "--pass", "unblinded", "--key", str(key_file))
    assert not (s.path / CORPUS / "key.json").exists()


def test_unblind_refuses_without_a_committed_digest(study: BlindStudy, tmp_path: Path) -> None:
    study.start()
    key = BlindKey("hidden", "0" * 32, (KeyEntry("a00000000000", "Q1", "A", "0" * 64),))
    (tmp_path / "k.json").write_bytes(key.to_json())
    err = refused(study, 1, "unblind", "--pass", "hidden", "--key", str(tmp_path / "k.json"))
    assert f"{KEY_SEAL} is not committed" in err


def test_unblind_twice_is_refused(blinded: tuple[BlindStudy, Path, BlindKey]) -> None:
    s, key_file, key = blinded
    s.seal_all("cto", key)
    s.seal_all("logician", key)
    assert s.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file)).code == 0
    assert "already committed" in refused(s, 1, "unblind", "--pass", "hidden", "--key", str(key_file))


# --------------------------------------------------------------------------- blind sheets


def test_sheet_of_a_blind_pass_needs_the_committed_corpus(study: BlindStudy) -> None:
    study.start()
    err = refused(study, 2, "sheet", "--rater", "cto", "--pass", "hidden")
    assert "no blinded corpus" in err and "aoven-git blind --pass hidden" in err


def test_blind_sheets_are_validated_against_the_corpus(blinded: tuple[BlindStudy, Path, BlindKey]) -> None:
    s, _, key = blinded
    text = s.fill_blind("cto", key, {"A": (2, 1), "B": (1, 0)})
    lines = text.splitlines()
    dropped = next(i for i, line in enumerate(lines) if re.match(r"^\| [a-z0-9]{12} \|", line))
    dropped_id = lines[dropped].split("|")[1].strip()
    lines[dropped:dropped + 1] = ["| Q1 | 1 | 1 | 2 |", "| a00000000000 | 1 | 1 | 2 |"]
    s.write("study/scores_cto_hidden.md", "\n".join(lines) + "\n")
    res = s.run("cto", "validate", "--format", "json")
    assert res.code == 1
    doc = json.loads(res.out)
    errors = [(e["line"], e["code"]) for f in doc["files"] for e in f["errors"]]
    header = next(i for i, line in enumerate(lines) if line.startswith("| Item |")) + 1
    # the item with no row is missing at the table's header; the two bad rows at their lines
    assert errors == [(header, "missing-cell"), (dropped + 1, "unknown-item"), (dropped + 2, "unknown-item")]
    messages = " ".join(e["message"] for f in doc["files"] for e in f["errors"])
    assert "not question Q1" in messages and "'a00000000000' is not in the blinded corpus" in messages
    assert f"{dropped_id}/?: no score for any dimension" in messages
    guessed = "".join(f"| {e.blind_id} | {e.condition} | 1 | 1 |\n" for e in key.entries)
    s.write("study/scores_cto_hidden.md", "---\nrater: cto\npass: hidden\n---\n\n"
            "| Item | Cond | D1 | D2 |\n|---|---|---|---|\n" + guessed)
    res = s.run("cto", "validate", "study/scores_cto_hidden.md")
    assert res.code == 1
    assert re.search(r"^study/scores_cto_hidden.md:6: error\[unknown-condition\]: pass hidden is blind: "
                     r"items have no condition", res.out, re.M)
