"""The `aoven-git` command line: a thin click group.

Commands are imported lazily, one module per command, so `aoven-git hook pre-commit` pays only
for what the hook needs (never numpy/scipy). `main` is the single place where exceptions turn
into messages and exit codes (docs/commands.md, "Exit codes"): 0 ok, 1 findings, 2 usage/plan
error, 3 cannot verify.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from typing import Any

import click

from aoven_git import __version__
from aoven_git.errors import AovenError, UsageError, missing_dependency

#: command name → (module under aoven_git.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("init", "Write aoven.yaml, the study dir, a study workflow and a pre-commit config."),
    "sheet": ("sheet", "Print a blank score file listing every cell of a pass."),
    "score": ("score", "Serve a scoring page on 127.0.0.1 that writes one rater's sheet."),
    "validate": ("validate", "Check score and reconciliation files (layout, ids, scale, completeness)."),
    "check-plan": ("check_plan", "Audit transition coverage, probes and the plan's claims."),
    "strip-markers": ("strip_markers", "Write marker-stripped copies of treatment responses."),
    "markers": ("markers", "Count each marker's uses in the treatment responses."),
    "seal": ("seal", "Seal a rater's scores with a digest commit."),
    "reveal": ("reveal", "Commit a sealed score file once every required rater has sealed."),
    "verify-seal": ("verify_seal", "Prove from history that every rater sealed blind."),
    "timestamp": ("timestamp", "Commit RFC 3161 tokens from the plan's authorities over a commit."),
    "hook": ("hook", "Git hook entry points (pre-commit)."),
    "install-hook": ("install_hook", "Install the pre-commit hook into .git/hooks."),
    "disagreements": ("disagreements", "List disagreeing cells; write a reconciliation template."),
    "amend": ("amend", "Amendments: import in-file re-score tables as an amendment's score file."),
    "blind": ("blind", "Blind a pass: opaque items committed, the key sealed as its digest."),
    "unblind": ("unblind", "Commit a blind pass's key once every required rater has sealed."),
    "status": ("status", "Where every sheet stands and the next command to run."),
    "report": ("report", "Agreement, verdict and charts as Markdown, JSON or HTML."),
    "demo": ("demo", "Replay a bundled study (--design seed|arms|probes) in a throwaway repository."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(f"aoven_git.commands.{entry[0]}")
        command: click.Command = module.command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Help lists commands without importing them all.
        rows = [(name, help_) for name, (_, help_) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aoven-git")
@click.option(
    "--repo",
    type=click.Path(file_okay=False),
    default=None,
    help="Repository of the study (default: the current one). Also accepted after the command.",
)
@click.option(
    "--plan",
    type=click.Path(dir_okay=False),
    default=None,
    help="Plan file (default: aoven.yaml at the repository root). Also accepted after the command.",
)
@click.pass_context
def cli(ctx: click.Context, repo: str | None, plan: str | None) -> None:
    """aoven-git: git as the notary of a blinded multi-rater scoring study."""
    ctx.obj = {"repo": repo, "plan": plan}


def _control_characters(argv: list[str]) -> None:
    """Refuse arguments with control characters (a newline in a path, an escape sequence): git's
    batch protocols cannot carry them and a terminal would act on them. Shown escaped, never raw."""
    for n, arg in enumerate(argv, start=1):
        if any(ord(c) < 32 or ord(c) == 127 for c in arg):
            raise UsageError(f"argument {n} ({arg!a}) contains a control character; paths, "
                             "revisions and ids may not")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit status; the one error handler of the program."""
    try:
        _control_characters(list(sys.argv[1:] if argv is None else argv))
        result: Any = cli.main(args=argv, prog_name="aoven-git", standalone_mode=False)
    except AovenError as exc:
        click.echo(f"aoven-git: error: {exc}", err=True)
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return 2
    except click.exceptions.Abort:
        click.echo("aoven-git: aborted", err=True)
        return 2
    except KeyboardInterrupt:
        click.echo("aoven-git: interrupted", err=True)
        return 130
    except BrokenPipeError:
        return 0
    except ModuleNotFoundError as exc:  # a dependency missing from this interpreter: say which
        missing = missing_dependency(exc, sys.executable)
        if missing is None:
            return _internal_error(exc)
        click.echo(f"aoven-git: error: {missing}", err=True)
        return missing.exit_code
    except Exception as exc:  # a bug, not bad input: say so, keep the traceback opt-in
        return _internal_error(exc)
    return int(result or 0)


def _internal_error(exc: BaseException) -> int:
    """A bug, not bad input: say so, keep the traceback opt-in (exit 4)."""
    if os.environ.get("AOVEN_GIT_DEBUG"):
        traceback.print_exc()
    click.echo(
        f"aoven-git: internal error: {exc.__class__.__name__}: {exc}\n"
        "This is a bug in aoven-git; rerun with AOVEN_GIT_DEBUG=1 for the traceback and report it.",
        err=True,
    )
    return 4


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
