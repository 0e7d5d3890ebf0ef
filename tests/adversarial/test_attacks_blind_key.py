"""Review 3 of full blinding: key copies that escape, a corpus change that escapes, and odd keys.

The rules under attack (docs/blinding.md, "What verify-seal proves"): a copy of the key in the study
folder is the key's plaintext when it is shaped like a key or carries the committed key's nonce
(`ledger._key_copy`); exact bytes of the key anywhere else are `blind-key-leak`
(`blind_corpus.key_copy_violations`); the corpus and the key digest are frozen from the blinding
commit (`frozen_rules.blind_corpus_changed`). Each attack tells a rater every item's condition (or
changes what they score) before they seal, and then leaves a history that should not look clean.
The honest shapes next to them must stay clean.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoven_git.blinding import BlindKey
from tests import test_blind_e2e
from tests.test_blind_e2e import CORPUS, KEY_JSON, PEOPLE, BlindStudy

blinded = test_blind_e2e.blinded
Blinded = tuple[BlindStudy, Path, BlindKey]
BOTH = ("cto", "logician")


def finish(s: BlindStudy, key_file: Path) -> None:
    """Unblind and reveal every sheet: the study as the lead ends it."""
    s.unblind_and_reveal(key_file, BOTH)


def seal_by_hand(s: BlindStudy, key: BlindKey) -> None:
    """Both raters fill and seal both passes without `seal` (which may refuse after a leak)."""
    for r in BOTH:
        s.fill_unblinded(r)
        s.fill_blind(r, key, {"A": (2, 1), "B": (1, 0)})
        s.hand_seal(r, "unblinded"), s.hand_seal(r, "hidden")


def verify(s: BlindStudy) -> tuple[int, list[tuple[str, str | None]], dict]:
    res = s.run("lead", "verify-seal", "--format", "json")
    assert "Traceback" not in res.output and res.code != 4, res.output
    data = json.loads(res.out)
    return res.code, sorted((v["code"], v["rater"]) for v in data["violations"]), data


def leak_then_remove(s: BlindStudy, path: str, data: bytes, who: str = "lead") -> str:
    """Commit `data` at `path` past the hook, then delete it again: HEAD looks clean."""
    s.write(path, data)
    leak = s.sneak(who, f"notes {path}", path)
    s.git("rm", "-q", path)
    s.git("commit", "-q", "--no-verify", "-m", f"rm {path}", author=PEOPLE[who])
    return leak


# --------------------------------------------------------------------------- key copies that escape


@pytest.mark.parametrize("where", ["study/test_a_stripped/q1.md", "study/test_a_stripped/q2.md"])
def test_a_key_copy_at_an_unused_response_path_is_the_keys_plaintext(blinded: Blinded, where: str) -> None:
    """The plan's stripped-copy template `test_{condition}_stripped/{question}.md` also names paths
    for condition A, which nothing writes. The history model treats them as responses: never read as
    candidates (so neither shape nor nonce is checked) and, being in the study folder, skipped by the
    exact-bytes search too. The lead commits the key there before the seals, removes it; both raters
    seal after it."""
    s, key_file, key = blinded
    leak = leak_then_remove(s, where, key_file.read_bytes())
    seal_by_hand(s, key)
    finish(s, key_file)
    code, _found, data = verify(s)
    assert code == 1, data
    visible = [v for v in data["violations"] if v["code"] in ("visible-at-seal", "blind-key-leak")]
    assert sorted({v["rater"] for v in visible}) == list(BOTH), data["violations"]
    assert all(where in v["message"] and leak[:7] in v["message"] for v in visible), visible


def test_the_keys_entries_alone_in_the_study_folder_are_the_keys_plaintext(blinded: Blinded) -> None:
    """A key committed in pieces: the piece that matters is the `entries` map (blind id → question,
    condition); the `format` line and the nonce are left out, so the copy is neither shaped like a
    key nor carries its nonce, and it is not the key's exact bytes. Every rater who seals after it
    could read every item's condition."""
    s, key_file, key = blinded
    text = key_file.read_text(encoding="utf-8")
    entries = text[text.index('"entries"'): text.index('"format"')].rstrip().rstrip(",")
    assert '"nonce"' not in entries and '"format"' not in entries and key.entries[0].blind_id in entries
    leak = leak_then_remove(s, "study/notes/items.md", ("# Item notes\n\n{" + entries + "}\n").encode())
    seal_by_hand(s, key)
    finish(s, key_file)
    code, found, data = verify(s)
    assert code == 1, data
    assert ("visible-at-seal", "cto") in found and ("visible-at-seal", "logician") in found, found
    assert all(leak[:7] in v["message"] for v in data["violations"] if v["code"] == "visible-at-seal")


def test_a_key_committed_in_two_halves_outside_the_study_folder_is_a_key_leak(blinded: Blinded) -> None:
    """The exact bytes of the key, split in two files outside the study folder (`keys/a.part`,
    `keys/b.part`, which `cat` joins back): neither file is the key's bytes, so the exact-object search
    finds nothing, though together they are the key, byte for byte."""
    s, key_file, key = blinded
    data = key_file.read_bytes()
    half = len(data) // 2
    s.write("keys/a.part", data[:half])
    s.write("keys/b.part", data[half:])
    leak = s.sneak("lead", "key, in two parts", "keys")
    seal_by_hand(s, key)
    finish(s, key_file)
    code, found, data_ = verify(s)
    assert code == 1, data_
    assert {r for c, r in found if c in ("blind-key-leak", "visible-at-seal")} == set(BOTH), found
    assert any(leak[:7] in v["message"] or v["commit"] == leak for v in data_["violations"])


# --------------------------------------------------------------------------- corpus changes that escape


def test_a_case_variant_corpus_item_added_after_blinding_is_a_changed_corpus(blinded: Blinded) -> None:
    """`study/Blind/hidden/<id>.md` is, on a case-insensitive disk (macOS, Windows), one more file
    in the very folder raters score: an item the key does not know, added after the blinding
    commit. On Linux it is a file in another folder, which no rule reads (not under `blind/hidden/`,
    not a score table, not a key)."""
    s, key_file, key = blinded
    extra = "study/Blind/hidden/zz0000000000.md"
    s.write(extra, "## Question\n\nWhy is the sky blue?\n\n## Response\n\nAn extra answer to score.\n")
    s.sneak("lead", "one more item", extra)
    for r in BOTH:
        s.seal_all(r, key)
    finish(s, key_file)
    code, found, data = verify(s)
    assert code == 1, data
    assert any(c in ("blind-corpus-changed", "unknown-file") for c, _ in found), found


# --------------------------------------------------------------------------- odd keys: no crash


def test_a_deeply_nested_key_json_is_reported_not_a_crash(blinded: Blinded) -> None:
    """`ledger.key_secrets` reads every blob committed at `blind/<P>/key.json` (`key_copies.secret_of`) and
    catches ValueError and AttributeError only; 200,000 nested brackets raise RecursionError."""
    s, _key_file, key = blinded
    for r in BOTH:
        s.seal_all(r, key)
    s.write(KEY_JSON, b"[" * 200_000)
    s.sneak("lead", "a key that nests deep", KEY_JSON)
    code, found, _ = verify(s)
    assert code == 1 and ("digest-mismatch", None) in found, found


@pytest.mark.parametrize("body", [
    b"\xff\xfe\x00binary\x00key",                 # not UTF-8, with NULs
    b'["not", "an", "object"]\n',                  # JSON that is not an object
    b'"a string"\n',
    b'{"nonce": ["0123456789abcdef0123456789abcdef"]}\n',  # a nonce that is no string
    b'{"nonce": "0123456789abcdef0123456789abcdef"}\n',    # a nonce but no format
])
def test_an_odd_key_json_is_reported_not_a_crash(blinded: Blinded, body: bytes) -> None:
    s, _key_file, key = blinded
    for r in BOTH:
        s.seal_all(r, key)
    s.write(KEY_JSON, body)
    s.sneak("lead", "an odd key", KEY_JSON)
    code, found, _ = verify(s)
    assert code == 1 and ("digest-mismatch", None) in found, found


@pytest.mark.parametrize("where", ["study/notes/odd.bin", "keys/odd.bin"])
def test_odd_bytes_next_to_a_committed_key_are_no_crash(blinded: Blinded, where: str) -> None:
    """Invalid UTF-8 and a key-shaped line with a nonce but no `pass`, in the study folder and
    outside it, before the seals: the study-folder file is the key's plaintext (it is shaped as a
    key); outside it is not read. Nothing crashes."""
    s, key_file, key = blinded
    body = (b'\xff\xfe\n{"format": "aoven-git blind key v1", "nonce": "' + b"ab" * 16 + b'"}\n'
            + b"\x00" * 1000)
    s.write(where, body)
    s.sneak("lead", "odd bytes", where)
    if where.startswith("keys/"):
        for r in BOTH:
            s.seal_all(r, key)
    else:
        seal_by_hand(s, key)  # `seal` rightly refuses after a key-shaped file
    finish(s, key_file)
    code, found, _ = verify(s)
    if where.startswith("study/"):
        assert code == 1 and {r for c, r in found if c == "visible-at-seal"} == set(BOTH), found
    else:
        assert (code, found) == (0, []), found


# --------------------------------------------------------------------------- honest shapes


def test_an_archived_key_and_corpus_after_the_study_are_clean(blinded: Blinded) -> None:
    """After every seal and reveal the lead archives the key and a copy of the corpus outside the
    study folder, and writes a note with the key's nonce in the study folder: nothing is early."""
    s, key_file, key = blinded
    for r in BOTH:
        s.seal_all(r, key)
    finish(s, key_file)
    s.write("archive/hidden-key.json", key_file.read_bytes())
    for e in key.entries:
        s.write(f"archive/corpus/{e.blind_id}.md", (s.path / CORPUS / f"{e.blind_id}.md").read_bytes())
    s.write("study/notes/unblinding.md", f"Unblinded with key nonce {key.nonce}.\n")
    s.sneak("lead", "archive", "archive", "study/notes")
    code, found, _ = verify(s)
    assert (code, found) == (0, []), found


def test_blinding_on_a_branch_merged_either_way_is_clean(blinded: Blinded, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The lead blinds on a branch while a rater commits notes on main; the branch is merged with
    main as the first or the second parent. The corpus is what the blinding commit made."""
    s = BlindStudy(tmp_path / "branchy", monkeypatch)
    s.start()
    s.git("checkout", "-q", "-b", "blinding")
    key_file = tmp_path / "k.json"
    assert s.run("lead", "blind", "--pass", "hidden", "--key-out", str(key_file)).code == 0
    s.git("checkout", "-q", "main")
    s.write("NOTES.md", "team notes\n")
    s.sneak("cto", "notes", "NOTES.md")
    s.git("checkout", "-q", "blinding")
    s.git("merge", "-q", "--no-ff", "--no-edit", "main", author=PEOPLE["lead"])
    s.git("checkout", "-q", "main")
    s.git("merge", "-q", "--ff-only", "blinding")
    from aoven_git.blinding import parse_key

    key = parse_key(key_file.read_bytes(), pass_id="hidden")
    assert isinstance(key, BlindKey)
    for r in BOTH:
        s.seal_all(r, key)
    finish(s, key_file)
    code, found, _ = verify(s)
    assert (code, found) == (0, []), found
