"""Blind-key copies in every place a rater can read, and the honest shapes beside them.

The rule under attack (SPEC §5.5, docs/blinding.md "What verify-seal proves"): before every rater
of an overlapping pass has sealed, the key's plaintext must be nowhere a rater can read it — not
in the plan, not in the key-digest seal file (exactly what `blind` wrote), not in any file of the
study folder whatever its name (a single blind id ↔ condition pair counts), not in a commit
message, a note, a tag message, a tagged blob or a ref name. Each attack below tells both raters
some item's condition before they seal and must leave a history that is not clean
(`blind-key-leak`, or `visible-at-seal` for a copy inside the study folder or the plan).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoven_git.blinding import BlindKey
from aoven_git.seals import format_key_seal, sha256
from tests import test_blind_e2e
from tests.adversarial.test_attacks_blind_key import BOTH, finish, seal_by_hand
from tests.test_blind_e2e import KEY_SEAL, PEOPLE, BlindStudy

blinded = test_blind_e2e.blinded
Blinded = tuple[BlindStudy, Path, BlindKey]
LEAKS = ("blind-key-leak", "visible-at-seal")


def verify(s: BlindStudy) -> tuple[int, list[tuple[str, str | None]], list[dict]]:
    res = s.run("lead", "verify-seal", "--format", "json")
    assert "Traceback" not in res.output and res.code != 4, res.output
    data = json.loads(res.out)
    return res.code, sorted((v["code"], v["rater"]) for v in data["violations"]), data["violations"]


def leaked_to_both(s: BlindStudy, code: str = "blind-key-leak", where: str | None = None) -> list[dict]:
    """Verify and assert that both raters have violation `code` (a message naming `where`)."""
    status, found, violations = verify(s)
    assert status == 1, found
    hits = [v for v in violations if v["code"] == code and (where is None or where in v["message"])]
    assert {v["rater"] for v in hits} == set(BOTH), violations
    return hits


def pair_line(key: BlindKey, n: int = 0) -> str:
    e = key.entries[n]
    return f"{e.blind_id} is {e.condition}"


def commit_empty(s: BlindStudy, message: str, who: str = "lead") -> str:
    s.git("commit", "-q", "--allow-empty", "--no-verify", "-m", message, author=PEOPLE[who])
    return s.head()


# --------------------------------------------------------------------------- the plan file


def test_the_whole_key_in_a_plan_comment_before_unblinding_is_the_keys_plaintext(blinded: Blinded) -> None:
    """The lead pastes the key into the plan as YAML comments before the seals. Verified before
    the key is committed: only its shape (format line, nonce) can tell, and it does."""
    s, key_file, key = blinded
    comment = "".join(f"# {line}\n" for line in key_file.read_text(encoding="utf-8").splitlines())
    s.write("aoven.yaml", (s.path / "aoven.yaml").read_text(encoding="utf-8") + comment)
    leak = s.sneak("lead", "plan: a note", "aoven.yaml")
    seal_by_hand(s, key)
    hits = leaked_to_both(s, "visible-at-seal", "aoven.yaml")
    assert all(leak[:7] in v["message"] for v in hits), hits


@pytest.mark.parametrize("what", ["pairs", "one pair", "nonce"])
def test_the_key_in_a_plan_comment_after_unblinding_is_the_keys_plaintext(blinded: Blinded,
                                                                          what: str) -> None:
    """Pairs (`# <id>: <condition>`), a single pair, or the nonce alone, in a plan comment before
    the seals, found once the key is committed."""
    s, key_file, key = blinded
    lines = {"pairs": [f"# {e.blind_id}: {e.condition}" for e in key.entries],
             "one pair": [f"# {pair_line(key)}"], "nonce": [f"# backup {key.nonce}"]}[what]
    s.write("aoven.yaml", (s.path / "aoven.yaml").read_text(encoding="utf-8") + "\n".join(lines) + "\n")
    s.sneak("lead", "plan: a note", "aoven.yaml")
    seal_by_hand(s, key)
    finish(s, key_file)
    leaked_to_both(s, "visible-at-seal", "aoven.yaml")


# --------------------------------------------------------------------------- the key-digest seal file


def _amend_blinding(s: BlindStudy, extra: str) -> None:
    """Rewrite the blinding commit (HEAD of the template) so its key-digest seal file carries
    `extra` after what `blind` wrote."""
    s.write(KEY_SEAL, (s.path / KEY_SEAL).read_text(encoding="utf-8") + extra)
    s.git("add", KEY_SEAL)
    s.git("commit", "-q", "--amend", "--no-edit", "--no-verify", author=PEOPLE["lead"])


@pytest.mark.parametrize("extra", ["pairs", "a harmless comment"])
def test_a_key_digest_seal_file_not_exactly_as_blind_wrote_it_is_a_key_leak(blinded: Blinded,
                                                                           extra: str) -> None:
    """`seals/blind_key_hidden.sha256` with lines after the three `blind` writes: the pairs
    themselves, or any other line (it could carry the key in any encoding): the file must be
    byte for byte what `blind` wrote."""
    s, key_file, key = blinded
    body = "".join(f"# {e.blind_id}: {e.condition}\n" for e in key.entries) if extra == "pairs" else "# ok\n"
    _amend_blinding(s, body)
    seal_by_hand(s, key)
    finish(s, key_file)
    leaked_to_both(s, "blind-key-leak", KEY_SEAL)


# --------------------------------------------------------------------------- any file of the study folder


@pytest.mark.parametrize("path", ["study/.gitattributes", "study/notes/one.md", "study/scores_x.csv",
                                  "study/blind/README"])
def test_a_single_pair_in_any_study_folder_file_is_the_keys_plaintext(blinded: Blinded, path: str) -> None:
    """One blind id with its condition, in a study-folder file of any name: a `.gitattributes`
    comment (a file the rules read as a study file of its own), a note, a `scores_*` name, a file
    beside the corpus."""
    s, key_file, key = blinded
    prefix = "# " if path.endswith(".gitattributes") else ""
    s.write(path, f"{prefix}{pair_line(key)}\n")
    s.sneak("lead", "a note", path)
    seal_by_hand(s, key)
    finish(s, key_file)
    status, found, _ = verify(s)
    assert status == 1 and {r for c, r in found if c in LEAKS} == set(BOTH), found


def test_one_pair_per_file_and_per_commit_is_the_keys_plaintext(blinded: Blinded) -> None:
    """The mapping spread thin: one pair per file, each file in a commit of its own."""
    s, key_file, key = blinded
    for n, e in enumerate(key.entries):
        s.write(f"study/notes/n{n}.md", f"{e.blind_id}: {e.condition}\n")
        s.sneak("lead", f"note {n}", f"study/notes/n{n}.md")
    seal_by_hand(s, key)
    finish(s, key_file)
    status, found, _ = verify(s)
    assert status == 1 and {r for c, r in found if c == "visible-at-seal"} == set(BOTH), found


# --------------------------------------------------------------------------- beyond files


@pytest.mark.parametrize("what", ["pairs", "one pair", "nonce"])
def test_the_key_in_a_commit_message_is_a_key_leak(blinded: Blinded, what: str) -> None:
    s, key_file, key = blinded
    body = {"pairs": "\n".join(f"{e.blind_id}: {e.condition}" for e in key.entries),
            "one pair": pair_line(key), "nonce": f"backup of {key.nonce}"}[what]
    leak = commit_empty(s, f"Housekeeping\n\n{body}\n")
    seal_by_hand(s, key)
    finish(s, key_file)
    hits = leaked_to_both(s, "blind-key-leak", "commit message")
    assert all(v["commit"] == leak for v in hits), hits


def test_the_key_in_a_note_is_a_key_leak(blinded: Blinded) -> None:
    s, key_file, key = blinded
    s.git("notes", "add", "-m", pair_line(key), "HEAD", author=PEOPLE["lead"])
    s.git("notes", "--ref", "review", "add", "-m", pair_line(key, 1), "HEAD", author=PEOPLE["lead"])
    seal_by_hand(s, key)
    finish(s, key_file)
    hits = leaked_to_both(s, "blind-key-leak", "note")
    assert any("refs/notes/review" in v["message"] for v in hits), hits


def test_the_key_in_an_annotated_tag_message_is_a_key_leak(blinded: Blinded) -> None:
    s, key_file, key = blinded
    s.git("tag", "-a", "blinded", "-m", f"blinded\n\n{pair_line(key)}\n", author=PEOPLE["lead"])
    seal_by_hand(s, key)
    finish(s, key_file)
    leaked_to_both(s, "blind-key-leak", "message of tag refs/tags/blinded")


@pytest.mark.parametrize("annotated", [False, True])
def test_a_tagged_blob_holding_the_key_is_a_key_leak(blinded: Blinded, annotated: bool) -> None:
    """The key stored as a blob no commit holds, reachable through a tag only."""
    s, key_file, key = blinded
    blob = s.git("hash-object", "-w", str(key_file))
    s.git("tag", *(["-a", "-m", "backup"] if annotated else []), "keyblob", blob, author=PEOPLE["lead"])
    seal_by_hand(s, key)
    finish(s, key_file)
    leaked_to_both(s, "blind-key-leak", "keyblob")


@pytest.mark.parametrize("ref", ["refs/heads/{id}-{c}", "refs/tags/{c}/{id}"])
def test_a_ref_name_pairing_an_id_with_its_condition_is_a_key_leak(blinded: Blinded, ref: str) -> None:
    s, key_file, key = blinded
    e = key.entries[0]
    name = ref.format(id=e.blind_id, c=e.condition)
    s.git("update-ref", name, "HEAD")
    seal_by_hand(s, key)
    finish(s, key_file)
    leaked_to_both(s, "blind-key-leak", name)


# --------------------------------------------------------------------------- honest shapes


def test_an_honest_blind_study_with_notes_tags_and_a_readme_is_clean(blinded: Blinded) -> None:
    """Notes, tags (annotated and lightweight), branch names, a README naming blind ids without
    conditions (with capital letters about), and the raters' blind sheets: nothing is a copy."""
    s, key_file, key = blinded
    ids = [e.blind_id for e in key.entries]
    s.write("README.md", f"# Study\n\nItem {ids[0]}. A long answer; see also {ids[1]}: A rater asked "
                         f"about it. B-grade prose in {ids[2]}?\n\n| item | note |\n|---|---|\n"
                         f"| {ids[3]} | A bit long. |\n")
    s.write("study/notes/items.md", "".join(f"- {i}: read twice\n" for i in ids))
    s.sneak("lead", f"notes on {ids[0]} and {ids[1]}\n\nA first pass over the corpus.", "README.md",
            "study/notes/items.md")
    s.git("notes", "add", "-m", f"reviewed {ids[0]}", "HEAD", author=PEOPLE["lead"])
    s.git("tag", "-a", "corpus-ready", "-m", f"corpus of {len(ids)} items, first {ids[0]}",
          author=PEOPLE["lead"])
    s.git("tag", "v1")
    s.git("branch", f"review-{ids[0]}")
    for r in BOTH:
        s.seal_all(r, key)
    finish(s, key_file)
    assert verify(s)[:2] == (0, [])


def test_key_copies_after_every_seal_are_clean(blinded: Blinded) -> None:
    """After every seal (and the reveal), the lead writes the mapping into a commit message, a note,
    a tag on the last commit and a branch name: every seal precedes them."""
    s, key_file, key = blinded
    for r in BOTH:
        s.seal_all(r, key)
    finish(s, key_file)
    pairs = "\n".join(f"{e.blind_id}: {e.condition}" for e in key.entries)
    commit_empty(s, f"Unblinded\n\n{pairs}\nnonce {key.nonce}\n")
    s.git("notes", "add", "-m", pairs, "HEAD", author=PEOPLE["lead"])
    s.git("tag", "-a", "unblinded", "-m", pairs, author=PEOPLE["lead"])
    e = key.entries[0]
    s.git("branch", f"{e.blind_id}-{e.condition}")
    assert verify(s)[:2] == (0, [])


def test_the_key_digest_seal_file_as_blind_wrote_it_is_clean(blinded: Blinded) -> None:
    """The template's seal file is `format_key_seal` of the key's digest, byte for byte (the oracle
    of the rule), and the honest study over it verifies clean."""
    s, key_file, key = blinded
    assert (s.path / KEY_SEAL).read_bytes() == format_key_seal(sha256(key_file.read_bytes()), "hidden")
    for r in BOTH:
        s.seal_all(r, key)
    finish(s, key_file)
    assert verify(s)[:2] == (0, [])
