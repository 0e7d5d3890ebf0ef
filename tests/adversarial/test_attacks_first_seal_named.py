"""Refusals that name the first seal name its commit, not HEAD (docs/sealing.md, "The hook, and
what it cannot see").

The pre-commit hook judges a staged commit over a two-commit history (HEAD's tree, then the
index), in which HEAD's tree stands for every earlier commit. A refusal about what the first seal
froze — the plan, the responses — must still name the commit of the first seal, where the frozen
version can be restored from, and verify-seal names the same commit.
"""

from __future__ import annotations

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
