"""Breaking full blinding: the key read early under another name, the corpus edited to show its
conditions and put back, and a key swapped together with the corpus through a merge.

A blind pass is honest when no rater could learn an item's condition before sealing and the key
that maps the scores back is the one fixed when the pass was blinded (docs/blinding.md, "What
verify-seal proves"). Each attack below ends in a clean-looking HEAD: the copy is deleted, the
corpus restored, the swapped key consistent with the swapped corpus. Only the history shows them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from aoven_git.blinding import BlindKey, KeyEntry
from tests import test_blind_e2e
from tests.test_blind_e2e import CORPUS, KEY_SEAL, PEOPLE, BlindStudy

#: the blinded study of the end-to-end tests: `blind` run by the lead, the key outside the work tree
blinded = test_blind_e2e.blinded
Blinded = tuple[BlindStudy, Path, BlindKey]
BOTH = ("cto", "logician")


def finish(s: BlindStudy, key_file: Path) -> None:
    """Unblind with `key_file` and reveal every sheet: the study as the lead would end it."""
    s.unblind_and_reveal(key_file, BOTH)


def report(s: BlindStudy) -> dict:
    res = s.run("lead", "report", "--format", "json", "--bootstrap", "0")
    assert "Traceback" not in res.output, res.output
    return json.loads(res.out)


def test_the_honest_blind_study_is_clean(blinded: Blinded) -> None:
    s, key_file, key = blinded
    for r in BOTH:
        s.seal_all(r, key)
    finish(s, key_file)
    code, found, _ = s.verify()
    assert (code, found) == (0, [])


@pytest.mark.parametrize("where", [f"{CORPUS}/key.json.bak", "study/keys/hidden.json",
                                   "study/blind/key-hidden.json"])
def test_a_key_copy_in_the_study_folder_before_the_seals_is_the_keys_plaintext(
        blinded: Blinded, where: str) -> None:
    """The lead commits a backup of the key, reads it to the raters, deletes it; they seal."""
    s, key_file, key = blinded
    s.write(where, key_file.read_bytes())
    leak = s.sneak("lead", "backup of the key", where)
    s.git("rm", "-q", where)
    s.git("commit", "-q", "--no-verify", "-m", "rm backup", author=PEOPLE["lead"])
    for r in BOTH:
        s.fill_unblinded(r)
        s.fill_blind(r, key, {"A": (2, 1), "B": (1, 0)})
        refused = s.run(r, "seal", "--rater", r, "--pass", "hidden")
        assert refused.code == 1 and where in refused.err  # `seal` says why it would be a violation
        s.hand_seal(r, "unblinded"), s.hand_seal(r, "hidden")
    finish(s, key_file)
    code, _, data = s.verify()
    assert code == 1
    visible = [v for v in data["violations"] if v["code"] == "visible-at-seal"]
    assert sorted({v["rater"] for v in visible}) == list(BOTH)
    assert all(where in v["message"] and "blind key" in v["message"] and leak[:7] in v["message"]
               for v in visible)
    assert report(s)["verdict"] == "NOT-READY"


def test_a_reformatted_key_copy_is_found_by_its_nonce(blinded: Blinded) -> None:
    """The copy is re-indented and its `format` line dropped: the nonce still gives it away once
    the real key is committed."""
    s, key_file, key = blinded
    doc = json.loads(key_file.read_bytes())
    del doc["format"]
    s.write("study/notes/mapping.json", json.dumps(doc, indent=4))
    s.sneak("lead", "notes", "study/notes/mapping.json")
    for r in BOTH:
        s.seal_all(r, key)
    finish(s, key_file)
    code, found, _ = s.verify()
    assert code == 1 and ("visible-at-seal", "cto") in found and ("visible-at-seal", "logician") in found


def test_a_key_copy_outside_the_study_folder_is_a_key_leak(blinded: Blinded) -> None:
    """`keys/hidden.json`, outside everything the history model reads: found by its exact bytes
    once the key is committed."""
    s, key_file, key = blinded
    s.write("keys/hidden.json", key_file.read_bytes())
    leak = s.sneak("lead", "backup of the key", "keys/hidden.json")
    s.git("rm", "-q", "keys/hidden.json")
    s.git("commit", "-q", "--no-verify", "-m", "rm backup", author=PEOPLE["lead"])
    for r in BOTH:
        s.seal_all(r, key)
    finish(s, key_file)
    code, found, data = s.verify()
    assert code == 1
    leaks = [v for v in data["violations"] if v["code"] == "blind-key-leak"]
    assert {(v["rater"], v["commit"], v["path"]) for v in leaks} == {
        (r, leak, "keys/hidden.json") for r in BOTH}
    assert {c for c, _ in found} == {"blind-key-leak"}


def test_a_key_copy_committed_after_every_seal_is_harmless(blinded: Blinded) -> None:
    """The lead backs the key up after all raters sealed: nobody could have used it."""
    s, key_file, key = blinded
    for r in BOTH:
        s.seal_all(r, key)
    s.write("keys/hidden.json", key_file.read_bytes())
    s.write("study/notes/key-backup.json", key_file.read_bytes())
    s.sneak("lead", "backup of the key", "keys/hidden.json", "study/notes/key-backup.json")
    finish(s, key_file)
    code, found, _ = s.verify()
    assert (code, found) == (0, [])


def test_a_corpus_marked_then_restored_is_a_changed_corpus(blinded: Blinded) -> None:
    """The lead appends a tell to every B item, the raters seal, the lead restores the files: at
    HEAD the corpus matches the key, but the raters scored the marked one."""
    s, key_file, key = blinded
    b_items = [e.blind_id for e in key.entries if e.condition == "B"]
    original = {i: (s.path / CORPUS / f"{i}.md").read_bytes() for i in b_items}
    for i in b_items:
        s.write(f"{CORPUS}/{i}.md", original[i] + b"\n<!-- framed answer -->\n")
    marked = s.sneak("lead", "typo fixes", CORPUS)
    for r in BOTH:
        s.seal_all(r, key)
    for i in b_items:
        s.write(f"{CORPUS}/{i}.md", original[i])
    s.sneak("lead", "undo", CORPUS)
    finish(s, key_file)
    code, found, data = s.verify()
    assert code == 1 and found == [("blind-corpus-changed", None)]
    assert data["violations"][0]["commit"] == marked
    assert report(s)["verdict"] == "NOT-READY"


def _swapped(key: BlindKey) -> BlindKey:
    """The key with A and B exchanged on every question: each blind id now names the other item."""
    by = key.by_item()
    partner = {}
    for q in ("Q1", "Q2"):
        a, b = by[(q, "A")], by[(q, "B")]
        partner[a.blind_id], partner[b.blind_id] = b, a
    return BlindKey(key.pass_id, key.nonce, tuple(
        KeyEntry(i, partner[i].question, partner[i].condition, partner[i].source_sha256)
        for i in sorted(partner)))


def test_a_second_blinding_merged_from_an_older_branch_is_a_changed_corpus(
        blinded: Blinded, tmp_path: Path) -> None:
    """The lead blinds again on a branch from before `blind`, with A and B swapped in both the
    corpus and the key (consistent with each other), and merges it after the seals taking that
    side: unblind accepts the swapped key; the raters' A scores now count as B."""
    s, key_file, key = blinded
    before_blind = s.git("rev-parse", "HEAD~1")
    texts = {e.blind_id: (s.path / CORPUS / f"{e.blind_id}.md").read_bytes() for e in key.entries}
    swapped = _swapped(key)
    original = {e.blind_id: e for e in key.entries}
    seal = (s.path / KEY_SEAL).read_text()
    swapped_seal = seal.replace(hashlib.sha256(key_file.read_bytes()).hexdigest(),
                                hashlib.sha256(swapped.to_json()).hexdigest())
    s.git("checkout", "-q", "-b", "side", before_blind)
    for e in swapped.entries:
        partner = next(i for i, o in original.items()
                       if (o.question, o.condition) == (e.question, e.condition))
        s.write(f"{CORPUS}/{e.blind_id}.md", texts[partner])
    s.write(KEY_SEAL, swapped_seal)
    side = s.sneak("lead", "blind hidden", CORPUS, KEY_SEAL)
    s.git("checkout", "-q", "-")
    for r in BOTH:
        s.seal_all(r, key)
    s.git("merge", "-q", "--no-ff", "--no-commit", "side", check=False)
    for path in [*(f"{CORPUS}/{e.blind_id}.md" for e in swapped.entries), KEY_SEAL]:
        s.git("checkout", "side", "--", path)
        s.git("add", "--", path)
    s.git("commit", "-q", "--no-verify", "--no-edit", author=PEOPLE["lead"])
    merge = s.head()
    swapped_file = tmp_path / "swapped.json"
    swapped_file.write_bytes(swapped.to_json())
    finish(s, swapped_file)
    code, found, data = s.verify()
    assert code == 1 and {c for c, _ in found} == {"blind-corpus-changed"}
    changed = [v for v in data["violations"] if v["code"] == "blind-corpus-changed"]
    assert changed and {v["commit"] for v in changed} <= {merge, side}
    assert any(v["commit"] == merge for v in changed), changed
    assert report(s)["verdict"] == "NOT-READY"


def test_the_documented_key_example_in_the_study_folder_is_no_key(blinded: Blinded) -> None:
    """HONEST: the team keeps notes in the study folder quoting the key format from the docs (a
    placeholder nonce): no false alarm."""
    s, key_file, key = blinded
    doc = Path(__file__).parents[2] / "docs" / "blinding.md"
    example = doc.read_text(encoding="utf-8").split("```json\n", 1)[1].split("```", 1)[0]
    assert '"format": "aoven-git blind key v1"' in example
    s.write("study/notes/key-format.md", f"# How the key looks\n\n```json\n{example}```\n")
    s.sneak("lead", "notes", "study/notes/key-format.md")
    for r in BOTH:
        s.seal_all(r, key)
    finish(s, key_file)
    code, found, _ = s.verify()
    assert (code, found) == (0, [])
