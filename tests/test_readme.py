"""The README's Quick start is the contract of the first five minutes: keep it true."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section, flags=re.S)


def test_quick_start_has_exactly_two_one_line_commands() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2, commands
    assert all("\n" not in c for c in commands)
    assert "aoven-git demo" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert quick_start_commands()[1] in ci
    assert '"$rc" -eq 5' in ci  # pytest's "no tests collected" does not fail CI
