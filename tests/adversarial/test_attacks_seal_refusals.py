"""Review: `aoven-git seal` refusals and the forced-reveal record (found by reading
sealing.readable_before_seal and seal_report._seals_and_timeline).

* `seal` refuses "what could only be a violation" by looking at HEAD's file NAMES only: a score
  table pasted into `study/notes.md` (plaintext to verify-seal) or plaintext committed and deleted
  earlier (still in the seal's ancestry) does not stop it, and the seal it commits is then
  reported as `visible-at-seal` forever.
* The report's "forced reveals" is read from commit-message text (`Aoven-Force:` on any line of a
  reveal commit), not from ancestry: an honest reveal whose message carries the line is listed as
  forced, and a premature reveal without it is not.
"""

from __future__ import annotations

import pytest

from tests.adversarial.conftest import Lab, expect, sheet_text


@pytest.mark.parametrize("where", ["table-in-notes", "deleted-reveal"])
def test_seal_refuses_when_the_seal_could_only_be_visible_at_seal(lab: Lab, where: str) -> None:
    lab.start()
    lab.seal("cto")
    if where == "table-in-notes":
        lab.file("cto", "study/notes.md", "---\nrater: cto\n---\n\n" + sheet_text("cto", front_matter=False))
    else:
        lab.reveal("cto", no_verify=True)
        lab.git("rm", "-q", lab.score_path("cto"))
        lab.put("cto", "oops, too early", no_verify=True)
    lab.write(lab.score_path("logician"), sheet_text("logician"))
    before = lab.snapshot()
    res = lab.cli("logician", "seal", "--rater", "logician")
    if res.code == 0:  # what the accepted seal leads to (then the refusal assert below fails)
        leaked = [("stray-scores" if where == "table-in-notes" else "deleted-after-seal", "cto")]
        expect(lab, [*leaked, ("visible-at-seal", "logician")])
    assert res.code == 1, res.output
    assert lab.snapshot() == before


def test_honest_reveal_with_a_force_line_in_its_message_is_not_a_forced_reveal(lab: Lab) -> None:
    """Every rater sealed before cto's reveal (provable from ancestry), but the reveal's message
    quotes the trailer line: the report lists a forced reveal that never happened."""
    lab.start()
    lab.seal("cto")
    lab.seal("logician")
    lab.reveal("cto", message="reveal cto\n\nAoven-Force: reveal (unsealed: logician)\n")
    lab.reveal("logician")
    data = expect(lab, [])
    assert data["forced_reveals"] == []


def test_premature_reveal_without_the_trailer_is_a_forced_reveal(lab: Lab) -> None:
    """cto reveals by hand (`AOVEN_GIT_FORCE=reveal git commit`, as `reveal --force` does, without
    the trailer) while logician has not sealed. verify-seal says `pending` and lists no forced
    reveal, although ancestry proves logician's seal cannot precede cto's plaintext."""
    lab.start()
    lab.seal("cto")
    reveal = lab.reveal("cto", env={"AOVEN_GIT_FORCE": "reveal"})
    data = expect(lab, [])
    assert data["status"] == "pending"
    assert [f["commit"] for f in data["forced_reveals"]] == [reveal]


@pytest.mark.parametrize("in_the_way", ["seals-is-a-file", "seal-is-a-folder"])
def test_seal_with_a_path_in_the_way_is_a_clear_refusal(lab: Lab, in_the_way: str) -> None:
    """A file `study/seals` (notes about the seals, say) where the seal folder should be, or a
    folder where the seal file should be: `seal` dies with `internal error: NotADirectoryError` /
    `IsADirectoryError` (exit 4, "a bug in aoven-git") instead of naming the path in the way."""
    lab.start()
    if in_the_way == "seals-is-a-file":
        lab.file("lead", "study/seals", "the seals are collected here\n")
    else:
        (lab.path / lab.seal_path("cto")).mkdir(parents=True)
    lab.write(lab.score_path("cto"), sheet_text("cto"))
    before = lab.snapshot()
    res = lab.cli("cto", "seal", "--rater", "cto")
    assert res.code == 1, res.output
    assert "study/seals" in res.output and "internal error" not in res.output
    assert lab.snapshot() == before


@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_report_when_the_study_dir_is_not_a_folder_in_the_revision(lab: Lab, kind: str) -> None:
    """The committed study dir is a file or a symbolic link: `report` dies in `gitio.tree_files`
    (`'Blob' object has no attribute 'traverse'`, exit 4); validate and disagreements cope."""
    lab.start()
    lab.git("rm", "-rq", "study")
    if kind == "file":
        lab.write("study", "moved to the wiki\n")
    else:
        (lab.path / "study").symlink_to("elsewhere")
    lab.put("lead", "no study folder", "study", no_verify=True)
    res = lab.cli("lead", "report", "--format", "json", "--bootstrap", "0")
    assert res.code in (0, 1, 2, 3), res.output
    assert "internal error" not in res.output
