"""The command line as users meet it: help, version, exit codes for usage errors, python -m."""

from __future__ import annotations

from pathlib import Path

from aoven_git import __version__
from aoven_git.cli import COMMANDS
from tests.conftest import run_cli, run_subprocess


def test_help_lists_every_command() -> None:
    result = run_cli("--help")
    assert result.code == 0
    for name in COMMANDS:
        assert name in result.out


def test_every_command_module_exposes_a_click_command() -> None:
    import importlib

    import click

    for name, (module, _) in COMMANDS.items():
        mod = importlib.import_module(f"aoven_git.commands.{module}")
        assert isinstance(mod.command, click.Command), name
        assert mod.command.name == name


def test_version_and_python_m(tmp_path: Path) -> None:
    result = run_subprocess("--version", cwd=tmp_path)
    assert result.code == 0 and __version__ in result.out


def test_unknown_command_and_option_exit_2() -> None:
    assert run_cli("frobnicate").code == 2
    assert run_cli("check-plan", "--no-such-option").code == 2


def test_repo_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("check-plan", "--repo", str(tmp_path / "nope"))
    assert result.code == 2
    assert "Traceback" not in result.output
