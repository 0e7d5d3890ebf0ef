"""Class 5, git itself: replacement objects and grafts rewrite what `git log` shows as ancestry,
`.mailmap` rewrites authors, and a user's display settings reshape git's output. None of them
may change the verdict: ancestry is the real one, authors are the raw `%ae`, and git's output is
read with the user's settings neutralised."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.adversarial.conftest import Lab, at, expect
from tests.conftest import run_cli


def backdated_seal(lab: Lab) -> dict[str, str]:
    """cto reveals early on main; logician seals on a branch from cto's seal and merges: the
    order of logician's seal and cto's reveal is unproven."""
    c = {"base": lab.start(), "seal-cto": lab.seal("cto")}
    c["reveal-cto"] = lab.reveal("cto", message="reveal cto\n\nAoven-Force: reveal (unsealed: logician)")
    lab.branch("late", c["seal-cto"])
    c["seal-logician"] = lab.seal("logician")
    c["merge"] = lab.land("late")
    assert lab.unordered(c["seal-logician"], c["reveal-cto"])
    return c


def git_says_ancestor(lab: Lab, a: str, b: str) -> bool:
    """What plain `git merge-base` (replacements and grafts honoured) claims."""
    return subprocess.run(["git", "merge-base", "--is-ancestor", a, b], cwd=lab.path,
                          capture_output=True, check=False).returncode == 0


def test_replace_graft_cannot_fake_the_order(lab: Lab) -> None:
    c = backdated_seal(lab)
    lab.git("replace", "--graft", c["reveal-cto"], c["seal-cto"], c["seal-logician"])
    assert git_says_ancestor(lab, c["seal-logician"], c["reveal-cto"])  # the lie is in place
    data = expect(lab, [("unproven-order", "logician")])
    assert at(data, "unproven-order", "logician")["commit"] == c["seal-logician"]


def test_grafts_file_cannot_fake_the_order(lab: Lab) -> None:
    c = backdated_seal(lab)
    grafts = lab.path / ".git" / "info" / "grafts"
    grafts.parent.mkdir(exist_ok=True)
    grafts.write_text(f"{c['reveal-cto']} {c['seal-cto']} {c['seal-logician']}\n")
    assert git_says_ancestor(lab, c["seal-logician"], c["reveal-cto"])
    data = expect(lab, [("unproven-order", "logician")])
    assert at(data, "unproven-order", "logician")["commit"] == c["seal-logician"]


def test_replace_graft_cannot_hide_earlier_plaintext(lab: Lab) -> None:
    """cto's content commit is cut out of logician's ancestry by a replacement: git log no longer
    lists it, but logician sealed with cto's scores in the history."""
    base = lab.start()
    content = lab.content("cto")
    seal_log = lab.seal("logician")
    lab.git("replace", "--graft", seal_log, base)
    assert content not in lab.git("log", "--format=%H").split()  # hidden from a plain log
    data = expect(lab, [("visible-at-seal", "logician")])
    assert at(data, "visible-at-seal", "logician")["commit"] == seal_log


def test_mailmap_does_not_authorize_another_author(lab: Lab) -> None:
    lab.start()
    lab.file("lead", ".mailmap", "CTO <cto@example.org> Lead <lead@example.org>\n", "mailmap")
    lab.git("config", "log.mailmap", "true")
    forged = lab.seal("cto", who="lead")
    lab.seal("logician")
    assert lab.git("log", "-1", "--format=%aE", forged) == "cto@example.org"  # mailmap rewrites
    data = expect(lab, [("unauthorized-author", "cto")])
    assert at(data, "unauthorized-author", "cto")["commit"] == forged


DISPLAY_CONFIG = [
    ("color.ui", "always"), ("color.diff", "always"), ("diff.relative", "true"),
    ("log.follow", "true"), ("core.quotePath", "true"), ("core.quotePath", "false"),
    ("log.decorate", "full"), ("log.abbrevCommit", "true"), ("core.abbrev", "4"),
    ("diff.renames", "copies"), ("diff.noprefix", "true"), ("diff.mnemonicPrefix", "true"),
    ("log.showRoot", "false"), ("log.date", "relative"), ("format.pretty", "fuller"),
    ("diff.external", "false"), ("i18n.logOutputEncoding", "ISO-8859-1"), ("log.showSignature", "true"),
    ("diff.algorithm", "patience"), ("core.ignoreCase", "true"),
]


@pytest.mark.parametrize(("key", "value"), DISPLAY_CONFIG, ids=[f"{k}={v}" for k, v in DISPLAY_CONFIG])
def test_display_config_does_not_change_the_result(lab: Lab, key: str, value: str) -> None:
    """One violation, non-ASCII and renamed file names in the study; verify-seal run from a
    subdirectory gives byte-identical JSON with and without the user's setting."""
    lab.start()
    lab.file("lead", "study/notes/Überblick ä.txt", "notes\n")
    lab.git("mv", "study/notes/Überblick ä.txt", "study/notes/résumé «1».txt")
    lab.put("lead", "rename notes")
    lab.seal("cto")
    lab.reveal("cto", message="reveal cto\n\nAoven-Force: reveal (unsealed: logician)")
    bad = lab.seal("logician")
    before = expect(lab, [("visible-at-seal", "logician")])
    lab.git("config", key, value)
    res = run_cli("verify-seal", "--format", "json", cwd=lab.path / "study")
    assert res.code == 1 and "Traceback" not in res.output, res.output
    after = json.loads(res.out)
    assert after == before
    assert at(after, "visible-at-seal", "logician")["commit"] == bad
