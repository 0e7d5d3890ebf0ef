"""Class 6, crashes are bugs: hostile names, options, plans and clones get a clear message and
the right exit code (2 usage/plan, 3 cannot verify), never a traceback or exit 4."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adversarial.conftest import Lab, at, expect
from tests.sealing.conftest import PLAN, codes, plan

#: generous hang guard (not a timing assertion: speed targets live in bench/)
HANG_GUARD = 300


def verify_subprocess(lab: Lab) -> tuple[int, dict, str]:
    proc = subprocess.run([sys.executable, "-m", "aoven_git", "verify-seal", "--format", "json"],
                          cwd=lab.path, capture_output=True, text=True, timeout=HANG_GUARD, check=False)
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        data = {}
    return proc.returncode, data, proc.stdout + proc.stderr


def test_newline_in_a_path_under_the_study_dir(lab: Lab) -> None:
    """Committed with the hook installed; every later commit runs the hook over it."""
    lab.start()
    lab.install_hook()
    lab.file("lead", "study/bad\nname.txt", "hello\n")  # raises if the hook refuses or crashes
    for r in ("cto", "logician"):
        lab.seal(r)
    for r in ("cto", "logician"):
        lab.reveal(r)
    data = expect(lab, [])
    assert data["status"] == "complete"
    res = lab.cli("lead", "verify-seal")
    assert res.code == 0 and "Traceback" not in res.output


OPTIONS = [("--plan", "aoven\x1b[31m.yaml"), ("--plan", "aoven\n.yaml"), ("--rev", "HEAD\x1b[2J"),
           ("--rev", "main\n--all"), ("--rev", "HEAD\x07"), ("--repo", "re\x1bpo"), ("--repo", "a\nb")]
OPTION_IDS = [f"{o}-{v!r}" for o, v in OPTIONS]


@pytest.mark.parametrize(("option", "value"), OPTIONS, ids=OPTION_IDS)
def test_control_characters_in_options(lab: Lab, option: str, value: str) -> None:
    lab.start()
    lab.seal("cto")
    res = lab.cli("lead", "verify-seal", option, value)
    assert res.code == 2, res.output
    assert "error" in res.err and "Traceback" not in res.output


@pytest.mark.parametrize(("option", "value"), [o for o in OPTIONS if "\x1b" in o[1]],
                         ids=[i for i, o in zip(OPTION_IDS, OPTIONS, strict=True) if "\x1b" in o[1]])
def test_control_characters_are_not_echoed_raw(lab: Lab, option: str, value: str) -> None:
    """A terminal escape in an argument must not reach the terminal through the error message."""
    lab.start()
    res = lab.cli("lead", "verify-seal", option, value)
    assert res.code == 2 and "\x1b" not in res.output, repr(res.output)


def test_option_injection_through_rev_creates_nothing(lab: Lab, tmp_path: Path) -> None:
    lab.start()
    target = tmp_path / "pwned"
    res = lab.cli("lead", "verify-seal", f"--rev=--output={target}")
    assert res.code == 2 and not target.exists()


def test_huge_scale_is_a_plan_error(lab: Lab) -> None:
    """A 0..100000 scale would make every weight matrix 10^10 cells."""
    lab.start(plan(scale="{min: 0, max: 100000}"))
    for command in (("verify-seal",), ("check-plan",)):
        res = lab.cli("lead", *command)
        assert res.code == 2, (command, res.output)
        assert "scale" in res.err and "Traceback" not in res.output


def test_multi_megabyte_plan_committed_after_the_first_seal(lab: Lab) -> None:
    lab.start()
    lab.seal("cto")
    change = lab.file("lead", "aoven.yaml", PLAN + 'padding: "' + "x" * (4 << 20) + '"\n', "pad")
    code, data, out = verify_subprocess(lab)
    assert code == 1 and "Traceback" not in out, out[-2000:]
    assert codes(data) == [("plan-changed-after-seal", None)]
    v = at(data, "plan-changed-after-seal", None)
    assert v["commit"] == change and "large" in v["message"].lower()


def alias_bomb() -> str:
    lines = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    return "notes:\n" + "".join(f"  {line}\n" for line in lines)


def test_alias_bomb_plan_committed_after_the_first_seal(lab: Lab) -> None:
    """A billion-laughs plan no longer parses: the history is still judged by the first seal's
    plan, and the edit is a plan change."""
    lab.start()
    lab.seal("cto")
    change = lab.file("lead", "aoven.yaml", PLAN + alias_bomb(), "notes")
    code, data, out = verify_subprocess(lab)
    assert code == 1 and "Traceback" not in out, out[-2000:]
    assert codes(data) == [("plan-changed-after-seal", None)]
    assert at(data, "plan-changed-after-seal", None)["commit"] == change


def test_binary_and_non_utf8_files_under_the_study_dir(lab: Lab) -> None:
    """Every file under the study dir is read to find pasted score tables: none may crash it."""
    lab.start()
    lab.file("lead", "study/data/blob.bin", bytes(range(256)) * 8192)  # 2 MiB, NUL bytes
    lab.file("lead", "study/notes/latin1.md", "| Name | Größe |\n|---|---|\n| Zoë | 3 |\n".encode("latin-1"))
    for r in ("cto", "logician"):
        lab.seal(r)
    expect(lab, [])


@pytest.mark.parametrize("depth", ["1", "3"])
def test_shallow_clone_of_an_attack_history(lab: Lab, tmp_path: Path, depth: str) -> None:
    """A shallow clone hides exactly the ancestry an attacker would need hidden: exit 3."""
    c = {"seal-cto": (lab.start(), lab.seal("cto"))[1]}
    lab.reveal("cto")
    lab.branch("late", c["seal-cto"])
    lab.seal("logician")
    lab.land("late")
    clone = Lab.__new__(Lab)
    clone.path = tmp_path / "shallow"
    url = f"file://{lab.path}"
    subprocess.run(["git", "clone", "-q", "--depth", depth, url, str(clone.path)], check=True)
    data = expect(clone, [("shallow-history", None)], exit_code=3)
    assert data["ok"] is False
