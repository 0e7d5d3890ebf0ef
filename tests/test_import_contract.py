"""The import contract of docs/design.md ("Data flows one way"), enforced with import-linter:
the core (every module directly under `aoven_git/`) imports no command, renderer or server;
renderers import no command or server; the scoring server imports no command; the pure rules,
statistics and verdict modules import no git and no gatherer. The contract is written here, from
the modules that exist now, so a new module is covered the day it is added."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "aoven_git"
TOP = {"__init__", "__main__", "cli"}  # the entry points sit above every layer
UPPER = ("aoven_git.commands", "aoven_git.render", "aoven_git.scoring", "aoven_git.cli")
#: pure over plain data (docs/design.md): they may not reach git or a module that gathers from it
PURE = ("model", "agreement", "coefficients", "uncertainty", "verdict", "verdict_rules", "criteria",
        "decisions", "key_copies", "score_copies", "attribution", "gitattributes", "markers", "mdtables",
        "reporting_checklist")
GATHERERS = ("aoven_git.gitio", "aoven_git.sealing", "aoven_git.seal_report", "aoven_git.report_inputs",
             "aoven_git.validation", "aoven_git.blind_corpus", "git", "subprocess")


def _lines(modules: Iterable[str]) -> str:
    return "".join(f"\n    {m}" for m in modules)


def contract() -> str:
    core = sorted(f"aoven_git.{p.stem}" for p in PKG.glob("*.py") if p.stem not in TOP)
    pure = [f"aoven_git.{m}" for m in PURE if (PKG / f"{m}.py").exists()]
    return (
        "[importlinter]\nroot_package = aoven_git\ninclude_external_packages = True\n\n"
        "[importlinter:contract:core]\nname = the core imports no command, renderer or server\n"
        f"type = forbidden\nsource_modules ={_lines(core)}\nforbidden_modules ={_lines(UPPER)}\n\n"
        "[importlinter:contract:render]\nname = renderers import no command or server\n"
        "type = forbidden\nsource_modules =\n    aoven_git.render\n"
        f"forbidden_modules ={_lines(UPPER[:1] + UPPER[2:])}\n\n"
        "[importlinter:contract:scoring]\nname = the scoring server imports no command\n"
        "type = forbidden\nsource_modules =\n    aoven_git.scoring\n"
        "forbidden_modules =\n    aoven_git.commands\n    aoven_git.cli\n\n"
        "[importlinter:contract:pure]\nname = rules, statistics and verdict are pure: no git, no gatherer\n"
        f"type = forbidden\nsource_modules ={_lines(pure)}\nforbidden_modules ={_lines(GATHERERS)}\n"
    )


def test_the_import_contract_holds(tmp_path: Path) -> None:
    cli = pytest.importorskip("importlinter.cli")
    config = tmp_path / "importlinter.ini"
    config.write_text(contract())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.lint_imports(config_filename=str(config), no_cache=True)
    assert code == 0, out.getvalue()[-4000:]
