"""Refusals that name the first seal name its commit, not HEAD (docs/sealing.md, "The hook, and
what it cannot see").

The pre-commit hook judges a staged commit over a two-commit history (HEAD's tree, then the
index), in which HEAD's tree stands for every earlier commit. A refusal about what the first seal
froze — the plan, the responses — must still name the commit of the first seal, where the frozen
version can be restored from, and verify-seal names the same commit.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.adversarial.conftest import Lab, at, expect, refused

pytestmark = pytest.mark.slow


def sealed_then_more(lab: Lab) -> str:
    """cto seals first, logician seals later, the lead commits notes: HEAD is not the first seal.
    Returns the first seal's commit."""
    lab.start()
    lab.install_hook()
    first = lab.seal("cto")
    lab.seal("logician")
    lab.file("lead", "NOTES.md", "notes\n", "notes")
    assert lab.head() != first
    return first


def named(stderr: str, code: str) -> str:
    lines = [ln for ln in stderr.splitlines() if code in ln]
    assert len(lines) == 1, stderr
    return lines[0]


def test_the_plan_changed_after_the_first_seal_names_the_first_seal(lab: Lab) -> None:
    first = sealed_then_more(lab)
    head = lab.head()
    plan = (lab.path / "aoven.yaml").read_text(encoding="utf-8")
    lab.write("aoven.yaml", plan.replace("scale: {min: 0, max: 3}", "scale: {min: 0, max: 4}"))
    proc = lab.git_commit("lead", "widen the scale", "aoven.yaml")
    refused(proc, "plan-changed-after-seal")
    line = named(proc.stderr, "plan-changed-after-seal")
    assert f"first seal {first[:10]}" in line and f"git show {first[:10]}:aoven.yaml" in line, line
    assert head[:10] not in line, line
    assert lab.head() == head
    lab.put("lead", "widen the scale", "aoven.yaml", no_verify=True)
    found = at(expect(lab, [("plan-changed-after-seal", None)]), "plan-changed-after-seal", None)
    assert f"first seal {first[:10]}" in found["message"], found


def test_a_response_changed_after_the_first_seal_names_the_first_seal(lab: Lab) -> None:
    first = sealed_then_more(lab)
    head = lab.head()
    path = "study/test_a/q1.md"
    lab.write(path, (lab.path / path).read_text(encoding="utf-8") + "\nA sentence added later.\n")
    proc = lab.git_commit("lead", "touch a response", path)
    refused(proc, "plan-changed-after-seal")
    line = named(proc.stderr, "plan-changed-after-seal")
    assert f"after the first seal ({first[:10]})" in line and head[:10] not in line, line
    assert lab.head() == head


def test_a_blind_corpus_changed_after_blinding_names_the_blinding_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for the commit a blind corpus is restored from: the lead blinds, cto seals both
    passes, then the lead edits an item and commits through the hook — the refusal names the
    blinding commit (in its `git checkout` hint too), not HEAD."""
    from aoven_git.blinding import BlindKey, parse_key
    from tests.test_blind_e2e import CORPUS, BlindStudy

    s = BlindStudy(tmp_path / "repo", monkeypatch)
    s.start()
    key_file = tmp_path / "keys" / "hidden.json"
    assert s.run("lead", "blind", "--pass", "hidden", "--key-out", str(key_file)).code == 0
    blinding = s.head()
    key = parse_key(key_file.read_bytes(), pass_id="hidden")
    assert isinstance(key, BlindKey)
    s.seal_all("cto", key)
    head = s.head()
    assert head != blinding
    item = s.path / CORPUS / f"{sorted(e.blind_id for e in key.entries)[0]}.md"
    item.write_text(item.read_text(encoding="utf-8") + "\nOne more sentence.\n", encoding="utf-8")
    s.git("add", "--", CORPUS)
    env = {**os.environ, "GIT_AUTHOR_NAME": "Lead", "GIT_AUTHOR_EMAIL": "lead@example.org",
           "GIT_COMMITTER_NAME": "Lead", "GIT_COMMITTER_EMAIL": "lead@example.org"}
    proc = subprocess.run(["git", "commit", "-q", "-m", "typo"], cwd=s.path, capture_output=True, text=True,
                          env=env, check=False)
    refused(proc, "blind-corpus-changed")
    line = named(proc.stderr, "blind-corpus-changed")
    assert f"blinding commit {blinding[:10]}" in line and f"git checkout {blinding[:10]} --" in line, line
    assert head[:10] not in line, line
    assert s.head() == head
